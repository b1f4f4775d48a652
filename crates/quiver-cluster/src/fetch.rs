//! Partner lists of intersections, fetched from the partitions that hold them.
//!
//! An intersection kept fused over processes (`route::orient`) runs where its walk's
//! source lives; its partner's lists live at the owners of the partner's source values.
//! A worker reads the lists its own process's partitions hold directly, and asks each
//! owner in another process once for the lists of all the distinct values its rows need
//! (one request per owner and batch of rows, never one per row), keeping the rows waiting
//! ([`Waiting`]) until every owner's answer came whole (its pieces counted, in whatever
//! order they are read: [`crate::pieces`]). Lists fetched are kept for the next batches
//! and queries in one cache per process ([`ProcessLists`]), which all its workers (every
//! lane of each) and its asking threads share: a cluster's partitions are read-only, so
//! a list stays valid for as long as the process serves them, and a list a process
//! fetched once serves all its workers. A batch holds its own references to the lists it
//! found kept, so that the cache may start afresh while the batch waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use quiver_model::{Id, PredId};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::step::Step;
use quiver_sparql::table::Table;
use quiver_store::{Direction, Store};
use rustc_hash::FxHashMap;

use crate::pieces::{Piece, Tally};

/// Which list: a graph's record of a vertex over a predicate, in a direction.
pub(crate) type ListKey = (GraphRef, PredId, Direction, Id);

/// A list as kept and lent to the batches that read it.
pub(crate) type List = Arc<[Id]>;

/// The ids the cache holds at most for each of its process's partitions: past that it
/// starts afresh. 2^23 ids (32 MiB of 4-byte ids) a partition hold LUBM-10240's q1
/// lists from the other processes of a 4 × 4 cluster (1,000 universities' graduates,
/// about 31,000 ids each, three quarters of them elsewhere: 23 M ids for 4 partitions).
const CACHE_IDS_PER_PARTITION: usize = 1 << 23;

/// Lists fetched from other processes, by graph, predicate, direction and vertex.
struct ListCache {
    lists: FxHashMap<ListKey, List>,
    ids: usize,
    most: usize,
}

impl ListCache {
    /// Keeps `list`; a cache past its size is emptied first (the lists are cheap to fetch
    /// again, and a clock or LRU would cost every hit; batches waiting keep their own).
    fn insert(&mut self, key: ListKey, list: List) {
        if self.ids + list.len() > self.most {
            self.lists.clear();
            self.ids = 0;
        }
        self.ids += list.len();
        if let Some(old) = self.lists.insert(key, list) {
            self.ids -= old.len();
        }
    }
}

/// What every worker of one process shares about partner lists: the process's partitions,
/// read in place of a fetch, and the lists fetched from other processes.
pub(crate) struct ProcessLists {
    /// The first worker of this process (its partitions are `first..first + parts.len()`).
    first: u32,
    parts: Vec<Store>,
    cache: Mutex<ListCache>,
    /// The ids the cache holds at most.
    most: usize,
    /// Whether the lists of this process's other partitions are read in place of a fetch.
    reading: AtomicBool,
}

impl Default for ProcessLists {
    /// A cache alone, for a worker that knows no partition of its process but its own.
    fn default() -> Self {
        Self::new(0, Vec::new())
    }
}

impl ProcessLists {
    /// The lists shared by the workers `first..first + parts.len()`, whose partitions
    /// `parts` are.
    pub(crate) fn new(first: u32, parts: Vec<Store>) -> Self {
        let most = CACHE_IDS_PER_PARTITION * parts.len().max(1);
        Self::holding(first, parts, most)
    }

    /// [`Self::new`], its cache holding at most `most` ids.
    fn holding(first: u32, parts: Vec<Store>, most: usize) -> Self {
        Self {
            first,
            parts,
            cache: Mutex::new(ListCache {
                lists: FxHashMap::default(),
                ids: 0,
                most,
            }),
            most,
            reading: AtomicBool::new(true),
        }
    }

    /// Whether the lists of this process's other partitions are read in place of a fetch.
    pub(crate) fn set_reading(&self, on: bool) {
        self.reading.store(on, Ordering::Relaxed);
    }

    /// Worker `owner`'s partition, if it is one of this process's and its lists are read
    /// in place of a fetch.
    pub(crate) fn reads(&self, owner: u32) -> Option<&Store> {
        self.part(owner)
            .filter(|_| self.reading.load(Ordering::Relaxed))
    }

    /// The ids the cache holds at most.
    pub(crate) fn capacity(&self) -> usize {
        self.most
    }

    /// Worker `owner`'s partition, if it is one of this process's.
    pub(crate) fn part(&self, owner: u32) -> Option<&Store> {
        let at = owner.checked_sub(self.first)?;
        self.parts.get(at as usize)
    }

    /// The lists kept for `keys`, in their order (one lock for all).
    pub(crate) fn kept(&self, keys: impl Iterator<Item = ListKey>) -> Vec<Option<List>> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        keys.map(|key| cache.lists.get(&key).cloned()).collect()
    }

    /// Keeps `lists` (one lock for all).
    pub(crate) fn keep<'a>(&self, lists: impl Iterator<Item = (ListKey, &'a List)>) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        for (key, list) in lists {
            cache.insert(key, Arc::clone(list));
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
    /// The fetches sent for these rows (each answered apart, in pieces).
    pub answers: usize,
    /// The pieces of their answers that came.
    pub tally: Tally,
    /// The lists fetched for these rows, or found kept, by the partner's source value.
    pub lists: FxHashMap<Id, List>,
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
    /// and it exchanged, with its weight; `piece`: its place in its answer); returns the
    /// batch once every fetch's answer came whole, in whatever order its pieces came (an
    /// answer for a batch this worker does not hold is dropped).
    pub(crate) fn answer(
        &mut self,
        number: u64,
        lists: Vec<(Id, List)>,
        carried: crate::message::Carried,
        piece: Piece,
    ) -> Option<Waiting> {
        let waiting = self.waiting.get_mut(&number)?;
        waiting.lists.extend(lists);
        waiting.carried.add(carried);
        waiting.tally.add(piece);
        if !waiting.tally.whole(waiting.answers) {
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

    /// A batch keeps the lists it found kept when the cache starts afresh meanwhile (as
    /// another worker's answer may make it do), and the cache counts what it holds.
    #[test]
    fn lists_lent_to_a_batch_outlive_the_cache_starting_afresh() {
        let lists = ProcessLists::holding(0, Vec::new(), 5);
        let key = |value: Id| (GraphRef::Default, 1, Direction::In, value);
        let list = |ids: &[Id]| List::from(ids.to_vec());
        lists.keep([(key(1), &list(&[10, 11]))].into_iter());
        // Kept again, the same list is counted once: 2 of 5 ids.
        lists.keep([(key(1), &list(&[10, 11]))].into_iter());
        lists.keep([(key(2), &list(&[20, 21, 22]))].into_iter());
        let held = lists.kept([key(1), key(2), key(3)].into_iter());
        assert_eq!(held[0].as_deref(), Some(&[10, 11][..]));
        assert_eq!(held[1].as_deref(), Some(&[20, 21, 22][..]));
        assert!(held[2].is_none());
        // One id more than the cache holds: it starts afresh with the new list alone.
        lists.keep([(key(3), &list(&[30]))].into_iter());
        let now = lists.kept([key(1), key(2), key(3)].into_iter());
        assert!(now[0].is_none() && now[1].is_none());
        assert_eq!(now[2].as_deref(), Some(&[30][..]));
        // What the batch took is still whole.
        assert_eq!(held[0].as_deref(), Some(&[10, 11][..]));
        assert_eq!(held[1].as_deref(), Some(&[20, 21, 22][..]));
    }

    /// Rows wait for every piece of every owner's answer, in whatever order the pieces
    /// are read: owner A's last piece first, then B's whole answer, then A's first piece
    /// leave A's middle piece still to come.
    #[test]
    fn rows_wait_for_every_piece_of_every_owner_in_any_order() {
        let mut stash = Stash::default();
        let waiting = Waiting {
            query: 1,
            step: 0,
            run: Step::new(0, StepKind::Walk(Direction::Out), 1.0),
            plan: std::sync::Arc::new(Plan::empty()),
            rows: Table::unit(),
            carried: Carried::default(),
            truncated: false,
            answers: 2,
            tally: Tally::default(),
            lists: FxHashMap::default(),
        };
        let batch = stash.park(waiting);
        let lists = |value: Id| vec![(value, List::from(vec![value + 100]))];
        let of_a = |at| Piece { at, of: 3 };
        let mut answer =
            |value: Id, piece: Piece| stash.answer(batch, lists(value), Carried::default(), piece);
        assert!(answer(3, of_a(2)).is_none());
        assert!(answer(4, Piece::WHOLE).is_none());
        assert!(
            answer(1, of_a(0)).is_none(),
            "A's middle piece is on its way"
        );
        let done = answer(2, of_a(1)).expect("every piece came");
        let mut values: Vec<Id> = done.lists.keys().copied().collect();
        values.sort();
        assert_eq!(values, [1, 2, 3, 4]);
        // Answered: a late piece finds no batch.
        assert!(answer(5, Piece::WHOLE).is_none());
    }
}
