//! `quiver bench scale`: how the heavy queries speed up with threads.
//!
//! Each query runs at each thread count (median of several warm runs, every row decoded,
//! through the same measuring code as `bench lubm`). Each thread count gets a rayon pool of
//! its own and the queries run inside it, so both the executor (which fans out once a step
//! yields thousands of rows) and the parallel decoding of the rows use exactly that many
//! threads. The report gives the speedup over the smallest thread count, marks counts
//! beyond the physical cores (SMT siblings) or beyond all CPUs, and can be written as CSV
//! and as a speedup-curve PNG. Beside the queries it measures the machine's own ceiling
//! at the same counts (`ceiling.rs`: which CPUs share a core, and what kernels that only
//! compute or only read memory gain), so that a query's curve reads against what the
//! machine allows, not against a topology a virtual machine may misstate.

mod ceiling;
pub mod cpus;
mod processes;

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;

use crate::bench_lubm::{default_queries, load_queries, measure_queries, Measured};

use self::cpus::Cpus;

/// The LUBM queries whose work grows with the data, the ones worth parallelising.
const HEAVY: [&str; 4] = ["q1", "q2", "q3", "q7"];

#[derive(Args, Debug)]
pub struct ScaleArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// A directory of .rq files to run (default: the heavy LUBM queries q1, q2, q3, q7)
    #[arg(long)]
    pub queries: Option<PathBuf>,
    /// Thread counts, comma-separated (default: 1, 2, 4, … up to the logical CPUs)
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Vec<u32>,
    /// Measured runs per query and thread count (after one warm-up run)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Write one line per query and thread count as CSV
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the speedup curves as a PNG
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write the figures as JSON
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// With `--device gpu`, every thread count runs with the GPU taking the heavy steps
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
    /// Scale over clusters of these numbers of processes on this machine instead of over
    /// threads (comma-separated; the store is cut into processes × --workers partitions,
    /// cached under the system temp dir), with what moved between workers per run
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["threads", "plot"],
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub processes: Vec<u32>,
    /// Worker threads per cluster process, one partition each
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
    /// Skip measuring the machine's ceiling (which CPUs share a core, and the speedup of a
    /// compute kernel, a random-read kernel and a kernel writing fresh pages at the same
    /// thread counts; a few seconds, a 512 MiB table and 16 MiB per thread)
    #[arg(long)]
    pub no_ceiling: bool,
}

/// One query at one thread count.
struct Point {
    threads: usize,
    measured: Measured,
    speedup: f64,
}

/// The default thread counts: powers of two below the logical CPUs, then the CPUs.
fn default_threads(logical: usize) -> Vec<usize> {
    let mut counts: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n < logical)
        .collect();
    counts.push(logical.max(1));
    counts
}

pub fn run(args: ScaleArgs) -> Result<()> {
    let mut cpus = Cpus::probe();
    let mut threads: Vec<usize> = if args.threads.is_empty() {
        default_threads(cpus.logical)
    } else {
        args.threads.iter().map(|&t| t as usize).collect()
    };
    threads.sort_unstable();
    threads.dedup();
    let queries = match &args.queries {
        Some(dir) => load_queries(Some(dir))?,
        None => default_queries()
            .into_iter()
            .filter(|(name, _)| HEAVY.contains(&name.as_str()))
            .collect(),
    };
    let store = crate::location::open_snapshot(&args.location)?;
    if !args.processes.is_empty() {
        return processes::run(&args, &store, &queries);
    }
    let ceilings = if args.no_ceiling {
        Vec::new()
    } else {
        eprintln!("measuring the machine: which CPUs share a core, then two kernels");
        let allowed = cpus::allowed().unwrap_or_else(|| (0..cpus.logical).collect());
        cpus.measured = ceiling::shared_cores(&allowed);
        ceiling::curves(&threads)
    };
    eprintln!(
        "{} triples; {}; thread counts {threads:?}, median of {} runs",
        store.triples(),
        cpus.describe(),
        args.runs
    );

    let gpu = crate::device::as_bgp_device(&args.device.open(&store)?);
    // by_threads[i][q]: query q at threads[i].
    let mut by_threads: Vec<Vec<Measured>> = Vec::with_capacity(threads.len());
    for &count in &threads {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(count)
            .build()
            .with_context(|| format!("starting a pool of {count} threads"))?;
        let measured =
            pool.install(|| measure_queries(&store, &queries, args.runs, count, gpu.clone()))?;
        eprintln!("{count} thread(s) done");
        by_threads.push(measured);
    }
    // Transpose to per query, per thread count; every count must give the same rows.
    let mut columns: Vec<_> = by_threads.into_iter().map(Vec::into_iter).collect();
    let mut points: Vec<Vec<Point>> = Vec::new();
    for _ in 0..queries.len() {
        let mut row: Vec<Point> = Vec::new();
        for (column, &count) in columns.iter_mut().zip(&threads) {
            let measured = column.next().context("one measurement per query")?;
            let speedup = match row.first() {
                Some(first) if first.measured.rows != measured.rows => bail!(
                    "{}: {} rows at {count} thread(s), {} at {}",
                    measured.name,
                    measured.rows,
                    first.measured.rows,
                    first.threads
                ),
                Some(first) => first.measured.median_us / measured.median_us,
                None => 1.0,
            };
            row.push(Point {
                threads: count,
                measured,
                speedup,
            });
        }
        points.push(row);
    }

    crate::output::print_stdout(&format!(
        "CPUs: {}\n{}{}",
        cpus.describe(),
        render(&points, &cpus, threads[0]),
        render_ceilings(&ceilings, &cpus, threads[0])
    ))?;
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&points, &ceilings, &cpus))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.json {
        let report = json!({
            "store": args.location.display().to_string(),
            "triples": store.triples(),
            "logical_cpus": cpus.logical,
            "physical_cores": cpus.physical,
            "measured_cores": cpus.measured,
            "smt": cpus.smt(),
            "runs": args.runs,
            "baseline_threads": threads[0],
            "results": points.iter().flatten().map(|p| json!({
                "query": p.measured.name, "threads": p.threads, "rows": p.measured.rows,
                "median_us": p.measured.median_us, "min_us": p.measured.min_us,
                "max_us": p.measured.max_us, "speedup": p.speedup, "note": cpus.mark(p.threads),
            })).collect::<Vec<_>>(),
            "ceiling": ceilings.iter().flat_map(|c| c.points.iter().map(|&(threads, wall_us, speedup)| json!({
                "kernel": c.name, "threads": threads, "median_us": wall_us, "speedup": speedup,
                "note": cpus.mark(threads),
            }))).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.plot {
        let series: Vec<crate::plot::Series> = points
            .iter()
            .map(|row| crate::plot::Series {
                name: row[0].measured.name.clone(),
                points: row.iter().map(|p| (p.threads as f64, p.speedup)).collect(),
            })
            .chain(ceilings.iter().map(|c| crate::plot::Series {
                name: format!("machine: {}", c.name),
                points: c.points.iter().map(|&(t, _, s)| (t as f64, s)).collect(),
            }))
            .collect();
        let cores = cpus
            .cores()
            .map_or(String::new(), |c| format!(", {c} core(s)"));
        let title = format!(
            "Speedup over {} thread(s): {} triples, {} CPU(s){cores}",
            threads[0],
            store.triples(),
            cpus.logical
        );
        crate::plot::speedup_png(path, &title, &series, cpus.cores())?;
    }
    Ok(())
}

fn render(points: &[Vec<Point>], cpus: &Cpus, baseline: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| query | threads | median µs | min µs | max µs | rows | speedup vs {baseline} |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for p in points.iter().flatten() {
        let mark = cpus.mark(p.threads);
        let threads = if mark.is_empty() {
            p.threads.to_string()
        } else {
            format!("{} ({mark})", p.threads)
        };
        let m = &p.measured;
        let _ = writeln!(
            out,
            "| {} | {threads} | {:.1} | {:.1} | {:.1} | {} | {:.2}x |",
            m.name, m.median_us, m.min_us, m.max_us, m.rows, p.speedup
        );
    }
    if let Some(cores) = cpus.cores() {
        if points.iter().flatten().any(|p| p.threads > cores) {
            let _ = writeln!(
                out,
                "\n(SMT): more threads than the {cores} core(s); (oversubscribed): more than the {} logical CPU(s)",
                cpus.logical
            );
        }
    }
    out
}

/// The machine's ceiling: each kernel's speedup at the queries' thread counts.
fn render_ceilings(ceilings: &[ceiling::Curve], cpus: &Cpus, baseline: usize) -> String {
    if ceilings.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "\nThe machine's ceiling: kernels that only compute (alu), only read memory at random (random reads) or only write fresh pages (fresh pages: the kernel gives and zeroes them), the same work on every thread\n\n| kernel | threads | median µs | speedup vs {baseline} |\n|---|---:|---:|---:|\n"
    );
    for c in ceilings {
        for &(threads, wall_us, speedup) in &c.points {
            let mark = cpus.mark(threads);
            let threads = if mark.is_empty() {
                threads.to_string()
            } else {
                format!("{threads} ({mark})")
            };
            let _ = writeln!(
                out,
                "| {} | {threads} | {wall_us:.1} | {speedup:.2}x |",
                c.name
            );
        }
    }
    out
}

fn csv(points: &[Vec<Point>], ceilings: &[ceiling::Curve], cpus: &Cpus) -> String {
    let mut out =
        String::from("query,threads,median_us,min_us,max_us,rows,speedup,beyond_physical_cores\n");
    for p in points.iter().flatten() {
        let m = &p.measured;
        let beyond = cpus
            .cores()
            .map_or(String::new(), |c| (p.threads > c).to_string());
        let _ = writeln!(
            out,
            "{},{},{:.3},{:.3},{:.3},{},{:.4},{beyond}",
            csv_field(&m.name),
            p.threads,
            m.median_us,
            m.min_us,
            m.max_us,
            m.rows,
            p.speedup
        );
    }
    // The machine's kernels: no rows, one time each (min and max left empty).
    for c in ceilings {
        for &(threads, wall_us, speedup) in &c.points {
            let beyond = cpus
                .cores()
                .map_or(String::new(), |n| (threads > n).to_string());
            let _ = writeln!(
                out,
                "machine: {},{threads},{wall_us:.3},,,,{speedup:.4},{beyond}",
                c.name
            );
        }
    }
    out
}

/// Quotes a CSV field when it needs it.
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_thread_counts_double_up_to_the_cpus() {
        assert_eq!(default_threads(1), [1]);
        assert_eq!(default_threads(2), [1, 2]);
        assert_eq!(default_threads(6), [1, 2, 4, 6]);
        assert_eq!(default_threads(8), [1, 2, 4, 8]);
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("q1"), "q1");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
