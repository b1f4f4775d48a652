//! `quiver query`: run a SPARQL query against a store and stream the results.

use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use quiver_sparql::{prepare, write_results, ExecOptions, PrepareOptions, ResultsFormat};

use crate::limits::{LimitArgs, QueryLimits};

#[derive(Args, Debug)]
pub struct QueryArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// The query text
    #[arg(
        long,
        conflicts_with = "query_file",
        required_unless_present = "query_file"
    )]
    pub query: Option<String>,
    /// A file holding the query
    #[arg(long)]
    pub query_file: Option<PathBuf>,
    /// Results format: json, xml, csv, tsv (SELECT/ASK); nt, ttl, rdfxml, jsonld
    /// (CONSTRUCT/DESCRIBE).
    /// Without it, an aligned table on a terminal and JSON otherwise
    #[arg(long, value_parser = parse_format)]
    pub results_format: Option<ResultsFormat>,
    /// Print the plan with estimated and actual rows and time per step (on stderr)
    #[arg(long)]
    pub explain: bool,
    /// Worker threads for heavy queries (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    /// A user plan in the Wukong plan-file format, instead of the planner's
    #[arg(long)]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub service: crate::service::ServiceArgs,
    /// Base IRI for relative IRIs in the query
    #[arg(long)]
    pub base: Option<String>,
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
    /// Answer from the store's entailment (asserted and derived triples; see `load
    /// --reasoning`) instead of the asserted triples alone
    #[arg(long)]
    pub reasoning: bool,
}

fn parse_format(name: &str) -> Result<ResultsFormat, String> {
    ResultsFormat::from_name(name).ok_or_else(|| {
        format!("unknown results format '{name}' (json, xml, csv, tsv, nt, ttl, rdfxml, jsonld)")
    })
}

pub fn run(args: QueryArgs) -> Result<()> {
    let text = match (&args.query, &args.query_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) => std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?,
        (None, None) => unreachable!("clap requires one of them"),
    };
    let plan = match &args.plan {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?,
        ),
        None => None,
    };
    let store = crate::location::open_snapshot(&args.location)?;
    let store = crate::reason::view(&store, args.reasoning)?;
    let prepared = prepare(
        &store,
        &text,
        &PrepareOptions {
            base_iri: args.base.clone(),
            plan,
            dataset: None,
            partitions: None,
        },
    )?;
    let threads = crate::threads(args.threads);
    // The engine runs heavy steps on rayon's global pool when it has `threads` threads
    // (otherwise on a pool of its own, started per step).
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global();
    let device = args.device.open(&store)?;
    let mut options = ExecOptions {
        threads,
        device: crate::device::as_bgp_device(&device),
        service: Some(args.service.client(false)),
        ..ExecOptions::default()
    };
    args.limits
        .resolve(QueryLimits::default())
        .apply(&mut options);
    let (results, profile) = prepared.execute_profiled(&store, &options)?;
    let stdout = std::io::stdout().lock();
    let table = args.results_format.is_none() && stdout.is_terminal();
    let buffered = BufWriter::with_capacity(1 << 16, stdout);
    let written = if table {
        crate::table::write_results(&results, buffered)
    } else {
        let format = args.results_format.unwrap_or(ResultsFormat::Json);
        write_results(&results, format, buffered)
    };
    let mut writer = written.context("writing to standard output")?;
    writer.flush().context("writing to standard output")?;
    if args.explain {
        eprint!("{}", quiver_sparql::explain::render(&profile));
    }
    Ok(())
}
