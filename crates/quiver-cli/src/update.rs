//! `quiver update`: run a SPARQL Update request against a store as one transaction.
//!
//! The request is parsed first (a syntax error is reported with line and column before
//! anything is opened or created), then the store's database runs it: every operation is
//! evaluated against the version the previous ones left, and the whole request commits
//! (logged under `--sync`) or, on any error, leaves the store as it was. The summary goes
//! to standard error, like `load`'s. Exit codes are `query`'s: 1 for an invalid request or
//! a failed update, 2 for a usage error.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use quiver_sparql::ExecOptions;

use crate::limits::{LimitArgs, QueryLimits};
use crate::location::{open_database, SyncArgs};

#[derive(Args, Debug)]
pub struct UpdateArgs {
    /// Directory of the store (an empty store is created when it holds none)
    #[arg(long)]
    pub location: PathBuf,
    /// The update request text
    #[arg(
        long,
        conflicts_with = "update_file",
        required_unless_present = "update_file"
    )]
    pub update: Option<String>,
    /// A file holding the update request
    #[arg(long)]
    pub update_file: Option<PathBuf>,
    /// Base IRI for relative IRIs in the request
    #[arg(long)]
    pub base: Option<String>,
    #[command(flatten)]
    pub sync: SyncArgs,
    /// Worker threads for the WHERE patterns of heavy updates (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub service: crate::service::ServiceArgs,
}

pub fn run(args: UpdateArgs) -> Result<()> {
    let text = match (&args.update, &args.update_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
        (None, None) => unreachable!("clap requires one of them"),
    };
    // Syntax first: an invalid request neither creates nor opens anything.
    quiver_sparql::update::parse_update(&text, args.base.as_deref())?;
    let started = Instant::now();
    let new_location = !args.location.exists();
    let database = open_database(&args.location, args.sync.sync, true)?;
    let threads = crate::threads(args.threads);
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let mut options = ExecOptions {
        threads,
        service: Some(args.service.client(false)),
        ..ExecOptions::default()
    };
    args.limits
        .resolve(QueryLimits::default())
        .apply(&mut options);
    let report = match database.update(&text, args.base.as_deref(), &options) {
        Ok(report) => report,
        Err(error) => {
            // A failed request into a location it created leaves nothing behind.
            drop(database);
            if new_location {
                let _ = std::fs::remove_dir_all(&args.location);
            }
            return Err(error.into());
        }
    };
    eprintln!(
        "update: {} quads inserted, {} deleted in {:.3} s; store: {} triples",
        report.inserted,
        report.deleted,
        started.elapsed().as_secs_f64(),
        report.triples
    );
    Ok(())
}
