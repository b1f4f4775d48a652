//! Exclusive prefix sums of `u64` on the device, in place: chunks summed by one thread
//! each, the chunk sums scanned the same way (recursively), then added back. Written
//! without barriers or shared memory so that the host backend runs the same kernels; its
//! cost is a few passes over the array, small beside the steps that use it.

use crate::backend::{Backend, BackendExt, Buffer, Kernel, Params};
use crate::GpuError;

/// Elements per thread.
const CHUNK: u64 = 32;

/// Replaces `values[0..n]` (device, `u64`) with its exclusive prefix sums; fails when
/// the buffer holds fewer than `n`.
pub(crate) fn exclusive_scan(
    backend: &dyn Backend,
    values: &Buffer,
    n: u64,
) -> Result<(), GpuError> {
    if n == 0 {
        return Ok(());
    }
    if (values.bytes() as u64) < n.saturating_mul(8) {
        return Err(GpuError::Unavailable(format!(
            "a scan of {n} values over a buffer of {} bytes",
            values.bytes()
        )));
    }
    let chunks = n.div_ceil(CHUNK);
    let sums = backend.alloc_of::<u64>(chunks as usize)?;
    let params = Params::new(&[values.ptr(), n, sums.ptr(), CHUNK]);
    // SAFETY: `values` holds `n` u64 (checked above) and `sums` one per chunk of `CHUNK`.
    unsafe { backend.launch(Kernel::ScanChunks, chunks, &params) }?;
    if chunks > 1 {
        exclusive_scan(backend, &sums, chunks)?;
        // SAFETY: as above.
        unsafe { backend.launch(Kernel::ScanAdd, n, &params) }?;
    }
    // Freed behind the launches that read it (buffers free in stream order).
    drop(sums);
    Ok(())
}

/// Scans `values[0..=n]` (the last element 0) and returns the total, `values[n]` after.
pub(crate) fn scan_total(backend: &dyn Backend, values: &Buffer, n: u64) -> Result<u64, GpuError> {
    exclusive_scan(backend, values, n + 1)?;
    let total: Vec<u64> = backend.download_vec(values, n as usize, 1)?;
    Ok(total[0])
}
