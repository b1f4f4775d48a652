//! `quiver bench text`: the full-text index on a store's literals: how long it takes to
//! build and how large it is, and word, prefix, `CONTAINS` and case-insensitive `REGEX`
//! queries answered through it beside the same filters scanning the literals.
//!
//! The index is built afresh in a scratch directory (the store's own index, if any, is
//! left alone). Each query runs from its text (prepare, execute, count the rows) the same
//! way with and without the index; the median of `--runs` is reported, with the rows,
//! which must be equal for the filters (the index only narrows what they read).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;
use quiver_text::TextIndex;
use serde_json::json;

use crate::memory::{mib, peak_rss};

#[derive(Args, Debug)]
pub struct TextBenchArgs {
    /// Directory of the store (LUBM: the default queries read `ub:` predicates)
    #[arg(long)]
    pub location: PathBuf,
    /// Timed runs per query (the median is reported), after one warm-up
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Threads building the index (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    /// Write the figures as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
}

const PREFIXES: &str = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
    PREFIX quiver: <https://quiver-rdf.github.io/ns#> ";

/// (name, query through the index, the same question as a scan without it).
const QUERIES: [(&str, &str, &str); 4] = [
    (
        "word",
        r#"SELECT ?x WHERE { ?x ub:researchInterest ?r . ?r quiver:matches "Research12" }"#,
        r#"SELECT ?x WHERE { ?x ub:researchInterest ?r FILTER(CONTAINS(?r, "Research12")) }"#,
    ),
    (
        "prefix",
        r#"SELECT ?x WHERE { ?x ub:name ?n . ?n quiver:matches "FullProfessor1*" }"#,
        r#"SELECT ?x WHERE { ?x ub:name ?n FILTER(STRSTARTS(LCASE(?n), "fullprofessor1")) }"#,
    ),
    (
        "contains",
        r#"SELECT ?x WHERE { ?x ub:emailAddress ?e FILTER(CONTAINS(?e, "Student312@")) }"#,
        r#"SELECT ?x WHERE { ?x ub:emailAddress ?e FILTER(CONTAINS(?e, "Student312@")) }"#,
    ),
    (
        "regex-i",
        r#"SELECT ?x WHERE { ?x ub:name ?n FILTER(REGEX(?n, "graduatestudent47", "i")) }"#,
        r#"SELECT ?x WHERE { ?x ub:name ?n FILTER(REGEX(?n, "graduatestudent47", "i")) }"#,
    ),
];

/// The median seconds of `runs` runs of `query` on `store` (after one warm-up), and its
/// rows.
fn time(store: &Store, query: &str, runs: usize) -> Result<(f64, usize)> {
    let query = format!("{PREFIXES}{query}");
    let mut times = Vec::new();
    let mut rows = 0;
    for run in 0..=runs.max(1) {
        let started = Instant::now();
        let prepared = prepare(store, &query, &PrepareOptions::default())?;
        let QueryResults::Solutions(solutions) =
            prepared.execute(store, &ExecOptions::default())?
        else {
            bail!("not a SELECT query");
        };
        rows = solutions.len();
        if run > 0 {
            times.push(started.elapsed().as_secs_f64());
        }
    }
    times.sort_by(f64::total_cmp);
    Ok((times[times.len() / 2], rows))
}

pub fn run(args: TextBenchArgs) -> Result<()> {
    let store = crate::location::open_snapshot(&args.location)?;
    let plain = store.with_text_index(None);
    let scratch = std::env::temp_dir().join(format!("quiver-bench-text-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)?;
    let rss_before = peak_rss();
    let built = TextIndex::build(Some(&scratch), &plain, crate::threads(args.threads));
    let _ = std::fs::remove_dir_all(&scratch);
    let (index, report) = built?;
    let indexed = plain.with_text_index(Some(std::sync::Arc::new(index) as _));
    println!(
        "text index: {} literals of {} terms in {:.2} s ({:.0} literals/s), {} on disk ({:.1} bytes per literal); peak memory {} (before: {})",
        report.literals,
        store.terms(),
        report.seconds,
        report.literals as f64 / report.seconds.max(1e-9),
        mib(report.bytes),
        report.bytes as f64 / report.literals.max(1) as f64,
        peak_rss().map_or_else(|| "?".into(), mib),
        rss_before.map_or_else(|| "?".into(), mib),
    );
    println!(
        "{:<9} {:>12} {:>8} {:>12} {:>8} {:>9}",
        "query", "index ms", "rows", "scan ms", "rows", "speedup"
    );
    let mut figures = Vec::new();
    for (name, through_index, scan) in QUERIES {
        let (index_s, index_rows) = time(&indexed, through_index, args.runs)?;
        let (scan_s, scan_rows) = time(&plain, scan, args.runs)?;
        // LUBM's research interests and names are one word each: every pair asks the
        // same question of them.
        if index_rows != scan_rows {
            bail!("{name}: {index_rows} rows through the index, {scan_rows} scanning");
        }
        println!(
            "{name:<9} {:>12.3} {index_rows:>8} {:>12.3} {scan_rows:>8} {:>8.1}×",
            index_s * 1e3,
            scan_s * 1e3,
            scan_s / index_s.max(1e-12)
        );
        figures.push(json!({
            "query": name,
            "through_index": through_index,
            "scan": scan,
            "index_ms": index_s * 1e3,
            "index_rows": index_rows,
            "scan_ms": scan_s * 1e3,
            "scan_rows": scan_rows,
        }));
    }
    if let Some(path) = &args.json {
        let out = json!({
            "location": args.location.display().to_string(),
            "terms": store.terms(),
            "triples": store.triples(),
            "literals": report.literals,
            "build_seconds": report.seconds,
            "index_bytes": report.bytes,
            "peak_rss_bytes": peak_rss(),
            "runs": args.runs,
            "queries": figures,
        });
        std::fs::write(path, serde_json::to_string_pretty(&out)?)?;
    }
    Ok(())
}
