//! The number of neighbours of a constant, for the planner and the intersection pass:
//! exact from its record where this store holds it. The coordinator of a cluster plans on
//! its own partition, which holds only the records of the vertices it owns (and of a
//! class's instances only its share). There, a constant's record that another partition
//! owns is asked of the partitions while the query is prepared: a first planning records
//! the records it lacked and the plans it made ([`record_foreign_degrees`]), the caller
//! asks their sizes of the partitions in one batch
//! ([`crate::partitions::BgpPartitions::degrees`]) and plans again with them known. The
//! question costs a round trip between processes, as much as a light query's run: so where
//! one record is lacked and the plans for the fewest and for the most neighbours the
//! statistics allow ([`Guess`]) are those of the average, the size cannot change the plan
//! and is not asked (checked only where those two plannings cost less than the question,
//! `BgpPartitions::degrees_cost`, and once per query template, [`crate::size_free`]). A
//! record neither held nor known (planning outside a prepare, or over a merge of graphs,
//! which the partitions build per query) is estimated from the whole store's statistics,
//! never read as the zero of a record the store does not have.

use std::cell::RefCell;
use std::collections::HashMap;

use quiver_store::{Direction, GraphIndex, Store};

use crate::bgp::Pred;
use crate::dataset::GraphRef;
use crate::step::{Step, StepKind};

/// A record whose size the planner wants: `vertex`'s neighbours over `predicate` (`None`:
/// over every predicate) in `direction`, in `graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct DegreeAsk {
    pub graph: GraphRef,
    pub vertex: quiver_model::Id,
    pub predicate: Option<quiver_model::PredId>,
    pub direction: Direction,
}

impl DegreeAsk {
    /// The size of the record on a store that holds it (a partition answering for the
    /// vertices it owns).
    pub fn count(&self, store: &Store) -> u64 {
        let graph = crate::dataset::graph_index(store, self.graph);
        record_size(graph, self.vertex, self.predicate, self.direction) as u64
    }
}

/// How a recording planning sizes the foreign records it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Guess {
    /// The predicate's average degree in the whole store's statistics.
    Average,
    /// One neighbour.
    Fewest,
    /// The predicate's largest degree in the whole store's statistics.
    Most,
}

/// A plan's steps without their estimates: what decides how a pattern runs.
pub type PlanShape = Vec<(usize, StepKind, Option<(usize, Direction)>)>;

/// What a recording planning did ([`record_foreign_degrees`]).
#[derive(Debug, Default)]
pub struct Recorded {
    /// The foreign records it wanted and found neither held nor known (each once, in the
    /// order first wanted).
    pub lacked: Vec<DegreeAsk>,
    /// The plans it made, in order.
    pub plans: Vec<PlanShape>,
}

/// What a planning thread knows and lacks of foreign records ([`record_foreign_degrees`]).
struct Foreign {
    known: HashMap<DegreeAsk, u64>,
    /// Sizes known elsewhere without asking (a cluster's, `BgpPartitions::known_degrees`).
    elsewhere: Option<KnownSizes>,
    guess: Guess,
    recorded: Recorded,
}

thread_local! {
    static FOREIGN: RefCell<Option<Foreign>> = const { RefCell::new(None) };
}

/// The size of a foreign record, where known without asking anyone.
pub type KnownSizes = std::sync::Arc<dyn Fn(&DegreeAsk) -> Option<u64>>;

/// Runs `f` (a planning) with the sizes of foreign records in `known` or in `elsewhere`,
/// the others sized by `guess`, and returns with its result what it lacked and planned.
pub fn record_foreign_degrees<R>(
    (known, elsewhere): (&HashMap<DegreeAsk, u64>, Option<&KnownSizes>),
    guess: Guess,
    f: impl FnOnce() -> R,
) -> (R, Recorded) {
    let recording = Foreign {
        known: known.clone(),
        elsewhere: elsewhere.cloned(),
        guess,
        recorded: Recorded::default(),
    };
    let outer = FOREIGN.with(|cell| cell.borrow_mut().replace(recording));
    let result = f();
    let recording = FOREIGN.with(|cell| std::mem::replace(&mut *cell.borrow_mut(), outer));
    let mut recorded = recording.map(|r| r.recorded).unwrap_or_default();
    // Each once, in the order first wanted (planning is deterministic).
    let mut seen = std::collections::HashSet::new();
    recorded.lacked.retain(|ask| seen.insert(*ask));
    (result, recorded)
}

/// Notes a plan made under a recording ([`Recorded::plans`]).
pub(crate) fn note_plan(steps: &[Step]) {
    FOREIGN.with(|cell| {
        if let Some(foreign) = cell.borrow_mut().as_mut() {
            let shape = steps
                .iter()
                .map(|s| (s.pattern, s.kind, s.partner))
                .collect();
            foreign.recorded.plans.push(shape);
        }
    });
}

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

/// Which of `store`'s graphs `graph` is (`None`: a merge built for one query).
pub(crate) fn graph_ref(store: &Store, graph: &GraphIndex) -> Option<GraphRef> {
    if std::ptr::eq(graph, store.graph()) {
        return Some(GraphRef::Default);
    }
    store.named_graph_name(graph).map(GraphRef::Named)
}

/// The size of a foreign record if a recording planning knows it; else records it as
/// lacked and sizes it by the recording's guess, from the `average` and the `most`.
fn foreign_size(
    (store, graph): (&Store, &GraphIndex),
    (vertex, predicate, direction): (quiver_model::Id, Pred, Direction),
    (average, most): (f64, f64),
) -> f64 {
    let Some(predicate) = record_predicate(predicate) else {
        return 0.0;
    };
    let Some(graph) = graph_ref(store, graph) else {
        return average;
    };
    let ask = DegreeAsk {
        graph,
        vertex,
        predicate,
        direction,
    };
    FOREIGN.with(|cell| {
        let mut cell = cell.borrow_mut();
        let Some(foreign) = cell.as_mut() else {
            return average;
        };
        if let Some(&size) = foreign.known.get(&ask) {
            return size as f64;
        }
        if let Some(size) = foreign.elsewhere.as_ref().and_then(|known| known(&ask)) {
            foreign.known.insert(ask, size);
            return size as f64;
        }
        foreign.recorded.lacked.push(ask);
        match foreign.guess {
            Guess::Average => average,
            Guess::Fewest => 1.0,
            Guess::Most => most,
        }
    })
}

/// The number of neighbours of a constant: exact from its record, or from the partitions
/// where a prepare asked them; else, on a partition that does not hold the record, the
/// predicate's average degree in the whole store's statistics (a class's instances: the
/// class's size), never the zero of a record it does not have.
pub(crate) fn constant_degree(
    store: &Store,
    graph: &GraphIndex,
    vertex: quiver_model::Id,
    predicate: Pred,
    direction: Direction,
) -> f64 {
    if holds_record(store, vertex, predicate, direction) {
        return record_predicate(predicate)
            .map_or(0, |over| record_size(graph, vertex, over, direction)) as f64;
    }
    match predicate {
        Pred::Const(p) if direction == Direction::In && Some(p) == store.rdf_type() => {
            let class = store.class_of_term(vertex);
            class.map_or(0, |c| store.class_size(c)) as f64
        }
        _ => {
            let (average, most) = match predicate {
                Pred::Const(p) => {
                    let stats = store.predicate_stats(p);
                    let most = match direction {
                        Direction::Out => stats.max_out_degree,
                        Direction::In => stats.max_in_degree,
                    };
                    (stats.avg_degree(direction), most as f64)
                }
                _ => (
                    2.0 * graph.triples() as f64 / store.terms().max(1) as f64,
                    graph.triples() as f64,
                ),
            };
            foreign_size(
                (store, graph),
                (vertex, predicate, direction),
                (average, most),
            )
        }
    }
}

/// The predicate a pattern's record is over: `Some(None)` for every predicate (a
/// variable), `None` for a predicate the store does not have (no record).
fn record_predicate(predicate: Pred) -> Option<Option<quiver_model::PredId>> {
    match predicate {
        Pred::Const(p) => Some(Some(p)),
        Pred::Var(_) => Some(None),
        Pred::Absent => None,
    }
}

/// The neighbours in `vertex`'s record in `direction` over `predicate` (`None`: every
/// predicate's), on a graph that holds it.
fn record_size(
    graph: &GraphIndex,
    vertex: quiver_model::Id,
    predicate: Option<quiver_model::PredId>,
    direction: Direction,
) -> usize {
    match predicate {
        Some(p) => graph.get(vertex, p, direction).len(),
        None => graph
            .edges(vertex, direction)
            .iter()
            .map(|(_, n)| n.len())
            .sum(),
    }
}
