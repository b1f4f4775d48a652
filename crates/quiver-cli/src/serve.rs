//! `quiver serve`: a SPARQL 1.1 Protocol endpoint over a store, read-only unless
//! `--writable` (then also SPARQL Update and the Graph Store Protocol, committed to the
//! store's directory with `--sync`, behind `--update-token` when it listens beyond loopback).
//!
//! Thin on purpose: it parses flags, opens the store, sets up logging (`tracing` to stderr)
//! and the engine's worker pool, and hands over to `quiver_server::run`, which blocks until
//! SIGINT/SIGTERM. Once the socket accepts connections it prints
//! `listening on http://ADDRESS` on stderr (with `--bind 127.0.0.1:0`, the port the system
//! picked), which scripts and tests wait for.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use quiver_cluster::{ClusterConfig, TimelyPartitions};
use quiver_db::{Database, DbOptions, SyncMode};
use quiver_server::Config;
use quiver_store::partition::open_partition;

use crate::limits::{self, human_size, LimitArgs, QueryLimits};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Address to listen on (loopback by default; port 0 picks a free port)
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: SocketAddr,
    /// Queries executing at once, and worker threads for a heavy query (default: all cores)
    #[arg(long, value_parser = limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    /// Requests that may wait for a worker beyond those running (default: 32 per thread,
    /// at least 128); more get 503 at once
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub queue: Option<u32>,
    /// How long a request waits for a worker before it gets 503 (`0`: not at all)
    #[arg(long, value_name = "SECONDS", default_value = "500ms", value_parser = limits::parse_wait, allow_hyphen_values = true)]
    pub queue_timeout: Duration,
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Largest request body in bytes (413 beyond)
    #[arg(long, default_value = "1048576", value_parser = limits::parse_size, allow_hyphen_values = true)]
    pub max_body_bytes: usize,
    /// Abort a response when the client reads nothing for this many seconds
    #[arg(long, value_name = "SECONDS", default_value = "30", value_parser = limits::parse_seconds, allow_hyphen_values = true)]
    pub send_timeout: Duration,
    /// Allow cross-origin browser requests from this origin (`*` for any)
    #[arg(long)]
    pub cors: Option<String>,
    /// Accept SPARQL Update (/update) and Graph Store writes (/store), committed to the store
    #[arg(long)]
    pub writable: bool,
    /// When a write is acknowledged: after fsync of the log (always), after the write with
    /// a background fsync (batch), or never synced by Quiver (none)
    #[arg(long, value_name = "MODE", default_value = "always", value_parser = crate::location::parse_sync, requires = "writable")]
    pub sync: SyncMode,
    /// Writes need `Authorization: Bearer TOKEN` (default: env QUIVER_UPDATE_TOKEN, which
    /// other users cannot see in the process list); required with --writable on a
    /// non-loopback address
    #[arg(long, value_name = "TOKEN", requires = "writable")]
    pub update_token: Option<String>,
    /// Allow SPARQL Update's LOAD, which reads files and directories on this machine
    #[arg(long, requires = "writable")]
    pub allow_load: bool,
    /// Serve `/metrics` to every client, not only to loopback clients and those with the
    /// update token
    #[arg(long)]
    pub public_metrics: bool,
    /// Start from an empty store when --location holds none
    #[arg(long, requires = "writable")]
    pub create: bool,
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
    /// Serve as process --process of the cluster whose processes this file lists (one
    /// `host:port` per line, process 0 first; timely-dataflow's connections): --location
    /// is then a partitioned store (`quiver partition`), and the server is read-only
    #[arg(long, value_name = "HOSTFILE", conflicts_with = "writable")]
    pub cluster: Option<PathBuf>,
    /// This process's number in --cluster: 0 serves HTTP, the others their partitions
    #[arg(long, default_value = "0", requires = "cluster")]
    pub process: usize,
    /// Worker threads per process of --cluster, one partition each (the store must be cut
    /// into processes × workers partitions)
    #[arg(long, default_value = "1", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: u32,
    /// This process's listening socket in --cluster, inherited as this descriptor from the
    /// process that started it (`quiver cluster`): no port to bind, none to race for
    #[arg(long, value_name = "FD", requires = "cluster", hide = true)]
    pub listen_fd: Option<i32>,
    /// This process's listening socket in --cluster when `quiver cluster` bound it here.
    #[arg(skip)]
    pub listener: Option<Arc<std::net::TcpListener>>,
}

pub fn run(args: ServeArgs) -> Result<()> {
    crate::memory::return_freed_memory_promptly();
    let threads = crate::threads(args.threads);
    let mut config = Config::new(threads);
    if let Some(queue) = args.queue {
        config.queue = queue as usize;
    }
    config.queue_timeout = args.queue_timeout;
    let limits = args.limits.resolve(QueryLimits::serve_defaults());
    if args.limits.max_memory.is_none() && limits.max_memory.is_none() {
        eprintln!("warning: the machine's memory size is unknown: no default --max-memory");
    }
    config.timeout = limits.timeout;
    config.max_results = limits.max_results;
    config.max_memory = limits.max_memory;
    config.send_timeout = args.send_timeout;
    // Shutdown lets in-flight queries run for up to the query timeout before cancelling.
    config.shutdown_grace = config.timeout.unwrap_or(Duration::from_secs(10));
    config.max_body_bytes = args.max_body_bytes;
    config.cors = args.cors.clone();
    config.writable = args.writable;
    config.allow_load = args.allow_load;
    config.public_metrics = args.public_metrics;
    if args.writable {
        config.update_token = args
            .update_token
            .clone()
            .or_else(|| std::env::var("QUIVER_UPDATE_TOKEN").ok())
            .filter(|token| !token.is_empty());
    }
    // Before opening a store that may be large: an exposed writable server is refused.
    config.check_exposure(args.bind)?;

    // The access log and query events, at INFO, on stderr.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .try_init()
        .ok();
    // The engine runs heavy queries on rayon's global pool when it has `threads` threads.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .ok();
    let context = || format!("cannot open the store at {}", args.location.display());
    // A read-only server replays the log of earlier writes but changes nothing on disk.
    let options = DbOptions {
        sync: args.sync,
        read_only: !args.writable,
        create: args.create,
        ..DbOptions::default()
    };
    let db = match &args.cluster {
        Some(hosts) => match join_cluster(&args, hosts, &mut config)? {
            Some(db) => db,
            None => return Ok(()),
        },
        None => Database::open(&args.location, options).with_context(context)?,
    };
    let store = db.snapshot();
    if config.partitions.is_none() {
        eprintln!(
            "store {}: {} triples, {} terms{}",
            args.location.display(),
            store.triples(),
            store.terms(),
            if args.writable {
                match config.update_token {
                    Some(_) => "; writable, writes need the update token",
                    None => "; writable",
                }
            } else {
                "; read-only"
            }
        );
    }
    config.device = crate::device::as_bgp_device(&args.device.open(&store)?);
    drop(store);
    let shown = |value: Option<String>| value.unwrap_or_else(|| "none".into());
    eprintln!(
        "limits: timeout {}, max-results {}, max-memory {} shared by the queries in flight; {} running, {} queued for up to {:?}",
        shown(config.timeout.map(|t| format!("{t:?}"))),
        shown(config.max_results.map(|n| n.to_string())),
        shown(config.max_memory.map(human_size)),
        config.threads,
        config.queue,
        config.queue_timeout,
    );
    if !args.bind.ip().is_loopback() {
        eprintln!(
            "warning: listening on {} (not loopback): queries need no authentication",
            args.bind
        );
    }
    quiver_server::run(Arc::new(db), config, args.bind, |address| {
        eprintln!("listening on http://{address}");
    })?;
    eprintln!("server stopped");
    Ok(())
}

/// Joins the cluster of `hosts` as process `args.process`, serving its partitions of the
/// store at `args.location`. Process 0 gets the database of its own first partition and
/// runs the queries' basic graph patterns on the cluster (`config.partitions`); another
/// process serves until process 0 ends and returns `None`.
fn join_cluster(args: &ServeArgs, hosts: &Path, config: &mut Config) -> Result<Option<Database>> {
    let addresses = crate::local_cluster::read_hosts(hosts)?;
    let processes = addresses.len();
    if args.process >= processes {
        bail!(
            "--process {} is not in {} ({processes} processes)",
            args.process,
            hosts.display()
        );
    }
    let workers = args.workers as usize;
    let cluster = ClusterConfig {
        process: args.process,
        addresses,
        workers,
        listener: match &args.listener {
            Some(listener) => Some(Arc::clone(listener)),
            None => crate::local_cluster::inherited(args.listen_fd)?,
        },
    };
    eprintln!(
        "process {} of {processes}: serving partitions {}..{} of {}, waiting for the other processes",
        args.process,
        args.process * workers,
        (args.process + 1) * workers,
        args.location.display()
    );
    let partitions = TimelyPartitions::cluster(&args.location, cluster).map_err(|e| anyhow!(e))?;
    if args.process != 0 {
        partitions.wait();
        // One write: the processes of a cluster on this machine often share a terminal or
        // a log, and stop at the same moment (eprintln! writes piece by piece).
        let line = format!("process {} stopped\n", args.process);
        let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
        return Ok(None);
    }
    let total = (processes * workers) as u32;
    let (mut coordinator, layout) = coordinator(&partitions, &args.location, total)?;
    // Plans are made here, for the whole store: with its statistics, not partition 0's.
    if let Some(statistics) = &layout.statistics {
        coordinator.use_statistics(statistics);
    }
    eprintln!(
        "store {}: {} triples, {} terms in {total} partitions over {processes} processes; read-only",
        args.location.display(),
        layout.triples,
        layout.terms
    );
    config.partitions = Some(Arc::new(partitions));
    Ok(Some(Database::in_memory(coordinator)))
}

/// Process 0's store, where queries are planned, and the layout: the first partition its
/// worker serves (a partitioned dictionary learns the other owners' terms there).
pub fn coordinator(
    partitions: &TimelyPartitions,
    location: &Path,
    total: u32,
) -> Result<(
    quiver_store::Store,
    quiver_store::partition::PartitionLayout,
)> {
    let cannot = || format!("cannot open the store at {}", location.display());
    let layout = quiver_store::partition::read_layout(location)
        .with_context(cannot)?
        .ok_or_else(|| anyhow!("{}: not a partitioned store", location.display()))?;
    match partitions.coordinator_store() {
        Some(store) => Ok((store, layout)),
        None => Ok(open_partition(location, 0, total).with_context(cannot)?),
    }
}
