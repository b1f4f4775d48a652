//! `MINUS { ?x <p> ?y }` after rows that bind `?x` (in some or all of them) and never `?y`,
//! decided by the length of each row's list instead of hashing every edge, against
//! Oxigraph on random graphs: the bags of rows must agree, the lengths must have decided
//! the shapes they can, and only those.
//!
//! Under a LIMIT, the left rows are asked for a round at a time and the lengths decide
//! each round's: the first rows kept answer it.
//!
//! Graphs: `support::knows`. `PROPTEST_CASES` sets the number of graphs.

use crate::support;

use std::cell::Cell;

use quiver_sparql::ExecOptions;

use support::knows::{agree_with_oxigraph, graph_strategy};

/// Each query, and whether list lengths can decide its MINUS.
const QUERIES: [(&str, bool); 7] = [
    // Has no `knows`.
    ("SELECT ?s ?x { ?s ex:v ?x MINUS { ?s ex:knows ?o } }", true),
    // Nobody knows it (the inward list).
    ("SELECT ?s ?x { ?s ex:v ?x MINUS { ?o ex:knows ?s } }", true),
    // `?o` unbound in some rows: those share nothing with the right side and stay.
    (
        "SELECT ?s ?o { ?s ex:v ?x OPTIONAL { ?s ex:knows ?o } MINUS { ?o ex:c ?c } }",
        true,
    ),
    // A union binding `?s` on both sides, with other columns unbound in some rows.
    (
        "SELECT ?s ?x ?w { { ?s ex:v ?x } UNION { ?s ex:c ?w } MINUS { ?s ex:knows ?o } }",
        true,
    ),
    // Both ends bound on the left: the edge itself must match, not just a list.
    ("SELECT ?s ?w { ?s ex:c ?w MINUS { ?s ex:c ?w } }", false),
    (
        "SELECT ?s ?o { ?s ex:knows ?o . ?o ex:v ?x MINUS { ?s ex:knows ?o } }",
        false,
    ),
    // Two patterns on the right.
    (
        "SELECT ?s { ?s ex:v ?x MINUS { ?s ex:knows ?o . ?o ex:c ?c } }",
        false,
    ),
];

#[test]
fn minus_of_one_edge_by_list_lengths_agrees_with_oxigraph() {
    let (by_length, rows) = (vec![Cell::new(0); QUERIES.len()], Cell::new(0));
    let queries: Vec<&str> = QUERIES.iter().map(|&(query, _)| query).collect();
    let cases = support::check_random(200, graph_strategy(), |graph| {
        agree_with_oxigraph(&graph, &queries, "minus: ", &by_length, &rows)
    });
    // Not vacuous: rows pass, and the lengths decided the shapes they can (in the graphs
    // whose left side has rows) and no other.
    assert!(rows.get() > cases, "{} rows in all", rows.get());
    let by_length: Vec<usize> = by_length.iter().map(Cell::get).collect();
    for (i, (query, decidable)) in QUERIES.iter().enumerate() {
        assert_eq!(
            by_length[i] > cases / 2,
            *decidable,
            "{query}: decided by lengths in {} of {cases} graphs",
            by_length[i]
        );
        if !decidable {
            assert_eq!(by_length[i], 0, "{query}");
        }
    }
}

#[test]
fn minus_of_one_edge_under_a_limit_decides_rounds_of_left_rows() {
    // 2,000 subjects with a value; all but every tenth know someone: a tenth are kept, so
    // the first rounds of left rows keep too few for the larger limits.
    let subjects = 2_000;
    let mut text = String::new();
    for i in 0..subjects {
        text.push_str(&format!("<http://ex/s{i}> <http://ex/v> \"{i}\" .\n"));
        if i % 10 != 0 {
            text.push_str(&format!(
                "<http://ex/s{i}> <http://ex/knows> <http://ex/s0> .\n"
            ));
        }
    }
    let store = support::load(&text);
    let all = "PREFIX ex: <http://ex/> SELECT ?s ?x { ?s ex:v ?x MINUS { ?s ex:knows ?o } }";
    let (_, mut whole, _) =
        support::select_explained(&store, all, &ExecOptions::default()).unwrap();
    whole.sort();
    assert_eq!(whole.len(), subjects / 10);
    for (limit, offset) in [(1, 0), (10, 0), (60, 5), (150, 20), (500, 0)] {
        let query = format!("{all} LIMIT {limit} OFFSET {offset}");
        let (_, rows, notes) =
            support::select_explained(&store, &query, &ExecOptions::default()).unwrap();
        let expected = limit.min(whole.len().saturating_sub(offset));
        assert_eq!(rows.len(), expected, "{query}: {notes:?}");
        assert!(
            rows.iter().all(|row| whole.binary_search(row).is_ok()),
            "{query}: {rows:?}"
        );
        let mut distinct = rows.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), rows.len(), "{query}: a row twice");
        // Decided by lengths, on the rows the rounds asked for: for the first limits
        // (a round of 1,024 left rows keeps about 100), fewer than all; for the last
        // (more than the kept rows), all.
        let decided = notes
            .iter()
            .find_map(|note| note.strip_prefix("minus: "))
            .unwrap_or_else(|| panic!("{query}: not decided by lengths: {notes:?}"));
        let of: usize = decided
            .split(" of ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        if limit + offset <= 100 {
            assert!(of < subjects, "{query}: {decided}");
        }
        if limit + offset > whole.len() {
            assert_eq!(of, subjects, "{query}: {decided}");
        }
    }
}
