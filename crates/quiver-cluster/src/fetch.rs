//! Partner lists of intersections, fetched from the partitions that hold them.
//!
//! An intersection kept fused over processes (`route::orient`) runs where its walk's
//! source lives; its partner's lists live at the owners of the partner's source values.
//! The worker asks each owner once for the lists of all the distinct values its rows need
//! (one request per owner and batch of rows, never one per row) and keeps the rows
//! waiting ([`Waiting`]) until every owner answered. Lists a worker fetched are kept
//! ([`ListCache`]) for the next queries: a cluster's partitions are read-only, so a list
//! stays valid for as long as the worker serves them.

use quiver_model::{Id, PredId};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::step::Step;
use quiver_sparql::table::Table;
use quiver_store::Direction;
use rustc_hash::FxHashMap;

/// Which list: a graph's record of a vertex over a predicate, in a direction.
pub(crate) type ListKey = (GraphRef, PredId, Direction, Id);

/// The ids a worker's cache holds at most (4 bytes each): past that it starts afresh.
const CACHE_IDS: usize = 1 << 23;

/// Lists a worker fetched from other partitions, by graph, predicate, direction and vertex.
#[derive(Default)]
pub(crate) struct ListCache {
    lists: FxHashMap<ListKey, Vec<Id>>,
    ids: usize,
}

impl ListCache {
    pub(crate) fn get(&self, key: &ListKey) -> Option<&[Id]> {
        self.lists.get(key).map(Vec::as_slice)
    }

    pub(crate) fn contains(&self, key: &ListKey) -> bool {
        self.lists.contains_key(key)
    }

    /// Keeps `list`; a cache past its size is emptied first (the lists are cheap to fetch
    /// again, and a clock or LRU would cost every hit).
    pub(crate) fn insert(&mut self, key: ListKey, list: Vec<Id>) {
        if self.ids + list.len() > CACHE_IDS {
            self.lists.clear();
            self.ids = 0;
        }
        self.ids += list.len();
        if let Some(old) = self.lists.insert(key, list) {
            self.ids -= old.len();
        }
    }
}

/// Rows of a query that wait for the partner lists of their step.
pub(crate) struct Waiting {
    pub query: u64,
    pub step: u32,
    /// The step as oriented by the router (a walk with its partner).
    pub run: Step,
    pub plan: std::sync::Arc<crate::message::Plan>,
    pub rows: Table,
    /// What the fetches and their answers exchanged so far, and their weights.
    pub carried: crate::message::Carried,
    pub truncated: bool,
    /// Owners yet to answer.
    pub pending: usize,
    /// The lists fetched for these rows, by the partner's source value.
    pub lists: FxHashMap<Id, Vec<Id>>,
}

/// The rows waiting on each worker, by a number the worker gives each batch.
#[derive(Default)]
pub(crate) struct Stash {
    waiting: FxHashMap<u64, Waiting>,
    next: u64,
}

impl Stash {
    /// Keeps `waiting`; returns the number its owners' answers name.
    pub(crate) fn park(&mut self, waiting: Waiting) -> u64 {
        let number = self.next;
        self.next += 1;
        self.waiting.insert(number, waiting);
        number
    }

    /// Drops the batches of `query` (cancelled).
    pub(crate) fn forget(&mut self, query: u64) {
        self.waiting.retain(|_, waiting| waiting.query != query);
    }

    /// Adds a piece of one owner's answer to batch `number` (its lists, and what its fetch
    /// and it exchanged, with its weight; `last`: the owner's last piece, which arrives
    /// last, as timely's exchange keeps the order of what one worker sends another);
    /// returns the batch once every owner answered (an answer for a batch this worker does
    /// not hold is dropped).
    pub(crate) fn answer(
        &mut self,
        number: u64,
        lists: Vec<(Id, Vec<Id>)>,
        carried: crate::message::Carried,
        last: bool,
    ) -> Option<Waiting> {
        let waiting = self.waiting.get_mut(&number)?;
        waiting.lists.extend(lists);
        waiting.carried.add(carried);
        if !last {
            return None;
        }
        waiting.pending -= 1;
        if waiting.pending > 0 {
            return None;
        }
        self.waiting.remove(&number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Carried, Plan};
    use quiver_sparql::step::StepKind;

    #[test]
    fn rows_wait_for_the_last_piece_of_every_owner() {
        let mut stash = Stash::default();
        let waiting = Waiting {
            query: 1,
            step: 0,
            run: Step::new(0, StepKind::Walk(Direction::Out), 1.0),
            plan: std::sync::Arc::new(Plan::empty()),
            rows: Table::unit(),
            carried: Carried::default(),
            truncated: false,
            pending: 2,
            lists: FxHashMap::default(),
        };
        let batch = stash.park(waiting);
        let piece = |value: Id| vec![(value, vec![value + 100])];
        // Owner A's first piece, owner B's whole answer, then A's last piece.
        assert!(stash
            .answer(batch, piece(1), Carried::default(), false)
            .is_none());
        assert!(stash
            .answer(batch, piece(2), Carried::default(), true)
            .is_none());
        let done = stash
            .answer(batch, piece(3), Carried::default(), true)
            .unwrap();
        let mut values: Vec<Id> = done.lists.keys().copied().collect();
        values.sort();
        assert_eq!(values, [1, 2, 3]);
        // Answered: a late piece finds no batch.
        assert!(stash
            .answer(batch, piece(4), Carried::default(), true)
            .is_none());
    }
}
