//! Quiver's graph store.
//!
//! A store is a [`Dictionary`](quiver_model::Dictionary) of terms, a small id space for
//! predicates and one for classes, and one [`GraphIndex`] per graph: the (vertex, predicate,
//! direction) → neighbours key/value index of Wukong, laid out as vertex-major records
//! ([`adjacency`]), plus the predicate index. Statistics for the planner are computed at
//! build time ([`stats`]); [`persist`] saves and reopens stores as snapshots. A
//! [`MutableGraph`] ([`mutable`]) puts a concurrent delta over a graph index so that it
//! accepts inserts and deletes while readers run, folded into a new base by compaction.

pub mod adjacency;
mod apply;
pub mod build;
pub mod changes;
mod compaction;
pub mod graph;
mod graph_update;
pub mod mutable;
mod patch;
pub mod persist;
pub mod stats;
pub mod store;
mod validate;

pub use changes::{ApplyError, ChangeSet, Quad};
pub use graph::{Direction, GraphIndex, Key};
pub use mutable::{MutableGraph, Neighbors, Reader};
#[doc(hidden)]
pub use patch::set_delta_record_words;
pub use persist::StoreError;
pub use stats::{ClassStats, PredicateStats};
pub use store::{EncodedGraphs, LoadInfo, Store};
