//! One direction of the graph index: for every vertex, its neighbours per predicate.
//!
//! This is the key/value store at the heart of Quiver: key (vertex, predicate), value the
//! sorted list of neighbour ids. Instead of a hash table (Wukong) it is a vertex-major
//! compressed sparse row layout, which needs no hashing, no empty slots and maps straight
//! from a snapshot. Each vertex owns one record in `words`:
//!
//! ```text
//! [k, p_1, end_1, …, p_k, end_k, neighbours of p_1 …, neighbours of p_k …]
//! ```
//!
//! with predicates ascending and `end_i` the cumulative neighbour count. A lookup reads the
//! vertex's offset, then its record header, then the neighbours, which usually follow in the
//! same or the next cache line: two to three cache misses per `get`.
//!
//! The default graph maps vertex ids densely (`offsets[v]`); named graphs, which touch few
//! vertices, and the partitions of a store keep a sorted vertex list, found through a rank
//! index where the list is dense enough (`crate::rank`) and by binary search otherwise.

use quiver_model::prefetch::prefetch_read;
use quiver_model::{Column, Id, PredId};

use crate::patch::{AdjacencyPatch, PatchedRecord};
use crate::rank::RankIndex;
pub use crate::record::Record;

/// One direction's adjacency.
#[derive(Debug, Default, Clone)]
pub struct Adjacency {
    /// `None`: dense, vertex `v` owns `offsets[v]..offsets[v + 1]`. `Some(list)`: sparse,
    /// vertex `list[i]` owns `offsets[i]..offsets[i + 1]`.
    pub(crate) vertices: Option<Column<Id>>,
    pub(crate) offsets: Column<u64>,
    pub(crate) words: Column<Id>,
    /// Records replaced by updates since the arrays were built (see [`crate::patch`]).
    pub(crate) patch: Option<AdjacencyPatch>,
    /// The rank index of a sparse `vertices`, built at its first lookup.
    pub(crate) rank: std::sync::OnceLock<Option<RankIndex>>,
}

/// Consecutive key vertices of an adjacency, for reading their records on one thread of
/// several ([`Adjacency::stretches`]).
#[derive(Debug, Clone)]
pub(crate) enum Stretch {
    /// Slots of the arrays (vertex `slot`, or `vertices[slot]` when sparse).
    Slots(std::ops::Range<usize>),
    /// Vertices, ascending, read through the patch.
    Listed(Vec<Id>),
}

/// An adjacency's columns resolved once, so that a batch of lookups does not dereference
/// the columns on every access.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    vertices: Option<&'a [Id]>,
    rank: Option<&'a RankIndex>,
    offsets: &'a [u64],
    words: &'a [Id],
    patch: Option<&'a AdjacencyPatch>,
}

impl<'a> View<'a> {
    /// The record of `vertex` (empty when it has no edges in this direction).
    #[inline(always)]
    pub fn record(&self, vertex: Id) -> Record<'a> {
        if let Some(patch) = self.patch {
            match patch.record(vertex) {
                Some(PatchedRecord::Words(words)) => return Record { words },
                Some(PatchedRecord::Edge(words)) => return Record { words },
                Some(PatchedRecord::Delta(delta)) => {
                    return Record {
                        words: delta.get(self.base_record(vertex)),
                    }
                }
                None => {}
            }
        }
        self.base_record(vertex)
    }

    /// The record of `vertex` in the arrays, ignoring any patch.
    #[inline(always)]
    pub(crate) fn base_record(&self, vertex: Id) -> Record<'a> {
        let slot = match (self.vertices, self.rank) {
            (None, _) => vertex as usize,
            (Some(_), Some(rank)) => match rank.slot(vertex) {
                Some(i) => i,
                None => return Record::EMPTY,
            },
            (Some(list), None) => match list.binary_search(&vertex) {
                Ok(i) => i,
                Err(_) => return Record::EMPTY,
            },
        };
        match (self.offsets.get(slot), self.offsets.get(slot + 1)) {
            (Some(&start), Some(&end)) => Record {
                words: self.words.get(start as usize..end as usize).unwrap_or(&[]),
            },
            _ => Record::EMPTY,
        }
    }

    /// Hints the CPU to fetch what a lookup of `vertex` reads first (stage one of a
    /// batched lookup): a dense adjacency's offset entries, a sparse one's rank block.
    #[inline]
    pub fn prefetch_offset(&self, vertex: Id) {
        match (self.vertices, self.rank) {
            (None, _) => {
                let entry = self.offsets.as_ptr().wrapping_add(vertex as usize);
                prefetch_read(entry as *const u8);
                prefetch_read(entry.wrapping_add(1) as *const u8);
            }
            (Some(_), Some(rank)) => rank.prefetch(vertex),
            (Some(_), None) => {}
        }
    }

    /// Whether lookups read a rank block before the offsets (a partition's sparse
    /// adjacency): a batched lookup prefetches in three stages rather than two.
    #[inline]
    pub fn is_ranked(&self) -> bool {
        self.vertices.is_some() && self.rank.is_some()
    }

    /// Stage two of a sparse adjacency's batched lookup: the offset entries of `vertex`'s
    /// slot, read from the rank block that stage one brought into cache (a dense
    /// adjacency's stage one fetched them already).
    #[inline]
    pub fn prefetch_slot(&self, vertex: Id) {
        if let (Some(_), Some(rank)) = (self.vertices, self.rank) {
            if let Some(slot) = rank.slot(vertex) {
                let entry = self.offsets.as_ptr().wrapping_add(slot);
                prefetch_read(entry as *const u8);
                prefetch_read(entry.wrapping_add(1) as *const u8);
            }
        }
    }

    /// Hints the CPU to fetch the record of `vertex` (the last stage: reads the offset
    /// entries, and a sparse adjacency's rank block, which the stages before brought into
    /// cache): its first and its last cache line, so a short record that straddles a line
    /// boundary arrives whole.
    #[inline]
    pub fn prefetch_record(&self, vertex: Id) {
        let at = match (self.vertices, self.rank) {
            (None, _) => vertex as usize,
            (Some(_), Some(rank)) => match rank.slot(vertex) {
                Some(slot) => slot,
                None => return,
            },
            (Some(_), None) => return,
        };
        if let (Some(&start), Some(&end)) = (self.offsets.get(at), self.offsets.get(at + 1)) {
            let words = self.words.as_ptr();
            prefetch_read(words.wrapping_add(start as usize) as *const u8);
            prefetch_read(words.wrapping_add((end as usize).wrapping_sub(1)) as *const u8);
        }
    }
}

impl Adjacency {
    /// The columns resolved for a batch of lookups.
    #[inline(always)]
    pub fn view(&self) -> View<'_> {
        let vertices = self.vertices.as_deref();
        View {
            vertices,
            rank: vertices
                .and_then(|list| self.rank.get_or_init(|| RankIndex::build(list)).as_ref()),
            offsets: &self.offsets,
            words: &self.words,
            patch: self.patch.as_ref(),
        }
    }

    /// Vertices that may have a record, ascending: the base's slots (dense: every vertex
    /// below the offsets' length) merged with patched vertices.
    pub(crate) fn vertices_with_records(&self) -> Vec<Id> {
        let mut vertices: Vec<Id> = match &self.vertices {
            Some(list) => list.to_vec(),
            None => (0..self.offsets.len().saturating_sub(1))
                .map(|v| v as Id)
                .collect(),
        };
        if let Some(patch) = &self.patch {
            vertices.extend(patch.vertices());
            vertices.sort_unstable();
            vertices.dedup();
        }
        vertices
    }

    /// Calls `f` with every vertex that has edges and its record, vertices ascending.
    pub(crate) fn for_each_record(&self, f: impl FnMut(Id, Record<'_>)) {
        let whole = match self.patch {
            None => Stretch::Slots(0..self.offsets.len().saturating_sub(1)),
            Some(_) => Stretch::Listed(self.vertices_with_records()),
        };
        self.for_each_record_in(&whole, f);
    }

    /// The key vertices cut into about `parts` stretches of consecutive ones, ascending:
    /// slots of the arrays, about as many words of records in each (a hub's record, such
    /// as a class's instances, alone where it is longer), or, once updates patched them,
    /// about as many vertices that may have a record in each.
    pub(crate) fn stretches(&self, parts: usize) -> Vec<Stretch> {
        let parts = parts.max(1);
        match self.patch {
            None => {
                let slots = self.offsets.len().saturating_sub(1);
                let words = self.offsets.last().map_or(0, |&w| w as usize);
                let step = words.div_ceil(parts).max(1);
                let mut cuts = vec![0];
                for part in 1..parts {
                    let target = (part * step) as u64;
                    let cut = self.offsets.partition_point(|&o| o < target).min(slots);
                    if cut > *cuts.last().expect("starts with 0") {
                        cuts.push(cut);
                    }
                }
                if slots > *cuts.last().expect("starts with 0") {
                    cuts.push(slots);
                }
                cuts.windows(2)
                    .map(|pair| Stretch::Slots(pair[0]..pair[1]))
                    .collect()
            }
            Some(_) => {
                let vertices = self.vertices_with_records();
                let step = vertices.len().div_ceil(parts).max(1);
                vertices
                    .chunks(step)
                    .map(|stretch| Stretch::Listed(stretch.to_vec()))
                    .collect()
            }
        }
    }

    /// Calls `f` with every vertex of `stretch` that has edges and its record, ascending.
    pub(crate) fn for_each_record_in(&self, stretch: &Stretch, mut f: impl FnMut(Id, Record<'_>)) {
        match stretch {
            Stretch::Slots(slots) => {
                for slot in slots.clone() {
                    let vertex = match &self.vertices {
                        None => slot as Id,
                        Some(list) => list[slot],
                    };
                    let (start, end) =
                        (self.offsets[slot] as usize, self.offsets[slot + 1] as usize);
                    let record = Record {
                        words: self.words.get(start..end).unwrap_or(&[]),
                    };
                    if !record.is_empty() {
                        f(vertex, record);
                    }
                }
            }
            Stretch::Listed(vertices) => {
                let view = self.view();
                for &vertex in vertices {
                    let record = view.record(vertex);
                    if !record.is_empty() {
                        f(vertex, record);
                    }
                }
            }
        }
    }

    /// Drops the resident pages of the arrays mapped from a snapshot's files that hold only
    /// `stretch`'s records (see [`Column::release_mapped_range`]); nothing for a listed
    /// stretch (a patched index), whose records lie anywhere.
    pub(crate) fn release_stretch_pages(&self, stretch: &Stretch) {
        if let Stretch::Slots(slots) = stretch {
            if let Some(vertices) = &self.vertices {
                vertices.release_mapped_range(slots.clone());
            }
            let (Some(&start), Some(&end)) =
                (self.offsets.get(slots.start), self.offsets.get(slots.end))
            else {
                return;
            };
            self.offsets
                .release_mapped_range(slots.start..slots.end + 1);
            self.words
                .release_mapped_range(start as usize..end as usize);
        }
    }

    /// Drops the resident pages of the arrays mapped from a snapshot's files (see
    /// [`Column::release_mapped_pages`]).
    pub(crate) fn release_mapped_pages(&self) {
        if let Some(vertices) = &self.vertices {
            vertices.release_mapped_pages();
        }
        self.offsets.release_mapped_pages();
        self.words.release_mapped_pages();
    }

    /// The length of `vertex`'s list over `predicate`, without materialising a record
    /// patched as a delta.
    pub(crate) fn list_len(&self, vertex: Id, predicate: PredId) -> usize {
        let view = self.view();
        if let Some(PatchedRecord::Delta(delta)) =
            self.patch.as_ref().and_then(|patch| patch.record(vertex))
        {
            let base = view.base_record(vertex).get(predicate);
            return delta
                .lists
                .get(&predicate)
                .map_or(base.len(), |list| list.len(base));
        }
        view.record(vertex).get(predicate).len()
    }

    /// Whether updates replaced some records.
    pub(crate) fn is_patched(&self) -> bool {
        self.patch.as_ref().is_some_and(|patch| patch.len() > 0)
    }

    /// The record of `vertex` (empty when it has no edges in this direction).
    #[inline(always)]
    pub fn record(&self, vertex: Id) -> Record<'_> {
        self.view().record(vertex)
    }

    /// [`View::prefetch_offset`].
    #[inline]
    pub fn prefetch_offset(&self, vertex: Id) {
        self.view().prefetch_offset(vertex)
    }

    /// [`View::prefetch_record`].
    #[inline]
    pub fn prefetch_record(&self, vertex: Id) {
        self.view().prefetch_record(vertex)
    }

    /// Heap or mapped bytes used.
    pub fn data_bytes(&self) -> usize {
        self.vertices.as_ref().map_or(0, |v| v.data_bytes())
            + self.offsets.data_bytes()
            + self.words.data_bytes()
            + self.patch.as_ref().map_or(0, AdjacencyPatch::data_bytes)
            + self
                .rank
                .get()
                .and_then(Option::as_ref)
                .map_or(0, RankIndex::data_bytes)
    }
}

/// Builds an [`Adjacency`] from whole records, vertex by vertex (compaction; a bulk build
/// lays its records out in place, `build.rs`).
pub(crate) struct AdjacencyBuilder {
    dense_vertices: Option<u64>,
    vertices: Vec<Id>,
    offsets: Vec<u64>,
    words: Vec<Id>,
}

impl AdjacencyBuilder {
    /// `dense_vertices`: `Some(n)` for a dense map over `0..n`, `None` for a sparse one.
    pub(crate) fn new(dense_vertices: Option<u64>, edges: usize) -> Self {
        let mut offsets = Vec::with_capacity(dense_vertices.map_or(0, |n| n as usize + 1));
        offsets.push(0);
        Self {
            dense_vertices,
            vertices: Vec::new(),
            offsets,
            words: Vec::with_capacity(edges + edges / 2),
        }
    }

    /// Appends the record of `vertex` as its words (a record laid out as above, not empty).
    /// Vertices must arrive in increasing order.
    pub(crate) fn push_record(&mut self, vertex: Id, words: &[Id]) {
        if self.dense_vertices.is_some() {
            while (self.offsets.len() as u64) <= vertex as u64 {
                self.offsets.push(self.words.len() as u64);
            }
        } else {
            self.vertices.push(vertex);
        }
        self.words.extend_from_slice(words);
        self.offsets.push(self.words.len() as u64);
    }

    pub(crate) fn finish(mut self) -> Adjacency {
        if let Some(n) = self.dense_vertices {
            while (self.offsets.len() as u64) < n + 1 {
                self.offsets.push(self.words.len() as u64);
            }
        }
        self.words.shrink_to_fit();
        Adjacency {
            vertices: self.dense_vertices.is_none().then(|| self.vertices.into()),
            offsets: Column::with_huge_pages(self.offsets),
            words: Column::with_huge_pages(self.words),
            patch: None,
            rank: Default::default(),
        }
    }
}
