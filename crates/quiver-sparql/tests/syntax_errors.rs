//! Syntax errors in words: for each broken query of a table, the message names the line
//! and column, what was found there and what was expected in SPARQL's terms, or the
//! likely mistake; and never the parser's own vocabulary (`[_]`, rule names of RDF 1.2).

use crate::support;

use quiver_sparql::{prepare, PrepareOptions};

/// (query, what the message must say, in order).
const BROKEN: &[(&str, &[&str])] = &[
    (
        "# only a comment",
        &["error at 1:17", "the query is empty", "expected SELECT, CONSTRUCT, ASK or DESCRIBE"],
    ),
    (
        "PREFIX ex: <http://ex/>\n# nothing else",
        &["the query is empty"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o FILTER(ENCODEFORURI(?o)) }",
        &["error at 1:34", "unknown word 'ENCODEFORURI'", "did you mean ENCODE_FOR_URI?"],
    ),
    (
        "SELEC * WHERE { ?s ?p ?o }",
        &["error at 1:1", "unknown word 'SELEC'", "did you mean SELECT?"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o } ORDR BY ?s",
        &["unknown word 'ORDR'", "did you mean ORDER?"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o . FILTER(?o > 1) } LIMT 5",
        &["unknown word 'LIMT'", "did you mean LIMIT?"],
    ),
    (
        "SELECT * WHERE {\n  ?s ?p ?o\n",
        &["error at 3:1", "found the end of the query", "expected", "'}'"],
    ),
    (
        // As the query page's editor leaves it: indented, the brace not yet closed.
        "SELECT ?x WHERE {\n    ?x ?p \n      ",
        &[
            "error at 3:7",
            "found the end of the query",
            "expected a variable, an IRI or a literal",
            "a '{' or '(' is never closed",
        ],
    ),
    (
        "SELECT * WHERE { ?s ?p }",
        &["error at 1:", "found", "expected", "a variable, an IRI or a literal"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o FILTER(?o > ) }",
        &["error at 1:", "expected", "an expression"],
    ),
    (
        "SELECT * WHERE {\n  ?s ?p \"abc }",
        &["error at 2:", "the string opened at 2:9 is never closed"],
    ),
    (
        "ASK { ?s <http://a> ?o } LIMIT x",
        &["error at 1:32", "found 'x'", "a number"],
    ),
    (
        "SELECT * WHERE { ?s ex:p ?o }",
        &[
            "error at 1:21",
            "undeclared prefix 'ex:'",
            "PREFIX ex: <…>",
            "the query declares none",
        ],
    ),
    (
        "PREFIX ub: <http://ub/> PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nSELECT * WHERE { ?s ex:p ?o }",
        &["error at 2:21", "undeclared prefix 'ex:'", "the query declares ub: rdf:"],
    ),
    (
        "SELECT (1 AS ?s) WHERE { ?s ?p ?o }",
        &["a SELECT expression (… AS ?v) names a variable the WHERE clause already binds"],
    ),
    (
        "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s ?p ?o }",
        &["neither grouped nor aggregated", "GROUP BY", "SAMPLE"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o . BIND(1 AS ?o) }",
        &["error at 1:44", "no BIND or SELECT expression (… AS ?v) names a variable bound before it"],
    ),
    (
        "SELECT * WHERE { ?s ?p ?o } GROUP BY ?s",
        &["SELECT * cannot be used with GROUP BY"],
    ),
];

fn message(store: &quiver_store::Store, query: &str) -> String {
    match prepare(store, query, &PrepareOptions::default()) {
        Ok(_) => panic!("{query:?} was accepted"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn broken_queries_are_explained_in_words() {
    let store = support::load("<http://ex/a> <http://ex/p> <http://ex/b> .\n");
    for (query, expected) in BROKEN {
        let message = message(&store, query);
        let mut rest = message.as_str();
        for part in *expected {
            let at = rest
                .find(part)
                .unwrap_or_else(|| panic!("{query:?}: {message:?} lacks {part:?} (in order)"));
            rest = &rest[at + part.len()..];
        }
        for jargon in ["[_]", "LATERAL", "\"{|\"", "\"~\""] {
            assert!(
                !message.contains(jargon),
                "{query:?}: {message:?} speaks the parser's jargon"
            );
        }
        assert!(
            !message.contains('\n'),
            "{query:?}: {message:?} spans lines"
        );
    }
}
