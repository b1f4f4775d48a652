//! Oxigraph's side of `bench update --compare-oxigraph`: a Python helper built into the
//! binary (`oxigraph.py`) bulk-loads LUBM-N into pyoxigraph's persistent store and does the
//! same work as Quiver's side, timed the same way.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

const SCRIPT: &str = include_str!("oxigraph.py");

pub(super) fn run(universities: u32, cache: &Path, seconds: f64) -> Result<Value> {
    let python = crate::bench_lubm::oxigraph::python_with_pyoxigraph()?;
    let data = crate::bench_lubm::ntriples_file(universities, cache)?;
    let mut queries: serde_json::Map<String, Value> = crate::bench_lubm::default_queries()
        .into_iter()
        .filter(|(name, _)| ["q1", "q4", "q5", "q7"].contains(&name.as_str()))
        .map(|(name, text)| (name, Value::String(text)))
        .collect();
    queries.insert("delete_insert".into(), super::DELETE_INSERT.into());
    let query_file = cache.join("update-queries.json");
    std::fs::write(&query_file, serde_json::to_string(&queries)?)?;
    eprintln!("loading LUBM-{universities} into Oxigraph's persistent store and updating it …");
    let output = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(&data)
        .arg(seconds.to_string())
        .arg(cache.join("oxigraph-update"))
        .arg(&query_file)
        .output()
        .context("running pyoxigraph")?;
    if !output.status.success() {
        bail!(
            "pyoxigraph failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("reading pyoxigraph's report")
}
