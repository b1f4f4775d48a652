//! `quiver bench emulate`: a throughput emulator of many clients (Wukong's `sparql-emu`).
//!
//! C client threads each loop for S seconds: pick a template of the mix by weight, fill its
//! `%ub:Class` placeholders with random instances of the classes ([`mix`]), then prepare,
//! execute and read every row of the query — the latency of a request covers all three,
//! since the constant changes per request and a real client would send text. The report is
//! the throughput (queries per second over all clients) and latency percentiles per
//! template and overall; `--json` writes them, `--cdf` plots the latency distributions.
//! With `--endpoint URL` (repeatable), the clients send their queries over HTTP instead,
//! spread over the endpoints (the processes of a cluster that all accept queries).

pub mod mix;

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use quiver_sparql::partitions::BgpPartitions;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;
use serde_json::{json, Value};

use self::mix::{Bound, Rng, WeightedChooser};

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// A mix file: lines `TEMPLATE_FILE WEIGHT`, paths relative to it (default: the
    /// standard LUBM mix t1 25, t2 25, t3 3, t4 6, t5 25, t6 2)
    #[arg(long)]
    pub mix: Option<PathBuf>,
    /// Client threads sending queries
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub clients: u32,
    /// Seconds each client runs
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = crate::limits::parse_seconds, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Seed of the random choices (client i uses seed + i)
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Seconds the clients run first, unmeasured, with other random choices than the
    /// measured run's (what a long-running server learnt and cached: its dictionary's
    /// remembered constants, a cluster's records learnt from other processes)
    #[arg(long, value_name = "SECONDS", default_value = "0", value_parser = crate::limits::parse_wait)]
    pub warmup: Duration,
    /// Write the figures as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write a latency CDF plot (PNG) to this file
    #[arg(long)]
    pub cdf: Option<PathBuf>,
    /// Run the queries on a cluster of this many processes on this machine (the store cut
    /// into processes × --workers partitions, cached under the system temp dir; this
    /// process is process 0); also reports what moved between workers per query
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub processes: Option<u32>,
    /// Worker threads per cluster process, one partition each
    #[arg(long, default_value_t = 1, requires = "processes",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
    /// Send the queries over HTTP to this SPARQL endpoint (`http://host:port/query`, one
    /// keep-alive connection per client, results as TSV read to the last byte) instead
    /// of running them here; repeatable: client i sends to the (i mod N)-th. The templates
    /// are still filled from --location's store
    #[arg(long, conflicts_with = "processes")]
    pub endpoint: Vec<String>,
}

/// How a client runs a query: here, or at an endpoint over HTTP.
enum Runner<'a> {
    Here(&'a Target<'a>),
    Http(Box<crate::bench_log::endpoint::Endpoint>),
}

/// How long a client waits for an endpoint's answer before the run fails.
const HTTP_PATIENCE: Duration = Duration::from_secs(60);

impl Runner<'_> {
    /// Runs `text`: the rows (read to the last term, or to the last byte over HTTP).
    fn run(&mut self, text: &str) -> Result<u64> {
        match self {
            Runner::Here(target) => {
                let prepared = prepare(target.store, text, &target.prepare)?;
                let results = prepared.execute(target.store, &target.exec)?;
                Ok(consume(&results))
            }
            Runner::Http(endpoint) => match endpoint.request(text, HTTP_PATIENCE) {
                Ok(rows) => Ok(rows as u64),
                Err((status, message)) => anyhow::bail!("the endpoint: {status}: {message}"),
            },
        }
    }
}

/// Where the clients' queries run: the store, or a cluster's coordinator and partitions.
struct Target<'a> {
    store: &'a Store,
    prepare: PrepareOptions,
    exec: ExecOptions,
}

/// What one client measured: per template, the latencies (µs) and the rows returned.
struct ClientLog {
    latencies: Vec<Vec<f64>>,
    rows: Vec<u64>,
    /// When the client sent its last request's answer.
    finished: Instant,
}

/// Latency percentiles of a set of requests.
struct Summary {
    queries: usize,
    rows: u64,
    mean_us: f64,
    max_us: f64,
    /// p50, p90, p99, p99.9
    percentiles: [f64; 4],
}

const PERCENTILES: [(f64, &str); 4] = [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p999")];

impl Summary {
    fn of(sorted: &[f64], rows: u64) -> Self {
        let n = sorted.len();
        let pick = |q: f64| -> f64 {
            if n == 0 {
                return f64::NAN;
            }
            // Nearest rank: the smallest value with at least q of the values at or below.
            let rank = (q * n as f64).ceil() as usize;
            sorted[rank.clamp(1, n) - 1]
        };
        Self {
            queries: n,
            rows,
            mean_us: if n == 0 {
                f64::NAN
            } else {
                sorted.iter().sum::<f64>() / n as f64
            },
            max_us: sorted.last().copied().unwrap_or(f64::NAN),
            percentiles: PERCENTILES.map(|(q, _)| pick(q)),
        }
    }

    fn json(&self) -> Value {
        let mut value = json!({
            "queries": self.queries,
            "rows": self.rows,
            "mean_us": self.mean_us,
            "max_us": self.max_us,
        });
        for ((_, name), p) in PERCENTILES.iter().zip(self.percentiles) {
            value[format!("{name}_us")] = json!(p);
        }
        value
    }
}

pub fn run(args: EmulateArgs) -> Result<()> {
    let templates = match &args.mix {
        Some(path) => mix::read_mix(path)?,
        None => mix::default_mix(),
    };
    let store = crate::location::open_snapshot(&args.location)?;
    let bound: Vec<Bound<'_>> = templates
        .iter()
        .map(|t| t.bind(&store))
        .collect::<Result<_>>()?;
    let weights: Vec<f64> = templates.iter().map(|t| t.weight).collect();
    let chooser = WeightedChooser::new(&weights)?;
    // Fail before the run on a template that does not parse once filled in.
    let mut rng = Rng::new(args.seed ^ 0x5EED);
    let mut text = String::new();
    for b in &bound {
        b.instantiate(&store, &mut rng, &mut text)?;
        prepare(&store, &text, &PrepareOptions::default())
            .with_context(|| format!("template {}", b.template.name))?;
    }

    let mix_text = templates
        .iter()
        .map(|t| format!("{} {}", t.name, t.weight))
        .collect::<Vec<_>>()
        .join(", ");
    let over = match args.endpoint.as_slice() {
        [] => String::new(),
        endpoints => format!(" over HTTP to {}", endpoints.join(", ")),
    };
    eprintln!(
        "emulating {} client(s) for {} s on {} triples{over}; mix: {mix_text}",
        args.clients,
        args.duration.as_secs_f64(),
        store.triples()
    );
    let cluster = match args.processes {
        Some(processes) => {
            let total = processes * args.workers;
            let dir = crate::local_cluster::cache_dir(&args.location, total);
            let dir = crate::local_cluster::partitioned(&store, &dir, total)?;
            Some(crate::local_cluster::LocalCluster::start(
                &dir,
                processes as usize,
                args.workers as usize,
            )?)
        }
        None => None,
    };
    // Each client is one thread; a query runs on it alone, as light queries do anyway.
    let target = match &cluster {
        Some(cluster) => {
            let partitions: std::sync::Arc<dyn BgpPartitions> = cluster.partitions.clone();
            Target {
                store: &cluster.coordinator,
                prepare: PrepareOptions {
                    partitions: Some(std::sync::Arc::clone(&partitions)),
                    ..PrepareOptions::default()
                },
                exec: ExecOptions {
                    partitions: Some(partitions),
                    ..ExecOptions::default()
                },
            }
        }
        None => Target {
            store: &store,
            prepare: PrepareOptions::default(),
            exec: ExecOptions::default(),
        },
    };
    let duration = args.duration;
    if !args.warmup.is_zero() {
        // Other choices than the measured run's: it must not find its own queries learnt.
        let seed = args.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        drive(
            &store,
            &target,
            &bound,
            &chooser,
            (&args, seed),
            args.warmup,
        )?;
    }
    let before = target.exec.partitions.as_ref().map(|p| p.exchanged());
    let runs_before = cluster.as_ref().map(|c| c.partitions.in_place());
    let (logs, elapsed) = drive(
        &store,
        &target,
        &bound,
        &chooser,
        (&args, args.seed),
        duration,
    )?;
    // Round trips to other processes, and steps answered from the records learnt of them.
    let runs = cluster.as_ref().zip(runs_before).map(|(c, before)| {
        let after = c.partitions.in_place();
        (
            after.trips - before.trips,
            after.recalled - before.recalled,
            after.learnt_ids,
        )
    });
    let exchanged = target
        .exec
        .partitions
        .as_ref()
        .zip(before)
        .map(|(p, before)| p.exchanged() - before);

    // Merge the clients' logs.
    let mut latencies: Vec<Vec<f64>> = vec![Vec::new(); bound.len()];
    let mut rows = vec![0u64; bound.len()];
    for log in logs {
        for (t, values) in log.latencies.into_iter().enumerate() {
            latencies[t].extend(values);
            rows[t] += log.rows[t];
        }
    }
    for values in &mut latencies {
        values.sort_by(f64::total_cmp);
    }
    let mut all: Vec<f64> = latencies.iter().flatten().copied().collect();
    all.sort_by(f64::total_cmp);
    let per_template: Vec<Summary> = latencies
        .iter()
        .zip(&rows)
        .map(|(values, &rows)| Summary::of(values, rows))
        .collect();
    let overall = Summary::of(&all, rows.iter().sum());
    let throughput = all.len() as f64 / elapsed.max(1e-9);

    let total_weight: f64 = weights.iter().sum();
    let per_query = |n: u64| n as f64 / all.len().max(1) as f64;
    let moved =
        exchanged.map_or_else(String::new, |e| {
            format!(
            "on {}: {:.1} messages, {:.1} rows and {:.2} KiB exchanged between workers per query\n",
            target.exec.partitions.as_ref().map_or_else(String::new, |p| p.name()),
            per_query(e.messages),
            per_query(e.rows),
            per_query(e.bytes) / 1024.0
        )
        });
    let moved = match runs {
        Some((trips, recalled, ids)) => format!(
            "{moved}{:.2} round trips to other processes and {:.2} steps answered from records \
             learnt of them per query ({:.0} KiB learnt)\n",
            per_query(trips),
            per_query(recalled),
            ids as f64 * 4.0 / 1024.0
        ),
        None => moved,
    };
    crate::output::print_stdout(&format!(
        "{}throughput: {throughput:.0} queries/s\n{moved}",
        render(&templates, &per_template, &overall, total_weight)
    ))?;

    if let Some(path) = &args.json {
        let report = json!({
            "store": args.location.display().to_string(),
            "triples": store.triples(),
            "clients": args.clients,
            "duration_s": args.duration.as_secs_f64(),
            "elapsed_s": elapsed,
            "seed": args.seed,
            "warmup_s": args.warmup.as_secs_f64(),
            "endpoints": args.endpoint,
            "queries": all.len(),
            "throughput_qps": throughput,
            "templates": templates.iter().zip(&per_template).map(|(t, s)| {
                let mut value = s.json();
                value["template"] = json!(t.name);
                value["weight"] = json!(t.weight);
                value["classes"] = json!(t.classes().collect::<Vec<_>>());
                value
            }).collect::<Vec<_>>(),
            "overall": overall.json(),
            "cluster": exchanged.map(|e| json!({
                "processes": args.processes,
                "workers_per_process": args.workers,
                "messages_per_query": per_query(e.messages),
                "rows_exchanged_per_query": per_query(e.rows),
                "bytes_exchanged_per_query": per_query(e.bytes),
                "round_trips_per_query": runs.map(|r| per_query(r.0)),
                "recalled_steps_per_query": runs.map(|r| per_query(r.1)),
                "learnt_bytes": runs.map(|r| r.2 * 4),
            })),
        });
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.cdf {
        let mut series: Vec<crate::plot::Series> = templates
            .iter()
            .zip(&latencies)
            .filter(|(_, values)| !values.is_empty())
            .map(|(t, values)| crate::plot::Series {
                name: t.name.clone(),
                points: crate::plot::cdf_points(values, 400),
            })
            .collect();
        series.push(crate::plot::Series {
            name: "all".into(),
            points: crate::plot::cdf_points(&all, 400),
        });
        let title = format!(
            "Latency CDF: {} client(s), {throughput:.0} queries/s",
            args.clients
        );
        crate::plot::latency_cdf_png(path, &title, &series)?;
    }
    Ok(())
}

/// A client's count of queries answered, alone on its cache line (128 bytes: two lines,
/// which some processors fetch in pairs).
#[derive(Default)]
#[repr(align(128))]
struct Done(AtomicU64);

/// Runs the clients for `duration`; returns their logs and the elapsed seconds.
fn drive(
    store: &Store,
    target: &Target<'_>,
    bound: &[Bound<'_>],
    chooser: &WeightedChooser,
    (args, seed): (&EmulateArgs, u64),
    duration: Duration,
) -> Result<(Vec<ClientLog>, f64)> {
    // Each client counts its own queries on a cache line of its own: one count they all
    // added to would be a line every core writes at each query, a contention of the
    // harness's own at many clients.
    let done: Vec<Done> = (0..args.clients).map(|_| Done::default()).collect();
    let stop = AtomicBool::new(false);
    let bar = progress(duration);
    let started = Instant::now();
    let deadline = started + duration;
    let results: Vec<Result<ClientLog>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..args.clients)
            .map(|client| {
                let (done, stop) = (&done[client as usize].0, &stop);
                let seed = seed.wrapping_add(u64::from(client));
                let endpoint = (!args.endpoint.is_empty())
                    .then(|| args.endpoint[client as usize % args.endpoint.len()].clone());
                scope.spawn(move || {
                    let runner = match endpoint {
                        Some(url) => crate::bench_log::endpoint::Endpoint::new(&url)
                            .map(|endpoint| Runner::Http(Box::new(endpoint))),
                        None => Ok(Runner::Here(target)),
                    };
                    let result = runner.and_then(|runner| {
                        client_loop(store, runner, bound, chooser, seed, deadline, done, stop)
                    });
                    if result.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    result
                })
            })
            .collect();
        while !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            let seconds = started.elapsed().as_secs_f64();
            let count: u64 = done.iter().map(|d| d.0.load(Ordering::Relaxed)).sum();
            bar.set_position((seconds * 1e3).min(duration.as_secs_f64() * 1e3) as u64);
            bar.set_message(format!(
                "{count} queries, {:.0} queries/s",
                count as f64 / seconds.max(1e-9)
            ));
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a client thread panicked")))
            })
            .collect()
    });
    bar.finish_and_clear();
    let logs = results.into_iter().collect::<Result<Vec<_>>>()?;
    // The run lasted until the last client finished (not until this thread noticed).
    let elapsed = logs
        .iter()
        .map(|log| log.finished.duration_since(started).as_secs_f64())
        .fold(0.0, f64::max);
    Ok((logs, elapsed))
}

/// One client: requests until the deadline (or until another client failed). The
/// templates are filled from `store`, the whole store, and run by `runner`.
#[allow(clippy::too_many_arguments)]
fn client_loop(
    store: &Store,
    mut runner: Runner<'_>,
    bound: &[Bound<'_>],
    chooser: &WeightedChooser,
    seed: u64,
    deadline: Instant,
    done: &AtomicU64,
    stop: &AtomicBool,
) -> Result<ClientLog> {
    let mut rng = Rng::new(seed);
    let mut log = ClientLog {
        latencies: vec![Vec::new(); bound.len()],
        rows: vec![0; bound.len()],
        finished: Instant::now(),
    };
    let mut text = String::new();
    // Two clock reads a query: the end of one also tells whether the run is over.
    let mut finished = Instant::now();
    while !stop.load(Ordering::Relaxed) && finished < deadline {
        let t = chooser.choose(&mut rng);
        bound[t].instantiate(store, &mut rng, &mut text)?;
        let started = Instant::now();
        let rows = runner
            .run(&text)
            .with_context(|| format!("template {}", bound[t].template.name))?;
        finished = Instant::now();
        log.latencies[t].push((finished - started).as_secs_f64() * 1e6);
        log.rows[t] += rows;
        done.fetch_add(1, Ordering::Relaxed);
    }
    log.finished = finished;
    Ok(log)
}

/// Reads every term of every row (as a client receiving the results would); the row count.
pub(crate) fn consume(results: &QueryResults<'_>) -> u64 {
    match results {
        QueryResults::Solutions(solutions) => {
            let mut bytes = 0usize;
            solutions.for_each_row(|row| {
                bytes += row
                    .iter()
                    .flatten()
                    .map(|t| match t {
                        oxrdf::TermRef::NamedNode(n) => n.as_str().len(),
                        oxrdf::TermRef::BlankNode(b) => b.as_str().len(),
                        oxrdf::TermRef::Literal(l) => l.value().len(),
                        oxrdf::TermRef::Triple(t) => t.to_string().len(),
                    })
                    .sum::<usize>();
            });
            std::hint::black_box(bytes);
            solutions.len() as u64
        }
        QueryResults::Boolean(b) => u64::from(*b),
        QueryResults::Graph(triples) => triples.len() as u64,
    }
}

fn progress(duration: Duration) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(duration.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {msg}")
            .expect("valid progress template"),
    );
    bar
}

fn render(
    templates: &[mix::Template],
    per_template: &[Summary],
    overall: &Summary,
    total_weight: f64,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| template | weight | queries | share | rows/query | p50 µs | p90 µs | p99 µs | p999 µs | mean µs | max µs |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let line = |out: &mut String, name: &str, weight: f64, s: &Summary| {
        let share = s.queries as f64 / overall.queries.max(1) as f64 * 100.0;
        let _ = write!(
            out,
            "| {name} | {weight} | {} | {share:.1}% | {:.1} |",
            s.queries,
            s.rows as f64 / s.queries.max(1) as f64
        );
        for p in s.percentiles {
            let _ = write!(out, " {p:.1} |");
        }
        let _ = writeln!(out, " {:.1} | {:.1} |", s.mean_us, s.max_us);
    };
    for (t, s) in templates.iter().zip(per_template) {
        line(&mut out, &t.name, t.weight, s);
    }
    line(&mut out, "all", total_weight, overall);
    out
}

#[cfg(test)]
mod tests;
