//! Terms recently found in a dictionary's sorted part, with their ids, for the lookups of
//! query constants, which come back again and again (a template's predicates and classes,
//! a popular resource).
//!
//! Only the sorted part's ids are remembered: they are the same in every version, while a
//! term appended by one version is absent from the versions before it. Two layers:
//! - the terms of the whole dictionary (16 K, shared by its clones, that is by a store's
//!   versions), in shards by their hash, each under its own lock: one lock for all made
//!   the threads that prepare queries wait for each other;
//! - in front of it, each thread's last few hundred terms, in slots chosen by the hash, so
//!   that the terms every query asks for (a template's predicates and classes) cost no lock
//!   and write no memory another core reads: with many clients on many cores, the shared
//!   shard of a hot term would pass its lock's cache line from core to core. A thread's
//!   slot names the dictionary it holds a term of by a number no other dictionary of the
//!   process has, so one thread serves many stores without confusing their ids.

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::Id;

/// Terms the shared layer keeps before starting again (each shard its share), and its
/// shards.
pub(super) const REMEMBERED: usize = 16_384;
const SHARDS: usize = 64;

/// A thread's slots (a power of two).
const LOCAL: usize = 512;

/// See the module documentation (shared by clones).
#[derive(Debug, Clone)]
pub(super) struct Remembered {
    shards: Arc<[Mutex<Shard>]>,
    hasher: foldhash::fast::FixedState,
    /// Unique among the process's dictionaries (clones share it): names this one in the
    /// threads' slots.
    generation: u64,
}

/// One shard of [`Remembered`].
type Shard = std::collections::HashMap<Box<[u8]>, Id, foldhash::fast::FixedState>;

/// One of a thread's slots: a term of dictionary `generation` (0: empty) and its id.
#[derive(Default)]
struct Slot {
    generation: u64,
    hash: u64,
    term: Vec<u8>,
    id: Id,
}

thread_local! {
    static SLOTS: RefCell<Vec<Slot>> = const { RefCell::new(Vec::new()) };
}

impl Default for Remembered {
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: foldhash::fast::FixedState::default(),
            generation: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }
}

impl Remembered {
    /// The hash that [`Remembered::get`] and [`Remembered::insert`] take.
    pub(super) fn hash(&self, term: &[u8]) -> u64 {
        self.hasher.hash_one(term)
    }

    /// The id of `term` (hashed `hash`), if remembered: by this thread, else by any.
    pub(super) fn get(&self, term: &[u8], hash: u64) -> Option<Id> {
        let local = SLOTS.with(|slots| {
            let slots = slots.borrow();
            let slot = slots.get(hash as usize % LOCAL)?;
            (slot.generation == self.generation && slot.hash == hash && slot.term == term)
                .then_some(slot.id)
        });
        if local.is_some() {
            return local;
        }
        let id = *self.shard(hash).get(term)?;
        self.put_local(term, hash, id);
        Some(id)
    }

    /// Remembers that `term` (hashed `hash`) is `id` in the sorted part.
    pub(super) fn insert(&self, term: &[u8], hash: u64, id: Id) {
        {
            let mut shard = self.shard(hash);
            if shard.len() >= REMEMBERED / SHARDS {
                shard.clear();
            }
            shard.insert(term.into(), id);
        }
        self.put_local(term, hash, id);
    }

    fn put_local(&self, term: &[u8], hash: u64, id: Id) {
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            if slots.is_empty() {
                slots.resize_with(LOCAL, Slot::default);
            }
            let slot = &mut slots[hash as usize % LOCAL];
            slot.generation = self.generation;
            slot.hash = hash;
            slot.term.clear();
            slot.term.extend_from_slice(term);
            slot.id = id;
        });
    }

    /// The shard that holds terms hashed `hash`, locked.
    fn shard(&self, hash: u64) -> MutexGuard<'_, Shard> {
        // The top bits: the shard's map takes its buckets from the low ones.
        let at = (hash >> 58) as usize % self.shards.len();
        self.shards[at].lock().unwrap_or_else(|e| e.into_inner())
    }
}
