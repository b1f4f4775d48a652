//! The comparison rules, each with a case that must fail.

use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, Literal, NamedNode, Term, Triple, Variable};

use super::*;

fn iri(name: &str) -> Term {
    NamedNode::new_unchecked(format!("http://example.org/{name}")).into()
}

fn blank(label: &str) -> Term {
    BlankNode::new_unchecked(label).into()
}

fn int(value: &str) -> Term {
    Literal::new_typed_literal(value, xsd::INTEGER).into()
}

fn vars(names: &[&str]) -> Vec<Variable> {
    names.iter().map(|n| Variable::new_unchecked(*n)).collect()
}

fn solutions(names: &[&str], rows: Vec<Vec<Term>>) -> Answer {
    Answer::Solutions {
        variables: vars(names),
        rows: rows
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect(),
    }
}

#[test]
fn bags_ignore_order_but_not_multiplicity() {
    let expected = solutions(&["x"], vec![vec![iri("a")], vec![iri("b")], vec![iri("b")]]);
    let shuffled = solutions(&["x"], vec![vec![iri("b")], vec![iri("a")], vec![iri("b")]]);
    let other_counts = solutions(&["x"], vec![vec![iri("a")], vec![iri("a")], vec![iri("b")]]);
    assert_eq!(compare(&expected, &shuffled, &Order::Bag), Ok(()));
    assert!(compare(&expected, &other_counts, &Order::Bag).is_err());
    let fewer = solutions(&["x"], vec![vec![iri("a")], vec![iri("b")]]);
    let error = compare(&expected, &fewer, &Order::Bag).unwrap_err();
    assert!(
        error.starts_with("expected 3 rows, got 2; missing (1)"),
        "{error}"
    );
}

#[test]
fn sequences_need_the_same_order() {
    let expected = solutions(&["x"], vec![vec![iri("a")], vec![iri("b")]]);
    let reversed = solutions(&["x"], vec![vec![iri("b")], vec![iri("a")]]);
    assert_eq!(compare(&expected, &expected, &Order::Sequence), Ok(()));
    let error = compare(&expected, &reversed, &Order::Sequence).unwrap_err();
    assert!(error.starts_with("row 1 differs"), "{error}");
}

#[test]
fn ordered_keys_allow_ties_in_any_order() {
    let key = Order::Keys(vars(&["k"]));
    let expected = solutions(
        &["k", "v"],
        vec![
            vec![int("1"), iri("a")],
            vec![int("1"), iri("b")],
            vec![int("2"), iri("c")],
        ],
    );
    let tie_swapped = solutions(
        &["k", "v"],
        vec![
            vec![int("1"), iri("b")],
            vec![int("1"), iri("a")],
            vec![int("2"), iri("c")],
        ],
    );
    let misordered = solutions(
        &["k", "v"],
        vec![
            vec![int("2"), iri("c")],
            vec![int("1"), iri("a")],
            vec![int("1"), iri("b")],
        ],
    );
    assert_eq!(compare(&expected, &tie_swapped, &key), Ok(()));
    assert!(compare(&expected, &misordered, &key)
        .unwrap_err()
        .starts_with("order differs"));
    // Same keys in order, but a row that is not expected.
    let wrong_value = solutions(
        &["k", "v"],
        vec![
            vec![int("1"), iri("a")],
            vec![int("1"), iri("z")],
            vec![int("2"), iri("c")],
        ],
    );
    assert!(compare(&expected, &wrong_value, &key).is_err());
}

#[test]
fn variables_compare_as_sets_and_columns_follow_names() {
    let expected = solutions(&["x", "y"], vec![vec![iri("a"), iri("b")]]);
    let swapped = solutions(&["y", "x"], vec![vec![iri("b"), iri("a")]]);
    assert_eq!(compare(&expected, &swapped, &Order::Bag), Ok(()));
    let crossed = solutions(&["y", "x"], vec![vec![iri("a"), iri("b")]]);
    assert!(compare(&expected, &crossed, &Order::Bag).is_err());
    let other = solutions(&["x", "z"], vec![vec![iri("a"), iri("b")]]);
    let error = compare(&expected, &other, &Order::Bag).unwrap_err();
    assert_eq!(error, "variables differ: expected ?x ?y, got ?x ?z");
}

#[test]
fn blank_nodes_match_up_to_a_consistent_relabelling() {
    let expected = solutions(
        &["s", "v"],
        vec![
            vec![blank("x"), int("1")],
            vec![blank("x"), int("2")],
            vec![blank("y"), int("3")],
        ],
    );
    let relabelled = solutions(
        &["s", "v"],
        vec![
            vec![blank("b"), int("3")],
            vec![blank("a"), int("1")],
            vec![blank("a"), int("2")],
        ],
    );
    assert_eq!(compare(&expected, &relabelled, &Order::Bag), Ok(()));
    // The first two rows must share one blank node.
    let unshared = solutions(
        &["s", "v"],
        vec![
            vec![blank("a"), int("1")],
            vec![blank("b"), int("2")],
            vec![blank("c"), int("3")],
        ],
    );
    let error = compare(&expected, &unshared, &Order::Bag).unwrap_err();
    assert!(
        error.ends_with("no consistent blank node mapping"),
        "{error}"
    );
    // Two expected blank nodes cannot map onto one actual node.
    let merged = solutions(
        &["s", "v"],
        vec![
            vec![blank("a"), int("1")],
            vec![blank("a"), int("2")],
            vec![blank("a"), int("3")],
        ],
    );
    assert!(compare(&expected, &merged, &Order::Bag).is_err());
    // A blank node never matches an IRI.
    let named = solutions(
        &["s", "v"],
        vec![
            vec![iri("a"), int("1")],
            vec![iri("a"), int("2")],
            vec![blank("c"), int("3")],
        ],
    );
    assert!(compare(&expected, &named, &Order::Bag).is_err());
}

#[test]
fn the_search_backtracks_past_a_wrong_first_choice() {
    // A chain x → y → z: the first actual row tried, (b, c), fits (x, y) first, which
    // leaves no partner for (a, b); only the second choice works.
    let expected = solutions(
        &["from", "to"],
        vec![vec![blank("x"), blank("y")], vec![blank("y"), blank("z")]],
    );
    let chain = solutions(
        &["from", "to"],
        vec![vec![blank("b"), blank("c")], vec![blank("a"), blank("b")]],
    );
    assert_eq!(compare(&expected, &chain, &Order::Bag), Ok(()));
    assert!(compare(&expected, &chain, &Order::Sequence).is_err());
    let two_pairs = solutions(
        &["from", "to"],
        vec![vec![blank("a"), blank("b")], vec![blank("c"), blank("d")]],
    );
    assert!(compare(&expected, &two_pairs, &Order::Bag).is_err());
}

#[test]
fn typed_literals_compare_by_datatype_and_numbers_by_value() {
    let expected = solutions(&["v"], vec![vec![int("1")]]);
    let typed = |value: &str, datatype| -> Answer {
        solutions(
            &["v"],
            vec![vec![Literal::new_typed_literal(value, datatype).into()]],
        )
    };
    let padded = solutions(&["v"], vec![vec![int("01")]]);
    let plain = solutions(&["v"], vec![vec![Literal::new_simple_literal("1").into()]]);
    assert_eq!(compare(&expected, &expected.clone(), &Order::Bag), Ok(()));
    // Same value, other datatype: different terms.
    assert!(compare(&expected, &typed("1", xsd::DECIMAL), &Order::Bag).is_err());
    assert!(compare(&expected, &plain, &Order::Bag).is_err());
    // Same datatype and value, other lexical form: equal numbers.
    assert_eq!(compare(&expected, &padded, &Order::Bag), Ok(()));
    let decimal = typed("1.0", xsd::DECIMAL);
    assert_eq!(
        compare(&decimal, &typed("1", xsd::DECIMAL), &Order::Bag),
        Ok(())
    );
    assert!(compare(&decimal, &typed("1.5", xsd::DECIMAL), &Order::Bag).is_err());
    let double = typed("-1.02E4", xsd::DOUBLE);
    assert_eq!(
        compare(&double, &typed("-10200", xsd::DOUBLE), &Order::Bag),
        Ok(())
    );
    assert!(compare(&double, &typed("-10200", xsd::FLOAT), &Order::Bag).is_err());
    // Other datatypes keep their lexical form.
    let date = typed("2006-08-23Z", xsd::DATE);
    assert!(compare(&date, &typed("2006-08-23+00:00", xsd::DATE), &Order::Bag).is_err());
}

#[test]
fn unbound_differs_from_bound() {
    let expected = Answer::Solutions {
        variables: vars(&["x"]),
        rows: vec![vec![None]],
    };
    let bound = solutions(&["x"], vec![vec![iri("a")]]);
    assert!(compare(&expected, &bound, &Order::Bag).is_err());
    assert_eq!(compare(&expected, &expected.clone(), &Order::Bag), Ok(()));
}

#[test]
fn graphs_compare_up_to_blank_nodes() {
    let triple = |s: Term, o: Term| {
        let subject = match s {
            Term::NamedNode(n) => oxrdf::NamedOrBlankNode::from(n),
            Term::BlankNode(b) => b.into(),
            _ => unreachable!(),
        };
        Triple::new(subject, NamedNode::new_unchecked("http://example.org/p"), o)
    };
    let expected = Answer::Graph(vec![
        triple(blank("x"), blank("y")),
        triple(blank("y"), iri("a")),
    ]);
    let same = Answer::Graph(vec![
        triple(blank("b"), iri("a")),
        triple(blank("a"), blank("b")),
        triple(blank("a"), blank("b")),
    ]);
    let broken = Answer::Graph(vec![
        triple(blank("a"), blank("b")),
        triple(blank("c"), iri("a")),
    ]);
    assert_eq!(compare(&expected, &same, &Order::Bag), Ok(()));
    assert!(compare(&expected, &broken, &Order::Bag).is_err());
}

#[test]
fn answers_of_different_kinds_and_booleans() {
    assert_eq!(
        compare(&Answer::Boolean(true), &Answer::Boolean(true), &Order::Bag),
        Ok(())
    );
    assert_eq!(
        compare(&Answer::Boolean(true), &Answer::Boolean(false), &Order::Bag),
        Err("expected true, got false".into())
    );
    let error = compare(
        &Answer::Boolean(true),
        &Answer::Graph(Vec::new()),
        &Order::Bag,
    );
    assert_eq!(error, Err("expected a boolean, got a graph".into()));
}

fn triple_term(subject: Term, predicate: &str, object: Term) -> Term {
    let subject = match subject {
        Term::NamedNode(n) => oxrdf::NamedOrBlankNode::from(n),
        Term::BlankNode(b) => b.into(),
        other => panic!("not a subject: {other}"),
    };
    Triple::new(
        subject,
        NamedNode::new_unchecked(format!("http://example.org/{predicate}")),
        object,
    )
    .into()
}

#[test]
fn blank_nodes_inside_triple_terms_follow_the_bijection() {
    // ?r is a triple term whose subject is the blank node bound to ?b.
    let expected = solutions(
        &["b", "r"],
        vec![vec![blank("x"), triple_term(blank("x"), "p", iri("o"))]],
    );
    let renamed = solutions(
        &["b", "r"],
        vec![vec![blank("y"), triple_term(blank("y"), "p", iri("o"))]],
    );
    assert_eq!(compare(&expected, &renamed, &Order::Bag), Ok(()));
    let split = solutions(
        &["b", "r"],
        vec![vec![blank("y"), triple_term(blank("z"), "p", iri("o"))]],
    );
    assert!(compare(&expected, &split, &Order::Bag).is_err());
    // Nested: the object of the triple term is a triple term with the blank node.
    let nested = |b: &str| triple_term(iri("s"), "p", triple_term(iri("t"), "q", blank(b)));
    let expected = solutions(&["b", "r"], vec![vec![blank("x"), nested("x")]]);
    assert_eq!(
        compare(
            &expected,
            &solutions(&["b", "r"], vec![vec![blank("w"), nested("w")]]),
            &Order::Bag
        ),
        Ok(())
    );
    assert!(compare(
        &expected,
        &solutions(&["b", "r"], vec![vec![blank("w"), nested("v")]]),
        &Order::Sequence
    )
    .is_err());
    // A triple term never matches a blank node, nor one with another predicate.
    let other = solutions(
        &["b", "r"],
        vec![vec![blank("y"), triple_term(blank("y"), "q", iri("o"))]],
    );
    assert!(compare(&expected, &other, &Order::Bag).is_err());
    let flat = solutions(&["b", "r"], vec![vec![blank("y"), blank("z")]]);
    assert!(compare(&expected, &flat, &Order::Bag).is_err());
}

#[test]
fn numbers_inside_triple_terms_compare_by_value() {
    let expected = solutions(&["r"], vec![vec![triple_term(iri("s"), "p", int("1"))]]);
    let padded = solutions(&["r"], vec![vec![triple_term(iri("s"), "p", int("01"))]]);
    let other = solutions(&["r"], vec![vec![triple_term(iri("s"), "p", int("2"))]]);
    assert_eq!(compare(&expected, &padded, &Order::Bag), Ok(()));
    assert!(compare(&expected, &other, &Order::Bag).is_err());
}
