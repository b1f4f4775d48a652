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
use std::sync::{Arc, RwLock};

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use rayon::prelude::*;

use crate::id::Id;

/// Shards of the index: enough that a writer's batch and readers rarely meet.
const SHARDS: usize = 16;

/// Seeded per process: the keys are terms that clients chose.
type Seeded = foldhash::fast::RandomState;
/// Terms with their claims, found by a hash computed once per call.
type Table = HashTable<(Arc<[u8]>, Claims)>;
type Shard = RwLock<Table>;

/// The ids claimed for one term: almost always one.
#[derive(Debug, Clone)]
enum Claims {
    One(Id),
    Many(Vec<Id>),
}

impl Claims {
    fn iter(&self) -> impl Iterator<Item = Id> + '_ {
        let (one, many) = match self {
            Claims::One(id) => (Some(*id), &[][..]),
            Claims::Many(ids) => (None, &ids[..]),
        };
        one.into_iter().chain(many.iter().copied())
    }

    fn add(&mut self, id: Id) {
        match self {
            Claims::One(old) if *old == id => {}
            Claims::One(old) => *self = Claims::Many(vec![*old, id]),
            Claims::Many(ids) => {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
        }
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct AppendedIndex {
    shards: Box<[Shard]>,
    hasher: Seeded,
}

impl Default for AppendedIndex {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            hasher: Seeded::default(),
        }
    }
}

impl AppendedIndex {
    /// A term's hash and shard. The shard comes from bits 32–35: a table takes its bucket
    /// from the low bits and its tag from the top seven, and the shard's bits must be
    /// neither, or every key of a shard would share them.
    fn shard(&self, term: &[u8]) -> (u64, &Shard) {
        let hash = self.hasher.hash_one(term);
        (hash, &self.shards[Self::shard_of(hash)])
    }

    fn shard_of(hash: u64) -> usize {
        (hash >> 32) as usize % SHARDS
    }

    /// An id claimed for `term` that `holds(id)` confirms (the caller's version holds
    /// `term` at that id).
    pub(crate) fn get(&self, term: &[u8], holds: impl Fn(Id) -> bool) -> Option<Id> {
        let (hash, shard) = self.shard(term);
        let shard = shard.read().unwrap_or_else(|e| e.into_inner());
        let (_, claims) = shard.find(hash, |(key, _)| &key[..] == term)?;
        let found = claims.iter().find(|&id| holds(id));
        found
    }

    /// Claims `ids[i]` for `terms[i]`, the shards filled in parallel for a large batch.
    pub(crate) fn insert_batch(&self, terms: &[Arc<[u8]>], first: Id) {
        const PARALLEL: usize = 8192;
        if terms.len() < PARALLEL {
            for (i, term) in terms.iter().enumerate() {
                self.insert(Arc::clone(term), first + i as Id);
            }
            return;
        }
        let hashes: Vec<u64> = terms
            .par_iter()
            .map(|term| self.hasher.hash_one(&term[..]))
            .collect();
        (0..SHARDS).into_par_iter().for_each(|s| {
            let mut shard = self.shards[s].write().unwrap_or_else(|e| e.into_inner());
            shard.reserve(terms.len() / SHARDS + 16, |(key, _)| {
                self.hasher.hash_one(&key[..])
            });
            for (i, (term, &hash)) in terms.iter().zip(&hashes).enumerate() {
                if Self::shard_of(hash) == s {
                    self.insert_in(&mut shard, hash, Arc::clone(term), first + i as Id);
                }
            }
        });
    }

    /// Claims `id` for `term`.
    pub(crate) fn insert(&self, term: Arc<[u8]>, id: Id) {
        let (hash, shard) = self.shard(&term);
        let mut shard = shard.write().unwrap_or_else(|e| e.into_inner());
        self.insert_in(&mut shard, hash, term, id);
    }

    fn insert_in(&self, shard: &mut Table, hash: u64, term: Arc<[u8]>, id: Id) {
        let hasher = &self.hasher;
        match shard.entry(
            hash,
            |(key, _)| key[..] == term[..],
            |(key, _)| hasher.hash_one(&key[..]),
        ) {
            Entry::Occupied(mut entry) => entry.get_mut().1.add(id),
            Entry::Vacant(entry) => {
                entry.insert((term, Claims::One(id)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_counts_only_where_the_reader_confirms_it() {
        let index = AppendedIndex::default();
        let term: Arc<[u8]> = b"http://x/a".as_slice().into();
        index.insert(Arc::clone(&term), 10);
        assert_eq!(index.get(&term, |id| id == 10), Some(10));
        assert_eq!(index.get(&term, |_| false), None);
        // A fork gave the same term another id: both claims stay.
        index.insert(Arc::clone(&term), 12);
        index.insert(Arc::clone(&term), 12);
        assert_eq!(index.get(&term, |id| id == 12), Some(12));
        assert_eq!(index.get(&term, |id| id == 10), Some(10));
        assert_eq!(index.get(b"http://x/b", |_| true), None);
    }
}
