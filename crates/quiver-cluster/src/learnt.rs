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
//! Only what the owner of a walk's source holds whole is learnt and answered: a walk of a
//! constant predicate other than `rdf:type` in the default graph, out of its subject or
//! into its object (`route::whole_at_owner`), never an intersection's (its partner lists
//! have their own cache, [`crate::fetch`]). A cluster's partitions are read-only, so a
//! record stays true for as long as the process serves them. A process keeps at most
//! [`KEPT_IDS`] ids (4 bytes each) and starts afresh past them, as the partner lists' cache
//! does. Only light rows (at most [`crate::in_place::ROWS`]) are answered here, as only
//! they cross to another process in place.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::RwLock;

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pred};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::{Direction, Store};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use crate::in_place::ROWS;
use crate::route::{place, Placement};
use crate::types::values_of;

/// The ids of records one answer sends at most (16 KiB): a light hop's few records.
const SENT: usize = 4096;

/// The rows a walk answered from learnt records gives at most: as many as a walk of a
/// replicated predicate ([`crate::replicas`]); past them the rows go to the owner, where
/// the steps after the walk find them.
const GROWTH: usize = 4096;

/// The ids a process keeps at most (32 MiB): past them it starts afresh.
const KEPT_IDS: usize = 1 << 23;

/// One record of the default graph: a vertex's neighbours over a predicate in a direction.
type RecordKey = (PredId, Direction, Id);

/// The records a light hop's walks read where they ran, as its answer carries them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RecordsRead {
    records: Vec<(RecordKey, Vec<Id>)>,
    #[serde(skip)]
    ids: usize,
    #[serde(skip)]
    taken: FxHashSet<RecordKey>,
}

impl RecordsRead {
    /// Takes in the records that step `step` of `bgp` reads on `part` for `rows` (a
    /// message's, at its owner), while they fit in [`SENT`] ids.
    pub(crate) fn take(
        &mut self,
        part: &Store,
        bgp: &Bgp,
        step: &Step,
        graph: GraphRef,
        rdf_type: Option<PredId>,
        rows: &Table,
    ) {
        let Some(walk) = Walk::of(bgp, step, graph, rdf_type, rows) else {
            return;
        };
        let Some(from) = values_of(rows, walk.from) else {
            return;
        };
        let index = part.graph();
        for row in 0..rows.rows {
            let vertex = from(row);
            let key = (walk.predicate, walk.direction, vertex);
            if vertex == UNBOUND || self.taken.contains(&key) {
                continue;
            }
            let list = index.get(vertex, walk.predicate, walk.direction);
            if self.ids + list.len() > SENT {
                return;
            }
            self.ids += list.len();
            self.taken.insert(key);
            self.records.push((key, list.to_vec()));
        }
    }
}

/// A walk whose records the owner of its source holds whole, as it runs there.
struct Walk {
    predicate: PredId,
    direction: Direction,
    from: Node,
    to: Node,
}

impl Walk {
    /// Step `step` of `bgp` over `rows`, placed as its owner runs it (`route::place`: a
    /// walk whose target is bound runs as a check out of the subject), if it is such a walk.
    fn of(
        bgp: &Bgp,
        step: &Step,
        graph: GraphRef,
        rdf_type: Option<PredId>,
        rows: &Table,
    ) -> Option<Walk> {
        if graph != GraphRef::Default || step.partner.is_some() || rows.rows > ROWS as usize {
            return None;
        }
        let pattern = &bgp.patterns[step.pattern];
        let Pred::Const(predicate) = pattern.predicate else {
            return None;
        };
        if Some(predicate) == rdf_type {
            return None;
        }
        let (Placement::Owner(_), placed) = place(bgp, step, rows, rdf_type, &[]) else {
            return None;
        };
        let StepKind::Walk(direction) = placed.kind else {
            return None;
        };
        let (from, to) = match direction {
            Direction::Out => (pattern.subject, pattern.object),
            Direction::In => (pattern.object, pattern.subject),
        };
        Some(Walk {
            predicate,
            direction,
            from,
            to,
        })
    }
}

/// How a step was answered from learnt records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recalled {
    /// A check: rows kept or dropped.
    Checked,
    /// A walk: each row once per neighbour, the neighbour as a new last column.
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
    records: FxHashMap<RecordKey, Vec<Id>>,
    ids: usize,
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
        for (key, list) in read.records {
            if learnt.ids + list.len() > KEPT_IDS {
                learnt.records.clear();
                learnt.ids = 0;
            }
            learnt.ids += list.len();
            if let Some(before) = learnt.records.insert(key, list) {
                learnt.ids -= before.len();
            }
        }
    }

    /// Step `step` of `bgp` over `rows` answered from the records learnt and this
    /// process's own, where every row reads one of them and some row a learnt one; `None`
    /// otherwise (see the module doc for the walks answered). Rows that read only this
    /// process's records are left to its workers, which run the step as they always do.
    pub(crate) fn answer(
        &self,
        bgp: &Bgp,
        step: &Step,
        graph: GraphRef,
        rdf_type: Option<PredId>,
        rows: &Table,
    ) -> Option<(Table, Recalled)> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        let walk = Walk::of(bgp, step, graph, rdf_type, rows)?;
        let learnt = self.learnt.read().unwrap_or_else(|e| e.into_inner());
        if learnt.records.is_empty() {
            return None;
        }
        let from = values_of(rows, walk.from)?;
        let mut recalled = false;
        let mut list = |vertex: Id| match self.own(vertex) {
            Some(graph) => Some(graph.get(vertex, walk.predicate, walk.direction)),
            None => {
                recalled = true;
                let key = (walk.predicate, walk.direction, vertex);
                learnt.records.get(&key).map(Vec::as_slice)
            }
        };
        let answered = match values_of(rows, walk.to) {
            // Both ends bound: the rows whose edge is there.
            Some(to) => {
                let mut kept = Vec::new();
                for row in 0..rows.rows {
                    let (a, b) = (from(row), to(row));
                    if a == UNBOUND || b == UNBOUND {
                        continue;
                    }
                    if list(a)?.binary_search(&b).is_ok() {
                        kept.push(row as u32);
                    }
                }
                (rows.gather(&kept), Recalled::Checked)
            }
            None => {
                let Node::Var(to) = walk.to else {
                    return None;
                };
                let (mut selection, mut reached) = (Vec::new(), Vec::new());
                for row in 0..rows.rows {
                    let a = from(row);
                    if a == UNBOUND {
                        continue;
                    }
                    for &b in list(a)? {
                        selection.push(row as u32);
                        reached.push(b);
                    }
                    if reached.len() > GROWTH {
                        return None;
                    }
                }
                let mut walked = rows.gather(&selection);
                walked.vars.push(to);
                walked.columns.push(reached);
                (walked, Recalled::Walked)
            }
        };
        if !recalled {
            return None;
        }
        self.recalled.fetch_add(1, Ordering::Relaxed);
        Some(answered)
    }

    /// The size of the record `ask` names, if learnt.
    pub(crate) fn degree(&self, ask: &DegreeAsk) -> Option<u64> {
        let (GraphRef::Default, Some(predicate)) = (ask.graph, ask.predicate) else {
            return None;
        };
        let learnt = self.learnt.read().unwrap_or_else(|e| e.into_inner());
        let list = learnt
            .records
            .get(&(predicate, ask.direction, ask.vertex))?;
        Some(list.len() as u64)
    }

    /// Steps answered from the records learnt so far, and the ids kept.
    pub fn counts(&self) -> (u64, usize) {
        let ids = self.learnt.read().unwrap_or_else(|e| e.into_inner()).ids;
        (self.recalled.load(Ordering::Relaxed), ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(records: &[(Id, &[Id])]) -> RecordsRead {
        RecordsRead {
            records: records
                .iter()
                .map(|&(vertex, list)| ((3, Direction::Out, vertex), list.to_vec()))
                .collect(),
            ..RecordsRead::default()
        }
    }

    /// A record learnt again replaces the one kept, its ids counted once; its size answers
    /// the planner's question of it (default graph, its predicate only); turned off, a
    /// process learns nothing.
    #[test]
    fn records_are_kept_once_and_sized() {
        let learnt = LearntRecords::default();
        learnt.learn(read(&[(7, &[1, 2, 3]), (8, &[4])]));
        learnt.learn(read(&[(7, &[1, 2])]));
        assert_eq!(learnt.counts(), (0, 3));
        let ask = |graph, predicate| DegreeAsk {
            graph,
            vertex: 7,
            predicate,
            direction: Direction::Out,
        };
        assert_eq!(learnt.degree(&ask(GraphRef::Default, Some(3))), Some(2));
        assert_eq!(learnt.degree(&ask(GraphRef::Default, Some(4))), None);
        assert_eq!(learnt.degree(&ask(GraphRef::Default, None)), None);
        assert_eq!(learnt.degree(&ask(GraphRef::Named(9), Some(3))), None);
        let off = LearntRecords::default();
        off.set_on(false);
        off.learn(read(&[(7, &[1])]));
        assert_eq!(off.counts(), (0, 0));
    }
}
