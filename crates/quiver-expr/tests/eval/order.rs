//! ORDER BY total order (§15.1) and the public comparison helpers.

use crate::term;
use oxrdf::{BlankNode, Literal, NamedNode, Term, Triple};
use quiver_expr::{compare, equals, order_terms};
use std::cmp::Ordering;

fn typed(lexical: &str, datatype: &str) -> Term {
    Literal::new_typed_literal(lexical, NamedNode::new_unchecked(datatype)).into()
}

/// A varied set of terms, including ill-formed and unknown-datatype literals.
fn sample() -> Vec<Term> {
    let mut terms: Vec<Term> = [
        "1",
        "01",
        "2.5",
        "2.50",
        "1e0",
        "3e0",
        "-1",
        "xsd:float(2)",
        "xsd:double(\"NaN\")",
        "xsd:double(\"-INF\")",
        "\"1\"^^xsd:byte",
        "\"a\"",
        "\"b\"",
        "\"B\"",
        "\"\"",
        "\"a\"@en",
        "\"a\"@fr",
        "\"b\"@en",
        "true",
        "false",
        "<http://example.org/a>",
        "<http://example.org/b>",
        "\"2020-01-01T00:00:00Z\"^^xsd:dateTime",
        "\"2020-01-01T00:00:00\"^^xsd:dateTime",
        "\"2020-01-01T10:00:00+05:00\"^^xsd:dateTime",
        "\"2019-12-31T23:00:00\"^^xsd:dateTime",
        "\"2020-01-01\"^^xsd:date",
        "\"10:00:00\"^^xsd:time",
        "\"P1M\"^^xsd:yearMonthDuration",
        "\"P30D\"^^xsd:dayTimeDuration",
        "\"P1Y\"^^xsd:duration",
        "\"x\"^^ex:t",
        "\"y\"^^ex:t",
        "\"x\"^^ex:u",
        "\"2020\"^^xsd:gYear",
        "\"a\"@en--ltr",
        "\"a\"@en--rtl",
        "\"b\"@en--ltr",
        "<<( ex:a ex:b 1 )>>",
        "<<( ex:a ex:b 1.0 )>>",
        "<<( ex:a ex:c 1 )>>",
        "<<( ex:a ex:b <<( ex:a ex:b 1 )>> )>>",
        "<<( ex:b ex:b \"a\"@en--ltr )>>",
    ]
    .iter()
    .map(|c| term(c))
    .collect();
    terms.push(typed("abc", "http://www.w3.org/2001/XMLSchema#integer"));
    terms.push(typed("zzz", "http://www.w3.org/2001/XMLSchema#dateTime"));
    terms.push(BlankNode::new_unchecked("b1").into());
    terms.push(BlankNode::new_unchecked("b2").into());
    terms.push(
        Triple::new(
            BlankNode::new_unchecked("b1"),
            NamedNode::new_unchecked("http://example.org/b"),
            Literal::from(1),
        )
        .into(),
    );
    terms
}

#[test]
fn kinds_of_terms() {
    let bnode: Term = BlankNode::new_unchecked("z").into();
    let iri = term("<http://example.org/a>");
    let literal = term("\"a\"");
    assert_eq!(order_terms(None, Some(&bnode)), Ordering::Less);
    assert_eq!(order_terms(None, None), Ordering::Equal);
    assert_eq!(order_terms(Some(&bnode), None), Ordering::Greater);
    assert_eq!(order_terms(Some(&bnode), Some(&iri)), Ordering::Less);
    assert_eq!(order_terms(Some(&iri), Some(&literal)), Ordering::Less);
    assert_eq!(order_terms(Some(&literal), Some(&bnode)), Ordering::Greater);
}

#[test]
fn literals_by_value() {
    let less = |a: &str, b: &str| {
        assert_eq!(
            order_terms(Some(&term(a)), Some(&term(b))),
            Ordering::Less,
            "{a} < {b}"
        );
        assert_eq!(
            order_terms(Some(&term(b)), Some(&term(a))),
            Ordering::Greater,
            "{b} > {a}"
        );
    };
    less("1", "2");
    less("2", "10");
    less("1", "1.5");
    less("1.5", "2e0");
    less("-1e0", "0");
    less("xsd:double(\"NaN\")", "xsd:double(\"-INF\")");
    less("\"a\"", "\"b\"");
    less("\"B\"", "\"a\"");
    less("\"ab\"", "\"b\"");
    less("false", "true");
    less(
        "\"2020-01-01T00:00:00Z\"^^xsd:dateTime",
        "\"2020-01-01T00:00:01Z\"^^xsd:dateTime",
    );
    less(
        "\"2020-01-01T10:00:00+05:00\"^^xsd:dateTime",
        "\"2020-01-01T06:00:00Z\"^^xsd:dateTime",
    );
    less(
        "\"PT1H\"^^xsd:dayTimeDuration",
        "\"P1D\"^^xsd:dayTimeDuration",
    );
    less(
        "\"P1M\"^^xsd:yearMonthDuration",
        "\"P1Y\"^^xsd:yearMonthDuration",
    );
    // Equal values of different terms are still ordered, deterministically.
    assert_ne!(
        order_terms(Some(&term("1")), Some(&term("1.0"))),
        Ordering::Equal
    );
    assert_ne!(
        order_terms(Some(&term("1")), Some(&term("01"))),
        Ordering::Equal
    );
    assert_eq!(
        order_terms(Some(&term("1")), Some(&term("1"))),
        Ordering::Equal
    );
}

#[test]
fn is_a_total_order() {
    let terms = sample();
    let cmp = |a: &Term, b: &Term| order_terms(Some(a), Some(b));
    for a in &terms {
        for b in &terms {
            assert_eq!(cmp(a, b), cmp(b, a).reverse(), "antisymmetry {a} {b}");
            assert_eq!(cmp(a, b) == Ordering::Equal, a == b, "equality {a} {b}");
            for c in &terms {
                if cmp(a, b) != Ordering::Greater && cmp(b, c) != Ordering::Greater {
                    assert_ne!(cmp(a, c), Ordering::Greater, "transitivity {a} {b} {c}");
                }
            }
        }
    }
    // Sorting therefore works and is stable in value order for comparable literals.
    let mut sorted = terms.clone();
    sorted.sort_by(cmp);
    assert!(sorted
        .windows(2)
        .all(|w| cmp(&w[0], &w[1]) != Ordering::Greater));
    assert!(matches!(sorted[0], Term::BlankNode(_)));
}

#[test]
fn public_equals_and_compare() {
    assert_eq!(equals(&term("1"), &term("1.0")), Some(true));
    assert_eq!(equals(&term("1"), &term("\"1\"")), Some(false));
    assert_eq!(equals(&term("\"x\"^^ex:t"), &term("\"y\"^^ex:t")), None);
    assert_eq!(
        compare(&term("1"), &term("2e0")),
        Some(Some(Ordering::Less))
    );
    assert_eq!(
        compare(&term("xsd:double(\"NaN\")"), &term("1")),
        Some(None)
    );
    assert_eq!(compare(&term("\"a\""), &term("1")), None);
}
