//! A test hook that simulates a full disk under the log writer (read only with the
//! `fault-injection` feature, which only the tests turn on).
//!
//! Like the snapshot writer's hook, it reads `QUIVER_FAULT_WRITE_LIMIT` (a number of bytes
//! `N`): log appends of the process then share a budget of `N` bytes, the append that
//! would exceed it writes what still fits, and every write after it fails with the error
//! of a full disk (`ErrorKind::StorageFull`). The snapshot writer keeps a budget of its
//! own from the same variable ([`quiver_snapshot::WriteBudget`]). Unset, writes pass
//! straight through.

use std::fs::File;
use std::io::{self, Write};

use quiver_snapshot::WriteBudget;

/// The budget the log's appends share.
static LOG: WriteBudget = WriteBudget::new();

/// Writes all of `bytes` to `file` at its current position, drawing on the budget.
pub(crate) fn write_all(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    if !cfg!(feature = "fault-injection") {
        return file.write_all(bytes);
    }
    LOG.write_all(file, bytes)
}
