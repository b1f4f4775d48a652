//! The integration tests of `quiver-cluster`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-cluster --release --test all FILE::`.

mod common;

mod cluster_processes;
mod counted_aggregates;
mod distributed_load;
mod exchange;
mod explain;
mod partitioned_queries;
mod planning;
mod w3c_suite;
