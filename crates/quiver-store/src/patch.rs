//! Patches: the records an update replaced, layered over an adjacency's immutable arrays.
//!
//! A store version after an update shares its base arrays with the version before it and
//! carries, per adjacency, the vertex records that changed since the base was built: the
//! whole new record of a vertex, in the base's word layout, so a lookup reads it exactly as
//! it reads a base record. The map is persistent (`imbl`, a hash array mapped trie): the
//! next version copies only the path to the entries it changes, never the whole map, and
//! the version a reader holds is never touched, which is what makes a query's view of the
//! store one commit, across all keys.
//!
//! Most vertices never change, so a bit per base vertex says whether it may have a patched
//! record: a lookup of an untouched vertex costs one load of a word that stays in cache,
//! not a probe of the map. The bits are shared by all versions over the same base and
//! only ever set (before the version that needs them is published), so a reader of an
//! older version may see a bit for a vertex it finds unpatched, and then reads the base.
//! Vertices beyond the base (terms added by updates) are always probed.
//!
//! A vertex with a long record (a class vertex listing millions of instances) is not
//! copied on every change: its patch holds, per predicate, the neighbours added to and
//! removed from the base list ([`ListDelta`], persistent sorted sets), and the record is
//! materialised once per version, by the first reader that needs it ([`RecordDelta`]).
//! The predicate index's lists (all subjects of `rdf:type`, say) are patched the same way
//! ([`LazyList`]). A change then costs a logarithmic update of the sets, not a copy of the
//! list.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use quiver_model::{Id, PredId};
use rustc_hash::FxBuildHasher;

use crate::record::{encode_record, Record};

type RecordMap =
    imbl::GenericHashMap<Id, PatchedRecord, FxBuildHasher, imbl::shared_ptr::DefaultSharedPtr>;
/// Records at least this many words long are patched as deltas instead of copies.
static DELTA_RECORD_WORDS: std::sync::atomic::AtomicUsize =
    std::sync::atomic::AtomicUsize::new(1024);

/// Whether a base record of `words` words is patched as a delta.
pub(crate) fn patch_as_delta(words: usize) -> bool {
    words >= DELTA_RECORD_WORDS.load(Ordering::Relaxed)
}

/// Sets the record length from which records are patched as deltas (tests use 0 to
/// exercise deltas on small graphs).
#[doc(hidden)]
pub fn set_delta_record_words(words: usize) {
    DELTA_RECORD_WORDS.store(words, Ordering::Relaxed);
}

/// A vertex's record as an update left it.
#[derive(Clone)]
pub(crate) enum PatchedRecord {
    /// The whole record (empty: the vertex has no edges).
    Words(Arc<[Id]>),
    /// The whole record of a vertex with one edge in this direction (`[1, p, 1, n]`),
    /// held in place: most new vertices of a batch have one (a new literal, a subject
    /// with one statement), and an allocation each cost more than building the record.
    Edge([Id; 4]),
    /// Changes to the base record, per predicate.
    Delta(Arc<RecordDelta>),
}

/// The neighbours added to and removed from a base list: `added` and `tail` hold no base
/// element and none of each other's, `removed` only base elements, so the list is
/// `base − removed + added + tail`.
///
/// `tail` takes the elements inserted above everything the list holds, in ascending
/// order: new terms get ever larger ids, so a batch of new vertices joining a list (the
/// subjects of a predicate, the instances of a class) lands there, each an append to a
/// persistent vector instead of an insertion into a persistent tree.
#[derive(Clone, Default, Debug)]
pub(crate) struct ListDelta {
    added: imbl::OrdSet<Id>,
    removed: imbl::OrdSet<Id>,
    tail: imbl::Vector<Id>,
}

impl ListDelta {
    /// The length of the list over `base`.
    pub(crate) fn len(&self, base: &[Id]) -> usize {
        base.len() + self.added.len() + self.tail.len() - self.removed.len()
    }

    /// Elements held (added plus removed).
    pub(crate) fn entries(&self) -> usize {
        self.added.len() + self.tail.len() + self.removed.len()
    }

    /// The largest element of the list over `base`, removed ones aside (an upper bound).
    fn upper(&self, base: &[Id]) -> Option<Id> {
        let largest = [
            base.last().copied(),
            self.added.get_max().copied(),
            self.tail.last().copied(),
        ];
        largest.into_iter().flatten().max()
    }

    /// The position of `x` in `tail`, if it is there.
    fn in_tail(&self, x: Id) -> Option<usize> {
        let (mut low, mut high) = (0, self.tail.len());
        while low < high {
            let mid = (low + high) / 2;
            match self.tail[mid].cmp(&x) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Adds `x`; whether the list changed.
    pub(crate) fn insert(&mut self, base: &[Id], x: Id) -> bool {
        if self.upper(base).is_none_or(|upper| x > upper) {
            self.tail.push_back(x);
            return true;
        }
        if self.removed.remove(&x).is_some() {
            return true;
        }
        if base.binary_search(&x).is_ok() || self.in_tail(x).is_some() {
            return false;
        }
        self.added.insert(x).is_none()
    }

    /// [`ListDelta::insert`] of every element of `sorted` (ascending): those above
    /// everything the list holds are appended without a lookup each.
    pub(crate) fn insert_sorted(&mut self, base: &[Id], sorted: &[Id]) {
        let mut upper = self.upper(base);
        for &x in sorted {
            if upper.is_none_or(|upper| x > upper) {
                self.tail.push_back(x);
                upper = Some(x);
            } else {
                self.insert(base, x);
            }
        }
    }

    /// Removes `x`; whether the list changed.
    pub(crate) fn remove(&mut self, base: &[Id], x: Id) -> bool {
        if self.added.remove(&x).is_some() {
            return true;
        }
        if let Some(position) = self.in_tail(x) {
            self.tail.remove(position);
            return true;
        }
        base.binary_search(&x).is_ok() && self.removed.insert(x).is_none()
    }

    /// The list over `base`, sorted.
    pub(crate) fn materialize(&self, base: &[Id]) -> Vec<Id> {
        let mut out = Vec::with_capacity(self.len(base));
        let mut added = self.added.iter().copied().peekable();
        let mut removed = self.removed.iter().copied().peekable();
        let mut tail = self.tail.iter().copied().peekable();
        let mut push_below = |out: &mut Vec<Id>, bound: Option<Id>| loop {
            let next = match (added.peek(), tail.peek()) {
                (Some(&a), Some(&t)) => a.min(t),
                (Some(&a), None) => a,
                (None, Some(&t)) => t,
                (None, None) => return,
            };
            if bound.is_some_and(|bound| next >= bound) {
                return;
            }
            out.push(next);
            if added.next_if_eq(&next).is_none() {
                tail.next();
            }
        };
        for &x in base {
            push_below(&mut out, Some(x));
            if removed.next_if_eq(&x).is_none() {
                out.push(x);
            }
        }
        push_below(&mut out, None);
        out
    }
}

/// A list of the predicate index as a delta over its base list, materialised on first
/// read.
#[derive(Debug, Default)]
pub(crate) struct LazyList {
    pub(crate) delta: ListDelta,
    cached: OnceLock<Box<[Id]>>,
}

impl LazyList {
    pub(crate) fn new(delta: ListDelta) -> Self {
        Self {
            delta,
            cached: OnceLock::new(),
        }
    }

    /// The list over `base`.
    pub(crate) fn get(&self, base: &[Id]) -> &[Id] {
        self.cached
            .get_or_init(|| self.delta.materialize(base).into())
    }
}

/// A long record as per-predicate deltas over the base record, materialised on first read.
#[derive(Debug, Default)]
pub(crate) struct RecordDelta {
    pub(crate) lists: BTreeMap<PredId, ListDelta>,
    cached: OnceLock<Box<[Id]>>,
}

impl RecordDelta {
    pub(crate) fn new(lists: BTreeMap<PredId, ListDelta>) -> Self {
        Self {
            lists,
            cached: OnceLock::new(),
        }
    }

    /// The record's words over the base record `base`.
    pub(crate) fn get(&self, base: Record<'_>) -> &[Id] {
        self.cached.get_or_init(|| {
            let mut lists: Vec<(PredId, Vec<Id>)> = Vec::new();
            let mut deltas = self.lists.iter().peekable();
            for (p, list) in base.iter() {
                while let Some((&q, delta)) = deltas.next_if(|(&q, _)| q < p) {
                    lists.push((q, delta.materialize(&[])));
                }
                match deltas.next_if(|(&q, _)| q == p) {
                    Some((_, delta)) => lists.push((p, delta.materialize(list))),
                    None => lists.push((p, list.to_vec())),
                }
            }
            for (&q, delta) in deltas {
                lists.push((q, delta.materialize(&[])));
            }
            lists.retain(|(_, list)| !list.is_empty());
            encode_record(&lists).to_vec().into()
        })
    }
}

/// The changed records of one adjacency.
#[derive(Clone)]
pub(crate) struct AdjacencyPatch {
    /// Records of base vertices (dense adjacencies) or of every vertex (sparse ones).
    records: RecordMap,
    /// Dense adjacencies: records of the vertices beyond the base, vertex `dense + i` at
    /// `i`. Their ids are new terms, dense and growing, so a batch of them lands in a few
    /// neighbouring leaves of a persistent vector instead of all over a hash trie.
    beyond: imbl::Vector<Option<PatchedRecord>>,
    /// Records held in `beyond`.
    beyond_records: usize,
    /// Vertices of the base (dense adjacencies; 0 for sparse ones).
    dense: usize,
    /// One bit per base vertex (dense adjacencies; empty for sparse ones).
    filter: Arc<[AtomicU64]>,
}

impl std::fmt::Debug for AdjacencyPatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdjacencyPatch")
            .field("records", &self.len())
            .finish()
    }
}

impl AdjacencyPatch {
    /// An empty patch over a base of `dense_vertices` vertices (0 for sparse).
    pub(crate) fn new(dense_vertices: usize) -> Self {
        Self {
            records: RecordMap::default(),
            beyond: imbl::Vector::new(),
            beyond_records: 0,
            dense: dense_vertices,
            filter: (0..dense_vertices.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// The index of `vertex` in `beyond`, if it belongs there.
    #[inline(always)]
    fn beyond_index(&self, vertex: Id) -> Option<usize> {
        if self.dense == 0 {
            return None;
        }
        (vertex as usize).checked_sub(self.dense)
    }

    /// Whether `vertex` is beyond the base and every record the patch holds: a new
    /// vertex, with no record anywhere yet.
    #[inline]
    pub(crate) fn is_fresh(&self, vertex: Id) -> bool {
        self.beyond_index(vertex)
            .is_some_and(|index| index >= self.beyond.len())
    }

    /// The patched record of `vertex`, if it has one.
    #[inline(always)]
    pub(crate) fn record(&self, vertex: Id) -> Option<&PatchedRecord> {
        if let Some(index) = self.beyond_index(vertex) {
            return self.beyond.get(index).and_then(Option::as_ref);
        }
        let word = vertex as usize / 64;
        if let Some(bits) = self.filter.get(word) {
            if bits.load(Ordering::Relaxed) & (1 << (vertex % 64)) == 0 {
                return None;
            }
        } else if self.records.is_empty() {
            return None;
        }
        self.records.get(&vertex)
    }

    /// Replaces the record of `vertex`.
    pub(crate) fn set(&mut self, vertex: Id, record: PatchedRecord) {
        if let Some(index) = self.beyond_index(vertex) {
            if index >= self.beyond.len() {
                while self.beyond.len() < index {
                    self.beyond.push_back(None);
                }
                self.beyond.push_back(Some(record));
                self.beyond_records += 1;
            } else if self.beyond.set(index, Some(record)).is_none() {
                self.beyond_records += 1;
            }
            return;
        }
        if let Some(bits) = self.filter.get(vertex as usize / 64) {
            bits.fetch_or(1 << (vertex % 64), Ordering::Relaxed);
        }
        self.records.insert(vertex, record);
    }

    /// Patched vertices, in no particular order.
    pub(crate) fn vertices(&self) -> impl Iterator<Item = Id> + '_ {
        let dense = self.dense;
        self.records.keys().copied().chain(
            self.beyond
                .iter()
                .enumerate()
                .filter(|(_, record)| record.is_some())
                .map(move |(index, _)| (dense + index) as Id),
        )
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len() + self.beyond_records
    }

    /// Bytes of the patched records.
    pub(crate) fn data_bytes(&self) -> usize {
        fn bytes(record: &PatchedRecord) -> usize {
            match record {
                PatchedRecord::Words(words) => words.len() * std::mem::size_of::<Id>(),
                PatchedRecord::Edge(words) => std::mem::size_of_val(words),
                PatchedRecord::Delta(delta) => delta
                    .lists
                    .values()
                    .map(|d| d.entries() * std::mem::size_of::<Id>())
                    .sum(),
            }
        }
        self.records.values().map(bytes).sum::<usize>()
            + self.beyond.iter().flatten().map(bytes).sum::<usize>()
            + self.filter.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// A delta over a base list behaves like the set it stands for, whichever of its
        /// parts (tree, removed, ascending tail) each change lands in.
        #[test]
        fn a_list_delta_is_the_set_it_stands_for(
            base in proptest::collection::btree_set(0u32..200, 0..40),
            changes in proptest::collection::vec((any::<bool>(), 0u32..260), 0..120),
        ) {
            let base: Vec<Id> = base.into_iter().map(|x| x as Id).collect();
            let mut model: BTreeSet<Id> = base.iter().copied().collect();
            let mut delta = ListDelta::default();
            // Ascending runs above everything (new vertices), then anything.
            let mut next = 300;
            for (i, &(insert, x)) in changes.iter().enumerate() {
                let x = if i % 3 == 0 { next += 1 + x as Id % 3; next } else { x as Id };
                let changed = if insert {
                    delta.insert(&base, x)
                } else {
                    delta.remove(&base, x)
                };
                let model_changed = if insert { model.insert(x) } else { model.remove(&x) };
                prop_assert_eq!(changed, model_changed);
                prop_assert_eq!(delta.len(&base), model.len());
            }
            prop_assert_eq!(delta.materialize(&base), model.iter().copied().collect::<Vec<_>>());
            // A sorted batch inserted at once, partly above everything, partly not.
            let batch: BTreeSet<Id> = changes.iter().map(|&(_, x)| x as Id * 2).collect();
            let batch: Vec<Id> = batch.into_iter().collect();
            delta.insert_sorted(&base, &batch);
            model.extend(batch);
            prop_assert_eq!(delta.len(&base), model.len());
            prop_assert_eq!(delta.materialize(&base), model.into_iter().collect::<Vec<_>>());
        }
    }
}
