//! `GRAPH ?g { … }` visits only the graphs that hold the pattern's constants
//! (`compile/graph_candidates.rs`): its answers must stay Oxigraph's, for constants in
//! every position, constants found in some graphs, in the default graph only or nowhere,
//! joins, and patterns that are not basic graph patterns.

use crate::support;

/// 40 named graphs of people, each knowing a few others and naming one city; the default
/// graph holds one triple of its own.
fn nquads() -> String {
    let mut text = String::from("<http://ex/only-default> <http://ex/p> \"d\" .\n");
    for g in 0..40 {
        let graph = format!("<http://ex/g{g}>");
        for i in 0..(1 + g % 4) {
            let person = format!("<http://ex/person{}>", (g * 7 + i) % 25);
            let friend = format!("<http://ex/person{}>", (g * 3 + i * 5) % 25);
            text += &format!("{person} <http://ex/knows> {friend} {graph} .\n");
            text += &format!("{person} <http://ex/city> \"city {}\" {graph} .\n", g % 6);
        }
        if g % 5 == 0 {
            let number = format!("\"{g}\"^^<http://www.w3.org/2001/XMLSchema#integer>");
            text += &format!("<http://ex/g{g}> <http://ex/rare> {number} {graph} .\n");
        }
    }
    text
}

#[test]
fn graph_variables_with_constants_answer_as_oxigraph() {
    let text = nquads();
    let quiver = support::load_as(&text, "nq");
    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_slice(oxigraph::io::RdfFormat::NQuads, text.as_bytes())
        .unwrap();
    let queries = [
        "SELECT ?g ?o { GRAPH ?g { <http://ex/person3> <http://ex/knows> ?o } }",
        "SELECT ?g ?p ?o { GRAPH ?g { <http://ex/person3> ?p ?o } }",
        "SELECT ?g ?s { GRAPH ?g { ?s <http://ex/knows> <http://ex/person5> } }",
        "SELECT ?g ?s ?p { GRAPH ?g { ?s ?p \"city 2\" } }",
        "SELECT ?g ?s ?o { GRAPH ?g { ?s <http://ex/rare> ?o } }",
        "SELECT ?g { GRAPH ?g { ?g <http://ex/rare> ?o } }",
        "SELECT ?g ?s { GRAPH ?g { ?s <http://ex/knows> ?f . ?f <http://ex/city> \"city 1\" } }",
        "SELECT ?g { GRAPH ?g { <http://ex/person3> <http://ex/knows> ?f . ?f ?p <http://ex/person9> } }",
        "SELECT ?g ?o { GRAPH ?g { <http://ex/only-default> ?p ?o } }",
        "SELECT ?g ?o { GRAPH ?g { <http://ex/nowhere> ?p ?o } }",
        "SELECT ?g ?o { GRAPH ?g { ?s <http://ex/nowhere> ?o } }",
        "SELECT ?g { GRAPH ?g { } }",
        "SELECT ?g ?o { GRAPH ?g { ?s <http://ex/city> ?c OPTIONAL { <http://ex/person1> <http://ex/knows> ?o } } }",
        "SELECT ?g ?c { GRAPH ?g { { <http://ex/person4> <http://ex/city> ?c } UNION { <http://ex/person20> <http://ex/city> ?c } } }",
        "SELECT ?g ?s { ?x <http://ex/p> \"d\" . GRAPH ?g { ?s <http://ex/knows> <http://ex/person0> } }",
    ];
    let mut answered = 0;
    for query in queries {
        let (vars, mut rows) = support::select(&quiver, query).unwrap();
        let mut expected = support::oxigraph_rows(&oxigraph, query, &vars);
        rows.sort();
        expected.sort();
        assert_eq!(rows, expected, "{query}");
        answered += usize::from(!rows.is_empty());
    }
    assert!(answered >= 10, "only {answered} queries had rows");
}
