//! The console's `sparql` command (Wukong's options) and queries typed directly.
//!
//! `sparql -f FILE` prepares the query (`-N` times when asked, to time the planner), runs
//! it `-n` times reading every row, and reports the rows and the average and median
//! latency; `-v` prints rows, `-o` writes every result to a file, `-p` gives a user plan,
//! `--explain` the profile of the last run. `sparql -b` runs a list of such query files.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use quiver_sparql::{prepare, write_results, PrepareOptions, QueryResults, ResultsFormat};

use super::commands::{split_words, Session};

/// Options of one `sparql -f` run.
#[derive(Debug, Default)]
struct QueryOptions {
    file: Option<PathBuf>,
    batch: Option<PathBuf>,
    runs: usize,
    plan_runs: Option<usize>,
    threads: Option<usize>,
    rows: usize,
    output: Option<PathBuf>,
    plan: Option<PathBuf>,
    explain: bool,
}

/// Parses `sparql` options; relative paths are taken from `base` when given.
fn parse_options(args: &[String], base: Option<&Path>) -> Result<QueryOptions> {
    let mut options = QueryOptions {
        runs: 1,
        ..QueryOptions::default()
    };
    let path = |p: &str| match base {
        Some(dir) => dir.join(p),
        None => PathBuf::from(p),
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .map(String::as_str)
                .with_context(|| format!("sparql: {flag} needs a value"))
        };
        let number = |v: &str, min: usize| -> Result<usize> {
            v.parse::<usize>()
                .ok()
                .filter(|&n| n >= min)
                .with_context(|| format!("sparql: {flag} needs a whole number ≥ {min}, not `{v}`"))
        };
        match flag.as_str() {
            "-f" => options.file = Some(path(value()?)),
            "-b" => options.batch = Some(path(value()?)),
            "-n" => options.runs = number(value()?, 1)?,
            "-N" => options.plan_runs = Some(number(value()?, 1)?),
            "-m" => {
                let threads = crate::limits::parse_threads(value()?)
                    .map_err(|e| anyhow::anyhow!("sparql: -m {e}"))?;
                options.threads = Some(threads as usize);
            }
            "-v" => options.rows = number(value()?, 0)?,
            "-o" => options.output = Some(path(value()?)),
            "-p" => options.plan = Some(path(value()?)),
            "--explain" | "-e" => options.explain = true,
            other => bail!("sparql: unknown option `{other}` (type `help`)"),
        }
    }
    Ok(options)
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

fn average(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

impl Session {
    /// `sparql …`
    pub(super) fn sparql(&mut self, args: &[String], out: &mut dyn Write) -> Result<()> {
        let options = parse_options(args, None)?;
        match (&options.file, &options.batch) {
            (Some(_), Some(_)) => bail!("sparql: give -f or -b, not both"),
            (None, Some(batch)) => self.batch(batch, out),
            (Some(file), None) => {
                let text = read(file)?;
                self.run_query(&text, &options, "", out)
            }
            (None, None) => bail!(
                "sparql: give -f FILE or -b BATCHFILE (or type the query itself, ended by a blank line)"
            ),
        }
    }

    /// A query typed directly: one run, the first `rows` rows printed.
    pub fn inline_query(&mut self, text: &str) -> Result<()> {
        let options = QueryOptions {
            runs: 1,
            rows: self.settings.rows,
            ..QueryOptions::default()
        };
        let mut out = std::io::stdout().lock();
        self.run_query(text, &options, "", &mut out)?;
        out.flush().context("writing to standard output")
    }

    /// `sparql -b BATCHFILE`: each line names a query file (relative to the batch file),
    /// optionally followed by `sparql` options. A failing query does not stop the batch.
    fn batch(&mut self, path: &Path, out: &mut dyn Write) -> Result<()> {
        let text = read(path)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let (mut ran, mut failed) = (0, 0);
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            ran += 1;
            let result = split_words(line).and_then(|words| {
                let (file, rest) = words.split_first().context("empty line")?;
                let mut options = parse_options(rest, Some(dir))?;
                let file = dir.join(file);
                let label = format!("{}: ", file.display());
                options.file = Some(file);
                let query = read(options.file.as_deref().unwrap_or(Path::new("")))?;
                self.run_query(&query, &options, &label, out)
            });
            if let Err(error) = result {
                if crate::output::is_broken_pipe(&error) {
                    return Err(error);
                }
                failed += 1;
                out.flush()?;
                eprintln!("error: {}:{}: {error:#}", path.display(), number + 1);
            }
        }
        writeln!(out, "batch: {ran} queries, {failed} failed")?;
        if failed > 0 {
            bail!("{failed} of {ran} queries in {} failed", path.display());
        }
        Ok(())
    }

    /// Prepares and runs `text` as `options` say, reporting on `out`.
    fn run_query(
        &self,
        text: &str,
        options: &QueryOptions,
        label: &str,
        out: &mut dyn Write,
    ) -> Result<()> {
        let store = &self.query_store()?;
        let prepare_options = PrepareOptions {
            base_iri: None,
            plan: options.plan.as_deref().map(read).transpose()?,
            dataset: None,
            partitions: self.cluster.as_ref().map(|cluster| {
                let partitions: std::sync::Arc<dyn quiver_sparql::partitions::BgpPartitions> =
                    cluster.partitions.clone();
                partitions
            }),
        };
        let mut plan_times = Vec::new();
        let mut prepared = None;
        if options.plan_runs.is_none() {
            // A query run before on this version comes from the cache.
            let started = Instant::now();
            let (cached, _) = self.queries.prepare(store, text, &prepare_options)?;
            plan_times.push(started.elapsed().as_secs_f64() * 1e6);
            prepared = Some(cached.query.clone());
        }
        // -N times the planner itself, without the cache.
        for _ in 0..options.plan_runs.unwrap_or(0) {
            let started = Instant::now();
            prepared = Some(prepare(store, text, &prepare_options)?);
            plan_times.push(started.elapsed().as_secs_f64() * 1e6);
        }
        let prepared = prepared.context("at least one planning run")?;
        let mut exec = self.exec_options(options.threads);
        // A cluster's workers record what they did only when asked.
        exec.explain = options.explain;
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..options.runs.max(1) {
            let started = Instant::now();
            let (results, profile) =
                self.with_threads(exec.threads, || prepared.execute_profiled(store, &exec))??;
            let rows = crate::bench_emulate::consume(&results);
            times.push(started.elapsed().as_secs_f64() * 1e6);
            last = Some((results, profile, rows));
        }
        let (results, profile, rows) = last.context("at least one run")?;

        if options.rows > 0 {
            print_rows(&results, options.rows, out)?;
        }
        let kind = match &results {
            QueryResults::Solutions(_) => "rows",
            QueryResults::Boolean(_) => "answer",
            QueryResults::Graph(_) => "triples",
        };
        match &results {
            QueryResults::Boolean(b) => writeln!(out, "{label}{kind}: {b}")?,
            _ => writeln!(out, "{label}{rows} {kind}")?,
        }
        let runs = times.len();
        writeln!(
            out,
            "latency: average {:.1} µs, median {:.1} µs over {runs} run(s)",
            average(&times),
            median(&mut times)
        )?;
        let plans = plan_times.len();
        if options.plan_runs.is_some() {
            writeln!(
                out,
                "planning: average {:.1} µs, median {:.1} µs over {plans} run(s)",
                average(&plan_times),
                median(&mut plan_times)
            )?;
        } else {
            writeln!(out, "planning: {:.1} µs", plan_times[0])?;
        }
        if let Some(path) = &options.output {
            write_output(&results, path)?;
            writeln!(out, "results written to {}", path.display())?;
        }
        if options.explain {
            write!(out, "{}", quiver_sparql::explain::render(&profile))?;
        }
        Ok(())
    }
}

/// Prints up to `limit` rows as an aligned table of terms (N-Triples syntax), headed by the
/// variables; a graph prints as N-Triples lines.
fn print_rows(results: &QueryResults<'_>, limit: usize, out: &mut dyn Write) -> Result<()> {
    match results {
        QueryResults::Boolean(_) => {}
        QueryResults::Solutions(solutions) => {
            crate::table::write_solutions(solutions, limit, &mut *out)?;
            if solutions.len() > limit {
                writeln!(out, "… {} more row(s)", solutions.len() - limit)?;
            }
        }
        QueryResults::Graph(triples) => {
            for triple in triples.iter().take(limit) {
                writeln!(out, "{triple} .")?;
            }
            if triples.len() > limit {
                writeln!(out, "… {} more triple(s)", triples.len() - limit)?;
            }
        }
    }
    Ok(())
}

/// Writes every result to `path`, in the format its extension names (default TSV).
fn write_output(results: &QueryResults<'_>, path: &Path) -> Result<()> {
    let format = path
        .extension()
        .and_then(|e| e.to_str())
        .and_then(ResultsFormat::from_name)
        .unwrap_or(ResultsFormat::Tsv);
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut writer = write_results(results, format, BufWriter::with_capacity(1 << 16, file))
        .with_context(|| format!("writing {}", path.display()))?;
    writer
        .flush()
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        split_words(line).unwrap()
    }

    #[test]
    fn options_parse_with_wukong_letters() {
        let o = parse_options(
            &words("-f q.rq -n 5 -N 10 -m 2 -v 3 -o out.csv -p q.fmt --explain"),
            None,
        )
        .unwrap();
        assert_eq!(o.file.as_deref(), Some(Path::new("q.rq")));
        assert_eq!(
            (o.runs, o.plan_runs, o.threads, o.rows),
            (5, Some(10), Some(2), 3)
        );
        assert_eq!(o.output.as_deref(), Some(Path::new("out.csv")));
        assert_eq!(o.plan.as_deref(), Some(Path::new("q.fmt")));
        assert!(o.explain);
        let o = parse_options(&words("-p q.fmt"), Some(Path::new("/b"))).unwrap();
        assert_eq!(o.plan.as_deref(), Some(Path::new("/b/q.fmt")));
        for bad in ["-n 0", "-n x", "-f", "-x 1", "-m -1"] {
            assert!(parse_options(&words(bad), None).is_err(), "{bad}");
        }
    }

    #[test]
    fn medians_and_averages() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&mut []).is_nan());
        assert_eq!(average(&[1.0, 2.0, 6.0]), 3.0);
    }
}
