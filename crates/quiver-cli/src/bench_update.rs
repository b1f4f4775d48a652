//! `quiver bench update`: the write path on LUBM-N, optionally beside Oxigraph's
//! persistent store (pyoxigraph `Store(path)`) doing the same work in the same run.
//!
//! Every figure is timed from SPARQL text to an acknowledged commit (parse, evaluate,
//! apply, log, sync), like Oxigraph's `store.update(text)`:
//! - `INSERT DATA` throughput in batches of 1, 100 and 10,000 new triples under
//!   `--sync=always` and `--sync=batch`, each from a checkpointed store (an empty log), and
//!   single-triple commits from 16 writer threads (group commit: they share fsyncs);
//! - one `DELETE/INSERT … WHERE` over the ~100 K graduate students' e-mail addresses;
//! - light (q4, q5: p50/p99) and heavy (q1, q7: median) query latency, query text to TSV,
//!   on an idle store and while a writer ingests a steady 100 K triples/s (1,000-triple
//!   commits every 10 ms), Wukong's ingest-while-querying experiment, in alternating
//!   windows after a checkpoint (see `latency.rs`);
//! - the log's size, a checkpoint's time and the log after it;
//! - reopening with a log of `--log-mib` (churn: the same triples inserted and deleted).

mod latency;
mod oxigraph;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use quiver_db::{Database, DbOptions, SyncMode};
use quiver_sparql::ExecOptions;
use serde_json::{json, Value};

#[derive(Args, Debug)]
pub struct UpdateBenchArgs {
    /// LUBM-N: number of universities
    #[arg(short, long, default_value_t = 1)]
    pub universities: u32,
    /// Where cached stores live (shared with `bench lubm`)
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Worker threads for heavy queries (default: all cores)
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seconds each throughput figure runs for (at least a few commits)
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Size of the log to reopen with, in MiB (0: skip that figure)
    #[arg(long, default_value_t = 1024)]
    pub log_mib: u64,
    /// Also run the same work in pyoxigraph's persistent store
    #[arg(long)]
    pub compare_oxigraph: bool,
    /// Write the figures as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
}

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";

/// `INSERT DATA` of `count` new triples numbered from `first`.
pub(crate) fn insert_data(first: u64, count: u64) -> String {
    let mut text = String::with_capacity(96 * count as usize + 32);
    text.push_str("INSERT DATA {\n");
    for n in first..first + count {
        text.push_str(&format!(
            "<http://bench.quiver.example/s{n}> <{UB}name> \"bench {n}\" .\n"
        ));
    }
    text.push('}');
    text
}

/// The DELETE/INSERT WHERE of the benchmark (about 1,000 matches per university).
pub(crate) const DELETE_INSERT: &str =
    "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
DELETE { ?s ub:emailAddress ?e } INSERT { ?s ub:mail ?e }
WHERE { ?s a ub:GraduateStudent ; ub:emailAddress ?e }";

fn sync_name(sync: SyncMode) -> &'static str {
    match sync {
        SyncMode::Always => "always",
        SyncMode::Batch => "batch",
        SyncMode::None => "none",
    }
}

/// A fresh copy of the cached LUBM-N store in `dir` (a database of its own), synced, so
/// that writing the copy back does not fall into the first commits' fsyncs.
fn fresh_copy(source: &Path, dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(source)? {
        let entry = entry?;
        let target = dir.join(entry.file_name());
        std::fs::copy(entry.path(), &target)?;
        std::fs::File::open(&target)?.sync_all()?;
    }
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

fn open(dir: &Path, sync: SyncMode) -> Result<Database> {
    Database::open(
        dir,
        DbOptions {
            sync,
            ..DbOptions::default()
        },
    )
    .with_context(|| format!("opening {}", dir.display()))
}

fn update(db: &Database, text: &str) -> Result<()> {
    db.update(text, None, &ExecOptions::default())?;
    Ok(())
}

/// Commits of `batch` triples for about `seconds` of commit time (the request texts are
/// made outside the timed span): (triples/s, commits/s, commits).
fn insert_throughput(db: &Database, batch: u64, seconds: f64, next: &mut u64) -> Result<Value> {
    let mut elapsed = 0.0;
    let mut commits = 0u64;
    while elapsed < seconds || commits < 3 {
        let text = insert_data(*next, batch);
        *next += batch;
        let started = Instant::now();
        update(db, &text)?;
        elapsed += started.elapsed().as_secs_f64();
        commits += 1;
    }
    Ok(json!({
        "batch": batch,
        "commits": commits,
        "triples_per_second": (commits * batch) as f64 / elapsed,
        "commits_per_second": commits as f64 / elapsed,
    }))
}

/// Single-triple commits from `writers` threads for about `seconds`.
fn group_commit(db: &Database, writers: u64, seconds: f64, base: u64) -> Result<Value> {
    let commits = AtomicU64::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let commits = &commits;
                scope.spawn(move || -> Result<()> {
                    let mut n = base + w * 1_000_000_000;
                    while started.elapsed().as_secs_f64() < seconds {
                        update(db, &insert_data(n, 1))?;
                        n += 1;
                        commits.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        for handle in handles {
            handle.join().expect("writer thread")?;
        }
        Ok(())
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let commits = commits.load(Ordering::Relaxed);
    Ok(
        json!({"writers": writers, "commits": commits, "commits_per_second": commits as f64 / elapsed}),
    )
}

pub fn run(args: UpdateBenchArgs) -> Result<()> {
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let cache = args
        .cache
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join("quiver-bench-cache"));
    crate::bench_lubm::cached_store(args.universities, &cache, threads)?;
    let source = cache.join(format!("lubm-{}", args.universities));
    let work = cache.join(format!("update-{}", args.universities));
    let mut report = serde_json::Map::new();
    let mut next = 0u64;

    let mut inserts = Vec::new();
    for sync in [SyncMode::Always, SyncMode::Batch] {
        fresh_copy(&source, &work)?;
        let db = open(&work, sync)?;
        for batch in [1, 100, 10_000] {
            // Each figure starts from an empty log: the previous figure's log would
            // otherwise start an automatic checkpoint inside this one.
            db.checkpoint()?;
            let mut figure = insert_throughput(&db, batch, args.seconds, &mut next)?;
            figure["sync"] = json!(sync_name(sync));
            eprintln!("INSERT DATA: {figure}");
            inserts.push(figure);
        }
    }
    report.insert("insert_data".into(), json!(inserts));

    fresh_copy(&source, &work)?;
    let db = open(&work, SyncMode::Always)?;
    let figure = group_commit(&db, 16, args.seconds, 1 << 40)?;
    eprintln!("group commit: {figure}");
    report.insert("group_commit".into(), figure);

    let before = db.snapshot().triples();
    let started = Instant::now();
    update(&db, DELETE_INSERT)?;
    let seconds = started.elapsed().as_secs_f64();
    let figure = json!({"seconds": seconds, "triples_before": before, "triples_after": db.snapshot().triples()});
    eprintln!("DELETE/INSERT WHERE: {figure}");
    report.insert("delete_insert_where".into(), figure);

    // Idle and ingesting latencies from the same state: an empty log, and no automatic
    // checkpoint due within the measurement.
    db.checkpoint()?;
    let (idle, ingest) = latency::idle_and_ingesting(&db, threads, args.seconds, &mut next)?;
    eprintln!("idle: {idle}");
    eprintln!("under ingest: {ingest}");
    report.insert("idle".into(), idle);
    report.insert("under_ingest".into(), ingest);

    let log_before = db.wal_bytes();
    let started = Instant::now();
    db.checkpoint()?;
    let figure = json!({"seconds": started.elapsed().as_secs_f64(), "log_bytes_before": log_before, "log_bytes_after": db.wal_bytes()});
    eprintln!("checkpoint: {figure}");
    report.insert("checkpoint".into(), figure);
    drop(db);

    if args.log_mib > 0 {
        fresh_copy(&source, &work)?;
        // No automatic checkpoint, which would fold the log before it grows this large.
        let db = Database::open(
            &work,
            DbOptions {
                sync: SyncMode::None,
                checkpoint_bytes: u64::MAX,
                ..DbOptions::default()
            },
        )?;
        let insert = insert_data(0, 10_000);
        let delete = insert.replacen("INSERT DATA", "DELETE DATA", 1);
        while db.wal_bytes() < args.log_mib << 20 {
            update(&db, &insert)?;
            update(&db, &delete)?;
        }
        let log = db.wal_bytes();
        drop(db);
        let started = Instant::now();
        let db = open(&work, SyncMode::Always)?;
        let figure = json!({"log_bytes": log, "reopen_seconds": started.elapsed().as_secs_f64(), "triples": db.snapshot().triples()});
        eprintln!("reopen: {figure}");
        report.insert("reopen".into(), figure);
    }
    std::fs::remove_dir_all(&work).ok();

    if args.compare_oxigraph {
        let peer = oxigraph::run(args.universities, &cache, args.seconds)?;
        report.insert("oxigraph".into(), peer);
    }
    let report = Value::Object(report);
    println!("{}", render(&report));
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}

/// The report as a Markdown table, Oxigraph's figure beside Quiver's where it applies.
fn render(report: &Value) -> String {
    let peer = &report["oxigraph"];
    let mut rows = vec![
        "| figure | Quiver | Oxigraph |".to_string(),
        "|---|---:|---:|".to_string(),
    ];
    let num = |v: &Value| v.as_f64().map_or("–".into(), |x| format!("{x:.0}"));
    for figure in report["insert_data"].as_array().into_iter().flatten() {
        let batch = figure["batch"].as_u64().unwrap_or(0);
        let sync = figure["sync"].as_str().unwrap_or("");
        let theirs = peer["insert_data"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["batch"].as_u64() == Some(batch)))
            .map_or(Value::Null, |f| f["triples_per_second"].clone());
        rows.push(format!(
            "| INSERT DATA, {batch} per commit, sync {sync}: triples/s | {} | {} |",
            num(&figure["triples_per_second"]),
            num(&theirs)
        ));
    }
    rows.push(format!(
        "| 16 writers, 1 triple per commit: commits/s | {} | {} |",
        num(&report["group_commit"]["commits_per_second"]),
        num(&peer["group_commit"]["commits_per_second"])
    ));
    rows.push(format!(
        "| DELETE/INSERT WHERE (graduate students' e-mail): ms | {} | {} |",
        num(&json!(
            report["delete_insert_where"]["seconds"]
                .as_f64()
                .unwrap_or(0.0)
                * 1e3
        )),
        num(&json!(peer["delete_insert_where"]["seconds"]
            .as_f64()
            .map(|s| s * 1e3)))
    ));
    for phase in ["idle", "under_ingest"] {
        let ours = if phase == "idle" {
            &report[phase]
        } else {
            &report[phase]["queries"]
        };
        let theirs = if phase == "idle" {
            &peer[phase]
        } else {
            &peer[phase]["queries"]
        };
        for (q, key) in [
            ("q4", "p50_us"),
            ("q4", "p99_us"),
            ("q5", "p50_us"),
            ("q5", "p99_us"),
            ("q1", "median_us"),
            ("q7", "median_us"),
        ] {
            rows.push(format!(
                "| {phase}: {q} {key} | {} | {} |",
                num(&ours[q][key]),
                num(&theirs[q][key])
            ));
        }
    }
    rows.push(format!(
        "| ingest rate achieved under queries: triples/s | {} | {} |",
        num(&report["under_ingest"]["ingest_triples_per_second"]),
        num(&peer["under_ingest"]["ingest_triples_per_second"])
    ));
    rows.push(format!(
        "| checkpoint: s (log bytes before → after) | {:.2} ({} → {}) | – |",
        report["checkpoint"]["seconds"].as_f64().unwrap_or(0.0),
        report["checkpoint"]["log_bytes_before"],
        report["checkpoint"]["log_bytes_after"]
    ));
    if !report["reopen"].is_null() {
        rows.push(format!(
            "| reopen with a {} MiB log: s | {:.2} | – |",
            report["reopen"]["log_bytes"].as_u64().unwrap_or(0) >> 20,
            report["reopen"]["reopen_seconds"].as_f64().unwrap_or(0.0)
        ));
    }
    rows.join("\n")
}
