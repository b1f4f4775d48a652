//! The term → id index of appended terms, shared by every version of a dictionary.
//!
//! Each store version has its own persistent vector of appended terms (`id → term`), but
//! the reverse index is one hash map that all versions share and the writer only ever adds
//! to. An entry is a claim, not a fact: a version trusts an id from the index only if its
//! own vector holds the same term at that id ([`AppendedIndex::get`] takes that check).
//! That makes every case right without copying anything per version:
//! - an older version, which lacks the term, sees an id beyond its length and rejects it;
//! - a transaction that appended a term and then failed leaves a claim that a later
//!   version, which gave that id to another term, rejects;
//! - two versions forked from one base that give the same term different ids each keep
//!   their own claim (a term holds every id claimed for it).
//!
//! An entry holds the term's hash and the id, not the term: a reader confirms a claim by
//! comparing its own vector's term at that id, which it must do anyway, so keeping the
//! term in the index too would only cost an allocation per term and a pointer to chase
//! when the table grows (the stored hash rehashes it without touching the term).
//!
//! A persistent hash map (the previous design) copied a path of trie nodes for every new
//! term and freed the old version's copies after each commit, which dominated the cost of
//! a batch of new terms. Written by hand because no library offers a map whose entries
//! are validated per reader this way; the shards are `hashbrown` tables behind `RwLock`s,
//! so a reader looking up a query's constant waits at most for one shard's share of a
//! batch, and a large batch fills the shards in parallel.
//!
//! The index keeps claims that no version confirms any more (failed transactions, dead
//! forks) until a checkpoint builds a new dictionary; there are at most a few per failed
//! request.

use std::hash::BuildHasher;
use std::sync::RwLock;

use hashbrown::HashTable;
use rayon::prelude::*;

use crate::id::Id;

/// Shards of the index: enough that a writer's batch and readers rarely meet.
const SHARDS: usize = 16;

/// Seeded per process: the keys are terms that clients chose.
type Seeded = foldhash::fast::RandomState;
/// Claims: (the term's hash, the id claimed for it). A term may hold several.
type Table = HashTable<(u64, Id)>;

/// A shard on a cache line of its own, so that threads working on neighbouring shards do
/// not share the line their locks live on.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Shard(RwLock<Table>);

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct AppendedIndex {
    shards: Box<[Shard]>,
    hasher: Seeded,
}

impl Default for AppendedIndex {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            hasher: Seeded::default(),
        }
    }
}

impl AppendedIndex {
    /// The hash of `term`, as the index keys it.
    pub(crate) fn hash(&self, term: &[u8]) -> u64 {
        self.hasher.hash_one(term)
    }

    /// The shard of a hash, from bits 32–35: a table takes its bucket from the low bits
    /// and its tag from the top seven, and the shard's bits must be neither, or every key
    /// of a shard would share them.
    fn shard_of(hash: u64) -> usize {
        (hash >> 32) as usize % SHARDS
    }

    fn read(&self, shard: usize) -> std::sync::RwLockReadGuard<'_, Table> {
        self.shards[shard]
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self, shard: usize) -> std::sync::RwLockWriteGuard<'_, Table> {
        self.shards[shard]
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// An id claimed for `term` that `holds(id)` confirms (the caller's version holds
    /// `term` at that id).
    pub(crate) fn get(&self, term: &[u8], holds: impl Fn(Id) -> bool) -> Option<Id> {
        let hash = self.hash(term);
        let shard = self.read(Self::shard_of(hash));
        let found = shard.find(hash, |&(h, id)| h == hash && holds(id));
        found.map(|&(_, id)| id)
    }

    /// [`AppendedIndex::get`] of many terms, by their hashes (`hashes[i]` of term `i`):
    /// `found[i]` is set for each term found. Each shard is locked once.
    pub(crate) fn get_many(
        &self,
        hashes: &[u64],
        holds: impl Fn(usize, Id) -> bool,
        found: &mut [Option<Id>],
    ) {
        let mut guards: [Option<std::sync::RwLockReadGuard<'_, Table>>; SHARDS] =
            Default::default();
        for (i, &hash) in hashes.iter().enumerate() {
            let s = Self::shard_of(hash);
            let shard = guards[s].get_or_insert_with(|| self.read(s));
            if let Some(&(_, id)) = shard.find(hash, |&(h, id)| h == hash && holds(i, id)) {
                found[i] = Some(id);
            }
        }
    }

    /// Claims `first + i` for the term of hash `hashes[i]`, the shards filled in parallel
    /// for a large batch. The ids are new, so no claim is checked for a duplicate (a
    /// failed request retried claims its ids again: one more entry, never a wrong one).
    pub(crate) fn insert_batch(&self, hashes: &[u64], first: Id) {
        const PARALLEL: usize = 8192;
        // The batch's claims grouped by shard (a counting sort), so that each shard's
        // filler reads only its own.
        let mut starts = [0usize; SHARDS + 1];
        for &hash in hashes {
            starts[Self::shard_of(hash) + 1] += 1;
        }
        for s in 0..SHARDS {
            starts[s + 1] += starts[s];
        }
        let mut claims = vec![(0u64, 0 as Id); hashes.len()];
        let mut next = starts;
        for (i, &hash) in hashes.iter().enumerate() {
            let s = Self::shard_of(hash);
            claims[next[s]] = (hash, first + i as Id);
            next[s] += 1;
        }
        let fill = |s: usize| {
            let own = &claims[starts[s]..starts[s + 1]];
            if own.is_empty() {
                return;
            }
            let mut shard = self.write(s);
            shard.reserve(own.len(), |&(h, _)| h);
            for &claim in own {
                shard.insert_unique(claim.0, claim, |&(h, _)| h);
            }
        };
        if hashes.len() < PARALLEL {
            (0..SHARDS).for_each(fill);
        } else {
            (0..SHARDS).into_par_iter().for_each(fill);
        }
    }

    /// Claims `id` for `term`.
    pub(crate) fn insert(&self, term: &[u8], id: Id) {
        let hash = self.hash(term);
        Self::insert_in(&mut self.write(Self::shard_of(hash)), hash, id);
    }

    fn insert_in(shard: &mut Table, hash: u64, id: Id) {
        if shard.find(hash, |&claim| claim == (hash, id)).is_none() {
            shard.insert_unique(hash, (hash, id), |&(h, _)| h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_counts_only_where_the_reader_confirms_it() {
        let index = AppendedIndex::default();
        let term = b"http://x/a";
        index.insert(term, 10);
        assert_eq!(index.get(term, |id| id == 10), Some(10));
        assert_eq!(index.get(term, |_| false), None);
        // A fork gave the same term another id: both claims stay.
        index.insert(term, 12);
        index.insert(term, 12);
        assert_eq!(index.get(term, |id| id == 12), Some(12));
        assert_eq!(index.get(term, |id| id == 10), Some(10));
        // Claims are found by hash: another term's claims are never offered.
        assert_eq!(index.get(b"http://x/b", |_| true), None);
        let hashes = [index.hash(term), index.hash(b"http://x/b")];
        let mut found = [None; 2];
        index.get_many(&hashes, |i, id| i == 0 && id == 12, &mut found);
        assert_eq!(found, [Some(12), None]);
    }
}
