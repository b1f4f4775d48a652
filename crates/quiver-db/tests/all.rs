//! The integration tests of `quiver-db`, one module per file of this folder, built as one
//! test binary: one link and one copy of the dependencies' generic code, where a binary
//! per file built them again for each (`autotests = false` in Cargo.toml). Run one
//! file's tests with `cargo test -p quiver-db --release --test all FILE::`.

mod common;

mod backup;
mod checkpoint;
mod crash;
mod durability;
mod fast_insert;
mod load;
mod reasoning;
mod reopen;
mod text;
mod torn;
