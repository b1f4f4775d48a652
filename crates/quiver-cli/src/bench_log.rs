//! `quiver bench log`: a file of queries people wrote (a query log, a benchmark's query
//! set) run one by one, each with a time and memory limit, optionally beside Oxigraph on
//! the same data in the same run.
//!
//! Each query is timed from its text to its whole result serialized as TSV in memory
//! (parse, plan, execute, serialize), the median of `--runs` after a warm-up; a query that
//! fails is not repeated. The report gives the count per status (ok, timeout, memory,
//! syntax, unsupported, error), the distribution of the answered queries' times (median,
//! p90, p99, max), the errors grouped by message, the queries whose row counts differ
//! between the engines, and those more than 10× slower than Oxigraph; `--csv` writes one
//! line per query, `--json` the summary and every query. With `--endpoint` the queries go
//! to a SPARQL endpoint over HTTP instead (`endpoint.rs`), Quiver's or another engine's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_sparql::results::{results_to_vec, ResultsFormat};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::Store;
use serde_json::{json, Value};

pub(crate) mod endpoint;
mod oxigraph;

#[derive(Args, Debug)]
pub struct LogBenchArgs {
    /// The queries: a file of one query per line, a JSON list (of query strings, or of
    /// objects with `query` and optionally `name`), or a directory of `.rq` files
    pub queries: PathBuf,
    /// The store to run them on
    #[arg(long, required_unless_present_any = ["data", "endpoint"])]
    pub location: Option<PathBuf>,
    /// A SPARQL endpoint to send them to instead (`http://host:port/query`), over one
    /// keep-alive connection, each timed from the request to the last byte of its TSV
    #[arg(long, conflicts_with = "location")]
    pub endpoint: Option<String>,
    /// RDF files to load into memory and run them on (and into Oxigraph with
    /// --compare-oxigraph)
    #[arg(long, num_args = 1..)]
    pub data: Vec<PathBuf>,
    /// Time limit of each query
    #[arg(long, default_value = "10s", value_parser = crate::limits::parse_seconds)]
    pub timeout: Duration,
    /// Memory limit of each query's operators
    #[arg(long, default_value = "2G", value_parser = crate::limits::parse_size)]
    pub max_memory: usize,
    /// Measured runs per query (after one warm-up run); a failed query runs once
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Worker threads for heavy queries (default: all cores)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Also run every query in Oxigraph (pyoxigraph, in-process, each query in a forked
    /// process killed at --timeout) on the --data files, over the same span
    #[arg(long, requires = "data")]
    pub compare_oxigraph: bool,
    /// Write one line per query as CSV
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the summary and every query as JSON
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// What became of one query in one engine.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub status: String,
    pub rows: usize,
    /// Median microseconds (answered queries), or the time to the failure.
    pub micros: f64,
    pub error: Option<String>,
}

pub fn run(args: LogBenchArgs) -> Result<()> {
    let queries = read_queries(&args.queries)?;
    let progress = progress_bar(queries.len() as u64, "queries");
    let mut ours = Vec::with_capacity(queries.len());
    if let Some(url) = &args.endpoint {
        let mut endpoint = endpoint::Endpoint::new(url)?;
        eprintln!("sending {} queries to {url} …", queries.len());
        for (_, text) in &queries {
            ours.push(measure(args.runs, || endpoint.request(text, args.timeout)));
            progress.inc(1);
        }
    } else {
        let store = open_store(&args)?;
        let threads = args
            .threads
            .map_or_else(rayon::current_num_threads, |t| t as usize);
        let options = ExecOptions {
            threads,
            timeout: Some(args.timeout),
            max_memory: Some(args.max_memory),
            ..ExecOptions::default()
        };
        eprintln!(
            "running {} queries on {} triples …",
            queries.len(),
            store.triples()
        );
        for (_, text) in &queries {
            ours.push(measure(args.runs, || {
                run_once(&store, text, &options).map_err(|e| (status_of(&e), e.to_string()))
            }));
            progress.inc(1);
        }
    }
    progress.finish_and_clear();
    let theirs = if args.compare_oxigraph {
        eprintln!("running them in Oxigraph …");
        Some(oxigraph::run(
            &args.data,
            &queries,
            args.runs,
            args.timeout,
        )?)
    } else {
        None
    };
    let report = Report::new(&queries, &ours, theirs.as_deref());
    print!("{}", report.text());
    if let Some(path) = &args.csv {
        std::fs::write(path, report.csv())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report.json())? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn open_store(args: &LogBenchArgs) -> Result<std::sync::Arc<Store>> {
    if let Some(location) = &args.location {
        return crate::location::open_snapshot(location);
    }
    load_in_memory(&args.data)
}

/// A store of `paths` (files or directories) in memory, parsed on all cores.
pub(crate) fn load_in_memory(paths: &[PathBuf]) -> Result<std::sync::Arc<Store>> {
    let options = quiver_loader::LoadOptions {
        format: None,
        lenient: false,
        threads: rayon::current_num_threads(),
    };
    let (store, _) = quiver_loader::load_files(paths, &options, None, &quiver_loader::NoProgress)
        .context("loading --data")?;
    Ok(std::sync::Arc::new(store))
}

/// A bar of `unit` done on stderr when it is a terminal, hidden otherwise.
pub(crate) fn progress_bar(length: u64, unit: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(length);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {unit} (ETA {{eta}})"
        ))
        .expect("valid progress template"),
    );
    bar
}

/// The queries of a log: (name, text).
pub(crate) fn read_queries(path: &Path) -> Result<Vec<(String, String)>> {
    let queries: Vec<(String, String)> = if path.is_dir() {
        // As `bench lubm --queries` reads them: q2 before q10.
        crate::bench_lubm::load_queries(Some(path))?
    } else {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if path.extension().is_some_and(|e| e == "json") {
            let list: Vec<Value> = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a JSON list", path.display()))?;
            list.into_iter()
                .enumerate()
                .map(|(i, entry)| match entry {
                    Value::String(query) => Ok((format!("{}", i + 1), query)),
                    Value::Object(object) => {
                        let query = object
                            .get("query")
                            .and_then(Value::as_str)
                            .with_context(|| format!("entry {}: no \"query\" string", i + 1))?;
                        let name = match object.get("name").or_else(|| object.get("id")) {
                            Some(Value::String(name)) => name.clone(),
                            Some(other) => other.to_string(),
                            None => format!("{}", i + 1),
                        };
                        Ok((name, query.to_owned()))
                    }
                    _ => bail!("entry {}: neither a string nor an object", i + 1),
                })
                .collect::<Result<_>>()?
        } else {
            text.lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(i, line)| (format!("line {}", i + 1), line.to_owned()))
                .collect()
        }
    };
    if queries.is_empty() {
        bail!("{}: no queries", path.display());
    }
    Ok(queries)
}

/// Runs one query by `once` (its rows, or its status and message): a warm-up, then
/// `runs` measured runs; a failed query runs once.
pub(crate) fn measure(
    runs: u32,
    mut once: impl FnMut() -> Result<usize, (&'static str, String)>,
) -> Outcome {
    let mut times = Vec::new();
    let mut rows = 0;
    for run in 0..=runs {
        let started = Instant::now();
        match once() {
            Ok(n) => rows = n,
            Err((status, message)) => {
                return Outcome {
                    status: status.to_owned(),
                    rows: 0,
                    micros: started.elapsed().as_secs_f64() * 1e6,
                    error: Some(message),
                }
            }
        }
        if run > 0 {
            times.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    Outcome {
        status: "ok".to_owned(),
        rows,
        micros: crate::bench_lubm::median(&mut times),
        error: None,
    }
}

/// Parse, plan, execute and serialize as TSV; the rows (or triples, or 0/1 for ASK).
pub(crate) fn run_once(
    store: &Store,
    text: &str,
    options: &ExecOptions,
) -> Result<usize, QueryError> {
    let prepared = prepare(store, text, &PrepareOptions::default())?;
    let results = prepared.execute(store, options)?;
    let rows = match &results {
        QueryResults::Solutions(solutions) => solutions.len(),
        QueryResults::Boolean(b) => usize::from(*b),
        QueryResults::Graph(triples) => triples.len(),
    };
    let format = match &results {
        QueryResults::Graph(_) => ResultsFormat::NTriples,
        _ => ResultsFormat::Tsv,
    };
    let written = results_to_vec(&results, format)
        .map_err(|e| QueryError::Unsupported(format!("serializing the results: {e}")))?;
    std::hint::black_box(&written);
    Ok(rows)
}

pub(crate) fn status_of(error: &QueryError) -> &'static str {
    match error {
        QueryError::Syntax(_) => "syntax",
        QueryError::Unsupported(_) => "unsupported",
        QueryError::Timeout(_) => "timeout",
        QueryError::MemoryLimit { .. } => "memory",
        QueryError::TooManyResults(_) => "too-many-results",
        QueryError::Cluster(_) => "cluster",
        _ => "error",
    }
}

/// Queries slower than Oxigraph by more than this factor are listed.
const SLOWER: f64 = 10.0;

struct Report<'a> {
    queries: &'a [(String, String)],
    ours: &'a [Outcome],
    theirs: Option<&'a [Outcome]>,
}

impl<'a> Report<'a> {
    fn new(
        queries: &'a [(String, String)],
        ours: &'a [Outcome],
        theirs: Option<&'a [Outcome]>,
    ) -> Self {
        Self {
            queries,
            ours,
            theirs,
        }
    }

    fn pairs(&self) -> impl Iterator<Item = (usize, &Outcome, Option<&Outcome>)> {
        self.ours
            .iter()
            .enumerate()
            .map(|(i, ours)| (i, ours, self.theirs.map(|theirs| &theirs[i])))
    }

    /// Queries both answered with different row counts.
    fn mismatches(&self) -> Vec<usize> {
        self.pairs()
            .filter(|(_, a, b)| {
                b.is_some_and(|b| a.status == "ok" && b.status == "ok" && a.rows != b.rows)
            })
            .map(|(i, _, _)| i)
            .collect()
    }

    /// Queries both answered, ours more than [`SLOWER`]× theirs.
    fn slower(&self) -> Vec<usize> {
        self.pairs()
            .filter(|(_, a, b)| {
                b.is_some_and(|b| {
                    a.status == "ok" && b.status == "ok" && a.micros > SLOWER * b.micros
                })
            })
            .map(|(i, _, _)| i)
            .collect()
    }

    /// Queries Oxigraph answered and we did not.
    fn only_theirs(&self) -> Vec<usize> {
        self.pairs()
            .filter(|(_, a, b)| b.is_some_and(|b| a.status != "ok" && b.status == "ok"))
            .map(|(i, _, _)| i)
            .collect()
    }

    fn text(&self) -> String {
        let mut out = String::new();
        let mut engines = vec![("Quiver", self.ours)];
        if let Some(theirs) = self.theirs {
            engines.push(("Oxigraph", theirs));
        }
        for (engine, outcomes) in &engines {
            out += &format!("\n{engine}: {}\n", counts_line(outcomes));
            let d = distribution(outcomes);
            out += &format!(
                "  answered: median {} p90 {} p99 {} max {}\n",
                micros(d[0]),
                micros(d[1]),
                micros(d[2]),
                micros(d[3])
            );
            let groups = error_groups(outcomes);
            if !groups.is_empty() {
                out += "  errors by message:\n";
                for (message, count) in groups.iter().take(10) {
                    out += &format!("    {count:>6}  {message}\n");
                }
            }
        }
        if let Some(theirs) = self.theirs {
            let name = |i: usize| &self.queries[i].0;
            let mismatches = self.mismatches();
            out += &format!("\nrow counts that differ: {}\n", mismatches.len());
            for &i in mismatches.iter().take(20) {
                out += &format!(
                    "  {}: Quiver {} rows, Oxigraph {}\n",
                    name(i),
                    self.ours[i].rows,
                    theirs[i].rows
                );
            }
            let slower = self.slower();
            out += &format!(
                "more than {SLOWER}× slower than Oxigraph: {}\n",
                slower.len()
            );
            for &i in slower.iter().take(20) {
                out += &format!(
                    "  {}: Quiver {}, Oxigraph {}\n",
                    name(i),
                    micros(self.ours[i].micros),
                    micros(theirs[i].micros)
                );
            }
            let only = self.only_theirs();
            out += &format!("answered by Oxigraph only: {}\n", only.len());
            for &i in only.iter().take(20) {
                out += &format!(
                    "  {}: Quiver {} ({}), Oxigraph {}\n",
                    name(i),
                    self.ours[i].status,
                    self.ours[i].error.as_deref().unwrap_or(""),
                    micros(theirs[i].micros)
                );
            }
        }
        out
    }

    fn csv(&self) -> String {
        let mut out = String::from(
            "name,status,rows,micros,oxigraph_status,oxigraph_rows,oxigraph_micros,error\n",
        );
        for (i, ours, theirs) in self.pairs() {
            let (status, rows, micros) = match theirs {
                Some(t) => (
                    t.status.clone(),
                    t.rows.to_string(),
                    format!("{:.1}", t.micros),
                ),
                None => Default::default(),
            };
            out += &format!(
                "{},{},{},{:.1},{status},{rows},{micros},{}\n",
                csv_field(&self.queries[i].0),
                ours.status,
                ours.rows,
                ours.micros,
                csv_field(ours.error.as_deref().unwrap_or(""))
            );
        }
        out
    }

    fn json(&self) -> Value {
        let summary = |outcomes: &[Outcome]| {
            let d = distribution(outcomes);
            json!({
                "counts": counts(outcomes).into_iter().collect::<std::collections::BTreeMap<_, _>>(),
                "median_us": d[0], "p90_us": d[1], "p99_us": d[2], "max_us": d[3],
                "errors": error_groups(outcomes).into_iter().map(|(m, n)| json!({"message": m, "count": n})).collect::<Vec<_>>(),
            })
        };
        let outcome = |o: &Outcome| json!({"status": o.status, "rows": o.rows, "micros": o.micros, "error": o.error});
        json!({
            "quiver": summary(self.ours),
            "oxigraph": self.theirs.map(summary),
            "row_count_mismatches": self.theirs.map(|_| self.mismatches().len()),
            "slower_than_oxigraph_10x": self.theirs.map(|_| self.slower().into_iter().map(|i| self.queries[i].0.clone()).collect::<Vec<_>>()),
            "answered_by_oxigraph_only": self.theirs.map(|_| self.only_theirs().len()),
            "queries": self.pairs().map(|(i, ours, theirs)| json!({
                "name": self.queries[i].0,
                "quiver": outcome(ours),
                "oxigraph": theirs.map(outcome),
            })).collect::<Vec<_>>(),
        })
    }
}

/// (status, count), most frequent first.
fn counts(outcomes: &[Outcome]) -> Vec<(String, usize)> {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for outcome in outcomes {
        *counts.entry(outcome.status.clone()).or_default() += 1;
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

fn counts_line(outcomes: &[Outcome]) -> String {
    counts(outcomes)
        .into_iter()
        .map(|(status, n)| format!("{n} {status}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Median, p90, p99 and max of the answered queries' times (NaN when none).
fn distribution(outcomes: &[Outcome]) -> [f64; 4] {
    let mut times: Vec<f64> = outcomes
        .iter()
        .filter(|o| o.status == "ok")
        .map(|o| o.micros)
        .collect();
    if times.is_empty() {
        return [f64::NAN; 4];
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    [at(0.5), at(0.9), at(0.99), at(1.0)]
}

/// Error messages without their positions, most frequent first.
fn error_groups(outcomes: &[Outcome]) -> Vec<(String, usize)> {
    let mut groups: std::collections::BTreeMap<String, usize> = Default::default();
    for error in outcomes.iter().filter_map(|o| o.error.as_deref()) {
        *groups.entry(without_position(error)).or_default() += 1;
    }
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    groups
}

/// `… error at 3:14: message` → `… message`.
fn without_position(message: &str) -> String {
    match message.find("error at ") {
        Some(at) => {
            let rest = &message[at + "error at ".len()..];
            let rest = rest.split_once(": ").map_or(rest, |(_, rest)| rest);
            format!("{}{rest}", &message[..at])
        }
        None => message.to_owned(),
    }
}

fn micros(us: f64) -> String {
    if us.is_nan() {
        "-".to_owned()
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

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

    fn outcome(status: &str, micros: f64, error: Option<&str>) -> Outcome {
        Outcome {
            status: status.to_owned(),
            rows: 1,
            micros,
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn errors_group_without_their_positions() {
        let outcomes = [
            outcome(
                "syntax",
                1.0,
                Some("invalid query: error at 1:5: unknown word"),
            ),
            outcome(
                "syntax",
                1.0,
                Some("invalid query: error at 7:2: unknown word"),
            ),
            outcome("timeout", 1.0, Some("query timed out after 1.0 s")),
            outcome("ok", 3.0, None),
        ];
        assert_eq!(
            error_groups(&outcomes),
            vec![
                ("invalid query: unknown word".to_owned(), 2),
                ("query timed out after 1.0 s".to_owned(), 1)
            ]
        );
        assert_eq!(counts_line(&outcomes), "2 syntax, 1 ok, 1 timeout");
    }

    #[test]
    fn the_distribution_reads_answered_queries_only() {
        let mut outcomes: Vec<Outcome> = (1..=100).map(|i| outcome("ok", i as f64, None)).collect();
        outcomes.push(outcome("timeout", 1e9, Some("late")));
        assert_eq!(distribution(&outcomes), [51.0, 90.0, 99.0, 100.0]);
    }

    #[test]
    fn logs_are_read_as_lines_json_or_directories() {
        let dir = std::env::temp_dir().join(format!("quiver-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let lines = dir.join("log.txt");
        std::fs::write(&lines, "ASK {}\n\nSELECT * {}\n").unwrap();
        let read = read_queries(&lines).unwrap();
        assert_eq!(
            read,
            vec![
                ("line 1".into(), "ASK {}".into()),
                ("line 3".into(), "SELECT * {}".into())
            ]
        );
        let list = dir.join("log.json");
        std::fs::write(
            &list,
            r#"["ASK {}", {"name": "q", "query": "SELECT * {}"}]"#,
        )
        .unwrap();
        let read = read_queries(&list).unwrap();
        assert_eq!(read[1], ("q".into(), "SELECT * {}".into()));
        let rq = dir.join("rq");
        std::fs::create_dir_all(&rq).unwrap();
        std::fs::write(rq.join("b.rq"), "ASK {}").unwrap();
        std::fs::write(rq.join("a.rq"), "SELECT * {}").unwrap();
        let read = read_queries(&rq).unwrap();
        assert_eq!(read[0].0, "a");
        assert!(read_queries(&dir.join("missing")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
