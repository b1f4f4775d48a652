//! The graph index as a key/value engine: [`MutableGraph`] behind the [`Engine`] interface.
//!
//! A 64-bit key names a graph key (vertex, predicate, direction) through a [`KeyMap`]:
//! synthetic keys are dense vertex ids in disguise (the vertex is recovered by inverting the
//! multiplicative hash that made the key, as a dictionary maps a term to its dense id);
//! real keys are packed graph keys. A value is the key's neighbour list (an 8-byte value is
//! a list of 32-bit ids). Writes go to the mutable graph's delta; [`Engine::maintain`]
//! compacts it into a new base when it holds more than a quarter as many keys as the base.

use std::marker::PhantomData;

use quiver_model::{Id, PredId};
use quiver_store::mutable::{Base, List};
use quiver_store::{Direction, Key, MutableGraph, Reader};

use super::{Engine, Value};

/// How 64-bit keys map to graph keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMap {
    /// Keys `slot * multiplier + offset` (multiplier odd): vertex `slot`, predicate 0, OUT.
    Dense { inverse: u64, offset: u64 },
    /// Keys made by [`KeyMap::pack`].
    Packed,
}

impl KeyMap {
    /// The map of keys `slot * multiplier + offset`; `None` if `multiplier` is even.
    pub fn dense(multiplier: u64, offset: u64) -> Option<Self> {
        if multiplier.is_multiple_of(2) {
            return None;
        }
        // Newton's iteration for the inverse modulo 2^64: correct bits double each step.
        let mut inverse = multiplier;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(multiplier.wrapping_mul(inverse)));
        }
        Some(KeyMap::Dense { inverse, offset })
    }

    /// A graph key packed as `vertex << 32 | predicate << 1 | direction`; `None` when the
    /// vertex needs more than 32 bits or the predicate more than 31.
    pub fn pack(key: Key) -> Option<u64> {
        let vertex = u32::try_from(key.vertex as u64).ok()?;
        if key.predicate >= 1 << 31 {
            return None;
        }
        let direction = u64::from(key.direction == Direction::In);
        Some((u64::from(vertex) << 32) | (u64::from(key.predicate) << 1) | direction)
    }

    /// The graph key of a 64-bit key.
    #[inline]
    pub fn key(&self, key: u64) -> Key {
        match *self {
            KeyMap::Dense { inverse, offset } => Key {
                vertex: key.wrapping_sub(offset).wrapping_mul(inverse) as Id,
                predicate: 0,
                direction: Direction::Out,
            },
            KeyMap::Packed => Key {
                vertex: (key >> 32) as Id,
                predicate: ((key >> 1) & 0x7FFF_FFFF) as PredId,
                direction: if key & 1 == 1 {
                    Direction::In
                } else {
                    Direction::Out
                },
            },
        }
    }
}

/// The graph index as an engine.
#[derive(Debug)]
pub struct Quiver<V> {
    graph: MutableGraph,
    reader: Reader,
    keys: KeyMap,
    len: usize,
    compactions: u64,
    compaction_seconds: f64,
    scratch: Vec<Key>,
    _value: PhantomData<V>,
}

impl<V: Value> Quiver<V> {
    /// An engine holding `pairs`: written to the delta of an empty graph, then compacted
    /// into a base.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (u64, V)>, keys: KeyMap) -> Self {
        Self::from_base(quiver_store::GraphIndex::default(), keys, 0, pairs, [])
    }

    /// An engine over an existing graph that holds `len` keys, with `added` written and the
    /// keys of `removed` deleted before the delta is compacted into a new base.
    pub fn from_base(
        base: impl Into<Base>,
        keys: KeyMap,
        len: usize,
        added: impl IntoIterator<Item = (u64, V)>,
        removed: impl IntoIterator<Item = u64>,
    ) -> Self {
        let graph = MutableGraph::new(base);
        let mut engine = Quiver {
            reader: graph.reader(),
            graph,
            keys,
            len,
            compactions: 0,
            compaction_seconds: 0.0,
            scratch: Vec::new(),
            _value: PhantomData,
        };
        for (key, value) in added {
            engine.insert(key, value);
        }
        for key in removed {
            engine.delete(key);
        }
        engine.graph.compact();
        engine.graph.refresh(&mut engine.reader);
        engine
    }

    /// The mutable graph underneath.
    pub fn graph(&self) -> &MutableGraph {
        &self.graph
    }
}

impl<V: Value> Engine<V> for Quiver<V> {
    fn name(&self) -> &'static str {
        "quiver"
    }

    fn insert(&mut self, key: u64, value: V) {
        if !self.graph.replace_list(self.keys.key(key), value.to_list()) {
            self.len += 1;
        }
    }

    fn delete(&mut self, key: u64) -> bool {
        let had = self.graph.replace_list(self.keys.key(key), List::empty());
        if had {
            self.len -= 1;
        }
        had
    }

    // Always inlined into the runner's loop, as the other engines' fetches are, however
    // much the batched path adds to the loop's function.
    #[inline(always)]
    fn fetch(&mut self, key: u64) -> Option<u64> {
        self.reader.with(self.keys.key(key), |neighbours| {
            (!neighbours.is_empty()).then(|| V::digest_ids(neighbours))
        })
    }

    /// The offset entry of the key's vertex in the base (stage one of a lookup).
    #[inline]
    fn prefetch(&self, key: u64) {
        let key = self.keys.key(key);
        self.reader
            .base()
            .adjacency(key.direction)
            .prefetch_offset(key.vertex);
    }

    /// [`Reader::with_many`]: the lookups of the batch with their loads pipelined.
    fn fetch_batch(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        self.scratch.clear();
        self.scratch
            .extend(keys.iter().map(|&key| self.keys.key(key)));
        out.clear();
        out.reserve(keys.len());
        self.reader.with_many(&self.scratch, |neighbours| {
            out.push((!neighbours.is_empty()).then(|| V::digest_ids(neighbours)))
        });
    }

    fn get(&mut self, key: u64) -> Option<V> {
        let neighbours = self.reader.get(self.keys.key(key));
        (!neighbours.is_empty()).then(|| V::from_ids(&neighbours))
    }

    fn len(&self) -> usize {
        self.len
    }

    fn maintain(&mut self) {
        if self.graph.delta_len() > (self.len / 4).max(1 << 16) {
            if let Some(stats) = self.graph.compact() {
                self.compactions += 1;
                self.compaction_seconds += stats.seconds;
            }
            self.graph.refresh(&mut self.reader);
        }
    }

    fn notes(&self) -> Option<String> {
        Some(format!(
            "{} compactions ({:.2} s), {} keys in the delta",
            self.compactions,
            self.compaction_seconds,
            self.graph.delta_len()
        ))
    }
}
