//! Where keys and values come from: synthetic 8-byte keys and values, or the real
//! (vertex, predicate, direction) keys of a store with their neighbour lists.

use std::sync::Arc;

use quiver_store::{Direction, Key, Store};

use crate::engine::{KeyMap, List, Quiver, Value};
use crate::generate::{Generated, Op};
use crate::rng::{mix64, Rng};
use crate::workload::KeyPattern;
use crate::KvError;

/// Keys and values of a workload.
pub trait Dataset {
    type Value: Value;

    /// The key of slot `slot` (insertion number).
    fn key(&self, slot: u64) -> u64;

    /// How many slots exist.
    fn slots(&self) -> u64;

    /// The value a key has when loaded before the run.
    fn initial_value(&self, slot: u64) -> Self::Value;

    /// The value written by operation number `index` (an insert or update).
    fn op_value(&self, op: &Op, index: usize) -> Self::Value;

    /// The graph engine holding the initial keys of `generated`.
    fn quiver(&self, generated: &Generated) -> Quiver<Self::Value>;
}

/// 8-byte keys and values (as Mega-KV's benchmark): the key of slot `i` is
/// `i * multiplier + offset` (random pattern) or `i` (sequential), values are hashes.
#[derive(Debug, Clone, Copy)]
pub struct Synthetic {
    multiplier: u64,
    offset: u64,
}

impl Synthetic {
    pub fn new(pattern: KeyPattern, seed: u64) -> Self {
        match pattern {
            KeyPattern::Sequential => Synthetic {
                multiplier: 1,
                offset: 0,
            },
            KeyPattern::Random => Synthetic {
                multiplier: mix64(seed ^ 0x5851_F42D_4C95_7F2D) | 1,
                offset: mix64(seed ^ 0x1405_7B7E_F767_814F),
            },
        }
    }
}

impl Dataset for Synthetic {
    type Value = u64;

    #[inline]
    fn key(&self, slot: u64) -> u64 {
        slot.wrapping_mul(self.multiplier).wrapping_add(self.offset)
    }

    fn slots(&self) -> u64 {
        u64::from(u32::MAX)
    }

    fn initial_value(&self, slot: u64) -> u64 {
        mix64(self.key(slot))
    }

    #[inline]
    fn op_value(&self, op: &Op, index: usize) -> u64 {
        mix64(op.key ^ (index as u64).rotate_left(32))
    }

    fn quiver(&self, generated: &Generated) -> Quiver<u64> {
        let keys = KeyMap::dense(self.multiplier, self.offset).unwrap_or(KeyMap::Dense {
            inverse: 1,
            offset: 0,
        });
        let pairs = (0..generated.initial).map(|slot| (self.key(slot), self.initial_value(slot)));
        Quiver::from_pairs(pairs, keys)
    }
}

/// The keys of a store's default graph, every (vertex, predicate, direction) with
/// neighbours, in an order shuffled by the seed; values are the neighbour lists.
#[derive(Debug)]
pub struct RealKeys {
    store: Arc<Store>,
    keys: Vec<u64>,
    lists: Vec<List>,
}

impl RealKeys {
    pub fn new(store: Arc<Store>, seed: u64) -> Result<Self, KvError> {
        let graph = store.graph();
        let mut pairs: Vec<(u64, List)> = Vec::new();
        for direction in [Direction::Out, Direction::In] {
            for vertex in 0..store.terms() {
                let vertex = vertex as quiver_model::Id;
                for (predicate, list) in graph.edges(vertex, direction).iter() {
                    let key = Key {
                        vertex,
                        predicate,
                        direction,
                    };
                    let packed = KeyMap::pack(key).ok_or(KvError::KeyTooWide)?;
                    pairs.push((packed, List::from(list)));
                }
            }
        }
        if pairs.is_empty() {
            return Err(KvError::TooFewKeys {
                needed: 1,
                available: 0,
            });
        }
        Rng::new(seed ^ 0x2545_F491_4F6C_DD1D).shuffle(&mut pairs);
        let (keys, lists) = pairs.into_iter().unzip();
        Ok(RealKeys { store, keys, lists })
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Neighbour ids in all lists.
    pub fn neighbours(&self) -> usize {
        self.lists.iter().map(|l| l.len()).sum()
    }
}

impl Dataset for RealKeys {
    type Value = List;

    fn key(&self, slot: u64) -> u64 {
        self.keys[slot as usize]
    }

    fn slots(&self) -> u64 {
        self.keys.len() as u64
    }

    fn initial_value(&self, slot: u64) -> List {
        self.lists[slot as usize].clone()
    }

    fn op_value(&self, op: &Op, _index: usize) -> List {
        self.lists[op.slot as usize].clone()
    }

    /// The store's own graph, with the keys not loaded initially (those the run inserts)
    /// deleted and compacted away.
    fn quiver(&self, generated: &Generated) -> Quiver<List> {
        let absent = (generated.initial..self.slots()).map(|slot| self.key(slot));
        Quiver::from_base(
            Arc::clone(&self.store),
            KeyMap::Packed,
            self.keys.len(),
            [],
            absent,
        )
    }
}
