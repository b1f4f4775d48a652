//! `quiver serve`: a read-only SPARQL 1.1 Protocol endpoint over a store.
//!
//! Thin on purpose: it parses flags, opens the store, sets up logging (`tracing` to stderr)
//! and the engine's worker pool, and hands over to `quiver_server::run`, which blocks until
//! SIGINT/SIGTERM. Once the socket accepts connections it prints
//! `listening on http://ADDRESS` on stderr (with `--bind 127.0.0.1:0`, the port the system
//! picked), which scripts and tests wait for.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use quiver_server::Config;
use quiver_store::Store;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Directory of the store
    #[arg(long)]
    pub location: PathBuf,
    /// Address to listen on (loopback by default; port 0 picks a free port)
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub bind: SocketAddr,
    /// Queries executing at once, and worker threads for a heavy query (default: all cores)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: Option<u32>,
    /// Requests that may wait for a worker before the server answers 503 (default: 8 per
    /// thread, at least 16)
    #[arg(long)]
    pub queue: Option<usize>,
    /// Cancel a query after this many seconds (504)
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Refuse results with more rows (or triples) than this (422)
    #[arg(long)]
    pub max_results: Option<usize>,
    /// Largest request body in bytes (413 beyond)
    #[arg(long, default_value_t = 1 << 20)]
    pub max_body_bytes: usize,
    /// Abort a response when the client reads nothing for this many seconds
    #[arg(long, default_value_t = 30.0)]
    pub send_timeout: f64,
    /// Allow cross-origin browser requests from this origin (`*` for any)
    #[arg(long)]
    pub cors: Option<String>,
}

fn seconds(value: f64, flag: &str) -> Result<Duration> {
    anyhow::ensure!(
        value > 0.0 && value.is_finite() && value < 1e9,
        "{flag} must be a positive number of seconds"
    );
    Ok(Duration::from_secs_f64(value))
}

pub fn run(args: ServeArgs) -> Result<()> {
    let threads = crate::threads(args.threads);
    let mut config = Config::new(threads);
    if let Some(queue) = args.queue {
        config.queue = queue;
    }
    config.timeout = args.timeout.map(|t| seconds(t, "--timeout")).transpose()?;
    config.send_timeout = seconds(args.send_timeout, "--send-timeout")?;
    // Shutdown lets in-flight queries run for up to the query timeout before cancelling.
    config.shutdown_grace = config.timeout.unwrap_or(Duration::from_secs(10));
    config.max_results = args.max_results;
    config.max_body_bytes = args.max_body_bytes;
    config.cors = args.cors.clone();

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
    let (store, bytes) = Store::open(&args.location)
        .with_context(|| format!("cannot open the store at {}", args.location.display()))?;
    eprintln!(
        "store {}: {} triples, {} terms, {:.1} MiB on disk",
        args.location.display(),
        store.triples(),
        store.terms(),
        bytes as f64 / (1 << 20) as f64
    );
    if !args.bind.ip().is_loopback() {
        eprintln!(
            "warning: listening on {} (not loopback): the endpoint has no authentication",
            args.bind
        );
    }
    quiver_server::run(Arc::new(store), config, args.bind, |address| {
        eprintln!("listening on http://{address}");
    })?;
    eprintln!("server stopped");
    Ok(())
}
