//! Key/value workloads on Quiver's graph index (`quiver bench kv`).
//!
//! The graph index is a key/value store: key (vertex, predicate, direction), value the
//! sorted neighbour list. This crate measures it under Wiscer-style point-query workloads
//! (Zipf-skewed fetches, inserts, deletes, popularity shifts) against hash tables, on
//! synthetic 8-byte keys or on the real keys of a store:
//!
//! - [`workload`]: Wiscer's `key=value` workload files and the seven built-in workloads;
//! - [`zipf`]: Zipf ranks by rejection-inversion sampling, for any exponent ≥ 0;
//! - [`generate`]: the operations, generated before timing from one seed ([`rng`]);
//! - [`dataset`]: synthetic keys or a store's keys with their neighbour lists;
//! - [`engine`]: chained hashing, chained hashing with VIP reordering, `hashbrown`, the
//!   mutable graph index, and a popularity-aware hot table in front of it;
//! - [`runner`] and [`report`]: timing per batch of a million operations, the table, CSV.

pub mod dataset;
pub mod engine;
pub mod generate;
pub mod report;
pub mod rng;
pub mod runner;
pub mod workload;
pub mod zipf;

pub use dataset::{Dataset, RealKeys, Synthetic};
pub use engine::{Engine, EngineKind, Value};
pub use generate::{generate, Generated, Op, OpKind, Popularity};
pub use runner::{run, RunOptions, RunStats};
pub use workload::{Workload, WorkloadError};

/// Errors of generating or running a workload.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KvError {
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    #[error("the workload needs {needed} keys but only {available} are available")]
    TooFewKeys { needed: u64, available: u64 },
    #[error("too many operations to hold in memory")]
    TooManyOperations,
    #[error("zipf exponent {0} is not a finite number >= 0")]
    BadExponent(f64),
    #[error("a key of the store does not fit in 64 bits (vertex ids above 2^32 or predicate ids above 2^31)")]
    KeyTooWide,
}
