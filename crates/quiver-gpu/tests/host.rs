//! The device path on the host backend (the kernels compiled for the CPU): what runs in CI.

use crate::support;

use std::sync::Arc;

use quiver_gpu::{DeviceOptions, GpuDevice};

fn host_device(min_work: usize) -> Arc<GpuDevice> {
    host_device_within(min_work, None)
}

fn host_device_within(min_work: usize, max_index_bytes: Option<usize>) -> Arc<GpuDevice> {
    Arc::new(
        GpuDevice::host(DeviceOptions {
            min_work,
            max_index_bytes,
        })
        .expect("the kernels compile with the system C++ compiler"),
    )
}

#[test]
fn random_bgps_give_the_cpu_rows() {
    support::random_bgps_match(host_device(1), 12, 30);
}

#[test]
fn lubm_queries_give_the_cpu_rows() {
    support::lubm_queries_match(host_device(1));
}

#[test]
fn lubm_queries_give_the_cpu_rows_from_a_threshold() {
    // Only large tables go to the device: the CPU starts, the device takes over.
    support::lubm_queries_match_threshold(host_device(2000));
}

#[test]
fn batched_lookups_give_the_cpu_digests() {
    support::kv_batches_match(host_device(1), &[1, 2, 31, 1000, 65_537]);
}

#[test]
fn random_bgps_give_the_cpu_rows_by_predicate_segments() {
    // A few KiB: the whole index never fits, a query's segments mostly do.
    let device = host_device_within(1, Some(8 << 10));
    support::random_bgps_match_with(device.clone(), 12, 30, 4);
    let (_, _, uploads, evictions) = device.segment_report().expect("segments");
    assert!(
        uploads > 0 && evictions > 0,
        "{uploads} copies, {evictions} evictions"
    );
}

#[test]
fn lubm_queries_give_the_cpu_rows_by_predicate_segments() {
    // LUBM-1's whole index takes about 2.4 MiB.
    support::lubm_queries_match_by_segments(host_device_within(1, Some(700 << 10)));
}
