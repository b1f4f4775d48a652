//! Arithmetic operators, numeric type promotion, numeric functions and the public numeric
//! helpers used by aggregates.

use crate::{check, check_error, eval, same_value, term};
use oxrdf::vocab::xsd;
use oxrdf::Term;
use quiver_expr::{add, divide, max_term, min_term, multiply, subtract};

/// The datatype IRI of the literal `expression` evaluates to.
fn datatype(expression: &str) -> String {
    match eval(expression) {
        Some(Term::Literal(l)) => l.datatype().as_str().to_owned(),
        other => panic!("{expression}: {other:?} is not a literal"),
    }
}

#[test]
fn promotion() {
    assert_eq!(datatype("1 + 2"), xsd::INTEGER.as_str());
    assert_eq!(datatype("1 + 2.5"), xsd::DECIMAL.as_str());
    assert_eq!(datatype("1 + xsd:float(1.5)"), xsd::FLOAT.as_str());
    assert_eq!(datatype("1.5 * xsd:float(2)"), xsd::FLOAT.as_str());
    assert_eq!(datatype("xsd:float(1) + 1e0"), xsd::DOUBLE.as_str());
    assert_eq!(datatype("1 - 2e0"), xsd::DOUBLE.as_str());
    // Derived integer types compute as xsd:integer.
    assert_eq!(
        datatype("\"1\"^^xsd:int + \"1\"^^xsd:byte"),
        xsd::INTEGER.as_str()
    );
    assert_eq!(datatype("+\"1\"^^xsd:short"), xsd::INTEGER.as_str());
    // Integer division yields a decimal.
    assert_eq!(datatype("7 / 2"), xsd::DECIMAL.as_str());
    assert_eq!(datatype("6 / 3"), xsd::DECIMAL.as_str());
}

#[test]
fn values() {
    check("1 + 2", "3");
    check("1 + 2.5", "3.5");
    check("1 - 3", "-2");
    check("2 * 3.5", "7.0");
    check("7 / 2", "3.5");
    check("6 / 3", "2.0");
    check("1 / 3 * 3", "0.999999999999999999");
    check("1.5e0 + 1", "2.5e0");
    check("xsd:float(\"1.5\") * 2", "xsd:float(\"3\")");
    check("\"1\"^^xsd:int + 1", "2");
    check("-(3)", "-3");
    check("-(-2.5)", "2.5");
    check("+3", "3");
    check("--3", "3");
    check("-(1e0)", "-1e0");
}

#[test]
fn division_by_zero() {
    check_error("1 / 0");
    check_error("1.0 / 0");
    check_error("1 / 0.0");
    check("1.0e0 / 0", "xsd:double(\"INF\")");
    check("-1e0 / 0", "xsd:double(\"-INF\")");
    check("xsd:float(1) / 0", "xsd:float(\"INF\")");
    let nan = term("0e0 / 0");
    assert_eq!(
        nan.to_string(),
        "\"NaN\"^^<http://www.w3.org/2001/XMLSchema#double>"
    );
}

#[test]
fn overflow_is_an_error() {
    check_error("9223372036854775807 + 1");
    check_error("-9223372036854775807 - 2");
    check_error("9223372036854775807 * 2");
    check_error("-(-9223372036854775807 - 1)");
    check("9223372036854775806 + 1", "9223372036854775807");
}

#[test]
fn non_numbers_are_errors() {
    check_error("\"1\" + 1");
    check_error("1 + <http://example.org/>");
    check_error("1 + ?unbound");
    check_error("-\"a\"");
    check_error("+\"1\"");
    check_error("\"abc\"^^xsd:integer + 1");
    check_error("\"1\"^^ex:number + 1");
    check_error("true + 1");
}

#[test]
fn numeric_functions() {
    check("ABS(-2)", "2");
    check("ABS(-1.5)", "1.5");
    check("ABS(-1.5e0)", "1.5e0");
    check("ABS(\"-3\"^^xsd:int)", "3");
    check("CEIL(1.2)", "2.0");
    check("CEIL(-1.5)", "-1.0");
    check("CEIL(3)", "3");
    check("CEIL(1.2e0)", "2e0");
    check("FLOOR(-1.5)", "-2.0");
    check("FLOOR(1.9e0)", "1e0");
    check("ROUND(2.5)", "3.0");
    check("ROUND(-2.5)", "-2.0");
    check("ROUND(2.4999)", "2.0");
    check("ROUND(-2.5e0)", "-2e0");
    check("ROUND(7)", "7");
    check_error("ABS(\"a\")");
    check_error("ROUND(?unbound)");
    // W3C abs01-style: the datatype is kept.
    assert_eq!(datatype("ABS(-1.6)"), xsd::DECIMAL.as_str());
    assert_eq!(datatype("FLOOR(xsd:float(1.5))"), xsd::FLOAT.as_str());
}

#[test]
fn is_numeric() {
    check("isNumeric(1)", "true");
    check("isNumeric(1.5e0)", "true");
    check("isNumeric(\"12\"^^xsd:byte)", "true");
    check("isNumeric(\"1200\"^^xsd:byte)", "false");
    check("isNumeric(\"-1\"^^xsd:nonNegativeInteger)", "false");
    check("isNumeric(\"abc\"^^xsd:integer)", "false");
    check("isNumeric(\"1\")", "false");
    check("isNumeric(<http://example.org/>)", "false");
    check_error("isNumeric(?unbound)");
}

#[test]
fn rand_is_a_double_in_unit_interval() {
    let mut values = Vec::new();
    for _ in 0..20 {
        let Some(Term::Literal(l)) = eval("RAND()") else {
            panic!("RAND() is not a literal")
        };
        assert_eq!(l.datatype(), xsd::DOUBLE);
        let value: f64 = l.value().parse().expect("a double");
        assert!((0.0..1.0).contains(&value), "{value}");
        values.push(l.value().to_owned());
    }
    // Two draws within one expression differ.
    check("RAND() != RAND()", "true");
}

#[test]
fn date_time_arithmetic() {
    check(
        "\"2024-03-02T00:00:00Z\"^^xsd:dateTime - \"2024-03-01T00:00:00Z\"^^xsd:dateTime",
        "\"P1D\"^^xsd:dayTimeDuration",
    );
    check(
        "\"2024-01-31\"^^xsd:date + \"P1M\"^^xsd:yearMonthDuration",
        "\"2024-02-29\"^^xsd:date",
    );
    check(
        "\"2024-01-01T10:00:00Z\"^^xsd:dateTime - \"PT1H\"^^xsd:dayTimeDuration",
        "\"2024-01-01T09:00:00Z\"^^xsd:dateTime",
    );
    check(
        "\"PT1H\"^^xsd:dayTimeDuration + \"PT30M\"^^xsd:dayTimeDuration",
        "\"PT1H30M\"^^xsd:dayTimeDuration",
    );
    check_error("\"P1M\"^^xsd:yearMonthDuration + \"PT1H\"^^xsd:dayTimeDuration");
    check_error("\"2024-01-01\"^^xsd:date + 1");
}

#[test]
fn public_helpers() {
    let (one, two_and_half) = (term("1"), term("2.5"));
    assert_eq!(add(&one, &two_and_half), Some(term("3.5")));
    assert_eq!(subtract(&one, &two_and_half), Some(term("-1.5")));
    assert_eq!(multiply(&term("2"), &term("3")), Some(term("6")));
    assert_eq!(divide(&term("10"), &term("4")), Some(term("2.5")));
    assert_eq!(divide(&one, &term("0")), None);
    assert_eq!(add(&term("\"a\""), &one), None);
    // AVG-like: sum / count.
    let sum = [term("1"), term("2.5"), term("1e0")]
        .iter()
        .try_fold(term("0"), |acc, x| add(&acc, x))
        .expect("a sum");
    let average = divide(&sum, &term("3")).expect("an average");
    assert!(same_value(&average, &term("1.5e0")), "{average}");
    assert_eq!(min_term(term("2"), term("1.5")), term("1.5"));
    assert_eq!(max_term(term("2"), term("1.5")), term("2"));
    assert_eq!(max_term(term("\"a\""), term("2")), term("2"));
}

/// `Number::checked_add` (SUM's running total) gives what `add` gives on the terms, for every pair
/// of the four types, derived integers, overflow and non-numbers included.
#[test]
fn number_add_is_add_on_numbers() {
    use quiver_expr::Number;
    let values = [
        "1",
        "-7",
        "9223372036854775807",
        "2.5",
        "-0.125",
        "xsd:float(1.5)",
        "xsd:float(\"NaN\")",
        "1e0",
        "-2.5e3",
        "\"3\"^^xsd:byte",
        "\"x\"",
        "xsd:date(\"2024-01-01\")",
    ];
    for a in values {
        for b in values {
            let (ta, tb) = (term(a), term(b));
            let expected = add(&ta, &tb).filter(|t| Number::of(t).is_some());
            let got = Number::of(&ta)
                .zip(Number::of(&tb))
                .and_then(|(x, y)| x.checked_add(y))
                .map(Number::to_term);
            assert_eq!(
                got.as_ref().map(ToString::to_string),
                expected.as_ref().map(ToString::to_string),
                "{a} + {b}"
            );
        }
    }
    assert_eq!(Number::zero().to_term().to_string(), term("0").to_string());
}

/// `Number::times` (a value that stands for several rows in SUM) is `multiply` by the count
/// on the terms: integers and decimals exact, overflow `None`, floats in their type.
#[test]
fn number_times_is_multiply_by_the_count() {
    use quiver_expr::Number;
    for value in [
        "1",
        "-7",
        "2.5",
        "-0.125",
        "xsd:float(1.5)",
        "1e0",
        "\"3\"^^xsd:byte",
        "4611686018427387904",
    ] {
        for count in [0u64, 1, 2, 3, 1000] {
            let expected = multiply(&term(value), &term(&count.to_string()));
            let got = Number::of(&term(value))
                .and_then(|n| n.times(count))
                .map(Number::to_term);
            assert_eq!(
                got.as_ref().map(ToString::to_string),
                expected.as_ref().map(ToString::to_string),
                "{value} * {count}"
            );
        }
    }
    assert!(Number::of(&term("1")).unwrap().times(u64::MAX).is_none());
}

#[test]
fn float_and_double_numbers_are_their_terms() {
    use quiver_expr::Number;
    let float = Number::of(&term("xsd:float(1.5)")).unwrap();
    assert_eq!(float.as_float(), Some(1.5));
    assert_eq!(float.as_double(), None);
    let double = Number::of(&term("-2.5e3")).unwrap();
    assert_eq!(double.as_double(), Some(-2500.0));
    assert_eq!(double.as_float(), None);
    assert_eq!(Number::of(&term("1")).unwrap().as_float(), None);
    // Adding as f32 from 0 is what checked_add gives, term for term.
    let sum = Number::zero()
        .checked_add(float)
        .and_then(|s| s.checked_add(Number::float(0.1)))
        .unwrap();
    assert_eq!(sum.as_float(), Some(1.5f32 + 0.1f32));
    assert_eq!(
        Number::float(1.5f32 + 0.1f32).to_term().to_string(),
        sum.to_term().to_string()
    );
    assert_eq!(
        Number::double(-2500.0).to_term().to_string(),
        double.to_term().to_string()
    );
}
