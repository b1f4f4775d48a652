//! The LUBM queries on LUBM-1 and LUBM-10: the published counts, and on LUBM-1 the same
//! rows as the naive evaluator; planner choices on LUBM statistics.

use crate::naive;

use std::path::PathBuf;

use oxrdf::{NamedOrBlankNode, Term, Triple};
use quiver_loader::{load_lubm, NoProgress};
use quiver_lubm::LubmConfig;
use quiver_sparql::planner::StepKind;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::{Direction, Store};
use spargebra::algebra::GraphPattern;
use spargebra::{Query, SparqlParser};

fn shared() -> PathBuf {
    std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn query_text(n: usize) -> String {
    let path = shared().join(format!("queries/lubm-basic/q{n}.rq"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Expected counts from `expected-counts.tsv`, by dataset name.
fn expected_counts(dataset: &str) -> Vec<usize> {
    let text = std::fs::read_to_string(shared().join("lubm/expected-counts.tsv")).unwrap();
    let counts = quiver_lubm::expected::query_counts(&text, dataset)
        .unwrap_or_else(|| panic!("no counts for {dataset}"));
    counts.into_iter().map(|c| c as usize).collect()
}

fn store(universities: u32) -> Store {
    load_lubm(LubmConfig::standard(universities), 2, None, &NoProgress)
        .unwrap()
        .0
}

fn rows(store: &Store, text: &str, threads: usize) -> Vec<String> {
    let prepared = prepare(store, text, &PrepareOptions::default()).unwrap();
    let options = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let QueryResults::Solutions(solutions) = prepared.execute(store, &options).unwrap() else {
        panic!("not a SELECT");
    };
    let mut rows: Vec<String> = (0..solutions.len())
        .map(|r| {
            solutions
                .row(r)
                .iter()
                .map(|t| t.as_ref().map_or("UNBOUND".to_owned(), Term::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    rows.sort();
    rows
}

fn all_triples(store: &Store) -> Vec<Triple> {
    let mut triples = Vec::new();
    store.graph().for_each_triple(|s, p, o| {
        let subject = match store.term(s).unwrap() {
            Term::NamedNode(n) => NamedOrBlankNode::from(n),
            Term::BlankNode(b) => NamedOrBlankNode::from(b),
            Term::Literal(_) | Term::Triple(_) => unreachable!(),
        };
        let Term::NamedNode(predicate) = store.term(store.predicate_term(p)).unwrap() else {
            unreachable!()
        };
        triples.push(Triple::new(subject, predicate, store.term(o).unwrap()));
    });
    triples
}

#[test]
fn lubm1_queries_give_the_reference_counts_and_the_naive_rows() {
    let store = store(1);
    let all = all_triples(&store);
    let triples = naive::Triples::new(&all);
    let expected = expected_counts("lubm1");
    for n in 1..=12 {
        let text = query_text(n);
        let ours = rows(&store, &text, 1);
        assert_eq!(ours.len(), expected[n - 1], "q{n} count");
        assert_eq!(rows(&store, &text, 2), ours, "q{n} with two threads");
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(&text).unwrap() else {
            panic!()
        };
        let GraphPattern::Project { inner, variables } = pattern else {
            panic!()
        };
        let GraphPattern::Bgp { patterns } = *inner else {
            panic!()
        };
        let vars: Vec<String> = variables.iter().map(|v| v.as_str().to_owned()).collect();
        let reference = naive::project(&naive::bgp(&triples, &patterns, Default::default()), &vars);
        assert_eq!(ours, reference, "q{n} rows differ from the naive evaluator");
    }
}

#[test]
fn lubm10_queries_give_the_reference_counts() {
    let store = store(10);
    let expected = expected_counts("lubm10");
    for n in 1..=12 {
        let text = query_text(n);
        assert_eq!(rows(&store, &text, 2).len(), expected[n - 1], "q{n} count");
    }
}

#[test]
fn light_queries_start_from_their_constant_not_the_class_index() {
    let store = store(2);
    for n in [4, 5, 6] {
        let prepared = prepare(&store, &query_text(n), &PrepareOptions::default()).unwrap();
        let (_, profile) = prepared
            .execute_profiled(&store, &ExecOptions::default())
            .unwrap();
        let first = profile.bgps[0].steps[0].step;
        let pattern = &profile.bgps[0].patterns[first.pattern];
        let starts_at_constant =
            matches!(first.kind, StepKind::Walk(_)) && !pattern.contains("22-rdf-syntax-ns#type");
        assert!(
            starts_at_constant,
            "q{n} starts with {first:?} on {pattern}"
        );
    }
    // And a class-only query starts from the class index (a walk in from the class).
    let prepared = prepare(
        &store,
        "SELECT ?x WHERE { ?x a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#FullProfessor> }",
        &PrepareOptions::default(),
    )
    .unwrap();
    let (_, profile) = prepared
        .execute_profiled(&store, &ExecOptions::default())
        .unwrap();
    assert_eq!(
        profile.bgps[0].steps[0].step.kind,
        StepKind::Walk(Direction::In)
    );
}

#[test]
fn a_profile_times_its_steps() {
    // A query's steps read the clock only when profiled: the profile must still have
    // their times, each within the execution's.
    let store = store(1);
    let prepared = prepare(&store, &query_text(2), &PrepareOptions::default()).unwrap();
    let (_, profile) = prepared
        .execute_profiled(&store, &ExecOptions::default())
        .unwrap();
    let steps = &profile.bgps[0].steps;
    assert!(steps.len() > 1);
    let total: f64 = steps.iter().map(|s| s.micros).sum();
    assert!(
        total > 0.0 && total <= profile.execute_micros,
        "steps {total} µs in {} µs",
        profile.execute_micros
    );
}

#[test]
fn user_plans_give_the_same_rows() {
    let store = store(1);
    for n in 1..=7 {
        let plan_path = shared().join(format!("queries/lubm-basic/plans/q{n}.fmt"));
        let plan = std::fs::read_to_string(&plan_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the Wukong plan files ship in shared/queries/lubm-basic/plans)",
                plan_path.display()
            )
        });
        let text = query_text(n);
        let prepared = prepare(
            &store,
            &text,
            &PrepareOptions {
                plan: Some(plan),
                ..Default::default()
            },
        )
        .unwrap();
        let QueryResults::Solutions(solutions) =
            prepared.execute(&store, &ExecOptions::default()).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            solutions.len(),
            rows(&store, &text, 1).len(),
            "q{n} with the OSDI'16 plan"
        );
    }
    let bad = prepare(
        &store,
        &query_text(1),
        &PrepareOptions {
            plan: Some("2 >\n".into()),
            ..Default::default()
        },
    );
    assert!(bad.is_err());
}
