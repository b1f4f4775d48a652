//! `SELECT *` lists its variables in their order of appearance in the query (as Jena does;
//! spargebra, and so Oxigraph, sort them by name). The expected orders below are read off
//! the query text by hand; Oxigraph checks that the set of variables and the rows are the
//! same whatever the order.

use crate::support;

use oxrdf::{GraphNameRef, Term};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};

const DATA: &str = r#"<http://x/a> <http://x/p> <http://x/b> .
<http://x/b> <http://x/p> <http://x/c> .
<http://x/b> <http://x/name> "bee"@en .
<http://x/c> <http://x/q> "7"^^<http://www.w3.org/2001/XMLSchema#integer> .
"#;

/// (query, variables in their order of appearance).
const CASES: &[(&str, &[&str])] = &[
    ("SELECT * { ?s ?p ?o }", &["s", "p", "o"]),
    ("SELECT * WHERE { ?z <http://x/p> ?a }", &["z", "a"]),
    (
        "SELECT DISTINCT * { ?s <http://x/p> ?m . ?m <http://x/p> ?e }",
        &["s", "m", "e"],
    ),
    (
        "PREFIX x: <http://x/>\n# a comment\nSELECT * { ?y x:p ?b OPTIONAL { ?b x:name ?a } }",
        &["y", "b", "a"],
    ),
    (
        "SELECT * { ?w ?k ?v BIND(STR(?v) AS ?a) } ORDER BY ?w LIMIT 10",
        &["w", "k", "v", "a"],
    ),
    (
        "SELECT * { { ?t <http://x/q> ?n } UNION { ?t <http://x/name> ?l } }",
        &["t", "n", "l"],
    ),
    ("SELECT * { GRAPH ?g { ?s ?p ?o } }", &["g", "s", "p", "o"]),
    (
        "SELECT * { { SELECT ?y ?x { ?x <http://x/p> ?y } } ?y <http://x/p> ?c }",
        &["y", "x", "c"],
    ),
    (
        "SELECT * { ?s <http://x/p>+ ?e VALUES ?d { 1 2 } }",
        &["s", "e", "d"],
    ),
    // An explicit projection keeps the order written, sorted or not.
    ("SELECT ?o ?p ?s { ?s ?p ?o }", &["o", "p", "s"]),
    ("SELECT ?p ?s { ?s ?p ?o }", &["p", "s"]),
];

fn oxigraph_store() -> oxigraph::store::Store {
    let store = oxigraph::store::Store::new().unwrap();
    for triple in
        oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::NTriples).for_slice(DATA.as_bytes())
    {
        let triple = triple.unwrap();
        store
            .insert(oxrdf::QuadRef::new(
                &triple.subject,
                &triple.predicate,
                &triple.object,
                GraphNameRef::DefaultGraph,
            ))
            .unwrap();
    }
    store
}

#[test]
fn select_star_lists_variables_in_order_of_appearance() {
    let store = support::load(DATA);
    let oxigraph = oxigraph_store();
    for (query, expected) in CASES {
        let prepared = prepare(&store, query, &PrepareOptions::default()).unwrap();
        let QueryResults::Solutions(solutions) =
            prepared.execute(&store, &ExecOptions::default()).unwrap()
        else {
            panic!("{query}: not solutions");
        };
        let names: Vec<&str> = solutions.variables.iter().map(|v| v.as_str()).collect();
        assert_eq!(&names, expected, "{query}");

        let oxigraph::sparql::QueryResults::Solutions(theirs) =
            oxigraph::sparql::SparqlEvaluator::new()
                .parse_query(query)
                .unwrap()
                .on_store(&oxigraph)
                .execute()
                .unwrap()
        else {
            panic!("{query}: Oxigraph gives no solutions");
        };
        let mut their_names: Vec<String> = theirs
            .variables()
            .iter()
            .map(|v| v.as_str().to_owned())
            .collect();
        let mut our_names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        their_names.sort();
        our_names.sort();
        assert_eq!(our_names, their_names, "{query}: the same variables");
        // The same rows, each read by variable name.
        let mut their_rows: Vec<Vec<Option<Term>>> = theirs
            .map(|s| {
                let s = s.unwrap();
                names.iter().map(|n| s.get(*n).cloned()).collect()
            })
            .collect();
        let mut our_rows: Vec<Vec<Option<Term>>> =
            (0..solutions.len()).map(|r| solutions.row(r)).collect();
        let key = |row: &Vec<Option<Term>>| format!("{row:?}");
        their_rows.sort_by_key(key);
        our_rows.sort_by_key(key);
        assert_eq!(our_rows, their_rows, "{query}");
    }
}
