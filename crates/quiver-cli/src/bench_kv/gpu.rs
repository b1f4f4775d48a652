//! `quiver bench kv --engine gpu`: batched lookups of a store's real keys served by the
//! GPU's copy of the index (Mega-KV's GET path), per batch size, beside the CPU's batched
//! lookups on every core in the same run; every digest checked against the CPU's. Built
//! with the `cuda` feature only.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use quiver_store::Store;
use rayon::prelude::*;

/// One batch size.
struct Point {
    batch: usize,
    gpu_mops: f64,
    cpu_mops: f64,
}

/// Distinct keys drawn; a run repeats them to its length.
const DISTINCT_KEYS: usize = 1 << 22;

/// The CPU's digests and found flags for `keys`, on every thread of the global pool.
fn cpu_lookups(store: &Store, keys: &[u64], chunk: usize) -> (Vec<u64>, Vec<u8>, f64) {
    let mut digests = vec![0u64; keys.len()];
    let mut found = vec![0u8; keys.len()];
    let started = Instant::now();
    keys.par_chunks(chunk)
        .zip(
            digests
                .par_chunks_mut(chunk)
                .zip(found.par_chunks_mut(chunk)),
        )
        .for_each(|(keys, (digests, found))| {
            quiver_gpu::kv::cpu_lookup(store.graph(), keys, digests, found)
        });
    (digests, found, started.elapsed().as_secs_f64())
}

pub fn run(
    store: &Store,
    batches: &[usize],
    streams: usize,
    csv: Option<&Path>,
    plot: Option<&Path>,
) -> Result<()> {
    use quiver_sparql::device::BgpDevice;

    let device = quiver_gpu::GpuDevice::cuda(quiver_gpu::DeviceOptions::default())
        .context("--engine gpu")?;
    let residency = device.load(store)?;
    let graph = device.graph().with_context(|| {
        format!(
            "--engine gpu looks keys up in the whole index on the GPU: {}",
            residency.describe()
        )
    })?;
    let cuda = device.cuda_backend().context("a CUDA device")?;
    let threads = rayon::current_num_threads();
    eprintln!("GPU: {}; {}", device.name(), residency.describe());
    let started = Instant::now();
    let distinct: Vec<u64> = (0..16u64)
        .into_par_iter()
        .flat_map_iter(|part| {
            quiver_gpu::kv::sample_keys(store.graph(), store.terms(), DISTINCT_KEYS / 16, part + 1)
        })
        .collect();
    eprintln!(
        "{} distinct keys drawn in {:.1} s",
        distinct.len(),
        started.elapsed().as_secs_f64()
    );
    let latency_keys = &distinct[..1024];
    let latency_us = quiver_gpu::kv::batch_latency(cuda, &graph, latency_keys, 200)?;
    let mut points = Vec::new();
    for &batch in batches {
        // At least 32 Mi lookups and four batches, so that the pipeline fills.
        let total = (batch * 4).max(1 << 25);
        let keys: Vec<u64> = distinct.iter().copied().cycle().take(total).collect();
        // One warm-up, then the median of three.
        let mut gpu_times = Vec::new();
        let mut last = None;
        for run in 0..4 {
            let result = quiver_gpu::kv::pipelined(cuda, &graph, &keys, batch, streams)?;
            if run > 0 {
                gpu_times.push(result.seconds);
            }
            last = Some(result);
        }
        let result = last.context("a run")?;
        let mut cpu_times = Vec::new();
        let mut cpu = None;
        for _ in 0..3 {
            let (digests, found, seconds) = cpu_lookups(store, &keys, batch.min(1 << 16));
            cpu_times.push(seconds);
            cpu = Some((digests, found));
        }
        let (digests, found) = cpu.context("a run")?;
        if digests != result.digests || found != result.found {
            let first = (0..keys.len())
                .find(|&i| digests[i] != result.digests[i] || found[i] != result.found[i])
                .unwrap_or(0);
            bail!(
                "batch {batch}: the GPU's answer for key {:#x} differs from the CPU's",
                keys[first]
            );
        }
        gpu_times.sort_by(f64::total_cmp);
        cpu_times.sort_by(f64::total_cmp);
        let point = Point {
            batch,
            gpu_mops: total as f64 / gpu_times[gpu_times.len() / 2] / 1e6,
            cpu_mops: total as f64 / cpu_times[cpu_times.len() / 2] / 1e6,
        };
        eprintln!(
            "batch {batch}: GPU {:.0} Mops/s, CPU {:.0} Mops/s",
            point.gpu_mops, point.cpu_mops
        );
        points.push(point);
    }
    let present = distinct
        .iter()
        .filter(|&&k| {
            let key = quiver_gpu::kv::unpack(k);
            !store
                .graph()
                .get(key.vertex, key.predicate, key.direction)
                .is_empty()
        })
        .count();
    let mut table = String::new();
    let _ = writeln!(
        table,
        "GPU lookups of {} keys ({:.0}% present) of a {}-triple store, {} streams; CPU: {} threads; every answer checked\n",
        distinct.len(),
        100.0 * present as f64 / distinct.len() as f64,
        store.triples(),
        streams,
        threads
    );
    let _ = writeln!(
        table,
        "| keys per batch | GPU Mops/s | CPU Mops/s | GPU/CPU |"
    );
    let _ = writeln!(table, "|---:|---:|---:|---:|");
    for p in &points {
        let _ = writeln!(
            table,
            "| {} | {:.1} | {:.1} | {:.1}x |",
            p.batch,
            p.gpu_mops,
            p.cpu_mops,
            p.gpu_mops / p.cpu_mops
        );
    }
    let _ = writeln!(
        table,
        "\nlatency of one 1,024-key batch (copy in, kernel, copy out): {latency_us:.1} µs (median of 200)"
    );
    print!("{table}");
    if let Some(path) = csv {
        let mut text = String::from("batch,gpu_mops,cpu_mops,cpu_threads\n");
        for p in &points {
            let _ = writeln!(
                text,
                "{},{:.3},{:.3},{threads}",
                p.batch, p.gpu_mops, p.cpu_mops
            );
        }
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = plot {
        let series = vec![
            crate::plot::Series {
                name: format!("GPU ({})", device.name().split(" (").next().unwrap_or("")),
                points: points
                    .iter()
                    .map(|p| (p.batch as f64, p.gpu_mops))
                    .collect(),
            },
            crate::plot::Series {
                name: format!("CPU, {threads} threads"),
                points: points
                    .iter()
                    .map(|p| (p.batch as f64, p.cpu_mops))
                    .collect(),
            },
        ];
        crate::plot::throughput_png(path, "Batched lookups of graph-index keys", &series)?;
    }
    Ok(())
}
