//! One manifest entry made a [`TestCase`]: its kind from its types (`mf:` for SPARQL,
//! `rdft:` for RDF syntax tests), its files from its action and result, its base IRI, and
//! the reason it is skipped, if it is.

use oxrdf::vocab::{rdf, rdfs};
use oxrdf::{Graph, NamedNodeRef, NamedOrBlankNodeRef, Term, TermRef};

use super::rdf_kinds::kind_of_rdft;
use super::{iri_of, list, ManifestPlace, TestCase, TestKind, UpdateCase, UpdateDataset};

/// The RDF test vocabulary (`rdft:`) of the RDF 1.1 and 1.2 suites.
const RDFT: &str = "http://www.w3.org/ns/rdftest#";

const MF: &str = "http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#";

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

macro_rules! rdft {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!("http://www.w3.org/ns/rdftest#", $name))
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

pub(super) fn test_case(
    graph: &Graph,
    node: NamedOrBlankNodeRef<'_>,
    place: &ManifestPlace<'_>,
) -> Option<TestCase> {
    let (manifest, group) = (place.relative, place.group);
    let approval = graph.object_for_subject_predicate(node, dawgt!("approval"));
    if approval == Some(dawgt!("Withdrawn").into()) {
        return None;
    }
    let rdft_approval = graph.object_for_subject_predicate(node, rdft!("approval"));
    if rdft_approval == Some(rdft!("Rejected").into()) {
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
    if let TestKind::RdfSyntax { .. } | TestKind::RdfEvaluation(_) = kind {
        let document = action.and_then(iri_of);
        let result = graph
            .object_for_subject_predicate(node, mf!("result"))
            .and_then(iri_of);
        return Some(TestCase {
            id: format!("{manifest}#{local}"),
            iri,
            name,
            group: group.to_owned(),
            skip: None,
            base: document.as_deref().map(|d| assumed_base(place, d)),
            kind,
            query: document,
            data: Vec::new(),
            graph_data: Vec::new(),
            result,
            update: None,
            service_data: Vec::new(),
            profile: None,
        });
    }
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
            base: None,
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
        base: None,
    })
}

/// The base IRI of an RDF test's document `file`: the manifest's `mf:assumedTestBase` with
/// the file's path relative to the manifest's directory appended, else the file's IRI.
fn assumed_base(place: &ManifestPlace<'_>, file: &str) -> String {
    match (&place.assumed_base, file.strip_prefix(place.directory)) {
        (Some(base), Some(rest)) => format!("{base}{rest}"),
        _ => file.to_owned(),
    }
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
    let rdf_kind = types
        .iter()
        .filter_map(|t| t.strip_prefix(RDFT))
        .find_map(kind_of_rdft);
    if let Some(kind) = rdf_kind {
        kind
    } else if has("QueryEvaluationTest") {
        TestKind::QueryEvaluation
    } else if has("CSVResultFormatTest") {
        TestKind::CsvResultFormat
    } else if has("PositiveSyntaxTest") || has("PositiveSyntaxTest11") {
        TestKind::PositiveSyntax
    } else if has("NegativeSyntaxTest") || has("NegativeSyntaxTest11") {
        TestKind::NegativeSyntax
    } else if has("PositiveUpdateSyntaxTest11") || has("PositiveUpdateSyntaxTest") {
        // SPARQL 1.1 names the update syntax tests with `11`, SPARQL 1.2 without.
        TestKind::PositiveUpdateSyntax
    } else if has("NegativeUpdateSyntaxTest11") || has("NegativeUpdateSyntaxTest") {
        TestKind::NegativeUpdateSyntax
    } else if has("UpdateEvaluationTest") {
        TestKind::UpdateEvaluation
    } else if types.is_empty() {
        // DAWG manifests leave the type of plain evaluation tests implicit.
        TestKind::QueryEvaluation
    } else {
        let rdft = types.iter().find_map(|t| t.strip_prefix(RDFT));
        let name = names.first().map(String::as_str).or(rdft);
        TestKind::Other(name.unwrap_or(&types[0]).to_owned())
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
            TestKind::Other(name) if name.contains("Entailment") => {
                "RDF Semantics entailment tests: Quiver materialises rule profiles (rdfs, \
                 owl-rl) for queries; it has no check of whether one graph entails another"
            }
            TestKind::Other(_) => "test type not run by this runner",
            _ => return None,
        },
    };
    Some(reason.to_owned())
}
