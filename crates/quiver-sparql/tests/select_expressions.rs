//! SELECT expressions and BINDs evaluated once per distinct tuple of the ids they read
//! (`exec/extend.rs`), and ORDER BY keys that repeat a SELECT expression sorted by its
//! variable (`compile/order_keys.rs`), against Oxigraph on random graphs: ordered queries
//! must give Oxigraph's rows in Oxigraph's order (their keys leave no ties between
//! different rows), the others the same bag of rows; and the two shortcuts must have run.
//!
//! Graphs: subjects `ex:s0…ex:s5` with values over `ex:p` and `ex:q` (integers with zeros
//! among them, decimals, simple literals, IRIs; doubles come from casts, since Oxigraph
//! rewrites a double's lexical form on load), so that divisions fail on zeros and on
//! strings and values repeat across rows. `PROPTEST_CASES` sets the number of
//! graphs.

use crate::support;

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use quiver_sparql::ExecOptions;
use support::oxigraph_rows;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

/// Queries, and whether their order is part of the answer.
const QUERIES: [(&str, bool); 7] = [
    // BSBM BI Q3's shape: a ratio selected and ordered by, under a LIMIT (top-k); the
    // divisor is positive (no NaN, no -0, whose places in the order are the engine's).
    (
        "SELECT ?s (xsd:double(?a) / (?b * ?b + 1) AS ?r) { ?s ex:p ?a ; ex:q ?b } \
         ORDER BY DESC(xsd:double(?a) / (?b * ?b + 1)) ?s LIMIT 4",
        true,
    ),
    // The whole order, with integers divided (decimals, errors on zeros).
    (
        "SELECT ?s (?a / ?b AS ?r) { ?s ex:p ?a ; ex:q ?b } ORDER BY ASC(?a / ?b) ?s",
        true,
    ),
    // Two keys repeating two SELECT expressions, one of them a string.
    (
        "SELECT ?s (STR(?a) AS ?t) (?a + 1 AS ?n) { ?s ex:p ?a } \
         ORDER BY DESC(STR(?a)) (?a + 1) ?s OFFSET 1 LIMIT 5",
        true,
    ),
    // BIND chains: the second reads the first; a variable never bound.
    (
        "SELECT ?s ?x ?y { ?s ex:p ?a . BIND(?a * 2 AS ?x) BIND(COALESCE(?x, ?none, 0) + ?a AS ?y) }",
        false,
    ),
    // Three variables read, one of them the subject.
    (
        "SELECT ?s ?c { ?s ex:p ?a ; ex:q ?b BIND(CONCAT(STR(?s), STR(?a), STR(?b)) AS ?c) }",
        false,
    ),
    // Fresh terms are not remembered: every row gets its own UUID, each 36 characters.
    (
        "SELECT ?s ?n { ?s ex:p ?a BIND(STRLEN(STRUUID()) AS ?n) }",
        false,
    ),
    // An ORDER BY key that repeats nothing stays an expression.
    (
        "SELECT ?s ?a { ?s ex:p ?a } ORDER BY DESC(STRLEN(STR(?a))) STR(?a) ?s LIMIT 3",
        true,
    ),
];

/// The object of a random triple.
fn value(choice: usize) -> String {
    match choice % 6 {
        0 | 1 => format!("\"{}\"^^<{XSD}integer>", choice / 6 % 4),
        2 => format!("\"{}.5\"^^<{XSD}decimal>", choice / 6),
        3 => format!("\"-{}.25\"^^<{XSD}decimal>", choice / 6 % 3),
        4 => format!("\"w{}\"", choice / 6 % 3),
        _ => format!("<http://ex/o{}>", choice / 6 % 2),
    }
}

type Graph = Vec<(usize, bool, usize)>;

fn graph_strategy() -> impl Strategy<Value = Graph> {
    prop::collection::vec((0..6_usize, any::<bool>(), 0..30_usize), 1..24)
}

fn ntriples(graph: &Graph) -> String {
    let mut text = String::new();
    for (s, p, v) in graph {
        let p = if *p { "p" } else { "q" };
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/{p}> {} .", value(*v));
    }
    text
}

/// What the shortcuts did over all graphs.
#[derive(Default)]
struct Seen {
    rows: Cell<usize>,
    remembered: Cell<usize>,
    repeated: Cell<usize>,
    sorted_by_ids: Cell<usize>,
}

fn check(graph: &Graph, seen: &Seen) -> Result<(), TestCaseError> {
    let text = ntriples(graph);
    let (store, oxigraph) = support::both_stores(&text);
    for (i, (query, ordered)) in QUERIES.iter().enumerate() {
        let query = format!("PREFIX ex: <http://ex/> PREFIX xsd: <{XSD}> {query}");
        let (vars, mut ours, notes) =
            support::select_explained(&store, &query, &ExecOptions::default())
                .map_err(TestCaseError::fail)?;
        let mut theirs = oxigraph_rows(&oxigraph, &query, &vars);
        if !ordered {
            ours.sort();
            theirs.sort();
        }
        seen.rows.set(seen.rows.get() + ours.len());
        for note in notes.iter().filter(|n| n.starts_with("bind ?")) {
            // "bind ?x: E evaluations for R rows, …"
            let numbers: Vec<usize> = note
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse().ok())
                .collect();
            prop_assert!(i != 5, "fresh terms remembered: {}", note);
            prop_assert!(numbers.len() == 2 && numbers[0] <= numbers[1], "{}", note);
            seen.remembered.set(seen.remembered.get() + 1);
            if numbers[0] < numbers[1] {
                seen.repeated.set(seen.repeated.get() + 1);
            }
        }
        if notes.iter().any(|n| n.contains("on sort keys of ids")) {
            prop_assert!(i != 6, "a key that repeats nothing sorted by ids");
            seen.sorted_by_ids.set(seen.sorted_by_ids.get() + 1);
        }
        if i == 5 {
            let length = format!("\"36\"^^<{XSD}integer>");
            for row in &ours {
                prop_assert_eq!(row[1].as_deref(), Some(length.as_str()));
            }
            continue;
        }
        prop_assert_eq!(&ours, &theirs, "{}\non\n{}", query, text);
    }
    Ok(())
}

#[test]
fn select_expressions_and_their_order_agree_with_oxigraph() {
    let seen = Seen::default();
    let cases = support::check_random(150, graph_strategy(), |graph| check(&graph, &seen));
    // Not vacuous: rows came back, expressions were remembered and reused, and the top-k
    // keys that repeat a SELECT expression sorted by ids.
    assert!(seen.rows.get() > cases, "{} rows in all", seen.rows.get());
    assert!(
        seen.remembered.get() > cases,
        "{} remembered",
        seen.remembered.get()
    );
    assert!(
        seen.repeated.get() > cases / 2,
        "{} reused",
        seen.repeated.get()
    );
    assert!(
        seen.sorted_by_ids.get() > cases / 2,
        "{} sorted by ids",
        seen.sorted_by_ids.get()
    );
}
