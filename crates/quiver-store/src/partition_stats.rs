//! The planner's statistics of a whole partitioned store, merged from its partitions'.
//!
//! A partition's catalog counts only what it owns: the subjects of a predicate whose OUT
//! records it holds, the objects whose IN records it holds, the instances of a class it
//! owns. Those shares are disjoint, so the whole store's counts are their sums and its
//! largest degrees their maxima. Two exceptions, both about `rdf:type`, whose IN side is
//! split by instance: each partition lists a class among its objects where it owns an
//! instance, so the distinct objects are the union of the lists (counted from the merged
//! classes), and a class's in-degree is its merged number of instances. How many of a
//! class's instances are themselves classes (objects of `rdf:type`) stays a partial count:
//! a partition lists a class where it owns one of its instances, not the class itself.
//!
//! The merge is computed when a store is cut, written into the layout file, and installed
//! in the coordinator's store ([`Store::use_statistics`]): the query is planned once, there,
//! with the whole store's estimates.

use std::collections::BTreeMap;

use quiver_model::{ClassId, Id, PredId};
use serde::{Deserialize, Serialize};

use crate::stats::PredicateStats;
use crate::store::Store;
use crate::Direction;

/// The catalog the planner reads, for the default graph of a whole store.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannerStatistics {
    /// Per predicate id.
    pub predicates: Vec<PredicateStats>,
    /// The classes (objects of `rdf:type`), sorted, with their instances.
    pub classes: Vec<Id>,
    pub class_instances: Vec<u64>,
    /// Per class, per predicate: instances that are subjects, then objects, of it.
    pub class_predicate: Vec<u64>,
}

/// Sums partitions' catalogs, one partition at a time.
#[derive(Debug, Default)]
pub struct StatisticsMerger {
    predicates: Vec<PredicateStats>,
    /// Class → (instances, per predicate and side).
    classes: BTreeMap<Id, (u64, Vec<u64>)>,
}

impl StatisticsMerger {
    /// Adds one partition's catalog.
    pub fn add(&mut self, partition: &Store) {
        let count = partition.predicate_count();
        if self.predicates.len() < count {
            self.predicates.resize(count, PredicateStats::default());
        }
        for (p, merged) in self.predicates.iter_mut().enumerate().take(count) {
            let own = partition.predicate_stats(p as PredId);
            merged.triples += own.triples;
            merged.subjects += own.subjects;
            merged.objects += own.objects;
            merged.max_out_degree = merged.max_out_degree.max(own.max_out_degree);
            merged.max_in_degree = merged.max_in_degree.max(own.max_in_degree);
        }
        for (class, stats) in partition.class_stats().enumerate() {
            let entry = self
                .classes
                .entry(stats.class)
                .or_insert_with(|| (0, vec![0; 2 * count]));
            entry.0 += stats.instances;
            for p in 0..count {
                for (side, direction) in [Direction::Out, Direction::In].into_iter().enumerate() {
                    let own = partition
                        .class_predicate_count(class as ClassId, p as PredId, direction)
                        .unwrap_or(0);
                    entry.1[2 * p + side] += own;
                }
            }
        }
    }

    /// Adds one partition's catalog as [`Store::planner_statistics`] gave it (on another
    /// process): the same sums as [`StatisticsMerger::add`]; `rdf_type`'s objects and
    /// largest in-degree, which [`StatisticsMerger::finish`] recomputes, aside.
    pub fn add_statistics(&mut self, partition: &PlannerStatistics) {
        let count = partition.predicates.len();
        if self.predicates.len() < count {
            self.predicates.resize(count, PredicateStats::default());
        }
        for (merged, own) in self.predicates.iter_mut().zip(&partition.predicates) {
            merged.triples += own.triples;
            merged.subjects += own.subjects;
            merged.objects += own.objects;
            merged.max_out_degree = merged.max_out_degree.max(own.max_out_degree);
            merged.max_in_degree = merged.max_in_degree.max(own.max_in_degree);
        }
        let width = 2 * count;
        for (c, (&class, &instances)) in partition
            .classes
            .iter()
            .zip(&partition.class_instances)
            .enumerate()
        {
            let entry = self
                .classes
                .entry(class)
                .or_insert_with(|| (0, vec![0; width]));
            entry.0 += instances;
            if let Some(counts) = partition.class_predicate.get(c * width..(c + 1) * width) {
                for (sum, own) in entry.1.iter_mut().zip(counts) {
                    *sum += own;
                }
            }
        }
    }

    /// The merged statistics; `rdf_type` corrected as the module says.
    pub fn finish(self, rdf_type: Option<PredId>) -> PlannerStatistics {
        let mut statistics = PlannerStatistics {
            predicates: self.predicates,
            ..PlannerStatistics::default()
        };
        let width = 2 * statistics.predicates.len();
        for (class, (instances, counts)) in self.classes {
            statistics.classes.push(class);
            statistics.class_instances.push(instances);
            statistics.class_predicate.extend(counts.iter().copied());
            statistics
                .class_predicate
                .extend(std::iter::repeat_n(0, width - counts.len()));
        }
        if let Some(stats) = rdf_type.and_then(|p| statistics.predicates.get_mut(p as usize)) {
            stats.objects = statistics.classes.len() as u64;
            stats.max_in_degree = statistics
                .class_instances
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
        }
        statistics
    }
}

impl Store {
    /// Plans with `statistics` (a whole partitioned store's) instead of this store's own
    /// catalog: what a cluster's coordinator, which holds one partition, does. Only the
    /// planner's estimates change; the graph and its answers are this store's.
    pub fn use_statistics(&mut self, statistics: &PlannerStatistics) {
        let count = self.predicate_count();
        let mut predicates = statistics.predicates.clone();
        predicates.resize(count, PredicateStats::default());
        self.predicate_stats = predicates;
        let width = 2 * statistics.predicates.len();
        self.classes = statistics.classes.clone().into();
        self.class_instances = statistics.class_instances.clone().into();
        self.stat_classes = self.classes.clone();
        self.stat_predicates = statistics.predicates.len();
        let expected = statistics.classes.len() * width;
        self.class_predicate = if statistics.class_predicate.len() == expected {
            statistics.class_predicate.clone().into()
        } else {
            Default::default()
        };
        if self.class_predicate.is_empty() {
            self.stat_predicates = 0;
        }
        self.merged_statistics = true;
    }

    /// Whether this store's statistics of its default graph (triples, distinct subjects
    /// and objects per predicate, instances per class) count the whole store's: a whole
    /// store's own, or a partition's given its layout's merged statistics
    /// ([`Store::use_statistics`]: each partition counts the triples out of the subjects it
    /// owns, and the subjects, objects and instances it owns, so that they add up).
    pub fn statistics_of_whole_store(&self) -> bool {
        self.partition_info().is_none() || self.merged_statistics
    }

    /// This store's own catalog as planner statistics (a whole store's equal the merge of
    /// its partitions' up to sampling).
    pub fn planner_statistics(&self) -> PlannerStatistics {
        let mut merger = StatisticsMerger::default();
        merger.add(self);
        merger.finish(self.rdf_type())
    }
}
