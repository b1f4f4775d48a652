//! Planning on a cluster's coordinator, which holds only its own partition: the plan of
//! every LUBM query equals the whole store's, because the sizes of the records other
//! partitions own (a constant's neighbours) are asked of them at prepare time rather
//! than guessed from averages.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use quiver_cluster::{LocalPartitions, TimelyPartitions};
use quiver_sparql::context::QueryState;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{BgpPartitions, Explored, PartitionedBgp};
use quiver_sparql::planner::Spread;
use quiver_sparql::{prepare, PrepareOptions, QueryError};
use quiver_store::partition_stats::StatisticsMerger;
use quiver_store::Store;

#[test]
fn the_coordinator_plans_every_lubm_query_as_the_whole_store() {
    let store = common::lubm1();
    let count = 3;
    let cluster = TimelyPartitions::in_process(&store, count).unwrap();
    let partitions: Arc<dyn BgpPartitions> = Arc::new(cluster);
    let parts: Vec<Store> = (0..count).map(|i| store.partition(i, count)).collect();
    let coordinator = coordinator_of(&parts, &store);
    let mut differ = Vec::new();
    let mut steps = 0;
    for query in common::lubm_queries() {
        let whole = common::plan_shapes(&store, &query, Some(Arc::clone(&partitions)));
        let cut = common::plan_shapes(&coordinator, &query, Some(Arc::clone(&partitions)));
        steps += whole.len();
        if whole != cut {
            differ.push(format!("{query}\nwhole: {whole:?}\ncut:   {cut:?}"));
        }
    }
    assert!(steps >= 40, "only {steps} steps planned");
    assert!(
        differ.is_empty(),
        "{} plans differ:\n{}",
        differ.len(),
        differ.join("\n\n")
    );
}

/// Partition 0 of `parts` with the whole store's statistics merged from the partitions, as
/// a cluster's coordinator opens it.
fn coordinator_of(parts: &[Store], store: &Store) -> Store {
    let mut statistics = StatisticsMerger::default();
    for part in parts {
        statistics.add(part);
    }
    let mut coordinator = parts[0].clone();
    coordinator.use_statistics(&statistics.finish(store.rdf_type()));
    coordinator
}

/// Partitions that count the batches of record sizes asked of them.
#[derive(Debug)]
struct Counting {
    inner: LocalPartitions,
    batches: AtomicUsize,
    asks: AtomicUsize,
}

impl BgpPartitions for Counting {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn spread(&self) -> Spread {
        self.inner.spread()
    }

    fn degrees(&self, asks: &[DegreeAsk]) -> Result<Option<Vec<u64>>, QueryError> {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.asks.fetch_add(asks.len(), Ordering::Relaxed);
        self.inner.degrees(asks)
    }

    fn explore(&self, request: PartitionedBgp<'_>) -> Result<Explored, QueryError> {
        self.inner.explore(request)
    }

    fn aggregate(
        &self,
        aggregate: &IndexAggregate,
        merged: &[quiver_model::Id],
        state: &QueryState,
    ) -> Result<Vec<Counts>, QueryError> {
        self.inner.aggregate(aggregate, merged, state)
    }
}

/// The sizes are asked in one batch per query, and only where they may change the plan: a
/// light query whose one foreign record leads the plan whatever its size pays no round
/// trip for it.
#[test]
fn record_sizes_are_asked_once_and_only_where_they_may_change_the_plan() {
    let store = common::lubm1();
    let count = 3;
    let counting = Arc::new(Counting {
        inner: LocalPartitions::of(&store, count),
        batches: AtomicUsize::new(0),
        asks: AtomicUsize::new(0),
    });
    let coordinator = coordinator_of(counting.inner.partitions(), &store);
    let department = (0..15)
        .map(|d| format!("http://www.Department{d}.University0.edu"))
        .find(|iri| quiver_store::partition::owner(store.iri_id(iri).unwrap(), count) != 0)
        .unwrap();
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    let asked = |query: &str| {
        let before = (
            counting.batches.load(Ordering::Relaxed),
            counting.asks.load(Ordering::Relaxed),
        );
        let partitions: Arc<dyn BgpPartitions> = counting.clone();
        let options = PrepareOptions {
            partitions: Some(partitions),
            ..PrepareOptions::default()
        };
        prepare(&coordinator, query, &options).unwrap();
        (
            counting.batches.load(Ordering::Relaxed) - before.0,
            counting.asks.load(Ordering::Relaxed) - before.1,
        )
    };
    // q4's shape: the department leads, whatever its size.
    let light = format!(
        "SELECT ?x ?n WHERE {{ ?x <{ub}worksFor> <{department}> . ?x a <{ub}FullProfessor> . ?x <{ub}name> ?n }}"
    );
    assert_eq!(asked(&light), (0, 0), "{light}");
    // Two records of the department, in two patterns of one query and one of another
    // pattern: one batch of three.
    let two = format!(
        "SELECT * WHERE {{ ?x <{ub}worksFor> <{department}> . ?y <{ub}memberOf> <{department}> \
         OPTIONAL {{ ?z ?p <{department}> }} }}"
    );
    assert_eq!(asked(&two), (1, 3), "{two}");
}

/// On a cluster, the record sizes asked of the owners are kept: a later query that needs
/// the same records asks only for those it is the first to need.
#[test]
fn a_cluster_asks_each_record_size_once() {
    let (store, cluster, coordinator, foreign) = cut_lubm1(2);
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    let query = |department: &str| {
        format!(
            "SELECT * WHERE {{ ?x <{ub}worksFor> <{department}> . ?y <{ub}memberOf> <{department}> \
             OPTIONAL {{ ?z ?p <{department}> }} }}"
        )
    };
    let asked = |query: &str| {
        let before = cluster.record_sizes_asked();
        let partitions: Arc<dyn BgpPartitions> = cluster.clone();
        // Planned as on the whole store, which holds every record.
        assert_eq!(
            common::plan_shapes(&coordinator, query, Some(Arc::clone(&partitions))),
            common::plan_shapes(&store, query, Some(partitions)),
            "{query}"
        );
        cluster.record_sizes_asked() - before
    };
    let first = query(&foreign[0]);
    // Three records asked, then none: the same query planned again, as on the whole store.
    assert_eq!(asked(&first), 3, "{first}");
    assert_eq!(asked(&first), 0, "{first}");
    // Another department: its three records.
    assert_eq!(asked(&query(&foreign[1])), 3);
}

/// A template's check that a foreign record's size cannot change its plan is made once:
/// the next query of the template, with another constant in the same place, takes the
/// answer and plans once, as the whole store plans it; another shape checks anew.
#[test]
fn a_templates_size_check_is_made_once() {
    let (store, cluster, coordinator, foreign) = cut_lubm1(3);
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    // q4's shape: the department leads whatever its size.
    let light = |department: &str| {
        format!(
            "SELECT ?x ?n WHERE {{ ?x <{ub}worksFor> <{department}> . ?x a <{ub}FullProfessor> . ?x <{ub}name> ?n }}"
        )
    };
    let memo = || cluster.size_free_plans().unwrap();
    let plan = |query: &str| {
        let partitions: Arc<dyn BgpPartitions> = cluster.clone();
        assert_eq!(
            common::plan_shapes(&coordinator, query, Some(Arc::clone(&partitions))),
            common::plan_shapes(&store, query, Some(partitions)),
            "{query}"
        );
        (memo().len(), memo().hits())
    };
    assert_eq!(plan(&light(&foreign[0])), (1, 0));
    assert_eq!(plan(&light(&foreign[1])), (1, 1));
    assert_eq!(plan(&light(&foreign[2])), (1, 2));
    // Another template: checked, then remembered beside the first.
    let other = |department: &str| {
        format!(
            "SELECT ?x WHERE {{ ?x <{ub}memberOf> <{department}> . ?x a <{ub}GraduateStudent> }}"
        )
    };
    assert_eq!(plan(&other(&foreign[0])), (2, 2));
    assert_eq!(plan(&other(&foreign[1])), (2, 3));
    assert_eq!(cluster.record_sizes_asked(), 0);
}

/// LUBM-1, a cluster of its three partitions in this process, the coordinator's partition
/// (partition 0, with the whole store's statistics) and the IRIs of `departments`
/// departments another partition owns.
fn cut_lubm1(departments: usize) -> (Store, Arc<TimelyPartitions>, Store, Vec<String>) {
    let store = common::lubm1();
    let count = 3;
    let cluster = Arc::new(TimelyPartitions::in_process(&store, count).unwrap());
    let parts: Vec<Store> = (0..count).map(|i| store.partition(i, count)).collect();
    let coordinator = coordinator_of(&parts, &store);
    let foreign: Vec<String> = (0..15)
        .map(|d| format!("http://www.Department{d}.University0.edu"))
        .filter(|iri| quiver_store::partition::owner(store.iri_id(iri).unwrap(), count) != 0)
        .take(departments)
        .collect();
    assert_eq!(foreign.len(), departments);
    (store, cluster, coordinator, foreign)
}
