//! FILTERs over two varying variables evaluated row by row with their parts over one
//! variable computed once per id (`exec/memo_filter.rs`), against Oxigraph on random
//! graphs: string functions, arithmetic, type errors, COALESCE and IF over errors, BOUND
//! over OPTIONAL's unbound rows, language tags. The bags of rows must agree, and the memo
//! must have served some of the filters.
//!
//! Graphs: subjects `ex:s0…ex:s5` with values over `ex:p` and `ex:q` (integers, decimals,
//! IRIs, simple and language-tagged literals); the queries pair the `ex:p` values with the
//! `ex:q` values, so that each value stands in many rows. `PROPTEST_CASES` sets the number
//! of graphs.

use crate::support;

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use quiver_sparql::ExecOptions;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

const QUERIES: [&str; 10] = [
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (STRLEN(STR(?v)) > STRLEN(STR(?w)) + 1) }",
    // Type errors (an IRI or a string in the arithmetic) drop the row.
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . FILTER (?v + 1 > ?w * 2) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (COALESCE(?v + 1, 0) != COALESCE(?w * 2, 5)) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (IF(isIRI(?v), STR(?v), ?v) = IF(isIRI(?w), STR(?w), ?w) || STR(?v) < STR(?w)) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (CONTAINS(STR(?v), SUBSTR(STR(?w), 1, 1)) && ?s != ?t) }",
    // An unbound variable: BOUND of it, and its parts an error.
    "SELECT ?s ?v ?w WHERE { ?s ex:p ?v OPTIONAL { ?s ex:q ?w } \
     FILTER (!BOUND(?w) || STRLEN(STR(?w)) < STRLEN(STR(?v))) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (LANG(?v) = LANG(?w) && ?v != ?w) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . FILTER (ABS(?v - ?w) < 2) }",
    // Three variables, one of them (?s) with parts of its own.
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (CONCAT(STR(?v), STR(?w)) != STR(?s) && STRENDS(STR(?s), \"1\") = isNumeric(?w)) }",
    "SELECT ?s ?t ?v ?w WHERE { ?s ex:p ?v . ?t ex:q ?w . \
     FILTER (?v = ?w || sameTerm(?v, ?w) || UCASE(STR(?v)) = UCASE(STR(?w))) }",
];

/// The object of a random triple.
fn value(choice: usize) -> String {
    match choice % 5 {
        0 => format!("\"{}\"^^<{XSD}integer>", choice / 5),
        1 => format!("\"{}.5\"^^<{XSD}decimal>", choice / 5),
        2 => format!("<http://ex/o{}>", choice / 5 % 3),
        3 => format!("\"w{}\"", choice / 5 % 3),
        _ => format!("\"w{}\"@{}", choice / 5 % 2, ["en", "fr"][choice / 10 % 2]),
    }
}

type Graph = (Vec<(usize, usize)>, Vec<(usize, usize)>);

fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        prop::collection::vec((0..6_usize, 0..30_usize), 1..16),
        prop::collection::vec((0..6_usize, 0..30_usize), 0..10),
    )
}

fn ntriples((ps, qs): &Graph) -> String {
    let mut text = String::new();
    for (s, v) in ps {
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/p> {} .", value(*v));
    }
    for (s, v) in qs {
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/q> {} .", value(*v));
    }
    text
}

/// The parts over one variable that a query's filters computed per id, from its EXPLAIN
/// notes.
fn parts_memoised(notes: &[String]) -> usize {
    notes
        .iter()
        .filter_map(|note| note.strip_prefix("filter per row: "))
        .filter_map(|note| note.split(" part(s)").next()?.rsplit(", ").next())
        .filter_map(|count| count.parse::<usize>().ok())
        .sum()
}

fn check(graph: &Graph, parts: &Cell<usize>, rows: &Cell<usize>) -> Result<(), TestCaseError> {
    let queries = QUERIES
        .iter()
        .map(|query| format!("PREFIX ex: <http://ex/> {query}"));
    support::explained_rows_agree_with_oxigraph(
        &ntriples(graph),
        queries,
        parts_memoised,
        (parts, rows),
    )
}

#[test]
fn filters_over_two_variables_agree_with_oxigraph() {
    let (parts, rows) = (Cell::new(0), Cell::new(0));
    let cases = support::check_random(200, graph_strategy(), |graph| check(&graph, &parts, &rows));
    // Not vacuous: rows pass, and parts over one variable were computed per id in most
    // graphs' queries.
    assert!(rows.get() > cases, "{} rows in all", rows.get());
    assert!(
        parts.get() > cases * QUERIES.len() / 2,
        "{} parts computed per id",
        parts.get()
    );
}

#[test]
fn a_memo_the_memory_budget_refuses_is_computed_per_row_instead() {
    // Four long literals over `ex:p` (20 subjects), small integers over `ex:q`: the part
    // over ?v (`CONCAT(?v, "!")`) would hold four terms of 100 KB, the one over ?w
    // (`STR(?w)`) ten short ones. Under a budget of 256 KiB the first is refused and
    // computed per row; the rows must not change.
    let long = |i: usize| format!("{i}{}", "x".repeat(100_000));
    let mut text = String::new();
    for s in 0..20 {
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/p> \"{}\" .", long(s % 4));
        let _ = writeln!(
            text,
            "<http://ex/t{s}> <http://ex/q> {} .",
            value(s % 10 * 5)
        );
    }
    let store = support::load(&text);
    let query = "SELECT ?s ?t WHERE { ?s <http://ex/p> ?v . ?t <http://ex/q> ?w . \
                 FILTER (STRSTARTS(CONCAT(?v, \"!\"), STR(?w))) }";
    let run = |max_memory| {
        let options = ExecOptions {
            max_memory,
            ..ExecOptions::default()
        };
        let (_, mut rows, notes) = support::select_explained(&store, query, &options).unwrap();
        rows.sort();
        (rows, parts_memoised(&notes))
    };
    let (all_rows, all_parts) = run(None);
    let (budget_rows, budget_parts) = run(Some(256 << 10));
    // ?v starts with its subject's number mod 4; ?w is 0..9: pairs with ?w in 0..3 pass.
    assert_eq!(all_rows.len(), 20 * 2, "{all_rows:?}");
    assert_eq!(budget_rows, all_rows);
    assert_eq!(all_parts, 2);
    assert_eq!(budget_parts, 1);
}
