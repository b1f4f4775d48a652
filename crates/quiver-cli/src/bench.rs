//! `quiver bench`: benchmarks that write their figures as text and JSON.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, Subcommand};
use quiver_model::Id;
use quiver_store::{Direction, Key, Store};
use serde_json::json;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// The LUBM query table (q1–q12, opt1, agg1, path1), optionally beside Oxigraph
    Lubm(crate::bench_lubm::LubmBenchArgs),
    /// Point lookups on the graph index: single `get` latency and batched throughput
    Index(IndexArgs),
    /// Key/value workloads (Wiscer-style) on the graph index beside hash tables
    Kv(crate::bench_kv::KvArgs),
    /// Throughput emulator: many clients sending the LUBM template mix
    Emulate(crate::bench_emulate::EmulateArgs),
    /// Thread scaling of the heavy queries: speedup per thread count, CSV and plot
    Scale(crate::bench_scale::ScaleArgs),
    /// The write path: INSERT DATA, group commit, DELETE/INSERT WHERE, queries during
    /// ingest, checkpoint and reopen, optionally beside Oxigraph's persistent store
    Update(crate::bench_update::UpdateBenchArgs),
    /// Nanoseconds per row to write a query's solutions in each tabular format, by the
    /// streaming writers beside the sparesults path they replaced
    Serialize(crate::bench_serialize::SerializeArgs),
    /// A query log (one query per line, a JSON list or a directory of .rq), each query
    /// under a time and memory limit, optionally beside Oxigraph: statuses, latency
    /// distribution, errors by message, the queries much slower than Oxigraph
    Log(crate::bench_log::LogBenchArgs),
    /// The Berlin SPARQL Benchmark: explore and business-intelligence query mixes by N
    /// clients, in process or against any SPARQL endpoint; QMpH and per-query times
    Bsbm(crate::bench_bsbm::BsbmBenchArgs),
    /// The full-text index: build time and size, word, prefix, CONTAINS and REGEX queries
    /// through it beside the same questions scanning the literals
    Text(crate::bench_text::TextBenchArgs),
}

#[derive(Args, Debug)]
pub struct IndexArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Number of distinct random keys
    #[arg(long, default_value_t = 1 << 20)]
    pub keys: usize,
    /// Keys per batch (for both the timing of single lookups and `get_many`)
    #[arg(long, default_value_t = 1024)]
    pub batch: usize,
    /// Measured passes over all keys (the median pass is reported)
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Seed of the key sample
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the figures as JSON to this file
    #[arg(long)]
    pub json: Option<PathBuf>,
}

pub fn run(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Index(args) => index(args),
        BenchCommand::Kv(args) => crate::bench_kv::run(args),
        BenchCommand::Lubm(args) => crate::bench_lubm::run(args),
        BenchCommand::Emulate(args) => crate::bench_emulate::run(args),
        BenchCommand::Scale(args) => crate::bench_scale::run(args),
        BenchCommand::Update(args) => crate::bench_update::run(args),
        BenchCommand::Serialize(args) => crate::bench_serialize::run(args),
        BenchCommand::Log(args) => crate::bench_log::run(args),
        BenchCommand::Bsbm(args) => crate::bench_bsbm::run(args),
        BenchCommand::Text(args) => crate::bench_text::run(args),
    }
}

/// xorshift64*: a tiny deterministic generator for sampling keys.
struct Sampler(u64);

impl Sampler {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Random existing keys: a random vertex, direction and one of its predicates.
fn sample_keys(store: &Store, count: usize, seed: u64) -> Vec<Key> {
    let graph = store.graph();
    let mut sampler = Sampler(seed.max(1));
    let mut keys = Vec::with_capacity(count);
    let terms = store.terms().max(1);
    let mut attempts = 0u64;
    while keys.len() < count && attempts < count as u64 * 100 {
        attempts += 1;
        let vertex = (sampler.next() % terms) as Id;
        let direction = if sampler.next() & 1 == 0 {
            Direction::Out
        } else {
            Direction::In
        };
        let record = graph.edges(vertex, direction);
        if record.is_empty() {
            continue;
        }
        let (predicate, _) = record.entry((sampler.next() % record.len() as u64) as usize);
        keys.push(Key {
            vertex,
            predicate,
            direction,
        });
    }
    keys
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn index(args: IndexArgs) -> Result<()> {
    let store = crate::location::open_snapshot(&args.location)?;
    let graph = store.graph();
    let keys = sample_keys(&store, args.keys, args.seed);
    anyhow::ensure!(!keys.is_empty(), "the store has no edges to look up");
    let batch = args.batch.max(1);

    // Warm the pages of a mapped store once.
    let mut checksum = 0usize;
    for key in &keys {
        checksum += graph.get_key(*key).len();
    }

    let mut single_ns = Vec::new(); // per-lookup time of each batch, one at a time
    let mut single_pass = Vec::new();
    let mut batched_pass = Vec::new();
    let mut out = Vec::with_capacity(batch);
    for _ in 0..args.runs.max(1) {
        let pass = Instant::now();
        for chunk in keys.chunks(batch) {
            let started = Instant::now();
            for key in chunk {
                checksum += black_box(graph.get_key(*key)).len();
            }
            single_ns.push(started.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
        single_pass.push(pass.elapsed().as_secs_f64());

        let pass = Instant::now();
        for chunk in keys.chunks(batch) {
            graph.get_many(chunk, &mut out);
            checksum += black_box(&out).iter().map(|n| n.len()).sum::<usize>();
        }
        batched_pass.push(pass.elapsed().as_secs_f64());
    }
    let single_median_ns = median(&mut single_ns);
    let single_mops = keys.len() as f64 / median(&mut single_pass) / 1e6;
    let batched_mops = keys.len() as f64 / median(&mut batched_pass) / 1e6;
    println!(
        "{} keys over {} triples: get median {:.1} ns/lookup ({:.1} M lookups/s); get_many (batch {}) {:.1} M lookups/s, {:.2}x",
        keys.len(),
        store.triples(),
        single_median_ns,
        single_mops,
        batch,
        batched_mops,
        batched_mops / single_mops
    );
    black_box(checksum);
    if let Some(path) = args.json {
        let report = json!({
            "store": args.location.display().to_string(),
            "triples": store.triples(),
            "keys": keys.len(),
            "batch": batch,
            "runs": args.runs,
            "get_median_ns": single_median_ns,
            "get_mlookups_per_s": single_mops,
            "get_many_mlookups_per_s": batched_mops,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&report)? + "\n")?;
    }
    Ok(())
}
