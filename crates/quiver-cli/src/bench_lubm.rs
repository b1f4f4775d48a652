//! `quiver bench lubm`: the LUBM query table (Wukong's q1–q12 and three SPARQL 1.1 queries,
//! or with `--set analytics` the analytical set of `queries/lubm-analytics/`), optionally
//! beside Oxigraph.
//!
//! Generates LUBM-N straight into a store (or reopens a cached snapshot of it), runs every
//! query a few warm times with full materialisation of the rows, and prints planning time,
//! median/min/max latency and row counts; then, end to end, the median time from the query
//! text to the whole result serialized as TSV in memory (parse, plan, execute, serialize).
//! `--compare-oxigraph` loads the same data into Oxigraph (pyoxigraph) in the same run,
//! times it over the same span, adds its median and the ratio, and fails when a query's
//! row count differs between the two engines.

pub(crate) mod cluster;
mod device;
pub(crate) mod oxigraph;

pub(crate) use oxigraph::ntriples_file;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_loader::{load_lubm, NoProgress};
use quiver_lubm::LubmConfig;
use quiver_sparql::{
    prepare, results_to_vec, ExecOptions, PrepareOptions, QueryResults, ResultsFormat,
};
use quiver_store::Store;
use serde_json::{json, Value};

use crate::memory::{mib, peak_rss};

/// The LUBM query set of the Wukong papers, then three of Quiver's own that exercise
/// SPARQL 1.1 beyond basic graph patterns (OPTIONAL, GROUP BY/COUNT, a `+` property path),
/// built into the binary.
const DEFAULT_QUERIES: [(&str, &str); 15] = [
    ("q1", include_str!("../../../queries/lubm-basic/q1.rq")),
    ("q2", include_str!("../../../queries/lubm-basic/q2.rq")),
    ("q3", include_str!("../../../queries/lubm-basic/q3.rq")),
    ("q4", include_str!("../../../queries/lubm-basic/q4.rq")),
    ("q5", include_str!("../../../queries/lubm-basic/q5.rq")),
    ("q6", include_str!("../../../queries/lubm-basic/q6.rq")),
    ("q7", include_str!("../../../queries/lubm-basic/q7.rq")),
    ("q8", include_str!("../../../queries/lubm-basic/q8.rq")),
    ("q9", include_str!("../../../queries/lubm-basic/q9.rq")),
    ("q10", include_str!("../../../queries/lubm-basic/q10.rq")),
    ("q11", include_str!("../../../queries/lubm-basic/q11.rq")),
    ("q12", include_str!("../../../queries/lubm-basic/q12.rq")),
    (
        "opt1",
        include_str!("../../../queries/lubm-sparql11/opt1.rq"),
    ),
    (
        "agg1",
        include_str!("../../../queries/lubm-sparql11/agg1.rq"),
    ),
    (
        "path1",
        include_str!("../../../queries/lubm-sparql11/path1.rq"),
    ),
];

/// Analytical SPARQL 1.1 over LUBM (`queries/lubm-analytics/`): counts, DISTINCT over
/// predicates and classes, GROUP BY with ORDER BY/LIMIT, COUNT(DISTINCT), MIN and MAX per
/// group, ORDER BY over strings, string filters, OPTIONAL with `!BOUND`, subqueries; built
/// into the binary.
const ANALYTICS_QUERIES: [(&str, &str); 18] = [
    (
        "a01-count-all",
        include_str!("../../../queries/lubm-analytics/a01-count-all.rq"),
    ),
    (
        "a02-distinct-predicates",
        include_str!("../../../queries/lubm-analytics/a02-distinct-predicates.rq"),
    ),
    (
        "a03-distinct-classes",
        include_str!("../../../queries/lubm-analytics/a03-distinct-classes.rq"),
    ),
    (
        "a04-count-predicate",
        include_str!("../../../queries/lubm-analytics/a04-count-predicate.rq"),
    ),
    (
        "a05-count-distinct",
        include_str!("../../../queries/lubm-analytics/a05-count-distinct.rq"),
    ),
    (
        "a06-group-top",
        include_str!("../../../queries/lubm-analytics/a06-group-top.rq"),
    ),
    (
        "a07-order-strings",
        include_str!("../../../queries/lubm-analytics/a07-order-strings.rq"),
    ),
    (
        "a08-strstarts",
        include_str!("../../../queries/lubm-analytics/a08-strstarts.rq"),
    ),
    (
        "a09-optional-unbound",
        include_str!("../../../queries/lubm-analytics/a09-optional-unbound.rq"),
    ),
    (
        "a10-group-two-keys",
        include_str!("../../../queries/lubm-analytics/a10-group-two-keys.rq"),
    ),
    (
        "a11-regex-prefix",
        include_str!("../../../queries/lubm-analytics/a11-regex-prefix.rq"),
    ),
    (
        "a12-subquery-top",
        include_str!("../../../queries/lubm-analytics/a12-subquery-top.rq"),
    ),
    (
        "a13-equals",
        include_str!("../../../queries/lubm-analytics/a13-equals.rq"),
    ),
    (
        "a14-group-min",
        include_str!("../../../queries/lubm-analytics/a14-group-min.rq"),
    ),
    (
        "a15-classes-by-size",
        include_str!("../../../queries/lubm-analytics/a15-classes-by-size.rq"),
    ),
    (
        "a16-count-distinct-by-group",
        include_str!("../../../queries/lubm-analytics/a16-count-distinct-by-group.rq"),
    ),
    (
        "a17-group-min-max",
        include_str!("../../../queries/lubm-analytics/a17-group-min-max.rq"),
    ),
    (
        "a18-order-strings-desc",
        include_str!("../../../queries/lubm-analytics/a18-order-strings-desc.rq"),
    ),
];

/// The built-in query sets of `bench lubm`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QuerySet {
    /// Wukong's q1–q12 and three SPARQL 1.1 queries (`queries/lubm-basic/`,
    /// `queries/lubm-sparql11/`)
    #[default]
    Lubm,
    /// Analytical queries (`queries/lubm-analytics/`)
    Analytics,
}

impl QuerySet {
    /// The set's queries as (name, text).
    pub(crate) fn queries(self) -> Vec<(String, String)> {
        let set: &[(&str, &str)] = match self {
            QuerySet::Lubm => &DEFAULT_QUERIES,
            QuerySet::Analytics => &ANALYTICS_QUERIES,
        };
        set.iter()
            .map(|(n, q)| (n.to_string(), q.to_string()))
            .collect()
    }
}

#[derive(Args, Debug)]
pub struct LubmBenchArgs {
    /// LUBM-N: number of universities
    #[arg(short, long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub universities: u32,
    /// Measured runs per query (after one warm-up run)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Worker threads for heavy queries (default: all cores)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Also run the queries in Oxigraph (pyoxigraph) on the same data and report the ratio
    ///
    /// Both engines are timed over the same span: from the query text to the whole result
    /// serialized as TSV in memory (parse, plan, execute, serialize; Oxigraph in-process in
    /// Python, single-threaded; Quiver with --threads), median of --runs after a warm-up.
    /// Exits 1 when a query's row count differs between the two. Needs `pip install
    /// pyoxigraph` for the `python3` on PATH (or the interpreter named by PYTHON).
    #[arg(long)]
    pub compare_oxigraph: bool,
    /// The built-in query set to run
    #[arg(long, value_enum, default_value_t = QuerySet::Lubm)]
    pub set: QuerySet,
    /// A directory of .rq files to run instead of a built-in set
    #[arg(long, conflicts_with = "set")]
    pub queries: Option<PathBuf>,
    /// Where cached stores live (default: a directory under the system temp dir)
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Write the results as JSON
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the results as a Markdown table
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// With `--device gpu` (or auto, finding a GPU), every query also runs with the GPU in
    /// the same run, its rows compared with the CPU's
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
    /// With the GPU: time every query again with each of these work thresholds
    /// (comma-separated; see --gpu-min-work), to choose one
    #[arg(long, value_delimiter = ',', value_name = "ENTRIES")]
    pub gpu_sweep: Vec<usize>,
    /// Also run every query on a cluster of this many processes on this machine (the
    /// store cut into processes × --workers partitions, cached beside it; this process is
    /// process 0): latency beside the whole store's, rows checked equal, and the messages,
    /// rows and bytes exchanged between workers per run
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub processes: Option<u32>,
    /// Worker threads per cluster process, one partition each
    #[arg(long, default_value_t = 1, requires = "processes",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
}

pub(crate) struct Measured {
    pub(crate) name: String,
    pub(crate) rows: usize,
    pub(crate) plan_us: f64,
    /// Median time to get the prepared query from a cache of prepared queries (a hit).
    pub(crate) plan_cached_us: f64,
    /// Median of the execution alone (the rows' ids, no term decoded).
    pub(crate) exec_us: f64,
    /// Median of the execution with every row's terms decoded.
    pub(crate) median_us: f64,
    pub(crate) min_us: f64,
    pub(crate) max_us: f64,
    /// Median from query text to the whole result as TSV in memory.
    pub(crate) query_tsv_us: Option<f64>,
    /// The kernel's share of this process's processor time over those runs: mostly the
    /// first touches of fresh pages (the result's tables and its text), which scale with
    /// cores less than the rest.
    pub(crate) query_tsv_kernel_share: Option<f64>,
    /// Oxigraph's median over the same span, and its row count.
    pub(crate) oxigraph_median_us: Option<f64>,
    pub(crate) oxigraph_rows: Option<u64>,
}

pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

pub(crate) fn load_queries(dir: Option<&Path>) -> Result<Vec<(String, String)>> {
    let Some(dir) = dir else {
        return Ok(QuerySet::Lubm.queries());
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rq"))
        .collect();
    // q2 before q10: natural order by the number in the name.
    files.sort_by_key(|p| {
        let stem = p
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let digits: String = stem.chars().filter(char::is_ascii_digit).collect();
        (digits.parse::<u64>().unwrap_or(u64::MAX), stem)
    });
    if files.is_empty() {
        bail!("{}: no .rq files", dir.display());
    }
    files
        .into_iter()
        .map(|p| {
            let name = p
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            Ok((name, text))
        })
        .collect()
}

/// Opens the cached store of LUBM-N, or generates, loads and caches it.
pub(crate) fn cached_store(
    universities: u32,
    cache: &Path,
    threads: usize,
) -> Result<(Store, Value)> {
    let location = cache.join(format!("lubm-{universities}"));
    let started = Instant::now();
    if location.join("manifest.json").exists() {
        if let Ok((store, _)) = Store::open(&location) {
            let seconds = started.elapsed().as_secs_f64();
            eprintln!(
                "reopened the cached LUBM-{universities} store in {seconds:.2} s ({})",
                location.display()
            );
            let info = store.info().clone();
            return Ok((
                store,
                json!({"source": "snapshot", "reopen_seconds": seconds, "load_seconds": info.seconds}),
            ));
        }
    }
    eprintln!("generating and loading LUBM-{universities} …");
    let (store, report) = load_lubm(
        LubmConfig::standard(universities),
        threads,
        None,
        &NoProgress,
    )?;
    store
        .save(&location)
        .with_context(|| format!("caching the store in {}", location.display()))?;
    Ok((
        store,
        json!({"source": "generator", "load_seconds": report.seconds}),
    ))
}

pub fn run(args: LubmBenchArgs) -> Result<()> {
    let threads = crate::threads(args.threads);
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("quiver-bench-cache"));
    let queries = match &args.queries {
        Some(dir) => load_queries(Some(dir))?,
        None => args.set.queries(),
    };
    let (store, mut load) = cached_store(args.universities, &cache, threads)?;
    let triples = store.triples();
    let bytes = store.data_bytes() as u64;
    load["triples_per_second"] =
        json!(triples as f64 / load["load_seconds"].as_f64().unwrap_or(f64::NAN));

    let gpu = args.device.open(&store)?;
    let mut measured = measure_queries(&store, &queries, args.runs, threads, None)?;
    for (m, (name, text)) in measured.iter_mut().zip(&queries) {
        let (median_us, rows, kernel_share) =
            measure_query_to_tsv(&store, text, args.runs, threads)
                .with_context(|| format!("query {name}"))?;
        if rows != m.rows {
            bail!("query {name}: {rows} rows serialized, {} executed", m.rows);
        }
        m.query_tsv_us = Some(median_us);
        m.query_tsv_kernel_share = kernel_share;
    }

    let shape = args.processes.map(|processes| cluster::Shape {
        processes,
        workers: args.workers,
    });
    let on_cluster = match &shape {
        Some(shape) => Some(cluster::measure(
            &store,
            &cache.join(format!(
                "lubm-{}-partitions-{}",
                args.universities,
                shape.processes * shape.workers
            )),
            &queries,
            args.runs,
            threads,
            shape,
            &measured,
        )?),
        None => None,
    };

    let mut oxigraph = Value::Null;
    if args.compare_oxigraph {
        let report = oxigraph::run(args.universities, &queries, args.runs, &cache)?;
        for m in &mut measured {
            m.oxigraph_median_us = report["queries"][&m.name]["median_us"].as_f64();
            m.oxigraph_rows = report["queries"][&m.name]["rows"].as_u64();
        }
        oxigraph = report;
    }

    let header = format!(
        "LUBM-{}: {} triples, {} terms; load {:.2} s ({}); {} in memory ({:.1} bytes/triple); peak RSS {}; {} thread(s), median of {} runs",
        args.universities,
        triples,
        store.terms(),
        load["load_seconds"].as_f64().unwrap_or(f64::NAN),
        load["source"].as_str().unwrap_or("?"),
        mib(bytes),
        bytes as f64 / triples.max(1) as f64,
        peak_rss().map_or_else(|| "?".into(), mib),
        threads,
        args.runs
    );
    let mut table = render_table(&measured);
    let mut compared = Value::Null;
    if let Some(gpu) = &gpu {
        let results = device::compare(&store, &queries, args.runs, threads, gpu, &args.gpu_sweep)?;
        let _ = write!(
            table,
            "\nCPU ({threads} threads) and GPU ({}), rows checked equal, medians of {} runs:\n\n{}",
            quiver_sparql::device::BgpDevice::name(gpu.as_ref()),
            args.runs,
            device::render(&results, threads)
        );
        compared = device::to_json(&results);
        if let Some((bytes, segments, uploads, evictions)) = gpu.segment_report() {
            let _ = writeln!(
                table,
                "\nGPU index by predicate segments: {segments} resident ({:.1} MiB) after {uploads} copies and {evictions} evictions",
                bytes as f64 / (1 << 20) as f64
            );
        }
    }
    let mut cluster_json = Value::Null;
    if let (Some(shape), Some(results)) = (&shape, &on_cluster) {
        let _ = write!(table, "\n{}", cluster::render(shape, &measured, results));
        cluster_json = cluster::to_json(shape, results);
    }
    println!("{header}\n\n{table}");
    if let Some(path) = &args.markdown {
        std::fs::write(path, format!("{header}\n\n{table}"))?;
    }
    if let Some(path) = &args.json {
        let report = json!({
            "dataset": format!("LUBM-{}", args.universities),
            "triples": triples,
            "terms": store.terms(),
            "threads": threads,
            "runs": args.runs,
            "bytes_in_memory": bytes,
            "bytes_per_triple": bytes as f64 / triples.max(1) as f64,
            "peak_rss_bytes": peak_rss(),
            "load": load,
            "queries": measured.iter().map(|m| json!({
                "query": m.name, "rows": m.rows, "median_us": m.median_us, "min_us": m.min_us,
                "max_us": m.max_us, "exec_median_us": m.exec_us, "plan_us": m.plan_us, "plan_cached_us": m.plan_cached_us, "query_tsv_median_us": m.query_tsv_us, "query_tsv_kernel_share": m.query_tsv_kernel_share,
                "oxigraph_median_us": m.oxigraph_median_us, "oxigraph_rows": m.oxigraph_rows,
            })).collect::<Vec<_>>(),
            "oxigraph": oxigraph,
            "gpu": compared,
            "cluster": cluster_json,
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    if args.compare_oxigraph {
        let mismatches = row_count_mismatches(&measured);
        if !mismatches.is_empty() {
            bail!(
                "row counts differ between Quiver and Oxigraph: {}",
                mismatches.join("; ")
            );
        }
    }
    Ok(())
}

/// The queries whose row count Oxigraph does not confirm, as `NAME: Quiver N rows,
/// Oxigraph M` (or `no answer from Oxigraph`).
pub(crate) fn row_count_mismatches(measured: &[Measured]) -> Vec<String> {
    measured
        .iter()
        .filter_map(|m| match m.oxigraph_rows {
            Some(rows) if rows == m.rows as u64 => None,
            Some(rows) => Some(format!(
                "{}: Quiver {} rows, Oxigraph {rows}",
                m.name, m.rows
            )),
            None => Some(format!("{}: no answer from Oxigraph", m.name)),
        })
        .collect()
}

/// Runs `text` `runs` warm times (after one warm-up) from the query text to the whole
/// result serialized as TSV into memory, the span Oxigraph is timed over; returns the
/// median in µs, the rows and the kernel's share of the process's processor time over
/// the warm runs (where the system tells).
fn measure_query_to_tsv(
    store: &Store,
    text: &str,
    runs: u32,
    threads: usize,
) -> Result<(f64, usize, Option<f64>)> {
    let options = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let mut times = Vec::new();
    let mut rows = 0;
    let mut warm_from = None;
    for run in 0..=runs {
        if run == 1 {
            warm_from = quiver_model::phases::process_times();
        }
        let started = Instant::now();
        let prepared = prepare(store, text, &PrepareOptions::default())?;
        let results = prepared.execute(store, &options)?;
        let tsv = results_to_vec(&results, ResultsFormat::Tsv)?;
        std::hint::black_box(&tsv);
        if run > 0 {
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
        rows = match &results {
            QueryResults::Solutions(solutions) => solutions.len(),
            QueryResults::Boolean(b) => usize::from(*b),
            QueryResults::Graph(triples) => triples.len(),
        };
    }
    let kernel_share = warm_from
        .zip(quiver_model::phases::process_times())
        .and_then(|(from, to)| to.since(from).kernel_share());
    Ok((median(&mut times), rows, kernel_share))
}

/// Runs each query `runs` warm times (after one warm-up) and measures it.
pub(crate) fn measure_queries(
    store: &Store,
    queries: &[(String, String)],
    runs: u32,
    threads: usize,
    device: Option<std::sync::Arc<dyn quiver_sparql::device::BgpDevice>>,
) -> Result<Vec<Measured>> {
    let options = ExecOptions {
        threads,
        device,
        ..ExecOptions::default()
    };
    let mut measured = Vec::new();
    for (name, text) in queries {
        let mut plan_times = Vec::new();
        let mut prepared = None;
        for _ in 0..runs {
            let started = Instant::now();
            prepared = Some(
                prepare(store, text, &PrepareOptions::default())
                    .with_context(|| format!("query {name}"))?,
            );
            plan_times.push(started.elapsed().as_secs_f64() * 1e6);
        }
        let prepared = prepared.context("at least one run")?;
        let cache = quiver_sparql::QueryCache::new(4);
        cache.prepare(store, text, &PrepareOptions::default())?;
        let mut cached_times = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            let (query, hit) = cache.prepare(store, text, &PrepareOptions::default())?;
            cached_times.push(started.elapsed().as_secs_f64() * 1e6);
            std::hint::black_box((query, hit));
        }
        let mut times = Vec::new();
        let mut exec_times = Vec::new();
        let mut rows = 0;
        for run in 0..=runs {
            let started = Instant::now();
            let results = prepared
                .execute(store, &options)
                .with_context(|| format!("query {name}"))?;
            let executed = started.elapsed().as_secs_f64() * 1e6;
            rows = materialise(&results);
            if run > 0 {
                exec_times.push(executed);
                times.push(started.elapsed().as_secs_f64() * 1e6);
            }
        }
        let (min, max) = times
            .iter()
            .fold((f64::MAX, 0f64), |(a, b), &t| (a.min(t), b.max(t)));
        measured.push(Measured {
            name: name.clone(),
            rows,
            plan_us: median(&mut plan_times),
            plan_cached_us: median(&mut cached_times),
            exec_us: median(&mut exec_times),
            median_us: median(&mut times),
            min_us: min,
            max_us: max,
            query_tsv_us: None,
            query_tsv_kernel_share: None,
            oxigraph_median_us: None,
            oxigraph_rows: None,
        });
    }
    Ok(measured)
}

/// The built-in LUBM queries as (name, text).
pub(crate) fn default_queries() -> Vec<(String, String)> {
    QuerySet::Lubm.queries()
}

/// The length of a term's main text (IRI, label, lexical form): what a consumer of the rows
/// reads, summed so that decoding cannot be optimised away.
pub(crate) fn term_length(term: &oxrdf::TermRef<'_>) -> usize {
    match term {
        oxrdf::TermRef::NamedNode(n) => n.as_str().len(),
        oxrdf::TermRef::BlankNode(b) => b.as_str().len(),
        oxrdf::TermRef::Literal(l) => l.value().len(),
        oxrdf::TermRef::Triple(t) => t.to_string().len(),
    }
}

/// Decodes every term of every row (full materialisation); returns the row count.
pub(crate) fn materialise(results: &QueryResults<'_>) -> usize {
    match results {
        QueryResults::Solutions(solutions) => {
            // Every term's text is produced (borrowed, as a serializer consumes it), in the
            // chunks and on the threads the results writers would use.
            let term_bytes = |row: &[Option<oxrdf::TermRef<'_>>]| -> usize {
                row.iter().flatten().map(term_length).sum()
            };
            let bytes: usize = quiver_sparql::results::map_row_chunks(solutions, |range| {
                let mut bytes = 0;
                solutions.for_each_row_in(range, |row| bytes += term_bytes(row));
                bytes
            })
            .into_iter()
            .sum();
            std::hint::black_box(bytes);
            solutions.len()
        }
        QueryResults::Boolean(b) => usize::from(*b),
        QueryResults::Graph(triples) => triples.len(),
    }
}

/// The table of the measurements: the columns every run has, then the end-to-end time
/// when measured, then Oxigraph's when compared.
pub(crate) fn render_table(measured: &[Measured]) -> String {
    let with_tsv = measured.iter().any(|m| m.query_tsv_us.is_some());
    let with_oxigraph = measured.iter().any(|m| m.oxigraph_median_us.is_some());
    let mut out = String::new();
    let _ = write!(
        out,
        "| query | plan µs | exec µs | median µs | min µs | max µs | rows |"
    );
    let mut rule = String::from("|---|---:|---:|---:|---:|---:|---:|");
    if with_tsv {
        let _ = write!(out, " query→TSV µs |");
        rule.push_str("---:|");
    }
    if with_oxigraph {
        let _ = write!(out, " Oxigraph query→TSV µs | speedup |");
        rule.push_str("---:|---:|");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "{rule}");
    let cell = |value: Option<f64>| value.map_or_else(|| "–".to_owned(), |v| format!("{v:.1}"));
    for m in measured {
        let _ = write!(
            out,
            "| {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {} |",
            m.name, m.plan_us, m.exec_us, m.median_us, m.min_us, m.max_us, m.rows
        );
        if with_tsv {
            let _ = write!(out, " {} |", cell(m.query_tsv_us));
        }
        if with_oxigraph {
            let speedup = m.oxigraph_median_us.zip(m.query_tsv_us).map(|(o, q)| o / q);
            let speedup = speedup.map_or_else(|| "–".to_owned(), |r| format!("{r:.1}x"));
            let _ = write!(out, " {} | {speedup} |", cell(m.oxigraph_median_us));
        }
        let _ = writeln!(out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(name: &str, rows: usize, oxigraph_rows: Option<u64>) -> Measured {
        Measured {
            name: name.into(),
            rows,
            plan_us: 1.0,
            plan_cached_us: 0.5,
            exec_us: 1.75,
            median_us: 2.0,
            min_us: 1.5,
            max_us: 3.0,
            query_tsv_us: Some(4.0),
            query_tsv_kernel_share: Some(0.25),
            oxigraph_median_us: oxigraph_rows.map(|_| 8.0),
            oxigraph_rows,
        }
    }

    #[test]
    fn the_analytics_set_is_every_query_of_its_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries/lubm-analytics");
        let on_disk = load_queries(Some(&dir)).unwrap();
        let mut built_in = QuerySet::Analytics.queries();
        built_in.sort();
        let mut on_disk_sorted = on_disk.clone();
        on_disk_sorted.sort();
        assert_eq!(built_in, on_disk_sorted);
    }

    #[test]
    fn every_differing_or_missing_row_count_is_a_mismatch_named_by_query() {
        let all = [
            measured("q1", 4, Some(4)),
            measured("q2", 0, Some(0)),
            measured("q3", 6, Some(7)),
            measured("q4", 10, None),
        ];
        assert_eq!(
            row_count_mismatches(&all),
            [
                "q3: Quiver 6 rows, Oxigraph 7",
                "q4: no answer from Oxigraph"
            ]
        );
        assert!(row_count_mismatches(&all[..2]).is_empty());
    }

    #[test]
    fn the_table_shows_the_end_to_end_times_and_their_ratio() {
        let table = render_table(&[measured("q1", 4, Some(4))]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(
            lines[0],
            "| query | plan µs | exec µs | median µs | min µs | max µs | rows | query→TSV µs | \
             Oxigraph query→TSV µs | speedup |"
        );
        assert_eq!(
            lines[2],
            "| q1 | 1.0 | 1.8 | 2.0 | 1.5 | 3.0 | 4 | 4.0 | 8.0 | 2.0x |"
        );
    }
}
