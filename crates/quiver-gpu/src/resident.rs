//! The graph index in device memory, whole: both directions' offsets and records, copied
//! as they lie in the store (the vertex-major layout of `quiver-store/src/adjacency.rs`,
//! which the kernels read directly), once per store. (A store too large for the device
//! goes by predicate segments instead: `segments.rs`.)
//!
//! A device serves only the graph it holds: the copy remembers where the host arrays were
//! and a sample of their contents, and a graph whose arrays differ (another store, a named
//! graph, a version patched by updates) runs on the CPU.

use std::time::Instant;

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex};

use crate::backend::{Backend, BackendExt, Buffer};
use crate::GpuError;

/// Neighbour lists on the device: a whole direction of the index, or one predicate's
/// segment (`keys`: the vertices having lists, sorted); see `Adjacency` in `kernels.cu`.
#[derive(Debug)]
pub struct DeviceAdjacency {
    pub(crate) offsets: Buffer,
    /// Vertices (a whole direction) or keys (a segment).
    pub(crate) vertices: u64,
    pub(crate) words: Buffer,
    pub(crate) keys: Option<Buffer>,
}

impl DeviceAdjacency {
    /// The kernels' four adjacency slots: offsets, vertices or keys, words, keys.
    pub fn slots(&self) -> [u64; 4] {
        [
            self.offsets.ptr(),
            self.vertices,
            self.words.ptr(),
            self.keys.as_ref().map_or(0, Buffer::ptr),
        ]
    }
}

/// Where a device run finds the lists of (predicate, direction).
pub trait IndexView {
    fn adjacency(&self, predicate: PredId, direction: Direction) -> &DeviceAdjacency;
}

/// What identifies the host arrays a copy was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    /// (address, length) of each array.
    arrays: [(usize, usize); 4],
    triples: u64,
    /// Words sampled across the arrays.
    sample: Vec<u64>,
}

fn identity(graph: &GraphIndex) -> Option<Identity> {
    let (out_offsets, out_words) = graph.dense_arrays(Direction::Out)?;
    let (in_offsets, in_words) = graph.dense_arrays(Direction::In)?;
    let mut sample = Vec::new();
    for words in [out_words, in_words] {
        for i in 0..16 {
            if let Some(&w) = words.get(words.len() * i / 16) {
                sample.push(w as u64);
            }
        }
    }
    for offsets in [out_offsets, in_offsets] {
        sample.extend(offsets.last().copied());
    }
    Some(Identity {
        arrays: [
            (out_offsets.as_ptr() as usize, out_offsets.len()),
            (out_words.as_ptr() as usize, out_words.len()),
            (in_offsets.as_ptr() as usize, in_offsets.len()),
            (in_words.as_ptr() as usize, in_words.len()),
        ],
        triples: graph.triples(),
        sample,
    })
}

/// Bytes a copy of `graph` takes on the device; `None` when it cannot be copied (a sparse
/// or patched adjacency).
pub fn device_bytes(graph: &GraphIndex) -> Option<usize> {
    let (out_offsets, out_words) = graph.dense_arrays(Direction::Out)?;
    let (in_offsets, in_words) = graph.dense_arrays(Direction::In)?;
    Some(
        std::mem::size_of_val(out_offsets)
            + std::mem::size_of_val(out_words)
            + std::mem::size_of_val(in_offsets)
            + std::mem::size_of_val(in_words),
    )
}

/// A graph index in device memory.
#[derive(Debug)]
pub struct DeviceGraph {
    out: DeviceAdjacency,
    inn: DeviceAdjacency,
    identity: Identity,
    bytes: usize,
    upload_micros: f64,
}

impl DeviceGraph {
    /// Copies `graph` to the device; `Ok(None)` when it cannot be copied (see
    /// [`device_bytes`]).
    pub fn upload(backend: &dyn Backend, graph: &GraphIndex) -> Result<Option<Self>, GpuError> {
        let Some(identity) = identity(graph) else {
            return Ok(None);
        };
        let started = Instant::now();
        let copy = |direction| -> Result<DeviceAdjacency, GpuError> {
            let (offsets, words) = graph
                .dense_arrays(direction)
                .expect("checked by identity()");
            Ok(DeviceAdjacency {
                offsets: backend.upload_slice(offsets)?,
                vertices: offsets.len().saturating_sub(1) as u64,
                words: backend.upload_slice::<Id>(words)?,
                keys: None,
            })
        };
        let out = copy(Direction::Out)?;
        let inn = copy(Direction::In)?;
        backend.synchronize()?;
        Ok(Some(Self {
            out,
            inn,
            identity,
            bytes: device_bytes(graph).unwrap_or(0),
            upload_micros: started.elapsed().as_secs_f64() * 1e6,
        }))
    }

    /// Whether this is a copy of `graph`.
    pub fn holds(&self, graph: &GraphIndex) -> bool {
        identity(graph).as_ref() == Some(&self.identity)
    }

    /// One whole direction.
    pub fn direction(&self, direction: Direction) -> &DeviceAdjacency {
        match direction {
            Direction::Out => &self.out,
            Direction::In => &self.inn,
        }
    }

    /// Bytes on the device.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Time the copy took.
    pub fn upload_micros(&self) -> f64 {
        self.upload_micros
    }
}

impl IndexView for DeviceGraph {
    fn adjacency(&self, _predicate: PredId, direction: Direction) -> &DeviceAdjacency {
        self.direction(direction)
    }
}
