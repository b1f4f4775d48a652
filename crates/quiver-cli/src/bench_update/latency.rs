//! Query latency on an idle store and while a writer ingests a steady 100 K triples/s
//! (1,000-triple commits every 10 ms), Wukong's ingest-while-querying experiment.
//!
//! The two sides are measured in alternating windows, [`ROUNDS`] of each per query, with
//! the writer paused during the idle ones: the speed of a shared machine drifts by tens of
//! percent over seconds, more than a steady writer slows a query, and windows taken one
//! after the other would compare the drift.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use quiver_db::Database;
use quiver_sparql::{prepare, results_to_vec, ExecOptions, PrepareOptions, ResultsFormat};
use serde_json::{json, Value};

use super::{insert_data, update};

/// Idle and ingesting windows per query.
const ROUNDS: usize = 6;

/// Query text to TSV in memory, on the database's current version: µs.
fn query_us(db: &Database, text: &str, threads: usize) -> Result<f64> {
    let started = Instant::now();
    let store = db.snapshot();
    let prepared = prepare(&store, text, &PrepareOptions::default())?;
    let options = ExecOptions {
        threads,
        ..ExecOptions::default()
    };
    let results = prepared.execute(&store, &options)?;
    std::hint::black_box(results_to_vec(&results, ResultsFormat::Tsv)?);
    Ok(started.elapsed().as_secs_f64() * 1e6)
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * p).round() as usize]
}

/// The writer's state, shared with the thread that measures.
#[derive(Default)]
struct Writer {
    ingesting: AtomicBool,
    stop: AtomicBool,
    /// Triples committed while ingesting.
    ingested: AtomicU64,
}

impl Writer {
    /// Commits 1,000 triples every 10 ms while `ingesting`, numbered from `first`; returns
    /// the next number.
    fn run(&self, db: &Database, first: u64) -> Result<u64> {
        let mut n = first;
        let mut due = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            if !self.ingesting.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
                due = Instant::now();
                continue;
            }
            update(db, &insert_data(n, 1000))?;
            n += 1000;
            self.ingested.fetch_add(1000, Ordering::Relaxed);
            due += Duration::from_millis(10);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        Ok(n)
    }
}

/// Latencies of one query: (idle, ingesting) samples in µs, each side for about
/// `seconds` in all and at least `at_least` runs.
fn alternate(
    writer: &Writer,
    busy_seconds: &mut f64,
    seconds: f64,
    at_least: usize,
    mut run: impl FnMut() -> Result<f64>,
) -> Result<[Vec<f64>; 2]> {
    let mut samples = [Vec::new(), Vec::new()];
    let window = seconds / ROUNDS as f64;
    for _ in 0..ROUNDS {
        for (side, ingesting) in [false, true].into_iter().enumerate() {
            writer.ingesting.store(ingesting, Ordering::Relaxed);
            let started = Instant::now();
            let before = samples[side].len();
            while started.elapsed().as_secs_f64() < window
                || samples[side].len() - before < at_least.div_ceil(ROUNDS)
            {
                samples[side].push(run()?);
            }
            if ingesting {
                *busy_seconds += started.elapsed().as_secs_f64();
            }
        }
    }
    writer.ingesting.store(false, Ordering::Relaxed);
    Ok(samples)
}

/// Light p50/p99 (q4, q5, one thread) and heavy medians (q1, q7, `threads`), idle and
/// while ingesting, each side for about `seconds` per query: (idle, ingesting) reports.
pub(super) fn idle_and_ingesting(
    db: &Database,
    threads: usize,
    seconds: f64,
    next: &mut u64,
) -> Result<(Value, Value)> {
    let queries = crate::bench_lubm::default_queries();
    let text = |name: &str| -> Result<String> {
        Ok(queries
            .iter()
            .find(|(n, _)| n == name)
            .context("built-in query")?
            .1
            .clone())
    };
    let writer = Writer::default();
    let mut busy_seconds = 0.0;
    let first = *next;
    let (reports, last) = std::thread::scope(
        |scope| -> Result<([serde_json::Map<String, Value>; 2], u64)> {
            let ingest = scope.spawn(|| writer.run(db, first));
            let measured = (|| -> Result<[serde_json::Map<String, Value>; 2]> {
                let mut reports = [serde_json::Map::new(), serde_json::Map::new()];
                for name in ["q4", "q5"] {
                    let text = text(name)?;
                    let sides = alternate(&writer, &mut busy_seconds, seconds, 100, || {
                        query_us(db, &text, 1)
                    })?;
                    for (report, mut times) in reports.iter_mut().zip(sides) {
                        report.insert(
                        name.into(),
                        json!({"p50_us": percentile(&mut times, 0.5), "p99_us": percentile(&mut times, 0.99), "runs": times.len()}),
                    );
                    }
                }
                for name in ["q1", "q7"] {
                    let text = text(name)?;
                    // One run untimed, so that the first figure does not pay for cold pages.
                    query_us(db, &text, threads)?;
                    let sides = alternate(&writer, &mut busy_seconds, seconds, 10, || {
                        query_us(db, &text, threads)
                    })?;
                    for (report, mut times) in reports.iter_mut().zip(sides) {
                        report.insert(
                            name.into(),
                            json!({"median_us": percentile(&mut times, 0.5), "runs": times.len()}),
                        );
                    }
                }
                Ok(reports)
            })();
            writer.stop.store(true, Ordering::Relaxed);
            let last = ingest.join().expect("writer thread")?;
            Ok((measured?, last))
        },
    )?;
    *next = last;
    let [idle, ingesting] = reports;
    let rate = writer.ingested.load(Ordering::Relaxed) as f64 / busy_seconds;
    Ok((
        Value::Object(idle),
        json!({"queries": Value::Object(ingesting), "ingest_triples_per_second": rate}),
    ))
}
