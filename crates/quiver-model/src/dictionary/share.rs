//! A dictionary that is one owner's share of a cluster's partitioned dictionary.
//!
//! In a cluster loaded by its processes (no machine ever holding every term), each term
//! lives at one owner, [`term_owner`] (a hash of its encoding modulo the number of
//! partitions), and that owner numbers its terms: its `p`-th term (in byte order) gets
//! the id `p × count + index`. So an id tells its owner without a directory (`id mod
//! count`), ids are unique across owners without any agreement between them, and the
//! vertex a term names is owned by the same partition that keeps its records
//! (`quiver_store::partition::owner` is the same modulo): decoding a row's vertex and
//! walking its edges happen at one place. Only one owner's ids sort like their terms, so
//! the shortcuts that compare ids in place of terms (id ranges of a prefix, ORDER BY on
//! ids) are off for such a dictionary ([`Dictionary::ordered_below`] is 0).
//!
//! Where a query is coordinated, the terms other owners hold are learnt in batches
//! ([`Dictionary::learn_foreign`]): the query's constants before it is prepared (a
//! prepare under [`record_misses`] lists the terms it looked up and found nowhere), the
//! ids of the rows the partitions return before anything decodes them. They are kept in
//! an overlay shared by the dictionary's clones, which a lookup or a decode reads after
//! its own share: by encoding in one map, by id in [`ID_SHARDS`] maps with a lock each
//! (every thread writing a result's rows decodes through it). The overlay is bounded: each
//! map keeps two generations of [`FOREIGN_TERMS`] terms (each shard of ids, its share of
//! that), and once the newer is full, the older is dropped and a new one begins. So
//! the terms a query has just learnt stay known while it decodes its rows, even when
//! other queries fill the overlay meanwhile (a single generation, emptied when full,
//! could drop them between their learning and their decoding); only as many terms again
//! learnt by others within that time would drop them. Pinned terms (the predicates, graph
//! names and classes every query may need) stay in every generation.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::Dictionary;
use crate::id::Id;

/// Where a dictionary's ids live in a cluster: `count` owners, this one `index`; ids of
/// the whole cluster stay below `id_bound`.
#[derive(Debug)]
pub(super) struct Share {
    pub count: u32,
    pub index: u32,
    pub id_bound: u64,
    /// Terms a generation of the overlay holds ([`FOREIGN_TERMS`]).
    cap: usize,
    foreign: RwLock<Foreign>,
    /// The foreign terms learnt, by id, in shards of their own (by a hash of the id), each
    /// with its own generations of `cap / shards` terms: every thread decoding a result's
    /// rows looks up each foreign id here, and one lock for them all had every one of them
    /// write its one cache line at each lookup.
    by_id: Box<[IdShard]>,
    resolver: RwLock<Option<Arc<dyn Resolver>>>,
}

/// Shards of the overlay's ids (see [`Share::by_id`]).
const ID_SHARDS: usize = 64;

/// One shard of the overlay's ids, on cache lines of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct IdShard(RwLock<Generations<Id, Arc<[u8]>>>);

/// Foreign terms learnt by this one (a coordinator), by their encoding, and terms found
/// nowhere in the cluster (asked for again and again by queries that name them).
#[derive(Debug, Default)]
struct Foreign {
    by_term: Generations<Arc<[u8]>, Id>,
    absent: std::collections::HashSet<Vec<u8>>,
}

/// The overlay's hasher: a coordinator looks up every foreign id of a result's rows here,
/// twice (before the rows are decoded, to learn those it lacks, and as each is decoded),
/// so std's SipHash was a tenth of a 2-process cluster's time on LUBM-100's q2. foldhash
/// is seeded per process, as std's hasher is.
type Seeded = foldhash::fast::RandomState;

/// A map learnt in two generations: once the newer holds its cap, it becomes the older
/// (the older dropped) and a new one begins with the pinned entries (the predicates,
/// graph names and classes every query may need), which every generation keeps.
#[derive(Debug)]
struct Generations<K, V> {
    newer: HashMap<K, V, Seeded>,
    older: HashMap<K, V, Seeded>,
    pinned: Vec<(K, V)>,
}

impl<K, V> Default for Generations<K, V> {
    fn default() -> Self {
        Self {
            newer: HashMap::default(),
            older: HashMap::default(),
            pinned: Vec::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Generations<K, V> {
    fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.newer.get(key).or_else(|| self.older.get(key))
    }

    /// Learns `learnt` in the newer generation (pinned too with `pin`), a new generation
    /// begun first when the newer holds `cap` entries.
    fn learn(&mut self, learnt: impl IntoIterator<Item = (K, V)>, pin: bool, cap: usize) {
        if self.newer.len() >= cap {
            self.older = std::mem::take(&mut self.newer);
            for (key, value) in &self.pinned {
                self.newer.insert(key.clone(), value.clone());
            }
        }
        for (key, value) in learnt {
            if pin {
                self.pinned.push((key.clone(), value.clone()));
            }
            self.newer.insert(key, value);
        }
    }
}

impl Share {
    /// The shard of the overlay that holds `id`'s term (their count is a power of two: a
    /// mask, where a remainder would be a division at every foreign id).
    fn id_shard(&self, id: Id) -> usize {
        let mixed = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        mixed as usize & (self.by_id.len() - 1)
    }

    /// The terms each shard of ids holds per generation.
    fn id_cap(&self) -> usize {
        self.cap.div_ceil(self.by_id.len()).max(1)
    }
}

/// How a coordinator's share asks the other owners (the cluster's dataflow implements it).
pub trait Resolver: Send + Sync + std::fmt::Debug {
    /// `(id, encoding)` of those of `terms` their owners hold.
    fn ids(&self, terms: Vec<Vec<u8>>) -> Result<Vec<(Id, Vec<u8>)>, String>;
    /// `(id, encoding)` of `ids`, each asked of its owner.
    fn terms(&self, ids: Vec<Id>) -> Result<Vec<(Id, Vec<u8>)>, String>;
}

/// Foreign terms a generation of the overlay holds before a new one begins: a coordinator
/// decoding many distinct results would otherwise keep them all. Two generations are
/// kept.
const FOREIGN_TERMS: usize = 8 << 20;

/// The owner, among `count`, of the term encoded as `term`: FNV-1a over its bytes, mixed
/// by SplitMix64's finaliser (stable across builds and platforms, unlike std's hasher,
/// since a cluster's layout depends on it).
pub fn term_owner(term: &[u8], count: u32) -> u32 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in term {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    hash ^= hash >> 31;
    (hash % u64::from(count.max(1))) as u32
}

thread_local! {
    /// The terms a recording thread looked up and found nowhere ([`record_misses`]).
    static MISSES: RefCell<Option<Vec<Vec<u8>>>> = const { RefCell::new(None) };
}

/// Runs `f`, and returns with its result the terms that lookups on this thread, in
/// dictionaries that are shares of a cluster's, found neither in their share nor among
/// the foreign terms learnt (terms of other owners: a query's constants to resolve).
pub fn record_misses<R>(f: impl FnOnce() -> R) -> (R, Vec<Vec<u8>>) {
    let outer = MISSES.with(|m| m.borrow_mut().replace(Vec::new()));
    let result = f();
    let mut misses = MISSES
        .with(|m| std::mem::replace(&mut *m.borrow_mut(), outer))
        .unwrap_or_default();
    misses.sort_unstable();
    misses.dedup();
    (result, misses)
}

impl Dictionary {
    /// Makes this dictionary owner `index`'s share of a cluster of `count` owners whose
    /// ids stay below `id_bound` (see the module's documentation): its `p`-th term is id
    /// `p × count + index`.
    pub fn into_share(self, index: u32, count: u32, id_bound: u64) -> Self {
        self.into_share_keeping(index, count, id_bound, FOREIGN_TERMS, ID_SHARDS)
    }

    /// [`Self::into_share`] with `cap` foreign terms per generation of the overlay, its
    /// ids in `shards` shards (rounded up to a power of two).
    fn into_share_keeping(
        mut self,
        index: u32,
        count: u32,
        id_bound: u64,
        cap: usize,
        shards: usize,
    ) -> Self {
        self.share = Some(Arc::new(Share {
            count: count.max(1),
            index,
            id_bound,
            cap,
            foreign: RwLock::default(),
            by_id: (0..shards.max(1).next_power_of_two())
                .map(|_| IdShard::default())
                .collect(),
            resolver: RwLock::default(),
        }));
        self
    }

    /// Lets this share ask the other owners for their terms ([`Self::resolve_terms`],
    /// [`Self::resolve_ids`]); shared by its clones. No-op on a whole dictionary.
    pub fn set_resolver(&self, resolver: Option<Arc<dyn Resolver>>) {
        if let Some(share) = &self.share {
            *share.resolver.write().unwrap_or_else(|e| e.into_inner()) = resolver;
        }
    }

    /// Whether lookups here may need other owners' terms: a share with a resolver.
    pub fn resolves(&self) -> bool {
        self.resolver().is_some()
    }

    fn resolver(&self) -> Option<Arc<dyn Resolver>> {
        let share = self.share.as_ref()?;
        share
            .resolver
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Asks the owners of `terms` (misses of [`record_misses`]) for their ids, in one
    /// request, and learns them; the terms no owner holds are remembered as absent.
    /// Returns how many were learnt.
    pub fn resolve_terms(&self, terms: Vec<Vec<u8>>) -> Result<usize, String> {
        let (Some(share), Some(resolver)) = (&self.share, self.resolver()) else {
            return Ok(0);
        };
        if terms.is_empty() {
            return Ok(0);
        }
        let found = resolver.ids(terms.clone())?;
        let learnt = found.len();
        {
            let mut foreign = share.foreign.write().unwrap_or_else(|e| e.into_inner());
            let known: std::collections::HashSet<&[u8]> =
                found.iter().map(|(_, t)| &t[..]).collect();
            for term in terms {
                if !known.contains(&term[..]) && foreign.absent.len() < share.cap {
                    foreign.absent.insert(term);
                }
            }
        }
        self.learn_foreign(found);
        Ok(learnt)
    }

    /// Whether another owner of a partitioned dictionary may hold `term` (encoded): this
    /// share asks the others, the term is another owner's, and neither this share nor what
    /// it has learnt holds it, nor is it known to be absent. The terms a query computes
    /// (`IRI(…)`, `CONCAT(…)`) that another owner may hold are asked of their owners in one
    /// batch ([`Self::resolve_terms`]) before they are given ids, so that a term naming a
    /// stored one gets the stored id and joins with the rows that hold it.
    pub fn held_elsewhere(&self, term: &[u8]) -> bool {
        let Some(share) = &self.share else {
            return false;
        };
        if self.resolver().is_none() || term_owner(term, share.count) == share.index {
            return false;
        }
        self.lookup(term).is_none()
            && !share
                .foreign
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .absent
                .contains(term)
    }

    /// Asks the owners of those of `ids` this share neither holds nor has learnt for their
    /// terms, in one request, and learns them: before rows from the partitions are decoded.
    pub fn resolve_ids(&self, ids: impl IntoIterator<Item = Id>) -> Result<(), String> {
        self.resolve(ids, false)
    }

    /// [`Self::resolve_ids`], learning the terms for good (graph names and classes, which
    /// any query may decode without their being in its rows).
    pub fn resolve_ids_for_good(&self, ids: impl IntoIterator<Item = Id>) -> Result<(), String> {
        self.resolve(ids, true)
    }

    fn resolve(&self, ids: impl IntoIterator<Item = Id>, pin: bool) -> Result<(), String> {
        let Some(resolver) = self.resolver() else {
            return Ok(());
        };
        let unknown = self.unknown_foreign(ids);
        if unknown.is_empty() {
            return Ok(());
        }
        let found = resolver.terms(unknown)?;
        self.learn(found, pin);
        Ok(())
    }

    /// `(index, count)` when this dictionary is a share of a cluster's.
    pub fn share(&self) -> Option<(u32, u32)> {
        self.share.as_ref().map(|s| (s.index, s.count))
    }

    /// Terms this dictionary holds itself (its share's, for a share).
    pub fn local_len(&self) -> u64 {
        self.len + self.appended.terms.len() as u64
    }

    /// Ids below this sort like their terms (0 for a share: only one owner's would).
    pub fn ordered_below(&self) -> u64 {
        if self.share.is_some() {
            0
        } else {
            self.len
        }
    }

    /// The id of local position `position` (`None` past the ids a dictionary may assign).
    #[inline]
    pub(super) fn global(&self, position: u64) -> Option<Id> {
        let id = match &self.share {
            None => position,
            Some(share) => position
                .checked_mul(u64::from(share.count))?
                .checked_add(u64::from(share.index))?,
        };
        crate::id::term_id(id).ok()
    }

    /// The local position of `id`, `None` when another owner holds it.
    #[inline]
    pub(super) fn local(&self, id: Id) -> Option<u64> {
        let id = id as u64;
        match &self.share {
            None => Some(id),
            Some(share) => {
                let count = u64::from(share.count);
                (id % count == u64::from(share.index)).then_some(id / count)
            }
        }
    }

    /// Appends the encoding of a foreign id learnt to `out`; false when it is not learnt.
    /// Copied under the overlay's lock: no reference to the term is taken, which would
    /// write its count from every thread decoding it.
    pub(super) fn foreign_term_into(&self, id: Id, out: &mut Vec<u8>) -> bool {
        let Some(share) = self.share.as_ref() else {
            return false;
        };
        let shard = share.by_id[share.id_shard(id)]
            .0
            .read()
            .unwrap_or_else(|e| e.into_inner());
        match shard.get(&id) {
            Some(term) => {
                out.extend_from_slice(term);
                true
            }
            None => false,
        }
    }

    /// The id of a foreign term learnt; records the term as a miss when it is neither
    /// learnt nor this share's to hold.
    pub(super) fn foreign_id(&self, term: &[u8]) -> Option<Id> {
        let share = self.share.as_ref()?;
        let (found, absent) = {
            let foreign = share.foreign.read().unwrap_or_else(|e| e.into_inner());
            (
                foreign.by_term.get(term).copied(),
                foreign.absent.contains(term),
            )
        };
        if found.is_none() && !absent && term_owner(term, share.count) != share.index {
            MISSES.with(|m| {
                if let Some(misses) = m.borrow_mut().as_mut() {
                    misses.push(term.to_vec());
                }
            });
        }
        found
    }

    /// Which of `ids` (below the cluster's id bound) neither this share holds nor it has
    /// learnt: what must be asked of their owners before they are decoded here. Sorted,
    /// distinct.
    pub fn unknown_foreign(&self, ids: impl IntoIterator<Item = Id>) -> Vec<Id> {
        let Some(share) = &self.share else {
            return Vec::new();
        };
        // Every shard read at once: a lock for each id would cost more than its lookup. A
        // learning thread holds one shard at a time, so waiting on it cannot deadlock.
        let shards: Vec<_> = share
            .by_id
            .iter()
            .map(|shard| shard.0.read().unwrap_or_else(|e| e.into_inner()))
            .collect();
        let mut unknown: Vec<Id> = ids
            .into_iter()
            .filter(|&id| {
                (id as u64) < share.id_bound
                    && self.local(id).is_none()
                    && shards[share.id_shard(id)].get(&id).is_none()
            })
            .collect();
        drop(shards);
        unknown.sort_unstable();
        unknown.dedup();
        unknown
    }

    /// Learns terms other owners hold, as `(id, encoding)`.
    pub fn learn_foreign(&self, terms: impl IntoIterator<Item = (Id, Vec<u8>)>) {
        self.learn(terms, false);
    }

    /// Learns terms other owners hold for good: they stay when the others start afresh.
    pub fn pin_foreign(&self, terms: impl IntoIterator<Item = (Id, Vec<u8>)>) {
        self.learn(terms, true);
    }

    fn learn(&self, terms: impl IntoIterator<Item = (Id, Vec<u8>)>, pin: bool) {
        let Some(share) = &self.share else {
            return;
        };
        let learnt: Vec<(Id, Arc<[u8]>)> = terms
            .into_iter()
            .map(|(id, term)| (id, term.into()))
            .collect();
        {
            let mut foreign = share.foreign.write().unwrap_or_else(|e| e.into_inner());
            let by_term = learnt.iter().map(|(id, term)| (Arc::clone(term), *id));
            foreign.by_term.learn(by_term, pin, share.cap);
        }
        let mut by_shard: Vec<Vec<(Id, Arc<[u8]>)>> = vec![Vec::new(); share.by_id.len()];
        for (id, term) in learnt {
            by_shard[share.id_shard(id)].push((id, term));
        }
        for (at, learnt) in by_shard.into_iter().enumerate() {
            if !learnt.is_empty() {
                let mut shard = share.by_id[at].0.write().unwrap_or_else(|e| e.into_inner());
                shard.learn(learnt, pin, share.id_cap());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three owners' shares of one set of terms: each id names its term at its owner,
    /// owners are disjoint, and a coordinator finds foreign terms once learnt.
    #[test]
    fn shares_number_their_terms_apart_and_learn_the_others() {
        let terms: Vec<Vec<u8>> = (0..200).map(|i| format!("t{i:04}").into_bytes()).collect();
        let count = 3;
        let shares: Vec<(Dictionary, Vec<&Vec<u8>>)> = (0..count)
            .map(|index| {
                let own: Vec<&Vec<u8>> = terms
                    .iter()
                    .filter(|t| term_owner(t, count) == index)
                    .collect();
                (
                    Dictionary::from_sorted(&own).into_share(index, count, 1000),
                    own,
                )
            })
            .collect();
        let mut seen = std::collections::HashSet::new();
        for (index, (dictionary, own)) in shares.iter().enumerate() {
            assert!(!own.is_empty() && own.len() < terms.len());
            assert_eq!(dictionary.len(), 1000);
            assert_eq!(dictionary.local_len(), own.len() as u64);
            assert_eq!(dictionary.ordered_below(), 0);
            for term in own {
                let id = dictionary.lookup(term).unwrap();
                assert_eq!(id % count as Id, index as Id);
                assert_eq!(dictionary.term(id).as_ref(), Some(*term));
                assert!(seen.insert(id));
            }
        }
        let (coordinator, _) = &shares[0];
        let (other, own) = &shares[1];
        let ((), misses) = record_misses(|| {
            assert_eq!(coordinator.lookup(own[0]), None);
            assert_eq!(coordinator.lookup(b"absent"), None);
        });
        let expected_misses = if term_owner(b"absent", count) == 0 {
            vec![own[0].clone()]
        } else {
            let mut m = vec![b"absent".to_vec(), own[0].clone()];
            m.sort();
            m
        };
        assert_eq!(misses, expected_misses);
        let id = other.lookup(own[0]).unwrap();
        assert_eq!(coordinator.unknown_foreign([id, id, 0]), vec![id]);
        coordinator.learn_foreign([(id, own[0].clone())]);
        assert_eq!(coordinator.unknown_foreign([id]), Vec::<Id>::new());
        assert_eq!(coordinator.lookup(own[0]), Some(id));
        assert_eq!(coordinator.term(id).as_ref(), Some(own[0]));
        assert_eq!(coordinator.cursor().term(id), Some(&own[0][..]));
        // Clones share what was learnt.
        assert_eq!(coordinator.clone().term(id).as_ref(), Some(own[0]));
    }

    /// The overlay keeps what a query has just learnt while others fill it: one new
    /// generation later the terms are still known (a single generation emptied when full
    /// lost them), two later they are dropped; pinned terms stay throughout.
    #[test]
    fn learnt_terms_outlive_one_new_generation() {
        let coordinator =
            Dictionary::from_sorted(&[b"own".to_vec()]).into_share_keeping(0, 2, 1 << 20, 4, 1);
        let term = |i: Id| format!("t{i}").into_bytes();
        coordinator.pin_foreign([(1, b"pinned".to_vec())]);
        // A query learns its rows' terms...
        coordinator.learn_foreign([(3, term(3)), (5, term(5))]);
        // ...while others fill the overlay past a generation.
        coordinator.learn_foreign((7..20).step_by(2).map(|i| (i, term(i))));
        coordinator.learn_foreign([(21, term(21))]);
        assert_eq!(coordinator.term(3).as_deref(), Some(&term(3)[..]));
        assert_eq!(coordinator.lookup(&term(5)), Some(5));
        assert_eq!(coordinator.unknown_foreign([3, 5, 21]), Vec::<Id>::new());
        // A second new generation drops them; the pinned term stays.
        coordinator.learn_foreign((23..40).step_by(2).map(|i| (i, term(i))));
        coordinator.learn_foreign([(41, term(41))]);
        assert_eq!(coordinator.unknown_foreign([3, 5, 41]), vec![3, 5]);
        assert_eq!(coordinator.term(1).as_deref(), Some(&b"pinned"[..]));
        assert_eq!(coordinator.lookup(b"pinned"), Some(1));
    }

    /// With its ids in several shards, the overlay finds every term learnt by id (a
    /// decode's copy, a cursor's) and by its encoding, lists none of them as unknown, and
    /// keeps a pinned term through every shard's new generations.
    #[test]
    fn an_overlay_in_shards_finds_what_it_learnt() {
        let coordinator =
            Dictionary::from_sorted(&[b"own".to_vec()]).into_share_keeping(0, 2, 1 << 20, 64, 8);
        let term = |i: Id| format!("t{i}").into_bytes();
        coordinator.pin_foreign([(1, b"pinned".to_vec())]);
        let ids: Vec<Id> = (3..600).step_by(2).collect();
        coordinator.learn_foreign(ids.iter().map(|&i| (i, term(i))));
        let mut cursor = coordinator.cursor();
        for &i in &ids {
            assert_eq!(coordinator.term(i).as_deref(), Some(&term(i)[..]));
            assert_eq!(cursor.term(i), Some(&term(i)[..]));
            assert_eq!(coordinator.lookup(&term(i)), Some(i));
        }
        let asked = ids.iter().copied().chain([601, 603]);
        assert_eq!(coordinator.unknown_foreign(asked), vec![601, 603]);
        // Many more, learnt one at a time, begin new generations in every shard (8 terms
        // each): the first terms go, the pinned one stays.
        for i in (1001..3000).step_by(2) {
            coordinator.learn_foreign([(i, term(i))]);
        }
        assert_eq!(coordinator.unknown_foreign([3, 599, 2999]), vec![3, 599]);
        assert_eq!(coordinator.term(1).as_deref(), Some(&b"pinned"[..]));
        assert_eq!(coordinator.cursor().term(1), Some(&b"pinned"[..]));
        assert_eq!(coordinator.lookup(b"pinned"), Some(1));
    }
}
