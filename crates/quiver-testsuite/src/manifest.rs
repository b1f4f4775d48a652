//! Reading W3C test manifests: Turtle files listing tests (`mf:entries`) and other
//! manifests (`mf:include`), parsed with `oxttl` into an in-memory graph and walked from
//! the root manifests down (those of [`ROOT_MANIFESTS`] that the suite directory holds).
//! Each test becomes a [`TestCase`]; tests outside this runner's scope carry the reason
//! they are skipped.
//!
//! The SPARQL 1.0/1.1 manifests describe themselves as `<>`; the RDF 1.2 ones (and some
//! SPARQL 1.2 ones) as a node of their own (`trs:manifest a mf:Manifest`), found by its
//! type. The RDF 1.2 manifests include the RDF 1.1 suites by relative paths
//! (`../../rdf11/…`) that this copy of the suites does not hold: an included manifest
//! that is missing is left out and listed in [`Suite::missing`], while a missing root
//! manifest only means that suite is not in the directory.

use std::collections::HashSet;
use std::path::Path;

use oxrdf::vocab::rdf;
use oxrdf::{Graph, NamedNodeRef, NamedOrBlankNode, NamedOrBlankNodeRef, Term, TermRef};
use oxttl::TurtleParser;

use crate::files::{file_iri, iri_to_path};
use crate::SuiteError;

macro_rules! mf {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#",
            $name
        ))
    };
}

// After `mf!`, which they use.
mod entry;
mod rdf_kinds;

#[cfg(test)]
mod tests;

pub use rdf_kinds::RdfSyntax;

/// The manifests a suite is walked from, relative to the suite directory: the SPARQL 1.0
/// and 1.1 suites (`shared/sparql-tests`), the SPARQL 1.2 and RDF 1.2 suites
/// (`shared/rdf12-tests`). Those the directory holds are walked, in this order.
pub const ROOT_MANIFESTS: [&str; 4] = [
    "sparql10/manifest.ttl",
    "sparql11/manifest-all.ttl",
    "sparql12/manifest.ttl",
    "rdf12/manifest.ttl",
];

/// What a test checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestKind {
    /// Run a query on a dataset and compare with the expected results.
    QueryEvaluation,
    /// A query evaluation whose expected results are CSV (compared as CSV text).
    CsvResultFormat,
    /// The query must parse.
    PositiveSyntax,
    /// The query must be rejected.
    NegativeSyntax,
    /// The update request must parse.
    PositiveUpdateSyntax,
    /// The update request must be rejected.
    NegativeUpdateSyntax,
    /// Run an update request on a dataset and compare the dataset with the expected one.
    UpdateEvaluation,
    /// An RDF document (the test's action) must load into a store (`positive`) or be
    /// rejected with a syntax error: `rdft:TestTurtlePositiveSyntax` and the like.
    RdfSyntax { syntax: RdfSyntax, positive: bool },
    /// An RDF document must load into a store holding the expected quads (`mf:result`), up
    /// to blank node renaming: `rdft:TestTurtleEval` and the like, and the C14N tests
    /// (`rdft:TestNTriplesPositiveC14N`), whose result is the canonical form of the action.
    RdfEvaluation(RdfSyntax),
    /// Any other test type (protocol, service description, ...): always skipped.
    Other(String),
}

/// One test of a manifest.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// Stable identifier: the manifest path relative to the suite plus `#` and the test's
    /// local name (`sparql11/aggregates/manifest.ttl#agg01`).
    pub id: String,
    pub iri: String,
    pub name: String,
    /// The manifest's directory relative to the suite (`sparql11/aggregates`).
    pub group: String,
    pub kind: TestKind,
    /// The query file's IRI (the update request of an update test, the RDF document of an
    /// RDF test).
    pub query: Option<String>,
    /// Files of the default graph.
    pub data: Vec<String>,
    /// Files loaded as named graphs, named by their IRI.
    pub graph_data: Vec<String>,
    /// The expected results file's IRI.
    pub result: Option<String>,
    /// Why the test is not run, if it is not.
    pub skip: Option<String>,
    /// The datasets before and after an update evaluation test (its request is `query`).
    pub update: Option<UpdateCase>,
    /// The remote endpoints of a SERVICE test (`qt:serviceData`): each endpoint's IRI
    /// and the files of its default graph.
    pub service_data: Vec<(String, Vec<String>)>,
    /// The reasoning profile an entailment test runs under (`sd:entailmentRegime`: RDFS
    /// as `rdfs`, else the OWL RDF-Based semantics as `owl-rl`, whose rules are sound for
    /// it), if any.
    pub profile: Option<quiver_store::Profile>,
    /// The base IRI an RDF test's document is parsed with, as the W3C runners use it: the
    /// manifest's `mf:assumedTestBase` with the document's path relative to the manifest
    /// appended (`https://w3c.github.io/rdf-tests/rdf/rdf12/rdf-turtle/eval/x.ttl`), else
    /// the document's own IRI. `None` for SPARQL tests, which resolve against their files.
    pub base: Option<String>,
}

/// The datasets of an update evaluation test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateCase {
    pub before: UpdateDataset,
    pub after: UpdateDataset,
}

/// A dataset of an update test: files of the default graph and named graphs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateDataset {
    /// Files of the default graph.
    pub data: Vec<String>,
    /// Named graphs: (name, file), by name. A graph listed exists even when its file is
    /// empty.
    pub graphs: Vec<(String, String)>,
}

/// The tests of a suite directory.
#[derive(Debug, Clone, Default)]
pub struct Suite {
    /// Every test reachable from the root manifests, in manifest order (withdrawn tests
    /// left out).
    pub tests: Vec<TestCase>,
    /// Included manifests that are not there (relative to the suite directory where they
    /// lie in it): their tests are not run.
    pub missing: Vec<String>,
}

/// Every test reachable from [`ROOT_MANIFESTS`] under `suite` (withdrawn tests left out).
pub fn load_suite(suite: &Path) -> Result<Vec<TestCase>, SuiteError> {
    read_suite(suite).map(|suite| suite.tests)
}

/// The tests reachable from those of [`ROOT_MANIFESTS`] that `suite` holds, and the
/// included manifests that are missing. An error when it holds none of them.
pub fn read_suite(suite: &Path) -> Result<Suite, SuiteError> {
    let roots: Vec<&str> = ROOT_MANIFESTS
        .into_iter()
        .filter(|root| suite.join(root).is_file())
        .collect();
    if roots.is_empty() {
        return Err(SuiteError::NoSuite {
            path: suite.to_owned(),
            roots: ROOT_MANIFESTS.join(", "),
        });
    }
    let mut walker = Walker {
        suite_iri: file_iri(suite)?,
        seen: HashSet::new(),
        suite: Suite::default(),
    };
    for root in roots {
        let iri = file_iri(&suite.join(root))?;
        walker.manifest(&iri, false)?;
    }
    Ok(walker.suite)
}

struct Walker {
    suite_iri: String,
    seen: HashSet<String>,
    suite: Suite,
}

/// Where a manifest lies, what its tests are named after and resolved against.
struct ManifestPlace<'a> {
    /// The manifest's path relative to the suite (`rdf12/rdf-turtle/eval/manifest.ttl`).
    relative: &'a str,
    /// Its directory relative to the suite (`rdf12/rdf-turtle/eval`).
    group: &'a str,
    /// Its directory's IRI, with the final slash.
    directory: &'a str,
    /// Its `mf:assumedTestBase`, if it gives one.
    assumed_base: Option<String>,
}

impl Walker {
    fn manifest(&mut self, iri: &str, included: bool) -> Result<(), SuiteError> {
        if !self.seen.insert(iri.to_owned()) {
            return Ok(());
        }
        let relative = iri.strip_prefix(&self.suite_iri).unwrap_or(iri);
        let relative = relative.trim_start_matches('/').to_owned();
        if included && !iri_to_path(iri)?.is_file() {
            self.suite.missing.push(relative);
            return Ok(());
        }
        let graph = parse_manifest(iri)?;
        let nodes = manifest_nodes(&graph, iri);
        let group = match relative.rfind('/') {
            Some(slash) => relative[..slash].to_owned(),
            None => String::new(),
        };
        let place = ManifestPlace {
            relative: &relative,
            group: &group,
            directory: &iri[..iri.rfind('/').map_or(0, |slash| slash + 1)],
            assumed_base: nodes.iter().find_map(|node| {
                graph
                    .object_for_subject_predicate(node.as_ref(), mf!("assumedTestBase"))
                    .and_then(iri_of)
            }),
        };
        for node in &nodes {
            for include in list(&graph, node.as_ref(), mf!("include")) {
                if let Term::NamedNode(node) = include {
                    self.manifest(node.as_str(), true)?;
                }
            }
        }
        for node in &nodes {
            for entry in list(&graph, node.as_ref(), mf!("entries")) {
                let node = match &entry {
                    Term::NamedNode(n) => NamedOrBlankNodeRef::from(n.as_ref()),
                    Term::BlankNode(b) => NamedOrBlankNodeRef::from(b.as_ref()),
                    _ => continue,
                };
                if let Some(test) = entry::test_case(&graph, node, &place) {
                    self.suite.tests.push(test);
                }
            }
        }
        Ok(())
    }
}

/// The nodes that describe the manifest at `iri`: the document itself (`<>`, as the SPARQL
/// 1.0/1.1 manifests write it) when it lists entries or includes, else every node typed
/// `mf:Manifest` (`trs:manifest a mf:Manifest`, as the RDF 1.2 manifests write it).
fn manifest_nodes(graph: &Graph, iri: &str) -> Vec<NamedOrBlankNode> {
    let this = NamedNodeRef::new_unchecked(iri);
    let lists = |node: NamedOrBlankNodeRef<'_>| {
        graph
            .object_for_subject_predicate(node, mf!("entries"))
            .is_some()
            || graph
                .object_for_subject_predicate(node, mf!("include"))
                .is_some()
    };
    if lists(this.into()) {
        return vec![this.into_owned().into()];
    }
    graph
        .subjects_for_predicate_object(rdf::TYPE, mf!("Manifest"))
        .map(NamedOrBlankNodeRef::into_owned)
        .collect()
}

fn parse_manifest(iri: &str) -> Result<Graph, SuiteError> {
    let path = iri_to_path(iri)?;
    let bytes = std::fs::read(&path).map_err(|error| SuiteError::Io {
        path: path.clone(),
        error,
    })?;
    let parser = TurtleParser::new()
        .with_base_iri(iri)
        .map_err(|e| SuiteError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
    let mut graph = Graph::new();
    for triple in parser.for_slice(&bytes) {
        let triple = triple.map_err(|e| SuiteError::Manifest {
            path: path.clone(),
            message: e.to_string(),
        })?;
        graph.insert(&triple);
    }
    Ok(graph)
}

/// The members of the RDF list that is the `predicate` of `subject`.
fn list(graph: &Graph, subject: NamedOrBlankNodeRef<'_>, predicate: NamedNodeRef<'_>) -> Vec<Term> {
    let mut members = Vec::new();
    let mut node = graph.object_for_subject_predicate(subject, predicate);
    let mut guard = HashSet::new();
    while let Some(current) = node {
        let current = match current {
            TermRef::NamedNode(n) if n == rdf::NIL => break,
            TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
            TermRef::BlankNode(b) => NamedOrBlankNodeRef::from(b),
            _ => break,
        };
        if !guard.insert(current.into_owned()) {
            break;
        }
        if let Some(first) = graph.object_for_subject_predicate(current, rdf::FIRST) {
            members.push(first.into_owned());
        }
        node = graph.object_for_subject_predicate(current, rdf::REST);
    }
    members
}

fn iri_of(term: TermRef<'_>) -> Option<String> {
    match term {
        TermRef::NamedNode(n) => Some(n.as_str().to_owned()),
        _ => None,
    }
}
