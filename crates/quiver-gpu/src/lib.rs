//! GPU execution for Quiver, after Wukong+G: the graph index copied to device memory once
//! per store, heavy exploration steps run as kernels over whole columns with the row table
//! kept on the device between steps, and batched key/value lookups served by the device
//! (Mega-KV).
//!
//! Layers, bottom up: a [`backend::Backend`] gives memory, copies and launches of the
//! kernels in `kernels.cu` — CUDA through cudarc (`cuda.rs`, the `cuda` feature; the
//! driver and NVRTC are loaded at run time, found as `locate.rs` says) or the host
//! (`host.rs`: the same kernel source compiled for the CPU, which is how the tests check
//! everything above it without a GPU); `resident.rs` copies a graph index to the device,
//! whole, or `segments.rs` one predicate at a time when it does not fit;
//! `scan.rs` computes prefix sums; `steps.rs` runs exploration steps; `kv.rs` batched
//! lookups; `device.rs` is the [`quiver_sparql::device::BgpDevice`] the query engine
//! calls; `check.rs` compares the device's rows with the CPU executor's on random graphs.

pub mod backend;
pub mod check;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod device;
mod host;
pub mod kv;
pub mod locate;
pub mod resident;
mod scan;
pub mod segments;
mod steps;

pub use device::{DeviceOptions, GpuDevice, Residency};

/// Why the device path failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// No usable device: no driver, no NVRTC, no GPU, or the crate built without CUDA.
    #[error("no GPU available: {0}")]
    Unavailable(String),
    /// NVRTC rejected the kernels.
    #[error("compiling the GPU kernels failed: {0}")]
    Compile(String),
    /// Device memory ran out.
    #[error("out of GPU memory: {0}")]
    OutOfMemory(String),
    /// A driver call failed.
    #[error("GPU error: {0}")]
    Device(String),
}

impl From<GpuError> for quiver_sparql::QueryError {
    fn from(error: GpuError) -> Self {
        quiver_sparql::QueryError::Device(error.to_string())
    }
}
