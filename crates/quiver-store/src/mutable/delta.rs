//! The delta of a mutable graph: a sharded concurrent overlay of whole neighbour lists.
//!
//! Each changed key maps to its complete new neighbour list, an immutable [`List`] (an
//! empty list: the key has no neighbours any more; a short list lives in the entry). A
//! write replaces the entry under its shard's write lock and a read copies it (or runs on
//! it) under the read lock, so a reader holds either the old or the new list of a key,
//! never a mix of the two; a list is never modified in place. Materialising whole lists
//! costs a copy of the key's list per write (batches group their changes per key, see
//! [`MutableGraph::apply`](super::MutableGraph::apply)), and in exchange a read of a
//! changed key is one hash probe with no merging.
//!
//! Most keys of a large graph are never changed, so a per-vertex bit filter (one bit per
//! vertex of the base, per direction) lets a read of an untouched vertex skip the hash map:
//! one bit test in a dense array that stays in cache. Writers set the bit before they
//! publish the entry, so a reader that sees the bit clear sees the base, which is the value
//! from before that write.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

use quiver_model::Id;
use rayon::slice::ParallelSliceMut;
use rustc_hash::FxBuildHasher;

use super::list::List;
use crate::graph::{Direction, Key};

const SHARDS: usize = 64;

type Shard = RwLock<HashMap<Key, List, FxBuildHasher>>;

/// Changed keys and their new lists.
pub(crate) struct Delta {
    shards: Box<[Shard]>,
    /// Bit `v` of `filter[direction]`: vertex `v` has (or had) an entry in that direction.
    /// Vertices beyond the filter always probe the map.
    filter: [Box<[AtomicU64]>; 2],
    entries: AtomicUsize,
}

fn side(direction: Direction) -> usize {
    match direction {
        Direction::Out => 0,
        Direction::In => 1,
    }
}

impl Delta {
    /// An empty delta whose filter covers vertices `0..vertices`.
    pub(crate) fn new(vertices: usize) -> Self {
        let words = vertices.div_ceil(64);
        let filter = || (0..words).map(|_| AtomicU64::new(0)).collect();
        Delta {
            shards: (0..SHARDS)
                .map(|_| RwLock::new(HashMap::default()))
                .collect(),
            filter: [filter(), filter()],
            entries: AtomicUsize::new(0),
        }
    }

    /// Number of keys with an entry.
    pub(crate) fn len(&self) -> usize {
        self.entries.load(Ordering::Acquire)
    }

    /// The shard of `key`, chosen by hash bits that the shard's own table does not use:
    /// hashbrown places an entry by the low bits and tags it with the top seven, so
    /// sharding by the top bits would leave every key of a shard with nearly the same tag
    /// and turn each probe into a walk over false matches.
    fn shard(&self, key: &Key) -> &Shard {
        let hash = FxBuildHasher.hash_one(key);
        &self.shards[(hash >> 32) as usize & (SHARDS - 1)]
    }

    /// Whether `key` may have an entry (false: it certainly has none).
    #[inline(always)]
    fn may_contain(&self, key: &Key) -> bool {
        if self.len() == 0 {
            return false;
        }
        let filter = &self.filter[side(key.direction)];
        let vertex = key.vertex as u64;
        match filter.get((vertex / 64) as usize) {
            Some(word) => word.load(Ordering::Acquire) & (1 << (vertex % 64)) != 0,
            None => true,
        }
    }

    /// The list of `key`, if the delta has one.
    #[inline]
    pub(crate) fn get(&self, key: &Key) -> Option<List> {
        if !self.may_contain(key) {
            return None;
        }
        let shard = self
            .shard(key)
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        shard.get(key).cloned()
    }

    /// `f` of the list of `key` (run under the shard's read lock), or `f` back if the
    /// delta has no list for `key`.
    /// The filter test is inlined into every lookup; the locked probe is not.
    #[inline(always)]
    pub(crate) fn with<R, F: FnOnce(&[Id]) -> R>(&self, key: &Key, f: F) -> Result<R, F> {
        if !self.may_contain(key) {
            return Err(f);
        }
        self.with_locked(key, f)
    }

    #[inline(never)]
    fn with_locked<R, F: FnOnce(&[Id]) -> R>(&self, key: &Key, f: F) -> Result<R, F> {
        let shard = self
            .shard(key)
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        match shard.get(key) {
            Some(list) => Ok(f(list)),
            None => Err(f),
        }
    }

    /// Publishes `list` as the list of `key`, replacing any previous entry atomically;
    /// returns the previous entry. Callers serialise their puts (the graph's writer lock),
    /// so the filter and the entry count are updated with plain stores, not locked
    /// read-modify-writes, which would wait for the entry's store to reach the cache.
    pub(crate) fn put(&self, key: Key, list: List) -> Option<List> {
        let filter = &self.filter[side(key.direction)];
        let vertex = key.vertex as u64;
        if let Some(word) = filter.get((vertex / 64) as usize) {
            let bits = word.load(Ordering::Relaxed);
            let bit = 1 << (vertex % 64);
            if bits & bit == 0 {
                word.store(bits | bit, Ordering::Release);
            }
        }
        let mut shard = self
            .shard(&key)
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let previous = shard.insert(key, list);
        if previous.is_none() {
            let entries = self.entries.load(Ordering::Relaxed);
            self.entries.store(entries + 1, Ordering::Release);
        }
        previous
    }

    /// Every entry, sorted by (direction, vertex, predicate): the input of a compaction.
    pub(crate) fn sorted_entries(&self) -> Vec<(Key, List)> {
        let mut entries = Vec::with_capacity(self.len());
        for shard in self.shards.iter() {
            let shard = shard.read().unwrap_or_else(PoisonError::into_inner);
            entries.extend(shard.iter().map(|(key, list)| (*key, list.clone())));
        }
        // One integer per key compares faster than a tuple; the sort runs on every core.
        entries.par_sort_unstable_by_key(|(key, _)| {
            (side(key.direction) as u128) << 96 | (key.vertex as u128) << 32 | key.predicate as u128
        });
        entries
    }
}
