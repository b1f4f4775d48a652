//! `quiver-testsuite SUITE_DIR`: runs the W3C test suites the directory holds (SPARQL 1.0
//! and 1.1 query and update suites; SPARQL 1.2 and RDF 1.2 suites), prints a table per
//! group and the totals, and checks or writes the known-failures ratchet.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use quiver_testsuite::{run_suite, KnownFailures, Options};

#[derive(Parser)]
#[command(
    about = "Runs the W3C SPARQL 1.0/1.1 query and update test suites, and the SPARQL 1.2 and \
             RDF 1.2 test suites, against Quiver",
    long_about = "Runs the W3C test suites against Quiver: those whose root manifest the suite \
                  directory holds, of sparql10/manifest.ttl, sparql11/manifest-all.ttl \
                  (shared/sparql-tests), sparql12/manifest.ttl and rdf12/manifest.ttl \
                  (shared/rdf12-tests). The RDF 1.2 tests (N-Triples, N-Quads, Turtle, TriG, \
                  RDF/XML syntax and evaluation) load their document with Quiver's loader and \
                  compare the store's quads with the expected ones."
)]
struct Args {
    /// The suite directory (holding sparql10/ and sparql11/, or sparql12/ and rdf12/).
    suite: PathBuf,
    /// Print every failure with its reason.
    #[arg(long)]
    verbose: bool,
    /// Only tests whose id, IRI or name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Check the run against this list of known failures; exit 1 on any difference.
    #[arg(long, value_name = "FILE")]
    known_failures: Option<PathBuf>,
    /// Write the failing tests of this run to FILE.
    #[arg(long, value_name = "FILE")]
    write_known_failures: Option<PathBuf>,
    /// Time budget of one test, in seconds.
    #[arg(long, default_value_t = 20)]
    timeout: u64,
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let args = Args::parse();
    // Panics are reported as test failures; say where they happened in one line only.
    let verbose = args.verbose;
    std::panic::set_hook(Box::new(move |info| {
        if verbose {
            if let Some(location) = info.location() {
                eprintln!("panic at {location}");
            }
        }
    }));
    let options = Options {
        filter: args.filter.clone(),
        timeout: Duration::from_secs(args.timeout),
        deployment: None,
    };
    let report = run_suite(&args.suite, &options)?;
    for missing in &report.missing_manifests {
        println!("included manifest not found, its tests not run: {missing}");
    }
    print!("{}", report.table());
    if args.verbose {
        for (result, reason) in report.failures() {
            println!("FAIL {} ({}): {reason}", result.test.id, result.test.name);
        }
    }
    println!("{}", report.summary());
    if let Some(path) = &args.write_known_failures {
        std::fs::write(path, report.known_failures_text())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if let Some(path) = &args.known_failures {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let known = KnownFailures::parse(&text);
        let violations = report.ratchet_violations(&known, args.filter.is_none());
        if !violations.is_empty() {
            for violation in &violations {
                println!("RATCHET {violation}");
            }
            println!("{} ratchet violations", violations.len());
            return Ok(ExitCode::from(1));
        }
        println!("ratchet: {} known failures, all as listed", known.len());
    }
    Ok(ExitCode::SUCCESS)
}
