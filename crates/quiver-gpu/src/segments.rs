//! Wukong+G's predicate-based cache, for stores larger than the device's memory: the index
//! goes to the device one (predicate, direction) segment at a time, as the queries walking
//! it need it, and the least recently used segments make room for new ones.
//!
//! A segment lists the vertices having edges over the predicate in that direction (the
//! predicate index's subjects or objects, sorted) and their neighbour lists; the kernels
//! find a vertex by binary search in it. Segments are built from the store's index as it
//! reads (updates included), so this mode also serves a store changed since its last
//! checkpoint, whose arrays cannot be copied whole.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Store};

use crate::backend::{Backend, BackendExt};
use crate::resident::{DeviceAdjacency, IndexView};
use crate::GpuError;

type SegmentKey = (PredId, bool);

fn key(predicate: PredId, direction: Direction) -> SegmentKey {
    (predicate, direction == Direction::In)
}

/// One predicate's lists in one direction, on the device.
#[derive(Debug)]
pub struct Segment {
    adjacency: DeviceAdjacency,
    bytes: usize,
}

/// Bytes a segment will take, from the planner's statistics (before building it).
fn estimated_bytes(store: &Store, predicate: PredId, direction: Direction) -> usize {
    let stats = store.predicate_stats(predicate);
    let keys = match direction {
        Direction::Out => stats.subjects,
        Direction::In => stats.objects,
    } as usize;
    keys * (std::mem::size_of::<Id>() + 8) + 8 + stats.triples as usize * std::mem::size_of::<Id>()
}

impl Segment {
    fn upload(
        backend: &dyn Backend,
        graph: &GraphIndex,
        predicate: PredId,
        direction: Direction,
    ) -> Result<Self, GpuError> {
        let keys = match direction {
            Direction::Out => graph.predicate_subjects(predicate),
            Direction::In => graph.predicate_objects(predicate),
        };
        let mut offsets = Vec::with_capacity(keys.len() + 1);
        let mut words: Vec<Id> = Vec::new();
        offsets.push(0u64);
        for &vertex in keys {
            words.extend_from_slice(graph.get(vertex, predicate, direction));
            offsets.push(words.len() as u64);
        }
        let bytes = std::mem::size_of_val(keys)
            + std::mem::size_of_val(&offsets[..])
            + std::mem::size_of_val(&words[..]);
        Ok(Self {
            adjacency: DeviceAdjacency {
                offsets: backend.upload_slice(&offsets)?,
                vertices: keys.len() as u64,
                words: backend.upload_slice(&words)?,
                keys: Some(backend.upload_slice(keys)?),
            },
            bytes,
        })
    }
}

/// The segments one run reads.
pub struct SegmentSet {
    segments: HashMap<SegmentKey, Arc<Segment>>,
}

impl IndexView for SegmentSet {
    fn adjacency(&self, predicate: PredId, direction: Direction) -> &DeviceAdjacency {
        &self.segments[&key(predicate, direction)].adjacency
    }
}

/// What one acquisition copied.
pub struct Acquired {
    pub set: SegmentSet,
    pub copied_bytes: usize,
    pub copied_micros: f64,
}

/// The segments on the device for one store version, within a byte budget.
#[derive(Debug)]
pub struct SegmentCache {
    version: u64,
    budget: usize,
    used: usize,
    clock: u64,
    segments: HashMap<SegmentKey, (Arc<Segment>, u64)>,
    pub uploads: usize,
    pub evictions: usize,
}

impl SegmentCache {
    pub fn new(version: u64, budget: usize) -> Self {
        Self {
            version,
            budget,
            used: 0,
            clock: 0,
            segments: HashMap::new(),
            uploads: 0,
            evictions: 0,
        }
    }

    /// Whether the cache serves this version of the store.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Bytes and number of the segments on the device.
    pub fn resident(&self) -> (usize, usize) {
        (self.used, self.segments.len())
    }

    /// The segments of `needed`, copying the missing ones (and evicting the least
    /// recently used others to make room); `None` when together they exceed the budget.
    pub fn acquire(
        &mut self,
        backend: &dyn Backend,
        store: &Store,
        needed: &[(PredId, Direction)],
    ) -> Result<Option<Acquired>, GpuError> {
        let mut wanted: Vec<(PredId, Direction)> = needed.to_vec();
        wanted.sort_by_key(|&(p, d)| key(p, d));
        wanted.dedup();
        let total: usize = wanted
            .iter()
            .map(|&(p, d)| match self.segments.get(&key(p, d)) {
                Some((segment, _)) => segment.bytes,
                None => estimated_bytes(store, p, d),
            })
            .sum();
        if total > self.budget {
            return Ok(None);
        }
        self.clock += 1;
        let started = Instant::now();
        let mut copied = 0;
        let mut set = HashMap::new();
        for &(predicate, direction) in &wanted {
            let k = key(predicate, direction);
            if !self.segments.contains_key(&k) {
                self.make_room(estimated_bytes(store, predicate, direction), &wanted);
                let segment = Arc::new(Segment::upload(
                    backend,
                    store.graph(),
                    predicate,
                    direction,
                )?);
                copied += segment.bytes;
                self.used += segment.bytes;
                self.uploads += 1;
                self.segments.insert(k, (segment, self.clock));
            }
            let entry = self.segments.get_mut(&k).expect("inserted above");
            entry.1 = self.clock;
            set.insert(k, entry.0.clone());
        }
        backend.synchronize()?;
        Ok(Some(Acquired {
            set: SegmentSet { segments: set },
            copied_bytes: copied,
            copied_micros: started.elapsed().as_secs_f64() * 1e6,
        }))
    }

    /// Evicts least recently used segments not in `keep` until `bytes` more fit.
    fn make_room(&mut self, bytes: usize, keep: &[(PredId, Direction)]) {
        while self.used + bytes > self.budget {
            let victim = self
                .segments
                .iter()
                .filter(|(k, _)| !keep.iter().any(|&(p, d)| key(p, d) == **k))
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k);
            let Some(victim) = victim else {
                return;
            };
            if let Some((segment, _)) = self.segments.remove(&victim) {
                self.used -= segment.bytes;
                self.evictions += 1;
            }
        }
    }
}
