//! GROUP BY under a LIMIT in no order (`exec/group_first.rs`): the groups given are whole
//! groups of the full GROUP BY (each row one of its rows, aggregates and all), as many as
//! asked, whichever key the values are seeded for (a subject, an object, one of two keys,
//! a class's instances), through a HAVING that needs more rounds, in a named graph, and
//! where most values give no rows (the whole pattern runs instead).

use crate::support;

use std::collections::HashSet;

use quiver_sparql::ExecOptions;
use quiver_store::Store;
use support::Row;

const T: &str = "http://t/";

fn store() -> Store {
    let mut text = String::new();
    text.push_str(&format!("<{T}special> <{T}z> \"rare\" <{T}g> .\n"));
    for i in 0..2000_usize {
        let s = format!("<{T}s{i}>");
        // 0 to 4 edges of `p`: a fifth of the subjects have none.
        for j in 0..i % 5 {
            text.push_str(&format!(
                "{s} <{T}p> <{T}o{}> <{T}g> .\n",
                (i * 7 + j) % 301
            ));
        }
        text.push_str(&format!("{s} <{T}q> \"v{}\" <{T}g> .\n", i % 7));
        text.push_str(&format!(
            "{s} <{T}r> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> <{T}g> .\n",
            i % 13
        ));
        text.push_str(&format!(
            "{s} <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{T}C{}> <{T}g> .\n",
            i % 3
        ));
        // The subjects whose names start with 9, which sort last: the only ones to reach
        // `z`.
        if i.to_string().starts_with('9') {
            text.push_str(&format!("{s} <{T}p> <{T}special> <{T}g> .\n"));
        }
        if i.is_multiple_of(2) {
            text.push_str(&format!("{s} <{T}p> <{T}n{}> <{T}named> .\n", i % 11));
        }
    }
    support::load_as(&text, "nq")
}

/// The rows of `query`, each GROUP_CONCAT's parts sorted (their order is unspecified) and
/// `?any` (a SAMPLE) dropped; whether the groups were seeded.
fn groups(store: &Store, query: &str) -> (Vec<Row>, bool) {
    let (vars, rows, notes) = support::select_explained(store, query, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let rows = rows
        .into_iter()
        .map(|row| {
            row.into_iter()
                .zip(&vars)
                .filter(|(_, var)| var.as_str() != "any")
                .map(|(term, var)| match var.as_str() {
                    "concat" => term.map(|t| {
                        let mut parts: Vec<_> = t.trim_matches('"').split(' ').collect();
                        parts.sort();
                        parts.join(" ")
                    }),
                    _ => term,
                })
                .collect()
        })
        .collect();
    let seeded = notes
        .iter()
        .any(|n| n.contains(": the groups of the first"));
    (rows, seeded)
}

#[test]
fn groups_under_a_limit_are_whole_groups_of_the_full_group_by() {
    let store = store();
    let dataset = format!("FROM <{T}g>");
    for (query, seeded) in [
        // By subject, by object, a class's instances, two keys.
        (format!("SELECT ?s (COUNT(?o) AS ?n) (SAMPLE(?o) AS ?any) {dataset} {{ ?s <{T}p> ?o }} GROUP BY ?s"), true),
        (format!("SELECT ?o (COUNT(?s) AS ?n) (MIN(?s) AS ?m) {dataset} {{ ?s <{T}p> ?o }} GROUP BY ?o"), true),
        (format!("SELECT ?s (SUM(?v) AS ?t) (GROUP_CONCAT(?w) AS ?concat) {dataset} {{ ?s <{T}r> ?v ; <{T}q> ?w }} GROUP BY ?s"), true),
        (format!("SELECT ?s (MAX(?o) AS ?m) (AVG(?v) AS ?a) {dataset} {{ ?s a <{T}C1> ; <{T}p> ?o ; <{T}r> ?v }} GROUP BY ?s"), true),
        (format!("SELECT ?s ?w (COUNT(*) AS ?n) (COUNT(DISTINCT ?o) AS ?d) {dataset} {{ ?s <{T}q> ?w ; <{T}p> ?o }} GROUP BY ?s ?w"), true),
        (format!("SELECT ?w (COUNT(?s) AS ?n) (SAMPLE(?s) AS ?any) {dataset} {{ ?s <{T}q> ?w }} GROUP BY ?w"), true),
        // A HAVING that passes one group in five: more rounds.
        (format!("SELECT ?s (COUNT(?o) AS ?n) (SAMPLE(?o) AS ?any) {dataset} {{ ?s <{T}p> ?o }} GROUP BY ?s HAVING (COUNT(?o) = 4)"), true),
        // Another graph.
        (format!("SELECT ?s (GROUP_CONCAT(?o) AS ?concat) FROM <{T}named> {{ ?s <{T}p> ?o }} GROUP BY ?s"), true),
        // The values that give rows come last: past a quarter of them, the whole pattern
        // runs.
        (format!("SELECT ?s (SAMPLE(?k) AS ?any) (COUNT(*) AS ?n) {dataset} {{ ?s <{T}p> ?o . ?o <{T}z> ?k }} GROUP BY ?s"), false),
    ] {
        let (full, _) = groups(&store, &query);
        assert!(full.len() > 5, "{query}: {} groups", full.len());
        let all: HashSet<&Row> = full.iter().collect();
        for limit in [1, 7, 50, 5000] {
            let limited = format!("{query} LIMIT {limit}");
            let (rows, used) = groups(&store, &limited);
            assert_eq!(rows.len(), limit.min(full.len()), "{limited}");
            assert_eq!(rows.iter().collect::<HashSet<_>>().len(), rows.len(), "{limited}");
            for row in &rows {
                assert!(all.contains(row), "{limited}: {row:?} is no group of the full answer");
            }
            assert_eq!(used, seeded && limit < full.len(), "{limited}");
        }
    }
}

/// Where the values that give groups are few and come last in the list, and the pattern's
/// own plan starts from a selective constant, the rounds give up after a few hundred values
/// (four times what that plan is estimated to build), not a quarter of the list, and the
/// answer is the full GROUP BY's.
#[test]
fn seeded_rounds_give_up_at_what_the_whole_pattern_costs() {
    let mut text = format!("<{T}special> <{T}z> \"rare\" .\n");
    for i in 0..16_000 {
        let s = format!("<{T}s{i:05}>");
        let object = match i >= 15_980 {
            true => format!("<{T}special>"),
            false => format!("<{T}o{}>", i % 500),
        };
        text.push_str(&format!("{s} <{T}p> {object} .\n"));
    }
    let store = support::load(&text);
    let query = format!(
        "SELECT ?s (SAMPLE(?o) AS ?any) (COUNT(*) AS ?n) {{ ?s <{T}p> ?o . ?o <{T}z> \"rare\" }} \
         GROUP BY ?s"
    );
    let (full, _) = groups(&store, &query);
    assert_eq!(full.len(), 20);
    for limit in [1, 5] {
        let limited = format!("{query} LIMIT {limit}");
        let (vars, rows, notes) =
            support::select_explained(&store, &limited, &ExecOptions::default()).unwrap();
        assert_eq!(rows.len(), limit, "{limited}");
        let n = vars.iter().position(|v| v == "n").unwrap();
        assert!(rows
            .iter()
            .all(|row| row[n].as_deref().is_some_and(|c| c.starts_with("\"1\""))));
        let gave_up = notes
            .iter()
            .find_map(|note| note.split(" in the first ").nth(1))
            .and_then(|rest| rest.split(' ').next())
            .and_then(|values| values.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("{limited}: {notes:?}"));
        assert!(
            gave_up <= 1_000,
            "{limited}: gave up after {gave_up} values"
        );
    }
}

/// The rows a query builds, by its profile.
fn rows_built(store: &Store, query: &str) -> usize {
    use quiver_sparql::{prepare, PrepareOptions};
    let prepared = prepare(store, query, &PrepareOptions::default()).unwrap();
    let (_, profile) = prepared
        .execute_profiled(store, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    profile.rows_built
}

/// Seeding values of a key never costs much more than the whole pattern: where the
/// pattern's plan starts from a selective constant and its groups are few (or none), the
/// rounds stop at what that plan is estimated to build and the whole pattern runs.
#[test]
fn a_group_under_a_limit_builds_little_more_than_the_whole_pattern() {
    let store = store();
    let dataset = format!("FROM <{T}g>");
    for body in [
        format!("?s <{T}p> ?o"),
        format!("?s <{T}p> ?o . ?o <{T}z> \"rare\""),
        format!("?s <{T}p> ?o . ?o <{T}z> \"rare\" . ?s <{T}q> \"v3\""),
        format!("?s <{T}p> ?o . ?s a <{T}C2> . ?s <{T}q> \"v5\""),
    ] {
        let query = format!(
            "SELECT ?s (SAMPLE(?o) AS ?any) (COUNT(*) AS ?n) {dataset} {{ {body} }} GROUP BY ?s"
        );
        let whole = rows_built(&store, &query);
        for limit in [1, 10, 100] {
            let limited = format!("{query} LIMIT {limit}");
            let built = rows_built(&store, &limited);
            assert!(
                built <= 2 * whole + 64,
                "{limited}: {built} rows built, {whole} without the LIMIT"
            );
        }
    }
}
