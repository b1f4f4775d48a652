//! The integration tests of `quiver-kv`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-kv --release --test all FILE::`.

mod engines;
mod generate;
mod workload;
