//! A test hook that simulates a full disk under the log writer (read only with the
//! `fault-injection` feature, which only the tests turn on).
//!
//! Like the snapshot writer's hook, it reads `QUIVER_FAULT_WRITE_LIMIT` (a number of bytes
//! `N`) once per process: log appends of the process then share a budget of `N` bytes, the
//! append that would exceed it writes what still fits, and every write after it fails with
//! the error of a full disk (`ErrorKind::StorageFull`). The snapshot writer keeps a budget
//! of its own from the same variable. Unset, writes pass straight through.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

const WRITE_LIMIT_VAR: &str = "QUIVER_FAULT_WRITE_LIMIT";

enum Hook {
    Off,
    Limit(AtomicU64),
    Invalid(String),
}

fn hook() -> &'static Hook {
    static HOOK: OnceLock<Hook> = OnceLock::new();
    HOOK.get_or_init(|| match std::env::var(WRITE_LIMIT_VAR) {
        // Built without the tests' feature (every release binary): the variable is ignored.
        _ if !cfg!(feature = "fault-injection") => Hook::Off,
        Err(_) => Hook::Off,
        Ok(value) => match value.trim().parse::<u64>() {
            Ok(limit) => Hook::Limit(AtomicU64::new(limit)),
            Err(_) => Hook::Invalid(value),
        },
    })
}

/// Writes all of `bytes` to `file` at its current position, drawing on the budget.
pub(crate) fn write_all(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    let budget = match hook() {
        Hook::Off => return file.write_all(bytes),
        Hook::Limit(budget) => budget,
        Hook::Invalid(value) => {
            let message = format!("{WRITE_LIMIT_VAR}={value:?} is not a number of bytes");
            return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
        }
    };
    let mut granted = 0;
    let _ = budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        granted = left.min(bytes.len() as u64);
        Some(left - granted)
    });
    file.write_all(&bytes[..granted as usize])?;
    if (granted as usize) < bytes.len() {
        return Err(io::Error::new(
            io::ErrorKind::StorageFull,
            format!("No space left on device (simulated by {WRITE_LIMIT_VAR})"),
        ));
    }
    Ok(())
}
