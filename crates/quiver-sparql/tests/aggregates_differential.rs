//! Aggregates on random graphs, by the engine and by Oxigraph: the bags of rows must agree.
//!
//! Graphs: 1 to 29 triples (the loader refuses an empty file) over five subjects; `ex:p` has numbers (integers, decimals
//! and doubles whose values never coincide across types, so MIN and MAX have one answer),
//! `ex:q` IRIs and simple literals, `ex:r` simple literals. The values are where the two
//! engines agree on SPARQL's open points: Oxigraph orders a number against a string by
//! lexical form where Quiver orders by kind, and keeps a common language tag in
//! GROUP_CONCAT. GROUP_CONCAT's order is unspecified, so its parts are compared sorted.
//! `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use support::{load, oxigraph_rows, select, Row};

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";
const SEPARATOR: &str = "|";

const QUERIES: [&str; 11] = [
    "SELECT ?s (COUNT(?o) AS ?n) (COUNT(DISTINCT ?o) AS ?nd) (SUM(?o) AS ?sum) \
     (SUM(DISTINCT ?o) AS ?sumd) (AVG(?o) AS ?avg) (MIN(?o) AS ?min) (MAX(?o) AS ?max) \
     WHERE { ?s ex:p ?o } GROUP BY ?s",
    "SELECT ?s (COUNT(*) AS ?n) (SUM(?o) AS ?sum) (MIN(?o) AS ?min) (MAX(?o) AS ?max) \
     (GROUP_CONCAT(?o; SEPARATOR=\"|\") AS ?concat) WHERE { ?s ex:q ?o } GROUP BY ?s",
    "SELECT (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?ns) (MIN(?o) AS ?min) (MAX(?o) AS ?max) \
     (GROUP_CONCAT(DISTINCT ?o; SEPARATOR=\"|\") AS ?concat) WHERE { ?s ex:r ?o }",
    "SELECT ?o (COUNT(?s) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?o HAVING (COUNT(?s) > 1)",
    "SELECT ?s ?p (COUNT(*) AS ?n) (SUM(?o) AS ?sum) WHERE { ?s ?p ?o } GROUP BY ?s ?p",
    "SELECT ?s ?o WHERE { ?s ex:p ?o { SELECT (MAX(?v) AS ?o) WHERE { ?s ex:p ?v } } }",
    "SELECT ?k (COUNT(*) AS ?n) (SUM(?o) AS ?sum) WHERE { ?s ex:p ?o } \
     GROUP BY (?o > 2 AS ?k) ORDER BY ?k",
    // Expressions over one variable (evaluated once per distinct id) and over two.
    "SELECT ?s (SUM(?o * 2) AS ?sum) (AVG(xsd:double(STR(?o))) AS ?avg) \
     (SUM(?o + ?o) AS ?twice) (MAX(STRLEN(STR(?o))) AS ?len) \
     (GROUP_CONCAT(STR(?o); SEPARATOR=\"|\") AS ?concat) \
     WHERE { ?s ex:p ?o } GROUP BY ?s",
    // Counts read from the index, ordered by the count under a LIMIT (the groups cut to
    // those that can be among the first rows); the orders are total.
    "SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY DESC(?n) ?s LIMIT 2",
    "SELECT ?o (COUNT(?s) AS ?c) WHERE { ?s ex:q ?o } GROUP BY ?o ORDER BY ?c DESC(?o) LIMIT 1",
    "SELECT ?o ?m WHERE { { SELECT ?o (COUNT(*) AS ?n) WHERE { ?s ex:r ?o } GROUP BY ?o } \
     BIND (?n AS ?m) } ORDER BY DESC(?m) ?o LIMIT 3 OFFSET 1",
];

/// One object of a random triple.
fn object(predicate: usize, choice: usize) -> String {
    match predicate {
        // Integers -3..=8, decimals k.5, doubles k.25 (in the lexical forms Oxigraph writes
        // back): distinct values across types.
        0 => match choice % 3 {
            0 => format!("\"{}\"^^<{XSD}integer>", choice as i64 / 3 - 3),
            1 => format!("\"{}.5\"^^<{XSD}decimal>", choice / 3),
            _ => format!("\"{}.25\"^^<{XSD}double>", choice / 3),
        },
        1 if choice.is_multiple_of(2) => format!("<http://ex/o{}>", choice % 4),
        _ => format!("\"w{}\"", choice % 5),
    }
}

fn graph_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec((0..5_usize, 0..3_usize, 0..36_usize), 1..30).prop_map(|triples| {
        let mut lines: Vec<String> = triples
            .into_iter()
            .map(|(s, p, o)| {
                let predicate = ["p", "q", "r"][p];
                format!(
                    "<http://ex/s{s}> <http://ex/{predicate}> {} .",
                    object(p, o)
                )
            })
            .collect();
        lines.sort();
        lines.dedup();
        lines.iter().fold(String::new(), |mut text, line| {
            let _ = writeln!(text, "{line}");
            text
        })
    })
}

/// Rows with GROUP_CONCAT results split and sorted, as a sorted bag.
fn normalize(vars: &[String], mut rows: Vec<Row>) -> Vec<Row> {
    for row in &mut rows {
        for (var, value) in vars.iter().zip(row.iter_mut()) {
            if var == "concat" {
                if let Some(text) = value {
                    let inner = &text[1..text.len() - 1];
                    let mut parts: Vec<&str> = inner.split(SEPARATOR).collect();
                    parts.sort_unstable();
                    *text = parts.join(SEPARATOR);
                }
            }
        }
    }
    rows.sort();
    rows
}

fn check(ntriples: &str, non_empty: &Cell<usize>) -> Result<(), TestCaseError> {
    let store = load(ntriples);
    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_slice(oxigraph::io::RdfFormat::NTriples, ntriples.as_bytes())
        .unwrap();
    for query in QUERIES {
        let text = format!("PREFIX ex: <http://ex/> PREFIX xsd: <{XSD}> {query}");
        let (vars, ours) = select(&store, &text).map_err(TestCaseError::fail)?;
        let theirs = oxigraph_rows(&oxigraph, &text, &vars);
        let (ours, theirs) = (normalize(&vars, ours), normalize(&vars, theirs));
        non_empty.set(non_empty.get() + usize::from(ours.iter().flatten().any(Option::is_some)));
        prop_assert_eq!(&ours, &theirs, "{}\non\n{}", text, ntriples);
    }
    Ok(())
}

#[test]
fn aggregates_agree_with_oxigraph_on_random_graphs() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(200);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let non_empty = Cell::new(0);
    let result = runner.run(&graph_strategy(), |graph| check(&graph, &non_empty));
    if let Err(error) = result {
        panic!("{error}");
    }
    // Not vacuous: most results have values.
    assert!(
        non_empty.get() > cases as usize * QUERIES.len() / 2,
        "{} results with values",
        non_empty.get()
    );
}
