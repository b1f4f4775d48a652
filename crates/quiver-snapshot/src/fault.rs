//! A test hook that simulates a full disk under the snapshot writer (read only with the
//! `fault-injection` feature, which only the tests turn on).
//!
//! When the environment variable `QUIVER_FAULT_WRITE_LIMIT` holds a number of bytes `N`,
//! the snapshot writers of the process share a budget of `N` bytes: the write that would
//! exceed it writes what still fits, and every write after it fails with the error of a
//! full disk (`ErrorKind::StorageFull`, "No space left on device"). Tests use it to check
//! that a full disk at any point of a save fails cleanly and leaves the previous store
//! intact, on every machine, without mounting a small filesystem. The variable is read
//! once per process; when it is unset, writes pass straight through.

use std::fs::File;
use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The environment variable holding the byte budget.
const WRITE_LIMIT_VAR: &str = "QUIVER_FAULT_WRITE_LIMIT";

/// The hook's state, read from the environment once.
enum Hook {
    Off,
    /// The bytes still writable.
    Limit(AtomicU64),
    /// The variable is set but holds no number: every write fails saying so.
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

/// Takes up to `wanted` bytes from the budget; returns how many were granted.
fn take(budget: &AtomicU64, wanted: u64) -> u64 {
    let mut granted = 0;
    let _ = budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        granted = left.min(wanted);
        Some(left - granted)
    });
    granted
}

fn disk_full() -> io::Error {
    io::Error::new(
        io::ErrorKind::StorageFull,
        format!("No space left on device (simulated by {WRITE_LIMIT_VAR})"),
    )
}

/// A file whose writes draw on the budget when the hook is on.
pub(crate) struct LimitedFile(File);

impl LimitedFile {
    pub(crate) fn new(file: File) -> Self {
        LimitedFile(file)
    }

    /// The file itself, for operations that write no data (`sync_all`).
    pub(crate) fn file(&self) -> &File {
        &self.0
    }
}

impl LimitedFile {
    /// Writes as much of `buf` as the budget and the file take, with `write` (at the
    /// file's position, `None`) or at `offset`.
    fn limited(&self, buf: &[u8], offset: Option<u64>) -> io::Result<usize> {
        let write = |buf: &[u8]| match offset {
            Some(offset) => positioned_write(&self.0, buf, offset),
            None => (&self.0).write(buf),
        };
        let budget = match hook() {
            Hook::Off => return write(buf),
            Hook::Limit(budget) => budget,
            Hook::Invalid(value) => {
                let message = format!("{WRITE_LIMIT_VAR}={value:?} is not a number of bytes");
                return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
            }
        };
        if buf.is_empty() {
            return Ok(0);
        }
        let granted = take(budget, buf.len() as u64) as usize;
        if granted == 0 {
            return Err(disk_full());
        }
        let result = write(&buf[..granted]);
        // Give back what the file did not take, so the budget counts bytes on disk.
        let written = *result.as_ref().unwrap_or(&0);
        budget.fetch_add((granted - written) as u64, Ordering::Relaxed);
        result
    }

    /// Writes as much of `buf` at `offset` as the budget and the file take (`pwrite`).
    pub(crate) fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        self.limited(buf, Some(offset))
    }

    /// Writes all of `buf` at `offset`.
    pub(crate) fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// `pwrite`: writes at `offset` without moving the file's position.
#[cfg(unix)]
fn positioned_write(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::write_at(file, buf, offset)
}

#[cfg(windows)]
fn positioned_write(file: &File, buf: &[u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_write(file, buf, offset)
}

impl Write for LimitedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.limited(buf, None)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_grants_what_is_left_and_then_nothing() {
        let budget = AtomicU64::new(10);
        assert_eq!(take(&budget, 4), 4);
        assert_eq!(take(&budget, 8), 6);
        assert_eq!(take(&budget, 1), 0);
        assert_eq!(budget.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_simulated_error_reads_like_a_full_disk() {
        let error = disk_full();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert!(error.to_string().starts_with("No space left on device"));
    }
}
