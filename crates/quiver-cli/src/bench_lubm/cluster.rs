//! `bench lubm --processes N`: every query also on a cluster of N processes on this
//! machine (the store cut into N × W partitions, cached beside it), this process being
//! process 0. Timed like the whole store's (execute and decode every row, in-process, no
//! HTTP), rows checked equal, with the messages, rows and bytes exchanged between the
//! workers per run.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use quiver_sparql::partitions::{BgpPartitions, Exchanged};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions};
use quiver_store::Store;
use serde_json::{json, Value};

use super::{materialise, median, Measured};
use crate::local_cluster::{partitioned, LocalCluster};

/// One query on the cluster.
pub(crate) struct ClusterMeasured {
    pub(crate) name: String,
    pub(crate) rows: usize,
    pub(crate) median_us: f64,
    /// Exchanged per run.
    pub(crate) exchanged: Exchanged,
}

/// The shape of the cluster.
pub(crate) struct Shape {
    pub(crate) processes: u32,
    pub(crate) workers: u32,
}

/// Runs `queries` on a cluster of `shape` over `store` (cut into partitions in `dir`, or
/// reusing them there), checking each query's rows against `whole`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn measure(
    store: &Store,
    dir: &Path,
    queries: &[(String, String)],
    runs: u32,
    threads: usize,
    shape: &Shape,
    whole: &[Measured],
) -> Result<Vec<ClusterMeasured>> {
    let dir = partitioned(store, dir, shape.processes * shape.workers)?;
    let cluster = LocalCluster::start(&dir, shape.processes as usize, shape.workers as usize)
        .context("cannot start the cluster")?;
    let executor: Arc<dyn BgpPartitions> = cluster.partitions.clone();
    let options = ExecOptions {
        threads,
        partitions: Some(Arc::clone(&executor)),
        ..ExecOptions::default()
    };
    let prepare_options = PrepareOptions {
        partitions: Some(Arc::clone(&executor)),
        ..PrepareOptions::default()
    };
    let coordinator = &cluster.coordinator;
    let mut measured = Vec::new();
    for ((name, text), reference) in queries.iter().zip(whole) {
        let prepared = prepare(coordinator, text, &prepare_options)
            .with_context(|| format!("query {name} on the cluster"))?;
        let run = || -> Result<usize> {
            Ok(materialise(
                &prepared
                    .execute(coordinator, &options)
                    .with_context(|| format!("query {name} on the cluster"))?,
            ))
        };
        // Every run's rows are checked, not only the first's: a cluster that loses rows
        // now and then (messages read out of order) must not pass for one that does not.
        let checked = |rows: usize, run: u32| -> Result<()> {
            if rows != reference.rows {
                bail!(
                    "query {name}: {rows} rows on the cluster in run {run}, {} on the whole store",
                    reference.rows
                );
            }
            Ok(())
        };
        let rows = run()?;
        checked(rows, 0)?;
        let before = executor.exchanged();
        let mut times = Vec::new();
        for at in 1..=runs {
            let started = Instant::now();
            let rows = run()?;
            times.push(started.elapsed().as_secs_f64() * 1e6);
            checked(rows, at)?;
        }
        let moved = executor.exchanged() - before;
        let per_run = |n: u64| n / u64::from(runs);
        measured.push(ClusterMeasured {
            name: name.clone(),
            rows,
            median_us: median(&mut times),
            exchanged: Exchanged {
                messages: per_run(moved.messages),
                rows: per_run(moved.rows),
                bytes: per_run(moved.bytes),
            },
        });
    }
    // The cluster's processes stop once its last handle is gone: every one before them.
    drop((options, prepare_options, executor));
    drop(cluster);
    Ok(measured)
}

/// The cluster's table beside the whole store's medians.
pub(crate) fn render(shape: &Shape, whole: &[Measured], cluster: &[ClusterMeasured]) -> String {
    let mut out = format!(
        "On a cluster of {} process(es) × {} worker(s) on this machine, rows checked equal to the whole store's; exchanged between workers per run:\n\n",
        shape.processes, shape.workers
    );
    let _ = writeln!(
        out,
        "| query | rows | whole store (ms) | cluster (ms) | cluster / whole | messages | rows exchanged | KiB exchanged |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (w, c) in whole.iter().zip(cluster) {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {:.1}× | {} | {} | {:.1} |",
            c.name,
            c.rows,
            w.median_us / 1e3,
            c.median_us / 1e3,
            c.median_us / w.median_us.max(1e-3),
            c.exchanged.messages,
            c.exchanged.rows,
            c.exchanged.bytes as f64 / 1024.0
        );
    }
    out
}

pub(crate) fn to_json(shape: &Shape, cluster: &[ClusterMeasured]) -> Value {
    json!({
        "processes": shape.processes,
        "workers_per_process": shape.workers,
        "queries": cluster.iter().map(|c| json!({
            "query": c.name,
            "rows": c.rows,
            "median_us": c.median_us,
            "messages_per_run": c.exchanged.messages,
            "rows_exchanged_per_run": c.exchanged.rows,
            "bytes_exchanged_per_run": c.exchanged.bytes,
        })).collect::<Vec<_>>(),
    })
}
