//! The flags of `quiver serve` (and of each process of `quiver cluster`), apart from the
//! server they start (`serve.rs`), so that what reads them (`datasets.rs`, `cluster.rs`)
//! does not import the server's start.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use clap::Args;
use quiver_db::SyncMode;

use crate::limits::{self, LimitArgs};
use crate::logging::LogArgs;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Read flags from this TOML file: each key a flag's long name (`bind = "…"`,
    /// `writable = true`), and `[datasets.NAME]` tables; flags given here win
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory of the store served at the root (`/query`, `/update`, `/store`)
    #[arg(long)]
    pub location: Option<PathBuf>,
    /// Also serve the store in DIR as dataset NAME, under `/NAME/query`, `/NAME/update`,
    /// `/NAME/store` (repeatable)
    #[arg(long, value_name = "NAME=DIR", action = clap::ArgAction::Append, value_parser = parse_dataset)]
    pub dataset: Vec<(String, PathBuf)>,
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
    /// After SIGINT or SIGTERM, how long queries in flight may run before they are
    /// cancelled (`0`: at once; default: the query timeout, or 10 s without one)
    #[arg(long, value_name = "SECONDS", value_parser = limits::parse_wait, allow_hyphen_values = true)]
    pub shutdown_grace: Option<Duration>,
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
    /// Log queries that take at least this many milliseconds (or `2s`) with their text
    /// and plan (target quiver::slow, at WARN); `0` logs every query
    #[arg(long, value_name = "MS", value_parser = limits::parse_slow_query, allow_hyphen_values = true)]
    pub slow_query: Option<Duration>,
    /// Where `POST /$/backup/NAME` writes its copies (a directory per dataset)
    #[arg(long, value_name = "DIR", default_value = "backups")]
    pub backup_dir: PathBuf,
    #[command(flatten)]
    pub service: crate::service::ServiceArgs,
    /// Answer queries from the entailment of stores loaded with reasoning unless a
    /// request sends reasoning=off (without it, requests send reasoning=on to ask)
    #[arg(long)]
    pub reasoning: bool,
    #[command(flatten)]
    pub log: LogArgs,
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
    /// (and HTTP too with --accept-queries)
    #[arg(long, default_value = "0", requires = "cluster")]
    pub process: usize,
    /// A process of --cluster other than 0 also serves HTTP at --bind, planning and
    /// coordinating the queries it receives (process 0 always does); under `quiver
    /// cluster`, every process does, process I at --bind's port + I
    #[arg(long)]
    pub accept_queries: bool,
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

/// `NAME=DIR` of `--dataset`.
fn parse_dataset(text: &str) -> Result<(String, PathBuf), String> {
    let (name, dir) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: give NAME=DIR"))?;
    quiver_server::state::check_dataset_name(name)?;
    if dir.is_empty() {
        return Err(format!("{text:?}: give the dataset's directory after '='"));
    }
    Ok((name.to_owned(), PathBuf::from(dir)))
}

/// The directory of the store at the root, or an error saying how to give one (a cluster
/// serves one partitioned store, there).
pub fn root_location(args: &ServeArgs) -> Result<&Path> {
    args.location
        .as_deref()
        .ok_or_else(|| anyhow!("give the store's directory with --location DIR"))
}
