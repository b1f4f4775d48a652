//! Reading W3C test manifests: Turtle files listing tests (`mf:entries`) and other
//! manifests (`mf:include`), parsed with `oxttl` into an in-memory graph and walked from
//! the root manifests down. Each test becomes a [`TestCase`]; tests outside this runner's
//! scope carry the reason they are skipped.

use std::collections::HashSet;
use std::path::Path;

use oxrdf::vocab::{rdf, rdfs};
use oxrdf::{Graph, NamedNodeRef, NamedOrBlankNodeRef, Term, TermRef};
use oxttl::TurtleParser;

use crate::files::{file_iri, iri_to_path};
use crate::SuiteError;

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";

macro_rules! mf {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#",
            $name
        ))
    };
}

/// `sd:entailmentRegime` of the SPARQL 1.1 Service Description vocabulary.
fn sd_entailment_regime() -> NamedNodeRef<'static> {
    NamedNodeRef::new_unchecked("http://www.w3.org/ns/sparql-service-description#entailmentRegime")
}

macro_rules! qt {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2001/sw/DataAccess/tests/test-query#",
            $name
        ))
    };
}

macro_rules! ut {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2009/sparql/tests/test-update#",
            $name
        ))
    };
}

macro_rules! dawgt {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#",
            $name
        ))
    };
}

/// The manifests the suite is walked from, relative to the suite directory.
pub const ROOT_MANIFESTS: [&str; 2] = ["sparql10/manifest.ttl", "sparql11/manifest-all.ttl"];

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
    /// The query file's IRI.
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

/// Every test reachable from [`ROOT_MANIFESTS`] under `suite` (withdrawn tests left out).
pub fn load_suite(suite: &Path) -> Result<Vec<TestCase>, SuiteError> {
    let mut walker = Walker {
        suite_iri: file_iri(suite)?,
        seen: HashSet::new(),
        tests: Vec::new(),
    };
    for root in ROOT_MANIFESTS {
        let iri = file_iri(&suite.join(root))?;
        walker.manifest(&iri)?;
    }
    Ok(walker.tests)
}

struct Walker {
    suite_iri: String,
    seen: HashSet<String>,
    tests: Vec<TestCase>,
}

impl Walker {
    fn manifest(&mut self, iri: &str) -> Result<(), SuiteError> {
        if !self.seen.insert(iri.to_owned()) {
            return Ok(());
        }
        let graph = parse_manifest(iri)?;
        let this = NamedNodeRef::new_unchecked(iri);
        let relative = iri.strip_prefix(&self.suite_iri).unwrap_or(iri);
        let relative = relative.trim_start_matches('/').to_owned();
        let group = match relative.rfind('/') {
            Some(slash) => relative[..slash].to_owned(),
            None => String::new(),
        };
        for include in list(&graph, this.into(), mf!("include")) {
            if let Term::NamedNode(node) = include {
                self.manifest(node.as_str())?;
            }
        }
        for entry in list(&graph, this.into(), mf!("entries")) {
            let node = match &entry {
                Term::NamedNode(n) => NamedOrBlankNodeRef::from(n.as_ref()),
                Term::BlankNode(b) => NamedOrBlankNodeRef::from(b.as_ref()),
                _ => continue,
            };
            if let Some(test) = test_case(&graph, node, &relative, &group) {
                self.tests.push(test);
            }
        }
        Ok(())
    }
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

fn test_case(
    graph: &Graph,
    node: NamedOrBlankNodeRef<'_>,
    manifest: &str,
    group: &str,
) -> Option<TestCase> {
    let approval = graph.object_for_subject_predicate(node, dawgt!("approval"));
    if approval == Some(dawgt!("Withdrawn").into()) {
        return None;
    }
    let types: Vec<String> = graph
        .objects_for_subject_predicate(node, rdf::TYPE)
        .filter_map(iri_of)
        .collect();
    let kind = kind_of(&types);
    let iri = match node {
        NamedOrBlankNodeRef::NamedNode(n) => n.as_str().to_owned(),
        NamedOrBlankNodeRef::BlankNode(b) => format!("_:{}", b.as_str()),
    };
    let local = iri.rsplit(['#', '/']).next().unwrap_or(&iri).to_owned();
    let name = match graph.object_for_subject_predicate(node, mf!("name")) {
        Some(TermRef::Literal(l)) => l.value().to_owned(),
        _ => local.clone(),
    };
    let action = graph.object_for_subject_predicate(node, mf!("action"));
    if kind == TestKind::UpdateEvaluation {
        let before = update_dataset(graph, action);
        let result = graph.object_for_subject_predicate(node, mf!("result"));
        let request = match action {
            Some(TermRef::BlankNode(b)) => graph
                .object_for_subject_predicate(NamedOrBlankNodeRef::from(b), ut!("request"))
                .and_then(iri_of),
            _ => None,
        };
        return Some(TestCase {
            id: format!("{manifest}#{local}"),
            iri,
            name,
            group: group.to_owned(),
            skip: skip_reason(&kind, group),
            kind,
            query: request,
            data: Vec::new(),
            graph_data: Vec::new(),
            result: None,
            update: Some(UpdateCase {
                before,
                after: update_dataset(graph, result),
            }),
            service_data: Vec::new(),
            profile: None,
        });
    }
    let (mut query, mut data, mut graph_data) = (None, Vec::new(), Vec::new());
    let mut service_data = Vec::new();
    let mut regimes: Vec<String> = Vec::new();
    match action {
        Some(TermRef::NamedNode(file)) => query = Some(file.as_str().to_owned()),
        Some(TermRef::BlankNode(b)) => {
            let b = NamedOrBlankNodeRef::from(b);
            query = graph
                .object_for_subject_predicate(b, qt!("query"))
                .and_then(iri_of);
            data = graph
                .objects_for_subject_predicate(b, qt!("data"))
                .filter_map(iri_of)
                .collect();
            graph_data = graph
                .objects_for_subject_predicate(b, qt!("graphData"))
                .filter_map(iri_of)
                .collect();
            service_data = graph
                .objects_for_subject_predicate(b, qt!("serviceData"))
                .filter_map(|entry| {
                    let TermRef::BlankNode(entry) = entry else {
                        return None;
                    };
                    let entry = NamedOrBlankNodeRef::from(entry);
                    let endpoint = graph
                        .object_for_subject_predicate(entry, qt!("endpoint"))
                        .and_then(iri_of)?;
                    let mut files: Vec<String> = graph
                        .objects_for_subject_predicate(entry, qt!("data"))
                        .filter_map(iri_of)
                        .collect();
                    files.sort();
                    Some((endpoint, files))
                })
                .collect();
            service_data.sort();
            regimes = list(graph, b, sd_entailment_regime())
                .into_iter()
                .chain(
                    graph
                        .object_for_subject_predicate(b, sd_entailment_regime())
                        .filter(|t| matches!(t, TermRef::NamedNode(_)))
                        .map(TermRef::into_owned),
                )
                .filter_map(|t| match t {
                    Term::NamedNode(n) => n.as_str().rsplit('/').next().map(str::to_owned),
                    _ => None,
                })
                .collect();
        }
        _ => {}
    }
    // Several files per property come out of the graph in no fixed order.
    data.sort();
    graph_data.sort();
    let result = graph
        .object_for_subject_predicate(node, mf!("result"))
        .and_then(iri_of);
    // Some SPARQL 1.1 manifests type update syntax tests (`.ru` actions) as query syntax.
    let update_action = query.as_deref().is_some_and(|q| q.ends_with(".ru"));
    let kind = match kind {
        TestKind::PositiveSyntax if update_action => TestKind::PositiveUpdateSyntax,
        TestKind::NegativeSyntax if update_action => TestKind::NegativeUpdateSyntax,
        kind => kind,
    };
    let profile = if regimes.iter().any(|r| r == "RDFS") {
        Some(quiver_store::Profile::Rdfs)
    } else if regimes.iter().any(|r| r == "OWL-RDF-Based") {
        Some(quiver_store::Profile::OwlRl)
    } else {
        None
    };
    let skip = match profile {
        Some(_) if group.ends_with("entailment") => None,
        None if group.ends_with("entailment") => Some(format!(
            "entailment regime not supported: {}",
            if regimes.is_empty() {
                "none named".to_owned()
            } else {
                regimes.join(", ")
            }
        )),
        _ => skip_reason(&kind, group),
    };
    Some(TestCase {
        id: format!("{manifest}#{local}"),
        iri,
        name,
        group: group.to_owned(),
        kind,
        query,
        data,
        graph_data,
        result,
        skip,
        update: None,
        service_data,
        profile,
    })
}

/// The dataset an update test's action or result node describes (`ut:data`,
/// `ut:graphData [ ut:graph <file> ; rdfs:label "name" ]`); nothing for `[]` or none.
fn update_dataset(graph: &Graph, node: Option<TermRef<'_>>) -> UpdateDataset {
    let node = match node {
        Some(TermRef::BlankNode(b)) => NamedOrBlankNodeRef::from(b),
        Some(TermRef::NamedNode(n)) => NamedOrBlankNodeRef::from(n),
        _ => return UpdateDataset::default(),
    };
    let mut data: Vec<String> = graph
        .objects_for_subject_predicate(node, ut!("data"))
        .filter_map(iri_of)
        .collect();
    data.sort();
    let mut graphs: Vec<(String, String)> = graph
        .objects_for_subject_predicate(node, ut!("graphData"))
        .filter_map(|entry| {
            let entry = match entry {
                TermRef::BlankNode(b) => NamedOrBlankNodeRef::from(b),
                TermRef::NamedNode(n) => NamedOrBlankNodeRef::from(n),
                _ => return None,
            };
            let file = graph
                .object_for_subject_predicate(entry, ut!("graph"))
                .and_then(iri_of)?;
            let name = match graph.object_for_subject_predicate(entry, rdfs::LABEL) {
                Some(TermRef::Literal(l)) => l.value().to_owned(),
                Some(TermRef::NamedNode(n)) => n.as_str().to_owned(),
                _ => file.clone(),
            };
            Some((name, file))
        })
        .collect();
    graphs.sort();
    UpdateDataset { data, graphs }
}

fn kind_of(types: &[String]) -> TestKind {
    let local = |t: &String| t.strip_prefix(MF).map(str::to_owned);
    let names: Vec<String> = types.iter().filter_map(local).collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    if has("QueryEvaluationTest") {
        TestKind::QueryEvaluation
    } else if has("CSVResultFormatTest") {
        TestKind::CsvResultFormat
    } else if has("PositiveSyntaxTest") || has("PositiveSyntaxTest11") {
        TestKind::PositiveSyntax
    } else if has("NegativeSyntaxTest") || has("NegativeSyntaxTest11") {
        TestKind::NegativeSyntax
    } else if has("PositiveUpdateSyntaxTest11") {
        TestKind::PositiveUpdateSyntax
    } else if has("NegativeUpdateSyntaxTest11") {
        TestKind::NegativeUpdateSyntax
    } else if has("UpdateEvaluationTest") {
        TestKind::UpdateEvaluation
    } else if types.is_empty() {
        // DAWG manifests leave the type of plain evaluation tests implicit.
        TestKind::QueryEvaluation
    } else {
        TestKind::Other(names.first().cloned().unwrap_or_else(|| types[0].clone()))
    }
}

fn skip_reason(kind: &TestKind, group: &str) -> Option<String> {
    let dir = group.rsplit('/').next().unwrap_or(group);
    let reason = match dir {
        "entailment" => "entailment regimes are not supported",
        "protocol" | "graph-store-protocol" | "http-rdf-update" => "protocol tests",
        "service-description" => {
            "service description tests (run over HTTP by quiver-cli's serve_w3c tests)"
        }
        _ => match kind {
            TestKind::Other(name) if name.contains("Protocol") => "protocol tests",
            TestKind::Other(_) => "test type not run by this runner",
            _ => return None,
        },
    };
    Some(reason.to_owned())
}
