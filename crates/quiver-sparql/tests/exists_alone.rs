//! `FILTER (NOT) EXISTS` whose pattern runs alone, from its constants, and is looked up by
//! the rows (`exec/exists_alone.rs`), where the planner finds that cheaper than seeding it
//! with every row: against Oxigraph on random graphs, the bags of rows must agree, and
//! both ways must have run.
//!
//! Graphs: `support::knows`. `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;

use support::knows::{agree_with_oxigraph, graph_strategy};

const QUERIES: [&str; 5] = [
    // One shared variable, a constant two steps away.
    "SELECT ?s ?b { ?s ex:knows ?a . ?a ex:knows ?b \
     FILTER EXISTS { ?s ex:knows ?o . ?o ex:c ex:c1 } }",
    "SELECT ?s ?b { ?s ex:knows ?a . ?a ex:knows ?b \
     FILTER NOT EXISTS { ?s ex:knows ?o . ?o ex:c ex:c1 } }",
    // A filter of the pattern's own variables after it.
    "SELECT ?a ?b { ?s ex:knows ?a . ?a ex:knows ?b \
     FILTER EXISTS { ?b ex:knows ?o . ?o ex:c ?c FILTER(?c = ex:c2 || ?c = ex:c0) } }",
    // Two shared variables.
    "SELECT ?s ?b { ?s ex:knows ?a . ?a ex:knows ?b \
     FILTER EXISTS { ?s ex:knows ?m . ?m ex:knows ?b . ?m ex:c ex:c0 } }",
    "SELECT ?s ?b { ?s ex:knows ?a . ?a ex:knows ?b \
     FILTER NOT EXISTS { ?s ex:knows ?m . ?m ex:knows ?b . ?m ex:c ex:c0 } }",
];

#[test]
fn exists_run_alone_agrees_with_oxigraph() {
    let (alone, rows) = (vec![Cell::new(0); QUERIES.len()], Cell::new(0));
    let cases = support::check_random(300, graph_strategy(), |graph| {
        agree_with_oxigraph(
            &graph,
            &QUERIES,
            "exists: the pattern ran alone",
            &alone,
            &rows,
        )
    });
    // Not vacuous: rows pass, and every query ran alone in some graphs and seeded in
    // others (the planner's costs decide, graph by graph).
    assert!(rows.get() > cases, "{} rows in all", rows.get());
    let alone: Vec<usize> = alone.iter().map(Cell::get).collect();
    assert!(
        alone.iter().all(|&runs| runs > 0 && runs < cases),
        "runs alone per query of {cases}: {alone:?}"
    );
}
