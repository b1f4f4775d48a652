//! `quiver bench kv`: the graph index as a key/value store under Wiscer-style point-query
//! workloads, beside chained hashing (plain and VIP) and `hashbrown`, in one run.
//!
//! Workloads are Wiscer's `key=value` files or the seven built-ins (`--all`). Keys are
//! synthetic 8-byte keys with 8-byte values, or with `--location DIR` / `--lubm N` the real
//! (vertex, predicate, direction) keys of a store with their neighbour lists. Operations
//! are generated before timing; each engine is loaded, then timed per batch of a million
//! operations (CSV with `--csv`, a throughput-over-time chart with `--plot`, where a
//! popularity shift shows as a dip and a recovery). The table gives Mops/s per workload and
//! engine with gain columns, like Wiscer's `parse_results.py`. The graph engine (with and
//! without its hot table) and chained hashing also run with batched fetches (`--batch`,
//! prefetch pipelines).

mod chart;
#[cfg(feature = "cuda")]
mod gpu;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use quiver_kv::report::{self, WorkloadResult};
use quiver_kv::runner::{self, RunOptions};
use quiver_kv::workload::{self, Workload, BUILTIN};
use quiver_kv::{generate, Dataset, EngineKind, RealKeys, Synthetic};
use quiver_lubm::LubmConfig;
use quiver_store::Store;

/// `--engine gpu`'s batch sizes by default: 1 Ki to 16 Mi keys, by fours.
const DEFAULT_GPU_BATCHES: [usize; 8] = [
    1 << 10,
    1 << 12,
    1 << 14,
    1 << 16,
    1 << 18,
    1 << 20,
    1 << 22,
    1 << 24,
];

#[derive(Args, Debug)]
pub struct KvArgs {
    /// A workload file (Wiscer's key=value format) or a built-in workload (repeatable):
    /// static-uniform, static-low-skew, static-medium-skew, churn-medium, churn-high,
    /// steady-state, read-mostly
    #[arg(long = "workload", value_name = "FILE|NAME")]
    pub workloads: Vec<String>,
    /// Run all seven built-in workloads (and any --workload) and print one table
    #[arg(long)]
    pub all: bool,
    /// Seed of the keys and the operations
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Engines: quiver, quiver-vip, chained, chained-vip, hashbrown, all, or a comma-separated
    /// list [default: the workload's storageEngine, else all]; or `gpu`: batched lookups of
    /// a store's keys (--lubm or --location) on the GPU per batch size (--batch-sizes),
    /// beside the CPU's on every core
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Fetches per batched call in the extra batched runs of quiver, quiver-vip and chained
    /// (0: none; Mega-KV batches thousands)
    #[arg(long, default_value_t = 256)]
    pub batch: usize,
    /// Write per-batch throughput (every million operations) as CSV
    #[arg(long, value_name = "OUT")]
    pub csv: Option<PathBuf>,
    /// Draw throughput over time as PNG, one panel per workload
    #[arg(long, value_name = "OUT.png")]
    pub plot: Option<PathBuf>,
    /// Use the real keys of the store at DIR (values: their neighbour lists)
    #[arg(long, value_name = "DIR", conflicts_with = "lubm")]
    pub location: Option<PathBuf>,
    /// Use the real keys of LUBM-N, generated and loaded in memory
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub lubm: Option<u32>,
    /// Override every workload's operationCount
    #[arg(long, value_name = "N")]
    pub operations: Option<u64>,
    /// Override initialSize (with real keys: the keys loaded before the run; default all
    /// but those the inserts need)
    #[arg(long, value_name = "N")]
    pub keys: Option<u64>,
    /// With --engine gpu: keys per batch, comma-separated (default 1Ki to 16Mi by fours)
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=(1 << 28)))]
    pub batch_sizes: Vec<u64>,
    /// With --engine gpu: CUDA streams the batches are spread over
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub streams: u32,
}

fn parse_engines(value: &str) -> Result<Vec<EngineKind>> {
    EngineKind::parse_list(value).with_context(|| {
        format!("unknown engine in --engine '{value}' (quiver, quiver-vip, chained, chained-vip, hashbrown, all)")
    })
}

/// One workload's results with the points where popularity shifted.
struct Outcome {
    result: WorkloadResult,
    shifts: Vec<u64>,
}

pub fn run(args: KvArgs) -> Result<()> {
    if args
        .engine
        .as_deref()
        .is_some_and(|e| e.trim().eq_ignore_ascii_case("gpu"))
    {
        let Some(store) = real_store(&args)? else {
            bail!("--engine gpu looks up a store's keys: give --lubm N or --location DIR");
        };
        let batches: Vec<usize> = if args.batch_sizes.is_empty() {
            DEFAULT_GPU_BATCHES.to_vec()
        } else {
            args.batch_sizes.iter().map(|&b| b as usize).collect()
        };
        return run_gpu(&store, &batches, &args);
    }
    let mut names: Vec<String> = Vec::new();
    if args.all {
        names.extend(BUILTIN.iter().map(|n| n.to_string()));
    }
    names.extend(args.workloads.iter().cloned());
    if names.is_empty() {
        bail!("name a workload (--workload FILE|NAME) or run them all (--all)");
    }
    let engines = args.engine.as_deref().map(parse_engines).transpose()?;
    let workloads = names
        .iter()
        .map(|name| workload::load(name).with_context(|| format!("workload {name}")))
        .collect::<Result<Vec<_>>>()?;

    let store = real_store(&args)?;
    let mut outcomes = Vec::new();
    if let Some(store) = store {
        let started = Instant::now();
        let dataset = RealKeys::new(store, args.seed)?;
        eprintln!(
            "real keys: {} keys with {} neighbours in all ({:.1} s)",
            dataset.len(),
            dataset.neighbours(),
            started.elapsed().as_secs_f64()
        );
        for workload in &workloads {
            let workload = overridden(workload, &args);
            let initial = args
                .keys
                .unwrap_or_else(|| real_initial(&workload, dataset.len()));
            outcomes.push(run_workload(&dataset, &workload, initial, &engines, &args)?);
        }
    } else {
        for workload in &workloads {
            let workload = overridden(workload, &args);
            let dataset = Synthetic::new(workload.key_pattern, args.seed);
            outcomes.push(run_workload(
                &dataset,
                &workload,
                workload.initial_size,
                &engines,
                &args,
            )?);
        }
    }

    let results: Vec<WorkloadResult> = outcomes.iter().map(|o| o.result.clone()).collect();
    print!("{}", report::table(&results));
    std::io::stdout().flush()?;
    if let Some(path) = &args.csv {
        write_csv(path, &results)?;
    }
    if let Some(path) = &args.plot {
        plot(path, &outcomes)?;
        eprintln!("plot written to {}", path.display());
    }
    Ok(())
}

/// `--engine gpu`.
#[cfg(feature = "cuda")]
fn run_gpu(store: &Store, batches: &[usize], args: &KvArgs) -> Result<()> {
    gpu::run(
        store,
        batches,
        args.streams as usize,
        args.csv.as_deref(),
        args.plot.as_deref(),
    )?;
    if let Some(path) = &args.plot {
        eprintln!("plot written to {}", path.display());
    }
    Ok(())
}

/// `--engine gpu` in a build without GPU support.
#[cfg(not(feature = "cuda"))]
fn run_gpu(store: &Store, batches: &[usize], args: &KvArgs) -> Result<()> {
    let _ = (store, batches, args);
    bail!("--engine gpu: this build of Quiver has no GPU support (build it with `--features cuda`)")
}

fn overridden(workload: &Workload, args: &KvArgs) -> Workload {
    let mut workload = workload.clone();
    if let Some(operations) = args.operations {
        workload.operation_count = operations;
    }
    if let Some(keys) = args.keys {
        workload.initial_size = keys;
    }
    workload
}

/// With real keys, all keys are loaded but those the inserts may need (plus a margin).
fn real_initial(workload: &Workload, keys: usize) -> u64 {
    let inserts = workload.operation_count as f64 * workload.insert;
    let reserve = if inserts > 0.0 {
        (inserts * 1.05) as u64 + 1000
    } else {
        0
    };
    (keys as u64).saturating_sub(reserve).max(1)
}

fn real_store(args: &KvArgs) -> Result<Option<Arc<Store>>> {
    if let Some(location) = &args.location {
        return crate::location::open_snapshot(location).map(Some);
    }
    if let Some(universities) = args.lubm {
        let started = Instant::now();
        let threads = crate::threads(None);
        let (store, _) = quiver_loader::load_lubm(
            LubmConfig::standard(universities),
            threads,
            None,
            &quiver_loader::NoProgress,
        )?;
        eprintln!(
            "LUBM-{universities}: {} triples loaded in {:.1} s",
            store.triples(),
            started.elapsed().as_secs_f64()
        );
        return Ok(Some(Arc::new(store)));
    }
    Ok(None)
}

fn run_workload<D: Dataset>(
    dataset: &D,
    workload: &Workload,
    initial: u64,
    engines: &Option<Vec<EngineKind>>,
    args: &KvArgs,
) -> Result<Outcome> {
    let started = Instant::now();
    let generated = generate(workload, initial, args.seed, dataset.slots(), &|slot| {
        dataset.key(slot)
    })
    .with_context(|| format!("workload {}", workload.name))?;
    eprintln!(
        "{}: {} keys, {} operations generated in {:.1} s",
        workload.name,
        initial,
        generated.ops.len(),
        started.elapsed().as_secs_f64()
    );
    let engines = engines
        .clone()
        .or_else(|| workload.engines.clone())
        .unwrap_or_else(|| EngineKind::ALL.to_vec());
    let mut plan: Vec<(EngineKind, usize)> = engines.iter().map(|&e| (e, 0)).collect();
    if args.batch > 1 {
        for kind in [
            EngineKind::Quiver,
            EngineKind::QuiverVip,
            EngineKind::Chained,
        ] {
            if engines.contains(&kind) {
                plan.push((kind, args.batch));
            }
        }
    }
    let mut runs = Vec::new();
    for (kind, batch) in plan {
        let label = runner::label(kind, batch);
        let bar = progress_bar(
            generated.ops.len() as u64,
            &format!("{} {label}", workload.name),
        );
        let options = RunOptions {
            batch,
            resident_bytes: Some(crate::memory::resident_bytes),
            ..RunOptions::default()
        };
        let stats = runner::run(kind, dataset, &generated, options, &mut |done| {
            bar.inc(done)
        });
        bar.finish_and_clear();
        let growth = stats.memory_growth.map_or_else(String::new, |bytes| {
            format!(", memory {:+.1} MiB", bytes as f64 / (1 << 20) as f64)
        });
        eprintln!(
            "  {label:<14} {:>7.1} Mops/s  (load {:.2} s, run {:.2} s, {} keys after{growth})",
            stats.mops(),
            stats.load_seconds,
            stats.seconds(),
            stats.final_len
        );
        if let Some(notes) = &stats.notes {
            eprintln!("  {:<14} {notes}", "");
        }
        if stats.misses > 0 {
            eprintln!(
                "  warning: {label} missed {} keys it should hold",
                stats.misses
            );
        }
        runs.push(stats);
    }
    if runs.windows(2).any(|w| w[0].checksum != w[1].checksum) {
        eprintln!(
            "  warning: the engines' checksums differ: they did not all return the same values"
        );
    }
    let result = WorkloadResult {
        workload: workload.name.clone(),
        runs,
    };
    if let Some(path) = &workload.output_file {
        write_csv(path, std::slice::from_ref(&result))?;
    }
    Ok(Outcome {
        result,
        shifts: generated.shifts,
    })
}

fn progress_bar(length: u64, message: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {msg} {bar:40} {human_pos}/{human_len} ops (ETA {eta})",
    ) {
        bar.set_style(style);
    }
    bar.set_message(message.to_owned());
    bar
}

fn write_csv(path: &Path, results: &[WorkloadResult]) -> Result<()> {
    let mut out = Vec::new();
    report::write_csv(&mut out, results)?;
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}

/// Throughput over operations, one panel per workload, one line per engine run.
fn plot(path: &Path, outcomes: &[Outcome]) -> Result<()> {
    let panels: Vec<chart::Panel> = outcomes
        .iter()
        .map(|outcome| chart::Panel {
            title: outcome.result.workload.clone(),
            shifts: outcome.shifts.iter().map(|&s| s as f64 / 1e6).collect(),
            series: outcome
                .result
                .runs
                .iter()
                .map(|run| {
                    let mut done = 0u64;
                    let points = run
                        .points
                        .iter()
                        .map(|p| {
                            done += p.ops;
                            (done as f64 / 1e6, p.mops())
                        })
                        .collect();
                    (run.label(), points)
                })
                .collect(),
        })
        .collect();
    chart::draw(path, &panels)
}
