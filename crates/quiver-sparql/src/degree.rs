//! The number of neighbours of a constant, for the planner and the intersection pass:
//! exact from its record where this store holds it. The coordinator of a cluster plans on
//! its own partition, which holds only the records of the vertices it owns (and of a
//! class's instances only its share): there a constant another partition owns is estimated
//! from the whole store's statistics, never read as the zero of a record it does not have.

use quiver_store::{Direction, GraphIndex, Store};

use crate::bgp::Pred;

/// Whether `store` holds `vertex`'s record in `direction` over `predicate`: a whole store
/// does; one partition of a cluster (the coordinator's) only the records of the vertices it
/// owns, and of a class's instances only its share.
fn holds_record(
    store: &Store,
    vertex: quiver_model::Id,
    predicate: Pred,
    direction: Direction,
) -> bool {
    let Some(info) = store.partition_info() else {
        return true;
    };
    let class_list = direction == Direction::In
        && matches!(predicate, Pred::Const(p) if Some(p) == store.rdf_type());
    !class_list && quiver_store::partition::owner(vertex, info.count) == info.index
}

/// The number of neighbours of a constant: exact from its record, or on a partition that
/// does not hold the record, the predicate's average degree in the whole store's statistics
/// (a class's instances: the class's size), never the zero of a record it does not have.
pub(crate) fn constant_degree(
    store: &Store,
    graph: &GraphIndex,
    vertex: quiver_model::Id,
    predicate: Pred,
    direction: Direction,
) -> f64 {
    if !holds_record(store, vertex, predicate, direction) {
        return match predicate {
            Pred::Const(p) if direction == Direction::In && Some(p) == store.rdf_type() => {
                let class = store.class_of_term(vertex);
                class.map_or(0, |c| store.class_size(c)) as f64
            }
            Pred::Const(p) => store.predicate_stats(p).avg_degree(direction),
            _ => 2.0 * graph.triples() as f64 / store.terms().max(1) as f64,
        };
    }
    match predicate {
        Pred::Const(p) => graph.get(vertex, p, direction).len() as f64,
        Pred::Var(_) => graph
            .edges(vertex, direction)
            .iter()
            .map(|(_, n)| n.len())
            .sum::<usize>() as f64,
        Pred::Absent => 0.0,
    }
}
