//! `quiver load --processes N` and `quiver load --cluster HOSTFILE --process I`: a cluster
//! loaded by its processes (`quiver_cluster::load`), each parsing its share of the input,
//! so that no process ever holds the whole graph or dictionary. `--processes` starts
//! processes 1…N−1 on this machine (loopback) and is process 0; `--cluster` joins a load
//! whose processes run anywhere, each started with the same input.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use quiver_cluster::load::{load_cluster, LoadCluster, LoadInput, LoadedCluster};
use quiver_cluster::ClusterConfig;
use quiver_loader::{collect_sources, LoadOptions, NoProgress, Progress};
use quiver_lubm::LubmConfig;

use crate::load::LoadArgs;
use crate::local_cluster::{read_hosts, Peers};
use crate::memory::mib;

pub fn run(args: LoadArgs) -> Result<()> {
    let threads = crate::load::start(&args)?;
    if args.reasoning.reasoning.is_some() {
        bail!("--reasoning is not available for a cluster load yet: load one store with it");
    }
    let paths: Vec<PathBuf> = args.files.iter().chain(&args.more_files).cloned().collect();
    let input = match args.lubm {
        Some(universities) => LoadInput::Lubm {
            config: LubmConfig::standard(universities),
            threads,
        },
        None if paths.is_empty() => {
            bail!("nothing to load: give files or directories (or --lubm N)")
        }
        None => LoadInput::Files {
            piece_bytes: None,
            paths: paths.clone(),
            options: LoadOptions {
                format: args.format,
                lenient: args.lenient,
                threads,
            },
        },
    };
    let workers = args.workers as usize;
    let progress = progress(&args, &input)?;
    let loaded = match (args.processes, &args.cluster) {
        (Some(processes), _) => {
            // A cluster loaded before grows; anything else must be new or empty.
            let grows = matches!(
                quiver_store::partition::read_layout(&args.location),
                Ok(Some(layout)) if !layout.partition_terms.is_empty()
            );
            if !grows {
                crate::partition::ensure_empty(&args.location)?;
            }
            let mut peers = Peers::spawn(processes as usize, |command, hosts, process| {
                command
                    .arg("load")
                    .arg("--location")
                    .arg(&args.location)
                    .arg("--cluster")
                    .arg(hosts)
                    .args(["--process", &process.to_string()])
                    .args(["--workers", &workers.to_string()])
                    .args(["--threads", &threads.to_string()])
                    .arg("--no-progress");
                match args.lubm {
                    Some(universities) => {
                        command.args(["--lubm", &universities.to_string()]);
                    }
                    None => {
                        command.args(&paths);
                        if args.lenient {
                            command.arg("--lenient");
                        }
                        if let Some(format) = args.format {
                            command.args(["--format", format_name(format)]);
                        }
                    }
                }
            })?;
            let config = ClusterConfig {
                process: 0,
                addresses: peers.addresses.clone(),
                workers,
                listener: peers.listener.clone(),
            };
            let loaded = progress.load(&args.location, input, config);
            // The others end with process 0 (a failed load ends them all).
            let statuses = peers.wait_all(Duration::from_secs(30));
            let loaded = loaded?;
            if let Some(process) = statuses.iter().position(|s| *s != Some(true)) {
                bail!("process {} of the load did not end cleanly", process + 1);
            }
            // Once every process has written the layout they share here.
            crate::partition::record_budget(&args.location, args.replication_budget)?;
            loaded
        }
        (None, Some(hosts)) => {
            let addresses = read_hosts(hosts)?;
            let process = args.process.unwrap_or(0);
            if process >= addresses.len() {
                bail!(
                    "--process {process} is not in {} ({} processes)",
                    hosts.display(),
                    addresses.len()
                );
            }
            let config = ClusterConfig {
                process,
                addresses,
                workers,
                listener: crate::local_cluster::inherited(args.listen_fd)?,
            };
            let loaded = progress.load(&args.location, input, config)?;
            // Each process's own layout (on its machine).
            crate::partition::record_budget(&args.location, args.replication_budget)?;
            if process != 0 {
                return Ok(());
            }
            loaded
        }
        (None, None) => unreachable!("called for a cluster load only"),
    };
    report(&loaded, workers);
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "processes": loaded.partitions.len() / workers.max(1),
            "workers": workers,
            "seconds": loaded.seconds,
            "statements": loaded.partitions.iter().map(|p| p.statements).sum::<u64>(),
            "triples": loaded.layout.triples,
            "terms": loaded.layout.terms,
            "partitions": loaded.partitions.iter().map(|p| serde_json::json!({
                "index": p.index,
                "statements": p.statements,
                "triples": p.triples,
                "terms": p.terms,
                "bytes_on_disk": p.bytes,
                "bytes_sent": p.sent,
                "peak_rss": p.peak_rss,
                "cpu_seconds": p.cpu.map(|t| t.total()),
                "kernel_seconds": p.cpu.map(|t| t.system),
                "milestones": p.milestones.iter().map(|(step, seconds)| serde_json::json!({
                    "step": step, "seconds": seconds,
                })).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        });
        std::fs::write(path, serde_json::to_vec_pretty(&json)?)
            .map_err(|e| anyhow!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// The progress shown (none for a process another started, which shares its terminal).
struct Shown(
    Arc<dyn Progress + Send + Sync>,
    Option<indicatif::ProgressBar>,
);

impl Shown {
    /// This process's part of the load into `location`, showing its progress.
    fn load(
        &self,
        location: &std::path::Path,
        input: LoadInput,
        config: ClusterConfig,
    ) -> Result<LoadedCluster> {
        let loaded = load_cluster(
            location,
            input,
            LoadCluster::Processes(config),
            Arc::clone(&self.0),
        );
        if let Some(bar) = &self.1 {
            bar.finish_and_clear();
        }
        loaded.map_err(|e| anyhow!(e))
    }
}

fn progress(args: &LoadArgs, input: &LoadInput) -> Result<Shown> {
    if args.no_progress {
        return Ok(Shown(Arc::new(NoProgress), None));
    }
    let shown = match input {
        LoadInput::Lubm { config, .. } => crate::load::progress(
            u64::from(config.universities),
            "{bar:40} {pos}/{len} universities (all processes), {msg} here",
        ),
        LoadInput::Files { paths, options, .. } => {
            let total: u64 = collect_sources(paths, options.format)?
                .iter()
                .map(|s| s.bytes)
                .sum();
            crate::load::progress(
                total,
                "{bar:40} {bytes}/{total_bytes} of all processes' input ({bytes_per_sec}), {msg} here",
            )
        }
    };
    let bar = shown.bar.clone();
    Ok(Shown(Arc::new(shown), Some(bar)))
}

fn format_name(format: quiver_loader::Format) -> &'static str {
    use quiver_loader::Format;
    match format {
        Format::NTriples => "nt",
        Format::NQuads => "nq",
        Format::Turtle => "ttl",
        Format::TriG => "trig",
        Format::RdfXml => "rdfxml",
        Format::JsonLd => "jsonld",
    }
}

/// Every partition's figures, and the cluster's.
fn report(loaded: &LoadedCluster, workers: usize) {
    let layout = &loaded.layout;
    let statements: u64 = loaded.partitions.iter().map(|p| p.statements).sum();
    let seconds = loaded.seconds.max(1e-9);
    eprintln!(
        "loaded {statements} statements in {:.2} s ({:.2} M statements/s) into {} partitions: {} triples, {} terms",
        loaded.seconds,
        statements as f64 / seconds / 1e6,
        layout.partitions,
        layout.triples,
        layout.terms,
    );
    eprintln!(
        "partition  process  statements  triples  terms  on disk  sent  peak memory  processor s"
    );
    for partition in &loaded.partitions {
        eprintln!(
            "{:>9}  {:>7}  {:>10}  {:>7}  {:>5}  {}  {}  {}  {}",
            partition.index,
            partition.index as usize / workers.max(1),
            partition.statements,
            partition.triples,
            partition.terms,
            mib(partition.bytes),
            mib(partition.sent),
            partition.peak_rss.map_or_else(|| "unknown".to_owned(), mib),
            processor_seconds(partition),
        );
    }
    if let Some(line) = milestones_line(&loaded.partitions) {
        eprintln!("{line}");
    }
}

/// A partition's process's processor seconds and the kernel's share of them, as
/// `35.8 (30 % in the kernel)`; `unknown` where the system did not tell.
fn processor_seconds(partition: &quiver_cluster::load::PartitionSummary) -> String {
    let Some(cpu) = partition.cpu else {
        return "unknown".to_owned();
    };
    match cpu.kernel_share() {
        Some(kernel) => format!("{:.1} ({:.0} % in the kernel)", cpu.total(), kernel * 100.0),
        None => format!("{:.1}", cpu.total()),
    }
}

/// When the workers reached each step of the load: the first, the median and the last
/// worker, in seconds from each one's start (`None` without milestones).
fn milestones_line(partitions: &[quiver_cluster::load::PartitionSummary]) -> Option<String> {
    let steps: Vec<&str> = partitions
        .first()?
        .milestones
        .iter()
        .map(|(step, _)| step.as_str())
        .collect();
    let parts: Vec<String> = steps
        .iter()
        .filter_map(|step| {
            let mut at: Vec<f64> = partitions
                .iter()
                .filter_map(|p| p.milestones.iter().find(|(s, _)| s == step).map(|m| m.1))
                .collect();
            at.sort_by(f64::total_cmp);
            let (first, last) = (*at.first()?, *at.last()?);
            Some(format!(
                "{step} {first:.2} / {:.2} / {last:.2}",
                at[at.len() / 2]
            ))
        })
        .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "steps, s from each worker's start (first / median / last of {} workers): {}",
            partitions.len(),
            parts.join(", ")
        )
    })
}
