//! The live database: a store that takes updates while queries run.
//!
//! A [`Database`] holds the current committed version of a [`Store`]. Readers take a
//! version with [`Database::snapshot`] (an `Arc`, never blocked by writers) and see it
//! unchanged for as long as they hold it: snapshot isolation. Writers are serialised: an
//! update request is evaluated against the latest version into change sets
//! ([`quiver_store::ChangeSet`]), applied to make a new version, made durable, and only
//! then published, so a request is all or nothing.
//!
//! Modules, each using only those listed before it:
//! - `error`: [`DbError`];
//! - `fault`: the simulated full disk of tests (`QUIVER_FAULT_WRITE_LIMIT`);
//! - `record`: the binary encoding of a commit's change sets;
//! - `wal`: log files, records, appends, reading with torn-tail detection;
//! - `commit`: the group commit queue;
//! - `checkpoint`: log records moved into a new snapshot;
//! - `recover`: snapshot plus log replay at open, cutting damaged tails;
//! - `load`: the `LOAD` handler (local files and directories);
//! - `backup`: a consistent copy of one version in a new directory;
//! - `db`: [`Database`]: versions, writers, checkpoints, backups, replacement.

mod backup;
mod checkpoint;
mod commit;
mod db;
mod error;
mod fault;
mod load;
mod record;
mod recover;
mod wal;

pub use backup::BackupReport;
pub use checkpoint::CheckpointReport;
pub use commit::{LogStats, SyncMode};
pub use db::{
    refuse_partitioned, Database, DbOptions, UpdateReport, BATCH_SYNC_INTERVAL,
    DEFAULT_CHECKPOINT_BYTES, LOCK_FILE_NAME,
};
pub use error::DbError;
pub use load::{local_path, FileLoader};
pub use quiver_loader::{parse_insert_data, InsertData};
pub use recover::{LogCut, OpenReport};

/// The names of the write-ahead log files, for tools that list a store's files.
pub fn is_log_file_name(name: &str) -> bool {
    wal::parse_file_name(name).is_some()
}
