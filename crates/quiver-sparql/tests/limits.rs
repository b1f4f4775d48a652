//! Every query is bounded: each operator's own loop checks for cancellation (a test hook
//! cancels at the first check inside the operator, past its entry, and the query must
//! stop with `Cancelled` within 2 s), the memory budget stops what grows with rows and is
//! given back after each query, LIMIT stops exploration early, ORDER BY + LIMIT (top-k)
//! equals the full sort sliced, and errors inside EXISTS stop the query.

use crate::support;

use std::collections::HashSet;
use std::panic::Location;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use quiver_sparql::context::CheckHook;
use quiver_sparql::memory::MemoryBudget;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::Store;

/// Subjects of the test graph: each has a `p` (500 distinct objects), a `q` (300 distinct
/// literals) and an `e` edge to the next subject (a ring, for long path walks).
const N: usize = 20_000;

fn store() -> &'static Store {
    static STORE: OnceLock<Store> = OnceLock::new();
    STORE.get_or_init(|| {
        let mut text = String::new();
        for i in 0..N {
            text.push_str(&format!(
                "<http://x/s{i}> <http://x/p> <http://x/o{}> .\n\
                 <http://x/s{i}> <http://x/q> \"v{}\" .\n\
                 <http://x/s{i}> <http://x/e> <http://x/s{}> .\n",
                i % 500,
                i % 300,
                (i + 1) % N
            ));
        }
        support::load(&text)
    })
}

/// Rows (SELECT), 1/0 (ASK) or triples (CONSTRUCT, DESCRIBE) of `query`.
fn run(query: &str, options: &ExecOptions) -> Result<usize, QueryError> {
    run_on(store(), query, options)
}

/// [`run`] on `store`.
fn run_on(store: &Store, query: &str, options: &ExecOptions) -> Result<usize, QueryError> {
    let prepared = prepare(store, query, &PrepareOptions::default())?;
    Ok(match prepared.execute(store, options)? {
        QueryResults::Solutions(solutions) => solutions.len(),
        QueryResults::Boolean(b) => usize::from(b),
        QueryResults::Graph(triples) => triples.len(),
    })
}

type Site = (String, u32);

/// Where the operator boundary checks are: every check a one-row VALUES query makes (its
/// operators have no loop long enough to check inside).
fn boundary_sites() -> HashSet<Site> {
    let sites = Arc::new(Mutex::new(HashSet::new()));
    let recorded = sites.clone();
    let options = ExecOptions {
        check_hook: Some(CheckHook(Arc::new(move |location: &Location, _| {
            recorded
                .lock()
                .unwrap()
                .insert((location.file().to_owned(), location.line()));
            false
        }))),
        ..ExecOptions::default()
    };
    assert_eq!(run("SELECT * { VALUES ?x { 1 } }", &options).unwrap(), 1);
    let sites = sites.lock().unwrap().clone();
    assert!(!sites.is_empty(), "the boundary of an operator must check");
    sites
}

/// Cancels `query` at its first check inside a source file ending in `file`, other than
/// an operator boundary, and expects it to stop with `Cancelled` within 2 s.
#[track_caller]
fn cancels_inside(query: &str, file: &'static str) {
    cancels_inside_any(query, &[file]);
}

/// [`cancels_inside`] with the check in any of `files` (an operator whose loops run in
/// morsels checks between them, in `exec/parallel.rs`).
#[track_caller]
fn cancels_inside_any(query: &str, files: &[&'static str]) {
    let file = files.join(" or ");
    let files = files.to_vec();
    // The query must complete without the hook.
    run(query, &ExecOptions::default()).unwrap_or_else(|e| panic!("{query}: {e}"));
    let boundary = boundary_sites();
    let fired: Arc<Mutex<Option<(Site, Instant)>>> = Arc::default();
    let record = fired.clone();
    let options = ExecOptions {
        check_hook: Some(CheckHook(Arc::new(move |location: &Location, _| {
            let site = (location.file().to_owned(), location.line());
            let mut fired = record.lock().unwrap();
            if fired.is_none()
                && files.iter().any(|file| site.0.ends_with(file))
                && !boundary.contains(&site)
            {
                *fired = Some((site, Instant::now()));
                return true;
            }
            false
        }))),
        ..ExecOptions::default()
    };
    let result = run(query, &options);
    let ended = Instant::now();
    let fired = fired.lock().unwrap().clone();
    let Some((site, at)) = fired else {
        panic!("{query}: no check inside {file} (result {result:?})");
    };
    assert!(
        matches!(result, Err(QueryError::Cancelled)),
        "{query}: cancelled at {site:?} but got {result:?}"
    );
    assert!(
        ended - at < Duration::from_secs(2),
        "{query}: took {:?} to stop",
        ended - at
    );
}

#[test]
fn exploration_checks_inside_its_steps() {
    cancels_inside("SELECT * { ?s <http://x/p> ?o }", "exec/bgp/apply.rs");
}

#[test]
fn one_long_path_walk_checks_inside() {
    cancels_inside(
        "SELECT * { <http://x/s0> (<http://x/e>|^<http://x/e>)* ?y }",
        "exec/path/walker.rs",
    );
}

#[test]
fn hash_join_and_minus_check_inside() {
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o { SELECT ?s ?v { ?s <http://x/q> ?v } } }",
        "exec/join.rs",
    );
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o MINUS { ?s <http://x/q> \"v1\" } }",
        "exec/minus.rs",
    );
}

#[test]
fn filter_extend_and_order_by_check_inside() {
    cancels_inside_any(
        "SELECT * { ?s <http://x/p> ?o FILTER(?o != <http://x/o1>) }",
        &["exec/filter.rs", "exec/id_filter.rs"],
    );
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o FILTER(STRSTARTS(STR(?o), \"http://x/o1\")) }",
        "exec/id_filter.rs",
    );
    cancels_inside_any(
        "SELECT * { ?s <http://x/q> ?v OPTIONAL { ?s <http://x/p> ?o } \
         FILTER(STRSTARTS(?v, \"v\")) }",
        &["exec/id_filter.rs", "exec/parallel.rs"],
    );
    cancels_inside_any(
        "SELECT * { ?s <http://x/p> ?o . ?s <http://x/q> ?v FILTER(?o != ?v) }",
        &["exec/filter.rs", "exec/pair_filter.rs"],
    );
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o BIND(STR(?o) AS ?t) }",
        "exec/extend.rs",
    );
    cancels_inside_any(
        "SELECT * { ?s <http://x/p> ?o } ORDER BY ?o",
        &["exec/order_by.rs", "exec/sort_key.rs", "exec/parallel.rs"],
    );
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o } ORDER BY STR(?o)",
        "exec/order_by.rs",
    );
}

#[test]
fn top_k_checks_inside() {
    cancels_inside_any(
        "SELECT * { ?s <http://x/p> ?o } ORDER BY DESC(?o) LIMIT 5",
        &["exec/top_k.rs", "exec/sort_key.rs", "exec/parallel.rs"],
    );
    cancels_inside(
        "SELECT * { ?s <http://x/p> ?o } ORDER BY DESC(STR(?o)) LIMIT 5",
        "exec/top_k.rs",
    );
}

#[test]
fn group_by_checks_inside() {
    cancels_inside_any(
        "SELECT ?o (SAMPLE(?s) AS ?n) { ?s <http://x/p> ?o } GROUP BY ?o",
        &["exec/group/mod.rs", "exec/parallel.rs"],
    );
    // Counts read from the index, group by group.
    cancels_inside(
        "SELECT ?o (COUNT(*) AS ?n) { ?s <http://x/p> ?o } GROUP BY ?o",
        "exec/index_aggregate.rs",
    );
}

#[test]
fn distinct_union_and_values_check_inside() {
    cancels_inside(
        "SELECT DISTINCT ?s ?o { ?s <http://x/p> ?o }",
        "exec/distinct.rs",
    );
    cancels_inside(
        "SELECT * { { ?s <http://x/p> ?o } UNION { ?s <http://x/q> ?o } }",
        "exec/union.rs",
    );
    let values: String = (0..6000).map(|i| format!("<http://x/v{i}> ")).collect();
    cancels_inside(
        &format!("SELECT * {{ VALUES ?v {{ {values} }} }}"),
        "exec/values.rs",
    );
}

#[test]
fn construct_and_describe_check_inside() {
    cancels_inside(
        "CONSTRUCT { ?o <http://x/r> ?s } WHERE { ?s <http://x/p> ?o }",
        "engine/construct.rs",
    );
    cancels_inside("DESCRIBE ?s WHERE { ?s <http://x/p> ?o }", "describe.rs");
}

#[test]
fn a_cancel_inside_row_by_row_exists_is_an_error_not_an_answer() {
    // The pattern's filter makes a fresh term, so EXISTS runs once per row; the hook
    // cancels well inside that loop (every row checks at least once).
    let query = "SELECT * { ?s <http://x/p> ?o \
                 FILTER EXISTS { ?s <http://x/q> ?v FILTER(?v != STRUUID()) } }";
    assert_eq!(run(query, &ExecOptions::default()).unwrap(), N);
    let options = ExecOptions {
        check_hook: Some(CheckHook(Arc::new(|_: &Location, n| n >= N as u64 / 2))),
        ..ExecOptions::default()
    };
    let result = run(query, &options);
    assert!(matches!(result, Err(QueryError::Cancelled)), "{result:?}");
}

/// A pattern inside EXISTS that fails (a SERVICE with no client to call it) fails the
/// query: the expression evaluator sees a boolean, so the error is recorded and returned.
#[test]
fn a_failing_pattern_inside_exists_is_an_error() {
    for query in [
        "SELECT * { ?s <http://x/p> ?o FILTER NOT EXISTS { SERVICE <http://remote/> { ?s ?a ?b } } }",
        "SELECT * { ?s <http://x/p> ?o FILTER EXISTS { SERVICE <http://remote/> { ?s ?a ?b } } }",
        "SELECT * { ?s <http://x/p> ?o BIND(EXISTS { SERVICE <http://remote/> { ?s ?a ?b } } AS ?b) }",
    ] {
        let result = run(query, &ExecOptions::default());
        assert!(
            matches!(result, Err(QueryError::ServiceRefused(ref m)) if m.contains("<http://remote/>")),
            "{query}: {result:?}"
        );
    }
}

#[test]
fn a_real_cancel_flag_stops_a_long_query() {
    let store = store();
    let cancel = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = cancel.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
        Instant::now()
    });
    // Each of the 20,000 rows walks the whole ring: 400 M steps, seconds, far longer than
    // 50 ms (40 rows, 0.8 M steps, once took 43 ms, and finished before the flag).
    let query = "SELECT (COUNT(*) AS ?n) { ?s <http://x/p> ?o . ?s <http://x/e>* ?y }";
    let result = run_on(
        store,
        query,
        &ExecOptions {
            cancel: Some(cancel),
            ..ExecOptions::default()
        },
    );
    let cancelled_at = canceller.join().unwrap();
    assert!(matches!(result, Err(QueryError::Cancelled)), "{result:?}");
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
}

/// Runs `query` under a budget of `limit` bytes; the budget must be back at zero after.
fn run_with_budget(query: &str, limit: usize) -> Result<usize, QueryError> {
    let result = run_on_budget(store(), query, limit);
    if let Ok((_, peak)) = result {
        assert!(peak > 0, "{query}: nothing was charged");
    }
    result.map(|(rows, _)| rows)
}

/// [`run_on`] under a budget of `limit` bytes, which must be back at zero after: the rows
/// and the budget's peak.
fn run_on_budget(store: &Store, query: &str, limit: usize) -> Result<(usize, usize), QueryError> {
    let budget = MemoryBudget::new(Some(limit));
    let result = run_on(
        store,
        query,
        &ExecOptions {
            budget: Some(budget.clone()),
            ..ExecOptions::default()
        },
    );
    assert_eq!(
        budget.used(),
        0,
        "{query}: reservations left after the query"
    );
    result.map(|rows| (rows, budget.peak()))
}

#[test]
fn the_memory_budget_stops_what_grows_with_rows() {
    let small = 64 * 1024;
    let large = 1 << 30;
    for query in [
        // A cross product of 40 × 20,000 rows.
        "SELECT * { { ?a <http://x/p> <http://x/o1> } { ?b <http://x/p> ?o } }",
        "SELECT * { ?s <http://x/q> ?v } ORDER BY ?v",
        "SELECT ?s (COUNT(*) AS ?n) { ?s <http://x/p> ?o } GROUP BY ?s",
        "SELECT DISTINCT ?s { ?s <http://x/p> ?o }",
        "SELECT * { <http://x/s0> <http://x/e>+ ?y }",
        "CONSTRUCT { ?o <http://x/r> ?s } WHERE { ?s <http://x/p> ?o }",
    ] {
        let rows = run_with_budget(query, large).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert!(rows > 0, "{query}");
        let error = run_with_budget(query, small).unwrap_err();
        assert!(
            matches!(error, QueryError::MemoryLimit { limit } if limit == small),
            "{query}: {error:?}"
        );
        assert!(error.to_string().contains(&small.to_string()), "{error}");
    }
}

#[test]
fn the_result_cap_stops_before_the_table_is_built() {
    // The whole table (20,000 rows of two ids) would overrun a 64 KiB budget; the cap of
    // 100 rows must stop exploration first.
    let options = ExecOptions {
        max_results: Some(100),
        max_memory: Some(64 * 1024),
        ..ExecOptions::default()
    };
    let result = run("SELECT * { ?s <http://x/p> ?o }", &options);
    assert!(
        matches!(result, Err(QueryError::TooManyResults(100))),
        "{result:?}"
    );
    // Under the cap: fine.
    let result = run("SELECT * { ?s <http://x/p> <http://x/o1> }", &options);
    assert_eq!(result.unwrap(), N / 500);
}

/// The rows each exploration step produced, and the result's length.
fn step_rows(query: &str) -> (Vec<usize>, usize) {
    let store = store();
    let prepared = prepare(store, query, &PrepareOptions::default()).unwrap();
    let (results, profile) = prepared
        .execute_profiled(store, &ExecOptions::default())
        .unwrap();
    let QueryResults::Solutions(solutions) = results else {
        panic!("not a SELECT");
    };
    let rows = profile
        .bgps
        .iter()
        .flat_map(|b| b.steps.iter().map(|s| s.rows))
        .collect();
    (rows, solutions.len())
}

#[test]
fn limit_stops_exploration_early() {
    let (all, n) = step_rows("SELECT * { ?s ?p ?o }");
    assert_eq!(n, 3 * N);
    assert!(all.iter().any(|&rows| rows >= N), "{all:?}");
    for query in [
        "SELECT * { ?s ?p ?o } LIMIT 10",
        "SELECT ?s { ?s ?p ?o } LIMIT 10",
        "SELECT * { ?s ?p ?o BIND(STR(?o) AS ?t) } LIMIT 10",
        "SELECT * { ?s <http://x/p> ?o . ?o ^<http://x/p> ?t } LIMIT 5 OFFSET 5",
    ] {
        let (steps, n) = step_rows(query);
        assert_eq!(n, if query.contains("OFFSET") { 5 } else { 10 }, "{query}");
        assert!(
            steps.iter().all(|&rows| rows < 1000),
            "{query}: exploration ran on: {steps:?}"
        );
    }
}

#[test]
fn limit_over_selective_steps_still_finds_enough_rows() {
    // Only subjects with q = "v7" pass the second step: 67 of 20,000; the first bound
    // tried is too small, so exploration must go on until it has them.
    let full = "SELECT ?s { ?s <http://x/p> ?o . ?s <http://x/q> \"v7\" }";
    let (_, all) = step_rows(full);
    assert_eq!(all, N.div_ceil(300));
    let (_, n) = step_rows(&format!("{full} LIMIT 60 OFFSET 3"));
    assert_eq!(n, 60);
    let (_, n) = step_rows(&format!("{full} LIMIT 100 OFFSET 10"));
    assert_eq!(n, all - 10);
    // A filter is not passed through: the LIMIT applies after it.
    let (_, n) = step_rows(
        "SELECT ?s { ?s <http://x/p> ?o FILTER(?o = <http://x/o499>) } LIMIT 30 OFFSET 2",
    );
    assert_eq!(n, 30);
}

/// The SELECT rows of `query` as strings, in order.
fn rows_of(store: &Store, query: &str) -> Vec<Vec<Option<String>>> {
    support::select(store, query)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .1
}

#[test]
fn top_k_equals_the_full_sort_sliced() {
    // Random values with many ties, so the tie order (input order) matters too.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        seed >> 33
    };
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!(
            "<http://t/s{i}> <http://t/a> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n\
             <http://t/s{i}> <http://t/b> \"w{}\" .\n",
            next() % 50,
            next() % 7
        ));
    }
    let store = support::load(&text);
    let body = "?s <http://t/a> ?a . ?s <http://t/b> ?b";
    for keys in [
        "?a",
        "DESC(?a)",
        "?b DESC(?a)",
        "DESC(?b) ?s",
        "(?a * -1) ?b",
    ] {
        let full = rows_of(&store, &format!("SELECT * {{ {body} }} ORDER BY {keys}"));
        assert_eq!(full.len(), 3000);
        for (offset, limit) in [(0, 1), (0, 10), (5, 37), (2990, 20), (0, 5000)] {
            let top = rows_of(
                &store,
                &format!("SELECT * {{ {body} }} ORDER BY {keys} LIMIT {limit} OFFSET {offset}"),
            );
            let expected: Vec<_> = full.iter().skip(offset).take(limit).cloned().collect();
            assert_eq!(
                top, expected,
                "ORDER BY {keys} LIMIT {limit} OFFSET {offset}"
            );
        }
    }
}

#[test]
fn explain_shows_top_k_and_the_pushed_limit() {
    let store = store();
    let prepared = prepare(
        store,
        "SELECT * { ?s <http://x/p> ?o } ORDER BY STR(?o) LIMIT 3",
        &PrepareOptions::default(),
    )
    .unwrap();
    let (_, profile) = prepared
        .execute_profiled(store, &ExecOptions::default())
        .unwrap();
    let text = quiver_sparql::explain::render(&profile);
    assert!(text.contains("top-k: the first 3 of 20000 rows"), "{text}");
    // In object order, ascending or descending, only the first (last) objects' rows are
    // read.
    // (40 subjects share each object; with a second key, all of them are read.)
    for order in ["?o ?s", "DESC(?o) ?s"] {
        let prepared = prepare(
            store,
            &format!("SELECT * {{ ?s <http://x/p> ?o }} ORDER BY {order} LIMIT 3"),
            &PrepareOptions::default(),
        )
        .unwrap();
        let (_, profile) = prepared
            .execute_profiled(store, &ExecOptions::default())
            .unwrap();
        let text = quiver_sparql::explain::render(&profile);
        assert!(
            text.contains("top-k: the first 3 of 40 rows"),
            "{order}: {text}"
        );
    }
    let prepared = prepare(
        store,
        "SELECT * { ?s <http://x/p> ?o } LIMIT 3",
        &PrepareOptions::default(),
    )
    .unwrap();
    let (_, profile) = prepared
        .execute_profiled(store, &ExecOptions::default())
        .unwrap();
    let text = quiver_sparql::explain::render(&profile);
    assert!(text.contains("stops once 3 rows are found"), "{text}");
}

/// A top-k on one key reads only the rows it needs of the last value it takes, however
/// many share it (rows tied on every key may be any of them): its keys are those of the
/// full sort sliced, each row one of the pattern's, and it reads no more rows than asked.
#[test]
fn a_top_k_on_one_key_reads_only_the_rows_it_needs_of_a_shared_value() {
    let store = store();
    // 40 subjects share each object of `p`; each subject has three edges.
    for (body, key, column) in [
        ("?s <http://x/p> ?o", "?o", 1),
        ("?s <http://x/p> ?o", "DESC(?o)", 1),
        ("?s ?p ?o", "?s", 0),
        ("?s ?p ?o", "DESC(?s)", 0),
    ] {
        let full = rows_of(store, &format!("SELECT * {{ {body} }} ORDER BY {key}"));
        let all: HashSet<_> = full.iter().cloned().collect();
        for limit in [1, 2, 3, 39, 41, 100] {
            let query = format!("SELECT * {{ {body} }} ORDER BY {key} LIMIT {limit}");
            let (_, rows, notes) =
                support::select_explained(store, &query, &ExecOptions::default()).unwrap();
            let keys = |rows: &[support::Row]| -> Vec<_> {
                rows.iter().map(|row| row[column].clone()).collect()
            };
            assert_eq!(keys(&rows), keys(&full[..limit]), "{query}");
            assert!(rows.iter().all(|row| all.contains(row)), "{query}");
            assert_eq!(rows.iter().collect::<HashSet<_>>().len(), limit, "{query}");
            let read = format!("top-k: {limit} candidate rows read in");
            assert!(
                notes.iter().any(|n| n.starts_with(&read)),
                "{query}: {notes:?}"
            );
        }
    }
}

/// The `i`-th object of a top-k test's data: IRIs, strings, numbers and language-tagged
/// strings in turn, with repeats.
fn object_of_kind(i: usize) -> String {
    match i % 4 {
        0 => format!("<http://t/o{}>", i * 7 % 113),
        1 => format!("\"s{}\"", i * 13 % 97),
        2 => format!(
            "\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            i * 37 % 101
        ),
        _ => format!("\"l{}\"@en", i % 50),
    }
}

/// A top-k read in object order, ascending or descending, gives the rows of the full sort
/// sliced, over objects of one kind (IRIs, strings) and of kinds that do not sort by id
/// (numbers, language-tagged strings: descending, these come first and are not read in
/// order), ties broken by the subject.
#[test]
fn top_k_read_in_object_order_equals_the_full_sort_sliced() {
    let mut text = String::new();
    for i in 0..600 {
        let object = object_of_kind(i);
        text.push_str(&format!(
            "<http://t/s{i}> <http://t/any> {object} .\n<http://t/s{i}> <http://t/iri> <http://t/o{}> .\n",
            i * 7 % 113
        ));
    }
    let store = support::load(&text);
    for predicate in ["any", "iri"] {
        for order in ["?o ?s", "DESC(?o) ?s", "DESC(?o) DESC(?s)"] {
            let body = format!("?s <http://t/{predicate}> ?o");
            let full = rows_of(&store, &format!("SELECT * {{ {body} }} ORDER BY {order}"));
            assert_eq!(full.len(), 600);
            for limit in [1, 9, 40, 700] {
                let query = format!("SELECT * {{ {body} }} ORDER BY {order} LIMIT {limit}");
                let expected: Vec<_> = full.iter().take(limit).cloned().collect();
                assert_eq!(rows_of(&store, &query), expected, "{query}");
            }
        }
    }
}

/// A top-k read in subject order (`?s <p> ?o` and `?s ?p ?o`), ascending or descending,
/// gives the rows of the full sort sliced, before and after updates add subjects whose ids
/// come after the sorted ones (an IRI that sorts first among them, blank nodes) and edges
/// to subjects already there; subjects with literals of every kind among their objects.
#[test]
fn top_k_read_in_subject_order_equals_the_full_sort_sliced() {
    let mut text = String::new();
    for i in 0..400 {
        let object = object_of_kind(i);
        let subject = match i % 5 {
            4 => format!("_:b{i}"),
            _ => format!("<http://t/s{}>", i * 31 % 400),
        };
        text.push_str(&format!("{subject} <http://t/any> {object} .\n"));
        if i % 3 == 0 {
            text.push_str(&format!(
                "{subject} <http://t/iri> <http://t/o{}> .\n",
                i % 7
            ));
        }
    }
    let mut pair = support::pair::Pair::new(&text);
    let queries = |store: &Store| {
        let mut read_in_order = 0;
        for (body, orders) in [
            (
                "?s <http://t/any> ?o",
                ["?s ?o", "DESC(?s) ?o", "?s DESC(?o)"],
            ),
            (
                "?s ?p ?o",
                ["?s ?p ?o", "DESC(?s) ?p ?o", "?s DESC(?p) DESC(?o)"],
            ),
        ] {
            for order in orders {
                let full = rows_of(store, &format!("SELECT * {{ {body} }} ORDER BY {order}"));
                assert!(full.len() > 300, "{body}: {} rows", full.len());
                for limit in [1, 9, 40, 2000] {
                    let query = format!("SELECT * {{ {body} }} ORDER BY {order} LIMIT {limit}");
                    let expected: Vec<_> = full.iter().take(limit).cloned().collect();
                    assert_eq!(rows_of(store, &query), expected, "{query}");
                    let (_, _, notes) =
                        support::select_explained(store, &query, &ExecOptions::default()).unwrap();
                    read_in_order += notes
                        .iter()
                        .filter(|note| note.contains("read in subject order"))
                        .count();
                }
            }
        }
        read_in_order
    };
    // Blank nodes sort before IRIs: descending, the sorted subjects end with IRIs.
    assert!(
        queries(&pair.quiver) >= 12,
        "the subject order was not read"
    );
    pair.update(
        "INSERT DATA { <http://t/a> <http://t/any> \"first\" . _:n <http://t/iri> <http://t/o1> . \
         <http://t/s0> <http://t/iri> <http://t/o99> . <http://t/z> <http://t/new> 1 }",
    );
    // Ascending, the appended subjects' rows are read beside the sorted ones'.
    assert!(queries(&pair.quiver) >= 6, "the subject order was not read");
}

#[test]
fn limit_takes_only_the_first_neighbours_of_a_long_list() {
    // One class of 50,000 members: its list of instances is 400 KB of ids. Under a LIMIT
    // the walk from the class takes the rows it needs, not a copy of the list, so a
    // 16 KiB budget is enough; the whole walk is not.
    let members = 50_000;
    let mut text = String::new();
    for i in 0..members {
        text.push_str(&format!(
            "<http://c/m{i}> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://c/C> .\n\
             <http://c/m{i}> <http://c/name> \"m{i}\" .\n"
        ));
    }
    let store = support::load(&text);
    let run = |query: &str, limit: usize| run_on_budget(&store, query, limit);
    let small = 16 * 1024;
    for query in [
        "SELECT ?x { ?x a <http://c/C> } LIMIT 10",
        "SELECT ?x ?n { ?x a <http://c/C> . ?x <http://c/name> ?n } LIMIT 10",
        "SELECT ?x ?p { ?x ?p <http://c/C> } LIMIT 10",
    ] {
        let (rows, peak) = run(query, small).unwrap_or_else(|e| panic!("{query}: {e}"));
        assert_eq!(rows, 10, "{query}");
        assert!(peak < small, "{query}: {peak} bytes");
        let whole = query.trim_end_matches(" LIMIT 10");
        assert!(
            matches!(run(whole, small), Err(QueryError::MemoryLimit { .. })),
            "{whole} fits in {small} bytes: the test's list is too short"
        );
        assert_eq!(run(whole, 1 << 30).unwrap().0, members, "{whole}");
    }
}

/// The rows of `query` on `threads` threads, in order, and whether a step under its bound
/// split its rows over the threads.
fn rows_on_threads(query: &str, threads: usize) -> (Vec<support::Row>, bool) {
    let store = store();
    let prepared = prepare(store, query, &PrepareOptions::default()).unwrap();
    let options = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let (results, profile) = prepared.execute_profiled(store, &options).unwrap();
    let QueryResults::Solutions(solutions) = results else {
        panic!("not a SELECT");
    };
    let split = profile
        .bgps
        .iter()
        .any(|bgp| bgp.limit.is_some() && bgp.steps.iter().any(|step| step.split));
    (support::solution_rows(&solutions).1, split)
}

/// A page far into a pattern (OFFSET past the 16 K rows from which a step under a bound
/// runs in morsels) is the same page on one thread and on two, and the same rows as the
/// whole result in its order, sliced: the morsels' rows are cut in the table's order.
#[test]
fn a_page_far_in_is_the_same_on_one_thread_and_on_several() {
    let pattern = "SELECT ?s ?o ?v { ?s <http://x/e> ?o . ?o <http://x/q> ?v }";
    let (whole, _) = rows_on_threads(pattern, 1);
    assert_eq!(whole.len(), N);
    for offset in [0, 17_000, N - 5] {
        let query = format!("{pattern} OFFSET {offset} LIMIT 10");
        let (one, _) = rows_on_threads(&query, 1);
        let (two, split) = rows_on_threads(&query, 2);
        let end = (offset + 10).min(N);
        assert_eq!(one, whole[offset..end], "{query}");
        assert_eq!(two, one, "{query}");
        assert_eq!(split, offset + 10 >= 16_384, "{query}");
    }
}
