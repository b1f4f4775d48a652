//! `quiver serve`: a SPARQL 1.1 Protocol endpoint over a store, read-only unless
//! `--writable` (then also SPARQL Update and the Graph Store Protocol, committed to the
//! store's directory with `--sync`, behind `--update-token` when it listens beyond loopback).
//!
//! Several datasets: `--location DIR` is served at the root (`/query`, …), each
//! `--dataset NAME=DIR` and each `[datasets.NAME]` table of the config file under `/NAME/`;
//! a table may set the dataset's own `writable`, `update-token`, `allow-load`, `create`,
//! `sync`, `timeout` and `max-results` (the others inherit the server's flags).
//!
//! Thin on purpose: it parses flags (merged with `--config`'s file by `config_file`), opens
//! the stores, sets up logging (`logging`) and the engine's worker pool, and hands over to
//! `quiver_server::run`, which blocks until SIGINT/SIGTERM. Once the socket accepts
//! connections it prints `listening on http://ADDRESS` on stderr (with `--bind
//! 127.0.0.1:0`, the port the system picked), which scripts and tests wait for.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use quiver_cluster::{ClusterConfig, TimelyPartitions};
use quiver_db::Database;
use quiver_server::Config;
use quiver_sparql::partitions::BgpPartitions;

use crate::limits::{human_size, QueryLimits};
use crate::serve_args::{root_location, ServeArgs};

pub fn run(args: ServeArgs) -> Result<()> {
    if args.accept_queries && args.cluster.is_none() {
        bail!(
            "--accept-queries is for a process of a cluster (--cluster HOSTS --process I, or \
             quiver cluster): a server of one store always accepts queries"
        );
    }
    // Held to the end: the log's last lines are written when it is dropped.
    let _log = args.log.init()?;
    crate::memory::return_freed_memory_promptly();
    let threads = crate::threads(args.threads);
    let mut config = Config::new(threads);
    if let Some(queue) = args.queue {
        config.queue = queue as usize;
    }
    config.queue_timeout = args.queue_timeout;
    let limits = args.limits.resolve(QueryLimits::serve_defaults());
    if args.limits.max_memory.is_none() && limits.max_memory.is_none() {
        args.log
            .warn("the machine's memory size is unknown: no default --max-memory");
    }
    config.timeout = limits.timeout;
    config.max_results = limits.max_results;
    config.max_memory = limits.max_memory;
    config.send_timeout = args.send_timeout;
    // Shutdown lets in-flight queries run for up to the query timeout before cancelling.
    config.shutdown_grace = args
        .shutdown_grace
        .or(config.timeout)
        .unwrap_or(Duration::from_secs(10));
    config.max_body_bytes = args.max_body_bytes;
    config.cors = args.cors.clone();
    config.writable = args.writable;
    config.allow_load = args.allow_load;
    config.public_metrics = args.public_metrics;
    config.slow_query = args.slow_query;
    config.backup_dir = args.backup_dir.clone();
    config.service = Some(args.service.client(true));
    config.reasoning = args.reasoning;
    if args.writable {
        config.update_token = args
            .update_token
            .clone()
            .or_else(|| std::env::var("QUIVER_UPDATE_TOKEN").ok())
            .filter(|token| !token.is_empty());
    }
    // Before opening a store that may be large: an exposed writable server is refused.
    config.check_exposure(args.bind)?;
    let specs = crate::datasets::specs(&args, &config)?;
    let check: Vec<_> = specs
        .iter()
        .map(|spec| (spec.name.as_deref(), &spec.config))
        .collect();
    quiver_server::check_datasets(&check, args.bind)?;

    // The engine runs heavy queries on rayon's global pool when it has `threads` threads.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .ok();
    let mut datasets = Vec::new();
    // A process of a cluster other than process 0, serving HTTP: its server stops when
    // the cluster does.
    let mut member: Option<Arc<TimelyPartitions>> = None;
    if let Some(hosts) = &args.cluster {
        let Some((db, partitions)) = join_cluster(&args, hosts, &mut config)? else {
            return Ok(());
        };
        datasets.push(quiver_server::Dataset::root(Arc::new(db), config.clone()));
        member = (args.process != 0).then_some(partitions);
    } else {
        for spec in specs {
            datasets.push(spec.open(&args)?);
        }
    }
    for dataset in &mut datasets {
        let store = dataset.db.snapshot();
        if dataset.config.reasoning && store.entailment().is_none() {
            bail!(
                "--reasoning: dataset {} holds no entailment; load it with --reasoning rdfs|owl-rl (and --ontology FILE), or run `quiver reason --location DIR`",
                dataset.name.as_deref().unwrap_or("at --location")
            );
        }
        dataset.config.device = crate::device::as_bgp_device(&args.device.open(&store)?);
    }
    let shown = |value: Option<String>| value.unwrap_or_else(|| "none".into());
    // A cluster's other processes say which they are: their lines share a terminal.
    let tag = match member {
        Some(_) => format!("process {}: ", args.process),
        None => String::new(),
    };
    args.log.say(&format!(
        "{tag}limits: timeout {}, max-results {}, max-memory {} shared by the queries in flight; {} running, {} queued for up to {:?}",
        shown(config.timeout.map(|t| format!("{t:?}"))),
        shown(config.max_results.map(|n| n.to_string())),
        shown(config.max_memory.map(human_size)),
        config.threads,
        config.queue,
        config.queue_timeout,
    ));
    if !args.bind.ip().is_loopback() {
        args.log.warn(&format!(
            "listening on {} (not loopback): queries need no authentication",
            args.bind
        ));
    }
    let log = args.log.clone();
    let listening = format!("{tag}listening on http://");
    let cluster_ended = member.clone().map(|partitions| async move {
        // Its workers end with the cluster; a silent peer that may come back does not
        // end this process's server (its queries fail meanwhile).
        while !partitions.ended() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let stop = async move {
        match cluster_ended {
            Some(ended) => ended.await,
            None => std::future::pending().await,
        }
    };
    let served = quiver_server::run_until(datasets, config, args.bind, stop, |address| {
        log.say(&format!("{listening}{address}"));
    });
    let Some(partitions) = member else {
        args.log.say("server stopped");
        served?;
        return Ok(());
    };
    let ended = if partitions.ended() {
        // The cluster ended: as a process that serves no HTTP, say whether it ended well
        // (process 0 stopped it) or a connection closed first.
        match Arc::try_unwrap(partitions) {
            Ok(partitions) => partitions.wait(),
            Err(_) => Ok(()),
        }
    } else {
        // A process that leaves a running cluster (a signal) does not wait for process 0
        // to end it: the others find its connections closed.
        partitions.leave();
        Ok(())
    };
    args.log.say(&format!("process {} stopped", args.process));
    served?;
    ended.map_err(|error| anyhow!("process {}: {error}", args.process))
}

/// Joins the cluster of `hosts` as process `args.process`, serving its partitions of the
/// store at `args.location`. Process 0 (and with `--accept-queries`, any process) gets
/// the database of its own first partition and runs the queries' basic graph patterns on
/// the cluster (`config.partitions`), coordinating them; another process serves until
/// process 0 ends and returns `None`.
fn join_cluster(
    args: &ServeArgs,
    hosts: &Path,
    config: &mut Config,
) -> Result<Option<(Database, Arc<TimelyPartitions>)>> {
    let location = root_location(args)?;
    if !args.dataset.is_empty() {
        bail!("a cluster serves one partitioned store (--location), not --dataset");
    }
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
    args.log.say(&format!(
        "process {} of {processes}: serving partitions {}..{} of {}, waiting for the other processes",
        args.process,
        args.process * workers,
        (args.process + 1) * workers,
        location.display()
    ));
    let partitions = match TimelyPartitions::cluster(location, cluster) {
        Ok(partitions) => partitions,
        Err(error) => {
            // Said as a process that started says it stops: the processes share a terminal.
            args.log.say(&format!("process {} stopped", args.process));
            return Err(anyhow!("process {}: {error}", args.process));
        }
    };
    args.log.say(&match partitions.types() {
        Some(table) => format!(
            "process {}: the cluster's rdf:type memberships held here ({} pairs, {}), type checks run where the rows are",
            args.process,
            table.pairs().len(),
            crate::memory::mib(table.bytes() as u64)
        ),
        None => format!(
            "process {}: no rdf:type memberships replicated (past the layout's replication budget), type checks run at their owners",
            args.process
        ),
    });
    if let Some(replicas) = partitions.replicas().filter(|r| !r.edges.is_empty()) {
        let pairs: usize = replicas.edges.iter().map(|e| e.out.pairs().len()).sum();
        let bytes: usize = replicas
            .edges
            .iter()
            .map(|e| e.out.bytes() + e.inward.bytes())
            .sum();
        args.log.say(&format!(
            "process {}: the edges of {} small predicates held here ({pairs} edges, {}), walks of them run where the rows are",
            args.process,
            replicas.edges.len(),
            crate::memory::mib(bytes as u64)
        ));
    }
    if partitions.replicas().is_some() {
        let kept = quiver_cluster::kept_replicas::kept_dir(location, partitions.first_partition());
        let how = match (
            partitions.replicas_read_from_kept(),
            partitions.kept_replicas_written(),
        ) {
            (true, _) => "read from the copy this process kept at its last start".to_owned(),
            (false, Some(Ok(()))) => format!(
                "exchanged as the cluster started, and kept for the next start in {}",
                kept.display()
            ),
            (false, Some(Err(error))) => format!(
                "exchanged as the cluster started; they could not be kept for the next start ({error})"
            ),
            (false, None) => "exchanged as the cluster started (another process kept no copy of these partitions)".to_owned(),
        };
        args.log
            .say(&format!("process {}: the replicas {how}", args.process));
    }
    for stray in partitions.removed_stray_copies() {
        args.log.say(&format!(
            "process {}: removed {}, replicas kept by a cluster of another shape on these partitions",
            args.process,
            stray.display()
        ));
    }
    if args.process != 0 && !args.accept_queries {
        let ended = partitions.wait();
        // One write (as every line `say` writes): the processes of a cluster on this
        // machine often share a terminal or a log, and stop at the same moment.
        args.log.say(&format!("process {} stopped", args.process));
        ended.map_err(|error| anyhow!("process {}: {error}", args.process))?;
        return Ok(None);
    }
    let total = (processes * workers) as u32;
    let (mut coordinator, layout) =
        crate::local_cluster::coordinator(&partitions, location, total)?;
    // Plans are made here, for the whole store: with its statistics, not partition 0's.
    if let Some(statistics) = &layout.statistics {
        coordinator.use_statistics(statistics);
    }
    let tag = match args.process {
        0 => String::new(),
        process => format!("process {process}: "),
    };
    args.log.say(&format!(
        "{tag}store {}: {} triples, {} terms in {total} partitions over {processes} processes; read-only",
        location.display(),
        layout.triples,
        layout.terms
    ));
    let partitions = Arc::new(partitions);
    config.partitions = Some(Arc::clone(&partitions) as Arc<dyn BgpPartitions>);
    config.whole_store = Some((layout.triples, layout.terms));
    Ok(Some((Database::in_memory(coordinator), partitions)))
}
