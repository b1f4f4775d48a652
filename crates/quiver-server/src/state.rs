//! What the handlers share: per dataset ([`AppState`]) the database, its configuration,
//! its write policy and its prepared queries; for the whole server ([`ServerState`]) the
//! datasets, admission control, the memory pool and the metrics, which every dataset's
//! requests share (one server, one set of workers, one pool).
//!
//! Each request reads [`AppState::snapshot`] once and works on that version to the end, so
//! a query or a Graph Store GET never sees half of a concurrent update (snapshot isolation
//! per request). Prepared queries are cached by text and dataset for the latest version
//! ([`quiver_sparql::QueryCache`], emptied when a request reads a newer version).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::BytesRejection;
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use quiver_db::Database;
use quiver_sparql::memory::MemoryPool;
use quiver_sparql::QueryCache;
use quiver_store::Store;
use tokio::sync::OwnedSemaphorePermit;

use crate::auth::WriteAccess;
use crate::error::ApiError;
use crate::limits::{Limits, Ticket};
use crate::metrics::{ClusterReadings, DatasetReadings, Metrics, Readings};
use crate::Config;

/// What the handlers of one dataset share.
pub struct AppState {
    /// The dataset's name: its routes are under `/NAME/` (`default` for the one served at
    /// the root).
    pub name: String,
    pub db: Arc<Database>,
    pub config: Config,
    pub limits: Arc<Limits>,
    pub access: WriteAccess,
    pub started: Instant,
    /// Prepared queries of the latest version, by text and dataset.
    pub queries: Arc<QueryCache>,
    /// The memory every query and update in flight holds together (`--max-memory`).
    pub memory: Arc<MemoryPool>,
    /// What `/metrics` reports, for the whole server.
    pub metrics: Arc<Metrics>,
    /// The entailed view of the latest version a query asked for (see
    /// [`AppState::query_snapshot`]).
    entailed: std::sync::Mutex<Option<Arc<Store>>>,
}

/// What the whole server shares: its datasets and what their requests share.
pub struct ServerState {
    /// The server's own settings (admission, bodies, CORS, logs, backups, the admin
    /// token); a dataset's requests read their dataset's [`AppState::config`].
    pub config: Config,
    /// The dataset served at the root (`/query`, …), if any.
    pub root: Option<Arc<AppState>>,
    /// Every dataset, the root's first, by name.
    pub datasets: Vec<Arc<AppState>>,
    pub limits: Arc<Limits>,
    pub memory: Arc<MemoryPool>,
    pub metrics: Arc<Metrics>,
    pub started: Instant,
    /// Held by a backup or compaction: one at a time.
    pub admin: tokio::sync::Mutex<()>,
    next_request: AtomicU64,
}

impl ServerState {
    /// The server of `datasets`: `root` is served at `/`, the others under `/NAME/`. Every
    /// dataset's state shares the server's admission control, memory pool and metrics.
    pub fn new(
        config: Config,
        root: Option<(Arc<Database>, Config)>,
        named: Vec<(String, Arc<Database>, Config)>,
    ) -> Self {
        let limits = Arc::new(Limits::new(
            config.threads,
            config.queue,
            config.queue_timeout,
        ));
        let memory = MemoryPool::new(config.max_memory);
        let metrics = Arc::new(Metrics::new());
        let started = Instant::now();
        let dataset = |name: String, db: Arc<Database>, dataset_config: Config| {
            let access = WriteAccess {
                writable: dataset_config.writable,
                token: dataset_config.update_token.clone(),
            };
            Arc::new(AppState {
                name,
                db,
                config: dataset_config,
                limits: limits.clone(),
                access,
                started,
                queries: Arc::new(QueryCache::new(QUERY_CACHE_ENTRIES)),
                memory: memory.clone(),
                metrics: metrics.clone(),
                entailed: std::sync::Mutex::new(None),
            })
        };
        let root = root.map(|(db, config)| dataset(ROOT_DATASET.to_owned(), db, config));
        let mut datasets: Vec<_> = root.iter().cloned().collect();
        for (name, db, dataset_config) in named {
            datasets.push(dataset(name, db, dataset_config));
        }
        Self {
            config,
            root,
            datasets,
            limits,
            memory,
            metrics,
            started,
            admin: tokio::sync::Mutex::new(()),
            next_request: AtomicU64::new(1),
        }
    }

    /// The dataset named `name`.
    pub fn dataset(&self, name: &str) -> Option<&Arc<AppState>> {
        self.datasets.iter().find(|dataset| dataset.name == name)
    }

    /// A new request's id (counted from 1 since the start; logged and sent back as
    /// `X-Request-Id`).
    pub fn next_request_id(&self) -> u64 {
        self.next_request.fetch_add(1, Ordering::Relaxed)
    }

    /// What `/metrics` reports of the server's state now.
    pub fn readings(&self) -> Readings {
        let (limits, memory) = (&self.limits, &self.memory);
        Readings {
            in_flight: limits.in_flight(),
            running: limits.running(),
            queued: limits.queued(),
            memory_limit: memory.limit(),
            memory_used: memory.used(),
            memory_peak: memory.peak(),
            memory_refused: memory.refused(),
            writes: limits.committed.load(Ordering::Relaxed),
            datasets: self.datasets.iter().map(|d| d.readings()).collect(),
        }
    }
}

/// The name of the dataset served at the root, in listings, metrics and admin routes.
pub const ROOT_DATASET: &str = "default";

/// Route words that cannot name a dataset: `/NAME/…` would hide the root's routes.
const RESERVED_NAMES: &[&str] = &[
    "query", "sparql", "update", "store", "status", "metrics", "$",
];

/// Checks a dataset's name: 1 to 64 ASCII letters, digits, `-` or `_`, not a route of
/// the root.
pub fn check_dataset_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err(format!("dataset name {name:?}: give 1 to 64 characters"));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(format!(
            "dataset name {name:?}: use ASCII letters, digits, '-' and '_' only"
        ));
    }
    if RESERVED_NAMES.contains(&name) {
        return Err(format!(
            "dataset name {name:?} is one of the server's routes ({})",
            RESERVED_NAMES.join(", ")
        ));
    }
    Ok(())
}

/// Prepared queries the server keeps.
pub const QUERY_CACHE_ENTRIES: usize = 512;

impl AppState {
    /// What `/metrics` reports of the dataset now.
    fn readings(&self) -> DatasetReadings {
        let (triples, terms) = self.size();
        let (commits, commit_time) = self.db.commit_stats();
        DatasetReadings {
            name: self.name.clone(),
            triples,
            terms,
            version: self.db.sequence(),
            log: self.db.log_stats(),
            commits,
            commit_time,
            cache: self.queries.counts(),
            device_runs: self.config.device.as_ref().map(|device| device.runs()),
            cluster: self
                .config
                .partitions
                .as_ref()
                .map(|partitions| ClusterReadings {
                    exchanged: partitions.exchanged(),
                    held: partitions.held_bytes(),
                    flow: partitions.flow_control(),
                    answering: partitions.unavailable().is_none(),
                }),
        }
    }

    /// The triples and terms of the dataset's latest version (of the whole store, for a
    /// cluster's coordinator).
    pub fn size(&self) -> (u64, u64) {
        match self.config.whole_store {
            Some(size) => size,
            None => {
                let store = self.snapshot();
                (store.triples(), store.terms())
            }
        }
    }

    /// The current committed version, for one request.
    pub fn snapshot(&self) -> Arc<Store> {
        self.db.snapshot()
    }

    /// The current committed version as a query reads it: its entailed default graph when
    /// `reasoning` (else the server's `--reasoning`) asks for it, else the asserted one.
    /// The entailed view of a version is made once and kept until the next version.
    pub fn query_snapshot(&self, reasoning: Option<bool>) -> Result<Arc<Store>, ApiError> {
        let store = self.snapshot();
        if !reasoning.unwrap_or(self.config.reasoning) {
            return Ok(store);
        }
        let mut cached = self.entailed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(view) = cached.as_ref().filter(|v| v.version() == store.version()) {
            return Ok(view.clone());
        }
        let view = Arc::new(store.entailed().ok_or_else(|| {
            ApiError::bad_request(format!(
                "reasoning=on: dataset {} holds no entailment (load it with --reasoning rdfs|owl-rl, or run `quiver reason`)",
                self.name
            ))
        })?);
        *cached = Some(view.clone());
        Ok(view)
    }

    /// Counts a failed request and answers it with `error`.
    pub fn refuse(&self, error: ApiError) -> Response {
        self.limits.failed.fetch_add(1, Ordering::Relaxed);
        error.into_response()
    }

    /// Admission control for a request that runs on a blocking thread: a ticket, then a
    /// permit, or the 503 to answer (rejections are counted by [`Limits`]).
    pub async fn admit(&self) -> Result<(Ticket, OwnedSemaphorePermit), Response> {
        let ticket = self.limits.enter().map_err(IntoResponse::into_response)?;
        let permit = self
            .limits
            .acquire()
            .await
            .map_err(IntoResponse::into_response)?;
        Ok((ticket, permit))
    }
}

impl AppState {
    /// The error for a body that could not be read (413 beyond `max_body_bytes`).
    pub fn body_rejection(&self, rejection: BytesRejection) -> ApiError {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            body_too_large(self.config.max_body_bytes)
        } else {
            ApiError::new(rejection.status(), rejection.body_text())
        }
    }
}

/// 413 for a body over `limit` bytes.
pub fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body larger than {limit} bytes (the server's --max-body-bytes)"),
    )
}

/// The request's URL (`http://HOST/path?query`), the base IRI of what it sends; with no
/// usable `Host`, `localhost`.
pub fn request_url(headers: &HeaderMap, uri: &Uri) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| {
            !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_graphic() && !b"/?#@<>\\\"{}|^`".contains(&b))
        })
        .unwrap_or("localhost");
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let url = format!("http://{host}{path}");
    match oxrdf::NamedNode::new(url.as_str()) {
        Ok(_) => url,
        Err(_) => format!("http://{host}{}", uri.path()),
    }
}
