//! The `quiver` command line: the binary edge of the workspace.
//!
//! Exit codes: 0 success, 1 runtime error, 2 usage error (clap), 141 when the reader of
//! standard output went away (as a process killed by SIGPIPE would report).

mod bench;
mod bench_bsbm;
mod bench_emulate;
mod bench_kv;
mod bench_log;
mod bench_lubm;
mod bench_scale;
mod bench_serialize;
mod bench_text;
mod bench_update;
mod checkpoint;
mod cluster;
mod completions;
mod config_file;
mod console;
mod datasets;
mod demo;
mod device;
mod dump;
mod gen;
mod info;
mod limits;
mod load;
mod load_cluster;
mod local_cluster;
mod location;
mod log_lines;
mod logging;
mod memory;
mod output;
mod partition;
mod plot;
mod query;
mod reason;
mod reference;
mod serve;
mod serve_args;
mod service;
mod table;
mod text_index;
mod update;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "quiver",
    version,
    about = "Quiver: an in-memory RDF graph store and SPARQL engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate benchmark data
    #[command(subcommand)]
    Gen(gen::GenCommand),
    /// Load RDF files (or LUBM from the generator) into a store
    Load(load::LoadArgs),
    /// Run a SPARQL query against a store
    Query(query::QueryArgs),
    /// Run a SPARQL Update request against a store, as one transaction
    Update(update::UpdateArgs),
    /// Write every quad of a store as N-Quads, TriG, N-Triples, Turtle or JSON-LD
    Dump(dump::DumpArgs),
    /// Fold a store's log of commits into a new snapshot (done automatically past a size)
    Checkpoint(checkpoint::CheckpointArgs),
    /// Compute (or drop) the RDFS or OWL 2 RL entailment of a store's default graph
    Reason(reason::ReasonArgs),
    /// Build or drop a store's full-text index (searched with `?literal quiver:matches "words"`)
    #[command(subcommand)]
    TextIndex(text_index::TextIndexCommand),
    /// Cut a store into the partitions of a cluster (one per process)
    Partition(partition::PartitionArgs),
    /// Serve a store over HTTP: SPARQL 1.1 Protocol endpoint and a browser query page
    Serve(serve_args::ServeArgs),
    /// Serve a partitioned store with a cluster of processes on this machine (process 0
    /// serves HTTP, as `serve` does)
    Cluster(cluster::ClusterArgs),
    /// Describe a store: size, memory, statistics
    Info(info::InfoArgs),
    /// Benchmarks
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Run the main job on an embedded default dataset (LUBM-1)
    Demo,
    /// An interactive shell on a store: SPARQL with timings, loading, statistics, settings
    Console(console::ConsoleArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    Completions(completions::CompletionsArgs),
    /// Write the manual pages (roff), one per subcommand, into a directory (or, with
    /// --markdown, the book's command-line reference)
    Man(completions::ManArgs),
}

/// The number of worker threads: the user's choice, else every core.
pub fn threads(requested: Option<u32>) -> usize {
    requested.map(|n| n as usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

fn main() -> ExitCode {
    // `serve --config FILE`: the file's flags join the command line's before parsing.
    let args = match config_file::merge(std::env::args_os().collect(), &Cli::command()) {
        Ok(args) => args,
        Err(error) => {
            eprintln!("error: {error:#}");
            return ExitCode::from(2);
        }
    };
    let cli = match Cli::command()
        .try_get_matches_from(args)
        .and_then(|matches| Cli::from_arg_matches(&matches))
    {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    // A cluster's lost connection is one line of the log, not each of timely's threads'
    // panics with their backtraces.
    quiver_cluster::connect::report_lost_connections(|message| {
        if tracing::dispatcher::has_been_set() {
            tracing::error!(target: "quiver", "{message}");
        } else {
            eprintln!("error: {message}");
        }
    });
    let result = match cli.command {
        Command::Gen(command) => gen::run(command),
        Command::Load(args) if load::by_processes(&args) => load_cluster::run(args),
        Command::Load(args) => load::run(args),
        Command::Query(args) => query::run(args),
        Command::Update(args) => update::run(args),
        Command::Dump(args) => dump::run(args),
        Command::Checkpoint(args) => checkpoint::run(args),
        Command::Reason(args) => reason::run(args),
        Command::TextIndex(command) => text_index::run(command),
        Command::Partition(args) => partition::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Cluster(args) => cluster::run(args),
        Command::Info(args) => info::run(args),
        Command::Bench(command) => bench::run(command),
        Command::Demo => demo::run(),
        Command::Console(args) => console::run(args),
        Command::Completions(args) => completions::completions(args, Cli::command()),
        Command::Man(args) => completions::man(args, Cli::command()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if output::is_broken_pipe(&error) => ExitCode::from(141),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
