//! Oxigraph's side of `bench log --compare-oxigraph`: the same data and queries run in
//! pyoxigraph by a Python helper built into the binary (`oxigraph.py`), each query in a
//! forked process killed once a run passes the time limit, timed over the same span as
//! Quiver's (query text to the whole result serialized as TSV in memory).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use super::Outcome;

const SCRIPT: &str = include_str!("oxigraph.py");

/// Runs `queries` in pyoxigraph over `data`; one outcome per query, in order.
pub(super) fn run(
    data: &[PathBuf],
    queries: &[(String, String)],
    runs: u32,
    timeout: Duration,
) -> Result<Vec<Outcome>> {
    let python = crate::bench_lubm::oxigraph::python_with_pyoxigraph()?;
    let data: Vec<String> = data
        .iter()
        .map(|p| {
            std::fs::canonicalize(p)
                .with_context(|| format!("cannot read {}", p.display()))
                .map(|p| p.display().to_string())
        })
        .collect::<Result<_>>()?;
    let job = json!({
        "data": data,
        "queries": queries.iter().map(|(_, text)| text).collect::<Vec<_>>(),
        "runs": runs,
        "timeout": timeout.as_secs_f64(),
    });
    let job_file =
        std::env::temp_dir().join(format!("quiver-bench-log-{}.json", std::process::id()));
    std::fs::write(&job_file, serde_json::to_string(&job)?)?;
    let output = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(&job_file)
        .output()
        .context("running pyoxigraph");
    let _ = std::fs::remove_file(&job_file);
    let output = output?;
    if !output.status.success() {
        bail!(
            "pyoxigraph failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let report: Vec<Value> =
        serde_json::from_slice(&output.stdout).context("reading pyoxigraph's report")?;
    if report.len() != queries.len() {
        bail!(
            "pyoxigraph reported {} queries of {}",
            report.len(),
            queries.len()
        );
    }
    Ok(report
        .into_iter()
        .map(|entry| Outcome {
            status: entry["status"].as_str().unwrap_or("error").to_owned(),
            rows: entry["rows"].as_u64().unwrap_or(0) as usize,
            micros: entry["micros"].as_f64().unwrap_or(f64::NAN),
            error: entry["error"].as_str().map(str::to_owned),
        })
        .collect())
}
