//! `quiver checkpoint`: folds a store's log of commits into a new snapshot generation.
//!
//! The database checkpoints by itself when its log passes a size; this command does it on
//! demand, e.g. before copying a store directory or to make the next open fast.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use quiver_db::SyncMode;

#[derive(Args, Debug)]
pub struct CheckpointArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
}

pub fn run(args: CheckpointArgs) -> Result<()> {
    let started = Instant::now();
    let database = crate::location::open_database(&args.location, SyncMode::Always, false)?;
    let log_before = database.wal_bytes();
    let report = database.checkpoint()?;
    eprintln!(
        "checkpoint of {}: commits up to {} in a new snapshot ({:.1} MiB), log {} → {} bytes, {:.2} s",
        args.location.display(),
        report.sequence,
        report.snapshot_bytes as f64 / (1 << 20) as f64,
        log_before,
        report.wal_bytes,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
