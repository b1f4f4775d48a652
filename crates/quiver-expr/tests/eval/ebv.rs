//! Effective boolean value (§17.2.2) and the FILTER convenience.

use crate::{context, parse, term};
use oxrdf::{BlankNode, Literal, NamedNode, Term, Variable};
use quiver_expr::{effective_boolean_value, filter};

fn ebv(constant: &str) -> Option<bool> {
    effective_boolean_value(&term(constant))
}

fn typed(lexical: &str, datatype: &str) -> Term {
    Literal::new_typed_literal(lexical, NamedNode::new_unchecked(datatype)).into()
}

#[test]
fn booleans_numbers_strings() {
    // The examples of data-r2/boolean-effective-value.
    assert_eq!(ebv("1"), Some(true));
    assert_eq!(ebv("\"foo\""), Some(true));
    assert_eq!(ebv("\"0.01\"^^xsd:double"), Some(true));
    assert_eq!(ebv("true"), Some(true));
    assert_eq!(ebv("0"), Some(false));
    assert_eq!(ebv("\"0.0\"^^xsd:double"), Some(false));
    assert_eq!(ebv("\"\""), Some(false));
    assert_eq!(ebv("false"), Some(false));
    // More kinds.
    assert_eq!(ebv("0.0"), Some(false));
    assert_eq!(ebv("-0e0"), Some(false));
    assert_eq!(ebv("xsd:double(\"NaN\")"), Some(false));
    assert_eq!(ebv("xsd:float(\"INF\")"), Some(true));
    assert_eq!(ebv("\"0\"^^xsd:unsignedByte"), Some(false));
    assert_eq!(ebv("\"a\"@en"), Some(true));
    assert_eq!(ebv("\"\"@en"), Some(false));
    assert_eq!(ebv("\"\"^^xsd:string"), Some(false));
    assert_eq!(ebv("\"1\"^^xsd:boolean"), Some(true));
}

#[test]
fn invalid_lexical_forms_are_false() {
    let xsd = "http://www.w3.org/2001/XMLSchema#";
    for (lexical, datatype) in [
        ("abc", "boolean"),
        ("TRUE", "boolean"),
        ("abc", "integer"),
        ("1.5", "integer"),
        ("300", "byte"),
        ("x", "double"),
        ("1.2.3", "decimal"),
    ] {
        let term = typed(lexical, &format!("{xsd}{datatype}"));
        assert_eq!(effective_boolean_value(&term), Some(false), "{term}");
    }
}

#[test]
fn other_terms_are_errors() {
    assert_eq!(ebv("<http://example.org/>"), None);
    assert_eq!(
        effective_boolean_value(&BlankNode::new_unchecked("b").into()),
        None
    );
    assert_eq!(ebv("\"x\"^^ex:t"), None);
    assert_eq!(ebv("\"2020-01-01\"^^xsd:date"), None);
    assert_eq!(ebv("\"P1D\"^^xsd:duration"), None);
}

/// Bindings where `?x` has `value` and every other variable is unbound.
fn bind(value: Option<Term>) -> impl Fn(&Variable) -> Option<Term> {
    move |v: &Variable| {
        if v.as_str() == "x" {
            value.clone()
        } else {
            None
        }
    }
}

#[test]
fn filter_maps_errors_to_false() {
    let ctx = context();
    let gt = parse("?x > 2");
    assert!(filter(&gt, &bind(Some(term("3"))), &|_| true, &ctx));
    assert!(!filter(&gt, &bind(Some(term("1"))), &|_| true, &ctx));
    assert!(!filter(&gt, &bind(Some(term("\"a\""))), &|_| true, &ctx));
    assert!(!filter(&gt, &bind(None), &|_| true, &ctx));
    let plain = parse("?x");
    assert!(filter(&plain, &bind(Some(term("\"a\""))), &|_| true, &ctx));
    assert!(!filter(
        &plain,
        &bind(Some(term("<http://example.org/>"))),
        &|_| true,
        &ctx
    ));
    assert!(!filter(&plain, &bind(None), &|_| true, &ctx));
    let negated = parse("!(?x > 2)");
    assert!(!filter(&negated, &bind(None), &|_| true, &ctx));
}
