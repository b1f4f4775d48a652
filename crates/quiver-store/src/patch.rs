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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quiver_model::{Id, PredId};
use rustc_hash::FxBuildHasher;

type RecordMap =
    imbl::GenericHashMap<Id, Arc<[Id]>, FxBuildHasher, imbl::shared_ptr::DefaultSharedPtr>;

/// The changed records of one adjacency.
#[derive(Clone)]
pub(crate) struct AdjacencyPatch {
    records: RecordMap,
    /// One bit per base vertex (dense adjacencies; empty for sparse ones).
    filter: Arc<[AtomicU64]>,
}

impl std::fmt::Debug for AdjacencyPatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdjacencyPatch")
            .field("records", &self.records.len())
            .finish()
    }
}

impl AdjacencyPatch {
    /// An empty patch over a base of `dense_vertices` vertices (0 for sparse).
    pub(crate) fn new(dense_vertices: usize) -> Self {
        Self {
            records: RecordMap::default(),
            filter: (0..dense_vertices.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
        }
    }

    /// The patched record of `vertex`, if it has one.
    #[inline(always)]
    pub(crate) fn record(&self, vertex: Id) -> Option<&[Id]> {
        let word = vertex as usize / 64;
        if let Some(bits) = self.filter.get(word) {
            if bits.load(Ordering::Relaxed) & (1 << (vertex % 64)) == 0 {
                return None;
            }
        } else if self.records.is_empty() {
            return None;
        }
        self.records.get(&vertex).map(|record| &record[..])
    }

    /// Replaces the record of `vertex` (an empty slice: the vertex has no edges).
    pub(crate) fn set(&mut self, vertex: Id, record: Arc<[Id]>) {
        if let Some(bits) = self.filter.get(vertex as usize / 64) {
            bits.fetch_or(1 << (vertex % 64), Ordering::Relaxed);
        }
        self.records.insert(vertex, record);
    }

    /// Patched vertices, in no particular order.
    pub(crate) fn vertices(&self) -> impl Iterator<Item = Id> + '_ {
        self.records.keys().copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// Bytes of the patched records.
    pub(crate) fn data_bytes(&self) -> usize {
        self.records
            .values()
            .map(|record| record.len() * std::mem::size_of::<Id>())
            .sum::<usize>()
            + self.filter.len() * 8
    }
}

/// Encodes a record from its (predicate, neighbours) lists, predicates ascending and lists
/// non-empty: `[k, p_1, end_1, …, p_k, end_k, neighbours…]`.
pub(crate) fn encode_record(lists: &[(PredId, Vec<Id>)]) -> Arc<[Id]> {
    let neighbours: usize = lists.iter().map(|(_, list)| list.len()).sum();
    let mut words = Vec::with_capacity(1 + 2 * lists.len() + neighbours);
    words.push(lists.len() as Id);
    let mut end = 0usize;
    for (predicate, list) in lists {
        end += list.len();
        words.push(*predicate as Id);
        words.push(end as Id);
    }
    for (_, list) in lists {
        words.extend_from_slice(list);
    }
    words.into()
}
