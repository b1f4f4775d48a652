//! Hash joins whose shared variables are unbound in some rows of either side (rows looked
//! up by the variables they bind, `exec/key_index.rs`), against Oxigraph on random graphs:
//! the bags of rows must agree, and many answers must hold unbound values.
//!
//! Graphs: subjects `ex:s0…ex:s5` with objects over `ex:p`, `ex:q` and `ex:r` drawn from a
//! few IRIs, so that OPTIONALs leave some rows unbound and joins find matches.
//! `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use support::{oxigraph_rows, select};

const QUERIES: [&str; 6] = [
    // BSBM BI Q5's shape: a subquery grouping by a variable it never binds.
    "SELECT * { { SELECT ?s ?c (COUNT(*) AS ?n) { ?s ex:p ?o } GROUP BY ?s ?c } \
     { ?s ex:q ?c } }",
    // Unbound on the left, then on the right.
    "SELECT * { { ?s ex:p ?o OPTIONAL { ?s ex:q ?c } } { ?t ex:r ?o OPTIONAL { ?t ex:q ?c } } }",
    "SELECT * { { ?t ex:r ?o } { ?s ex:p ?o OPTIONAL { ?s ex:q ?c } } }",
    // Three shared variables, each unbound in some rows of either side.
    "SELECT * { { ?s ex:p ?o OPTIONAL { ?s ex:q ?c } OPTIONAL { ?o ex:q ?d } } \
     { ?x ex:r ?s OPTIONAL { ?x ex:q ?c } OPTIONAL { ?x ex:p ?d } } }",
    // One shared variable, unbound in some rows of both sides: those rows join every row.
    "SELECT * { { ?s ex:p ?o OPTIONAL { ?o ex:q ?c } } { ?t ex:r ?u OPTIONAL { ?u ex:q ?c } } }",
    // A UNION whose branches bind different variables, joined on both.
    "SELECT * { { { ?s ex:p ?o } UNION { ?s ex:q ?c } } { ?s ex:r ?o2 OPTIONAL { ?o2 ex:q ?c } } }",
];

type Graph = Vec<(usize, usize, usize)>;

fn graph_strategy() -> impl Strategy<Value = Graph> {
    prop::collection::vec((0..6_usize, 0..3_usize, 0..6_usize), 1..24)
}

fn ntriples(graph: &Graph) -> String {
    let mut text = String::new();
    for (s, p, o) in graph {
        let p = ["p", "q", "r"][*p];
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/{p}> <http://ex/s{o}> .");
    }
    text
}

fn check(graph: &Graph, rows: &Cell<usize>) -> Result<(), TestCaseError> {
    let text = ntriples(graph);
    let (store, oxigraph) = support::both_stores(&text);
    for query in QUERIES {
        let query = format!("PREFIX ex: <http://ex/> {query}");
        let (vars, mut ours) = select(&store, &query).map_err(TestCaseError::fail)?;
        let mut theirs = oxigraph_rows(&oxigraph, &query, &vars);
        ours.sort();
        theirs.sort();
        rows.set(rows.get() + ours.iter().filter(|r| r.contains(&None)).count());
        prop_assert_eq!(&ours, &theirs, "{}\non\n{}", query, text);
    }
    Ok(())
}

#[test]
fn joins_on_unbound_keys_agree_with_oxigraph() {
    let rows = Cell::new(0);
    let cases = support::check_random(200, graph_strategy(), |graph| check(&graph, &rows));
    // Not vacuous: many answers joined rows with unbound shared variables.
    assert!(
        rows.get() > cases,
        "{} rows with unbound values",
        rows.get()
    );
}
