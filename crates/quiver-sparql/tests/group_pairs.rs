//! GROUP BY over a cross product under one triple's (NOT) EXISTS, grouped without building
//! the product (`exec/group_pairs/`), against Oxigraph on random graphs: the bags of rows
//! must agree, and the queries written for that path must have taken it (EXPLAIN's note).
//!
//! Graphs: products `ex:s0…ex:s5` of type `ex:A` or `ex:B` (`ex:s0` always `ex:A`), each
//! with some features `ex:f0…ex:f4` (`ex:f`), offers with a product, a price and a weight.
//! A graph's prices are all of one kind (floats, doubles, integers: the fast paths) or
//! mixed, sometimes with a string (a SUM that fails for its groups). Floats and doubles are
//! halves and quarters, so every order of addition gives the same sum. MIN and MAX read
//! the integer weights (Oxigraph orders a number against a string by lexical form, Quiver
//! by kind). The features have labels, so a product can also be grouped against the
//! features it lacks. `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use quiver_sparql::ExecOptions;
use quiver_store::Store;
use support::{oxigraph_rows, Row};

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// Queries that group over pairs, and whether EXPLAIN must show that path.
const QUERIES: [(&str, bool); 9] = [
    // BSBM BI Q4's shape: features of a type against the offers of that type's products
    // that lack each one.
    (
        "SELECT ?f (AVG(?price) AS ?avg) (SUM(?price) AS ?sum) (COUNT(*) AS ?n) \
         (COUNT(?price) AS ?bound) WHERE { \
           { SELECT DISTINCT ?f { ?p a ex:A ; ex:f ?f } } \
           ?product a ex:A . ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f",
        true,
    ),
    // EXISTS, keyed on the right with repeated keys (a feature once per product having it).
    (
        "SELECT ?f (SUM(?price) AS ?sum) (COUNT(*) AS ?n) WHERE { \
           ?offer ex:product ?product ; ex:price ?price . \
           ?q ex:f ?f . \
           FILTER EXISTS { ?product ex:f ?f } } GROUP BY ?f",
        true,
    ),
    // Aggregates folded afterwards: MIN, MAX, GROUP_CONCAT, and a DISTINCT MIN.
    (
        "SELECT ?f (MIN(?w) AS ?min) (MAX(?w) AS ?max) (MIN(DISTINCT ?w) AS ?dmin) \
         (GROUP_CONCAT(STR(?price); SEPARATOR=\"|\") AS ?concat) WHERE { \
           ?f ex:label ?l . ?offer ex:product ?product ; ex:price ?price ; ex:weight ?w . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f",
        true,
    ),
    // Expressions of the valued side, and an aggregate of the keyed side.
    (
        "SELECT ?f ?l (SUM(?price * 2) AS ?twice) (AVG(xsd:double(STR(?price))) AS ?avg) \
         (MAX(STRLEN(?l)) AS ?len) WHERE { \
           ?f ex:label ?l . ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f ?l",
        true,
    ),
    // The keyed variable is the subject of the EXISTS triple: products against the
    // labelled features they lack.
    (
        "SELECT ?product (COUNT(*) AS ?n) (SAMPLE(?t) AS ?type) WHERE { \
           ?product a ?t . ?f ex:label ?l . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?product",
        true,
    ),
    // Two keys, one of them not the EXISTS variable.
    (
        "SELECT ?t ?f (COUNT(*) AS ?n) (SUM(?price) AS ?sum) WHERE { \
           { ?p a ?t ; ex:f ?f } \
           ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?t ?f",
        true,
    ),
    // A DISTINCT SUM is grouped over the built product.
    (
        "SELECT ?f (SUM(DISTINCT ?price) AS ?sum) WHERE { \
           ?f ex:label ?l . ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f",
        false,
    ),
    // A keyed variable left unbound (products have no label): EXISTS is free in it, so
    // the product is built.
    (
        "SELECT ?f (COUNT(*) AS ?n) (SUM(?price) AS ?sum) WHERE { \
           { SELECT DISTINCT ?f { ?p a ex:A OPTIONAL { ?p ex:label ?f } } } \
           ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f",
        false,
    ),
    // Under HAVING and ORDER BY, as BI Q4 uses it.
    (
        "SELECT ?f ?avg WHERE { { SELECT ?f (AVG(?price) AS ?avg) WHERE { \
           ?f ex:label ?l . ?offer ex:product ?product ; ex:price ?price . \
           FILTER NOT EXISTS { ?product ex:f ?f } } GROUP BY ?f HAVING (COUNT(*) > 2) } } \
         ORDER BY DESC(?avg) ?f",
        true,
    ),
];

/// A price of the graph's `kind`: 0 floats, 1 doubles, 2 integers, 3 any of these or a
/// string.
fn price(kind: usize, choice: usize) -> String {
    let kind = if kind == 3 { choice % 4 } else { kind };
    match kind {
        0 => format!("\"{}.5\"^^<{XSD}float>", choice),
        1 => format!("\"{}.25\"^^<{XSD}double>", choice),
        2 => format!("\"{}\"^^<{XSD}integer>", choice),
        _ => "\"cheap\"".to_owned(),
    }
}

type Graph = (usize, Vec<(usize, Vec<bool>)>, Vec<(usize, usize)>, usize);

fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        0..4_usize,
        prop::collection::vec((0..2_usize, prop::collection::vec(any::<bool>(), 5)), 1..6),
        prop::collection::vec((0..6_usize, 0..40_usize), 0..14),
        1..6_usize,
    )
}

fn ntriples((kind, products, offers, labelled): &Graph) -> String {
    let mut text = String::new();
    for (i, (class, features)) in products.iter().enumerate() {
        let _ = writeln!(
            text,
            "<http://ex/s{i}> <{RDF_TYPE}> <http://ex/{}> .",
            ["A", "B"][if i == 0 { 0 } else { *class }]
        );
        for (f, has) in features.iter().enumerate() {
            if *has {
                let _ = writeln!(text, "<http://ex/s{i}> <http://ex/f> <http://ex/f{f}> .");
            }
        }
    }
    for (o, (product, choice)) in offers.iter().enumerate() {
        let product = product % products.len();
        let _ = writeln!(
            text,
            "<http://ex/o{o}> <http://ex/product> <http://ex/s{product}> ."
        );
        let _ = writeln!(
            text,
            "<http://ex/o{o}> <http://ex/price> {} .",
            price(*kind, *choice)
        );
        let _ = writeln!(
            text,
            "<http://ex/o{o}> <http://ex/weight> \"{}\"^^<{XSD}integer> .",
            choice % 7
        );
    }
    for f in 0..*labelled {
        let _ = writeln!(text, "<http://ex/f{f}> <http://ex/label> \"feature {f}\" .");
    }
    text
}

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// Quiver's rows and whether the grouping over pairs ran.
fn quiver_rows(store: &Store, query: &str) -> Result<(Vec<String>, Vec<Row>, bool), String> {
    let options = ExecOptions {
        threads: 2,
        ..ExecOptions::default()
    };
    let (vars, rows, notes) = support::select_explained(store, query, &options)?;
    let fired = notes
        .iter()
        .any(|note| note.starts_with("group over pairs"));
    Ok((vars, rows, fired))
}

/// Rows as a sorted bag, GROUP_CONCAT's parts sorted (their order is unspecified).
fn normalize(vars: &[String], mut rows: Vec<Row>) -> Vec<Row> {
    for row in &mut rows {
        for (var, value) in vars.iter().zip(row.iter_mut()) {
            if let (true, Some(text)) = (var == "concat", value.as_mut()) {
                let inner = &text[1..text.len() - 1];
                let mut parts: Vec<&str> = inner.split('|').collect();
                parts.sort_unstable();
                *text = parts.join("|");
            }
        }
    }
    rows.sort();
    rows
}

fn check(graph: &Graph, seen: &Cell<usize>) -> Result<(), TestCaseError> {
    let text = ntriples(graph);
    let (store, oxigraph) = support::both_stores(&text);
    for (query, grouped_over_pairs) in QUERIES {
        let query = format!("PREFIX ex: <http://ex/> PREFIX xsd: <{XSD}> {query}");
        let (vars, ours, fired) = quiver_rows(&store, &query).map_err(TestCaseError::fail)?;
        let theirs = oxigraph_rows(&oxigraph, &query, &vars);
        let (ours, theirs) = (normalize(&vars, ours), normalize(&vars, theirs));
        seen.set(seen.get() + usize::from(!ours.is_empty()));
        prop_assert_eq!(&ours, &theirs, "{}\non\n{}", query, text);
        prop_assert_eq!(fired, grouped_over_pairs, "path taken by {}", query);
    }
    Ok(())
}

#[test]
fn grouping_over_pairs_agrees_with_oxigraph() {
    // Cut the pairs into runs on two threads even on these small graphs.
    quiver_sparql::exec::parallel::set_min_parallel_rows(4);
    let seen = Cell::new(0);
    let cases = support::check_random(150, graph_strategy(), |graph| check(&graph, &seen));
    // Not vacuous: most answers have rows.
    assert!(
        seen.get() > cases * QUERIES.len() / 2,
        "{} answers with rows",
        seen.get()
    );
}
