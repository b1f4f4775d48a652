//! `quiver bench serialize`: nanoseconds per row to write one query's solutions in each
//! tabular format, in process into memory, by the streaming writers and by the reference
//! path they replaced (rows decoded into terms handed to `sparesults`, or the CSV writer),
//! with whether both gave the same bytes; first, the time to visit the rows as terms alone
//! (`Solutions::for_each_row`, what the reference path and the Python package's columns
//! decode through), on one thread. The streaming writers are timed twice: writing to a
//! `Vec` as to any writer (`stream`: the chunks of a large result handed over one after the
//! other) and into memory (`memory`: `solutions_to_vec`, the chunks copied into place on
//! every thread).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_sparql::results::{
    solutions_to_vec, write_solutions, write_solutions_reference, Syntax,
};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use serde_json::json;

#[derive(Args, Debug)]
pub struct SerializeArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// The query whose solutions are written (default: LUBM q2)
    #[arg(long, default_value = "queries/lubm-basic/q2.rq")]
    pub query_file: PathBuf,
    /// Timed runs per format and writer (the median is reported)
    #[arg(long, default_value_t = 7)]
    pub runs: usize,
    /// Formats to time (tsv, csv, json, xml; default all)
    #[arg(long, value_delimiter = ',')]
    pub formats: Vec<String>,
    /// Write the figures as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(args: SerializeArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.query_file)
        .with_context(|| format!("cannot read {}", args.query_file.display()))?;
    let store = crate::location::open_snapshot(&args.location)?;
    let prepared = prepare(&store, &text, &PrepareOptions::default())?;
    let results = prepared.execute(&store, &ExecOptions::default())?;
    let QueryResults::Solutions(solutions) = &results else {
        bail!("{}: not a SELECT query", args.query_file.display());
    };
    let rows = solutions.len().max(1) as f64;
    let mut figures = Vec::new();
    println!(
        "{} rows × {} columns",
        solutions.len(),
        solutions.variables.len()
    );
    let mut times = Vec::new();
    for _ in 0..args.runs.max(1) {
        let started = Instant::now();
        let mut text_bytes = 0usize;
        solutions.for_each_row(|row| {
            text_bytes += row
                .iter()
                .flatten()
                .map(crate::bench_lubm::term_length)
                .sum::<usize>()
        });
        times.push(started.elapsed().as_secs_f64() * 1e9 / rows);
        std::hint::black_box(text_bytes);
    }
    times.sort_by(f64::total_cmp);
    let terms_ns = times[times.len() / 2];
    println!("rows as terms (for_each_row, one thread): {terms_ns:.1} ns/row");
    println!(
        "{:<6} {:>14} {:>14} {:>14} {:>8} {:>12} same",
        "format", "reference ns/row", "stream ns/row", "memory ns/row", "speedup", "bytes"
    );
    for (name, syntax) in [
        ("tsv", Syntax::Tsv),
        ("csv", Syntax::Csv),
        ("json", Syntax::Json),
        ("xml", Syntax::Xml),
    ] {
        if !args.formats.is_empty() && !args.formats.iter().any(|f| f == name) {
            continue;
        }
        // The three writers take turns run by run, so that the machine's drift and what
        // each run leaves to the allocator fall on all of them alike.
        let paths = [Path::Reference, Path::Writer, Path::Memory];
        let mut times: [Vec<f64>; 3] = Default::default();
        let mut outputs: [Vec<u8>; 3] = Default::default();
        for _ in 0..args.runs.max(1) {
            for (at, path) in paths.iter().enumerate() {
                let buffer = Vec::with_capacity(outputs[at].len());
                let started = Instant::now();
                outputs[at] = match path {
                    Path::Reference => write_solutions_reference(solutions, syntax, buffer)?,
                    Path::Writer => write_solutions(solutions, syntax, buffer)?,
                    Path::Memory => solutions_to_vec(solutions, syntax)?,
                };
                times[at].push(started.elapsed().as_secs_f64() * 1e9 / rows);
            }
        }
        let [reference_ns, stream_ns, memory_ns] = times.map(|mut runs| {
            runs.sort_by(f64::total_cmp);
            runs[runs.len() / 2]
        });
        let [reference, streamed, in_memory] = outputs;
        let same = reference == streamed && reference == in_memory;
        println!(
            "{name:<6} {reference_ns:>16.1} {stream_ns:>14.1} {memory_ns:>14.1} {:>7.1}× {:>12} {same}",
            reference_ns / stream_ns,
            streamed.len()
        );
        figures.push(json!({
            "format": name, "reference_ns_per_row": reference_ns, "stream_ns_per_row": stream_ns,
            "memory_ns_per_row": memory_ns, "bytes": streamed.len(), "identical": same,
        }));
    }
    if let Some(path) = &args.json {
        let report = json!({
            "query": args.query_file.display().to_string(),
            "rows": solutions.len(),
            "columns": solutions.variables.len(),
            "runs": args.runs,
            "terms_ns_per_row": terms_ns,
            "formats": figures,
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The writer a run is timed with.
#[derive(Clone, Copy)]
enum Path {
    Reference,
    Writer,
    Memory,
}
