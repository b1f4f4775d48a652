//! Quiver's scale-out: basic graph patterns explored over a store cut into partitions
//! (`quiver_store::partition`), Wukong's fork-join execution.
//!
//! A query is planned once, on the coordinator's store; each basic graph pattern's steps
//! then run on the partitions. Before each step, the rows move to the partition that
//! holds what the step reads ([`route`]): the owner of the vertex it walks from, or every
//! partition when each holds a share (an index, a class's instances). [`LocalPartitions`]
//! runs the partitions in one process, moving rows between them in memory: the reference
//! that the processes of a cluster, exchanging rows over the network, must agree with.

pub mod buffers;
mod build_check;
pub mod connect;
mod counted;
pub mod dataflow;
mod dictionary;
mod direct;
mod fetch;
pub mod heartbeat;
mod in_place;
pub mod kept_replicas;
mod key_estimate;
mod lanes;
mod learnt;
mod line;
pub mod load;
pub mod local;
mod message;
mod pieces;
mod plans;
pub mod replicas;
pub mod route;
mod top_scan;
pub mod types;
pub mod window;
mod worker;

pub use connect::LoopbackPorts;
pub use dataflow::{ClusterConfig, InPlaceRuns, TimelyPartitions};
pub use local::LocalPartitions;
