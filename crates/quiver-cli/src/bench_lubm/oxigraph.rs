//! Oxigraph's side of `bench lubm --compare-oxigraph`: the same LUBM data and queries run
//! in pyoxigraph by a Python helper built into the binary (`oxigraph.py`), each query
//! timed in-process from its text to the whole result serialized as TSV in memory, the
//! same span [`super::measure_query_to_tsv`] times in Quiver.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

const SCRIPT: &str = include_str!("oxigraph.py");

/// Runs the queries in pyoxigraph on the N-Triples of LUBM-N (written to `cache` once);
/// returns its JSON report: `load_seconds`, `triples`, `version`, and per query name
/// `median_us` and `rows`.
pub(super) fn run(
    universities: u32,
    queries: &[(String, String)],
    runs: u32,
    cache: &Path,
) -> Result<Value> {
    let python = python_with_pyoxigraph()?;
    let data = ntriples_file(universities, cache)?;
    // One file per process: two benchmarks sharing a cache must not read each other's.
    let query_file = cache.join(format!("queries-{}.json", std::process::id()));
    std::fs::write(&query_file, serde_json::to_string(queries)?)?;
    eprintln!("loading LUBM-{universities} into Oxigraph and running the queries …");
    let output = Command::new(&python)
        .args(["-c", SCRIPT])
        .arg(&data)
        .arg(runs.to_string())
        .arg(&query_file)
        .output()
        .context("running pyoxigraph");
    let _ = std::fs::remove_file(&query_file);
    let output = output?;
    if !output.status.success() {
        bail!(
            "pyoxigraph failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    serde_json::from_slice(&output.stdout).context("reading pyoxigraph's report")
}

/// The Python that runs the Oxigraph side of a benchmark (PYTHON, else `python3`),
/// checked to have pyoxigraph.
pub(crate) fn python_with_pyoxigraph() -> Result<String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import pyoxigraph"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        bail!("--compare-oxigraph needs pyoxigraph for {python}: pip install pyoxigraph");
    }
    Ok(python)
}

/// The N-Triples of LUBM-N in `cache` (written the first time).
pub(crate) fn ntriples_file(universities: u32, cache: &Path) -> Result<std::path::PathBuf> {
    std::fs::create_dir_all(cache)?;
    let data = cache.join(format!("lubm-{universities}.nt"));
    if !data.exists() {
        eprintln!("writing LUBM-{universities} as N-Triples for Oxigraph …");
        let tmp = cache.join(".lubm.nt.tmp");
        let mut buffer = quiver_lubm::ntriples::NTriplesBuffer::new();
        let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        for university in 0..universities {
            buffer.bytes.clear();
            quiver_lubm::generate_university(0, university, &mut buffer);
            std::io::Write::write_all(&mut file, &buffer.bytes)?;
        }
        std::io::Write::flush(&mut file)?;
        std::fs::rename(&tmp, &data)?;
    }
    Ok(data)
}
