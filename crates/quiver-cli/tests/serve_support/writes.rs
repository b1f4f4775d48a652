//! Shared by the tests of `quiver serve --writable`: a small seed store per test, requests
//! of any method, and RDF answers read as canonical graphs (blank nodes up to isomorphism,
//! through oxrdf's canonicalization), to compare with graphs parsed from the test's own
//! text.

use std::path::PathBuf;

use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::{Dataset, Graph};
use oxrdfio::{RdfFormat, RdfParser};

use super::{encode, request, small_store, Reply, Server};

pub const SEED: &str = "<http://e/alice> <http://e/knows> <http://e/bob> .\n\
                    <http://e/bob> <http://e/name> \"Bob\" .\n";
pub const TURTLE: &str = "text/turtle; charset=utf-8";
pub const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
pub const UPDATE: (&str, &str) = ("Content-Type", "application/sparql-update");

pub fn store(tag: &str) -> PathBuf {
    small_store(tag, SEED)
}

pub fn writable(tag: &str) -> Server {
    Server::start(&store(tag), &["--writable"])
}

pub fn call(
    server: &Server,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    request(&server.address, method, path, headers, body)
}

pub fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
}

/// `text` in `format` as a canonical dataset.
pub fn dataset(text: &[u8], format: RdfFormat) -> Dataset {
    let mut dataset: Dataset = RdfParser::from_format(format)
        .for_slice(text)
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not {format}: {e}\n{}", String::from_utf8_lossy(text)));
    dataset.canonicalize(CanonicalizationAlgorithm::Unstable);
    dataset
}

/// `text` in `format` as a canonical graph.
pub fn graph(text: &[u8], format: RdfFormat) -> Graph {
    let mut graph = Graph::new();
    for quad in RdfParser::from_format(format).for_slice(text) {
        let quad = quad.unwrap_or_else(|e| panic!("not {format}: {e}"));
        graph.insert(&oxrdf::Triple::new(
            quad.subject,
            quad.predicate,
            quad.object,
        ));
    }
    graph.canonicalize(CanonicalizationAlgorithm::Unstable);
    graph
}

pub fn turtle(text: &str) -> Graph {
    graph(text.as_bytes(), RdfFormat::Turtle)
}

/// GET of a graph in Turtle: 200 and its content.
pub fn get_graph(server: &Server, target: &str) -> Graph {
    let reply = server.get(&format!("/store?{target}"), &[("Accept", "text/turtle")]);
    assert_status(&reply, 200);
    assert_eq!(reply.header("content-type"), Some(TURTLE));
    graph(&reply.body, RdfFormat::Turtle)
}

pub fn ask(server: &Server, query: &str) -> bool {
    let reply = server.query(query, "application/sparql-results+json");
    assert_status(&reply, 200);
    reply.json()["boolean"].as_bool().expect("an ASK answer")
}

pub fn graph_param(iri: &str) -> String {
    format!("graph={}", encode(iri))
}
