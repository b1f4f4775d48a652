//! SPARQL Update evaluation, operation by operation, against Oxigraph: each test runs the
//! same requests on the same data in both engines and compares every quad (blank nodes up
//! to renaming) and the named graphs after each request. Tests of what Oxigraph cannot
//! show (fresh blank nodes, LOAD, limits, change sets, atomicity) check Quiver alone.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oxrdf::{GraphName, NamedNode, Quad};
use quiver_sparql::update::{execute_update, LoadHandler, NoLoad};
use quiver_sparql::{parse_update, ExecOptions, QueryError};
use quiver_store::Store;

use crate::support;

use support::pair::{quiver_dataset, quiver_graphs, Both, Pair};

const DATA: &str = r#"
<http://ex/a> <http://ex/p> <http://ex/b> .
<http://ex/b> <http://ex/p> <http://ex/c> .
<http://ex/a> <http://ex/name> "alice" .
<http://ex/b> <http://ex/name> "bob"@en .
<http://ex/c> <http://ex/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
_:x <http://ex/p> <http://ex/a> .
<http://ex/a> <http://ex/p> <http://ex/b> <http://ex/g1> .
<http://ex/d> <http://ex/q> "in g1" <http://ex/g1> .
<http://ex/e> <http://ex/q> _:y <http://ex/g2> .
_:y <http://ex/name> "anon" <http://ex/g2> .
"#;

const PREFIX: &str = "PREFIX : <http://ex/> ";

fn pair() -> Pair {
    Pair::new(DATA)
}

/// Runs `requests` one after the other in both engines (each must succeed in both).
fn run_all(requests: &[&str]) -> Pair {
    let mut pair = pair();
    for request in requests {
        let text = format!("{PREFIX}{request}");
        if let Both::Failed(ours, theirs) = pair.update(&text) {
            panic!("{text}\nfailed in both: {ours} / {theirs}");
        }
    }
    pair
}

/// Runs `request`, which must fail in both engines, leaving the data unchanged.
fn fails(request: &str) -> String {
    let mut pair = pair();
    let before = quiver_dataset(&pair.quiver);
    let text = format!("{PREFIX}{request}");
    match pair.update(&text) {
        Both::Failed(ours, _) => {
            assert_eq!(quiver_dataset(&pair.quiver), before);
            ours
        }
        Both::Done(_) => panic!("{text}: succeeded"),
    }
}

#[test]
fn insert_data_into_the_default_and_named_graphs() {
    run_all(&[
        "INSERT DATA { :a :p :z . :new :p \"x\"@fr . GRAPH :g3 { :s :p 1.5 } }",
        "INSERT DATA { :a :p :b }",
        "INSERT DATA { GRAPH :g1 { :a :p :b . :a :p :c } }",
    ]);
}

#[test]
fn insert_data_blank_nodes_are_fresh() {
    let pair = run_all(&["INSERT DATA { _:x :p :a . _:x :q _:z . GRAPH :g1 { _:x :q \"1\" } }"]);
    // Four blank nodes in all: the two of the data, one new for `_:x`, one for `_:z`.
    let dataset = quiver_dataset(&pair.quiver);
    let blanks: std::collections::BTreeSet<String> = dataset
        .iter()
        .flat_map(|q| [q.subject.to_string(), q.object.to_string()])
        .filter(|t| t.starts_with("_:"))
        .collect();
    assert_eq!(blanks.len(), 4, "{blanks:?}");
    // Applying the same request twice adds new nodes each time.
    let mut pair = pair;
    let before = pair.quiver.triples();
    pair.update(&format!("{PREFIX}INSERT DATA {{ _:x :p :a }}"));
    pair.update(&format!("{PREFIX}INSERT DATA {{ _:x :p :a }}"));
    assert_eq!(pair.quiver.triples(), before + 2);
}

#[test]
fn delete_data_removes_only_what_is_there() {
    run_all(&[
        "DELETE DATA { :a :p :b . :a :name \"alice\" . :nothing :p :b }",
        "DELETE DATA { GRAPH :g1 { :a :p :b } GRAPH :g9 { :a :p :b } }",
        "DELETE DATA { :b :name \"bob\" }",
        "DELETE DATA { :c :age 42 }",
    ]);
}

#[test]
fn deleting_the_last_quad_keeps_the_graph() {
    let pair = run_all(&["DELETE DATA { GRAPH :g1 { :a :p :b . :d :q \"in g1\" } }"]);
    assert!(quiver_graphs(&pair.quiver).contains(&"<http://ex/g1>".to_owned()));
}

#[test]
fn delete_insert_where() {
    run_all(&[
        "DELETE { ?s :p ?o } INSERT { ?o :back ?s } WHERE { ?s :p ?o }",
        "INSERT { GRAPH :copy { ?s ?p ?o } } WHERE { ?s ?p ?o FILTER(isIRI(?s)) }",
        "DELETE { ?s :name ?n } WHERE { ?s :name ?n FILTER(lang(?n) = 'en') }",
        "INSERT { ?s :label ?l } WHERE { ?s :name ?n BIND(CONCAT(STR(?n), '!') AS ?l) }",
        "INSERT { ?s :count ?c } WHERE { { SELECT ?s (COUNT(*) AS ?c) { ?s ?p ?o } GROUP BY ?s } }",
    ]);
}

#[test]
fn delete_where() {
    run_all(&[
        "DELETE WHERE { ?s :p ?o . ?o :p ?z }",
        "DELETE WHERE { GRAPH ?g { ?s :q ?o } }",
        "DELETE WHERE { :nothing ?p ?o }",
    ]);
}

#[test]
fn templates_skip_unbound_and_ill_placed_terms() {
    run_all(&[
        // ?o is unbound where the OPTIONAL fails; literals cannot be subjects.
        "INSERT { ?s :maybe ?o . ?n :p :x } WHERE { ?s :name ?n OPTIONAL { ?s :p ?o } }",
        // A variable predicate bound to a literal, a graph bound to a literal.
        "INSERT { ?s ?n :x . GRAPH ?n { ?s :p :x } } WHERE { ?s :name ?n }",
        "DELETE { ?s :p ?o } WHERE { ?s :name ?n OPTIONAL { ?s :nope ?o } }",
        "INSERT { :k :v 1 } WHERE { ?s :nope ?o }",
        "INSERT { :k :v 2 } WHERE { ?s :p ?o }",
        "INSERT { :k :v ?unbound } WHERE { ?s :p ?o }",
    ]);
}

#[test]
fn insert_templates_make_blank_nodes_per_solution() {
    let pair = run_all(&["INSERT { _:n :of ?s . _:n :kind \"k\" } WHERE { ?s :p ?o }"]);
    // `?s :p ?o` has three solutions in the default graph: three new nodes.
    let dataset = quiver_dataset(&pair.quiver);
    let of = NamedNode::new("http://ex/of").unwrap();
    let nodes: std::collections::BTreeSet<String> = dataset
        .iter()
        .filter(|q| q.predicate == of.as_ref())
        .map(|q| q.subject.to_string())
        .collect();
    assert_eq!(nodes.len(), 3, "{nodes:?}");
}

#[test]
fn with_using_and_using_named() {
    run_all(&[
        "WITH :g1 DELETE { ?s ?p ?o } INSERT { ?o ?p ?s } WHERE { ?s ?p ?o }",
        "WITH :g1 INSERT { ?s :seen ?g } WHERE { GRAPH ?g { ?s ?p ?o } }",
        "INSERT { ?s :from-g1 ?o } USING :g1 WHERE { ?s ?p ?o }",
        "INSERT { ?s :merged ?o } USING :g1 USING :g2 WHERE { ?s ?p ?o }",
        "INSERT { ?s :named ?g } USING NAMED :g2 WHERE { GRAPH ?g { ?s ?p ?o } }",
        "INSERT { ?s :nothing ?o } USING NAMED :g2 WHERE { ?s ?p ?o }",
        "WITH :g2 DELETE { ?s ?p ?o } USING :g1 WHERE { ?s ?p ?o }",
        "INSERT { ?s :missing ?o } USING :nowhere WHERE { ?s ?p ?o }",
    ]);
}

#[test]
fn operations_see_the_ones_before_them() {
    run_all(&[
        "INSERT DATA { :n1 :next :n2 } ; INSERT { ?b :next :n3 } WHERE { ?a :next ?b } ; \
         DELETE WHERE { :n1 ?p ?o } ; INSERT { ?x :last true } WHERE { ?x :next :n3 }",
        "CLEAR DEFAULT ; INSERT { ?s :after-clear ?o } WHERE { ?s ?p ?o }",
    ]);
}

#[test]
fn snapshot_semantics_within_one_operation() {
    // Each solution is computed on the version before the operation: the inserts do not
    // feed the pattern.
    run_all(&["INSERT { ?o :p ?s } WHERE { ?s :p ?o }"]);
    run_all(&["DELETE { ?s :p ?o } INSERT { ?s :p ?s } WHERE { ?s :p ?o }"]);
}

#[test]
fn clear_and_drop() {
    run_all(&["CLEAR GRAPH :g1"]);
    run_all(&["DROP GRAPH :g1"]);
    run_all(&["CLEAR DEFAULT"]);
    run_all(&["DROP DEFAULT"]);
    run_all(&["CLEAR NAMED"]);
    run_all(&["DROP NAMED"]);
    run_all(&["CLEAR ALL"]);
    run_all(&["DROP ALL"]);
    run_all(&["CLEAR SILENT GRAPH :nowhere", "DROP SILENT GRAPH :nowhere"]);
    run_all(&["CLEAR GRAPH :g1", "DROP GRAPH :g1", "DROP SILENT GRAPH :g1"]);
}

#[test]
fn clear_or_drop_of_a_missing_graph_fails() {
    for request in ["CLEAR GRAPH :nowhere", "DROP GRAPH :nowhere"] {
        let error = fails(request);
        assert!(
            error.contains("graph <http://ex/nowhere> does not exist"),
            "{error}"
        );
    }
}

#[test]
fn create() {
    run_all(&[
        "CREATE GRAPH :new",
        "INSERT DATA { GRAPH :new { :a :p :b } }",
    ]);
    run_all(&[
        "CREATE GRAPH :new",
        "CREATE SILENT GRAPH :new",
        "DROP GRAPH :new",
    ]);
    run_all(&["CREATE SILENT GRAPH :g1"]);
    let error = fails("CREATE GRAPH :g1");
    assert!(
        error.contains("graph <http://ex/g1> already exists"),
        "{error}"
    );
}

#[test]
fn add_copy_move() {
    run_all(&["ADD :g1 TO :g2"]);
    run_all(&["ADD DEFAULT TO :g1"]);
    run_all(&["ADD :g1 TO DEFAULT"]);
    run_all(&["COPY :g1 TO :g2"]);
    run_all(&["COPY DEFAULT TO :g3"]);
    run_all(&["COPY :g2 TO DEFAULT"]);
    run_all(&["MOVE :g1 TO :g2"]);
    run_all(&["MOVE DEFAULT TO :g1"]);
    run_all(&["MOVE :g2 TO DEFAULT"]);
    run_all(&["MOVE :g1 TO :g1", "COPY DEFAULT TO DEFAULT"]);
    run_all(&["COPY SILENT :nowhere TO :g1", "ADD SILENT :nowhere TO :g2"]);
    let error = fails("MOVE :nowhere TO :g1");
    assert!(error.contains("does not exist"), "{error}");
}

#[test]
fn a_failing_operation_undoes_the_whole_request() {
    let error = fails("INSERT DATA { :a :p :new } ; DROP GRAPH :g1 ; CREATE GRAPH :g2");
    assert!(error.contains("already exists"), "{error}");
}

#[test]
fn one_change_set_per_operation_replays_to_the_final_store() {
    let mut pair = pair();
    let text = format!(
        "{PREFIX}INSERT DATA {{ :n :p \"new\" . GRAPH :g4 {{ _:b :p :n }} }} ; \
         DELETE {{ ?s :p ?o }} INSERT {{ GRAPH :g5 {{ ?s :p ?o }} }} WHERE {{ ?s :p ?o }} ; \
         DROP GRAPH :g1 ; CREATE GRAPH :g6 ; CLEAR GRAPH :g2 ; \
         INSERT DATA {{ :a :name \"alice\" }}"
    );
    let Both::Done(outcome) = pair.update(&text) else {
        panic!("failed");
    };
    assert_eq!(outcome.changes.len(), 6);
    // The last operation inserts a quad that is already there: nothing changes.
    assert!(outcome.changes[5].is_empty(), "{:?}", outcome.changes[5]);
    let original = Pair::new(DATA).quiver;
    let mut replayed = original.clone();
    for changes in &outcome.changes {
        if !changes.is_empty() {
            replayed = replayed.apply(changes).unwrap();
        }
    }
    assert_eq!(quiver_dataset(&replayed), quiver_dataset(&outcome.store));
    assert_eq!(quiver_graphs(&replayed), quiver_graphs(&outcome.store));
    // What changed: 2 inserted by INSERT DATA; 4 moved (deleted and inserted); g1's two
    // triples dropped; g2's two cleared.
    assert_eq!(outcome.inserted, 2 + 4);
    assert_eq!(outcome.deleted, 4 + 2 + 2);
    // The store the request started from is unchanged.
    assert_eq!(quiver_dataset(&original).len(), 10);
}

#[test]
fn an_operation_that_changes_nothing_adds_no_terms() {
    let store = pair().quiver;
    let update = parse_update(
        &format!(
            "{PREFIX}INSERT {{ :k :v 1 }} WHERE {{ ?s :nope ?o }} ; \
             DELETE {{ ?s :p :unknown }} INSERT {{ ?s :new-p ?nothing }} WHERE {{ ?s :p ?o }} ; \
             DELETE DATA {{ :x :y :z }} ; INSERT DATA {{ :a :p :b }}"
        ),
        None,
    )
    .unwrap();
    let outcome = execute_update(&store, &update, &ExecOptions::default(), &NoLoad).unwrap();
    for changes in &outcome.changes {
        assert!(changes.is_empty(), "{changes:?}");
    }
    assert_eq!(outcome.store.terms(), store.terms());
    assert_eq!((outcome.inserted, outcome.deleted), (0, 0));
}

/// A loader serving one N-Triples document and recording what it was asked for.
struct FixedLoader {
    asked: Mutex<Vec<String>>,
}

impl LoadHandler for FixedLoader {
    fn load(&self, source_iri: &str) -> Result<Vec<Quad>, String> {
        self.asked.lock().unwrap().push(source_iri.to_owned());
        if source_iri != "http://ex/data.nt" {
            return Err("no such file".into());
        }
        let s = NamedNode::new("http://ex/loaded").unwrap();
        let p = NamedNode::new("http://ex/p").unwrap();
        let b = oxrdf::BlankNode::new("x").unwrap();
        Ok(vec![
            Quad::new(s.clone(), p.clone(), b.clone(), GraphName::DefaultGraph),
            Quad::new(b, p.clone(), s.clone(), GraphName::DefaultGraph),
            Quad::new(s.clone(), p, s, NamedNode::new("http://ex/own").unwrap()),
        ])
    }
}

fn run_quiver(store: &Store, text: &str, loader: &dyn LoadHandler) -> Result<Store, QueryError> {
    let update = parse_update(&format!("{PREFIX}{text}"), None)?;
    execute_update(store, &update, &ExecOptions::default(), loader).map(|o| o.store)
}

#[test]
fn load_into_the_default_graph_or_a_named_graph() {
    let loader = FixedLoader {
        asked: Mutex::new(Vec::new()),
    };
    let store = pair().quiver;
    let before = store.triples();
    let loaded = run_quiver(&store, "LOAD <http://ex/data.nt>", &loader).unwrap();
    assert_eq!(loaded.triples(), before + 3);
    // The file's `_:x` is a new node, not the store's `_:x`.
    let dataset = quiver_dataset(&loaded);
    let x_subjects = dataset
        .iter()
        .filter(|q| q.subject.to_string() == "_:x")
        .count();
    assert_eq!(x_subjects, 1, "only the data's own _:x keeps its label");
    let into = run_quiver(&store, "LOAD <http://ex/data.nt> INTO GRAPH :g7", &loader).unwrap();
    let g7 = NamedNode::new("http://ex/g7").unwrap();
    let in_g7 = quiver_dataset(&into)
        .iter()
        .filter(|q| q.graph_name == g7.as_ref().into())
        .count();
    assert_eq!(in_g7, 2);
    assert!(quiver_graphs(&into).contains(&"<http://ex/own>".to_owned()));
    // A failing source fails the request, unless SILENT.
    let error = run_quiver(&store, "LOAD <http://ex/missing.nt>", &loader).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("LOAD <http://ex/missing.nt> failed: no such file"),
        "{error}"
    );
    let silent = run_quiver(
        &store,
        "LOAD SILENT <http://ex/missing.nt> INTO GRAPH :g8",
        &loader,
    )
    .unwrap();
    assert_eq!(quiver_dataset(&silent), quiver_dataset(&store));
    assert_eq!(loader.asked.lock().unwrap().len(), 4);
    let error = run_quiver(&store, "LOAD <http://ex/data.nt>", &NoLoad).unwrap_err();
    assert!(matches!(error, QueryError::Update(_)), "{error}");
}

#[test]
fn a_cancelled_or_timed_out_update_fails() {
    let store = pair().quiver;
    let update = parse_update(
        &format!("{PREFIX}INSERT {{ ?s :q ?o }} WHERE {{ ?s ?p ?o }}"),
        None,
    )
    .unwrap();
    let cancelled = ExecOptions {
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..ExecOptions::default()
    };
    let error = execute_update(&store, &update, &cancelled, &NoLoad).unwrap_err();
    assert!(matches!(error, QueryError::Cancelled), "{error}");
    let expired = ExecOptions {
        timeout: Some(Duration::ZERO),
        ..ExecOptions::default()
    };
    let error = execute_update(&store, &update, &expired, &NoLoad).unwrap_err();
    assert!(matches!(error, QueryError::Timeout(_)), "{error}");
}

#[test]
fn the_memory_budget_bounds_the_change_sets() {
    // 2,000 triples copied into a graph: more quads than a 4 KiB budget holds.
    let data: String = (0..2000)
        .map(|i| format!("<http://ex/s{i}> <http://ex/p> \"{i}\" .\n"))
        .collect();
    let store = Pair::new(&data).quiver;
    let update = parse_update("COPY DEFAULT TO <http://ex/g>", None).unwrap();
    let small = ExecOptions {
        max_memory: Some(4096),
        ..ExecOptions::default()
    };
    let error = execute_update(&store, &update, &small, &NoLoad).unwrap_err();
    assert!(matches!(error, QueryError::MemoryLimit { .. }), "{error}");
    let roomy = ExecOptions {
        max_memory: Some(64 << 20),
        ..ExecOptions::default()
    };
    let outcome = execute_update(&store, &update, &roomy, &NoLoad).unwrap();
    assert_eq!(outcome.store.triples(), 4000);
    let update = parse_update(
        "INSERT DATA { <http://ex/a> <http://ex/b> \"a long literal\" }",
        None,
    )
    .unwrap();
    let tiny = ExecOptions {
        max_memory: Some(8),
        ..ExecOptions::default()
    };
    let error = execute_update(&store, &update, &tiny, &NoLoad).unwrap_err();
    assert!(matches!(error, QueryError::MemoryLimit { .. }), "{error}");
}

type Site = (String, u32);

/// The checks `update` makes on a one-triple store: those at operation boundaries.
fn boundary_sites(update: &spargebra::Update) -> std::collections::HashSet<Site> {
    let store = Pair::new("<http://ex/s> <http://ex/p> <http://ex/o> .").quiver;
    let sites = Arc::new(Mutex::new(std::collections::HashSet::new()));
    let recorded = sites.clone();
    let options = ExecOptions {
        check_hook: Some(quiver_sparql::context::CheckHook(Arc::new(
            move |location: &std::panic::Location, _| {
                let site = (location.file().to_owned(), location.line());
                recorded.lock().unwrap().insert(site);
                false
            },
        ))),
        ..ExecOptions::default()
    };
    execute_update(&store, update, &options, &NoLoad).unwrap();
    let sites = sites.lock().unwrap().clone();
    assert!(!sites.is_empty(), "an update must check");
    sites
}

/// Runs `update` on `store` with a check hook that cancels at the first check made in a
/// source file ending in `file`, other than the checks of operation boundaries: the update
/// must stop with `Cancelled` there.
fn cancels_inside(store: &Store, update: &str, file: &'static str) {
    let update = parse_update(update, None).unwrap();
    execute_update(store, &update, &ExecOptions::default(), &NoLoad)
        .unwrap_or_else(|e| panic!("without the hook: {e}"));
    let boundary = boundary_sites(&update);
    let fired = Arc::new(Mutex::new(None));
    let record = fired.clone();
    let options = ExecOptions {
        check_hook: Some(quiver_sparql::context::CheckHook(Arc::new(
            move |location: &std::panic::Location, _| {
                let site = (location.file().to_owned(), location.line());
                let mut fired = record.lock().unwrap();
                if fired.is_none() && site.0.ends_with(file) && !boundary.contains(&site) {
                    *fired = Some(site);
                    return true;
                }
                false
            },
        ))),
        ..ExecOptions::default()
    };
    let result = execute_update(store, &update, &options, &NoLoad).map(|o| o.store.triples());
    assert!(
        fired.lock().unwrap().is_some(),
        "no check inside {file} (result: {result:?} triples)"
    );
    assert!(
        matches!(result, Err(QueryError::Cancelled)),
        "{file}: {result:?}"
    );
}

#[test]
fn the_loops_that_build_change_sets_check_the_limits() {
    let data: String = (0..10_000)
        .map(|i| format!("<http://ex/s{i}> <http://ex/p> <http://ex/o{}> .\n", i % 7))
        .collect();
    let store = Pair::new(&data).quiver;
    // Instantiating the templates per solution, and collecting the quads.
    cancels_inside(&store, "COPY DEFAULT TO <http://ex/g>", "update/modify.rs");
    cancels_inside(&store, "COPY DEFAULT TO <http://ex/g>", "update/builder.rs");
    // Deleting the triples of the default graph.
    cancels_inside(&store, "CLEAR DEFAULT", "update/builder.rs");
    // Checking deletes against the store.
    cancels_inside(
        &store,
        "DELETE { ?s <http://ex/p> ?o } WHERE { ?s <http://ex/p> ?o }",
        "update/builder.rs",
    );
}
