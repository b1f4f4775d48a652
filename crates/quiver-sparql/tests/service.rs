//! SERVICE on random graphs, by the engine and by Oxigraph: the bags of rows must agree.
//!
//! One local graph and two remote ones, `<http://r1/>` and `<http://r2/>`; a third
//! endpoint, `<http://down/>`, always fails. The engine reaches the remote graphs through a
//! [`ServiceClient`] that runs each query it is sent on a Quiver store of that graph (with
//! VALUES blocks of 3 bindings, so a bind join makes several calls); Oxigraph through its
//! service handler, on an Oxigraph store of the same graph. The queries cover a bind join,
//! OPTIONAL, a SERVICE alone, a variable endpoint, SILENT over a failing endpoint, two
//! SERVICEs, and SERVICE inside a group with filters. `PROPTEST_CASES` sets the number of
//! graphs.

use crate::support;

use std::sync::{Arc, Mutex};

use oxrdf::{NamedNode, Variable};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use quiver_sparql::context::QueryState;
use quiver_sparql::{
    prepare, ExecOptions, PrepareOptions, QueryError, QueryResults, ServiceClient, ServiceError,
    ServiceSolutions,
};
use quiver_store::Store;
use support::{load, solution_rows, Row};

/// Oxigraph leaves `SERVICE ?e` unbound when the rows before it bind `?e`: its reference
/// for the engine's variable endpoint is this union over the endpoints, which a local row
/// naming the failing endpoint makes an error in the engine.
const VARIABLE_ENDPOINT: &str =
    "SELECT * { ?s <http://ex/endpoint> ?e SERVICE ?e { ?s <http://ex/q> ?x } }";
const VARIABLE_ENDPOINT_REFERENCE: &str = "SELECT * { \
    { ?s <http://ex/endpoint> <http://r1/> BIND(<http://r1/> AS ?e) \
      SERVICE <http://r1/> { ?s <http://ex/q> ?x } } UNION \
    { ?s <http://ex/endpoint> <http://r2/> BIND(<http://r2/> AS ?e) \
      SERVICE <http://r2/> { ?s <http://ex/q> ?x } } }";

const QUERIES: [&str; 9] = [
    "SELECT * { ?s <http://ex/p> ?o SERVICE <http://r1/> { ?o <http://ex/q> ?x } }",
    "SELECT * { ?s <http://ex/p> ?o OPTIONAL { SERVICE <http://r1/> { ?o <http://ex/q> ?x } } }",
    "SELECT * { SERVICE <http://r2/> { ?s <http://ex/q> ?x } }",
    VARIABLE_ENDPOINT,
    "SELECT * { ?s <http://ex/p> ?o SERVICE SILENT <http://down/> { ?o <http://ex/q> ?x } }",
    "SELECT * { ?s <http://ex/p> ?o SERVICE <http://r1/> { ?o <http://ex/q> ?x } \
     SERVICE <http://r2/> { ?x <http://ex/q> ?y } }",
    "SELECT ?s (COUNT(*) AS ?n) { ?s <http://ex/p> ?o SERVICE <http://r2/> { ?o ?p ?x \
     FILTER(isLiteral(?x) || ?p = <http://ex/p>) } } GROUP BY ?s",
    "SELECT * { SERVICE <http://r1/> { ?s <http://ex/p> ?o } ?o <http://ex/q> ?x }",
    "SELECT * { ?s <http://ex/p> ?o SERVICE <http://r2/> { { ?o <http://ex/q> ?x } UNION \
     { ?o <http://ex/p> ?x } OPTIONAL { ?x <http://ex/q> ?y } } }",
];

/// Calls an endpoint by running the query on a Quiver store of its graph.
#[derive(Debug)]
struct StoreClient {
    endpoints: Vec<(NamedNode, Arc<Store>)>,
    sent: Mutex<Vec<String>>,
}

impl ServiceClient for StoreClient {
    fn select(
        &self,
        endpoint: &NamedNode,
        queries: &[String],
        _state: &QueryState,
    ) -> Result<Vec<ServiceSolutions>, ServiceError> {
        let Some((_, store)) = self.endpoints.iter().find(|(iri, _)| iri == endpoint) else {
            return Err(ServiceError::Failed("no such endpoint".into()));
        };
        self.sent.lock().unwrap().extend(queries.iter().cloned());
        queries
            .iter()
            .map(|query| {
                let prepared = prepare(store, query, &PrepareOptions::default())
                    .map_err(|e| ServiceError::Failed(format!("{e}: {query}")))?;
                let results = prepared
                    .execute(store, &ExecOptions::default())
                    .map_err(|e| ServiceError::Failed(e.to_string()))?;
                let QueryResults::Solutions(solutions) = results else {
                    return Err(ServiceError::Failed("not solutions".into()));
                };
                Ok(ServiceSolutions {
                    variables: solutions.variables.to_vec(),
                    rows: (0..solutions.len()).map(|r| solutions.row(r)).collect(),
                    bytes: 0,
                })
            })
            .collect()
    }

    fn batch_size(&self) -> usize {
        3
    }
}

/// Oxigraph's service handler over Oxigraph stores.
struct OxigraphHandler {
    endpoints: Vec<(NamedNode, oxigraph::store::Store)>,
}

#[derive(Debug, thiserror::Error)]
#[error("no such endpoint")]
struct NoEndpoint;

impl oxigraph::sparql::DefaultServiceHandler for OxigraphHandler {
    type Error = NoEndpoint;

    fn handle(
        &self,
        service_name: &NamedNode,
        pattern: &spargebra::algebra::GraphPattern,
        _base_iri: Option<&oxiri::Iri<String>>,
    ) -> Result<oxigraph::sparql::QuerySolutionIter<'static>, NoEndpoint> {
        let (_, store) = self
            .endpoints
            .iter()
            .find(|(iri, _)| iri == service_name)
            .ok_or(NoEndpoint)?;
        let query = spargebra::Query::Select {
            dataset: None,
            pattern: pattern.clone(),
            base_iri: None,
        };
        let results = oxigraph::sparql::SparqlEvaluator::new()
            .for_query(query)
            .on_store(store)
            .execute()
            .expect("the remote query runs");
        let oxigraph::sparql::QueryResults::Solutions(solutions) = results else {
            panic!("not solutions")
        };
        let variables: Arc<[Variable]> = solutions.variables().into();
        let rows: Vec<_> = solutions.map(|s| s.expect("a solution")).collect();
        Ok(oxigraph::sparql::QuerySolutionIter::new(
            variables,
            rows.into_iter().map(Ok),
        ))
    }
}

fn triples_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec((0..6_usize, 0..2_usize, 0..10_usize), 1..25).prop_map(|triples| {
        triples
            .into_iter()
            .map(|(s, p, o)| {
                let object = if o < 6 {
                    format!("<http://ex/n{o}>")
                } else {
                    format!("\"v{}\"", o - 6)
                };
                format!(
                    "<http://ex/n{s}> <http://ex/{}> {object} .\n",
                    ["p", "q"][p]
                )
            })
            .collect()
    })
}

/// Which endpoint each of a few local subjects names.
fn endpoints_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec((0..6_usize, 0..3_usize), 0..6).prop_map(|links| {
        links
            .into_iter()
            .map(|(s, e)| {
                let endpoint = ["http://r1/", "http://r2/", "http://down/"][e];
                format!("<http://ex/n{s}> <http://ex/endpoint> <{endpoint}> .\n")
            })
            .collect()
    })
}

fn oxigraph_store(text: &str) -> oxigraph::store::Store {
    let store = oxigraph::store::Store::new().unwrap();
    store
        .load_from_slice(oxigraph::io::RdfFormat::NTriples, text.as_bytes())
        .unwrap();
    store
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort();
    rows
}

fn run_case(local: &str, r1: &str, r2: &str) -> Result<(), TestCaseError> {
    let r1_iri = NamedNode::new_unchecked("http://r1/");
    let r2_iri = NamedNode::new_unchecked("http://r2/");
    let store = load(local);
    let client = Arc::new(StoreClient {
        endpoints: vec![
            (r1_iri.clone(), Arc::new(load(r1))),
            (r2_iri.clone(), Arc::new(load(r2))),
        ],
        sent: Mutex::default(),
    });
    let oxigraph = oxigraph_store(local);
    let handler = || OxigraphHandler {
        endpoints: vec![
            (r1_iri.clone(), oxigraph_store(r1)),
            (r2_iri.clone(), oxigraph_store(r2)),
        ],
    };
    for query in QUERIES {
        let prepared = prepare(&store, query, &PrepareOptions::default())
            .map_err(|e| TestCaseError::fail(format!("{query}: {e}")))?;
        let options = ExecOptions {
            service: Some(client.clone()),
            ..ExecOptions::default()
        };
        let results = prepared.execute(&store, &options);
        if query == VARIABLE_ENDPOINT && local.contains("<http://down/>") {
            let error = results.err().map(|e| e.to_string()).unwrap_or_default();
            prop_assert!(error.contains("<http://down/>"), "{}: {}", query, error);
            continue;
        }
        let results = results.map_err(|e| TestCaseError::fail(format!("{query}: {e}")))?;
        let QueryResults::Solutions(solutions) = results else {
            return Err(TestCaseError::fail("not solutions"));
        };
        let (vars, ours) = solution_rows(&solutions);
        let reference = if query == VARIABLE_ENDPOINT {
            VARIABLE_ENDPOINT_REFERENCE
        } else {
            query
        };
        let theirs = oxigraph::sparql::SparqlEvaluator::new()
            .with_default_service_handler(handler())
            .parse_query(reference)
            .unwrap()
            .on_store(&oxigraph)
            .execute()
            .map_err(|e| TestCaseError::fail(format!("Oxigraph on {reference}: {e}")))?;
        let oxigraph::sparql::QueryResults::Solutions(solutions) = theirs else {
            return Err(TestCaseError::fail("Oxigraph: not solutions"));
        };
        let theirs = solutions
            .map(|s| {
                let s =
                    s.map_err(|e| TestCaseError::fail(format!("Oxigraph on {reference}: {e}")))?;
                Ok(vars
                    .iter()
                    .map(|v| s.get(v.as_str()).map(|t| t.to_string()))
                    .collect())
            })
            .collect::<Result<Vec<Row>, TestCaseError>>()?;
        prop_assert_eq!(
            sorted(ours),
            sorted(theirs),
            "{}\nlocal:\n{}r1:\n{}r2:\n{}",
            query,
            local,
            r1,
            r2
        );
    }
    Ok(())
}

#[test]
fn service_answers_agree_with_oxigraph() {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        triples_strategy(),
        endpoints_strategy(),
        triples_strategy(),
        triples_strategy(),
    );
    runner
        .run(&strategy, |(local, links, r1, r2)| {
            run_case(&format!("{local}{links}"), &r1, &r2)
        })
        .unwrap();
}

#[test]
fn a_bind_join_sends_batches_of_the_distinct_bindings() {
    let local: String = (0..10)
        .map(|i| format!("<http://ex/a{}> <http://ex/p> <http://ex/n{i}> .\n", i % 2))
        .collect();
    let remote: String = (0..10)
        .map(|i| format!("<http://ex/n{i}> <http://ex/q> \"{i}\" .\n"))
        .collect();
    let store = load(&local);
    let client = Arc::new(StoreClient {
        endpoints: vec![(
            NamedNode::new_unchecked("http://r1/"),
            Arc::new(load(&remote)),
        )],
        sent: Mutex::default(),
    });
    let query = "SELECT * { ?s <http://ex/p> ?o SERVICE <http://r1/> { ?o <http://ex/q> ?x } }";
    let prepared = prepare(&store, query, &PrepareOptions::default()).unwrap();
    let options = ExecOptions {
        service: Some(client.clone()),
        ..ExecOptions::default()
    };
    let (results, profile) = prepared.execute_profiled(&store, &options).unwrap();
    let QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    assert_eq!(solutions.len(), 10);
    let sent = client.sent.lock().unwrap().clone();
    // 10 distinct values of ?o in batches of 3: 4 calls, each with a VALUES block.
    assert_eq!(sent.len(), 4, "{sent:#?}");
    assert!(sent.iter().all(|q| q.contains("VALUES")), "{sent:#?}");
    let explained = quiver_sparql::explain::render(&profile);
    assert!(
        explained.contains("SERVICE <http://r1/>: 4 calls"),
        "{explained}"
    );
}

#[test]
fn without_a_client_service_is_refused_and_silent_is_one_empty_solution() {
    let store = load("<http://ex/a> <http://ex/p> <http://ex/b> .\n");
    let run = |query: &str| {
        prepare(&store, query, &PrepareOptions::default())
            .unwrap()
            .execute(&store, &ExecOptions::default())
            .map(|results| match results {
                QueryResults::Solutions(solutions) => solutions.len(),
                _ => panic!("not solutions"),
            })
    };
    let error = run("SELECT * { SERVICE <http://r1/> { ?s ?p ?o } }").unwrap_err();
    assert!(matches!(error, QueryError::ServiceRefused(_)), "{error}");
    assert!(error.to_string().contains("<http://r1/>"), "{error}");
    assert_eq!(
        run("SELECT * { ?s ?p ?o SERVICE SILENT <http://r1/> { ?s ?q ?x } }").unwrap(),
        1
    );
    let error = run("SELECT * { SERVICE ?e { ?s ?p ?o } }").unwrap_err();
    assert!(error.to_string().contains("unbound"), "{error}");
    // SILENT: an endpoint nothing binds, or a literal, is one empty solution.
    assert_eq!(
        run("SELECT * { SERVICE SILENT ?e { ?s ?p ?o } }").unwrap(),
        1
    );
    let literal = "SELECT * { ?s ?p ?o BIND(\"x\" AS ?e) SERVICE ?e { ?s ?q ?v } }";
    let error = run(literal).unwrap_err();
    assert!(error.to_string().contains("not an IRI"), "{error}");
    assert_eq!(
        run(&literal.replace("SERVICE", "SERVICE SILENT")).unwrap(),
        1
    );
}

#[test]
fn a_limit_over_a_service_alone_is_sent_to_the_endpoint() {
    let remote: String = (0..50)
        .map(|i| format!("<http://ex/n{i}> <http://ex/q> \"{i}\" .\n"))
        .collect();
    let store = load("<http://ex/a> <http://ex/p> <http://ex/b> .\n");
    let client = Arc::new(StoreClient {
        endpoints: vec![(
            NamedNode::new_unchecked("http://r1/"),
            Arc::new(load(&remote)),
        )],
        sent: Mutex::default(),
    });
    let options = ExecOptions {
        service: Some(client.clone()),
        ..ExecOptions::default()
    };
    for (query, rows, asked) in [
        (
            "SELECT * { SERVICE <http://r1/> { ?s ?p ?o } } LIMIT 2",
            2,
            "LIMIT 2",
        ),
        (
            "SELECT * { SERVICE <http://r1/> { ?s ?p ?o } } LIMIT 2 OFFSET 5",
            2,
            "LIMIT 7",
        ),
        ("ASK { SERVICE <http://r1/> { ?s ?p ?o } }", 0, "LIMIT 1"),
    ] {
        client.sent.lock().unwrap().clear();
        let results = prepare(&store, query, &PrepareOptions::default())
            .unwrap()
            .execute(&store, &options)
            .unwrap();
        match results {
            QueryResults::Solutions(solutions) => assert_eq!(solutions.len(), rows, "{query}"),
            QueryResults::Boolean(answer) => assert!(answer, "{query}"),
            QueryResults::Graph(_) => unreachable!(),
        }
        let sent = client.sent.lock().unwrap().clone();
        assert_eq!(sent.len(), 1, "{query}");
        assert!(sent[0].contains(asked), "{query}: sent {}", sent[0]);
    }
}
