//! The integration tests of `quiver-store`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-store --release --test all FILE::`.

mod support;

mod crafted;
mod mutable;
mod named_graph_packs;
mod partition;
mod stretches;
mod versions;
