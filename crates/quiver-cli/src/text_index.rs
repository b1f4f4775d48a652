//! `quiver text-index`: builds or drops a store's full-text index (`quiver-text`).
//!
//! The index lives in the store's directory (`text/`) beside the snapshot; once built,
//! every command that opens the store opens it too, and every commit keeps it current.
//! Queries reach it through `?literal quiver:matches "words"` patterns, and `CONTAINS` and
//! case-insensitive `REGEX` filters use its trigrams when that reads fewer literals.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use quiver_db::SyncMode;
use quiver_store::Store;
use quiver_text::{BuildReport, TextIndex, TEXT_DIR};

#[derive(Subcommand, Debug)]
pub enum TextIndexCommand {
    /// Build (or build again) the full-text index of a store's string literals
    Build(BuildArgs),
    /// Remove a store's full-text index
    Drop(DropArgs),
}

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Threads analysing literals (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
}

#[derive(Args, Debug)]
pub struct DropArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
}

pub fn run(command: TextIndexCommand) -> Result<()> {
    match command {
        TextIndexCommand::Build(args) => {
            let database = crate::location::open_database(&args.location, SyncMode::Always, false)?;
            let report = database
                .build_text_index(crate::threads(args.threads))
                .with_context(|| {
                    format!("building the text index of {}", args.location.display())
                })?;
            summary(&report);
            Ok(())
        }
        TextIndexCommand::Drop(args) => {
            // Opening for writing takes the store's lock: no writer keeps the index current
            // meanwhile.
            let database = crate::location::open_database(&args.location, SyncMode::Always, false)?;
            let dir = args.location.join(TEXT_DIR);
            drop(database);
            if dir.exists() {
                std::fs::remove_dir_all(&dir)
                    .with_context(|| format!("removing {}", dir.display()))?;
                eprintln!("removed the text index of {}", args.location.display());
            } else {
                eprintln!("{} has no text index", args.location.display());
            }
            Ok(())
        }
    }
}

/// Whether the store at `location` has a text index.
pub fn has_text_index(location: &Path) -> bool {
    location.join(TEXT_DIR).join("meta.json").exists()
}

/// Builds the text index of `store`, just saved at `location` by a bulk load.
pub fn build_after_load(location: &Path, store: &Store, threads: usize) -> Result<()> {
    let (_, report) = TextIndex::build(Some(location), store, threads)
        .with_context(|| format!("building the text index of {}", location.display()))?;
    summary(&report);
    Ok(())
}

fn summary(report: &BuildReport) {
    eprintln!(
        "text index: {} literals in {:.2} s ({:.0} literals/s), {:.1} MiB on disk",
        report.literals,
        report.seconds,
        report.literals as f64 / report.seconds.max(1e-9),
        report.bytes as f64 / (1 << 20) as f64
    );
}
