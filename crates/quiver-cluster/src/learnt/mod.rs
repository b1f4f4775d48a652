//! Records of other processes that light queries read, learnt from the answers that
//! brought their rows, so that the next light query reading one walks it where its rows
//! are, with no round trip.
//!
//! A light query that starts at a constant another process owns crosses to it: a round
//! trip over a connection ([`crate::direct`]) and two wake-ups of a thread on each side,
//! several times the time of the query's steps. The records such a query reads are few and
//! short (a course's students, a department's professors). So the process that runs a light
//! hop in place sends back, beside the rows, the records its walks read there, at most
//! [`SENT`] ids an answer ([`RecordsRead`]); the asker keeps them ([`LearntRecords`]). A
//! later walk or check whose rows each read a record learnt or one of the asker's own
//! partitions (a department's professors, some owned here, some there) is then answered
//! before the rows are routed (`message::route`), as the replicated predicates' are
//! ([`crate::replicas`]). Wukong fetches records of other machines by one-sided reads;
//! this keeps the ones a light query fetched.
//!
//! Only what the owner of a walk's source holds whole is learnt and answered, in the
//! default graph, never an intersection's (its partner lists have their own cache,
//! [`crate::fetch`]):
//! - a walk of a constant predicate other than `rdf:type`, out of its subject or into its
//!   object (`route::whole_at_owner`): the record of that predicate;
//! - a walk over a variable predicate out of its subject, or into an object that is none
//!   of the graph's classes (`route::place`): the vertex's record over every predicate
//!   (`<x> ?p ?o`, LUBM's q10 `?x ?p <professor>`, what a page about one resource asks),
//!   which also answers later walks of one of its predicates.
//!
//! A cluster's partitions are read-only, so a record stays true for as long as the process
//! serves them. A process keeps at most [`KEPT_IDS`] ids (4 bytes each, a word more per
//! predicate) and starts afresh past them, as the partner lists' cache does. Only light
//! rows (at most [`crate::route::IN_PLACE_ROWS`]) are answered here, as only they cross to
//! another process in place.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::Node;
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::{Direction, Store};
use rustc_hash::FxHashMap;

use crate::types::values_of;

mod read;
mod walk;

pub(crate) use read::RecordsRead;
pub(crate) use walk::PlanStep;
use walk::{lists_ids, Lists, Over, RecordKey, VertexLists, Walk, WalkPredicate};

/// The ids of records one answer sends at most (16 KiB): a light hop's few records.
const SENT: usize = 4096;

/// The rows a walk answered from learnt records gives at most: as many as a walk of a
/// replicated predicate ([`crate::replicas`]); past them the rows go to the owner, where
/// the steps after the walk find them.
const GROWTH: usize = 4096;

/// The ids a process keeps at most (32 MiB): past them it starts afresh.
const KEPT_IDS: usize = 1 << 23;

/// How a step was answered from learnt records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recalled {
    /// A check: rows kept or dropped.
    Checked,
    /// A walk, or a check over a variable predicate: rows given new last columns (the
    /// predicate walked, for a variable one, then the neighbour reached, for a walk), each
    /// once per neighbour (a check: per predicate joining its two ends).
    Walked,
}

/// The records a process learnt from other processes' answers (see the module doc), read
/// beside those of its own partitions.
#[derive(Default)]
pub struct LearntRecords {
    learnt: RwLock<Learnt>,
    /// Steps answered from them.
    recalled: AtomicU64,
    /// Whether records are learnt and recalled ([`LearntRecords::set_on`]).
    off: AtomicBool,
    /// This process's partitions, the first's worker index, and the cluster's workers.
    parts: Vec<Store>,
    first: u32,
    workers: u32,
}

impl std::fmt::Debug for LearntRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LearntRecords")
            .field("learnt", &self.learnt)
            .field("recalled", &self.recalled)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct Learnt {
    records: FxHashMap<RecordKey, Lists>,
    ids: usize,
}

impl Learnt {
    /// The lists of `vertex` a walk of `predicate` in `direction` reads, if learnt: a
    /// constant predicate's from its own record or from the vertex's record over every
    /// predicate.
    fn lists(
        &self,
        predicate: WalkPredicate,
        direction: Direction,
        vertex: Id,
    ) -> Option<&[(PredId, Vec<Id>)]> {
        let every = || self.records.get(&(Over::Every, direction, vertex));
        let lists = match predicate {
            WalkPredicate::Const(_) => self
                .records
                .get(&predicate.key(direction, vertex))
                .or_else(every),
            WalkPredicate::Bound(_) | WalkPredicate::Free(_) => every(),
        };
        lists.map(Vec::as_slice)
    }
}

impl LearntRecords {
    /// None learnt yet, on the process whose partitions are `parts`, the first of them
    /// worker `first`'s of the cluster's `workers`.
    pub(crate) fn new(parts: Vec<Store>, first: u32, workers: u32) -> Self {
        Self {
            parts,
            first,
            workers,
            ..Self::default()
        }
    }

    /// The default graph of the partition of this process that owns `vertex`, if one does.
    fn own(&self, vertex: Id) -> Option<&quiver_store::GraphIndex> {
        let at = quiver_store::partition::owner(vertex, self.workers).checked_sub(self.first)?;
        self.parts.get(at as usize).map(Store::graph)
    }

    /// Whether records are learnt and recalled (they are unless turned off): off, every
    /// light query that reads another process's records crosses to it, as without them.
    pub(crate) fn set_on(&self, on: bool) {
        self.off.store(!on, Ordering::Relaxed);
    }

    /// Keeps the records an answer brought.
    pub(crate) fn learn(&self, read: RecordsRead) {
        if read.records.is_empty() || self.off.load(Ordering::Relaxed) {
            return;
        }
        let mut learnt = self.learnt.write().unwrap_or_else(|e| e.into_inner());
        for (key, lists) in read.records {
            let ids = lists_ids(&lists);
            if learnt.ids + ids > KEPT_IDS {
                learnt.records.clear();
                learnt.ids = 0;
            }
            learnt.ids += ids;
            if let Some(before) = learnt.records.insert(key, lists) {
                learnt.ids -= lists_ids(&before);
            }
        }
    }

    /// `planned` over `rows` answered from the records learnt and this process's own,
    /// where every row reads one of them and some row a learnt one; `None` otherwise (see
    /// the module doc for the walks answered). Rows that read only this process's records
    /// are left to its workers, which run the step as they always do.
    pub(crate) fn answer(&self, planned: PlanStep<'_>, rows: &Table) -> Option<(Table, Recalled)> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let walk = Walk::of(&planned, rows)?;
        let learnt = self.learnt.read().unwrap_or_else(|e| e.into_inner());
        if learnt.records.is_empty() {
            return None;
        }
        let from = values_of(rows, walk.from)?;
        let mut recalled = false;
        let mut lists = |vertex: Id| match self.own(vertex) {
            Some(graph) => Some(VertexLists::Own(graph.edges(vertex, walk.direction))),
            None => {
                recalled = true;
                let lists = learnt.lists(walk.predicate, walk.direction, vertex)?;
                Some(VertexLists::Learnt(lists))
            }
        };
        // The predicate each row walks, and the term binding a variable one.
        let parts = self.parts.first()?;
        let bound = match walk.predicate {
            WalkPredicate::Bound(v) => rows.column(v),
            _ => None,
        };
        let predicate_of = |row: usize| match (walk.predicate, bound) {
            (WalkPredicate::Const(p), _) => Some(p),
            (_, Some(column)) => parts.predicate_of_term(column[row]),
            _ => None,
        };
        let free = match walk.predicate {
            WalkPredicate::Free(v) => Some(v),
            _ => None,
        };
        let mut out = Walked::default();
        let to = values_of(rows, walk.to);
        for row in 0..rows.rows {
            let a = from(row);
            let b = to.as_ref().map_or(UNBOUND, |to| to(row));
            if a == UNBOUND || (to.is_some() && b == UNBOUND) {
                continue;
            }
            let vertex_lists = lists(a)?;
            match free {
                Some(_) => vertex_lists.each(|p, list| out.emit(row, Some(p), list, b)),
                None => {
                    if let Some(p) = predicate_of(row) {
                        out.emit(row, None, vertex_lists.get(p), b);
                    }
                }
            }
            if out.selection.len() > GROWTH {
                return None;
            }
        }
        if !recalled {
            return None;
        }
        let mut answered = rows.gather(&out.selection);
        if let Some(v) = free {
            answered.vars.push(v);
            answered.columns.push(
                out.predicates
                    .iter()
                    .map(|&p| parts.predicate_term(p))
                    .collect(),
            );
        }
        let how = match (to, walk.to) {
            (Some(_), _) if free.is_some() => Recalled::Walked,
            (Some(_), _) => Recalled::Checked,
            (None, Node::Var(v)) => {
                answered.vars.push(v);
                answered.columns.push(out.reached);
                Recalled::Walked
            }
            (None, _) => return None,
        };
        self.recalled.fetch_add(1, Ordering::Relaxed);
        Some((answered, how))
    }

    /// The size of the record `ask` names, if learnt.
    pub(crate) fn degree(&self, ask: &DegreeAsk) -> Option<u64> {
        if ask.graph != GraphRef::Default {
            return None;
        }
        let learnt = self.learnt.read().unwrap_or_else(|e| e.into_inner());
        let size = match ask.predicate {
            Some(p) => {
                let lists = learnt.lists(WalkPredicate::Const(p), ask.direction, ask.vertex)?;
                VertexLists::Learnt(lists).get(p).len()
            }
            None => {
                let lists = learnt
                    .records
                    .get(&(Over::Every, ask.direction, ask.vertex))?;
                lists.iter().map(|(_, list)| list.len()).sum()
            }
        };
        Some(size as u64)
    }

    /// Steps answered from the records learnt so far, and the ids kept.
    pub fn counts(&self) -> (u64, usize) {
        let ids = self.learnt.read().unwrap_or_else(|e| e.into_inner()).ids;
        (self.recalled.load(Ordering::Relaxed), ids)
    }
}

/// The rows a step answered here gives: the input rows they extend, and for each the
/// predicate walked (a variable one's) and the neighbour reached (a walk's).
#[derive(Default)]
struct Walked {
    selection: Vec<u32>,
    predicates: Vec<PredId>,
    reached: Vec<Id>,
}

impl Walked {
    /// Row `row` over `list`, the lists of `predicate` (if the walk binds it): once per
    /// neighbour, or once if `target` (bound, else [`UNBOUND`]) is one of them.
    fn emit(&mut self, row: usize, predicate: Option<PredId>, list: &[Id], target: Id) {
        let mut one = |reached: Id| {
            self.selection.push(row as u32);
            if let Some(p) = predicate {
                self.predicates.push(p);
            }
            if target == UNBOUND {
                self.reached.push(reached);
            }
        };
        if target != UNBOUND {
            if list.binary_search(&target).is_ok() {
                one(target);
            }
        } else {
            list.iter().for_each(|&b| one(b));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(records: &[(Id, &[Id])]) -> RecordsRead {
        let key = |vertex| (Over::One(3), Direction::Out, vertex);
        RecordsRead::of(
            records
                .iter()
                .map(|&(vertex, list)| (key(vertex), vec![(3, list.to_vec())]))
                .collect(),
        )
    }

    /// A record learnt again replaces the one kept, its ids counted once; its size answers
    /// the planner's question of it (default graph, its predicate only; a record over
    /// every predicate answers for each of them and for all); turned off, a process learns
    /// nothing.
    #[test]
    fn records_are_kept_once_and_sized() {
        let learnt = LearntRecords::default();
        learnt.learn(read(&[(7, &[1, 2, 3]), (8, &[4])]));
        learnt.learn(read(&[(7, &[1, 2])]));
        // Each list's ids and a word for its predicate.
        assert_eq!(learnt.counts(), (0, 5));
        let ask = |vertex, graph, predicate| DegreeAsk {
            graph,
            vertex,
            predicate,
            direction: Direction::Out,
        };
        assert_eq!(learnt.degree(&ask(7, GraphRef::Default, Some(3))), Some(2));
        assert_eq!(learnt.degree(&ask(7, GraphRef::Default, Some(4))), None);
        assert_eq!(learnt.degree(&ask(7, GraphRef::Default, None)), None);
        assert_eq!(learnt.degree(&ask(7, GraphRef::Named(9), Some(3))), None);
        let every = vec![(3, vec![5, 6]), (4, vec![7])];
        learnt.learn(RecordsRead::of(vec![(
            (Over::Every, Direction::Out, 9),
            every,
        )]));
        assert_eq!(learnt.counts(), (0, 10));
        assert_eq!(learnt.degree(&ask(9, GraphRef::Default, None)), Some(3));
        assert_eq!(learnt.degree(&ask(9, GraphRef::Default, Some(4))), Some(1));
        // The whole record says that vertex 9 has no edge over predicate 5.
        assert_eq!(learnt.degree(&ask(9, GraphRef::Default, Some(5))), Some(0));
        let off = LearntRecords::default();
        off.set_on(false);
        off.learn(read(&[(7, &[1])]));
        assert_eq!(off.counts(), (0, 0));
    }
}
