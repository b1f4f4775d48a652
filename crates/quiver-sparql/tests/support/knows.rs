//! Random graphs of people who know each other, for differentials of EXISTS and MINUS:
//! subjects `ex:s0…ex:s5` that know each other (`ex:knows`), with integer values (`ex:v`)
//! and countries (`ex:c`, IRIs `ex:c0…ex:c2`).

use std::cell::Cell;
use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use quiver_sparql::ExecOptions;

/// The `knows` pairs, the values and the countries, by subject number.
pub type Graph = (
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
);

pub fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        // At least one triple: the loader refuses an empty file.
        prop::collection::vec((0..6_usize, 0..6_usize), 1..14),
        prop::collection::vec((0..6_usize, 0..4_usize), 0..8),
        prop::collection::vec((0..6_usize, 0..3_usize), 0..6),
    )
}

/// The graph as N-Triples.
pub fn ntriples((knows, values, countries): &Graph) -> String {
    let mut text = String::new();
    for (s, o) in knows {
        let _ = writeln!(
            text,
            "<http://ex/s{s}> <http://ex/knows> <http://ex/s{o}> ."
        );
    }
    for (s, v) in values {
        let _ = writeln!(
            text,
            "<http://ex/s{s}> <http://ex/v> \"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer> ."
        );
    }
    for (s, c) in countries {
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/c> <http://ex/c{c}> .");
    }
    text
}

/// Each of `queries` (over the prefix `ex:`) on `graph`, against Oxigraph: the bags of rows
/// must agree. `rows` adds up the rows found; `noted[i]` counts the graphs where query
/// `i`'s EXPLAIN notes include one starting with `note`.
pub fn agree_with_oxigraph(
    graph: &Graph,
    queries: &[&str],
    note: &str,
    noted: &[Cell<usize>],
    rows: &Cell<usize>,
) -> Result<(), TestCaseError> {
    let text = ntriples(graph);
    let (store, oxigraph) = super::both_stores(&text);
    for (i, query) in queries.iter().enumerate() {
        let query = format!("PREFIX ex: <http://ex/> {query}");
        let (vars, mut ours, notes) =
            super::select_explained(&store, &query, &ExecOptions::default())
                .map_err(TestCaseError::fail)?;
        let mut theirs = super::oxigraph_rows(&oxigraph, &query, &vars);
        ours.sort();
        theirs.sort();
        rows.set(rows.get() + ours.len());
        if notes.iter().any(|n| n.starts_with(note)) {
            noted[i].set(noted[i].get() + 1);
        }
        prop_assert_eq!(&ours, &theirs, "{}\non\n{}", query, text);
    }
    Ok(())
}
