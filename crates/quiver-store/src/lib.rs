//! Quiver's graph store.
//!
//! A store is a [`Dictionary`](quiver_model::Dictionary) of terms, a small id space for
//! predicates and one for classes, and one [`GraphIndex`] per graph: the (vertex, predicate,
//! direction) → neighbours key/value index of Wukong, laid out as vertex-major records
//! ([`adjacency`]), plus the predicate index. Statistics for the planner are computed at
//! build time ([`stats`]); [`persist`] saves and reopens stores as snapshots. A store is
//! immutable: an update makes the next version from a [`ChangeSet`] ([`changes`],
//! `Store::apply`), sharing the old version's arrays and patching what changed, so readers
//! of the old version see it unchanged. A [`MutableGraph`] ([`mutable`]) puts a concurrent
//! delta over one graph index in place, for key/value workloads. A version may carry a
//! full-text index over its literals ([`text`]), which every later version shares.

pub mod adjacency;
mod apply;
pub mod build;
pub mod changes;
mod class_predicate;
mod compaction;
mod entailment;
mod entailment_update;
pub mod fold;
pub mod graph;
mod graph_files;
mod graph_update;
mod layout;
pub mod mutable;
pub mod partition;
pub mod partition_commit;
mod partition_info;
pub mod partition_stats;
mod patch;
pub mod persist;
mod rank;
mod reasoning;
mod record;
mod scratch;
mod sorted_tail;
pub mod stats;
pub mod store;
pub mod text;
mod triple_sort;
pub use triple_sort::sort_pairs;
mod validate;

pub use build::Presorted;
pub use changes::{ApplyError, ChangeSet, Quad};
pub use entailment::{Entailment, View};
pub use fold::ChangeFold;
pub use graph::{Direction, GraphIndex, Key};
pub use mutable::{MutableGraph, Neighbors, Reader};
#[doc(hidden)]
pub use patch::set_delta_record_words;
pub use persist::StoreError;
pub use quiver_reason::{Profile, Report, Round};
pub use stats::{ClassStats, PredicateStats};
pub use store::{EncodedGraphs, LoadInfo, Store};
pub use text::TextSearch;
