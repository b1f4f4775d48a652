//! The W3C SPARQL 1.1 test suite's HTTP tests against a real `quiver serve --writable`:
//! the Graph Store Protocol tests with indirect graph identification
//! (`graph-store-protocol/manifest-indirect.ttl`) and the update cases of the protocol
//! tests (`protocol/manifest.ttl`, entries named `update_*` and `bad_*update*`).
//!
//! Each entry is a sequence of HTTP requests described in RDF (method, path, headers,
//! body, and the expected statuses, response headers, and body or ASK answer); it runs on
//! a fresh server over a fresh store. The manifests' `/gsp` becomes Quiver's `/store` and
//! `/sparql/` its `/sparql`. Expected graphs are compared up to blank node isomorphism.
//!
//! Entries that exercise an optional feature Quiver does not offer would be listed in
//! [`UNSUPPORTED`] with the reason: the runner checks that those entries exist and runs
//! every other one. A response's `Location` becomes the `$LOCATION$` of later requests.

use crate::serve_support;

use std::path::{Path, PathBuf};

use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::{Graph, NamedNodeRef, NamedOrBlankNode, Term, TermRef};
use oxrdfio::{RdfFormat, RdfParser};
use serve_support::{request, small_store, Reply, Server};

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";
const HT: &str = "http://www.w3.org/2011/http#";
const HTS: &str = "http://www.w3.org/2011/http-statusCodes#";
const CNT: &str = "http://www.w3.org/2011/content#";
const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";

/// Graph Store entries left out, and why (none: the optional graph creation by POST to
/// the store itself is supported).
const UNSUPPORTED: &[(&str, &str)] = &[];

fn shared() -> PathBuf {
    std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

struct Manifest {
    graph: Graph,
}

impl Manifest {
    fn load(path: &Path) -> Self {
        let text = std::fs::read(path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the W3C test suite is read from ../shared beside the checkout; \
                 set QUIVER_SHARED)",
                path.display()
            )
        });
        let base = format!("file://{}", path.display());
        let mut graph = Graph::new();
        for quad in RdfParser::from_format(RdfFormat::Turtle)
            .with_base_iri(base)
            .unwrap()
            .for_slice(&text)
        {
            let quad = quad.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            graph.insert(&oxrdf::Triple::new(
                quad.subject,
                quad.predicate,
                quad.object,
            ));
        }
        Self { graph }
    }

    fn subject(term: &Term) -> NamedOrBlankNode {
        match term {
            Term::NamedNode(n) => n.clone().into(),
            Term::BlankNode(b) => b.clone().into(),
            other => panic!("{other} is not a resource"),
        }
    }

    fn objects(&self, subject: &Term, predicate: &str) -> Vec<Term> {
        let subject = Self::subject(subject);
        self.graph
            .objects_for_subject_predicate(&subject, NamedNodeRef::new_unchecked(predicate))
            .map(TermRef::into_owned)
            .collect()
    }

    fn object(&self, subject: &Term, predicate: &str) -> Option<Term> {
        self.objects(subject, predicate).into_iter().next()
    }

    fn text(&self, subject: &Term, predicate: &str) -> Option<String> {
        match self.object(subject, predicate)? {
            Term::Literal(literal) => Some(literal.value().to_owned()),
            other => panic!("{predicate} of {subject}: {other} is not a literal"),
        }
    }

    fn list(&self, head: &Term) -> Vec<Term> {
        let mut items = Vec::new();
        let mut node = head.clone();
        while node
            != Term::NamedNode(NamedNodeRef::new_unchecked(&format!("{RDF}nil")).into_owned())
        {
            items.push(
                self.object(&node, &format!("{RDF}first"))
                    .expect("rdf:first"),
            );
            node = self.object(&node, &format!("{RDF}rest")).expect("rdf:rest");
        }
        items
    }

    /// The entries, as (local name, node).
    fn entries(&self) -> Vec<(String, Term)> {
        let manifest = self
            .graph
            .subjects_for_predicate_object(
                NamedNodeRef::new_unchecked(&format!("{RDF}type")),
                NamedNodeRef::new_unchecked(&format!("{MF}Manifest")),
            )
            .next()
            .expect("an mf:Manifest");
        let manifest: Term = match manifest {
            oxrdf::NamedOrBlankNodeRef::NamedNode(n) => n.into_owned().into(),
            oxrdf::NamedOrBlankNodeRef::BlankNode(b) => b.into_owned().into(),
        };
        let head = self
            .object(&manifest, &format!("{MF}entries"))
            .expect("mf:entries");
        self.list(&head)
            .into_iter()
            .map(|entry| {
                let Term::NamedNode(iri) = &entry else {
                    panic!("entry {entry}")
                };
                let name = iri
                    .as_str()
                    .rsplit('#')
                    .next()
                    .unwrap_or_default()
                    .to_owned();
                (name, entry)
            })
            .collect()
    }
}

/// One request of an entry and what its response must be.
struct Step {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
    /// Accepted statuses: exact codes, or classes (`2` for 2xx).
    statuses: Vec<u16>,
    classes: Vec<u16>,
    response_headers: Vec<(String, String)>,
    response_body: Option<String>,
    boolean: Option<bool>,
    /// `mf:expectedLocation`: the response must carry a `Location` header, whose value
    /// replaces this template variable (`$LOCATION$`) in the later requests' paths.
    location: Option<String>,
}

fn status_code(local: &str) -> Result<u16, u16> {
    match local {
        "OK" => Ok(200),
        "Created" => Ok(201),
        "NoContent" => Ok(204),
        "NotFound" => Ok(404),
        "StatusCode2xx" => Err(2),
        "StatusCode3xx" => Err(3),
        "StatusCode4xx" => Err(4),
        other => panic!("unknown status {other}"),
    }
}

fn headers(manifest: &Manifest, node: &Term) -> Vec<(String, String)> {
    match manifest.object(node, &format!("{HT}headers")) {
        Some(list) => manifest
            .list(&list)
            .iter()
            .map(|h| {
                (
                    manifest
                        .text(h, &format!("{HT}fieldName"))
                        .expect("fieldName"),
                    manifest
                        .text(h, &format!("{HT}fieldValue"))
                        .expect("fieldValue"),
                )
            })
            .collect(),
        None => Vec::new(),
    }
}

fn steps(manifest: &Manifest, entry: &Term) -> Vec<Step> {
    let action = manifest
        .object(entry, &format!("{MF}action"))
        .expect("mf:action");
    let requests = manifest
        .object(&action, &format!("{HT}requests"))
        .expect("ht:requests");
    manifest
        .list(&requests)
        .iter()
        .map(|request| {
            let response = manifest
                .object(request, &format!("{HT}resp"))
                .expect("ht:resp");
            let mut statuses = Vec::new();
            let mut classes = Vec::new();
            for status in manifest.objects(&response, &format!("{MF}expectedStatus")) {
                let Term::NamedNode(iri) = status else {
                    panic!("status {status}")
                };
                match status_code(iri.as_str().strip_prefix(HTS).expect("an hts: status")) {
                    Ok(code) => statuses.push(code),
                    Err(class) => classes.push(class),
                }
            }
            let body = |node: &Term| {
                manifest
                    .object(node, &format!("{HT}body"))
                    .and_then(|b| manifest.text(&b, &format!("{CNT}chars")))
            };
            let path = manifest
                .text(request, &format!("{HT}absolutePath"))
                .expect("absolutePath");
            let path = if let Some(rest) = path.strip_prefix("/gsp") {
                format!("/store{rest}")
            } else if let Some(rest) = path.strip_prefix("/sparql/") {
                format!(
                    "/sparql{}",
                    if rest.is_empty() {
                        String::new()
                    } else {
                        format!("/{rest}")
                    }
                    .replace("/?", "?")
                )
            } else {
                path
            };
            Step {
                method: manifest
                    .text(request, &format!("{HT}methodName"))
                    .expect("methodName"),
                path,
                headers: headers(manifest, request),
                body: body(request).unwrap_or_default(),
                statuses,
                classes,
                response_headers: headers(manifest, &response),
                response_body: body(&response),
                boolean: manifest
                    .text(&response, &format!("{MF}expectedBoolean"))
                    .map(|b| b == "true"),
                location: manifest.text(&response, &format!("{MF}expectedLocation")),
            }
        })
        .collect()
}

fn canonical(text: &[u8]) -> Result<Graph, String> {
    let mut graph = Graph::new();
    for quad in RdfParser::from_format(RdfFormat::Turtle).for_slice(text) {
        let quad = quad.map_err(|e| e.to_string())?;
        graph.insert(&oxrdf::Triple::new(
            quad.subject,
            quad.predicate,
            quad.object,
        ));
    }
    graph.canonicalize(CanonicalizationAlgorithm::Unstable);
    Ok(graph)
}

/// Runs one entry on a fresh server; the first failure, if any.
fn run_entry(tag: &str, manifest: &Manifest, entry: &Term) -> Result<(), String> {
    let store = small_store(
        &format!("w3c-{tag}"),
        "<http://e/s> <http://e/p> <http://e/o> .\n",
    );
    let server = Server::start(&store, &["--writable"]);
    let mut variables: Vec<(String, String)> = Vec::new();
    for (i, step) in steps(manifest, entry).iter().enumerate() {
        let path = variables
            .iter()
            .fold(step.path.clone(), |path, (name, value)| {
                path.replace(name, value)
            });
        let headers: Vec<(&str, &str)> = step
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        let reply: Reply = request(
            &server.address,
            &step.method,
            &path,
            &headers,
            step.body.as_bytes(),
        );
        let what = format!("request {} ({} {path})", i + 1, step.method);
        let status_ok =
            step.statuses.contains(&reply.status) || step.classes.contains(&(reply.status / 100));
        if !status_ok {
            return Err(format!(
                "{what}: status {} not in {:?} / classes {:?}xx: {}",
                reply.status,
                step.statuses,
                step.classes,
                reply.text()
            ));
        }
        for (name, value) in &step.response_headers {
            if reply.header(name) != Some(value.as_str()) {
                return Err(format!(
                    "{what}: header {name} is {:?}, expected {value:?}",
                    reply.header(name)
                ));
            }
        }
        if let Some(expected) = &step.response_body {
            if step.method != "HEAD" {
                let expected = canonical(expected.as_bytes())
                    .map_err(|e| format!("{what}: expected body: {e}"))?;
                let actual = canonical(&reply.body)
                    .map_err(|e| format!("{what}: body: {e}: {}", reply.text()))?;
                if expected != actual {
                    return Err(format!(
                        "{what}: body differs:\nexpected {expected}\nactual {actual}"
                    ));
                }
            }
        }
        if let Some(variable) = &step.location {
            let location = reply
                .header("location")
                .ok_or_else(|| format!("{what}: no Location header"))?;
            oxrdf::NamedNode::new(location)
                .map_err(|e| format!("{what}: Location {location:?} is not an IRI: {e}"))?;
            variables.push((variable.clone(), location.to_owned()));
        }
        if let Some(expected) = step.boolean {
            let json: serde_json::Value = serde_json::from_slice(&reply.body)
                .map_err(|e| format!("{what}: not JSON ({e}): {}", reply.text()))?;
            if json["boolean"].as_bool() != Some(expected) {
                return Err(format!("{what}: answer {json}, expected {expected}"));
            }
        }
    }
    Ok(())
}

fn run_manifest(path: &Path, select: impl Fn(&str) -> bool, unsupported: &[(&str, &str)]) -> usize {
    let manifest = Manifest::load(path);
    let entries = manifest.entries();
    for (name, _) in unsupported {
        assert!(
            entries.iter().any(|(n, _)| n == name),
            "no entry {name} in {}",
            path.display()
        );
    }
    let mut failures = Vec::new();
    let mut ran = 0;
    for (name, entry) in &entries {
        if !select(name) || unsupported.iter().any(|(n, _)| n == name) {
            continue;
        }
        ran += 1;
        if let Err(error) = run_entry(name, &manifest, entry) {
            failures.push(format!("{name}: {error}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    ran
}

#[test]
fn w3c_graph_store_protocol_indirect() {
    let path = shared().join("sparql-tests/sparql11/graph-store-protocol/manifest-indirect.ttl");
    let ran = run_manifest(&path, |_| true, UNSUPPORTED);
    assert_eq!(ran, 9);
}

#[test]
fn w3c_protocol_updates() {
    let path = shared().join("sparql-tests/sparql11/protocol/manifest.ttl");
    let ran = run_manifest(&path, |name| name.contains("update"), &[]);
    assert_eq!(ran, 14);
}

/// The W3C service-description tests (`service-description/manifest.ttl`), whose entries
/// describe in prose what a GET on the endpoint must answer: `returns-rdf` (RDF, in each
/// format offered), `has-endpoint-triple` (an `sd:endpoint` equal to the URL asked) and
/// `conforms-to-schema` (an `sd:Service` with the properties the schema defines, each with
/// objects of the right kind). Each entry of the manifest must have a check here.
#[test]
fn w3c_service_description() {
    const SD: &str = "http://www.w3.org/ns/sparql-service-description#";
    let path = shared().join("sparql-tests/sparql11/service-description/manifest.ttl");
    let manifest = Manifest::load(&path);
    let names: Vec<String> = manifest
        .entries()
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        names,
        ["has-endpoint-triple", "returns-rdf", "conforms-to-schema"],
        "the manifest's entries changed: give each new one a check"
    );
    let store = small_store("w3c-sd", "<http://e/s> <http://e/p> \"1\" .\n");
    let server = Server::start(&store, &["--writable"]);
    let put = request(
        &server.address,
        "PUT",
        "/store?graph=http%3A%2F%2Fe%2Fg",
        &[("Content-Type", "text/turtle")],
        b"<http://e/s> <http://e/p> \"2\" .",
    );
    assert_eq!(put.status, 201, "{}", put.text());
    let get = |path: &str, accept: &str| {
        let reply = request(&server.address, "GET", path, &[("Accept", accept)], b"");
        assert_eq!(reply.status, 200, "GET {path}: {}", reply.text());
        reply
    };
    let parse = |reply: &Reply, format: RdfFormat| -> Graph {
        let mut graph = Graph::new();
        for quad in RdfParser::from_format(format).for_slice(&reply.body) {
            let quad = quad.unwrap_or_else(|e| panic!("not {format}: {e}\n{}", reply.text()));
            graph.insert(oxrdf::TripleRef::from(quad.as_ref()));
        }
        graph
    };
    let sd = |local: &str| {
        NamedNodeRef::new_unchecked(Box::leak(format!("{SD}{local}").into_boxed_str()))
    };
    let rdf_type = NamedNodeRef::new_unchecked("http://www.w3.org/1999/02/22-rdf-syntax-ns#type");
    // returns-rdf: in every format offered, the same graph.
    let mut graphs = Vec::new();
    for (accept, format, content_type) in [
        ("*/*", RdfFormat::Turtle, "text/turtle"),
        ("text/turtle", RdfFormat::Turtle, "text/turtle"),
        (
            "application/rdf+xml",
            RdfFormat::RdfXml,
            "application/rdf+xml",
        ),
        (
            "application/n-triples",
            RdfFormat::NTriples,
            "application/n-triples",
        ),
    ] {
        let reply = get("/sparql", accept);
        assert!(
            reply
                .header("content-type")
                .is_some_and(|t| t.starts_with(content_type)),
            "{accept}: {:?}",
            reply.header("content-type")
        );
        let mut graph = parse(&reply, format);
        graph.canonicalize(CanonicalizationAlgorithm::Unstable);
        graphs.push(graph);
    }
    assert!(
        graphs.windows(2).all(|w| w[0] == w[1]),
        "the formats disagree"
    );
    // has-endpoint-triple, at each endpoint path.
    for path in ["/sparql", "/query", "/default/query"] {
        let graph = parse(&get(path, "text/turtle"), RdfFormat::Turtle);
        let endpoint = format!("http://{}{path}", server.address);
        let services: Vec<_> = graph
            .subjects_for_predicate_object(sd("endpoint"), NamedNodeRef::new_unchecked(&endpoint))
            .collect();
        assert_eq!(services.len(), 1, "{path}: no sd:endpoint <{endpoint}>");
    }
    // conforms-to-schema: one sd:Service; the properties of the schema with objects of
    // the classes and kinds it gives.
    let graph = &graphs[0];
    let services: Vec<_> = graph
        .subjects_for_predicate_object(rdf_type, sd("Service"))
        .collect();
    assert_eq!(services.len(), 1);
    let service = services[0];
    let objects = |subject: oxrdf::NamedOrBlankNodeRef<'_>, local: &str| -> Vec<TermRef<'_>> {
        graph
            .objects_for_subject_predicate(subject, sd(local))
            .collect()
    };
    let mut languages: Vec<String> = objects(service, "supportedLanguage")
        .iter()
        .map(|t| t.to_string())
        .collect();
    languages.sort();
    assert_eq!(
        languages,
        [
            format!("<{SD}SPARQL10Query>"),
            format!("<{SD}SPARQL11Query>"),
            format!("<{SD}SPARQL11Update>")
        ]
    );
    for format in objects(service, "resultFormat") {
        assert!(
            matches!(format, TermRef::NamedNode(n) if n.as_str().starts_with("http://www.w3.org/ns/formats/"))
        );
    }
    assert!(objects(service, "resultFormat").len() >= 6);
    let [TermRef::BlankNode(dataset)] = objects(service, "defaultDataset")[..] else {
        panic!("one sd:defaultDataset")
    };
    assert!(graph.contains(oxrdf::TripleRef::new(dataset, rdf_type, sd("Dataset"))));
    let size = |graph_node: TermRef<'_>| -> i64 {
        let TermRef::BlankNode(node) = graph_node else {
            panic!("{graph_node}")
        };
        assert!(graph.contains(oxrdf::TripleRef::new(node, rdf_type, sd("Graph"))));
        let triples = graph
            .object_for_subject_predicate(
                node,
                NamedNodeRef::new_unchecked("http://rdfs.org/ns/void#triples"),
            )
            .expect("void:triples");
        let TermRef::Literal(count) = triples else {
            panic!("{triples}")
        };
        count.value().parse().unwrap()
    };
    let [default] = objects(dataset.into(), "defaultGraph")[..] else {
        panic!("one sd:defaultGraph")
    };
    assert_eq!(size(default), 1);
    let [TermRef::BlankNode(named)] = objects(dataset.into(), "namedGraph")[..] else {
        panic!("one sd:namedGraph")
    };
    assert!(graph.contains(oxrdf::TripleRef::new(named, rdf_type, sd("NamedGraph"))));
    assert_eq!(
        objects(named.into(), "name"),
        [TermRef::NamedNode(NamedNodeRef::new_unchecked(
            "http://e/g"
        ))]
    );
    let [named_graph] = objects(named.into(), "graph")[..] else {
        panic!("sd:graph")
    };
    assert_eq!(size(named_graph), 1);
    // A read-only endpoint takes no updates, and says so.
    let read_only = Server::start(&store, &[]);
    let reply = request(&read_only.address, "GET", "/query", &[], b"");
    let graph = parse(&reply, RdfFormat::Turtle);
    assert!(!graph.contains(oxrdf::TripleRef::new(
        graph
            .subjects_for_predicate_object(rdf_type, sd("Service"))
            .next()
            .unwrap(),
        sd("supportedLanguage"),
        sd("SPARQL11Update"),
    )));
}
