//! The checks behind Quiver's fuzz targets.
//!
//! Each target is a function from arbitrary bytes to nothing that panics when Quiver
//! misbehaves: a panic inside Quiver, an error where a reference accepts the input, or an
//! answer that differs from a reference's. The cargo-fuzz crate (`fuzz/`, outside the
//! workspace) calls them from `fuzz_target!`, and `tests/corpus.rs` replays every file of
//! the checked-in corpus through the same functions on stable Rust, so a crash once found
//! stays fixed.

mod fixture;
pub mod http;
pub mod load;
pub mod query;
pub mod snapshot;

/// A check: panics when Quiver misbehaves on the input.
pub type Check = fn(&[u8]);

/// Every target: its name (the fuzz target and the corpus directory) and its check.
pub const TARGETS: &[(&str, Check)] = &[
    ("load_ntriples", load::ntriples),
    ("load_turtle", load::turtle),
    ("load_nquads", load::nquads),
    ("query", query::query),
    ("results", query::results),
    ("snapshot_open", snapshot::open),
    ("http_request", http::request),
];

/// The check of the target `name`.
pub fn target(name: &str) -> Option<Check> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
}
