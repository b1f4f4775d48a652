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

mod serve_support;

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
