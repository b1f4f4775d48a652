//! `bench lubm --device gpu`: each query on the CPU threads and on the GPU in the same run,
//! rows compared id for id, execution timed with and without decoding the rows.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use quiver_gpu::GpuDevice;
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
    /// The GPU's execution median at each work threshold of the sweep.
    pub sweep: Vec<(usize, f64)>,
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

/// One side's measurements of a query.
struct Side {
    /// Medians in µs: execution alone, then with every term decoded.
    exec_us: f64,
    full_us: f64,
    rows: usize,
    /// The result's id columns (of the warm-up run).
    ids: Vec<Vec<quiver_model::Id>>,
    /// Whether some step ran on the device.
    on_device: bool,
}

/// Times one side.
fn side(store: &Store, text: &str, runs: u32, options: &ExecOptions) -> Result<Side> {
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
    Ok(Side {
        exec_us: median(&mut exec),
        full_us: median(&mut full),
        rows,
        ids: last,
        on_device,
    })
}

/// Runs every query on the CPU (`threads`) and with `device`, checks the rows are equal;
/// then times the GPU again at each work threshold of `sweep`.
pub(crate) fn compare(
    store: &Store,
    queries: &[(String, String)],
    runs: u32,
    threads: usize,
    device: &Arc<GpuDevice>,
    sweep: &[usize],
) -> Result<Vec<Compared>> {
    let cpu = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let gpu = ExecOptions {
        threads,
        device: Some(device.clone() as Arc<dyn BgpDevice>),
        ..ExecOptions::default()
    };
    let chosen = device.min_work();
    let mut compared = Vec::new();
    for (name, text) in queries {
        let cpu_side =
            side(store, text, runs, &cpu).with_context(|| format!("query {name} on the CPU"))?;
        let gpu_side =
            side(store, text, runs, &gpu).with_context(|| format!("query {name} on the GPU"))?;
        let rows = cpu_side.rows;
        if gpu_side.rows != rows || gpu_side.ids != cpu_side.ids {
            bail!(
                "query {name}: the GPU's rows differ from the CPU's ({} rows against {rows})",
                gpu_side.rows
            );
        }
        let mut swept = Vec::new();
        for &work in sweep {
            device.set_min_work(work);
            let timed = side(store, text, runs, &gpu);
            device.set_min_work(chosen);
            let timed =
                timed.with_context(|| format!("query {name} on the GPU from work {work}"))?;
            if timed.rows != rows || timed.ids != cpu_side.ids {
                bail!("query {name}: the GPU's rows differ from the CPU's at work {work}");
            }
            swept.push((work, timed.exec_us));
        }
        compared.push(Compared {
            name: name.clone(),
            rows,
            cpu_exec_us: cpu_side.exec_us,
            cpu_us: cpu_side.full_us,
            gpu_exec_us: gpu_side.exec_us,
            gpu_us: gpu_side.full_us,
            on_gpu: gpu_side.on_device,
            sweep: swept,
        });
    }
    Ok(compared)
}

/// The CPU/GPU table, with a column per threshold of the sweep.
pub(crate) fn render(compared: &[Compared], threads: usize) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "| query | rows | CPU ({threads} threads) exec ms | GPU exec ms | speedup | CPU exec+decode ms | GPU exec+decode ms | speedup | on GPU |"
    );
    let mut rule = String::from("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for (work, _) in compared.first().map_or(&[][..], |c| &c.sweep[..]) {
        let _ = write!(out, " GPU exec ms, work ≥ {work} |");
        rule.push_str("---:|");
    }
    let _ = writeln!(out, "\n{rule}");
    for c in compared {
        let _ = write!(
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
        for (_, exec_us) in &c.sweep {
            let _ = write!(out, " {:.3} |", exec_us / 1e3);
        }
        let _ = writeln!(out);
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
            "gpu_exec_median_us_by_min_work": c.sweep.iter().map(|(w, t)| json!({"min_work": w, "median_us": t})).collect::<Vec<_>>(),
        }))
        .collect::<Vec<_>>())
}
