//! `bench lubm --device gpu`: each query on the CPU threads and on the GPU in the same run,
//! rows compared id for id, execution timed with and without decoding the rows.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use quiver_sparql::device::BgpDevice;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;
use serde_json::{json, Value};

use super::{materialise, median};

/// One query on both sides.
pub(crate) struct Compared {
    pub name: String,
    pub rows: usize,
    /// Medians in µs: execution alone, then execution and decoding every term.
    pub cpu_exec_us: f64,
    pub cpu_us: f64,
    pub gpu_exec_us: f64,
    pub gpu_us: f64,
    /// Whether some step ran on the GPU.
    pub on_gpu: bool,
}

/// The id columns of a result (for comparing two runs of one query on one store).
fn ids(results: &QueryResults<'_>) -> Vec<Vec<quiver_model::Id>> {
    match results {
        QueryResults::Solutions(s) => (0..s.variables.len())
            .map(|c| s.column_ids(c).to_vec())
            .collect(),
        QueryResults::Boolean(b) => vec![vec![quiver_model::Id::from(*b)]],
        QueryResults::Graph(triples) => vec![vec![triples.len() as quiver_model::Id]],
    }
}

/// Times one side: (exec median, exec + decode median, rows, ids of the last run, used
/// the device).
fn side(
    store: &Store,
    text: &str,
    runs: u32,
    options: &ExecOptions,
) -> Result<(f64, f64, usize, Vec<Vec<quiver_model::Id>>, bool)> {
    let prepared = prepare(store, text, &PrepareOptions::default())?;
    let mut exec = Vec::new();
    let mut full = Vec::new();
    let mut rows = 0;
    let mut last = Vec::new();
    let mut on_device = false;
    for run in 0..=runs {
        let started = Instant::now();
        let (results, profile) = prepared.execute_profiled(store, options)?;
        let executed = started.elapsed().as_secs_f64() * 1e6;
        rows = materialise(&results);
        let decoded = started.elapsed().as_secs_f64() * 1e6;
        if run > 0 {
            exec.push(executed);
            full.push(decoded);
        } else {
            last = ids(&results);
            on_device = profile
                .bgps
                .iter()
                .flat_map(|b| &b.steps)
                .any(|s| s.transfer.is_some());
        }
    }
    Ok((median(&mut exec), median(&mut full), rows, last, on_device))
}

/// Runs every query on the CPU (`threads`) and with `device`, checks the rows are equal.
pub(crate) fn compare(
    store: &Store,
    queries: &[(String, String)],
    runs: u32,
    threads: usize,
    device: Arc<dyn BgpDevice>,
) -> Result<Vec<Compared>> {
    let cpu = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let gpu = ExecOptions {
        threads,
        device: Some(device),
        ..ExecOptions::default()
    };
    let mut compared = Vec::new();
    for (name, text) in queries {
        let (cpu_exec_us, cpu_us, rows, cpu_ids, _) =
            side(store, text, runs, &cpu).with_context(|| format!("query {name} on the CPU"))?;
        let (gpu_exec_us, gpu_us, gpu_rows, gpu_ids, on_gpu) =
            side(store, text, runs, &gpu).with_context(|| format!("query {name} on the GPU"))?;
        if gpu_rows != rows || gpu_ids != cpu_ids {
            bail!("query {name}: the GPU's rows differ from the CPU's ({gpu_rows} rows against {rows})");
        }
        compared.push(Compared {
            name: name.clone(),
            rows,
            cpu_exec_us,
            cpu_us,
            gpu_exec_us,
            gpu_us,
            on_gpu,
        });
    }
    Ok(compared)
}

/// The CPU/GPU table.
pub(crate) fn render(compared: &[Compared], threads: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| query | rows | CPU ({threads} threads) exec ms | GPU exec ms | speedup | CPU exec+decode ms | GPU exec+decode ms | speedup | on GPU |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for c in compared {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {:.1}x | {:.3} | {:.3} | {:.1}x | {} |",
            c.name,
            c.rows,
            c.cpu_exec_us / 1e3,
            c.gpu_exec_us / 1e3,
            c.cpu_exec_us / c.gpu_exec_us,
            c.cpu_us / 1e3,
            c.gpu_us / 1e3,
            c.cpu_us / c.gpu_us,
            if c.on_gpu { "yes" } else { "no" }
        );
    }
    out
}

pub(crate) fn to_json(compared: &[Compared]) -> Value {
    json!(compared
        .iter()
        .map(|c| json!({
            "query": c.name, "rows": c.rows, "on_gpu": c.on_gpu,
            "cpu_exec_median_us": c.cpu_exec_us, "gpu_exec_median_us": c.gpu_exec_us,
            "cpu_exec_decode_median_us": c.cpu_us, "gpu_exec_decode_median_us": c.gpu_us,
        }))
        .collect::<Vec<_>>())
}
