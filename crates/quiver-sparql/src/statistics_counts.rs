//! Counts of one triple pattern that a store's statistics of its default graph tell
//! ([`IndexAggregate`]s): `? ? ?` and `? p ?` (`p` a constant) counted in all, `? ? ?`
//! grouped by predicate, `? rdf:type ?` grouped by class, each as matches and distinct
//! subjects, objects or predicates.
//!
//! Over partitions, a count read from the index asks every partition and adds up their
//! counts: a round trip between processes for what the coordinator already knows, as it
//! holds the whole store's statistics merged from the partitions'
//! (`Store::use_statistics`). Each partition counts the triples out of the subjects it
//! owns and the subjects, objects and instances it owns, so their sums are the whole
//! store's, except the classes of `rdf:type` (a class's instances are split among the
//! partitions), taken from the merged class catalog instead. Such counts are answered
//! here, and a count that does not add up over partitions but that the statistics tell
//! (distinct values grouped by predicate) is compiled as one too.

use quiver_model::{Id, PredId};
use quiver_store::{PredicateStats, Store};

use crate::bgp::{Node, Pred};
use crate::dataset::GraphRef;
use crate::operator::index_aggregate::{Count, Counts, Graphs, IndexAggregate, Position};

/// Whether [`counts`] answers `op` over `store`.
pub(crate) fn tell(store: &Store, op: &IndexAggregate) -> bool {
    counts(store, op).is_some()
}

/// The counts of `op` from `store`'s statistics of its default graph, when they count the
/// whole store ([`Store::statistics_of_whole_store`]) and tell them: `? ? ?` and `? p ?`
/// (`p` a constant) counted in all, `? ? ?` grouped by predicate, `? rdf:type ?` grouped by
/// class. `None` otherwise.
pub(crate) fn counts(store: &Store, op: &IndexAggregate) -> Option<Counts> {
    if op.graphs != Graphs::One(GraphRef::Default) || !store.statistics_of_whole_store() {
        return None;
    }
    let (Node::Var(_), Node::Var(_)) = (op.pattern.subject, op.pattern.object) else {
        return None;
    };
    let predicate = match op.pattern.predicate {
        Pred::Const(p) => Some(p),
        Pred::Var(_) => None,
        Pred::Absent => return None,
    };
    let column = |stats: &PredicateStats, count: Count| match count {
        Count::Matches => Some(stats.triples),
        Count::Distinct(Position::Subject) => Some(stats.subjects),
        Count::Distinct(Position::Object) => Some(stats.objects),
        Count::Distinct(Position::Predicate) => Some(u64::from(stats.triples > 0)),
        Count::Distinct(Position::Graph) => None,
    };
    let used = || {
        (0..store.predicate_count() as PredId)
            .map(|p| (p, store.predicate_stats(p)))
            .filter(|(_, stats)| stats.triples > 0)
    };
    let aggregates = || op.aggregates.iter().map(|&(_, count)| count);
    match (predicate, op.key) {
        (Some(p), None) => {
            let stats = store.predicate_stats(p);
            let counts = aggregates()
                .map(|count| match count {
                    // The classes with instances, from the class catalog (merged whole:
                    // a class's instances are split among the partitions).
                    Count::Distinct(Position::Object) if Some(p) == store.rdf_type() => {
                        Some(store.class_stats().filter(|c| c.instances > 0).count() as u64)
                    }
                    count => column(&stats, count),
                })
                .map(|n| n.map(|n| vec![n]))
                .collect::<Option<_>>()?;
            Some((Vec::new(), counts))
        }
        (None, None) => {
            let counts = aggregates()
                .map(|count| match count {
                    Count::Matches => Some(used().map(|(_, stats)| stats.triples).sum()),
                    Count::Distinct(Position::Predicate) => Some(used().count() as u64),
                    _ => None,
                })
                .map(|n| n.map(|n| vec![n]))
                .collect::<Option<_>>()?;
            Some((Vec::new(), counts))
        }
        (None, Some((_, Position::Predicate))) => {
            let mut groups: Vec<(Id, PredicateStats)> = used()
                .map(|(p, stats)| (store.predicate_term(p), stats))
                .collect();
            groups.sort_unstable_by_key(|&(key, _)| key);
            let counts = aggregates()
                .map(|count| match count {
                    Count::Distinct(Position::Predicate) => Some(vec![1; groups.len()]),
                    count => groups
                        .iter()
                        .map(|(_, stats)| column(stats, count))
                        .collect::<Option<Vec<u64>>>(),
                })
                .collect::<Option<_>>()?;
            Some((groups.into_iter().map(|(key, _)| key).collect(), counts))
        }
        (Some(p), Some((_, Position::Object))) if Some(p) == store.rdf_type() => {
            let mut classes: Vec<(Id, u64)> = store
                .class_stats()
                .filter(|class| class.instances > 0)
                .map(|class| (class.class, class.instances))
                .collect();
            classes.sort_unstable();
            let counts = aggregates()
                .map(|count| match count {
                    // Each instance is of its class once.
                    Count::Matches | Count::Distinct(Position::Subject) => {
                        Some(classes.iter().map(|&(_, n)| n).collect())
                    }
                    Count::Distinct(Position::Object) => Some(vec![1; classes.len()]),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            Some((
                classes.into_iter().map(|(class, _)| class).collect(),
                counts,
            ))
        }
        _ => None,
    }
}
