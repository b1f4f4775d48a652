//! Datasets: `GRAPH ?g`, `GRAPH <g>`, `FROM` (one graph and a merge), `FROM NAMED`, the
//! dataset given by the caller instead of the query's, EXISTS on the active graph, and
//! DESCRIBE. Expected answers are
//! worked out by hand from the quads below.

use std::collections::BTreeSet;

use oxrdf::NamedNode;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;
use spargebra::algebra::QueryDataset;

use crate::support;

const QUADS: &str = r#"
<http://a> <http://p> "d" .
<http://a> <http://p> "g1" <http://g1> .
<http://c> <http://p> "g1c" <http://g1> .
<http://b> <http://p> "g2" <http://g2> .
<http://b> <http://q> _:x <http://g2> .
_:x <http://r> "inner" <http://g2> .
<http://b> <http://s> <http://a> <http://g1> .
<http://a> <http://q> _:y .
_:y <http://r> "deep" .
_:y <http://r> _:z .
_:z <http://r> "deeper" .
"#;

fn store() -> Store {
    support::load_as(QUADS, "nq")
}

/// Rows as tab-separated N-Triples terms (unbound = empty), as a set.
fn select(store: &Store, query: &str, options: &PrepareOptions) -> BTreeSet<String> {
    let prepared = prepare(store, query, options).unwrap_or_else(|e| panic!("{query}: {e}"));
    let QueryResults::Solutions(solutions) =
        prepared.execute(store, &ExecOptions::default()).unwrap()
    else {
        panic!("{query}: not solutions");
    };
    (0..solutions.len())
        .map(|row| {
            solutions
                .row(row)
                .iter()
                .map(|t| t.as_ref().map_or(String::new(), ToString::to_string))
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect()
}

fn rows(rows: &[&str]) -> BTreeSet<String> {
    rows.iter().map(|r| r.to_string()).collect()
}

#[test]
fn graph_variable_visits_every_named_graph() {
    let store = store();
    let q = "SELECT ?g ?s ?o { GRAPH ?g { ?s <http://p> ?o } }";
    assert_eq!(
        select(&store, q, &PrepareOptions::default()),
        rows(&[
            "<http://g1>\t<http://a>\t\"g1\"",
            "<http://g1>\t<http://c>\t\"g1c\"",
            "<http://g2>\t<http://b>\t\"g2\"",
        ])
    );
    // A graph variable bound inside the pattern must agree with the graph's name.
    let q = "SELECT ?g { GRAPH ?g { ?s ?p ?g } }";
    assert!(select(&store, q, &PrepareOptions::default()).is_empty());
    // Joined with the default graph.
    let q =
        "SELECT ?g ?o { ?a <http://p> \"d\" . GRAPH ?g { ?x <http://s> ?a . ?a <http://p> ?o } }";
    assert_eq!(
        select(&store, q, &PrepareOptions::default()),
        rows(&["<http://g1>\t\"g1\""])
    );
}

#[test]
fn from_and_from_named_define_the_dataset() {
    let store = store();
    let none = PrepareOptions::default();
    assert_eq!(
        select(
            &store,
            "SELECT ?o FROM <http://g1> { ?s <http://p> ?o }",
            &none
        ),
        rows(&["\"g1\"", "\"g1c\""])
    );
    // The merge of two graphs joins across them.
    let q = "SELECT ?o FROM <http://g1> FROM <http://g2> { ?b <http://s> ?a . ?b <http://p> ?o }";
    assert_eq!(select(&store, q, &none), rows(&["\"g2\""]));
    // FROM NAMED alone: an empty default graph, GRAPH limited to the graphs named.
    let q = "SELECT ?g ?o FROM NAMED <http://g2> { { GRAPH ?g { ?s <http://p> ?o } } UNION { ?s <http://p> ?o } }";
    assert_eq!(select(&store, q, &none), rows(&["<http://g2>\t\"g2\""]));
    let q = "SELECT * FROM NAMED <http://g2> { GRAPH <http://g1> { ?s ?p ?o } }";
    assert!(select(&store, q, &none).is_empty());
    // A graph the store lacks is empty.
    assert!(select(&store, "SELECT * FROM <http://nope> { ?s ?p ?o }", &none).is_empty());
}

#[test]
fn a_dataset_given_by_the_caller_replaces_the_query_one() {
    let store = store();
    let options = PrepareOptions {
        dataset: Some(QueryDataset {
            default: vec![NamedNode::new_unchecked("http://g2")],
            named: Some(vec![]),
        }),
        ..PrepareOptions::default()
    };
    let q = "SELECT ?o FROM <http://g1> { ?s <http://p> ?o }";
    assert_eq!(select(&store, q, &options), rows(&["\"g2\""]));
}

#[test]
fn exists_reads_the_graph_of_the_node_that_holds_it() {
    let store = store();
    let options = PrepareOptions::default();
    // Only graph g1 has an `<http://s>` edge (b s a): EXISTS inside `GRAPH <g1>` finds it
    // for a, in a BIND, an OPTIONAL's filter and a FILTER alike; the default graph has none.
    let boolean = |value: &str| format!("\"{value}\"^^<http://www.w3.org/2001/XMLSchema#boolean>");
    let q = "SELECT ?s ?e { GRAPH <http://g1> { ?s <http://p> ?o \
             BIND(EXISTS { ?x <http://s> ?s } AS ?e) } }";
    assert_eq!(
        select(&store, q, &options),
        rows(&[
            &format!("<http://a>\t{}", boolean("true")),
            &format!("<http://c>\t{}", boolean("false")),
        ])
    );
    let q = "SELECT ?s ?o { GRAPH <http://g1> { ?s <http://p> ?v \
             OPTIONAL { ?s <http://p> ?o FILTER EXISTS { ?x <http://s> ?s } } } }";
    assert_eq!(
        select(&store, q, &options),
        rows(&["<http://a>\t\"g1\"", "<http://c>\t"])
    );
    let q =
        "SELECT ?s { GRAPH <http://g1> { ?s <http://p> ?v FILTER EXISTS { ?x <http://s> ?s } } }";
    assert_eq!(select(&store, q, &options), rows(&["<http://a>"]));
    let q = "SELECT ?s { ?s <http://p> ?v FILTER EXISTS { ?x <http://s> ?s } }";
    assert!(select(&store, q, &options).is_empty());
}

#[test]
fn describe_returns_the_concise_bounded_description() {
    let store = store();
    let describe = |query: &str| -> BTreeSet<String> {
        let prepared = prepare(&store, query, &PrepareOptions::default()).unwrap();
        let QueryResults::Graph(triples) =
            prepared.execute(&store, &ExecOptions::default()).unwrap()
        else {
            panic!("not a graph");
        };
        // Blank node labels are the loader's: compare with them replaced by their object.
        triples
            .iter()
            .map(|t| {
                let subject = if t.subject.to_string().starts_with("_:") {
                    "_"
                } else {
                    ""
                };
                let object = if t.object.to_string().starts_with("_:") {
                    "_".to_owned()
                } else {
                    t.object.to_string()
                };
                if subject.is_empty() {
                    format!("{} {} {object}", t.subject, t.predicate)
                } else {
                    format!("_ {} {object}", t.predicate)
                }
            })
            .collect()
    };
    assert_eq!(
        describe("DESCRIBE <http://a>"),
        rows(&[
            "<http://a> <http://p> \"d\"",
            "<http://a> <http://q> _",
            "_ <http://r> \"deep\"",
            "_ <http://r> _",
            "_ <http://r> \"deeper\"",
        ])
    );
    assert_eq!(
        describe("DESCRIBE ?s FROM <http://g2> WHERE { ?s <http://p> ?o }"),
        rows(&[
            "<http://b> <http://p> \"g2\"",
            "<http://b> <http://q> _",
            "_ <http://r> \"inner\""
        ])
    );
    assert!(describe("DESCRIBE <http://unknown>").is_empty());
}
