//! `bench scale --processes 1,2,4`: the same queries on clusters of growing size on this
//! machine (the store cut into processes × workers partitions, this process being process
//! 0), each cluster's rows checked against the whole store's, with the speedup over the
//! first size and what moved between the workers per run.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use quiver_store::Store;
use serde_json::json;

use crate::bench_lubm::cluster::{measure, ClusterMeasured, Shape};
use crate::bench_lubm::measure_queries;

use super::{csv_field, ScaleArgs};

pub(super) fn run(args: &ScaleArgs, store: &Store, queries: &[(String, String)]) -> Result<()> {
    let threads = crate::threads(None);
    let whole = measure_queries(store, queries, args.runs, threads, None)?;
    let mut counts = args.processes.clone();
    counts.sort_unstable();
    counts.dedup();
    // by_size[i][q]: query q on counts[i] processes.
    let mut by_size: Vec<Vec<ClusterMeasured>> = Vec::new();
    for &processes in &counts {
        let shape = Shape {
            processes,
            workers: args.workers,
        };
        let dir = crate::local_cluster::cache_dir(&args.location, processes * args.workers);
        let measured = measure(store, &dir, queries, args.runs, threads, &shape, &whole)
            .with_context(|| format!("on {processes} process(es)"))?;
        eprintln!("{processes} process(es) done");
        by_size.push(measured);
    }
    let mut table = format!(
        "{} triples; clusters of {:?} process(es) × {} worker(s) on this machine, median of {} runs; whole store on {threads} thread(s) beside\n\n",
        store.triples(),
        counts,
        args.workers,
        args.runs
    );
    let _ = writeln!(
        table,
        "| query | processes | median µs | whole store µs | speedup vs {} | messages | rows exchanged | KiB exchanged |",
        counts[0]
    );
    let _ = writeln!(table, "|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut csv = String::from(
        "query,processes,workers,median_us,whole_store_median_us,speedup,messages,rows_exchanged,bytes_exchanged\n",
    );
    let mut results = Vec::new();
    for (q, reference) in whole.iter().enumerate() {
        let first = by_size[0][q].median_us;
        for (&processes, measured) in counts.iter().zip(&by_size) {
            let m = &measured[q];
            let speedup = first / m.median_us.max(1e-3);
            let e = m.exchanged;
            let _ = writeln!(
                table,
                "| {} | {processes} | {:.1} | {:.1} | {speedup:.2}x | {} | {} | {:.1} |",
                m.name,
                m.median_us,
                reference.median_us,
                e.messages,
                e.rows,
                e.bytes as f64 / 1024.0
            );
            let _ = writeln!(
                csv,
                "{},{processes},{},{:.3},{:.3},{speedup:.4},{},{},{}",
                csv_field(&m.name),
                args.workers,
                m.median_us,
                reference.median_us,
                e.messages,
                e.rows,
                e.bytes
            );
            results.push(json!({
                "query": m.name, "processes": processes, "workers_per_process": args.workers,
                "rows": m.rows, "median_us": m.median_us, "whole_store_median_us": reference.median_us,
                "speedup": speedup, "messages_per_run": e.messages,
                "rows_exchanged_per_run": e.rows, "bytes_exchanged_per_run": e.bytes,
            }));
        }
    }
    crate::output::print_stdout(&table)?;
    if let Some(path) = &args.csv {
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.json {
        let report = json!({
            "store": args.location.display().to_string(),
            "triples": store.triples(),
            "runs": args.runs,
            "whole_store_threads": threads,
            "results": results,
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}
