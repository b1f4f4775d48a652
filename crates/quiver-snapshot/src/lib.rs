//! Quiver's snapshot files: how a store's arrays are saved to and reopened from disk.
//!
//! A store is a directory. Its data are large arrays of plain-old-data values plus a
//! small JSON metadata value. [`SnapshotWriter`] streams the arrays as named *sections*
//! into a few data files and commits them atomically; [`SnapshotReader`] memory-maps the
//! files, verifies everything once at open, then hands out zero-copy
//! [`quiver_model::Column`] views.
//!
//! Guarantees:
//! - **Atomic, durable commits.** Files are written under temporary names, fsynced and
//!   renamed; the generation becomes current only when `manifest.json` is replaced. A
//!   crash, full disk or error at any point leaves the previous generation intact and
//!   openable, and never a store that looks complete but is not.
//! - **Verified reads.** Truncated, corrupted (any flipped byte) or foreign-version
//!   files are refused at open with an error naming the file; decoding never panics.
//! - **A full disk, simulated.** The test hook `QUIVER_FAULT_WRITE_LIMIT=N` (see the
//!   `fault` module) makes the writers of a process fail like a full disk after N bytes.
//!
//! The layout is described in the `format` module: each data file
//! `<file>-<generation>.qvs` has a 64-byte header followed by 8-aligned sections; the
//! checksummed JSON manifest lists every file's size and every section's offset, length
//! and crc32, and carries the metadata. Values are stored in native byte order (the
//! store is a cache of its source data, not an interchange format); the header records
//! it, and a file from a machine of the other byte order is refused.

mod checksum;
mod data_file;
mod error;
mod fault;
mod format;
mod reader;
pub mod rewrite;
mod writer;

pub use error::SnapshotError;
/// The full-disk test hook's budget, which `quiver-db`'s log draws on too.
#[doc(hidden)]
pub use fault::{disk_full, WriteBudget};
pub use reader::{manifest_digest, SnapshotReader};
pub use writer::{FileSections, SnapshotWriter};

/// Version of the on-disk format written and read by this build.
pub const FORMAT_VERSION: u32 = 1;
