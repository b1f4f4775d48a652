//! `quiver bench bsbm`: the Berlin SPARQL Benchmark's test driver. Query mixes of the
//! explore or business-intelligence use case (`quiver_bsbm::mix`), parameters drawn from
//! the generator's plan of the same products and seed, run by N concurrent clients
//! against the store in process (`--location`, `--data`, or a dataset generated in
//! memory) or against any SPARQL endpoint (`--endpoint`), after warm-up mixes, as the
//! reference driver runs them.
//!
//! Clients take the next mix number from a shared counter; mix `k` has the same query
//! texts whichever client runs it (`Driver::mix`), so the rows of every query can be
//! compared across engines: `--json` keeps them, `--expect` checks them against another
//! run's file. Each query is timed from its text to its whole result (serialized as TSV,
//! N-Triples for DESCRIBE and CONSTRUCT, in process; read to the last byte over HTTP).
//! The report gives query mixes per hour (QMpH: measured mixes over the wall time of the
//! measured phase) and, per template, count, mean, percentiles, queries per second and
//! rows per query (`report.rs`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use quiver_bsbm::mix::{Driver, UseCase};
use quiver_bsbm::{BsbmConfig, Plan};
use quiver_sparql::ExecOptions;
use quiver_store::Store;

use crate::bench_log::endpoint::Endpoint;

mod report;

use report::{Report, Sample};

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MixArg {
    /// The explore use case (25 queries a mix)
    #[default]
    Explore,
    /// The business-intelligence use case (15 queries a mix)
    Bi,
    /// Explore, then business intelligence
    Both,
}

#[derive(Args, Debug)]
pub struct BsbmBenchArgs {
    /// Products of the dataset, as given to `quiver gen bsbm`: the parameters are drawn
    /// from its plan
    #[arg(long)]
    pub products: u32,
    /// Seed the dataset was generated with
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Generate the dataset in memory with every ancestor type of a product (`gen bsbm
    /// --forward-chaining`), which the BI queries on upper levels of the type tree need
    #[arg(long)]
    pub forward_chaining: bool,
    /// Run on the store at this location
    #[arg(long, conflicts_with_all = ["data", "endpoint"])]
    pub location: Option<PathBuf>,
    /// Load these files into memory and run on them
    #[arg(long, num_args = 1.., conflicts_with = "endpoint")]
    pub data: Vec<PathBuf>,
    /// Send the queries to this SPARQL endpoint (`http://host:port/query`), one
    /// keep-alive connection per client
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Which use case's query mix
    #[arg(long, value_enum, default_value_t)]
    pub mix: MixArg,
    /// Concurrent clients
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub clients: u32,
    /// Measured query mixes, shared by the clients
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// Warm-up query mixes before the measured ones
    #[arg(long, default_value_t = 10)]
    pub warmup: u32,
    /// Seed of the parameters (the reference driver's default)
    #[arg(long, default_value_t = 808_080)]
    pub driver_seed: u64,
    /// Time limit of each query
    #[arg(long, default_value = "60s", value_parser = crate::limits::parse_seconds)]
    pub timeout: Duration,
    /// Memory limit of each query's operators (in process)
    #[arg(long, default_value = "4G", value_parser = crate::limits::parse_size)]
    pub max_memory: usize,
    /// Worker threads of each query in process (default: all cores)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// The engine's name in the report
    #[arg(long, default_value = "quiver")]
    pub label: String,
    /// Write the report, with every query's rows, as JSON
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write one line per template as CSV
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Check every query's rows against another run's --json (same products, seeds and
    /// runs); fails listing the queries that differ
    #[arg(long)]
    pub expect: Option<PathBuf>,
    /// Write the measured mixes' queries to this file as a JSON list of {name, query}
    /// (what `bench log` reads) and run nothing
    #[arg(long)]
    pub write_queries: Option<PathBuf>,
}

/// Where the queries go.
enum Target {
    Store(Arc<Store>, ExecOptions),
    Endpoint(String),
}

/// One client's way to run a query: its rows, or a status and message.
enum Runner<'a> {
    Store(&'a Store, &'a ExecOptions),
    Endpoint(Box<Endpoint>, Duration),
}

impl Runner<'_> {
    fn run(&mut self, text: &str) -> std::result::Result<usize, (&'static str, String)> {
        match self {
            Runner::Store(store, options) => crate::bench_log::run_once(store, text, options)
                .map_err(|e| (crate::bench_log::status_of(&e), e.to_string())),
            Runner::Endpoint(endpoint, timeout) => endpoint.request(text, *timeout),
        }
    }
}

impl Target {
    fn runner(&self, timeout: Duration) -> Result<Runner<'_>> {
        Ok(match self {
            Target::Store(store, options) => Runner::Store(store, options),
            Target::Endpoint(url) => Runner::Endpoint(Box::new(Endpoint::new(url)?), timeout),
        })
    }

    fn describe(&self) -> String {
        match self {
            Target::Store(store, _) => format!("in process, {} triples", store.triples()),
            Target::Endpoint(url) => url.clone(),
        }
    }
}

pub fn run(args: BsbmBenchArgs) -> Result<()> {
    let config = BsbmConfig {
        forward_chaining: args.forward_chaining,
        ..BsbmConfig::new(args.products, args.seed)
    };
    let plan = Plan::new(config).context("--products")?;
    let use_cases: &[UseCase] = match args.mix {
        MixArg::Explore => &[UseCase::Explore],
        MixArg::Bi => &[UseCase::BusinessIntelligence],
        MixArg::Both => &UseCase::ALL,
    };
    let driver = Driver::new(&plan, args.driver_seed);
    if let Some(path) = &args.write_queries {
        return write_queries(path, &driver, use_cases, args.runs);
    }
    let target = open_target(&args, &config)?;
    let forward_chaining = check_dataset(&target, &plan, args.timeout)?;
    if !forward_chaining && use_cases.contains(&UseCase::BusinessIntelligence) {
        eprintln!(
            "warning: products are typed with their leaf type only; BI Q4, Q5, Q7 and Q8 on \
             upper types will find nothing (generate with --forward-chaining)"
        );
    }
    let mut reports = Vec::new();
    for &use_case in use_cases {
        eprintln!(
            "BSBM {}: {} clients, {} warm-up and {} measured mixes on {} …",
            use_case.short_name(),
            args.clients,
            args.warmup,
            args.runs,
            target.describe()
        );
        let (samples, seconds) = run_use_case(&target, &driver, use_case, &args)?;
        reports.push(Report::new(use_case, &args, samples, seconds));
    }
    for report in &reports {
        print!("{}", report.text());
    }
    if let Some(path) = &args.json {
        let json = report::json(&reports, &args, target.describe());
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.csv {
        let csv: String =
            report::CSV_HEADER.to_owned() + &reports.iter().map(Report::csv).collect::<String>();
        std::fs::write(path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &args.expect {
        report::check_expected(path, &reports)?;
    }
    Ok(())
}

/// The queries of mixes `0..runs` of each use case, named `explore-q7 mix 3 #11`.
fn write_queries(path: &Path, driver: &Driver<'_>, use_cases: &[UseCase], runs: u32) -> Result<()> {
    let mut list = Vec::new();
    for &use_case in use_cases {
        for run in 0..u64::from(runs) {
            for (position, query) in driver.mix(use_case, run).into_iter().enumerate() {
                list.push(serde_json::json!({
                    "name": format!("{} mix {run} #{position}", query.template.name()),
                    "query": query.text,
                }));
            }
        }
    }
    std::fs::write(path, serde_json::to_string_pretty(&list)? + "\n")
        .with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!("{} queries written to {}", list.len(), path.display());
    Ok(())
}

fn open_target(args: &BsbmBenchArgs, config: &BsbmConfig) -> Result<Target> {
    if let Some(url) = &args.endpoint {
        return Ok(Target::Endpoint(url.clone()));
    }
    let store = if let Some(location) = &args.location {
        crate::location::open_snapshot(location)?
    } else if !args.data.is_empty() {
        crate::bench_log::load_in_memory(&args.data)?
    } else {
        // Generated into a file the parallel loader reads, removed once loaded.
        let path =
            std::env::temp_dir().join(format!("quiver-bench-bsbm-{}.nt", std::process::id()));
        eprintln!("generating BSBM with {} products …", config.products);
        let written = (|| -> Result<()> {
            let mut file = std::io::BufWriter::new(
                std::fs::File::create(&path)
                    .with_context(|| format!("cannot write {}", path.display()))?,
            );
            quiver_bsbm::write_ntriples(config, rayon::current_num_threads(), &mut file)?;
            Ok(std::io::Write::flush(&mut file)?)
        })();
        let loaded =
            written.and_then(|()| crate::bench_log::load_in_memory(std::slice::from_ref(&path)));
        let _ = std::fs::remove_file(&path);
        loaded?
    };
    let options = ExecOptions {
        threads: args
            .threads
            .map_or_else(rayon::current_num_threads, |t| t as usize),
        timeout: Some(args.timeout),
        max_memory: Some(args.max_memory),
        ..ExecOptions::default()
    };
    Ok(Target::Store(store, options))
}

/// Checks that the target holds the dataset of `plan` (its last product, under the
/// producer the plan gives it, and no more product types than the plan's); returns
/// whether products carry their ancestor types.
fn check_dataset(target: &Target, plan: &Plan, timeout: Duration) -> Result<bool> {
    use quiver_bsbm::ntriples::{bracketed_iri as iri, Node};
    let last = plan.products();
    let last_product = iri(Node::Product {
        producer: plan.producer_of(last),
        product: last,
    });
    let vocabulary = quiver_bsbm::vocab::BSBM;
    let mut runner = target.runner(timeout)?;
    let mut ask = |query: String| -> Result<bool> {
        match runner.run(&query) {
            Ok(rows) => Ok(rows > 0),
            Err((status, message)) => bail!("checking the dataset: {status}: {message}"),
        }
    };
    let has_last = ask(format!("ASK {{ {last_product} a <{vocabulary}Product> }}"))?;
    let extra_type = iri(Node::ProductType(plan.types.len() as u32 + 1));
    let has_extra = ask(format!(
        "ASK {{ {extra_type} a <{vocabulary}ProductType> }}"
    ))?;
    if !has_last || has_extra {
        bail!(
            "the data is not BSBM's dataset of {} products with seed {}: give --products and \
             --seed as given to `quiver gen bsbm`",
            plan.products(),
            plan.config.seed
        );
    }
    let first = iri(Node::Product {
        producer: 1,
        product: 1,
    });
    let root = iri(Node::ProductType(1));
    ask(format!("ASK {{ {first} a {root} }}"))
}

/// First mix number of the warm-up runs, far from the measured ones.
const WARMUP_BASE: u64 = 1 << 32;

/// Runs the warm-up mixes, then the measured ones; the measured samples and the wall time
/// of the measured phase.
fn run_use_case(
    target: &Target,
    driver: &Driver<'_>,
    use_case: UseCase,
    args: &BsbmBenchArgs,
) -> Result<(Vec<Sample>, f64)> {
    let run_phase = |first: u64, mixes: u64, progress: &indicatif::ProgressBar| {
        let next = AtomicU64::new(0);
        std::thread::scope(|scope| {
            let clients: Vec<_> = (0..args.clients)
                .map(|_| {
                    scope.spawn(|| -> Result<Vec<Sample>> {
                        let mut runner = target.runner(args.timeout)?;
                        let mut samples = Vec::new();
                        loop {
                            let k = next.fetch_add(1, Ordering::Relaxed);
                            if k >= mixes {
                                return Ok(samples);
                            }
                            for (position, query) in
                                driver.mix(use_case, first + k).into_iter().enumerate()
                            {
                                let started = Instant::now();
                                let outcome = runner.run(&query.text);
                                samples.push(Sample {
                                    mix: k,
                                    position: position as u32,
                                    template: query.template.number,
                                    text_crc: crc32fast::hash(query.text.as_bytes()),
                                    micros: started.elapsed().as_secs_f64() * 1e6,
                                    outcome: outcome.map_err(|(s, m)| (s.to_owned(), m)),
                                });
                            }
                            progress.inc(1);
                        }
                    })
                })
                .collect();
            let mut all = Vec::new();
            for client in clients {
                all.extend(client.join().expect("a client panicked")?);
            }
            Ok::<_, anyhow::Error>(all)
        })
    };
    if args.warmup > 0 {
        run_phase(
            WARMUP_BASE,
            u64::from(args.warmup),
            &indicatif::ProgressBar::hidden(),
        )?;
    }
    let progress = crate::bench_log::progress_bar(u64::from(args.runs), "query mixes");
    let started = Instant::now();
    let mut samples = run_phase(0, u64::from(args.runs), &progress)?;
    let seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    samples.sort_by_key(|s| (s.mix, s.position));
    Ok((samples, seconds))
}
