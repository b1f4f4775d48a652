//! A test hook that simulates a full disk under the snapshot writer (read only with the
//! `fault-injection` feature, which only the tests turn on).
//!
//! When the environment variable `QUIVER_FAULT_WRITE_LIMIT` holds a number of bytes `N`,
//! the snapshot writers of the process share a budget of `N` bytes: the write that would
//! exceed it writes what still fits, and every write after it fails with the error of a
//! full disk (`ErrorKind::StorageFull`, "No space left on device"). Tests use it to check
//! that a full disk at any point of a save fails cleanly and leaves the previous store
//! intact, on every machine, without mounting a small filesystem. The variable is read
//! once per budget; when it is unset, writes pass straight through. [`WriteBudget`] is
//! public (hidden) so that `quiver-db`'s log writer keeps a budget of its own the same way.

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

/// A budget of bytes that the writes drawing on it share, read from
/// `QUIVER_FAULT_WRITE_LIMIT` the first time it is drawn on (with the `fault-injection`
/// feature; without it, or with the variable unset, writes pass straight through). Each
/// writer that must fail on its own keeps its own budget in a static: the snapshot
/// writers share [`SNAPSHOT`], and `quiver-db`'s log has its own.
#[doc(hidden)]
pub struct WriteBudget(OnceLock<Hook>);

impl Default for WriteBudget {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteBudget {
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    fn hook(&self) -> &Hook {
        self.0.get_or_init(|| match std::env::var(WRITE_LIMIT_VAR) {
            // Built without the tests' feature (every release binary): the variable is
            // ignored.
            _ if !cfg!(feature = "fault-injection") => Hook::Off,
            Err(_) => Hook::Off,
            Ok(value) => match value.trim().parse::<u64>() {
                Ok(limit) => Hook::Limit(AtomicU64::new(limit)),
                Err(_) => Hook::Invalid(value),
            },
        })
    }

    /// How many of `wanted` bytes may be written: `None` when the hook is off (write as
    /// usual), else what is left of the budget, up to `wanted`, taken from it; an error
    /// when the variable holds no number.
    pub fn grant(&self, wanted: usize) -> io::Result<Option<usize>> {
        match self.hook() {
            Hook::Off => Ok(None),
            Hook::Limit(budget) => Ok(Some(take(budget, wanted as u64) as usize)),
            Hook::Invalid(value) => {
                let message = format!("{WRITE_LIMIT_VAR}={value:?} is not a number of bytes");
                Err(io::Error::new(io::ErrorKind::InvalidInput, message))
            }
        }
    }

    /// Gives back bytes granted and not written, so that the budget counts bytes on disk.
    pub fn give_back(&self, bytes: usize) {
        if let Hook::Limit(budget) = self.hook() {
            budget.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    /// Writes all of `bytes` to `file` at its current position, drawing on the budget:
    /// what fits is written, and then the error of a full disk.
    pub fn write_all(&self, file: &mut File, bytes: &[u8]) -> io::Result<()> {
        let Some(granted) = self.grant(bytes.len())? else {
            return file.write_all(bytes);
        };
        file.write_all(&bytes[..granted])?;
        if granted < bytes.len() {
            return Err(disk_full());
        }
        Ok(())
    }
}

/// The budget the snapshot writers share.
static SNAPSHOT: WriteBudget = WriteBudget::new();

/// Takes up to `wanted` bytes from the budget; returns how many were granted.
fn take(budget: &AtomicU64, wanted: u64) -> u64 {
    let mut granted = 0;
    let _ = budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        granted = left.min(wanted);
        Some(left - granted)
    });
    granted
}

/// The error of a full disk, as the hook simulates it.
#[doc(hidden)]
pub fn disk_full() -> io::Error {
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
        if buf.is_empty() {
            return write(buf);
        }
        let Some(granted) = SNAPSHOT.grant(buf.len())? else {
            return write(buf);
        };
        if granted == 0 {
            return Err(disk_full());
        }
        let result = write(&buf[..granted]);
        // Give back what the file did not take, so the budget counts bytes on disk.
        let written = *result.as_ref().unwrap_or(&0);
        SNAPSHOT.give_back(granted - written);
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

    /// A budget of 10 bytes: a write of 6 passes, the next writes the 4 left and fails
    /// like a full disk, and what is given back may be written again.
    #[test]
    fn a_budget_writes_what_fits_then_fails_like_a_full_disk() {
        let budget = WriteBudget(OnceLock::from(Hook::Limit(AtomicU64::new(10))));
        let dir = std::env::temp_dir().join(format!("quiver-budget-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("file");
        let mut file = File::create(&path).unwrap();
        budget.write_all(&mut file, b"abcdef").unwrap();
        let error = budget.write_all(&mut file, b"ghijkl").unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdefghij");
        assert_eq!(budget.grant(5).unwrap(), Some(0));
        budget.give_back(3);
        assert_eq!(budget.grant(5).unwrap(), Some(3));
        // Off, it grants nothing and writes pass straight through.
        let off = WriteBudget(OnceLock::from(Hook::Off));
        assert_eq!(off.grant(5).unwrap(), None);
        off.write_all(&mut file, b"klm").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdefghijklm");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_simulated_error_reads_like_a_full_disk() {
        let error = disk_full();
        assert_eq!(error.kind(), io::ErrorKind::StorageFull);
        assert!(error.to_string().starts_with("No space left on device"));
    }
}
