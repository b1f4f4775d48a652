//! Reasoning at the command line: `load --reasoning PROFILE --ontology FILE`, `quiver
//! reason --location DIR`, and the `--reasoning` switch of the commands that query.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_store::{Entailment, Profile, Report, Store, View};

use crate::location::{has_log, has_store, open_database, open_snapshot, save_loaded};
use crate::memory::{mib, peak_rss};

/// A profile, or `none` for no entailment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningChoice {
    Profile(Profile),
    None,
}

fn parse_choice(text: &str) -> Result<ReasoningChoice, String> {
    match text {
        "none" | "off" => Ok(ReasoningChoice::None),
        _ => text.parse().map(ReasoningChoice::Profile),
    }
}

/// The reasoning options of `quiver load`.
#[derive(Args, Debug, Default)]
pub struct ReasoningArgs {
    /// Also store the entailment of the default graph under PROFILE: rdfs or owl-rl (none:
    /// drop an existing store's; without the flag a store keeps its profile, computed again
    /// over the new data)
    #[arg(long, value_name = "PROFILE", value_parser = parse_choice)]
    pub reasoning: Option<ReasoningChoice>,
    /// An ontology to load with the data (repeatable; for --lubm, say, univ-bench.owl)
    #[arg(long, value_name = "FILE")]
    pub ontology: Vec<PathBuf>,
}

impl ReasoningArgs {
    /// The profile to reason with, given the existing store's entailment.
    pub fn profile(&self, existing: Option<&Entailment>) -> Option<Profile> {
        match self.reasoning {
            Some(ReasoningChoice::Profile(profile)) => Some(profile),
            Some(ReasoningChoice::None) => None,
            None => existing.map(Entailment::profile),
        }
    }
}

/// `store` with its entailment under `profile`, each round reported on stderr.
pub fn materialise(store: &Store, profile: Profile) -> (Store, Report) {
    eprintln!(
        "reasoning ({profile}) over {} triples",
        store.graph().triples()
    );
    let mut progress = |round: &quiver_store::Round| {
        eprintln!(
            "  round {}: rules fired on {} triples, {} new in {:.2} s",
            round.number, round.fired, round.derived, round.seconds
        );
    };
    store.reasoned(profile, &mut progress)
}

pub fn summary(store: &Store, report: &Report) {
    let entailed = store.entailment().map_or(0, Entailment::triples);
    eprintln!(
        "entailment ({}): {} triples derived in {:.2} s ({:.0}/s, {} rounds); {} triples entailed in the default graph; peak memory {}",
        report.profile,
        report.derived,
        report.seconds,
        report.derived as f64 / report.seconds.max(1e-9),
        report.rounds.len(),
        entailed,
        peak_rss().map_or_else(|| "unknown".to_owned(), mib),
    );
}

#[derive(Args, Debug)]
pub struct ReasonArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// rdfs or owl-rl (default: the store's own profile, else owl-rl)
    #[arg(long, value_parser = parse_profile, conflicts_with = "off")]
    pub profile: Option<Profile>,
    /// Drop the store's entailment instead
    #[arg(long)]
    pub off: bool,
    /// Worker threads (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub sync: crate::location::SyncArgs,
}

fn parse_profile(text: &str) -> Result<Profile, String> {
    text.parse()
}

/// `quiver reason`: computes (or drops) the entailment of a stored default graph and
/// saves the store with it.
pub fn run(args: ReasonArgs) -> Result<()> {
    let threads = crate::threads(args.threads);
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    if !has_store(&args.location) {
        bail!("no store at {}", args.location.display());
    }
    let database = if has_log(&args.location) {
        Some(open_database(&args.location, args.sync.sync, false)?)
    } else {
        None
    };
    let store = match &database {
        Some(database) => database.snapshot(),
        None => open_snapshot(&args.location)?,
    };
    if store.info().partition.is_some() {
        bail!(
            "{} is a partition of a cluster: reason over the whole store before cutting it",
            args.location.display()
        );
    }
    if args.off {
        let (_, bytes) = save_loaded(
            database.as_ref(),
            &args.location,
            store.without_entailment(),
        )
        .context("saving the store without its entailment")?;
        eprintln!("entailment dropped; {} on disk", mib(bytes));
        return Ok(());
    }
    let profile = args
        .profile
        .or_else(|| store.entailment().map(Entailment::profile))
        .unwrap_or(Profile::OwlRl);
    let (reasoned, report) = materialise(&store, profile);
    drop(store);
    let (store, bytes) = save_loaded(database.as_ref(), &args.location, reasoned)?;
    summary(&store, &report);
    eprintln!("saved: {} on disk", mib(bytes));
    Ok(())
}

/// The view a query reads: the entailed one when `reasoning` asks for it (an error
/// naming the fix if the store has none).
pub fn view(store: &Store, reasoning: bool) -> Result<Store> {
    if !reasoning {
        return Ok(store.asserted());
    }
    store.with_view(View::Entailed).ok_or_else(|| {
        anyhow::anyhow!(
            "--reasoning: the store has no entailment; load it with --reasoning rdfs|owl-rl (and --ontology FILE), or run `quiver reason --location DIR`"
        )
    })
}
