//! Quiver's SPARQL 1.1 Protocol endpoint: an HTTP server over one [`Database`] per
//! dataset ([`Dataset`]: one at the root, others under `/NAME/`), with the operator's
//! routes under `/$/` ([`admin`]), `/metrics` ([`metrics`]) and an access log ([`access`]).
//!
//! What it serves (see [`routes`]): queries at `/query` and `/sparql` (GET with `query=`, POST
//! form-encoded, POST `application/sparql-query`), a browser query page at `/`, health and
//! counters at `/status`; on a writable server ([`Config::writable`]), SPARQL Update at
//! `/update` ([`update`]) and the Graph Store Protocol at `/store` ([`graph_store`]), behind
//! an optional bearer token ([`auth`]). A read-only server refuses every write with 403.
//! Every request works on one committed version of the store ([`state`]).
//!
//! How a query travels: the request is parsed ([`protocol`]) and its result formats
//! negotiated ([`negotiate`]); a light query then runs on the request's own task, and
//! any other is admitted or refused with 503 ([`limits`]: a semaphore of `threads` permits
//! and a bounded queue where a request waits a short time), prepared, executed and
//! serialized on a blocking thread ([`execute`]). The status line is decided once execution
//! has succeeded or failed; a result smaller than a chunk goes whole with it, a larger one
//! streams from the serializer through a bounded channel ([`stream`]), so a client that
//! stops reading stops the serializer (backpressure) and one that stalls past the send
//! timeout is cut off, instead of the server buffering the result.
//!
//! The crate is a library so that the `quiver serve` command stays thin and tests can start a
//! server in-process: [`run`] owns a runtime and blocks until SIGINT/SIGTERM; [`serve`] is the
//! same server as a future over a bound listener.

pub mod access;
pub mod admin;
pub mod auth;
pub mod connections;
pub mod error;
pub mod execute;
pub mod form;
pub mod graph_store;
pub mod limits;
pub mod metrics;
pub mod negotiate;
pub mod protocol;
pub mod rdf_io;
pub mod routes;
pub mod service_description;
mod spin_read;
pub mod state;
pub mod stream;
pub mod ui;
pub mod update;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use connections::ConnectionThreads;
use quiver_db::Database;
use tokio::net::TcpListener;

pub use error::{ApiError, ServerError};

/// What the server allows and how it behaves under load.
#[derive(Debug, Clone)]
pub struct Config {
    /// Queries executing at once (the semaphore's permits); also the engine's worker threads
    /// for one heavy query.
    pub threads: usize,
    /// Requests that may wait for a permit beyond `threads`; more get 503 at once.
    pub queue: usize,
    /// How long a request may wait in the queue for a permit before it gets 503.
    pub queue_timeout: Duration,
    /// Per-query execution time limit (504 when exceeded).
    pub timeout: Option<Duration>,
    /// Largest result, in rows (SELECT) or triples (CONSTRUCT/DESCRIBE); more gives 422.
    pub max_results: Option<usize>,
    /// The most bytes the operators of all queries and updates in flight may hold
    /// together, one memory pool (507 for the query refused).
    pub max_memory: Option<usize>,
    /// Largest request body in bytes (413 beyond).
    pub max_body_bytes: usize,
    /// How long the serializer waits for a stalled client to take the next chunk before the
    /// response is aborted.
    pub send_timeout: Duration,
    /// `Access-Control-Allow-Origin` value for cross-origin browser clients, if any.
    pub cors: Option<String>,
    /// After SIGINT/SIGTERM, how long in-flight queries may run before they are cancelled.
    pub shutdown_grace: Duration,
    /// Whether updates and Graph Store writes are accepted (403 otherwise).
    pub writable: bool,
    /// The bearer token writes must carry, if any.
    pub update_token: Option<String>,
    /// Whether SPARQL Update's `LOAD` (which reads the server's files) is allowed.
    pub allow_load: bool,
    /// Whether `/metrics` is served to any client (otherwise to loopback clients and to
    /// those with the update token).
    pub public_metrics: bool,
    /// The accelerator heavy exploration steps go to (`--device gpu`), if any.
    pub device: Option<std::sync::Arc<dyn quiver_sparql::device::BgpDevice>>,
    /// The partitions of a cluster that run the basic graph patterns (`quiver cluster`):
    /// the database then holds the coordinator's own partition, and queries are prepared
    /// `partitioned`.
    pub partitions: Option<std::sync::Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
    /// The triples and terms of the whole partitioned store when the database holds one
    /// partition of it (a cluster's coordinator): what `/status` and `/metrics` report.
    pub whole_store: Option<(u64, u64)>,
    /// How long a query not run before may run on its connection's thread, on the
    /// planner's estimate that it is light, before it is stopped and run again on a
    /// blocking thread ([`execute::INLINE_GUESS_LIMIT`] by default).
    pub inline_guess_limit: Duration,
    /// Queries that take at least this long are logged with their text and plan (target
    /// `quiver::slow`, at WARN).
    pub slow_query: Option<Duration>,
    /// Where `POST /$/backup/NAME` writes (a directory per dataset below it).
    pub backup_dir: std::path::PathBuf,
    /// What SERVICE calls remote endpoints with (`quiver-federation`'s client with the
    /// server's `--allow-service` policy); `None`: SERVICE is refused.
    pub service: Option<std::sync::Arc<dyn quiver_sparql::ServiceClient>>,
    /// Whether queries read the entailed default graph of a store loaded with reasoning
    /// unless a request says otherwise (`reasoning=` parameter).
    pub reasoning: bool,
}

impl Config {
    /// Defaults for `threads` workers: a queue of 32 per worker (at least 128) where a
    /// request waits up to 500 ms for a worker, no time, result or memory limit, 1 MiB
    /// bodies, 30 s send timeout, 10 s shutdown grace.
    ///
    /// A burst of light queries from many clients passes through the queue within
    /// microseconds each, so the queue is long; its wait is short, so that behind heavy
    /// queries a client learns at once (503, `Retry-After`) that it should come back.
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        Self {
            threads,
            queue: (threads * 32).max(128),
            queue_timeout: Duration::from_millis(500),
            timeout: None,
            max_results: None,
            max_memory: None,
            max_body_bytes: 1 << 20,
            send_timeout: Duration::from_secs(30),
            cors: None,
            shutdown_grace: Duration::from_secs(10),
            writable: false,
            update_token: None,
            allow_load: false,
            public_metrics: false,
            device: None,
            partitions: None,
            whole_store: None,
            inline_guess_limit: execute::INLINE_GUESS_LIMIT,
            slow_query: None,
            backup_dir: std::path::PathBuf::from("backups"),
            service: None,
            reasoning: false,
        }
    }

    /// Refuses a writable server on an address other hosts can reach unless writes need a
    /// token: anyone who can connect could otherwise change the store.
    pub fn check_exposure(&self, address: SocketAddr) -> Result<(), ServerError> {
        if self.writable && self.update_token.is_none() && !address.ip().is_loopback() {
            return Err(ServerError::WritableWithoutToken { address });
        }
        Ok(())
    }
}

/// A dataset to serve: its database and its settings (the server's, with its own
/// writability, update token and query limits where they differ).
pub struct Dataset {
    /// `None`: served at the root (`/query`, …, and `/default/…`); else under `/NAME/`.
    pub name: Option<String>,
    pub db: Arc<Database>,
    pub config: Config,
}

impl Dataset {
    /// The dataset served at the root, with the server's settings.
    pub fn root(db: Arc<Database>, config: Config) -> Self {
        Self {
            name: None,
            db,
            config,
        }
    }

    fn checked(datasets: &[Dataset]) -> Vec<(Option<&str>, &Config)> {
        datasets
            .iter()
            .map(|d| (d.name.as_deref(), &d.config))
            .collect()
    }
}

/// Checks that datasets (each its name, `None` at the root, and settings) can be served
/// together: names valid and distinct, at most one at the root, none exposed writable
/// without a token.
pub fn check_datasets(
    datasets: &[(Option<&str>, &Config)],
    address: SocketAddr,
) -> Result<(), ServerError> {
    let mut names = std::collections::HashSet::new();
    if datasets.is_empty() {
        return Err(ServerError::Datasets("no dataset to serve".into()));
    }
    for (dataset, config) in datasets {
        let name = dataset.unwrap_or(state::ROOT_DATASET);
        if let Some(name) = dataset {
            state::check_dataset_name(name).map_err(ServerError::Datasets)?;
        }
        if !names.insert(name) {
            return Err(ServerError::Datasets(match dataset {
                Some(_) if name == state::ROOT_DATASET => format!(
                    "dataset name {name:?} is the one of the store served at the root \
                     (--location)"
                ),
                _ => format!("two datasets are named {name:?}"),
            }));
        }
        config.check_exposure(address)?;
    }
    Ok(())
}

/// Binds a listener (`127.0.0.1:0` picks a free port: read it back with `local_addr`).
pub async fn bind(address: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ServerError::Bind { address, source })
}

/// Serves `datasets` on `listener` with the server-wide settings of `config` until
/// `shutdown` resolves, then stops accepting, lets in-flight queries run for
/// `config.shutdown_grace`, cancels what is left, and returns.
pub async fn serve(
    listener: TcpListener,
    datasets: Vec<Dataset>,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    if let Ok(address) = listener.local_addr() {
        config.check_exposure(address)?;
        check_datasets(&Dataset::checked(&datasets), address)?;
    }
    let grace = config.shutdown_grace;
    let threads = limits::runtime_workers(config.threads);
    let blocking = config.threads + 4;
    let mut root = None;
    let mut named = Vec::new();
    for dataset in datasets {
        match dataset.name {
            None => root = Some((dataset.db, dataset.config)),
            Some(name) => named.push((name, dataset.db, dataset.config)),
        }
    }
    let state = Arc::new(state::ServerState::new(config, root, named));
    let app = routes::router(state.clone());
    let mut connections =
        ConnectionThreads::start(threads, blocking, app).map_err(ServerError::Runtime)?;
    {
        let accepting = connections.accept(&listener);
        tokio::select! {
            () = accepting => {}
            () = shutdown => {}
        }
    }
    drop(listener);
    state.limits.begin_shutdown();
    tracing::info!("shutting down: no new connections, in-flight queries may finish");
    connections.begin_shutdown();
    if tokio::time::timeout(grace, connections.closed())
        .await
        .is_err()
    {
        let cancelled = state.limits.cancel_all();
        tracing::warn!(cancelled, "grace period over: cancelled in-flight queries");
        if tokio::time::timeout(Duration::from_secs(2), connections.closed())
            .await
            .is_err()
        {
            // Typically a client that stopped reading: its socket is full, so the aborted
            // response cannot even be noticed until the connection is dropped here.
            tracing::warn!("closing connections still open after cancelling");
        }
    }
    connections.stop().await;
    Ok(())
}

/// Serves one store held in memory at the root of `listener` with `config` until
/// `shutdown` resolves: the endpoint of a test, or of a program that embeds the server.
pub async fn serve_store(
    listener: TcpListener,
    store: quiver_store::Store,
    config: Config,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServerError> {
    let db = Arc::new(Database::in_memory(store));
    let datasets = vec![Dataset::root(db, config.clone())];
    serve(listener, datasets, config, shutdown).await
}

/// Resolves on SIGINT (Ctrl-C) or, on Unix, SIGTERM. On Unix the handlers are installed
/// when this is called, not when the future is first polled, so a signal sent as soon as
/// the server announces its address is never lost to the default action (which would kill
/// the process instead of shutting it down). Call it inside the runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt()).ok();
        let terminate = signal(SignalKind::terminate()).ok();
        async move {
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = wait(interrupt) => {}
                _ = wait(terminate) => {}
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Runs the server of `datasets` on its own runtime until SIGINT/SIGTERM. `listening` is
/// called with the bound address once the socket accepts connections (the CLI prints it).
pub fn run(
    datasets: Vec<Dataset>,
    config: Config,
    address: SocketAddr,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    run_until(datasets, config, address, std::future::pending(), listening)
}

/// [`run`], until `stop` resolves as well (a cluster's process: when its cluster ends).
pub fn run_until(
    datasets: Vec<Dataset>,
    config: Config,
    address: SocketAddr,
    stop: impl Future<Output = ()> + Send + 'static,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    config.check_exposure(address)?;
    check_datasets(&Dataset::checked(&datasets), address)?;
    // This runtime accepts connections and waits for signals; the connections are served
    // on threads of their own ([`connections`]).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .thread_name("quiver-http")
        .enable_all()
        .build()
        .map_err(ServerError::Runtime)?;
    let result = runtime.block_on(async {
        let listener = bind(address).await?;
        let local = listener.local_addr().map_err(ServerError::Serve)?;
        // Handlers first: a client may signal as soon as it reads the address.
        let signal = shutdown_signal();
        let shutdown = async move {
            tokio::select! {
                () = signal => {}
                () = stop => {}
            }
        };
        listening(local);
        serve(listener, datasets, config, shutdown).await
    });
    // Cancelled queries notice within a few thousand rows; do not wait on a stuck thread.
    runtime.shutdown_timeout(Duration::from_secs(2));
    result
}
