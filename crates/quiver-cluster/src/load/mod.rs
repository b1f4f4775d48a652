//! Distributed bulk loading: a cluster loaded by its processes, no machine ever holding the
//! whole graph or dictionary.
//!
//! Every worker (one partition each) parses its own share of the input: whole files,
//! given out by size ([`file_shares`]), or its own universities of LUBM. The terms of
//! its chunks go to their owners ([`quiver_model::dictionary::term_owner`]), which sort
//! them, number them `p × count + owner` and send each origin its terms' ids; the origin
//! then sends each statement's OUT edge to its subject's owner and its IN edge to its
//! object's (its subject's for `rdf:type`, whose IN side is the class index), the owner
//! builds and saves its partition, and every worker learns every partition's summary.
//! Once its workers have ended, each process writes the layout file (the same on every
//! process), last: an interrupted or failed load leaves no store. A load into a cluster
//! loaded before adds to it (see [`load_cluster`]). The four phases are
//! the operators of one timely dataflow ([`dataflow`]), each acting once its input is
//! complete (timely's frontier), so a phase never waits on a message that cannot come.
//!
//! What a worker holds at its peak: its share's chunks (terms and statements as local
//! ids), the terms it owns, and the edges of its partition, never another's.

mod build;
mod dataflow;
mod message;
mod origin;
mod owner;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_loader::{LoadOptions, Progress, Source};
use quiver_lubm::LubmConfig;
use quiver_store::partition::{GraphClasses, PartitionLayout};
use quiver_store::partition_stats::PlannerStatistics;
use serde::{Deserialize, Serialize};

use crate::ClusterConfig;

/// What a cluster loads.
#[derive(Debug, Clone)]
pub enum LoadInput {
    /// Files or directories (every process must see the same paths). An uncompressed
    /// N-Triples or N-Quads file larger than `piece_bytes` (default: a quarter of the
    /// input's size ÷ the workers, at least [`MIN_PIECE_BYTES`], so that a few large files
    /// still share out evenly) is cut into byte ranges of whole lines, shared out like
    /// files.
    Files {
        paths: Vec<PathBuf>,
        options: LoadOptions,
        piece_bytes: Option<u64>,
    },
    /// LUBM straight from the generator, each worker its own universities.
    Lubm { config: LubmConfig, threads: usize },
}

/// Where the load runs: the workers of this process alone, or one process of a cluster.
#[derive(Debug, Clone)]
pub enum LoadCluster {
    InProcess { workers: usize },
    Processes(ClusterConfig),
}

impl LoadCluster {
    /// (this process's first worker, its workers, all workers).
    fn workers(&self) -> (usize, usize, usize) {
        match self {
            LoadCluster::InProcess { workers } => (0, *workers, *workers),
            LoadCluster::Processes(config) => (
                config.process * config.workers,
                config.workers,
                config.addresses.len() * config.workers,
            ),
        }
    }
}

/// What one partition's worker did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartitionSummary {
    pub index: u32,
    /// Statements parsed from its share by this load (duplicates included).
    pub statements: u64,
    /// Triples of its OUT records (each triple is counted by one partition).
    pub triples: u64,
    /// Terms it owns.
    pub terms: u64,
    /// Bytes of its snapshot on disk.
    pub bytes: u64,
    /// Bytes it sent to other workers (terms, ids, edges).
    pub sent: u64,
    /// Its process's peak resident memory when it finished, if known.
    pub peak_rss: Option<u64>,
    /// Its process's processor seconds when it finished (user and system, every thread),
    /// if known: a load whose processes spend much of their
    /// time giving and zeroing fresh pages shows it here.
    #[serde(default)]
    pub cpu: Option<quiver_model::phases::CpuTimes>,
    /// The moments its worker reached each step of the load, in seconds from the worker's
    /// start, in order: `parsed`, `terms sent`, `terms numbered` (as their owner),
    /// `edges sent`, `edges received` and `built and saved`. Their spread over the workers
    /// tells which step a load waits on.
    #[serde(default)]
    pub milestones: Vec<(String, f64)>,
    pub(crate) classes: Vec<GraphClasses>,
    pub(crate) statistics: PlannerStatistics,
    pub(crate) rdf_type: Option<u32>,
    pub(crate) load: Option<String>,
}

/// A cluster loaded: every partition's summary and the layout written.
#[derive(Debug, Clone)]
pub struct LoadedCluster {
    pub partitions: Vec<PartitionSummary>,
    pub layout: PartitionLayout,
    pub seconds: f64,
}

/// Errors of a distributed load.
#[derive(Debug, thiserror::Error)]
pub enum ClusterLoadError {
    #[error("{0}")]
    Input(String),
    #[error("{}: {message}", dir.display())]
    Store { dir: PathBuf, message: String },
    #[error("the load stopped: a process of the cluster ended or its connection closed ({0}); no store was written")]
    Workers(String),
    #[error("the load stopped: {0}; no store was written")]
    Gone(crate::heartbeat::Gone),
}

/// How long another process may go unheard before a load gives up on it: longer than a
/// query's limit (`heartbeat::SILENT_AFTER`), as a load works every core for minutes and
/// a false alarm costs all of it, and still within seconds.
pub const SILENT_AFTER: std::time::Duration = std::time::Duration::from_secs(5);

/// Loads `input` into a new partitioned store in `dir`, one partition per worker of
/// `cluster` (see the module's documentation), or adds it to the cluster loaded there
/// before (by as many workers): its terms keep their ids, new terms take the next ones,
/// and each partition is saved anew beside the old, which it replaces once every
/// partition is saved: committed first (`quiver_store::partition_commit`), so that a
/// process killed meanwhile leaves the cluster as it was or as the load made it. Every
/// process of a cluster calls it with the same input; each returns once its layout file is
/// written, with every partition's summary.
pub fn load_cluster(
    dir: &Path,
    input: LoadInput,
    cluster: LoadCluster,
    progress: Arc<dyn Progress + Send + Sync>,
) -> Result<LoadedCluster, ClusterLoadError> {
    use quiver_store::partition::{read_layout, write_layout};
    use quiver_store::partition_commit::{commit_grown, recover_grown};
    let started = std::time::Instant::now();
    let refuse = |message: String| ClusterLoadError::Store {
        dir: dir.to_owned(),
        message,
    };
    let (first, local, total) = cluster.workers();
    let own: Vec<u32> = (first..first + local).map(|index| index as u32).collect();
    // A grown load killed after it committed its partitions: finished first.
    recover_grown(dir, &own).map_err(|e| refuse(e.to_string()))?;
    let existing = read_layout(dir).map_err(|e| refuse(e.to_string()))?;
    if existing.is_none() && dir.join("manifest.json").exists() {
        return Err(refuse(
            "already holds a store, not a cluster loaded by its processes".into(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| ClusterLoadError::Store {
        dir: dir.to_owned(),
        message: e.to_string(),
    })?;
    if total == 0 || total > quiver_store::partition::MAX_PARTITIONS as usize {
        return Err(ClusterLoadError::Input(format!(
            "{total} workers: give 1 to {}",
            quiver_store::partition::MAX_PARTITIONS
        )));
    }
    if let Some(layout) = &existing {
        if layout.partition_terms.is_empty() {
            return Err(refuse(
                "holds a store cut from a whole one: load into the whole store and cut it again"
                    .into(),
            ));
        }
        if layout.partitions as usize != total {
            return Err(refuse(format!(
                "holds a cluster of {} partitions; this load has {total} workers",
                layout.partitions
            )));
        }
    }
    let grow = existing.is_some();
    let grown = existing
        .as_ref()
        .map(|layout| layout.load.clone().unwrap_or_default());
    let shares = Arc::new(Shares::new(&input, total, grown.as_deref())?);
    // The workers stop once another process is not heard from (a process that ends
    // closes its connections, which fail the load at once).
    let (builders, network, networked) = match cluster {
        LoadCluster::InProcess { workers } => crate::connect::in_process(workers),
        LoadCluster::Processes(config) => crate::connect::cluster(config),
    }
    .map_err(ClusterLoadError::Workers)?;
    // The light queries' connections serve no load: closed at once.
    let heartbeat = networked.map(|(heartbeat, _lines)| heartbeat);
    let liveness = heartbeat
        .as_ref()
        .map(crate::heartbeat::Heartbeat::liveness);
    let target = dir.to_owned();
    // Timely joins its network threads when its guards are dropped, and a thread reading
    // from a stopped process waits for as long as that process stays stopped. So the
    // network's guards are kept here, out of timely's: dropped once the load is over, or
    // left to a thread of their own when it failed.
    let network = NetworkGuards(Some(network));
    // A peer process that dies makes timely's communication threads panic, and their
    // guards panic again when dropped: caught here, the load fails with an error.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let guards = timely::execute::execute_from(
            builders,
            Box::new(()),
            timely::WorkerConfig::default(),
            move |worker| {
                dataflow::run(
                    worker,
                    &target,
                    &shares,
                    (first, local),
                    grow,
                    liveness.as_deref(),
                    progress.as_ref(),
                )
            },
        )
        .map_err(ClusterLoadError::Workers)?;
        let mut loaded = None;
        for result in guards.join() {
            match result {
                Ok(Ok(Some(cluster))) => loaded = Some(cluster),
                Ok(Ok(None)) => {}
                Ok(Err(error)) => return Err(error),
                // A worker's panic comes as `Any`; the one this load meets is timely's
                // on a broken connection.
                Err(_) => return Err(broke()),
            }
        }
        network.end();
        Ok(loaded)
    }));
    let loaded = match run {
        Ok(loaded) => loaded?,
        Err(_) => return Err(broke()),
    };
    let mut loaded = loaded.ok_or_else(|| {
        ClusterLoadError::Workers("no worker of this process returned the layout".into())
    })?;
    // A grown cluster keeps the replication budget its layout recorded.
    loaded.layout.replication_budget = existing.as_ref().and_then(|l| l.replication_budget);
    // Every partition of the load saved: this process's new partitions committed, then
    // put in place of the old; the layout, last.
    if grow {
        for &index in &own {
            commit_grown(dir, index, &loaded.layout).map_err(|e| refuse(e.to_string()))?;
        }
        recover_grown(dir, &own).map_err(|e| refuse(e.to_string()))?;
    } else {
        write_layout(dir, &loaded.layout).map_err(|e| refuse(e.to_string()))?;
    }
    loaded.seconds = started.elapsed().as_secs_f64();
    Ok(loaded)
}

/// A load whose connections between processes broke (a process died).
fn broke() -> ClusterLoadError {
    ClusterLoadError::Workers("its connections to the other processes broke".into())
}

/// Timely's network threads' guards, joined by [`Self::end`] once every worker ended
/// well; dropped otherwise (a worker failed: another process may be stopped, and a
/// thread reading from it never ends), they are joined on a thread of their own, which
/// ends once that process does or with this one.
struct NetworkGuards(Option<Box<dyn std::any::Any + Send>>);

impl NetworkGuards {
    fn end(mut self) {
        drop(self.0.take());
    }
}

impl Drop for NetworkGuards {
    fn drop(&mut self) {
        if let Some(guards) = self.0.take() {
            let _ = std::thread::Builder::new()
                .name("quiver-load-network".into())
                .spawn(move || {
                    // Their threads panic on a closed connection, and the guards on it.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(guards)));
                });
        }
    }
}

/// The smallest byte range a large line-based file is cut into by default.
pub const MIN_PIECE_BYTES: u64 = 64 << 20;

/// Who parses what: the same on every process.
#[derive(Debug)]
pub(crate) enum Shares {
    Files {
        /// Whole files and byte ranges of large line-based ones.
        sources: Vec<Source>,
        /// Each source's file (its number among the input's files).
        files: Vec<usize>,
        /// Worker → the sources it parses (indexes into `sources`).
        owners: Vec<Vec<usize>>,
        options: LoadOptions,
        /// Blank node labels are scoped per file when there are several (or one in
        /// pieces, or a cluster grown).
        scoped: bool,
        /// The same on every process: a file's pieces, parsed apart, scope its blank
        /// nodes alike.
        nonce: u64,
    },
    Lubm {
        config: LubmConfig,
        threads: usize,
    },
}

impl Shares {
    fn new(
        input: &LoadInput,
        workers: usize,
        existing: Option<&str>,
    ) -> Result<Self, ClusterLoadError> {
        Ok(match input {
            LoadInput::Files {
                paths,
                options,
                piece_bytes,
            } => {
                let whole = quiver_loader::collect_sources(paths, options.format)
                    .map_err(|e| ClusterLoadError::Input(e.to_string()))?;
                let total: u64 = whole.iter().map(|s| s.bytes).sum();
                let piece = piece_bytes
                    .unwrap_or_else(|| (total / (4 * workers.max(1) as u64)).max(MIN_PIECE_BYTES));
                let (mut sources, mut files) = (Vec::new(), Vec::new());
                for (file, source) in whole.iter().enumerate() {
                    for part in source.pieces(piece) {
                        sources.push(part);
                        files.push(file);
                    }
                }
                let sizes: Vec<u64> = sources
                    .iter()
                    .map(|s| s.range.map_or(s.bytes, |(start, end)| end - start))
                    .collect();
                // From what every process sees alike: the files' names and sizes, and the
                // load grown (whose files may have the same names).
                let nonce = {
                    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
                    let mut mix = |bytes: &[u8]| {
                        for &byte in bytes {
                            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
                        }
                    };
                    for source in &whole {
                        let name = source.path.file_name().unwrap_or_default();
                        mix(name.as_encoded_bytes());
                        mix(&source.bytes.to_le_bytes());
                    }
                    mix(existing.unwrap_or_default().as_bytes());
                    hash
                };
                Shares::Files {
                    owners: file_shares(&sizes, workers),
                    scoped: whole.len() > 1 || sources.len() > whole.len() || existing.is_some(),
                    sources,
                    files,
                    options: options.clone(),
                    nonce,
                }
            }
            LoadInput::Lubm { config, threads } => Shares::Lubm {
                config: *config,
                threads: *threads,
            },
        })
    }
}

/// Files given out to `workers` by size: the largest first, each to the worker with the
/// fewest bytes so far (the lowest number on a tie), so every process computes the same
/// shares.
pub fn file_shares(sizes: &[u64], workers: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(sizes[i]), i));
    let mut shares = vec![Vec::new(); workers.max(1)];
    let mut loads = vec![0u64; workers.max(1)];
    for i in order {
        let (worker, _) = loads
            .iter()
            .enumerate()
            .min_by_key(|&(w, &load)| (load, w))
            .expect("at least one worker");
        loads[worker] += sizes[i];
        shares[worker].push(i);
    }
    for share in &mut shares {
        share.sort_unstable();
    }
    shares
}

/// The universities of worker `index` among `workers`: a contiguous run of `config`'s.
pub fn lubm_share(config: LubmConfig, index: usize, workers: usize) -> LubmConfig {
    let n = u64::from(config.universities);
    let (w, workers) = (index as u64, workers.max(1) as u64);
    let start = n * w / workers;
    let end = n * (w + 1) / workers;
    LubmConfig {
        universities: (end - start) as u32,
        start_index: config.start_index + start as u32,
        seed: config.seed,
    }
}

/// This process's peak resident memory (Linux), in bytes.
pub(crate) fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_universities_are_shared_out_whole_and_once() {
        let sizes = [5, 100, 7, 7, 60, 1];
        let shares = file_shares(&sizes, 3);
        let mut all: Vec<usize> = shares.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..sizes.len()).collect::<Vec<_>>());
        assert_eq!(shares[0], vec![1]);
        assert_eq!(shares[1], vec![4]);
        let config = LubmConfig::standard(10);
        let parts: Vec<LubmConfig> = (0..4).map(|w| lubm_share(config, w, 4)).collect();
        let mut next = 0;
        for part in &parts {
            assert_eq!(part.start_index, next);
            next += part.universities;
        }
        assert_eq!(next, 10);
        assert!(parts.iter().all(|p| p.universities >= 2));
    }
}
