//! SPARQL 1.2 triple terms: `TRIPLE` (and its `<<( s p o )>>` shorthand), `SUBJECT`,
//! `PREDICATE`, `OBJECT`, `isTRIPLE`, `=` and ORDER BY. The cases follow the W3C test suite's
//! `expression/triple-on-*` and `eval-triple-terms/{expr,op,order}-*` tests.

use crate::{check, check_error, check_with, eval, eval_with_terms, term};
use oxrdf::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use quiver_expr::{compare, equals, order_terms};
use std::cmp::Ordering;

fn iri(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("http://example.org/{local}"))
}

/// The triple term `<<( ex:s ex:p o )>>`, built without the evaluator.
fn triple(s: impl Into<NamedOrBlankNode>, p: &str, o: impl Into<Term>) -> Term {
    Triple::new(s, iri(p), o).into()
}

#[test]
fn triple_builds_a_triple_term() {
    let abc = triple(iri("a"), "b", iri("c"));
    assert_eq!(eval("TRIPLE(ex:a, ex:b, ex:c)"), Some(abc.clone()));
    assert_eq!(eval("<<( ex:a ex:b ex:c )>>"), Some(abc));
    // Any term as the object: literals of every kind, triple terms.
    for (object, expected) in [
        ("true", Term::from(Literal::from(true))),
        ("3", Literal::from(3).into()),
        ("\"c\"", Literal::new_simple_literal("c").into()),
        (
            "\"c\"@nl",
            Literal::new_language_tagged_literal_unchecked("c", "nl").into(),
        ),
        (
            "\"c\"@nl--ltr",
            Literal::new_directional_language_tagged_literal_unchecked(
                "c",
                "nl",
                oxrdf::BaseDirection::Ltr,
            )
            .into(),
        ),
        (
            "\"c\"^^ex:type",
            Literal::new_typed_literal("c", iri("type")).into(),
        ),
        ("<<( ex:x ex:y ex:z )>>", triple(iri("x"), "y", iri("z"))),
        ("TRIPLE(ex:x, ex:y, ex:z)", triple(iri("x"), "y", iri("z"))),
    ] {
        assert_eq!(
            eval(&format!("TRIPLE(ex:a, ex:b, {object})")),
            Some(triple(iri("a"), "b", expected)),
            "object {object}"
        );
    }
    // A blank node subject.
    let bnode: Term = BlankNode::new_unchecked("x").into();
    let with_bnode = Triple::new(BlankNode::new_unchecked("x"), iri("b"), iri("c"));
    assert_eq!(
        eval_with_terms("TRIPLE(?s, ex:b, ex:c)", &[("s", bnode)]),
        Some(with_bnode.into())
    );
}

#[test]
fn triple_rejects_ill_formed_triples() {
    // Subjects: only IRIs and blank nodes.
    for subject in [
        "true",
        "1",
        "\"a\"",
        "\"a\"@nl",
        "\"a\"@nl--ltr",
        "\"a\"^^ex:type",
        "<<( ex:x ex:y ex:z )>>",
    ] {
        check_error(&format!("TRIPLE({subject}, ex:b, ex:c)"));
    }
    // Predicates: only IRIs.
    for predicate in [
        "true",
        "2",
        "\"b\"",
        "\"b\"@nl--ltr",
        "\"b\"^^ex:type",
        "BNODE()",
        "<<( ex:x ex:y ex:z )>>",
    ] {
        check_error(&format!("TRIPLE(ex:a, {predicate}, ex:c)"));
    }
    // Unbound arguments.
    check_error("TRIPLE(?undef, ex:b, ex:c)");
    check_error("TRIPLE(ex:a, ?undef, ex:c)");
    check_error("TRIPLE(ex:a, ex:b, ?undef)");
}

#[test]
fn accessors() {
    check("SUBJECT(<<( ex:a ex:b 1 )>>)", "ex:a");
    check("PREDICATE(<<( ex:a ex:b 1 )>>)", "ex:b");
    check("OBJECT(<<( ex:a ex:b 1 )>>)", "1");
    check("OBJECT(<<( ex:a ex:b \"c\"@en--rtl )>>)", "\"c\"@en--rtl");
    check(
        "OBJECT(<<( ex:a ex:b <<( ex:x ex:y ex:z )>> )>>)",
        "<<( ex:x ex:y ex:z )>>",
    );
    check(
        "SUBJECT(OBJECT(<<( ex:a ex:b <<( ex:x ex:y ex:z )>> )>>))",
        "ex:x",
    );
    check_with(
        "isBLANK(SUBJECT(TRIPLE(?s, ex:b, ex:c)))",
        &[("s", "BNODE(\"s\")")],
        "true",
    );
    for not_a_triple in ["ex:a", "1", "\"a\"", "\"a\"@en--ltr", "BNODE()", "?undef"] {
        check_error(&format!("SUBJECT({not_a_triple})"));
        check_error(&format!("PREDICATE({not_a_triple})"));
        check_error(&format!("OBJECT({not_a_triple})"));
    }
}

#[test]
fn is_triple_and_other_term_tests() {
    check("isTRIPLE(<<( ex:a ex:b ex:c )>>)", "true");
    check("isTRIPLE(TRIPLE(ex:a, ex:b, 1))", "true");
    check("isTRIPLE(ex:a)", "false");
    check("isTRIPLE(\"a\")", "false");
    check("isTRIPLE(BNODE())", "false");
    check_error("isTRIPLE(?undef)");
    // A triple term is neither an IRI, nor a blank node, nor a literal, and has no string form,
    // language or datatype.
    check("isIRI(<<( ex:a ex:b ex:c )>>)", "false");
    check("isBLANK(<<( ex:a ex:b ex:c )>>)", "false");
    check("isLITERAL(<<( ex:a ex:b ex:c )>>)", "false");
    check("isNUMERIC(<<( ex:a ex:b 1 )>>)", "false");
    check_error("STR(<<( ex:a ex:b ex:c )>>)");
    check_error("LANG(<<( ex:a ex:b ex:c )>>)");
    check_error("DATATYPE(<<( ex:a ex:b ex:c )>>)");
    check_error("STRLEN(<<( ex:a ex:b \"c\" )>>)");
    check_error("xsd:string(<<( ex:a ex:b \"c\" )>>)");
}

#[test]
fn expr_02_filter() {
    // eval-triple-terms/expr-02: only <<( :s :p :o )>> passes.
    let filter = "isTriple(?t) && SUBJECT(?t) = ex:s && PREDICATE(?t) = ex:p && OBJECT(?t) = ex:o";
    check_with(filter, &[("t", "<<( ex:s ex:p ex:o )>>")], "true");
    check_with(filter, &[("t", "<<( ex:s ex:p ex:o1 )>>")], "false");
    check_with(filter, &[("t", "ex:x")], "false");
}

#[test]
fn equality_is_component_wise() {
    // eval-triple-terms/op-1 and op-2: = compares objects by value, sameTerm by identity.
    for (left, right, equal, same) in [
        (
            "<<( ex:a ex:b 123 )>>",
            "<<( ex:a ex:b 123.0 )>>",
            true,
            false,
        ),
        ("<<( ex:a ex:b 123 )>>", "<<( ex:a ex:b 123 )>>", true, true),
        (
            "<<( ex:a ex:q <<( ex:a ex:b 123 )>> )>>",
            "<<( ex:a ex:q <<( ex:a ex:b 123.0 )>> )>>",
            true,
            false,
        ),
        (
            "<<( ex:a ex:b 123 )>>",
            "<<( ex:c ex:d 123 )>>",
            false,
            false,
        ),
        (
            "<<( ex:a ex:b 123e0 )>>",
            "<<( ex:a ex:b 123 )>>",
            true,
            false,
        ),
        ("<<( ex:a ex:b 9 )>>", "<<( ex:a ex:b 123 )>>", false, false),
        (
            "<<( ex:a ex:b \"x\" )>>",
            "<<( ex:a ex:b \"x\"@en )>>",
            false,
            false,
        ),
        (
            "<<( ex:a ex:b \"x\"@en--ltr )>>",
            "<<( ex:a ex:b \"x\"@en--rtl )>>",
            false,
            false,
        ),
    ] {
        let (l, r) = (term(left), term(right));
        assert_eq!(equals(&l, &r), Some(equal), "{left} = {right}");
        assert_eq!(equals(&r, &l), Some(equal), "{right} = {left}");
        check(&format!("{left} = {right}"), &equal.to_string());
        check(&format!("{left} != {right}"), &(!equal).to_string());
        check(&format!("sameTerm({left}, {right})"), &same.to_string());
    }
    // With a blank node subject (op-1 x5, op-2 x6).
    let b = || NamedOrBlankNode::from(BlankNode::new_unchecked("b1"));
    assert_eq!(
        equals(
            &triple(b(), "b", Literal::from(123)),
            &triple(b(), "b", Literal::from(123.0))
        ),
        Some(true)
    );
    assert_eq!(
        equals(
            &triple(b(), "b", Literal::from(1)),
            &triple(BlankNode::new_unchecked("b2"), "b", Literal::from(1))
        ),
        Some(false)
    );
    // A triple term is not equal to a term of another kind, even a literal of unknown datatype.
    check("<<( ex:a ex:b ex:c )>> = ex:a", "false");
    check("<<( ex:a ex:b ex:c )>> != \"a\"", "true");
    check("\"x\"^^ex:t = <<( ex:a ex:b ex:c )>>", "false");
    check("<<( ex:a ex:b 1 )>> IN (1, <<( ex:a ex:b 1.0 )>>)", "true");
}

#[test]
fn equality_errors() {
    // Objects whose values cannot be compared make = an error…
    check_error("<<( ex:a ex:b \"x\"^^ex:t )>> = <<( ex:a ex:b \"y\"^^ex:t )>>");
    check_error("<<( ex:a ex:b \"x\"^^ex:t )>> != <<( ex:a ex:b \"y\"^^ex:t )>>");
    check_error("<<( ex:a ex:b \"x\"^^ex:t )>> = <<( ex:a ex:b 1 )>>");
    // …unless another component already differs (the components are joined with &&).
    check(
        "<<( ex:a ex:b \"x\"^^ex:t )>> = <<( ex:z ex:b \"y\"^^ex:t )>>",
        "false",
    );
    check(
        "<<( ex:a ex:b \"x\"^^ex:t )>> = <<( ex:a ex:z \"y\"^^ex:t )>>",
        "false",
    );
    // Identical objects of unknown datatypes are equal.
    check(
        "<<( ex:a ex:b \"x\"^^ex:t )>> = <<( ex:a ex:b \"x\"^^ex:t )>>",
        "true",
    );
    // NaN is not equal to itself, inside a triple term too (sameTerm still holds).
    let nan = "<<( ex:a ex:b \"NaN\"^^xsd:double )>>";
    check(&format!("{nan} = {nan}"), "false");
    check(&format!("sameTerm({nan}, {nan})"), "true");
    // Triple terms have no < order (a type error), as in the operator mapping.
    check_error("<<( ex:a ex:b 1 )>> < <<( ex:a ex:b 2 )>>");
    assert_eq!(
        compare(&term("<<( ex:a ex:b 1 )>>"), &term("<<( ex:a ex:b 2 )>>")),
        None
    );
}

fn sorted(constants: &[&str]) -> Vec<Term> {
    let mut terms: Vec<Term> = constants.iter().map(|c| term(c)).collect();
    terms.sort_by(|a, b| order_terms(Some(a), Some(b)));
    terms
}

#[test]
fn order_by_kind() {
    // eval-triple-terms/order-1: blank nodes < IRIs < literals < triple terms.
    let bnode: Term = BlankNode::new_unchecked("b").into();
    let mut terms = vec![
        term("ex:x"),
        term("<<( ex:s ex:p ex:o )>>"),
        term("\"abc\""),
        bnode.clone(),
    ];
    terms.sort_by(|a, b| order_terms(Some(a), Some(b)));
    assert_eq!(
        terms,
        [
            bnode,
            term("ex:x"),
            term("\"abc\""),
            term("<<( ex:s ex:p ex:o )>>")
        ]
    );
    assert_eq!(
        order_terms(None, Some(&term("<<( ex:s ex:p ex:o )>>"))),
        Ordering::Less
    );
}

#[test]
fn order_by_components() {
    // eval-triple-terms/order-2, without its blank node, IRI and string.
    let expected = [
        "<<( ex:s ex:p -456 )>>",
        "<<( ex:s ex:p 123 )>>",
        "<<( ex:s ex:p <<( ex:x ex:y ex:z )>> )>>",
        "<<( ex:s1 ex:a 999 )>>",
        "<<( ex:s1 ex:p 999 )>>",
        "<<( ex:s2 ex:p 900 )>>",
    ];
    let shuffled = [
        expected[1],
        expected[0],
        expected[5],
        expected[4],
        expected[3],
        expected[2],
    ];
    assert_eq!(sorted(&shuffled), sorted(&expected));
    assert_eq!(
        sorted(&shuffled),
        expected.iter().map(|c| term(c)).collect::<Vec<_>>()
    );
    // Blank node subjects before IRIs; equal values of different objects stay distinct.
    let with_bnode: Term = Triple::new(BlankNode::new_unchecked("z"), iri("p"), iri("o")).into();
    assert_eq!(
        order_terms(Some(&with_bnode), Some(&term("<<( ex:a ex:p ex:o )>>"))),
        Ordering::Less
    );
    let (one, one_decimal) = (term("<<( ex:s ex:p 1 )>>"), term("<<( ex:s ex:p 1.0 )>>"));
    assert_ne!(order_terms(Some(&one), Some(&one_decimal)), Ordering::Equal);
    assert_eq!(
        order_terms(Some(&one), Some(&one_decimal)),
        order_terms(Some(&one_decimal), Some(&one)).reverse()
    );
    assert_eq!(order_terms(Some(&one), Some(&one.clone())), Ordering::Equal);
}
