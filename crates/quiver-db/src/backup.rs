//! Backups: a consistent copy of a serving database, taken beside readers and writers.
//!
//! The published version and its sequence number are read together (one read lock), so
//! the copy is exactly one committed version: every transaction up to that number and
//! none after. It is saved as a store directory of its own (a snapshot whose
//! `log_sequence` is that number, and no log), first under a temporary name in the same
//! parent, synced, then renamed into place: a crash or a full disk leaves no directory
//! under the requested name that would open as a half-written store. Writers go on
//! meanwhile; the version copied stays alive, held by the backup, until it is written.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use quiver_store::Store;

use crate::checkpoint;
use crate::error::DbError;
use crate::wal::sync_dir;

/// What a backup wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct BackupReport {
    /// The directory of the copy.
    pub path: PathBuf,
    /// The sequence number of the last transaction the copy contains.
    pub sequence: u64,
    /// Triples of the copy.
    pub triples: u64,
    /// Bytes of the copy on disk.
    pub bytes: u64,
    /// Seconds it took.
    pub seconds: f64,
}

/// Writes `store`, the version of sequence number `sequence`, as a new store at `target`
/// (which must not exist; its parent is created).
pub(crate) fn write(
    target: &Path,
    store: Arc<Store>,
    sequence: u64,
    beside: impl FnOnce(&Path) -> Result<u64, DbError>,
) -> Result<BackupReport, DbError> {
    let started = Instant::now();
    if target.exists() {
        return Err(DbError::io(
            target,
            std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "already exists: a backup is written to a new directory",
            ),
        ));
    }
    let name = target.file_name().ok_or_else(|| {
        DbError::io(
            target,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a directory name"),
        )
    })?;
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(|e| DbError::io(&parent, e))?;
    let mut partial_name = name.to_os_string();
    partial_name.push(".partial");
    let partial = parent.join(partial_name);
    // Left by an earlier backup that failed half way: never a store anyone opened.
    if partial.exists() {
        std::fs::remove_dir_all(&partial).map_err(|e| DbError::io(&partial, e))?;
    }
    std::fs::create_dir(&partial).map_err(|e| DbError::io(&partial, e))?;
    let saved = checkpoint::save(&partial, &store, sequence).and_then(|bytes| {
        let bytes = bytes + beside(&partial)?;
        sync_dir(&partial)?;
        std::fs::rename(&partial, target).map_err(|e| DbError::io(target, e))?;
        sync_dir(&parent)?;
        Ok(bytes)
    });
    let bytes = match saved {
        Ok(bytes) => bytes,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&partial);
            return Err(error);
        }
    };
    Ok(BackupReport {
        path: target.to_path_buf(),
        sequence,
        triples: store.triples(),
        bytes,
        seconds: started.elapsed().as_secs_f64(),
    })
}
