//! Batched key/value lookups on the device (Mega-KV's GET): a batch of packed graph keys
//! in, one digest per key out, from the device copy of the index.
//!
//! A key packs `vertex << 32 | predicate << 1 | direction` (1: IN), as
//! `quiver_kv::engine::KeyMap::pack` does; the digest is the one every `quiver bench kv`
//! engine computes (`quiver_kv::engine::list_digest`: the list's length rotated left by 40
//! bits, XOR its first neighbour), and a key without a list is absent. [`lookup_batch`] serves one batch
//! on any backend; `pipelined` (CUDA) streams many batches through several CUDA streams so
//! that copies in, kernels and copies out of different batches overlap, as Mega-KV does.

use quiver_kv::engine::{list_digest, KeyMap};
use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Key};

use crate::backend::{Backend, BackendExt, Kernel, Params};
use crate::resident::DeviceGraph;
use crate::GpuError;

/// The graph key of a packed key (`quiver_kv`'s packing, which the kernel decodes).
pub fn unpack(key: u64) -> Key {
    KeyMap::Packed.key(key)
}

/// `count` packed keys of `graph` (vertex ids below `vertices`), drawn by `seed`: about
/// three in four name a list the vertex has, the others a predicate it lacks or a vertex
/// past the last (absent keys, which a lookup must report as such).
pub fn sample_keys(graph: &GraphIndex, vertices: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|i| {
            let vertex = next() % (vertices + vertices / 100 + 1);
            let direction = if next() % 2 == 0 {
                Direction::Out
            } else {
                Direction::In
            };
            let record = graph.edges(vertex as Id, direction);
            let predicate = if i % 4 != 0 && !record.is_empty() {
                record.entry(next() as usize % record.len()).0
            } else {
                (next() % 64) as PredId
            };
            (vertex << 32) | ((predicate as u64) << 1) | u64::from(direction == Direction::In)
        })
        .collect()
}

/// The CPU's answers for a batch: digest and whether the key has a list, through the
/// index's prefetching pipeline.
pub fn cpu_lookup(graph: &GraphIndex, keys: &[u64], digests: &mut [u64], found: &mut [u8]) {
    let unpacked: Vec<Key> = keys.iter().map(|&k| unpack(k)).collect();
    let mut i = 0;
    graph.pipeline(&unpacked, |key, record| {
        let list = record.get(key.predicate);
        digests[i] = list_digest(list);
        found[i] = u8::from(!list.is_empty());
        i += 1;
    });
}

/// The kernel's parameters for `count` keys at `keys` (device), results at `digests` and
/// `found` (device).
pub(crate) fn params(
    graph: &DeviceGraph,
    keys: u64,
    count: u64,
    digests: u64,
    found: u64,
) -> Params {
    let out = graph.direction(Direction::Out).slots();
    let inn = graph.direction(Direction::In).slots();
    Params::new(&[
        keys, count, out[0], out[1], out[2], out[3], inn[0], inn[1], inn[2], inn[3], digests, found,
    ])
}

/// Looks up one batch: (digests, found flags).
pub fn lookup_batch(
    backend: &dyn Backend,
    graph: &DeviceGraph,
    keys: &[u64],
) -> Result<(Vec<u64>, Vec<u8>), GpuError> {
    let n = keys.len();
    let device_keys = backend.upload_slice(keys)?;
    let digests = backend.alloc_of::<u64>(n)?;
    let found = backend.alloc_of::<u8>(n)?;
    // SAFETY: the keys, digests and found flags hold `n` elements each; the graph's arrays are alive.
    unsafe {
        backend.launch(
            Kernel::KvLookup,
            n as u64,
            &params(
                graph,
                device_keys.ptr(),
                n as u64,
                digests.ptr(),
                found.ptr(),
            ),
        )
    }?;
    Ok((
        backend.download_vec(&digests, 0, n)?,
        backend.download_vec(&found, 0, n)?,
    ))
}

#[cfg(feature = "cuda")]
pub use pipelined::{pipelined, Pipelined};

#[cfg(feature = "cuda")]
mod pipelined {
    use std::time::Instant;

    use cudarc::driver::result;

    use super::params;
    use crate::backend::{Backend, BackendExt, Kernel};
    use crate::cuda::CudaBackend;
    use crate::resident::DeviceGraph;
    use crate::GpuError;

    /// The outcome of a pipelined run.
    #[derive(Debug, Clone)]
    pub struct Pipelined {
        pub seconds: f64,
        pub lookups: usize,
        pub digests: Vec<u64>,
        pub found: Vec<u8>,
    }

    fn driver(error: cudarc::driver::DriverError) -> GpuError {
        GpuError::Device(error.to_string())
    }

    /// Looks up `keys` in batches of `batch`, batch `i` on stream `i % streams`: each
    /// stream copies its batch in, runs the kernel and copies the results out while the
    /// others do the same. Keys and results live in pinned host memory (as a network
    /// stack's buffers would), so the copies run at the bus's speed and overlap; the time
    /// covers the copies, the kernels and the final synchronisation.
    pub fn pipelined(
        cuda: &CudaBackend,
        graph: &DeviceGraph,
        keys: &[u64],
        batch: usize,
        streams: usize,
    ) -> Result<Pipelined, GpuError> {
        let ctx = cuda.context();
        ctx.bind_to_thread().map_err(driver)?;
        let n = keys.len();
        let batch = batch.clamp(1, n.max(1));
        let streams = streams.max(1);
        // SAFETY: pinned host memory, written before it is read.
        let mut host_keys = unsafe { ctx.alloc_pinned::<u64>(n.max(1)) }.map_err(driver)?;
        host_keys.as_mut_slice().map_err(driver)?[..n].copy_from_slice(keys);
        // SAFETY: as above; the device writes every element before the host reads it.
        // Not write-combined (flags 0), since the host reads them.
        let mut host_digests =
            unsafe { ctx.alloc_pinned_with_flags::<u64>(n.max(1), 0) }.map_err(driver)?;
        // SAFETY: as above.
        let mut host_found =
            unsafe { ctx.alloc_pinned_with_flags::<u8>(n.max(1), 0) }.map_err(driver)?;
        let lanes = (0..streams)
            .map(|_| -> Result<_, GpuError> {
                Ok((
                    ctx.new_stream().map_err(driver)?,
                    cuda.alloc_of::<u64>(batch)?,
                    cuda.alloc_of::<u64>(batch)?,
                    cuda.alloc_of::<u8>(batch)?,
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The lanes' buffers come from the backend's stream: ready before other streams
        // use them.
        cuda.synchronize()?;
        let key_slice = host_keys.as_slice().map_err(driver)?;
        let digest_slice = host_digests.as_mut_slice().map_err(driver)?;
        let found_slice = host_found.as_mut_slice().map_err(driver)?;
        let started = Instant::now();
        for (i, start) in (0..n).step_by(batch).enumerate() {
            let end = (start + batch).min(n);
            let count = end - start;
            let (stream, device_keys, device_digests, device_found) = &lanes[i % streams];
            let raw = stream.cu_stream();
            // SAFETY: the device buffers hold `batch` elements; the host ranges are pinned
            // and live until the streams are synchronised below; a stream's next batch
            // is queued behind its previous one, so its buffers are not overwritten early.
            unsafe {
                result::memcpy_htod_async(device_keys.ptr(), &key_slice[start..end], raw)
                    .map_err(driver)?;
            }
            let lookup = params(
                graph,
                device_keys.ptr(),
                count as u64,
                device_digests.ptr(),
                device_found.ptr(),
            );
            // SAFETY: the lane's buffers hold `batch` ≥ `count` elements each, allocated by
            // this backend; the graph's arrays are alive.
            unsafe { cuda.launch_on(stream, Kernel::KvLookup, count as u64, &lookup) }?;
            // SAFETY: as above.
            unsafe {
                result::memcpy_dtoh_async(&mut digest_slice[start..end], device_digests.ptr(), raw)
                    .map_err(driver)?;
                result::memcpy_dtoh_async(&mut found_slice[start..end], device_found.ptr(), raw)
                    .map_err(driver)?;
            }
        }
        for (stream, ..) in &lanes {
            stream.synchronize().map_err(driver)?;
        }
        let seconds = started.elapsed().as_secs_f64();
        Ok(Pipelined {
            seconds,
            lookups: n,
            digests: digest_slice[..n].to_vec(),
            found: found_slice[..n].to_vec(),
        })
    }

    /// The latency of one batch of `keys` through one stream (copy in, kernel, copy out,
    /// synchronise), in microseconds, over `runs` runs: the median.
    pub fn batch_latency(
        cuda: &CudaBackend,
        graph: &DeviceGraph,
        keys: &[u64],
        runs: usize,
    ) -> Result<f64, GpuError> {
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs.max(1) {
            let run = pipelined(cuda, graph, keys, keys.len(), 1)?;
            times.push(run.seconds * 1e6);
        }
        times.sort_by(f64::total_cmp);
        Ok(times[times.len() / 2])
    }
}

#[cfg(feature = "cuda")]
pub use pipelined::batch_latency;
