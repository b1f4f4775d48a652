//! `quiver partition`: cuts a store into the partitions of a cluster (`quiver load
//! --partitions N` does the same straight after loading).
//!
//! Each partition is an ordinary snapshot directory `partition-<i>` that records which
//! partition of which layout it is; a layout file beside them names the number of
//! partitions and the hash of vertex ids that assigns vertices to them (see
//! `quiver_store::partition`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_store::partition::{save_partitioned, MAX_PARTITIONS};
use quiver_store::Store;

use crate::memory::mib;

#[derive(Args, Debug)]
pub struct PartitionArgs {
    /// Directory of the store to cut (its latest version, log included)
    #[arg(long)]
    pub location: PathBuf,
    /// Number of partitions (one per process of the cluster)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_PARTITIONS as i64))]
    pub partitions: u32,
    /// Directory to write the partitioned store into (new or empty)
    #[arg(long)]
    pub output: PathBuf,
    /// The most memory each process of the cluster gives to the `rdf:type` memberships and
    /// small predicates it holds for the whole cluster, so that type checks and their walks
    /// run where the rows are (recorded in the layout; default 1G; 0: none)
    #[arg(long, value_name = "SIZE", value_parser = parse_budget)]
    pub replication_budget: Option<usize>,
}

pub fn run(args: PartitionArgs) -> Result<()> {
    ensure_empty(&args.output)?;
    let store = crate::location::open_snapshot(&args.location)?;
    write(&store, &args.output, args.partitions)?;
    record_budget(&args.output, args.replication_budget)
}

/// A replication budget: a size, or 0 for none.
pub fn parse_budget(text: &str) -> Result<usize, String> {
    match text.trim() {
        "0" => Ok(0),
        _ => crate::limits::parse_size(text),
    }
}

/// Records `budget` (if given) as the replication budget in the layout of the partitioned
/// store in `dir`.
pub fn record_budget(dir: &Path, budget: Option<usize>) -> Result<()> {
    let Some(budget) = budget else {
        return Ok(());
    };
    quiver_store::partition::set_replication_budget(dir, Some(budget as u64))
        .with_context(|| format!("recording the replication budget in {}", dir.display()))?;
    eprintln!(
        "replication budget: {} per process for the rdf:type memberships and small predicates",
        mib(budget as u64)
    );
    Ok(())
}

/// Fails unless `dir` is absent or an empty directory.
pub fn ensure_empty(dir: &Path) -> Result<()> {
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => bail!(
            "{} is not empty: a partitioned store is written into a new or empty directory",
            dir.display()
        ),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", dir.display())),
    }
}

/// Writes `store` cut into `partitions` into `dir`, reporting each partition; returns the
/// bytes written.
pub fn write(store: &Store, dir: &Path, partitions: u32) -> Result<u64> {
    let started = Instant::now();
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let (layout, bytes) = save_partitioned(store, dir, partitions, |partition, written| {
        if let Some(info) = partition.partition_info() {
            eprintln!(
                "partition {}: {} triples (of the subjects it owns), {} on disk",
                info.index,
                partition.triples(),
                mib(written)
            );
        }
    })
    .with_context(|| format!("writing the partitioned store in {}", dir.display()))?;
    eprintln!(
        "cut {} triples into {} partitions in {} ({} on disk, {:.2} s)",
        layout.triples,
        layout.partitions,
        dir.display(),
        mib(bytes),
        started.elapsed().as_secs_f64()
    );
    Ok(bytes)
}
