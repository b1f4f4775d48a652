//! Terms recently found in a dictionary's sorted part, with their ids, for the lookups of
//! query constants, which come back again and again (a template's predicates and classes,
//! a popular resource).
//!
//! Only the sorted part's ids are remembered: they are the same in every version, while a
//! term appended by one version is absent from the versions before it. Each thread keeps
//! its last few hundred terms, in slots chosen by the hash, so that the terms every query
//! asks for cost no lock and write no memory another core reads. A slot names the
//! dictionary it holds a term of by a number no other dictionary of the process has
//! (clones, a store's versions, share it), so one thread serves many stores without
//! confusing their ids.
//!
//! There is no layer shared by the threads. One was tried behind the slots (16 K terms in
//! 64 shards, each under a lock): the terms it could add are a template's other constants,
//! mostly resources met for the first time, so nearly every lookup that passed the slots
//! also missed there, and paid a lock, a probe, an allocated copy and, every 256 terms, a
//! shard's worth of frees, for nothing (8 % of the LUBM mix's processor time, more than
//! the dictionary search it meant to spare). A hot term that another term's slot pushed
//! out is searched once more: a few hundred nanoseconds, once in some hundreds of queries.

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Id;

/// A thread's slots (a power of two).
pub(super) const LOCAL: usize = 512;

/// See the module documentation (shared by clones).
#[derive(Debug, Clone)]
pub(super) struct Remembered {
    hasher: foldhash::fast::FixedState,
    /// Unique among the process's dictionaries (clones share it): names this one in the
    /// threads' slots.
    generation: u64,
}

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

    /// The id of `term` (hashed `hash`), if this thread remembers it.
    pub(super) fn get(&self, term: &[u8], hash: u64) -> Option<Id> {
        SLOTS.with(|slots| {
            let slots = slots.borrow();
            let slot = slots.get(hash as usize % LOCAL)?;
            (slot.generation == self.generation && slot.hash == hash && slot.term == term)
                .then_some(slot.id)
        })
    }

    /// Remembers, on this thread, that `term` (hashed `hash`) is `id` in the sorted part.
    pub(super) fn insert(&self, term: &[u8], hash: u64, id: Id) {
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
}
