//! FILTER EXISTS / NOT EXISTS: substitution of the row's bindings into the pattern (filters
//! inside the pattern see outer variables), the batched semi-join over a whole table, and
//! EXISTS inside GRAPH. Expected answers are worked out by hand from the data below.

use crate::support;

const DATA: &str = r#"
<http://a> <http://v> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://b> <http://v> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://c> <http://w> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://a> <http://knows> <http://b> .
"#;

/// The values of the first column, sorted.
fn first_column(query: &str) -> Vec<String> {
    let store = support::load(DATA);
    let (_, rows) = support::select(&store, query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let mut values: Vec<String> = rows
        .into_iter()
        .map(|row| row[0].clone().unwrap_or_default())
        .collect();
    values.sort();
    values
}

#[test]
fn filters_inside_exists_see_the_outer_row() {
    // Only a's value (5) exceeds c's w (3).
    let q = "SELECT ?s { ?s <http://v> ?x FILTER EXISTS { ?c <http://w> ?z FILTER(?z < ?x) } }";
    assert_eq!(first_column(q), ["<http://a>"]);
    let q = "SELECT ?s { ?s <http://v> ?x \
             FILTER EXISTS { { ?c <http://w> ?z } UNION { ?c <http://v> ?z } FILTER(?z < ?x) } }";
    assert_eq!(first_column(q), ["<http://a>"]);
    // b (1) has a larger v (a's 5); a has none.
    let q = "SELECT ?s { ?s <http://v> ?x FILTER NOT EXISTS { ?c <http://v> ?z FILTER(?z > ?x) } }";
    assert_eq!(first_column(q), ["<http://a>"]);
}

#[test]
fn exists_over_a_pattern_runs_for_the_whole_table() {
    let q = "SELECT ?s { ?s <http://v> ?x FILTER EXISTS { ?s <http://knows> ?o } }";
    assert_eq!(first_column(q), ["<http://a>"]);
    let q = "SELECT ?s { ?s <http://v> ?x FILTER NOT EXISTS { ?s <http://knows> ?o } }";
    assert_eq!(first_column(q), ["<http://b>"]);
    // The same shape the other way (decided by the length of each row's list, as above).
    let q = "SELECT ?o { ?o <http://v> ?x FILTER EXISTS { ?k <http://knows> ?o } }";
    assert_eq!(first_column(q), ["<http://b>"]);
    let q = "SELECT ?o { ?o <http://v> ?x FILTER NOT EXISTS { ?k <http://knows> ?o } }";
    assert_eq!(first_column(q), ["<http://a>"]);
    // Both ends the row's vertex: a loop, which nobody has.
    let q = "SELECT ?s { ?s <http://v> ?x FILTER EXISTS { ?s <http://knows> ?s } }";
    assert!(first_column(q).is_empty());
    // A pattern sharing no variable: the same answer for every row.
    let q = "SELECT ?s { ?s <http://v> ?x FILTER EXISTS { ?c <http://w> ?z } }";
    assert_eq!(first_column(q), ["<http://a>", "<http://b>"]);
    let q = "SELECT ?s { ?s <http://v> ?x FILTER NOT EXISTS { ?c <http://nothing> ?z } }";
    assert_eq!(first_column(q), ["<http://a>", "<http://b>"]);
    // A variable bound in only some rows falls back to row by row: for a, ?o = b has no
    // w; for b, ?o is unbound and c has a w.
    let q = "SELECT ?s { ?s <http://v> ?x OPTIONAL { ?s <http://knows> ?o } \
             FILTER NOT EXISTS { ?o <http://w> ?y } }";
    assert_eq!(first_column(q), ["<http://a>"]);
}

#[test]
fn exists_compiled_at_prepare_time_runs_in_every_clone_and_every_node() {
    use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
    let store = support::load(DATA);
    // EXISTS nested in EXISTS, in a BIND, an aggregate and an ORDER BY key.
    let query = "SELECT ?s (COUNT(?k) AS ?n) (SUM(IF(EXISTS { ?s <http://knows> ?o }, 1, 0)) AS ?e) \
                 { ?s <http://v> ?x \
                   BIND(IF(EXISTS { ?s <http://knows> ?k0 FILTER EXISTS { ?k0 <http://v> ?y } }, ?s, ?nothing) AS ?k) } \
                 GROUP BY ?s ORDER BY EXISTS { ?s <http://knows> ?o } ?s";
    let prepared = prepare(&store, query, &PrepareOptions::default()).unwrap();
    let clone = prepared.clone();
    drop(prepared);
    for _ in 0..2 {
        let QueryResults::Solutions(solutions) =
            clone.execute(&store, &ExecOptions::default()).unwrap()
        else {
            panic!("not solutions");
        };
        let rows: Vec<Vec<String>> = (0..solutions.len())
            .map(|row| {
                solutions
                    .row(row)
                    .iter()
                    .map(|t| t.as_ref().map_or(String::new(), ToString::to_string))
                    .collect()
            })
            .collect();
        let int = |n: u8| format!("\"{n}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
        // a knows b, which has a v: counted once each; b knows no one, so it sorts first
        // (false before true), against the order of the names.
        assert_eq!(
            rows,
            [
                vec!["<http://b>".to_owned(), int(0), int(0)],
                vec!["<http://a>".to_owned(), int(1), int(1)],
            ]
        );
    }
}
