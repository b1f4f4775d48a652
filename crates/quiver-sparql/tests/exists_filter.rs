//! `FILTER (NOT) EXISTS { bgp FILTER(…) }` run for the whole table at once (the pattern
//! seeded with every row, its filter on what it finds, outer variables it reads carried
//! along; or, where cheaper, run alone and looked up by the rows), against Oxigraph on random graphs: the bags of rows must agree, and the batched
//! path must have run.
//!
//! Graphs: `support::knows`. `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;

use support::knows::{agree_with_oxigraph, graph_strategy};

const QUERIES: [&str; 6] = [
    // BSBM BI Q7's shape: no neighbour of a given country.
    "SELECT ?s ?x { ?s ex:v ?x FILTER NOT EXISTS { ?s ex:knows ?o . ?o ex:c ?c \
     FILTER(?c = ex:c1) } }",
    // The filter reads an outer variable the pattern does not bind.
    "SELECT ?s ?x { ?s ex:v ?x FILTER EXISTS { ?s ex:knows ?o . ?o ex:v ?y FILTER(?y > ?x) } }",
    // An outer variable read by the filter, unbound in some rows.
    "SELECT ?s ?w { ?s ex:v ?x OPTIONAL { ?s ex:c ?w } \
     FILTER NOT EXISTS { ?s ex:knows ?o . ?o ex:c ?c FILTER(?c = ?w) } }",
    "SELECT ?s ?w { ?s ex:v ?x OPTIONAL { ?s ex:c ?w } \
     FILTER EXISTS { ?s ex:knows ?o FILTER(!BOUND(?w) || ?o != ?s) } }",
    // Two conjuncts, one decided per id, one reading two variables.
    "SELECT ?s { ?s ex:c ?w FILTER EXISTS { ?o ex:knows ?s . ?o ex:v ?y \
     FILTER(?y >= 1 && ?o != ?s) } }",
    // A shared variable unbound in some rows: row by row, same answers (batched in the
    // graphs where every row binds it).
    "SELECT ?s ?o { ?s ex:v ?x OPTIONAL { ?s ex:knows ?o } \
     FILTER EXISTS { ?o ex:c ?c FILTER(?c != ex:c0) } }",
];

#[test]
fn exists_with_a_filter_for_the_whole_table_agrees_with_oxigraph() {
    let (batched, rows) = (vec![Cell::new(0); QUERIES.len()], Cell::new(0));
    let cases = support::check_random(200, graph_strategy(), |graph| {
        agree_with_oxigraph(
            &graph,
            &QUERIES,
            // Seeded with every row, or run alone and looked up by them.
            "exists: the pattern ",
            &batched,
            &rows,
        )
    });
    // Not vacuous: rows pass, the first five queries were batched in every graph, and the
    // last only in graphs where its shared variable is bound in every row.
    assert!(rows.get() > cases, "{} rows in all", rows.get());
    let batched: Vec<usize> = batched.iter().map(Cell::get).collect();
    assert!(
        batched[..5].iter().all(|&runs| runs == cases) && batched[5] < cases,
        "runs batched per query: {batched:?}"
    );
}
