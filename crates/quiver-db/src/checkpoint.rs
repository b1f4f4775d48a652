//! Checkpoints: the log's records moved into a new snapshot generation.
//!
//! A checkpoint runs beside readers and writers. With the log file locked (so no group of
//! commits is half written), it takes the published version and its sequence number `S`
//! and starts a new log file whose first record will be `S + 1`: the old files end exactly
//! with that version. Then, holding no lock, it saves the version as a new snapshot
//! generation recording `S` (`LoadInfo::log_sequence`; the manifest switch makes it
//! atomic), and finally removes the old log files. A crash at any point leaves a state
//! recovery reads: before the manifest switch, the old snapshot and every log file; after
//! it, the new snapshot and log files whose records up to `S` are skipped.

use std::path::Path;
use std::sync::Arc;

use quiver_store::Store;

use crate::commit::Log;
use crate::error::DbError;

/// What a checkpoint did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CheckpointReport {
    /// The last sequence number the new snapshot contains.
    pub sequence: u64,
    /// Bytes of the new snapshot generation.
    pub snapshot_bytes: u64,
    /// Bytes of log files left afterwards.
    pub wal_bytes: u64,
}

/// Checkpoints `log` of the store in `dir`; `published` gives the published version and
/// its sequence number (called with the log file locked).
pub(crate) fn run(
    dir: &Path,
    log: &Log,
    published: impl FnOnce() -> (Arc<Store>, u64),
) -> Result<CheckpointReport, DbError> {
    let started = std::time::Instant::now();
    let (store, sequence, old) = log.rotate(dir, published)?;
    let snapshot_bytes = save(dir, &store, sequence)?;
    log.remove_up_to(dir, old)?;
    log.checkpointed(started.elapsed().as_micros() as u64);
    Ok(CheckpointReport {
        sequence,
        snapshot_bytes,
        wal_bytes: log.bytes(),
    })
}

/// Saves `store` in `dir` as the snapshot containing the log up to `sequence`; returns its
/// bytes on disk.
pub(crate) fn save(dir: &Path, store: &Store, sequence: u64) -> Result<u64, DbError> {
    let mut store = store.clone();
    let mut info = store.info().clone();
    info.log_sequence = sequence;
    store.set_info(info);
    Ok(store.save(dir)?)
}
