//! `quiver load`: parse RDF files (or generate LUBM) into the store at `--location`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use quiver_loader::{
    collect_sources, load_files, load_lubm, Format, LoadOptions, LoadReport, Progress,
};
use quiver_lubm::LubmConfig;
use quiver_model::phases::Phase;
use quiver_store::Store;

use crate::location::{has_log, has_store, open_database, open_snapshot, save_loaded};

use crate::memory::{mib, peak_rss};

#[derive(Args, Debug)]
pub struct LoadArgs {
    /// Directory of the store (created if missing; data are added to an existing store)
    #[arg(long)]
    pub location: PathBuf,
    /// A file or directory to load (repeatable)
    #[arg(long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// More files or directories to load
    #[arg(value_name = "FILES")]
    pub more_files: Vec<PathBuf>,
    /// Syntax of every input: nt, nq, ttl, trig, rdfxml, jsonld (default: from each file's
    /// extension)
    #[arg(long, value_parser = parse_format)]
    pub format: Option<Format>,
    /// Skip malformed statements (reporting how many) instead of aborting
    #[arg(long)]
    pub lenient: bool,
    /// Worker threads (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    /// Load LUBM-N straight from the generator instead of files
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), conflicts_with_all = ["files", "more_files", "format", "lenient"])]
    pub lubm: Option<u32>,
    /// Write the loaded store cut into N partitions, one per process of a cluster (the
    /// location must then be new or empty)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=quiver_store::partition::MAX_PARTITIONS as i64), conflicts_with_all = ["processes", "cluster"])]
    pub partitions: Option<u32>,
    /// Load a cluster with N processes started on this machine, each parsing its share of
    /// the input (no process holds the whole graph or dictionary); into a new or empty
    /// location, or adding to a cluster loaded there before by as many processes
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256), conflicts_with = "cluster")]
    pub processes: Option<u32>,
    /// Join the load of a cluster as process --process, the processes' addresses
    /// (`host:port`, one per line, process 0 first) in this file
    #[arg(long, value_name = "HOSTFILE", requires = "process")]
    pub cluster: Option<PathBuf>,
    /// This process's number in --cluster
    #[arg(long, requires = "cluster")]
    pub process: Option<usize>,
    /// Workers per process of a cluster load, one partition each
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
    /// This process's listening socket in --cluster, inherited as this descriptor from the
    /// process that started it (`--processes`): no port to bind, none to race for
    #[arg(long, value_name = "FD", requires = "cluster", hide = true)]
    pub listen_fd: Option<i32>,
    /// With --partitions, --processes or --cluster: the most memory each process of the
    /// cluster gives to the `rdf:type` memberships and small predicates it holds for the
    /// whole cluster, so that type checks and their walks run where the rows are (recorded
    /// in the layout; default 1G; 0: none)
    #[arg(long, value_name = "SIZE", value_parser = crate::partition::parse_budget)]
    pub replication_budget: Option<usize>,
    /// Write a cluster load's figures (per partition and in all) to this JSON file
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress bar (the processes `--processes` starts share its terminal)
    #[arg(long, hide = true)]
    pub no_progress: bool,
    /// Build the full-text index of the string literals too (`quiver text-index build`);
    /// a store that has one keeps it current without this flag
    #[arg(long, conflicts_with_all = ["partitions", "processes", "cluster"])]
    pub text_index: bool,
    #[command(flatten)]
    pub reasoning: crate::reason::ReasoningArgs,
    #[command(flatten)]
    pub sync: crate::location::SyncArgs,
}

fn parse_format(name: &str) -> Result<Format, String> {
    Format::from_name(name)
        .ok_or_else(|| format!("unknown format '{name}' (nt, nq, ttl, trig, rdfxml, jsonld)"))
}

/// Progress on a terminal: bytes read (files) or universities generated (LUBM).
pub(crate) struct BarProgress {
    pub(crate) bar: ProgressBar,
    statements: AtomicU64,
}

impl Progress for BarProgress {
    fn bytes(&self, bytes: u64) {
        self.bar.inc(bytes);
    }

    fn statements(&self, statements: u64) {
        let total = self.statements.fetch_add(statements, Ordering::Relaxed) + statements;
        self.bar.set_message(format!("{total} statements"));
    }
}

/// Whether the processes of a cluster load (`--processes`, `--cluster`: `load_cluster.rs`),
/// not this one.
pub(crate) fn by_processes(args: &LoadArgs) -> bool {
    args.processes.is_some() || args.cluster.is_some()
}

/// What every load starts with: the flags checked together, and the worker pool sized;
/// the threads.
pub(crate) fn start(args: &LoadArgs) -> Result<usize> {
    let threads = crate::threads(args.threads);
    // Rayon (sorting, index building) uses the same number of threads.
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let cluster = args.partitions.is_some() || by_processes(args);
    if args.replication_budget.is_some() && !cluster {
        bail!("--replication-budget is for a cluster: give --partitions, --processes or --cluster");
    }
    Ok(threads)
}

/// Loads one store, or one cut into `--partitions` (see [`by_processes`] for a cluster's).
pub fn run(args: LoadArgs) -> Result<()> {
    let threads = start(&args)?;
    if args.partitions.is_some() {
        crate::partition::ensure_empty(&args.location)?;
    }
    // An existing store (with the commits of its log) joins the merge; with a log, the
    // database saves the result and restarts its log after it.
    let database = if has_store(&args.location) && has_log(&args.location) {
        Some(open_database(&args.location, args.sync.sync, false)?)
    } else {
        None
    };
    let existing = match &database {
        Some(database) => Some(database.snapshot()),
        None if has_store(&args.location) => Some(open_snapshot(&args.location)?),
        None => None,
    };
    // A store with reasoning keeps it: its entailment is computed again over the new data.
    let profile = args
        .reasoning
        .profile(existing.as_deref().and_then(|s| s.entailment()));

    let (store, report) = if let Some(universities) = args.lubm {
        let progress = progress(
            universities as u64,
            "{bar:40} {pos}/{len} universities, {msg}",
        );
        let result = load_lubm(
            LubmConfig::standard(universities),
            threads,
            existing.as_deref(),
            &progress,
        );
        progress.bar.finish_and_clear();
        let (store, report) = result?;
        if args.reasoning.ontology.is_empty() {
            (store, report)
        } else {
            // The ontology joins the generated data as a load on top of it.
            let options = LoadOptions {
                format: None,
                lenient: false,
                threads,
            };
            let (store, more) = load_files(
                &args.reasoning.ontology,
                &options,
                Some(&store),
                &quiver_loader::NoProgress,
            )?;
            let mut phases = report.phases.clone();
            quiver_model::phases::add(&mut phases, more.phases);
            (
                store,
                LoadReport {
                    statements: report.statements + more.statements,
                    seconds: report.seconds + more.seconds,
                    phases,
                    ..report
                },
            )
        }
    } else {
        let paths: Vec<PathBuf> = args
            .files
            .iter()
            .chain(&args.more_files)
            .chain(&args.reasoning.ontology)
            .cloned()
            .collect();
        if paths.is_empty() {
            bail!("nothing to load: give files or directories (or --lubm N)");
        }
        let total: u64 = collect_sources(&paths, args.format)?
            .iter()
            .map(|s| s.bytes)
            .sum();
        let progress = progress(
            total,
            "{bar:40} {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta}), {msg}",
        );
        let options = LoadOptions {
            format: args.format,
            lenient: args.lenient,
            threads,
        };
        let result = load_files(&paths, &options, existing.as_deref(), &progress);
        progress.bar.finish_and_clear();
        result?
    };
    drop(existing);
    let (store, reasoning) = match profile {
        Some(profile) => {
            let (store, report) = crate::reason::materialise(&store, profile);
            (store, Some(report))
        }
        None => (store, None),
    };
    if let Some(partitions) = args.partitions {
        if reasoning.is_some() {
            bail!("--reasoning and --partitions: a cluster's partitions do not hold an entailment yet");
        }
        let (bytes_on_disk, save) = saved(|| {
            let bytes = crate::partition::write(&store, &args.location, partitions)?;
            crate::partition::record_budget(&args.location, args.replication_budget)?;
            Ok(bytes)
        })?;
        summary(&store, &report, bytes_on_disk, save);
        return Ok(());
    }
    let indexed = crate::text_index::has_text_index(&args.location);
    let ((store, bytes_on_disk), save) =
        saved(|| save_loaded(database.as_ref(), &args.location, store))?;
    summary(&store, &report, bytes_on_disk, save);
    // Through a database the text index was kept current; a store saved directly gets its
    // index built (again, when it had one: its dictionary is new).
    if database.is_none() && (args.text_index || indexed) {
        crate::text_index::build_after_load(&args.location, &store, threads)?;
    } else if args.text_index && store.text_index().is_none() {
        let database = database.as_ref().expect("saved through the database");
        let report = database.build_text_index(threads)?;
        eprintln!(
            "text index: {} literals in {:.2} s",
            report.literals, report.seconds
        );
    }
    if let Some(reasoning) = reasoning {
        crate::reason::summary(&store, &reasoning);
    }
    Ok(())
}

pub(crate) fn progress(length: u64, template: &str) -> BarProgress {
    let bar = crate::gen::progress_bar(length);
    if !bar.is_hidden() {
        bar.set_style(
            ProgressStyle::with_template(&format!("{{spinner}} [{{elapsed_precise}}] {template}"))
                .expect("valid progress template"),
        );
    }
    BarProgress {
        bar,
        statements: AtomicU64::new(0),
    }
}

/// Runs the save of a loaded store, timed as a phase of its own.
fn saved<T>(save: impl FnOnce() -> Result<T>) -> Result<(T, Phase)> {
    let (value, mut phases) =
        quiver_model::phases::collect(|| quiver_model::phases::time("save", save));
    let phase = phases.pop().expect("the save is timed");
    Ok((value?, phase))
}

/// Phases shorter than this are left out of the line (their time counts as other).
const SHOWN_PHASE_SECONDS: f64 = 0.005;
/// Phases shorter than this show no cores: the system counts processor time by ticks.
const CORES_PHASE_SECONDS: f64 = 0.1;

/// A phase's kernel share is shown from this share up.
const SHOWN_KERNEL_SHARE: f64 = 0.1;

/// Where a load's time went, as one line: each phase's seconds and the cores it kept busy
/// on average (processor seconds ÷ wall seconds) with the kernel's share of them where it
/// is large (first touches of fresh memory), the load's time outside them, then the save's.
fn phases_line(report: &LoadReport, save: &Phase) -> String {
    let one = |p: &Phase| match p.cores().filter(|_| p.seconds >= CORES_PHASE_SECONDS) {
        Some(cores) => match p.kernel_share().filter(|&k| k >= SHOWN_KERNEL_SHARE) {
            Some(kernel) => format!(
                "{} {:.2} s ({cores:.1} cores, {:.0} % in the kernel)",
                p.name,
                p.seconds,
                kernel * 100.0
            ),
            None => format!("{} {:.2} s ({cores:.1} cores)", p.name, p.seconds),
        },
        None => format!("{} {:.2} s", p.name, p.seconds),
    };
    let shown: Vec<&Phase> = report
        .phases
        .iter()
        .filter(|p| p.seconds >= SHOWN_PHASE_SECONDS)
        .collect();
    let mut parts: Vec<String> = shown.iter().map(|p| one(p)).collect();
    let other = report.seconds - shown.iter().map(|p| p.seconds).sum::<f64>();
    if other >= SHOWN_PHASE_SECONDS {
        parts.push(format!("other {other:.2} s"));
    }
    parts.push(one(save));
    format!("where the time went: {}", parts.join(", "))
}

/// The line that ends a load: the seconds of the load itself (parse, encode, build; what
/// other engines' in-memory loads compare with), then of the save; then where the time
/// went, phase by phase.
fn summary(store: &Store, report: &LoadReport, bytes_on_disk: u64, save: Phase) {
    let seconds = report.seconds.max(1e-9);
    eprintln!(
        "loaded {} statements in {:.2} s ({:.0} statements/s), saved in {:.2} s; store: {} triples, {} terms, {} on disk; peak memory {}",
        report.statements,
        report.seconds,
        report.statements as f64 / seconds,
        save.seconds,
        store.triples(),
        store.terms(),
        mib(bytes_on_disk),
        peak_rss().map_or_else(|| "unknown".to_owned(), mib),
    );
    eprintln!("{}", phases_line(report, &save));
    if report.skipped > 0 {
        eprintln!(
            "skipped {} malformed statements; the first:",
            report.skipped
        );
        for error in &report.first_errors {
            eprintln!("  {error}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(name: &'static str, seconds: f64, cpu: f64, kernel: f64) -> Phase {
        let cpu = quiver_model::phases::CpuTimes {
            user: cpu - kernel,
            system: kernel,
        };
        Phase {
            name,
            seconds,
            cpu: Some(cpu),
        }
    }

    #[test]
    fn the_line_gives_cores_and_a_large_kernel_share_but_no_cores_for_short_phases() {
        let report = LoadReport {
            seconds: 3.0,
            phases: vec![
                phase("parse", 1.0, 2.0, 0.1),
                phase("index: out-records", 1.5, 3.0, 1.5),
                phase("predicate ids", 0.05, 0.1, 0.1),
                phase("tiny", 0.001, 0.0, 0.0),
            ],
            ..LoadReport::default()
        };
        let line = phases_line(&report, &phase("save", 0.5, 0.2, 0.02));
        assert_eq!(
            line,
            "where the time went: parse 1.00 s (2.0 cores), \
             index: out-records 1.50 s (2.0 cores, 50 % in the kernel), \
             predicate ids 0.05 s, other 0.45 s, save 0.50 s (0.4 cores)"
        );
    }
}
