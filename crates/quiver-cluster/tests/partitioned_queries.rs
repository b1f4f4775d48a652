//! Queries whose basic graph patterns run over a store cut into 1 to 4 partitions, each
//! step where [`quiver_cluster::route`] places it and the rows moved between partitions
//! (in memory by [`LocalPartitions`], by timely-dataflow's exchange between worker threads
//! by [`TimelyPartitions`]), give exactly the whole store's rows. The query is prepared
//! `partitioned` (no operator reads the graph outside a basic graph pattern), on the whole
//! store and on partition 0 as the coordinator, as a cluster's first process holds it.
//! Property paths and DESCRIBE, which read edges outside basic graph patterns, ask the
//! partitions a frontier at a time. Over:
//! - LUBM-1 with every query of `queries/` (Wukong's q1–q12, the SPARQL 1.1 and the
//!   analytics sets);
//! - random graphs with named graphs, blank nodes, literals and classes, under query shapes
//!   that reach every placement: walks out and in, checks, intersections, starts from a
//!   class or a predicate index, the classes' index, variable predicates, scans, `GRAPH`,
//!   patterns seeded by OPTIONAL, EXISTS and joins, every kind of property path (from
//!   constants, between variables, seeded, cyclic, negated, over `rdf:type`) and DESCRIBE
//!   through blank nodes.

use std::sync::Arc;

use proptest::prelude::*;
use quiver_cluster::{LocalPartitions, TimelyPartitions};
use quiver_sparql::partitions::BgpPartitions;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::partition_stats::StatisticsMerger;
use quiver_store::Store;

use crate::common;
use common::{quad, spec, Spec, EX, QUERIES};

/// The answer of `query` on `store` as sorted text rows (solutions), a boolean or sorted
/// triples; with `partitions`, prepared `partitioned` and its patterns run by them.
fn answer(
    store: &Store,
    query: &str,
    partitions: Option<Arc<dyn BgpPartitions>>,
) -> Result<Vec<String>, QueryError> {
    let prepare_options = PrepareOptions {
        partitions: partitions.clone(),
        ..PrepareOptions::default()
    };
    let prepared = prepare(store, query, &prepare_options)?;
    let options = ExecOptions {
        threads: 2,
        partitions,
        ..ExecOptions::default()
    };
    let results = prepared.execute(store, &options)?;
    let mut rows = Vec::new();
    match &results {
        QueryResults::Solutions(solutions) => solutions.for_each_row(|row| {
            rows.push(
                row.iter()
                    .map(|t| t.map_or("UNDEF".to_owned(), |t| t.to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
            )
        }),
        QueryResults::Boolean(b) => rows.push(b.to_string()),
        QueryResults::Graph(triples) => rows.extend(triples.iter().map(|t| t.to_string())),
    }
    rows.sort();
    Ok(rows)
}

/// Whether `query` has a LIMIT, whose rows (without ORDER BY) may be any of the answer's.
fn sliced(query: &str) -> bool {
    query.to_ascii_uppercase().contains("LIMIT")
}

/// `query` without its LIMIT (the shapes end with it).
fn unsliced(query: &str) -> &str {
    query
        .rfind("LIMIT")
        .map_or(query, |at| query[..at].trim_end())
}

/// Whether every row of `some` is a row of `all`, as many times at most.
fn within(some: &[String], all: &[String]) -> bool {
    let mut left: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for row in all {
        *left.entry(row).or_default() += 1;
    }
    some.iter().all(|row| {
        left.get_mut(row.as_str())
            .is_some_and(|n| std::mem::replace(n, n.saturating_sub(1)) > 0)
    })
}

/// Checks every query with every executor, on `store` cut into each of `counts`
/// partitions, coordinated by the whole store and by partition 0.
fn check_all(store: &Store, queries: &[String], counts: &[u32]) -> Result<(), TestCaseError> {
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| answer(store, q, None).unwrap_or_else(|e| panic!("{q}: {e}")))
        .collect();
    // Under a LIMIT, the rows must be some of the query's rows without it.
    let unlimited: Vec<Vec<String>> = queries
        .iter()
        .map(|q| answer(store, unsliced(q), None).unwrap_or_else(|e| panic!("{q}: {e}")))
        .collect();
    for &count in counts {
        let local = Arc::new(LocalPartitions::of(store, count));
        // The coordinator plans with the whole store's statistics, merged from the
        // partitions', as a cluster's first process does.
        let mut statistics = StatisticsMerger::default();
        for partition in local.partitions() {
            statistics.add(partition);
        }
        let mut first = local.partitions()[0].clone();
        first.use_statistics(&statistics.finish(store.rdf_type()));
        let executors: [Arc<dyn BgpPartitions>; 2] = [
            local,
            Arc::new(TimelyPartitions::in_process(store, count).unwrap()),
        ];
        for executor in executors {
            for coordinator in [store, &first] {
                for ((query, expected), all) in queries.iter().zip(&expected).zip(&unlimited) {
                    let got = answer(coordinator, query, Some(Arc::clone(&executor)));
                    let name = executor.name();
                    match got {
                        Err(error) => prop_assert!(false, "{}: {}: {}", name, query, error),
                        Ok(got) if sliced(query) => {
                            prop_assert_eq!(got.len(), expected.len(), "{}: {}", name, query);
                            prop_assert!(within(&got, all), "{}: {}: {:?}", name, query, got);
                        }
                        Ok(got) => prop_assert_eq!(&got, expected, "{}: {}", name, query),
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn lubm_queries_give_the_whole_stores_rows_on_every_partitioning() {
    check_all(&common::lubm1(), &common::lubm_queries(), &[1, 2, 3, 4])
        .unwrap_or_else(|e| panic!("{e}"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn random_graphs_give_the_whole_stores_rows_on_every_partitioning(
        specs in prop::collection::vec(spec(), 1..120),
    ) {
        let (store, _) = quiver_loader::load_quads(specs.iter().map(quad), None).unwrap();
        let queries: Vec<String> =
            QUERIES.iter().map(|q| format!("PREFIX ex: <{EX}> {q}")).collect();
        check_all(&store, &queries, &[1, 2, 3, 4])?;
    }
}

/// What moves between workers is counted exactly: for a pattern that starts from a
/// predicate index, the coordinator sends the start to every other worker, and each sends
/// back the rows of its own share.
#[test]
fn the_rows_and_bytes_exchanged_are_counted() {
    let specs: Vec<Spec> = (0..60u32).map(|i| (i % 20, 1, (i * 7) % 20, 0)).collect();
    let (store, _) = quiver_loader::load_quads(specs.iter().map(quad), None).unwrap();
    let query = format!("PREFIX ex: <{EX}> SELECT * WHERE {{ ?x ex:p1 ?y }}");
    let expected = answer(&store, &query, None).unwrap();
    let alone = Arc::new(TimelyPartitions::in_process(&store, 1).unwrap());
    answer(&store, &query, Some(alone.clone())).unwrap();
    assert_eq!(
        alone.exchanged(),
        Default::default(),
        "one worker moves nothing"
    );
    let count = 3;
    let timely = Arc::new(TimelyPartitions::in_process(&store, count).unwrap());
    let got = answer(&store, &query, Some(timely.clone())).unwrap();
    assert_eq!(got, expected);
    let first = store.partition(0, count);
    let p1 = first.iri_id(&format!("{EX}p1")).unwrap();
    let predicate = first.predicate_of_term(p1).unwrap();
    let at_first: u64 = first
        .graph()
        .predicate_subjects(predicate)
        .iter()
        .map(|&s| {
            first
                .graph()
                .degree(s, predicate, quiver_store::Direction::Out) as u64
        })
        .sum();
    let exchanged = timely.exchanged();
    let others = expected.len() as u64 - at_first;
    assert!(
        others > 0 && at_first > 0,
        "{others} rows elsewhere, {at_first} here"
    );
    assert_eq!(exchanged.messages, 2 * (count as u64 - 1));
    assert_eq!(exchanged.rows, (count as u64 - 1) + others);
    assert!(exchanged.bytes > exchanged.rows * 8, "{exchanged:?}");
    // A second run adds as much again.
    answer(&store, &query, Some(timely.clone())).unwrap();
    assert_eq!(timely.exchanged().rows, 2 * exchanged.rows);
    // A count of a pattern with a constant object is read from each partition's index:
    // each other worker gets the request and sends back one row of counts.
    let counting = format!("PREFIX ex: <{EX}> SELECT (COUNT(*) AS ?n) WHERE {{ ?x ex:p1 ex:e0 }}");
    let before = timely.exchanged();
    let counted = answer(&store, &counting, Some(timely.clone())).unwrap();
    assert_eq!(counted, answer(&store, &counting, None).unwrap());
    let moved = timely.exchanged() - before;
    assert_eq!(moved.messages, 2 * (u64::from(count) - 1));
    assert_eq!(moved.rows, 2 * (u64::from(count) - 1));
    // The pattern's count in all the coordinator's statistics tell: nothing moves.
    let told = format!("PREFIX ex: <{EX}> SELECT (COUNT(*) AS ?n) WHERE {{ ?x ex:p1 ?y }}");
    let before = timely.exchanged();
    let counted = answer(&store, &told, Some(timely.clone())).unwrap();
    assert_eq!(counted, answer(&store, &told, None).unwrap());
    assert_eq!(timely.exchanged() - before, Default::default());
    // A GROUP BY over two patterns moves the pattern's rows back without their columns.
    let grouped =
        format!("PREFIX ex: <{EX}> SELECT (COUNT(*) AS ?n) WHERE {{ ?x ex:p1 ?y . ?y ex:p1 ?z }}");
    let before = timely.exchanged();
    let counted = answer(&store, &grouped, Some(timely.clone())).unwrap();
    assert_eq!(counted, answer(&store, &grouped, None).unwrap());
    let moved = timely.exchanged() - before;
    let rows = answer(
        &store,
        &format!("PREFIX ex: <{EX}> SELECT * WHERE {{ ?x ex:p1 ?y . ?y ex:p1 ?z }}"),
        Some(timely.clone()),
    )
    .unwrap()
    .len();
    let all = timely.exchanged() - before - moved;
    assert!(rows > 0 && moved.rows == all.rows, "{moved:?} {all:?}");
    assert!(moved.bytes < all.bytes, "{moved:?} against {all:?}");
}

/// Queries asked from several threads at once run through the dataflow together, each
/// answered with its own rows.
#[test]
fn queries_asked_at_once_each_get_their_own_rows() {
    let (store, _) = quiver_loader::load_quads(common::fixed_graph(11, 400), None).unwrap();
    let queries: Vec<String> = QUERIES
        .iter()
        .map(|q| format!("PREFIX ex: <{EX}> {q}"))
        .filter(|q| !sliced(q))
        .collect();
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| answer(&store, q, None).unwrap())
        .collect();
    let timely: Arc<dyn BgpPartitions> = Arc::new(TimelyPartitions::in_process(&store, 3).unwrap());
    std::thread::scope(|scope| {
        for client in 0..4 {
            let (store, queries, expected, timely) = (&store, &queries, &expected, &timely);
            scope.spawn(move || {
                for round in 0..3 {
                    for i in 0..queries.len() {
                        let at = (i + client * 7 + round) % queries.len();
                        let got = answer(store, &queries[at], Some(Arc::clone(timely))).unwrap();
                        assert_eq!(got, expected[at], "client {client}: {}", queries[at]);
                    }
                }
            });
        }
    });
}

/// The coordinator plans on its own partition, which holds no record of a constant another
/// partition owns: the planner asks the records' sizes of the partitions while the query
/// is prepared (where they may change the plan), or without them estimates the constant's
/// fan-out from the whole store's statistics (a class: its size), not as the zero its
/// missing record would say.
#[test]
fn the_coordinator_estimates_constants_it_does_not_own() {
    let store = common::lubm1();
    let count = 3;
    let local = Arc::new(LocalPartitions::of(&store, count));
    let mut statistics = StatisticsMerger::default();
    for partition in local.partitions() {
        statistics.add(partition);
    }
    let mut first = local.partitions()[0].clone();
    first.use_statistics(&statistics.finish(store.rdf_type()));
    let estimate = |on: &Store, query: &str, asking: bool| -> f64 {
        let partitions: Option<Arc<dyn BgpPartitions>> = match asking {
            true => Some(local.clone()),
            false => None,
        };
        let options = PrepareOptions {
            partitions,
            ..PrepareOptions::default()
        };
        let prepared = prepare(on, query, &options).unwrap();
        let mut operator = prepared.operator();
        loop {
            match operator {
                quiver_sparql::operator::Operator::Bgp(planned) => {
                    return planned.alone[0].estimate
                }
                quiver_sparql::operator::Operator::Project(inner, _) => operator = inner,
                other => panic!("{query}: {other:?}"),
            }
        }
    };
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    let mut foreign = 0;
    for d in 0..15 {
        let department = format!("http://www.Department{d}.University0.edu");
        let id = store.iri_id(&department).unwrap();
        if quiver_store::partition::owner(id, count) == 0 {
            continue;
        }
        foreign += 1;
        for query in [
            format!("SELECT ?x WHERE {{ ?x <{ub}worksFor> <{department}> }}"),
            format!("SELECT ?x WHERE {{ ?x <{ub}memberOf> <{department}> }}"),
        ] {
            let exact = estimate(&store, &query, false);
            let guessed = estimate(&first, &query, false);
            assert!(exact > 0.0, "{query}");
            assert!(
                guessed >= exact / 10.0 && guessed <= exact * 10.0,
                "{query}: {guessed} on the coordinator, {exact} in the whole store"
            );
        }
        // Two records of the constant (the plan starts from the smaller): asked, exact,
        // also over every predicate's edges, which no average comes close to.
        for query in [
            format!("SELECT * WHERE {{ ?x <{ub}worksFor> <{department}> . ?y <{ub}memberOf> <{department}> }}"),
            format!("SELECT * WHERE {{ ?x ?p <{department}> . <{department}> ?q ?o }}"),
        ] {
            let exact = estimate(&store, &query, false);
            assert!(exact > 0.0, "{query}");
            assert_eq!(estimate(&first, &query, true), exact, "{query}, asked");
        }
    }
    assert!(foreign > 3, "{foreign} departments owned elsewhere");
    // A class's instances: the class's size, not the coordinator's share.
    let query = format!("SELECT ?x WHERE {{ ?x a <{ub}GraduateCourse> }}");
    let (exact, coordinator) = (
        estimate(&store, &query, false),
        estimate(&first, &query, false),
    );
    assert!(
        (coordinator - exact).abs() <= exact * 0.01,
        "{coordinator} against {exact}"
    );
}
