//! Helpers shared by the engine's integration tests: a store loaded from N-Triples or
//! N-Quads text the way a user loads one, and SELECT results as N-Triples strings.
// Each test crate uses its own subset of these helpers.
#![allow(dead_code)]

pub mod knows;
pub mod pair;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use quiver_loader::{load_files, LoadOptions, NoProgress};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

static FILE_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A store of the N-Triples `text`, through the bulk loader.
pub fn load(text: &str) -> Store {
    load_as(text, "nt")
}

/// A store of `text` in the syntax of the file extension `extension` ("nt", "nq", ...).
pub fn load_as(text: &str, extension: &str) -> Store {
    // Tests run in parallel: one file each.
    let path: PathBuf = std::env::temp_dir().join(format!(
        "quiver-test-{}-{}.{extension}",
        std::process::id(),
        FILE_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, text).unwrap();
    let (store, _) = load_files(
        std::slice::from_ref(&path),
        &LoadOptions {
            format: None,
            lenient: false,
            threads: 1,
        },
        None,
        &NoProgress,
    )
    .unwrap_or_else(|e| panic!("loading\n{text}: {e}"));
    let _ = std::fs::remove_file(&path);
    store
}

/// A row of terms in N-Triples syntax, `None` for unbound.
pub type Row = Vec<Option<String>>;

/// The variables, rows and EXPLAIN notes (which operators ran) of a SELECT query.
pub type Explained = (Vec<String>, Vec<Row>, Vec<String>);

/// The variables and rows of a SELECT query run with `options`, and the notes of its
/// EXPLAIN.
pub fn select_explained(
    store: &Store,
    query: &str,
    options: &ExecOptions,
) -> Result<Explained, String> {
    let prepared = prepare(store, query, &PrepareOptions::default()).map_err(|e| e.to_string())?;
    let (results, profile) = prepared
        .execute_profiled(store, options)
        .map_err(|e| e.to_string())?;
    let QueryResults::Solutions(solutions) = results else {
        return Err("not solutions".into());
    };
    let (vars, rows) = solution_rows(&solutions);
    Ok((vars, rows, profile.notes))
}

/// Each of `queries` run on the N-Triples `text` by Quiver (explained) and by Oxigraph:
/// the bags of rows must agree. Adds to `rows` the rows Quiver gave, and to `counted` what
/// `count` finds in each query's EXPLAIN notes (which operators ran).
pub fn explained_rows_agree_with_oxigraph(
    text: &str,
    queries: impl IntoIterator<Item = String>,
    count: impl Fn(&[String]) -> usize,
    (counted, rows): (&std::cell::Cell<usize>, &std::cell::Cell<usize>),
) -> Result<(), proptest::test_runner::TestCaseError> {
    use proptest::test_runner::TestCaseError;
    let (store, oxigraph) = both_stores(text);
    for query in queries {
        let (vars, mut ours, notes) = select_explained(&store, &query, &ExecOptions::default())
            .map_err(TestCaseError::fail)?;
        let mut theirs = oxigraph_rows(&oxigraph, &query, &vars);
        ours.sort();
        theirs.sort();
        counted.set(counted.get() + count(&notes));
        rows.set(rows.get() + ours.len());
        proptest::prop_assert_eq!(&ours, &theirs, "{}\non\n{}", query, text);
    }
    Ok(())
}

/// The number of random cases of a property test: `PROPTEST_CASES`, else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Quiver's store and Oxigraph's of the same N-Triples `text`, for differential tests.
pub fn both_stores(text: &str) -> (Store, oxigraph::store::Store) {
    let oxigraph = oxigraph::store::Store::new().unwrap();
    oxigraph
        .load_from_slice(oxigraph::io::RdfFormat::NTriples, text.as_bytes())
        .unwrap();
    (load(text), oxigraph)
}

/// Runs `check` on random values of `strategy`, as many as [`proptest_cases`] says
/// (`default` unless `PROPTEST_CASES` is set), without a failure file; panics with
/// proptest's report of the smallest failing value. Returns the number of cases.
pub fn check_random<S: proptest::strategy::Strategy>(
    default: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<(), proptest::test_runner::TestCaseError>,
) -> usize {
    let cases = proptest_cases(default);
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    });
    if let Err(error) = runner.run(&strategy, check) {
        panic!("{error}");
    }
    cases as usize
}

/// The variables and rows of a SELECT query, in the engine's order.
pub fn select(store: &Store, query: &str) -> Result<(Vec<String>, Vec<Row>), String> {
    let prepared = prepare(store, query, &PrepareOptions::default()).map_err(|e| e.to_string())?;
    let results = prepared
        .execute(store, &ExecOptions::default())
        .map_err(|e| e.to_string())?;
    let QueryResults::Solutions(solutions) = results else {
        return Err("not solutions".into());
    };
    Ok(solution_rows(&solutions))
}

/// The variables and rows of solutions, in the engine's order.
pub fn solution_rows(solutions: &quiver_sparql::Solutions<'_>) -> (Vec<String>, Vec<Row>) {
    let vars = solutions
        .variables
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect();
    let rows = (0..solutions.len())
        .map(|r| {
            solutions
                .row(r)
                .into_iter()
                .map(|t| t.map(|t| t.to_string()))
                .collect()
        })
        .collect();
    (vars, rows)
}

/// Oxigraph's rows of a SELECT query over `vars`, terms in N-Triples syntax.
pub fn oxigraph_rows(store: &oxigraph::store::Store, query: &str, vars: &[String]) -> Vec<Row> {
    let results = oxigraph::sparql::SparqlEvaluator::new()
        .parse_query(query)
        .unwrap_or_else(|e| panic!("Oxigraph cannot parse\n{query}\n{e}"))
        .on_store(store)
        .execute()
        .unwrap_or_else(|e| panic!("Oxigraph fails on\n{query}\n{e}"));
    let oxigraph::sparql::QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    solutions
        .map(|solution| {
            let solution = solution.unwrap();
            vars.iter()
                .map(|v| solution.get(v.as_str()).map(|t| t.to_string()))
                .collect()
        })
        .collect()
}
