//! Running one test on the calling thread: evaluation tests build a store from the test's
//! dataset and compare the engine's answer with the expected one; syntax tests only
//! prepare the query.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use oxrdf::{GraphName, NamedNode, Quad, Variable};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError};
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use spargebra::Query;

use crate::answer::{from_results, normalize_double_exponents};
use crate::compare::{compare, Order};
use crate::deployment::{Deployed, Deployment};
use crate::expected::read_expected;
use crate::files::{read_quads, read_text};
use crate::manifest::{TestCase, TestKind};

/// Most rows an evaluation may return (the suite's largest answers have a few hundred).
const MAX_RESULTS: usize = 1_000_000;

/// Runs `test`: `Ok` when it passes, else why it fails. An evaluation test runs on
/// `deployment` where one is given.
pub fn run_test(
    test: &TestCase,
    timeout: Duration,
    cancel: Arc<AtomicBool>,
    deployment: Option<&dyn Deployment>,
) -> Result<(), String> {
    match &test.kind {
        TestKind::QueryEvaluation | TestKind::CsvResultFormat => {
            evaluate(test, timeout, cancel, deployment)
        }
        TestKind::PositiveSyntax => syntax(test, true),
        TestKind::NegativeSyntax => syntax(test, false),
        TestKind::PositiveUpdateSyntax => update_syntax(test, true),
        TestKind::NegativeUpdateSyntax => update_syntax(test, false),
        TestKind::UpdateEvaluation => crate::update::run(test, timeout, cancel),
        TestKind::RdfSyntax { .. } | TestKind::RdfEvaluation(_) => crate::rdf_syntax::run(test),
        TestKind::Other(kind) => Err(format!("cannot run a {kind}")),
    }
}

fn evaluate(
    test: &TestCase,
    timeout: Duration,
    cancel: Arc<AtomicBool>,
    deployment: Option<&dyn Deployment>,
) -> Result<(), String> {
    let query_iri = test.query.as_deref().ok_or("the test names no query")?;
    let result_iri = test.result.as_deref().ok_or("the test names no result")?;
    let text = read_text(query_iri)?;
    // Parsed as the engine parses it (the dataset and the order the test asks are read
    // from it).
    let parsed = quiver_sparql::parse_query(&text, Some(query_iri))
        .map_err(|e| format!("query does not parse: {e}"))?;
    let quads = dataset_quads(test, &parsed)?;
    let deployed = match deployment {
        Some(deployment) => deployment.deploy(quads)?,
        None => Deployed {
            store: quiver_loader::load_quads(quads, None)
                .map(|(store, _)| store)
                .map_err(|e| e.to_string())?,
            partitions: None,
            keep: Box::new(()),
        },
    };
    let mut store = deployed.store;
    if let Some(profile) = test.profile {
        // An entailment test: the query reads the entailment of the default graph.
        store = store
            .reasoned(profile, &mut |_| {})
            .0
            .entailed()
            .ok_or("the reasoned store has no entailment")?;
    }
    let options = PrepareOptions {
        base_iri: Some(query_iri.to_owned()),
        partitions: deployed.partitions.clone(),
        ..PrepareOptions::default()
    };
    let prepared = prepare(&store, &text, &options).map_err(|e| e.to_string())?;
    // SERVICE calls the test's endpoints, served locally, and no other host.
    let endpoints = crate::endpoints::Endpoints::start(&test.service_data)?;
    let exec = ExecOptions {
        threads: 1,
        timeout: Some(timeout),
        max_results: Some(MAX_RESULTS),
        cancel: Some(cancel),
        service: Some(endpoints.client.clone()),
        partitions: deployed.partitions,
        ..ExecOptions::default()
    };
    let results = prepared.execute(&store, &exec).map_err(|e| e.to_string())?;
    let mut actual = from_results(results);
    drop(deployed.keep);
    let mut expected = read_expected(result_iri)?;
    if test.kind == TestKind::CsvResultFormat {
        actual = crate::csv::round_trip(&actual)?;
    }
    if result_iri.ends_with(".tsv") {
        normalize_double_exponents(&mut expected);
        normalize_double_exponents(&mut actual);
    }
    compare(&expected, &actual, &order_of(&parsed))
}

/// The quads of a test's dataset: `qt:data` files in the default graph; `qt:graphData`
/// files and the files the query's FROM / FROM NAMED clauses name as named graphs, each
/// named by its IRI (the engine maps FROM onto them). Every file load scopes its own
/// blank nodes.
fn dataset_quads(test: &TestCase, query: &Query) -> Result<Vec<Quad>, String> {
    let mut quads = Vec::new();
    for (i, iri) in test.data.iter().enumerate() {
        quads.extend(read_quads(
            iri,
            &GraphName::DefaultGraph,
            &format!("d{i}_"),
        )?);
    }
    let mut named: BTreeSet<&str> = test.graph_data.iter().map(String::as_str).collect();
    if let Some(dataset) = query_dataset(query) {
        let from = dataset.default.iter().chain(dataset.named.iter().flatten());
        named.extend(
            from.map(NamedNode::as_str)
                .filter(|iri| iri.starts_with("file:")),
        );
    }
    for (i, iri) in named.into_iter().enumerate() {
        let name = NamedNode::new(iri).map_err(|e| e.to_string())?;
        quads.extend(read_quads(iri, &name.into(), &format!("g{i}_"))?);
    }
    Ok(quads)
}

fn query_dataset(query: &Query) -> Option<&spargebra::algebra::QueryDataset> {
    match query {
        Query::Select { dataset, .. }
        | Query::Construct { dataset, .. }
        | Query::Describe { dataset, .. }
        | Query::Ask { dataset, .. } => dataset.as_ref(),
    }
}

/// How the rows of a SELECT must be ordered: by its ORDER BY keys when they are all plain
/// variables, in exact sequence when some key is an expression, else not at all.
pub fn order_of(query: &Query) -> Order {
    let Query::Select { pattern, .. } = query else {
        return Order::Bag;
    };
    let mut pattern = pattern;
    loop {
        match pattern {
            GraphPattern::Project { inner, .. }
            | GraphPattern::Distinct { inner }
            | GraphPattern::Reduced { inner }
            | GraphPattern::Slice { inner, .. } => pattern = inner,
            GraphPattern::OrderBy { expression, .. } => {
                let keys: Option<Vec<Variable>> = expression
                    .iter()
                    .map(|key| match key {
                        OrderExpression::Asc(Expression::Variable(v))
                        | OrderExpression::Desc(Expression::Variable(v)) => Some(v.clone()),
                        _ => None,
                    })
                    .collect();
                return keys.map_or(Order::Sequence, Order::Keys);
            }
            _ => return Order::Bag,
        }
    }
}

/// A syntax test passes when the engine accepts (positive) or its parser rejects
/// (negative) the query. A positive test must prepare without any error: a query the
/// engine parses but cannot plan is not supported, so the test fails. A negative test
/// passes only on a syntax error. A query file that cannot be read fails either kind.
fn syntax(test: &TestCase, positive: bool) -> Result<(), String> {
    let iri = test.query.as_deref().ok_or("the test names no query")?;
    let text = read_query_file(iri)?;
    let store = quiver_loader::load_quads(Vec::new(), None)
        .map_err(|e| e.to_string())?
        .0;
    let options = PrepareOptions {
        base_iri: Some(iri.to_owned()),
        ..PrepareOptions::default()
    };
    judge_syntax(prepare(&store, &text, &options).map(drop), positive)
}

/// The verdict of a query syntax test on the engine's outcome of preparing the query.
fn judge_syntax(outcome: Result<(), QueryError>, positive: bool) -> Result<(), String> {
    match (outcome, positive) {
        (Ok(()), true) | (Err(QueryError::Syntax(_)), false) => Ok(()),
        (Err(QueryError::Syntax(message)), true) => Err(format!("rejected: {message}")),
        (Err(error), true) => Err(format!("parsed but not prepared: {error}")),
        (Ok(()), false) => Err("accepted an invalid query".into()),
        (Err(error), false) => Err(format!(
            "accepted an invalid query (then failed with another error than a syntax error: \
             {error})"
        )),
    }
}

/// An update syntax test: Quiver's update parser must accept (positive) or reject
/// (negative) the request; a file that cannot be read fails either kind.
fn update_syntax(test: &TestCase, positive: bool) -> Result<(), String> {
    let iri = test.query.as_deref().ok_or("the test names no update")?;
    let text = read_query_file(iri)?;
    match (quiver_sparql::parse_update(&text, Some(iri)), positive) {
        (Err(error), true) => Err(format!("rejected: {error}")),
        (Err(_), false) | (Ok(_), true) => Ok(()),
        (Ok(_), false) => Err("accepted an invalid update".into()),
    }
}

/// The text of a syntax test's file. An unreadable file is the test's failure, never a
/// rejection by the parser.
fn read_query_file(iri: &str) -> Result<String, String> {
    read_text(iri).map_err(|e| format!("cannot read the test's file: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(text: &str) -> Order {
        order_of(&spargebra::SparqlParser::new().parse_query(text).unwrap())
    }

    #[test]
    fn order_follows_order_by() {
        let v = |n: &str| Variable::new_unchecked(n);
        assert_eq!(order("SELECT * { ?s ?p ?o }"), Order::Bag);
        assert_eq!(
            order("SELECT ?s { ?s ?p ?o } ORDER BY ?s DESC(?o) LIMIT 2"),
            Order::Keys(vec![v("s"), v("o")])
        );
        assert_eq!(
            order("SELECT DISTINCT ?s { ?s ?p ?o } ORDER BY STR(?s)"),
            Order::Sequence
        );
        assert_eq!(order("ASK { ?s ?p ?o }"), Order::Bag);
    }

    /// A syntax test of `kind` on the query file at `path`.
    fn syntax_test(kind: TestKind, path: &std::path::Path) -> TestCase {
        TestCase {
            id: "unit/manifest.ttl#t".into(),
            iri: "file:///unit/manifest.ttl#t".into(),
            name: "t".into(),
            group: "unit".into(),
            kind,
            query: Some(format!("file://{}", path.display())),
            data: Vec::new(),
            graph_data: Vec::new(),
            result: None,
            skip: None,
            update: None,
            service_data: Vec::new(),
            profile: None,
            base: None,
        }
    }

    fn run(test: &TestCase) -> Result<(), String> {
        run_test(
            test,
            Duration::from_secs(10),
            Arc::new(AtomicBool::new(false)),
            None,
        )
    }

    /// A file of `text` in a directory of its own under the system's temporary directory.
    fn query_file(name: &str, text: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("quiver-testsuite-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn a_missing_query_file_fails_every_kind_of_syntax_test() {
        let missing = std::env::temp_dir().join("quiver-testsuite-no-such-dir/missing.rq");
        for kind in [
            TestKind::PositiveSyntax,
            TestKind::NegativeSyntax,
            TestKind::PositiveUpdateSyntax,
            TestKind::NegativeUpdateSyntax,
        ] {
            let error = run(&syntax_test(kind.clone(), &missing)).unwrap_err();
            assert!(
                error.contains("cannot read the test's file"),
                "{kind:?}: {error}"
            );
        }
    }

    #[test]
    fn syntax_tests_pass_on_the_right_verdict_only() {
        let good = query_file("good.rq", "SELECT * WHERE { ?s ?p ?o }");
        let bad = query_file("bad.rq", "SELECT * WHERE { ?s ?p ");
        assert_eq!(run(&syntax_test(TestKind::PositiveSyntax, &good)), Ok(()));
        assert_eq!(run(&syntax_test(TestKind::NegativeSyntax, &bad)), Ok(()));
        let error = run(&syntax_test(TestKind::PositiveSyntax, &bad)).unwrap_err();
        assert!(error.starts_with("rejected: "), "{error}");
        let error = run(&syntax_test(TestKind::NegativeSyntax, &good)).unwrap_err();
        assert_eq!(error, "accepted an invalid query");
        for path in [good, bad] {
            std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        }
    }

    #[test]
    fn a_positive_syntax_test_the_engine_cannot_prepare_fails() {
        for error in [
            QueryError::Unsupported("a feature".into()),
            QueryError::Plan("no plan".into()),
        ] {
            let verdict = judge_syntax(Err(error), true).unwrap_err();
            assert!(
                verdict.starts_with("parsed but not prepared: "),
                "{verdict}"
            );
        }
    }

    #[test]
    fn a_negative_syntax_test_fails_on_an_error_other_than_syntax() {
        let verdict = judge_syntax(Err(QueryError::Unsupported("a feature".into())), false);
        assert!(verdict
            .unwrap_err()
            .starts_with("accepted an invalid query"));
    }
}
