//! EXPLAIN over partitions: what each worker did at each step, checked against the
//! whole store and against what the cluster counts as moved.
//!
//! Over every LUBM query of `queries/` on LUBM-1, on 3 partitions of each executor
//! (timely's workers, and the in-memory reference):
//! - each step's rows, summed over the workers' records, equal the rows of the patterns
//!   the steps so far have matched, counted on the whole store by a `COUNT(*)` query of
//!   their own (for every pattern that starts from one empty row, without a LIMIT);
//! - what the records say was moved adds up to what the cluster counted for the query,
//!   also where an intersection fetched its partner lists from their owners;
//! - an execution not asked to explain carries no records.

use crate::common;

use std::sync::Arc;

use quiver_cluster::replicas::Replication;
use quiver_cluster::{LocalPartitions, TimelyPartitions};
use quiver_sparql::exec::BgpProfile;
use quiver_sparql::partitions::{BgpPartitions, Exchanged, WorkerRole, WorkerStep};
use quiver_sparql::step::StepKind;
use quiver_sparql::{prepare, ExecOptions, ExecutionProfile, PrepareOptions, QueryResults};
use quiver_store::{Direction, Store};

/// The profile of `query` on `store`, its basic graph patterns run by `partitions`.
fn profile(
    store: &Store,
    query: &str,
    partitions: Arc<dyn BgpPartitions>,
    explain: bool,
) -> ExecutionProfile {
    let prepare_options = PrepareOptions {
        partitions: Some(Arc::clone(&partitions)),
        ..PrepareOptions::default()
    };
    let prepared = prepare(store, query, &prepare_options).unwrap();
    let options = ExecOptions {
        partitions: Some(partitions),
        explain,
        ..ExecOptions::default()
    };
    prepared.execute_profiled(store, &options).unwrap().1
}

/// The rows of the conjunction of `patterns` on the whole store.
fn count(store: &Store, patterns: &[String]) -> usize {
    let query = format!(
        "SELECT (COUNT(*) AS ?rows) WHERE {{ {} }}",
        patterns.join(" . ")
    );
    let prepared = prepare(store, &query, &PrepareOptions::default()).unwrap();
    let QueryResults::Solutions(solutions) =
        prepared.execute(store, &ExecOptions::default()).unwrap()
    else {
        panic!("{query}: not a SELECT");
    };
    let mut rows = None;
    solutions.for_each_row(|row| {
        let term = row[0].expect("a count").to_string();
        let digits: String = term
            .trim_start_matches('"')
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        rows = Some(digits.parse().unwrap());
    });
    rows.expect("one row")
}

/// Checks each traced step's rows against the whole store; returns the steps checked.
fn check_steps(store: &Store, query: &str, bgp: &BgpProfile) -> usize {
    let trace = bgp.partitions.as_ref().expect("a traced pattern");
    assert_eq!(trace.steps.len(), bgp.steps.len(), "{query}");
    // A top-k's first rows read in order on a worker: the steps did not run there.
    let ordered = trace.work.iter().any(|w| w.role == WorkerRole::Ordered);
    if bgp.seeded || bgp.limit.is_some() || ordered {
        return 0;
    }
    let mut matched: Vec<String> = Vec::new();
    for (s, (step, profiled)) in trace.steps.iter().zip(&bgp.steps).enumerate() {
        for pattern in std::iter::once(step.pattern).chain(step.partner.map(|(p, _)| p)) {
            let text = bgp.patterns[pattern].as_str();
            let terms: Vec<&str> = text.split_whitespace().collect();
            // An index step binds the pattern's subjects or objects only, once each.
            let text = match step.kind {
                StepKind::Index(Direction::In) => {
                    format!("{{ SELECT DISTINCT {} WHERE {{ {text} }} }}", terms[0])
                }
                StepKind::Index(Direction::Out) => format!(
                    "{{ SELECT DISTINCT {} WHERE {{ {text} }} }}",
                    terms[terms.len() - 1]
                ),
                _ => text.to_owned(),
            };
            if !matched.contains(&text) {
                matched.push(text);
            }
        }
        assert_eq!(
            profiled.rows,
            count(store, &matched),
            "{query}\nstep {} of {:?}: {:?}",
            s + 1,
            trace.steps,
            trace.work
        );
        // Every record names a step of the plan (or a FILTER EXISTS checked after the
        // last) and a worker of the executor.
        for record in &trace.work {
            let step = record.step as usize;
            assert!(step < trace.steps.len() + trace.checked.len(), "{record:?}");
            if step >= trace.steps.len() {
                assert_eq!(record.role, WorkerRole::Checked, "{record:?}");
            }
            assert!(record.worker < 3, "{record:?}");
        }
    }
    trace.steps.len()
}

/// Explains `query` on `partitions`, checks its steps and what it moved; returns the
/// steps checked and what the workers' records say they did.
fn check_query(
    store: &Store,
    query: &str,
    partitions: &Arc<dyn BgpPartitions>,
) -> (usize, Vec<WorkerStep>) {
    let before = partitions.exchanged();
    let explained = profile(store, query, Arc::clone(partitions), true);
    let exchanged = partitions.exchanged() - before;
    let (mut checked, mut work) = (0, Vec::new());
    for bgp in &explained.bgps {
        checked += check_steps(store, query, bgp);
        let trace = bgp.partitions.as_ref().unwrap();
        assert!(trace.executor.contains('3'), "{}", trace.executor);
        work.extend(trace.work.iter().copied());
    }
    let mut recorded = Exchanged::default();
    for record in &work {
        recorded += record.sent;
        assert!(
            record.role == WorkerRole::Start || record.messages > 0,
            "{record:?}"
        );
    }
    // Paths, DESCRIBE and counts read from the index ask the partitions outside basic
    // graph patterns, untraced.
    assert!(recorded.rows <= exchanged.rows, "{query}");
    if !explained.bgps.is_empty() {
        assert_eq!(recorded, exchanged, "{query}");
        let text = quiver_sparql::explain::render(&explained);
        assert!(text.contains("by step and worker"), "{text}");
    }
    // Not asked: no records.
    let plain = profile(store, query, Arc::clone(partitions), false);
    assert!(plain.bgps.iter().all(|b| b.partitions.is_none()), "{query}");
    (checked, work)
}

/// Explains every LUBM query; `moves` and `filters`: whether rows moved between workers, and
/// whether type checks were filtered where the rows were (replicated memberships).
fn explains_every_step(
    partitions: impl Fn(&Store) -> Arc<dyn BgpPartitions>,
    moves: bool,
    filters: bool,
) {
    let store = common::lubm1();
    let partitions = partitions(&store);
    let mut checked = 0;
    let mut moved = 0;
    let mut filtered = 0;
    for query in common::lubm_queries() {
        let (steps, work) = check_query(&store, &query, &partitions);
        checked += steps;
        moved += work.iter().map(|w| w.sent.rows).sum::<u64>();
        filtered += work
            .iter()
            .filter(|w| w.role == WorkerRole::Filtered)
            .count();
    }
    assert!(checked >= 40, "only {checked} steps checked");
    assert_eq!(moved > 0, moves, "{moved} rows moved");
    assert_eq!(filtered > 0, filters, "{filtered} filtered records");
}

#[test]
fn timely_workers_explain_every_step() {
    explains_every_step(
        |store| Arc::new(TimelyPartitions::in_process(store, 3).unwrap()),
        true,
        true,
    );
    // Without the memberships, the checks run at the owners, each a step of its own.
    explains_every_step(
        |store| Arc::new(TimelyPartitions::in_process_with(store, 3, Replication::NONE).unwrap()),
        true,
        false,
    );
}

#[test]
fn in_memory_partitions_explain_every_step() {
    explains_every_step(
        |store| Arc::new(LocalPartitions::of(store, 3)),
        false,
        false,
    );
}

/// Wukong's query `name` (`queries/lubm-basic/`).
fn lubm_query(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../queries/lubm-basic/{name}.rq"));
    std::fs::read_to_string(path).unwrap()
}

/// A cluster of `workers` workers over `store` that fetch each other's partner lists, as
/// the processes of a cluster of one-worker processes do.
fn apart(store: &Store, workers: u32) -> Arc<dyn BgpPartitions> {
    let cluster = TimelyPartitions::in_process(store, workers).unwrap();
    cluster.set_reading_in_process(false);
    Arc::new(cluster)
}

/// What the workers did for `query` on `partitions`, by their records (explained).
fn work(store: &Store, query: &str, partitions: &Arc<dyn BgpPartitions>) -> Vec<WorkerStep> {
    let explained = profile(store, query, Arc::clone(partitions), true);
    let bgps = explained.bgps.iter();
    bgps.flat_map(|bgp| bgp.partitions.as_ref().unwrap().work.iter().copied())
        .collect()
}

/// The list entries the workers lent others for `query` on `partitions` (explained).
fn lent(store: &Store, query: &str, partitions: &Arc<dyn BgpPartitions>) -> u64 {
    let work = work(store, query, partitions);
    let lent = work.iter().filter(|w| w.role == WorkerRole::Lent);
    lent.map(|w| w.rows_out).sum()
}

/// q1 and q3 on a graph where their intersection fetches its partner lists (on a fresh
/// cluster, none kept from before): the owners' answers bring their records back to the
/// rows that waited for them, and on to the coordinator.
#[test]
fn fetched_lists_bring_their_records_back() {
    let store = common::campus();
    for name in ["q1", "q3"] {
        let query = lubm_query(name);
        let partitions = apart(&store, 3);
        let (checked, work) = check_query(&store, &query, &partitions);
        assert!(checked >= 4, "{name}: {checked} steps");
        let lent: Vec<&WorkerStep> = work.iter().filter(|w| w.role == WorkerRole::Lent).collect();
        assert!(!lent.is_empty(), "{name}: no lists fetched: {work:?}");
        assert!(lent
            .iter()
            .all(|w| w.rows_out > 0 && w.sent.rows == w.rows_out));
    }
}

/// The partner lists a process fetched serve its later queries: q1 and q3 run again on
/// the same cluster fetch no list. Workers of one process read each other's lists in
/// place: there, q1 and q3 fetch none even on their first run. Every run gives the whole
/// store's answers.
#[test]
fn partner_lists_are_fetched_once_a_process() {
    let store = common::campus();
    for name in ["q1", "q3"] {
        let query = lubm_query(name);
        let expected = common::sorted_answers(&store, &query, None);
        let apart = apart(&store, 3);
        let first = lent(&store, &query, &apart);
        assert!(first > 100, "{name}: {first} list entries on the first run");
        assert_eq!(lent(&store, &query, &apart), 0, "{name}, run again");
        let answers = common::sorted_answers(&store, &query, Some(Arc::clone(&apart)));
        assert_eq!(answers, expected, "{name}, from the lists kept");
        let together: Arc<dyn BgpPartitions> =
            Arc::new(TimelyPartitions::in_process(&store, 3).unwrap());
        assert_eq!(lent(&store, &query, &together), 0, "{name}, one process");
        let answers = common::sorted_answers(&store, &query, Some(together));
        assert_eq!(answers, expected, "{name}, one process");
    }
}

/// An intersection whose partner lists far outweigh its walk's rows is split at run time
/// (walked where the rows are, its rows sent on to check the partner) rather than fetch
/// them: each of 200 sources reaches one item and one of 10 hubs of 5,000 items each, so
/// the split moves about 100 rows where the hubs' lists would move 25,000 ids.
#[test]
fn an_intersection_whose_lists_outweigh_its_walk_is_split() {
    use oxrdf::{GraphName, NamedNode, Quad};
    let iri = |s: String| NamedNode::new(s).unwrap();
    let ex = |name: &str| iri(format!("http://example.org/{name}"));
    let item = |hub: u32, k: u32| ex(&format!("item{hub}-{k}"));
    let mut quads = Vec::new();
    let mut add = |s: NamedNode, p: &str, o: NamedNode| {
        quads.push(Quad::new(s, ex(p), o, GraphName::DefaultGraph));
    };
    for hub in 0..10 {
        for k in 0..5_000 {
            add(ex(&format!("hub{hub}")), "q", item(hub, k));
        }
    }
    for a in 0..200 {
        let source = ex(&format!("source{a}"));
        add(source.clone(), "r", ex(&format!("hub{}", a % 10)));
        // Every other source's item is on its hub's list.
        add(source, "p", item(a % 10, a + 5_000 * (a % 2)));
    }
    let store = quiver_loader::load_quads(quads, None).unwrap().0;
    let query = "SELECT ?a ?b ?x WHERE { ?a <http://example.org/r> ?b .
        ?a <http://example.org/p> ?x . ?b <http://example.org/q> ?x }";
    let expected = common::sorted_answers(&store, query, None);
    assert_eq!(expected.len(), 100);
    let apart = apart(&store, 2);
    let work = work(&store, query, &apart);
    assert!(
        work.iter().any(|w| w.role == WorkerRole::Walked),
        "{work:?}"
    );
    assert!(work.iter().all(|w| w.role != WorkerRole::Lent), "{work:?}");
    let moved: u64 = work.iter().map(|w| w.sent.rows).sum();
    assert!(moved < 2_000, "{moved} rows moved: {work:?}");
    let answers = common::sorted_answers(&store, query, Some(apart));
    assert_eq!(answers, expected);
}

/// A GROUP BY that only counts rows says in EXPLAIN that the rows left the workers counted
/// by its key; a plain pattern does not.
#[test]
fn a_count_by_key_on_the_workers_is_explained() {
    let store = common::lubm1();
    let partitions: Arc<dyn BgpPartitions> =
        Arc::new(TimelyPartitions::in_process(&store, 3).unwrap());
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let students = "?x a ub:UndergraduateStudent . ?x ub:memberOf ?d";
    // (query, counted, a column narrowed to its extremes before counting)
    for (query, counted, narrowed) in [
        (
            format!("SELECT ?d (COUNT(*) AS ?n) WHERE {{ {students} }} GROUP BY ?d"),
            true,
            false,
        ),
        (
            format!("SELECT ?d (MIN(?x) AS ?first) WHERE {{ {students} }} GROUP BY ?d"),
            true,
            true,
        ),
        (format!("SELECT ?d ?x WHERE {{ {students} }}"), false, false),
    ] {
        let profile = profile(
            &store,
            &format!("{prefix} {query}"),
            partitions.clone(),
            true,
        );
        let trace = profile.bgps[0].partitions.as_ref().expect("a trace");
        assert_eq!(trace.counted_by.is_some(), counted, "{query}");
        assert_eq!(trace.narrowed.is_some(), narrowed, "{query}");
        let text = quiver_sparql::explain::render(&profile);
        let keys = if narrowed { 2 } else { 1 };
        assert_eq!(
            text.contains(&format!("counted by {keys} key")),
            counted,
            "{query}: {text}"
        );
        assert_eq!(
            text.contains("narrowed 1 column(s) read only by MIN or MAX"),
            narrowed,
            "{query}: {text}"
        );
    }
}

/// EXPLAIN says when the rows leaving each worker were cut to a top-k's first rows (its
/// keys variables), and when the workers read them in object order (ascending or descending
/// by the pattern's object); a top-k over an expression has no cut.
#[test]
fn a_top_k_cut_on_the_workers_is_explained() {
    let store = common::lubm1();
    let partitions: Arc<dyn BgpPartitions> =
        Arc::new(TimelyPartitions::in_process(&store, 2).unwrap());
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let emails = "SELECT ?e WHERE { ?x ub:emailAddress ?e }";
    // (order, cut on the workers, read in object order by them)
    for (order, cut, ordered) in [
        ("?e", true, true),
        ("DESC(?e)", true, true),
        ("STR(?e)", false, false),
    ] {
        let query = format!("{prefix} {emails} ORDER BY {order} LIMIT 7");
        let profile = profile(&store, &query, partitions.clone(), true);
        let trace = profile.bgps[0].partitions.as_ref().expect("a trace");
        assert_eq!(trace.cut_to.as_ref().map(|top| top.k), cut.then_some(7));
        let read_in_order = trace.work.iter().filter(|w| w.role == WorkerRole::Ordered);
        assert_eq!(
            read_in_order.count(),
            if ordered { 2 } else { 0 },
            "{query}"
        );
        let text = quiver_sparql::explain::render(&profile);
        assert_eq!(
            text.contains("cut to the first 7 in the order of 1 key(s)"),
            cut,
            "{query}: {text}"
        );
        assert_eq!(text.contains("read in order"), ordered, "{query}: {text}");
    }
}

/// In the order of the subject (`?s <p> ?o`, `?s ?p ?o`, ascending or descending), each
/// worker reads its first subjects' edges alone (a few rows out of each, not every edge of
/// its subjects) and the answer is the whole store's, in its order.
#[test]
fn a_top_k_in_subject_order_is_read_in_order_on_the_workers() {
    let store = common::lubm1();
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    for query in [
        "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s ?p ?o LIMIT 10",
        "SELECT * WHERE { ?s ?p ?o } ORDER BY DESC(?s) ?p ?o LIMIT 10 OFFSET 5",
        "SELECT ?s ?n WHERE { ?s ub:name ?n } ORDER BY ?s LIMIT 10 OFFSET 20",
        "SELECT ?s ?n WHERE { ?s ub:name ?n } ORDER BY DESC(?s) LIMIT 10",
    ] {
        let query = format!("{prefix} {query}");
        let mut whole = Vec::new();
        common::for_each_solution(&store, &query, None, |row| whole.push(row));
        assert_eq!(whole.len(), 10, "{query}");
        for workers in [2u32, 3] {
            let partitions: Arc<dyn BgpPartitions> =
                Arc::new(TimelyPartitions::in_process(&store, workers).unwrap());
            let mut rows = Vec::new();
            common::for_each_solution(&store, &query, Some(partitions.clone()), |row| {
                rows.push(row)
            });
            assert_eq!(rows, whole, "{query} on {workers} workers");
            let profile = profile(&store, &query, partitions, true);
            let trace = profile.bgps[0].partitions.as_ref().expect("a trace");
            let read: Vec<_> = trace
                .work
                .iter()
                .filter(|w| w.role == WorkerRole::Ordered)
                .collect();
            assert_eq!(read.len(), workers as usize, "{query}: {:?}", trace.work);
            assert!(
                read.iter().all(|w| w.rows_out < 200),
                "{query}: {:?}",
                trace.work
            );
        }
    }
}

/// MIN and MAX of one pattern's variable with no keys are read from the ends of its order
/// on every worker (one row each, per end asked), not by walking every value, and give
/// the whole store's answer; over two patterns, each worker cuts its own rows to its
/// first, and the answer holds too.
#[test]
fn min_and_max_are_read_in_order_on_the_workers() {
    let store = common::lubm1();
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    for (query, in_order) in [
        ("SELECT (MAX(?n) AS ?m) { ?x ub:name ?n }", true),
        (
            "SELECT (MIN(?n) AS ?a) (MAX(?n) AS ?b) { ?x ub:name ?n }",
            true,
        ),
        ("SELECT (MIN(?x) AS ?a) { ?x ub:emailAddress ?e }", true),
        ("SELECT (MIN(?s) AS ?a) (MAX(?s) AS ?b) { ?s ?p ?o }", true),
        (
            "SELECT (MAX(?c) AS ?a) { ?x ub:takesCourse ?c . ?x ub:advisor ?y }",
            false,
        ),
    ] {
        let query = format!("{prefix} {query}");
        let whole = common::sorted_answers(&store, &query, None);
        assert_eq!(whole.len(), 1, "{query}");
        for workers in [2u32, 3] {
            let partitions: Arc<dyn BgpPartitions> =
                Arc::new(TimelyPartitions::in_process(&store, workers).unwrap());
            let rows = common::sorted_answers(&store, &query, Some(partitions.clone()));
            assert_eq!(rows, whole, "{query} on {workers} workers");
            let profile = profile(&store, &query, partitions, true);
            assert!(!profile.bgps.is_empty(), "{query}");
            for bgp in &profile.bgps {
                let trace = bgp.partitions.as_ref().expect("a trace");
                let read: Vec<_> = trace
                    .work
                    .iter()
                    .filter(|w| w.role == WorkerRole::Ordered)
                    .collect();
                let expected = if in_order { workers as usize } else { 0 };
                assert_eq!(read.len(), expected, "{query}: {:?}", trace.work);
                assert!(
                    read.iter().all(|w| w.rows_out <= 1),
                    "{query}: {:?}",
                    trace.work
                );
            }
        }
    }
}

/// A FILTER decided by ranges of ids is checked on the workers, and EXPLAIN says so; one
/// that is not (a comparison of numbers' values) is not.
#[test]
fn a_filter_checked_on_the_workers_is_explained() {
    let store = common::lubm1();
    let partitions: Arc<dyn BgpPartitions> =
        Arc::new(TimelyPartitions::in_process(&store, 2).unwrap());
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let names = "?x a ub:UndergraduateStudent . ?x ub:name ?n";
    for (filter, ranges) in [
        ("STRSTARTS(?n, \"UndergraduateStudent1\")", Some(1)),
        (
            "(STRSTARTS(?n, \"U\") && ?x != <http://www.University0.edu>)",
            Some(3),
        ),
        ("STRLEN(?n) > 22", None),
    ] {
        let query = format!("{prefix} SELECT ?x WHERE {{ {names} FILTER ({filter}) }}");
        let profile = profile(&store, &query, partitions.clone(), true);
        let trace = profile.bgps[0].partitions.as_ref().expect("a trace");
        let found: usize = trace.filtered.iter().map(|f| f.ranges.len()).sum();
        assert_eq!(
            (!trace.filtered.is_empty()).then_some(found),
            ranges,
            "{query}"
        );
        let text = quiver_sparql::explain::render(&profile);
        assert_eq!(
            text.contains("filtered where they were by"),
            ranges.is_some(),
            "{query}: {text}"
        );
    }
}

/// A FILTER (NOT) EXISTS of one edge decided at the rows' owners is explained: its checks
/// are the steps after the last, run by workers in the role `checked`, and a line says how
/// many; a FILTER EXISTS of another shape runs at the coordinator, with no such line.
#[test]
fn a_filter_exists_checked_at_the_owners_is_explained() {
    let store = common::lubm1();
    let partitions: Arc<dyn BgpPartitions> =
        Arc::new(TimelyPartitions::in_process(&store, 2).unwrap());
    let prefix = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let students = "?x a ub:UndergraduateStudent";
    for (filter, checks) in [
        ("NOT EXISTS { ?x ub:advisor ?a }", 1),
        (
            "(EXISTS { ?x ub:advisor ?a } && NOT EXISTS { ?x ub:emailAddress ?e })",
            2,
        ),
        ("NOT EXISTS { ?x ub:advisor ?a . ?a a ub:FullProfessor }", 0),
    ] {
        let query = format!("{prefix} SELECT ?x WHERE {{ {students} FILTER ({filter}) }}");
        let profile = profile(&store, &query, partitions.clone(), true);
        let trace = profile.bgps[0].partitions.as_ref().expect("a trace");
        assert_eq!(trace.checked.len(), checks, "{query}");
        let last = trace.steps.len() as u32;
        let checking: Vec<u32> = trace
            .work
            .iter()
            .filter(|w| w.role == WorkerRole::Checked && w.step >= last)
            .map(|w| w.step)
            .collect();
        assert!(
            (last..last + checks as u32).all(|step| checking.contains(&step)),
            "{query}: {:?}",
            trace.work
        );
        let text = quiver_sparql::explain::render(&profile);
        assert_eq!(
            text.contains("rows checked at the owners of their vertices by"),
            checks > 0,
            "{query}: {text}"
        );
    }
}
