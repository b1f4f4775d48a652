//! Store directories (`--location`) as the commands open them.
//!
//! A store directory holds a snapshot and, once updates were made, the database's log of
//! commits not yet checkpointed into it. Readers (`query`, `info`, `bench`, `dump`) take
//! its latest version with [`open_snapshot`]: through [`quiver_db::Database`], which
//! replays the log, when there is one (so an update is visible to the next command
//! without a checkpoint), else straight from the snapshot, creating nothing. Writers
//! (`update`, the console, `load` into a store with a log) keep the database and say how
//! their commits reach the disk with `--sync` ([`SyncArgs`]); a bulk load hands its new
//! store to the database ([`save_loaded`]), which saves it and restarts the log.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use quiver_db::{Database, DbOptions, SyncMode};
use quiver_store::Store;

/// `--sync`: when a commit is acknowledged relative to its log record reaching the disk.
#[derive(Args, Debug, Clone, Copy)]
pub struct SyncArgs {
    /// When a commit is acknowledged: `always` (after fsync of the log: nothing
    /// acknowledged is lost), `batch` (after the write; fsync follows within milliseconds),
    /// `none` (the operating system writes the log when it likes)
    #[arg(long, value_name = "MODE", default_value = "always", value_parser = parse_sync)]
    pub sync: SyncMode,
}

/// Parses a `--sync` value.
pub fn parse_sync(name: &str) -> Result<SyncMode, String> {
    match name.trim().to_ascii_lowercase().as_str() {
        "always" => Ok(SyncMode::Always),
        "batch" => Ok(SyncMode::Batch),
        "none" | "off" => Ok(SyncMode::None),
        _ => Err(format!("unknown sync mode '{name}' (always, batch, none)")),
    }
}

/// Whether `location` holds a store (a snapshot manifest).
pub fn has_store(location: &Path) -> bool {
    location.join("manifest.json").exists()
}

/// Opens the database at `location` for writing; with `create`, an empty store is saved
/// there first (directory included) when the location holds none, so that the location
/// always has a snapshot for its log to continue.
pub fn open_database(location: &Path, sync: SyncMode, create: bool) -> Result<Database> {
    if create && !has_store(location) {
        std::fs::create_dir_all(location)
            .with_context(|| format!("cannot create {}", location.display()))?;
        let (empty, _) = quiver_loader::load_quads(std::iter::empty(), None)?;
        empty
            .save(location)
            .with_context(|| format!("saving an empty store in {}", location.display()))?;
    }
    Database::open(location, options(sync))
        .with_context(|| format!("cannot open the store at {}", location.display()))
}

/// Options opening an existing store with `sync` (the others: the database's defaults).
// Options the database adds later keep their defaults.
#[allow(clippy::needless_update)]
fn options(sync: SyncMode) -> DbOptions {
    DbOptions {
        sync,
        create: false,
        ..DbOptions::default()
    }
}

/// Whether `location` holds log files of commits (maybe not yet checkpointed).
pub fn has_log(location: &Path) -> bool {
    std::fs::read_dir(location).is_ok_and(|entries| {
        entries.filter_map(|entry| entry.ok()).any(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(quiver_db::is_log_file_name)
        })
    })
}

/// The latest committed version of the store at `location`: its snapshot with the log's
/// commits applied, read without writing anything (a location without a log is read as
/// it is).
pub fn open_snapshot(location: &Path) -> Result<Arc<Store>> {
    if !has_log(location) {
        let context = || format!("cannot open the store at {}", location.display());
        quiver_db::refuse_partitioned(location, None).with_context(context)?;
        let (store, _) = Store::open(location).with_context(context)?;
        quiver_db::refuse_partitioned(location, Some(&store)).with_context(context)?;
        // Its text index, if it has one (read only: one that must be built again for this
        // store is built in memory).
        let threads = crate::threads(None);
        let text =
            quiver_text::TextIndex::open(location, &store, threads, true).with_context(context)?;
        let store = match text {
            Some(text) => store.with_text_index(Some(Arc::new(text) as _)),
            None => store,
        };
        return Ok(Arc::new(store));
    }
    let database = Database::open(
        location,
        DbOptions {
            read_only: true,
            ..options(SyncMode::None)
        },
    )
    .with_context(|| format!("cannot open the store at {}", location.display()))?;
    Ok(database.snapshot())
}

/// Makes `store`, built by a bulk load on top of `database`'s latest version (or from
/// nothing when `database` is `None`), the store of `location`: saved as its snapshot.
/// Gives the store as published and the bytes written.
pub fn save_loaded(
    database: Option<&Database>,
    location: &Path,
    store: Store,
) -> Result<(Arc<Store>, u64)> {
    let saving = || format!("saving the store in {}", location.display());
    match database {
        // The database saves it and restarts its log after it.
        Some(database) => {
            let report = database.replace(|_| Ok(store)).with_context(saving)?;
            Ok((database.snapshot(), report.snapshot_bytes))
        }
        None => {
            let bytes = store.save(location).with_context(saving)?;
            Ok((Arc::new(store), bytes))
        }
    }
}

/// Bytes of the files directly in `location` (snapshot, manifest and log).
pub fn bytes_on_disk(location: &Path) -> u64 {
    std::fs::read_dir(location)
        .map(|entries| {
            entries
                .filter_map(|entry| entry.ok()?.metadata().ok())
                .filter(|metadata| metadata.is_file())
                .map(|metadata| metadata.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_modes_parse_and_unknown_ones_are_refused() {
        assert_eq!(parse_sync("always"), Ok(SyncMode::Always));
        assert_eq!(parse_sync("Batch"), Ok(SyncMode::Batch));
        assert_eq!(parse_sync("none"), Ok(SyncMode::None));
        let error = parse_sync("sometimes").unwrap_err();
        assert!(error.contains("always, batch, none"), "{error}");
    }
}
