//! Running generated operations on an engine, timing every batch of operations.
//!
//! An engine is built and loaded with the initial keys first (untimed), then the
//! operations run in report batches of a million (Wiscer's "per batch of 1 M requests"); each
//! batch's time includes the engine's maintenance after it (rehashing, compaction), which
//! Wiscer leaves out: here a rehash or compaction shows as a dip. In batched mode, runs of
//! consecutive fetches (up to the batch size) go to [`Engine::fetch_batch`]; writes keep
//! their place in the sequence. Fetch digests are summed into a checksum, which must be
//! equal across engines for the same operations.

use std::hint::black_box;
use std::time::Instant;

use crate::dataset::Dataset;
use crate::engine::{Chained, ChainedVip, Engine, EngineKind, Hashbrown, Hot};
use crate::generate::{Generated, Op, OpKind};

/// Operations per reported batch (Wiscer's 1 M).
pub const REPORT_BATCH: usize = 1_000_000;

/// How to run.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Fetches per [`Engine::fetch_batch`] call; 0 or 1: one fetch at a time.
    pub batch: usize,
    /// Operations per reported batch.
    pub report_every: usize,
    /// Reads the process's resident memory in bytes, if the caller can: the run then
    /// reports its growth over the operations.
    pub resident_bytes: Option<fn() -> Option<u64>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            batch: 0,
            report_every: REPORT_BATCH,
            resident_bytes: None,
        }
    }
}

/// One reported batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatchPoint {
    pub ops: u64,
    pub seconds: f64,
}

impl BatchPoint {
    pub fn mops(&self) -> f64 {
        self.ops as f64 / self.seconds.max(1e-12) / 1e6
    }
}

/// The result of one engine on one workload.
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    pub engine: EngineKind,
    /// Fetch batch size (0: one at a time).
    pub batch: usize,
    pub load_seconds: f64,
    pub points: Vec<BatchPoint>,
    pub checksum: u64,
    /// Fetches that found nothing and deletes of absent keys (0 for a correct engine).
    pub misses: u64,
    /// Keys in the engine after the run.
    pub final_len: usize,
    /// The engine's notes ([`Engine::notes`]).
    pub notes: Option<String>,
    /// Growth of the process's resident memory over the operations, in bytes (what inserts
    /// add, less what deletes and compactions give back); `None` where it cannot be read
    /// ([`RunOptions::resident_bytes`]).
    pub memory_growth: Option<i64>,
}

impl RunStats {
    pub fn ops(&self) -> u64 {
        self.points.iter().map(|p| p.ops).sum()
    }

    pub fn seconds(&self) -> f64 {
        self.points.iter().map(|p| p.seconds).sum()
    }

    /// Throughput over the whole run, in millions of operations per second.
    pub fn mops(&self) -> f64 {
        self.ops() as f64 / self.seconds().max(1e-12) / 1e6
    }

    /// The engine's name, with the batch size when batched (`quiver x64`).
    pub fn label(&self) -> String {
        label(self.engine, self.batch)
    }
}

/// The column name of an engine run.
pub fn label(engine: EngineKind, batch: usize) -> String {
    if batch > 1 {
        format!("{} x{batch}", engine.name())
    } else {
        engine.name().to_owned()
    }
}

/// Builds engine `kind`, loads the initial keys and runs the operations of `generated`.
/// `progress` receives the operations done after each batch.
pub fn run<D: Dataset>(
    kind: EngineKind,
    dataset: &D,
    generated: &Generated,
    options: RunOptions,
    progress: &mut dyn FnMut(u64),
) -> RunStats {
    let started = Instant::now();
    let initial = generated.initial as usize;
    // Each engine is its own type, so the dispatch is monomorphised per arm.
    macro_rules! drive_with {
        ($engine:expr) => {{
            let mut engine = $engine;
            drive(
                kind,
                &mut engine,
                dataset,
                generated,
                options,
                started,
                progress,
            )
        }};
    }
    match kind {
        EngineKind::Chained => drive_with!(loaded(Chained::new(initial), dataset, generated)),
        EngineKind::ChainedVip => {
            drive_with!(loaded(ChainedVip::new(initial), dataset, generated))
        }
        EngineKind::Hashbrown => drive_with!(loaded(Hashbrown::new(initial), dataset, generated)),
        EngineKind::Quiver => drive_with!(dataset.quiver(generated)),
        EngineKind::QuiverVip => drive_with!(Hot::new(dataset.quiver(generated))),
    }
}

/// `engine` with the workload's initial keys inserted.
fn loaded<D: Dataset, E: Engine<D::Value>>(mut engine: E, dataset: &D, generated: &Generated) -> E {
    for slot in 0..generated.initial {
        engine.insert(dataset.key(slot), dataset.initial_value(slot));
    }
    engine.maintain();
    engine
}

#[inline]
fn write<D: Dataset, E: Engine<D::Value>>(
    engine: &mut E,
    dataset: &D,
    op: &Op,
    index: usize,
    misses: &mut u64,
) {
    match op.kind {
        OpKind::Insert | OpKind::Update => engine.insert(op.key, dataset.op_value(op, index)),
        OpKind::Delete => {
            if !engine.delete(op.key) {
                *misses += 1;
            }
        }
        OpKind::Fetch => {}
    }
}

#[inline(never)]
fn drive<D: Dataset, E: Engine<D::Value>>(
    kind: EngineKind,
    engine: &mut E,
    dataset: &D,
    generated: &Generated,
    options: RunOptions,
    started: Instant,
    progress: &mut dyn FnMut(u64),
) -> RunStats {
    let load_seconds = started.elapsed().as_secs_f64();
    let resident_bytes = || options.resident_bytes.and_then(|read| read());
    let resident_before = resident_bytes();
    let batch = if options.batch > 1 { options.batch } else { 0 };
    let report_every = options.report_every.max(1);
    let mut keys = Vec::with_capacity(batch);
    let mut found = Vec::with_capacity(batch);
    let (mut checksum, mut misses) = (0u64, 0u64);
    let mut points = Vec::with_capacity(generated.ops.len() / report_every + 1);
    for (number, chunk) in generated.ops.chunks(report_every).enumerate() {
        let first = number * report_every;
        let timer = Instant::now();
        if batch == 0 {
            for (j, op) in chunk.iter().enumerate() {
                if op.kind == OpKind::Fetch {
                    match engine.fetch(op.key) {
                        Some(digest) => checksum = checksum.wrapping_add(digest),
                        None => misses += 1,
                    }
                } else {
                    write(engine, dataset, op, first + j, &mut misses);
                }
            }
        } else {
            let mut j = 0;
            while j < chunk.len() {
                if chunk[j].kind != OpKind::Fetch {
                    write(engine, dataset, &chunk[j], first + j, &mut misses);
                    j += 1;
                    continue;
                }
                keys.clear();
                while j < chunk.len() && chunk[j].kind == OpKind::Fetch && keys.len() < batch {
                    keys.push(chunk[j].key);
                    j += 1;
                }
                engine.fetch_batch(&keys, &mut found);
                for digest in &found {
                    match digest {
                        Some(digest) => checksum = checksum.wrapping_add(*digest),
                        None => misses += 1,
                    }
                }
            }
        }
        engine.maintain();
        points.push(BatchPoint {
            ops: chunk.len() as u64,
            seconds: timer.elapsed().as_secs_f64(),
        });
        progress(chunk.len() as u64);
    }
    RunStats {
        engine: kind,
        batch,
        load_seconds,
        points,
        checksum: black_box(checksum),
        misses,
        final_len: engine.len(),
        notes: engine.notes(),
        memory_growth: resident_before
            .zip(resident_bytes())
            .map(|(before, after)| after as i64 - before as i64),
    }
}
