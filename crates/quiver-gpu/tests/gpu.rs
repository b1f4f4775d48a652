//! The device path on a real GPU: `cargo test -p quiver-gpu --features cuda --release` on a
//! machine with an NVIDIA GPU and NVRTC (see README). Without a GPU these tests fail; CI,
//! which has none, runs the same checks on the host backend (`host.rs`) and, by name, only
//! `kernels_compile_with_nvrtc` of this file.

#![cfg(feature = "cuda")]

use crate::support;

use std::sync::Arc;

use quiver_gpu::{DeviceOptions, GpuDevice};

fn gpu(min_work: usize) -> Arc<GpuDevice> {
    gpu_within(min_work, None)
}

fn gpu_within(min_work: usize, max_index_bytes: Option<usize>) -> Arc<GpuDevice> {
    Arc::new(
        GpuDevice::cuda(DeviceOptions {
            min_work,
            max_index_bytes,
        })
        .expect("a GPU"),
    )
}

#[test]
fn gpu_random_bgps_give_the_cpu_rows() {
    support::random_bgps_match(gpu(1), 40, 50);
}

#[test]
fn gpu_lubm_queries_give_the_cpu_rows() {
    support::lubm_queries_match(gpu(1));
    support::lubm_queries_match_threshold(gpu(2000));
}

#[test]
fn gpu_queries_give_the_cpu_rows_by_predicate_segments() {
    support::lubm_queries_match_by_segments(gpu_within(1, Some(700 << 10)));
    let device = gpu_within(1, Some(8 << 10));
    support::random_bgps_match_with(device.clone(), 20, 40, 4);
    assert!(device.segment_report().is_some());
}

#[test]
fn gpu_batched_lookups_give_the_cpu_digests() {
    let mut sizes = vec![1, 2, 3, 1000, 1024, 4097];
    sizes.extend((10..=20).map(|p| 1 << p));
    support::kv_batches_match(gpu(1), &sizes);
}

/// NVRTC compiles the kernels for the architectures Quiver targets (no GPU needed: CI
/// installs NVRTC from its Python wheel and runs this).
#[test]
fn kernels_compile_with_nvrtc() {
    for (major, minor) in [(7, 5), (8, 0), (9, 0)] {
        let ptx = quiver_gpu::cuda::compile_only(major, minor)
            .unwrap_or_else(|e| panic!("compute_{major}{minor}: {e}"));
        assert!(ptx > 1000, "{ptx} bytes of PTX");
    }
}
