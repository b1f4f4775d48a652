//! What every handler shares: the database, the configuration, admission control and the
//! write policy.
//!
//! Each request reads [`AppState::snapshot`] once and works on that version to the end, so
//! a query or a Graph Store GET never sees half of a concurrent update (snapshot isolation
//! per request). Prepared queries are cached by text and dataset for the latest version
//! ([`quiver_sparql::QueryCache`], emptied when a request reads a newer version).

use std::sync::atomic::Ordering;
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
use crate::metrics::Metrics;
use crate::Config;

/// What every handler shares.
pub struct AppState {
    pub db: Arc<Database>,
    pub config: Config,
    pub limits: Arc<Limits>,
    pub access: WriteAccess,
    pub started: Instant,
    /// Prepared queries of the latest version, by text and dataset.
    pub queries: Arc<QueryCache>,
    /// The memory every query and update in flight holds together (`--max-memory`).
    pub memory: Arc<MemoryPool>,
    /// What `/metrics` reports.
    pub metrics: Metrics,
}

/// Prepared queries the server keeps.
pub const QUERY_CACHE_ENTRIES: usize = 512;

impl AppState {
    pub fn new(db: Arc<Database>, config: Config) -> Self {
        let limits = Arc::new(Limits::new(
            config.threads,
            config.queue,
            config.queue_timeout,
        ));
        let access = WriteAccess {
            writable: config.writable,
            token: config.update_token.clone(),
        };
        let memory = MemoryPool::new(config.max_memory);
        Self {
            db,
            config,
            limits,
            access,
            started: Instant::now(),
            queries: Arc::new(QueryCache::new(QUERY_CACHE_ENTRIES)),
            memory,
            metrics: Metrics::new(),
        }
    }

    /// The current committed version, for one request.
    pub fn snapshot(&self) -> Arc<Store> {
        self.db.snapshot()
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
