//! The SPARQL 1.1 Service Description of an endpoint: what a `GET` on `/query` (or
//! `/sparql`, or a dataset's) without a `query` or `update` parameter answers, as the
//! Service Description recommendation asks, in Turtle (by default), N-Triples, RDF/XML or
//! JSON-LD by content negotiation.
//!
//! It says where the endpoint is (`sd:endpoint`, the URL the client used), the languages it
//! takes (SPARQL 1.0 and 1.1 Query, and 1.1 Update when the dataset is writable), the
//! result formats it writes, its features (`sd:EmptyGraphs`: the Graph Store Protocol keeps
//! a graph emptied of its triples; `sd:BasicFederatedQuery`: SERVICE, whose calls the server
//! makes only to the hosts `--allow-service` admits), the entailment regime (simple: what is written), and
//! its default dataset: the default graph and each named graph with its size
//! (`void:triples`), the first [`MAX_NAMED_GRAPHS`] of them by name.

use std::sync::Arc;

use axum::http::{header, HeaderMap, Uri};
use axum::response::Response;
use oxrdf::vocab::rdf;
use oxrdf::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use oxrdfio::{RdfFormat, RdfSerializer};

use crate::error::ApiError;
use crate::rdf_io::{self, GRAPH_OFFERS};
use crate::state::{request_url, AppState};

const SD: &str = "http://www.w3.org/ns/sparql-service-description#";
const FORMATS: &str = "http://www.w3.org/ns/formats/";
const VOID_TRIPLES: &str = "http://rdfs.org/ns/void#triples";
const SIMPLE_ENTAILMENT: &str = "http://www.w3.org/ns/entailment/Simple";

/// Named graphs described at most (a store may hold millions).
pub const MAX_NAMED_GRAPHS: usize = 1_000;

/// The result formats the endpoint writes (their `http://www.w3.org/ns/formats/` names).
const RESULT_FORMATS: &[&str] = &[
    "SPARQL_Results_JSON",
    "SPARQL_Results_XML",
    "SPARQL_Results_CSV",
    "SPARQL_Results_TSV",
    "Turtle",
    "N-Triples",
    "RDF_XML",
];

/// Whether a GET's parameters ask for the service description: no `query`, no `update`.
pub fn is_requested(url_query: Option<&str>) -> bool {
    !form_urlencoded::parse(url_query.unwrap_or("").as_bytes())
        .any(|(key, _)| key == "query" || key == "update")
}

/// The service description of `state`'s dataset, for the request to `uri`.
pub fn respond(state: &Arc<AppState>, headers: &HeaderMap, uri: &Uri) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    // Quads make no sense for one graph: Turtle, N-Triples, RDF/XML or JSON-LD.
    let offers: Vec<_> = GRAPH_OFFERS
        .iter()
        .copied()
        .filter(|(_, format)| *format != RdfFormat::NQuads)
        .collect();
    let format = match rdf_io::negotiate(accept, &offers) {
        Ok(format) => format,
        Err(error) => return state.refuse(error),
    };
    let triples = describe(state, &endpoint_url(headers, uri));
    match serialize(&triples, format) {
        Ok(body) => crate::graph_store::graph_response(body.into(), format),
        Err(error) => state.refuse(ApiError::new(
            axum::http::StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot write the service description: {error}"),
        )),
    }
}

/// `triples` in `format`, with the description's prefixes.
fn serialize(triples: &[Triple], format: RdfFormat) -> std::io::Result<Vec<u8>> {
    let mut writer = RdfSerializer::from_format(format)
        .with_prefix("sd", SD)
        .and_then(|s| s.with_prefix("void", "http://rdfs.org/ns/void#"))
        .and_then(|s| s.with_prefix("formats", FORMATS))
        .map_err(std::io::Error::other)?
        .for_writer(Vec::new());
    for triple in triples {
        writer.serialize_triple(triple)?;
    }
    writer.finish()
}

/// The endpoint's URL: the request's, without its query string.
fn endpoint_url(headers: &HeaderMap, uri: &Uri) -> String {
    let url = request_url(headers, uri);
    match url.split_once('?') {
        Some((endpoint, _)) => endpoint.to_owned(),
        None => url,
    }
}

fn sd(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{SD}{local}"))
}

/// The description's triples, the service's first.
pub fn describe(state: &AppState, endpoint: &str) -> Vec<Triple> {
    let mut graph = Vec::new();
    let mut add = |subject: &NamedOrBlankNode, predicate: NamedNode, object: Term| {
        graph.push(Triple::new(subject.clone(), predicate, object));
    };
    let service: NamedOrBlankNode = BlankNode::new_unchecked("service").into();
    add(&service, rdf::TYPE.into_owned(), sd("Service").into());
    if let Ok(endpoint) = NamedNode::new(endpoint) {
        add(&service, sd("endpoint"), endpoint.into());
    }
    let mut languages = vec!["SPARQL10Query", "SPARQL11Query"];
    if state.access.writable {
        languages.push("SPARQL11Update");
    }
    for language in languages {
        add(&service, sd("supportedLanguage"), sd(language).into());
    }
    for format in RESULT_FORMATS {
        let format = NamedNode::new_unchecked(format!("{FORMATS}{format}"));
        add(&service, sd("resultFormat"), format.into());
    }
    add(&service, sd("feature"), sd("EmptyGraphs").into());
    add(&service, sd("feature"), sd("BasicFederatedQuery").into());
    add(
        &service,
        sd("defaultEntailmentRegime"),
        NamedNode::new_unchecked(SIMPLE_ENTAILMENT).into(),
    );
    let store = state.snapshot();
    let dataset: NamedOrBlankNode = BlankNode::new_unchecked("dataset").into();
    add(&service, sd("defaultDataset"), dataset.clone().into());
    add(&dataset, rdf::TYPE.into_owned(), sd("Dataset").into());
    let triples = |count: u64| Term::from(Literal::from(count as i64));
    let void_triples = NamedNode::new_unchecked(VOID_TRIPLES);
    let default: NamedOrBlankNode = BlankNode::new_unchecked("defaultGraph").into();
    add(&dataset, sd("defaultGraph"), default.clone().into());
    add(&default, rdf::TYPE.into_owned(), sd("Graph").into());
    add(
        &default,
        void_triples.clone(),
        triples(store.graph().triples()),
    );
    let mut names: Vec<(String, u64)> = store
        .graph_names()
        .filter_map(|id| {
            let name = match store.term(id)? {
                Term::NamedNode(node) => node.into_string(),
                _ => return None,
            };
            Some((name, store.named_graph(id).map_or(0, |g| g.triples())))
        })
        .collect();
    names.sort();
    for (i, (name, count)) in names.into_iter().take(MAX_NAMED_GRAPHS).enumerate() {
        let named: NamedOrBlankNode = BlankNode::new_unchecked(format!("named{i}")).into();
        let graph_node: NamedOrBlankNode = BlankNode::new_unchecked(format!("graph{i}")).into();
        add(&dataset, sd("namedGraph"), named.clone().into());
        add(&named, rdf::TYPE.into_owned(), sd("NamedGraph").into());
        add(&named, sd("name"), NamedNode::new_unchecked(name).into());
        add(&named, sd("graph"), graph_node.clone().into());
        add(&graph_node, rdf::TYPE.into_owned(), sd("Graph").into());
        add(&graph_node, void_triples.clone(), triples(count));
    }
    graph
}
