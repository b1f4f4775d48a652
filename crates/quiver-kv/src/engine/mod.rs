//! Key/value engines under test, behind one interface.
//!
//! - [`Chained`]: plain chained hashing (bucket heads plus an entry array), the baseline of
//!   Wiscer; [`ChainedVip`]: the same table with Wiscer's VIP idea, popular keys moved
//!   toward the head of their chain from sampled access counts that age with time.
//! - [`Hashbrown`]: the `hashbrown` crate's SwissTable.
//! - [`Quiver`]: the graph index itself, through [`quiver_store::MutableGraph`] (compact
//!   base plus concurrent delta, compacted when the delta grows); [`Hot`] puts a small
//!   popularity-aware hot table in front of any engine (`quiver-vip` is `Hot<Quiver>`).
//!
//! Keys are 64-bit. Values are either 8-byte integers (synthetic keys, as in Mega-KV's
//! benchmark) or neighbour lists (real keys of a store). A fetch returns a digest of the
//! value, which every engine computes the same way, so a run's checksum must agree across
//! engines. [`Engine::fetch_batch`] takes a slice of keys and fills a buffer of results,
//! with no per-key call back into the caller: the shape a GPU implementation (copy keys in,
//! one kernel, copy results out) can serve as well as a CPU prefetch pipeline.

mod chained;
mod hot;
mod quiver;
mod swiss;

use std::sync::Arc;

use quiver_model::{Id, ID_BYTES};
use quiver_store::mutable::List as GraphList;

pub use chained::{Chained, ChainedTable, ChainedVip};
pub use hot::Hot;
pub use quiver::{KeyMap, Quiver};
pub use swiss::Hashbrown;

/// A neighbour list value.
pub type List = Arc<[Id]>;

/// The engines `quiver bench kv` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EngineKind {
    Quiver,
    QuiverVip,
    Chained,
    ChainedVip,
    Hashbrown,
}

impl EngineKind {
    pub const ALL: [EngineKind; 5] = [
        EngineKind::Quiver,
        EngineKind::QuiverVip,
        EngineKind::Chained,
        EngineKind::ChainedVip,
        EngineKind::Hashbrown,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Quiver => "quiver",
            EngineKind::QuiverVip => "quiver-vip",
            EngineKind::Chained => "chained",
            EngineKind::ChainedVip => "chained-vip",
            EngineKind::Hashbrown => "hashbrown",
        }
    }

    /// An engine by name, with Wiscer's names as aliases.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim();
        let is = |candidates: &[&str]| candidates.iter().any(|c| c.eq_ignore_ascii_case(name));
        Some(if is(&["quiver"]) {
            EngineKind::Quiver
        } else if is(&["quiver-vip"]) {
            EngineKind::QuiverVip
        } else if is(&["chained", "ChainedHashing"]) {
            EngineKind::Chained
        } else if is(&["chained-vip", "chainedAdaptive", "VIPHashing", "vip"]) {
            EngineKind::ChainedVip
        } else if is(&["hashbrown", "swisstable"]) {
            EngineKind::Hashbrown
        } else {
            return None;
        })
    }

    /// `all`, or engine names separated by commas.
    pub fn parse_list(value: &str) -> Option<Vec<Self>> {
        if value.trim().eq_ignore_ascii_case("all") {
            return Some(Self::ALL.to_vec());
        }
        let mut kinds = value
            .split(',')
            .map(Self::parse)
            .collect::<Option<Vec<_>>>()?;
        kinds.sort_unstable();
        kinds.dedup();
        Some(kinds)
    }
}

/// The digest of a neighbour list: its length and first neighbour.
#[inline]
pub fn list_digest(ids: &[Id]) -> u64 {
    (ids.len() as u64).rotate_left(40) ^ ids.first().map_or(0, |&x| x as u64)
}

/// A value an engine stores.
pub trait Value: Clone + Default {
    /// What a fetch returns (reads the value).
    fn digest(&self) -> u64;
    /// The value as a neighbour list, for the graph engines.
    fn to_list(&self) -> GraphList;
    /// The value back from a neighbour list.
    fn from_ids(ids: &[Id]) -> Self;
    /// `from_ids(ids).digest()`, without building the value.
    fn digest_ids(ids: &[Id]) -> u64;
}

impl Value for u64 {
    #[inline]
    fn digest(&self) -> u64 {
        *self
    }

    fn to_list(&self) -> GraphList {
        if ID_BYTES >= 8 {
            GraphList::from([*self as Id])
        } else {
            GraphList::from([*self as u32 as Id, (*self >> 32) as Id])
        }
    }

    fn from_ids(ids: &[Id]) -> Self {
        Self::digest_ids(ids)
    }

    #[inline]
    fn digest_ids(ids: &[Id]) -> u64 {
        let low = ids.first().map_or(0, |&x| x as u64);
        if ID_BYTES >= 8 {
            low
        } else {
            low | ids.get(1).map_or(0, |&x| (x as u64) << 32)
        }
    }
}

impl Value for List {
    #[inline]
    fn digest(&self) -> u64 {
        list_digest(self)
    }

    fn to_list(&self) -> GraphList {
        self.clone().into()
    }

    fn from_ids(ids: &[Id]) -> Self {
        ids.into()
    }

    #[inline]
    fn digest_ids(ids: &[Id]) -> u64 {
        list_digest(ids)
    }
}

/// A key/value engine: upserts, deletes, point fetches and batched fetches of 64-bit keys.
pub trait Engine<V: Value> {
    fn name(&self) -> &'static str;

    /// Inserts or replaces the value of `key`.
    fn insert(&mut self, key: u64, value: V);

    /// Removes `key`; returns whether it was there.
    fn delete(&mut self, key: u64) -> bool;

    /// The digest of `key`'s value, if present.
    fn fetch(&mut self, key: u64) -> Option<u64>;

    /// `out[i] = fetch(keys[i])` for a batch. Engines overlap the memory latencies of the
    /// batch where they can (prefetch pipelines); the default is one at a time.
    fn fetch_batch(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        out.clear();
        for &key in keys {
            let digest = self.fetch(key);
            out.push(digest);
        }
    }

    /// Hints the CPU to start loading what a fetch of `key` reads first (a hot table in
    /// front of the engine issues it before its own probe, so that a miss of the table does
    /// not start the engine's chain of loads from nothing); the default does nothing.
    #[inline]
    fn prefetch(&self, key: u64) {
        let _ = key;
    }

    /// A copy of `key`'s value (for checks and for admitting keys to a hot table).
    fn get(&mut self, key: u64) -> Option<V>;

    /// Number of keys.
    fn len(&self) -> usize;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Work between batches of operations (rehashing, compaction); timed with the batch.
    fn maintain(&mut self) {}

    /// What the engine has to say after a run (hit rates, compactions), if anything.
    fn notes(&self) -> Option<String> {
        None
    }
}

/// The hash of the table engines: the SplitMix64 finaliser (Wiscer uses MurmurHash's).
#[inline]
pub fn hash(key: u64) -> u64 {
    crate::rng::mix64(key)
}

pub(crate) use quiver_model::prefetch::prefetch_read as prefetch;
