//! The graph index of one graph: adjacency in both directions plus the predicate index.
//!
//! Keys are (vertex, predicate, direction); values are sorted neighbour lists. The
//! predicate index lists, for every predicate, its distinct subjects and objects (Wukong's
//! index vertices), the start points of queries that begin at a predicate. Instances of a
//! class are the IN neighbours of the class vertex over `rdf:type`, so the class index is
//! part of the adjacency itself.

use quiver_model::{Column, Id, PredId};

use crate::adjacency::{Adjacency, Record, Stretch};

/// Which way an edge is walked: OUT from subject to object, IN from object to subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    Out,
    In,
}

impl Direction {
    pub fn reverse(self) -> Self {
        match self {
            Direction::Out => Direction::In,
            Direction::In => Direction::Out,
        }
    }
}

/// A key of the graph index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub vertex: Id,
    pub predicate: PredId,
    pub direction: Direction,
}

/// The index of one graph.
#[derive(Debug, Default, Clone)]
pub struct GraphIndex {
    pub(crate) out: Adjacency,
    pub(crate) inn: Adjacency,
    /// For the predicate of slot `i`: subjects at `offsets[2i]..offsets[2i+1]`, objects at
    /// `offsets[2i+1]..offsets[2i+2]` of `members`, each sorted and distinct.
    pub(crate) predicate_offsets: Column<u64>,
    /// `None`: the slots cover the predicates `0..n` in order, slot `p` for predicate `p`
    /// (the default graph, every predicate of the store). `Some(ids)`: only the predicates
    /// `ids` (ascending), slot `i` for `ids[i]` (a named graph, which uses a few of the
    /// store's predicates: sized for all, a store of 100,000 named graphs and 3,000
    /// predicates held 4.8 GB of empty slots).
    pub(crate) predicate_ids: Option<Column<PredId>>,
    pub(crate) predicate_members: Column<Id>,
    pub(crate) triples: u64,
    /// Predicate index lists replaced by updates (by slot as in `predicate_offsets`), and
    /// the number of predicates covered when updates added predicates.
    pub(crate) predicate_patch: Option<PredicatePatch>,
}

/// Lists of the predicate index replaced by updates; persistent like
/// [`crate::patch::AdjacencyPatch`].
#[derive(Debug, Clone, Default)]
pub(crate) struct PredicatePatch {
    pub(crate) lists: imbl::HashMap<usize, std::sync::Arc<crate::patch::LazyList>>,
    pub(crate) predicates: usize,
}

/// Consecutive key vertices of one direction of a graph and their triples
/// ([`GraphIndex::subject_stretches`], [`GraphIndex::object_stretches`]).
pub struct VertexStretch<'a> {
    records: &'a Adjacency,
    stretch: Stretch,
}

impl VertexStretch<'_> {
    /// Number of triples: one pass over the stretch's record headers.
    pub fn triples(&self) -> usize {
        let mut triples = 0;
        self.records.for_each_record_in(&self.stretch, |_, record| {
            triples += record
                .iter()
                .map(|(_, objects)| objects.len())
                .sum::<usize>();
        });
        triples
    }

    /// Drops the resident pages of the stretch's records where they are mapped from a
    /// snapshot and hold nothing else (see [`Column::release_mapped_range`]): a pass that
    /// reads a saved store once gives back what it has read as it goes.
    pub fn release_mapped_pages(&self) {
        self.records.release_stretch_pages(&self.stretch);
    }

    /// Every triple of the stretch as (vertex, predicate, neighbour), in the order of its
    /// records: (subject, predicate, object) ascending for subjects, (object, predicate,
    /// subject) for objects.
    pub fn for_each_triple(&self, mut f: impl FnMut(Id, PredId, Id)) {
        self.records
            .for_each_record_in(&self.stretch, |vertex, record| {
                for (predicate, neighbours) in record.iter() {
                    for &neighbour in neighbours {
                        f(vertex, predicate, neighbour);
                    }
                }
            });
    }
}

/// Keys between the stages of [`GraphIndex::pipeline`].
const PIPELINE_WINDOW: usize = 16;

impl GraphIndex {
    /// The index of a graph without triples, with a sparse vertex map and predicate index
    /// (a named graph).
    pub(crate) fn empty_sparse() -> GraphIndex {
        let adjacency = || crate::adjacency::Adjacency {
            vertices: Some(Vec::new().into()),
            offsets: vec![0u64].into(),
            words: Column::default(),
            patch: None,
            rank: Default::default(),
        };
        GraphIndex {
            out: adjacency(),
            inn: adjacency(),
            predicate_offsets: vec![0u64].into(),
            predicate_members: Column::default(),
            predicate_ids: Some(Column::default()),
            triples: 0,
            predicate_patch: None,
        }
    }

    /// Neighbours of `vertex` over `predicate` in `direction`, sorted ascending.
    #[inline(always)]
    pub fn get(&self, vertex: Id, predicate: PredId, direction: Direction) -> &[Id] {
        self.adjacency(direction).record(vertex).get(predicate)
    }

    /// The number of neighbours of `vertex` over `predicate` in `direction`, without
    /// materialising a patched long list.
    pub fn degree(&self, vertex: Id, predicate: PredId, direction: Direction) -> usize {
        self.adjacency(direction).list_len(vertex, predicate)
    }

    /// [`GraphIndex::get`] for a [`Key`].
    #[inline(always)]
    pub fn get_key(&self, key: Key) -> &[Id] {
        self.get(key.vertex, key.predicate, key.direction)
    }

    /// All (predicate, neighbours) of `vertex` in `direction`: the variable-predicate lookup.
    pub fn edges(&self, vertex: Id, direction: Direction) -> Record<'_> {
        self.adjacency(direction).record(vertex)
    }

    /// Whether the triple (`subject`, `predicate`, `object`) is in the graph.
    pub fn contains(&self, subject: Id, predicate: PredId, object: Id) -> bool {
        self.get(subject, predicate, Direction::Out)
            .binary_search(&object)
            .is_ok()
    }

    /// Distinct subjects of `predicate`, sorted (the predicate index, IN side).
    pub fn predicate_subjects(&self, predicate: PredId) -> &[Id] {
        self.predicate_list(2 * predicate as usize)
    }

    /// Distinct objects of `predicate`, sorted (the predicate index, OUT side).
    pub fn predicate_objects(&self, predicate: PredId) -> &[Id] {
        self.predicate_list(2 * predicate as usize + 1)
    }

    pub(crate) fn predicate_list(&self, slot: usize) -> &[Id] {
        if let Some(patch) = &self.predicate_patch {
            if let Some(list) = patch.lists.get(&slot) {
                return list.get(self.base_predicate_list(slot));
            }
        }
        self.base_predicate_list(slot)
    }

    /// A list of the predicate index in the arrays, ignoring any patch. `slot` is `2p` for
    /// the subjects of predicate `p`, `2p + 1` for its objects, however the arrays lay
    /// them out.
    pub(crate) fn base_predicate_list(&self, slot: usize) -> &[Id] {
        let slot = match &self.predicate_ids {
            None => slot,
            Some(ids) => match PredId::try_from(slot / 2).map(|p| ids.binary_search(&p)) {
                Ok(Ok(i)) => 2 * i + slot % 2,
                _ => return &[],
            },
        };
        match (
            self.predicate_offsets.get(slot),
            self.predicate_offsets.get(slot + 1),
        ) {
            (Some(&start), Some(&end)) => &self.predicate_members[start as usize..end as usize],
            _ => &[],
        }
    }

    /// Batched lookups: `out[i] = get(keys[i])`, through [`GraphIndex::pipeline`].
    pub fn get_many<'a>(&'a self, keys: &[Key], out: &mut Vec<&'a [Id]>) {
        out.clear();
        out.reserve(keys.len());
        self.pipeline(keys, |key, record| out.push(record.get(key.predicate)));
    }

    /// Calls `visit` with each key of a batch and the key's vertex record, in order, with a
    /// software pipeline that overlaps the memory latencies of the batch (as Mega-KV's
    /// batched prefetching does): the offset entries of key `i + 2W` (a sparse adjacency's
    /// rank block), a sparse adjacency's offset entries of key `i + 3W/2` and the record of
    /// key `i + W` are prefetched before key `i` is visited, so the dependent cache misses
    /// of a lookup are paid in parallel across keys with a bounded window of loads in
    /// flight. The record of key `i` is located (its offsets read), not yet read.
    #[inline]
    pub fn pipeline<'a>(&'a self, keys: &[Key], mut visit: impl FnMut(&Key, Record<'a>)) {
        const WINDOW: usize = PIPELINE_WINDOW;
        let (out, inn) = (self.out.view(), self.inn.view());
        let view = |key: &Key| match key.direction {
            Direction::Out => out,
            Direction::In => inn,
        };
        let offset = |key: &Key| view(key).prefetch_offset(key.vertex);
        let slot = |key: &Key| view(key).prefetch_slot(key.vertex);
        let record = |key: &Key| view(key).prefetch_record(key.vertex);
        let ranked = out.is_ranked() || inn.is_ranked();
        keys.iter().take(2 * WINDOW).for_each(offset);
        if ranked {
            keys.iter().take(3 * WINDOW / 2).for_each(slot);
        }
        keys.iter().take(WINDOW).for_each(record);
        for (i, key) in keys.iter().enumerate() {
            if let Some(ahead) = keys.get(i + 2 * WINDOW) {
                offset(ahead);
            }
            if let Some(ahead) = keys.get(i + 3 * WINDOW / 2).filter(|_| ranked) {
                slot(ahead);
            }
            if let Some(ahead) = keys.get(i + WINDOW) {
                record(ahead);
            }
            visit(key, view(key).record(key.vertex));
        }
    }

    /// One direction's arrays as they lie in memory — vertex `v`'s record at
    /// `words[offsets[v]..offsets[v + 1]]`, laid out as `adjacency.rs` describes — for
    /// copying the index to a device; `None` when the adjacency is sparse (a named graph)
    /// or updates patched it (a device then reads the CPU's index instead).
    pub fn dense_arrays(&self, direction: Direction) -> Option<(&[u64], &[Id])> {
        let adjacency = self.adjacency(direction);
        if adjacency.vertices.is_some() || adjacency.is_patched() {
            return None;
        }
        Some((&adjacency.offsets, &adjacency.words))
    }

    /// Number of distinct triples.
    pub fn triples(&self) -> u64 {
        self.triples
    }

    /// Number of predicates the predicate index covers.
    pub fn predicates(&self) -> usize {
        let base = match &self.predicate_ids {
            None => self.predicate_offsets.len().saturating_sub(1) / 2,
            Some(ids) => ids.last().map_or(0, |&last| last as usize + 1),
        };
        self.predicate_patch
            .as_ref()
            .map_or(base, |patch| patch.predicates.max(base))
    }

    /// Whether updates changed the index since its arrays were built.
    pub fn is_patched(&self) -> bool {
        self.out.is_patched()
            || self.inn.is_patched()
            || self
                .predicate_patch
                .as_ref()
                .is_some_and(|patch| !patch.lists.is_empty())
    }

    #[inline(always)]
    pub fn adjacency(&self, direction: Direction) -> &Adjacency {
        match direction {
            Direction::Out => &self.out,
            Direction::In => &self.inn,
        }
    }

    /// Calls `f` with every vertex that has edges in `direction` (every subject: `Out`,
    /// every object: `In`) and its record, vertices ascending; records patched by updates
    /// are read as patched, and vertices whose every edge was deleted are skipped.
    pub fn for_each_vertex(&self, direction: Direction, f: impl FnMut(Id, Record<'_>)) {
        self.adjacency(direction).for_each_record(f);
    }

    /// Every triple as (subject, predicate, object), in subject order.
    pub fn for_each_triple(&self, mut f: impl FnMut(Id, PredId, Id)) {
        self.out.for_each_record(|subject, record| {
            for (predicate, objects) in record.iter() {
                for &object in objects {
                    f(subject, predicate, object);
                }
            }
        });
    }

    /// The subjects cut into about `parts` stretches of consecutive ones, ascending, whose
    /// triples can be read on as many threads: together they hold every triple once, in
    /// subject order (a load on top of a store rewrites its triples so).
    pub fn subject_stretches(&self, parts: usize) -> Vec<VertexStretch<'_>> {
        Self::stretches(&self.out, parts)
    }

    /// [`GraphIndex::subject_stretches`] over the objects and their IN records.
    pub fn object_stretches(&self, parts: usize) -> Vec<VertexStretch<'_>> {
        Self::stretches(&self.inn, parts)
    }

    fn stretches(records: &Adjacency, parts: usize) -> Vec<VertexStretch<'_>> {
        records
            .stretches(parts)
            .into_iter()
            .map(|stretch| VertexStretch { records, stretch })
            .collect()
    }

    /// Drops the resident pages of the index's arrays mapped from a snapshot's files (see
    /// [`Column::release_mapped_pages`]); arrays in memory are left as they are.
    pub fn release_mapped_pages(&self) {
        self.out.release_mapped_pages();
        self.inn.release_mapped_pages();
        self.predicate_offsets.release_mapped_pages();
        self.predicate_members.release_mapped_pages();
        if let Some(ids) = &self.predicate_ids {
            ids.release_mapped_pages();
        }
    }

    /// The predicates the predicate index has slots for, ascending, if only some (see
    /// [`GraphIndex::predicate_ids`]).
    pub fn predicate_ids(&self) -> Option<&[PredId]> {
        self.predicate_ids.as_deref()
    }

    /// Bytes used by the index, heap or mapped.
    pub fn data_bytes(&self) -> usize {
        self.out.data_bytes()
            + self.inn.data_bytes()
            + self.predicate_offsets.data_bytes()
            + self.predicate_members.data_bytes()
            + self.predicate_ids.as_ref().map_or(0, Column::data_bytes)
            + self.predicate_patch.as_ref().map_or(0, |patch| {
                patch
                    .lists
                    .values()
                    .map(|l| l.delta.entries() * std::mem::size_of::<Id>())
                    .sum()
            })
    }
}
