//! The HTTP surface: routes, handlers, the access log and CORS.
//!
//! | route | methods | what |
//! |---|---|---|
//! | `/` | GET | the query page (one embedded HTML file, no external assets) |
//! | `/query`, `/sparql` | GET, POST | SPARQL 1.1 Protocol queries |
//! | `/update` | any | 403: the endpoint is read-only |
//! | `/status` | GET | JSON: store size, uptime, counters, limits (for health checks) |
//!
//! Every response passes [`edge`], which answers CORS preflights when `--cors` is set, adds
//! the CORS header, and writes one access-log line (`tracing`, target `quiver::access`).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use quiver_sparql::ExecOptions;
use quiver_store::Store;
use tokio::sync::oneshot;

use crate::error::ApiError;
use crate::execute::{self, Job};
use crate::limits::{CancelOnDrop, Limits};
use crate::negotiate::{content_type, negotiate};
use crate::protocol::{self, QueryRequest, READ_ONLY};
use crate::stream;
use crate::Config;

/// The query page.
const PAGE: &str = include_str!("page.html");

/// What every handler shares.
pub struct AppState {
    pub store: Arc<Store>,
    pub config: Config,
    pub limits: Arc<Limits>,
    pub started: Instant,
}

impl AppState {
    pub fn new(store: Arc<Store>, config: Config) -> Self {
        let limits = Arc::new(Limits::new(
            config.threads,
            config.queue,
            config.queue_timeout,
        ));
        Self {
            store,
            config,
            limits,
            started: Instant::now(),
        }
    }
}

/// The router over `state`.
pub fn router(state: Arc<AppState>) -> Router {
    let query = get(query_get).post(query_post);
    Router::new()
        .route("/", get(page))
        .route("/query", query.clone())
        .route("/sparql", query)
        .route("/update", any(update))
        .route("/status", get(status))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(state.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(state.clone(), edge))
        .with_state(state)
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        PAGE,
    )
        .into_response()
}

async fn query_get(State(state): State<Arc<AppState>>, headers: HeaderMap, uri: Uri) -> Response {
    match protocol::from_get(uri.query()) {
        Ok(request) => answer(&state, request, &headers).await,
        Err(error) => refuse(&state, error),
    }
}

async fn query_post(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            let error = if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                body_too_large(state.config.max_body_bytes)
            } else {
                ApiError::new(rejection.status(), rejection.body_text())
            };
            return refuse(&state, error);
        }
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    match protocol::from_post(content_type, uri.query(), &body) {
        Ok(request) => answer(&state, request, &headers).await,
        Err(error) => refuse(&state, error),
    }
}

fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("request body larger than {limit} bytes"),
    )
}

fn announced_length(request: &Request) -> Option<usize> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn refuse(state: &AppState, error: ApiError) -> Response {
    state.limits.failed.fetch_add(1, Ordering::Relaxed);
    error.into_response()
}

/// Negotiates, admits, runs the query on a blocking thread and streams its result.
async fn answer(state: &Arc<AppState>, request: QueryRequest, headers: &HeaderMap) -> Response {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let negotiated = match negotiate(accept, request.format.as_deref()) {
        Ok(negotiated) => negotiated,
        Err(error) => return refuse(state, error),
    };
    // Rejections for load are counted by `Limits`, not as failed queries.
    let ticket = match state.limits.enter() {
        Ok(ticket) => ticket,
        Err(error) => return error.into_response(),
    };
    let permit = match state.limits.acquire().await {
        Ok(permit) => permit,
        Err(error) => return error.into_response(),
    };
    let cancel = ticket.cancel_flag();
    // From here the body owns the guard: dropping this future or the body cancels the query.
    let (sender, body) = stream::channel(CancelOnDrop(cancel.clone()));
    let (head_tx, head_rx) = oneshot::channel();
    // Options the engine adds later keep their defaults.
    #[allow(clippy::needless_update)]
    let options = ExecOptions {
        threads: state.config.threads,
        timeout: state.config.timeout,
        max_results: state.config.max_results,
        max_memory: state.config.max_memory,
        cancel: Some(cancel),
        ..ExecOptions::default()
    };
    let job = Job {
        store: state.store.clone(),
        query: request.query,
        dataset: request.dataset,
        negotiated,
        options,
        send_timeout: state.config.send_timeout,
    };
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        execute::run(job, runtime, head_tx, sender);
    });
    match head_rx.await {
        Ok(Ok(head)) => {
            state.limits.served.fetch_add(1, Ordering::Relaxed);
            let timing = format!(
                "plan;dur={:.3}, exec;dur={:.3}",
                head.plan_micros / 1e3,
                head.execute_micros / 1e3
            );
            let mut response = Response::new(Body::new(body));
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(head.format)),
            );
            headers.insert(header::VARY, HeaderValue::from_static("Accept"));
            if let Ok(value) = HeaderValue::from_str(&timing) {
                headers.insert("server-timing", value);
            }
            response
        }
        Ok(Err(error)) => refuse(state, error),
        Err(_) => refuse(
            state,
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the query failed unexpectedly",
            ),
        ),
    }
}

async fn update() -> Response {
    ApiError::new(StatusCode::FORBIDDEN, READ_ONLY).into_response()
}

async fn not_found(uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no such resource: {} (try / , /query, /sparql or /status)",
            uri.path()
        ),
    )
    .into_response()
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    let limits = &state.limits;
    let config = &state.config;
    let body = serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "triples": state.store.triples(),
        "terms": state.store.terms(),
        "uptime_seconds": state.started.elapsed().as_secs_f64(),
        "queries_served": limits.served.load(Ordering::Relaxed),
        "queries_failed": limits.failed.load(Ordering::Relaxed),
        "queries_rejected": limits.rejected.load(Ordering::Relaxed),
        "in_flight": limits.in_flight(),
        "running": limits.running(),
        "queued": limits.queued(),
        "limits": {
            "threads": config.threads,
            "queue": config.queue,
            "queue_timeout_seconds": config.queue_timeout.as_secs_f64(),
            "timeout_seconds": config.timeout.map(|t| t.as_secs_f64()),
            "max_results": config.max_results,
            "max_memory_bytes": config.max_memory,
            "max_body_bytes": config.max_body_bytes,
        },
    });
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// CORS and the access log, around every route.
async fn edge(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let mut entry = AccessEntry {
        started: Instant::now(),
        method: request.method().clone(),
        path: request.uri().path().to_owned(),
        peer: request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|info| info.0),
        status: None,
    };
    let cors = state
        .config
        .cors
        .as_deref()
        .and_then(|origin| HeaderValue::from_str(origin).ok());
    let mut response = if cors.is_some() && entry.method == Method::OPTIONS {
        preflight()
    } else if announced_length(&request).is_some_and(|n| n > state.config.max_body_bytes) {
        // Refused before reading a byte (and before `100 Continue`); longer bodies without
        // a Content-Length are cut at the limit by `DefaultBodyLimit`.
        refuse(&state, body_too_large(state.config.max_body_bytes))
    } else {
        next.run(request).await
    };
    if let Some(origin) = cors {
        let headers = response.headers_mut();
        if origin != "*" {
            headers.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("server-timing"),
        );
    }
    entry.status = Some(response.status());
    response
}

/// One access-log line, written when the response head is ready, or when the request is
/// dropped before that (the client went away).
struct AccessEntry {
    started: Instant,
    method: Method,
    path: String,
    peer: Option<SocketAddr>,
    status: Option<StatusCode>,
}

impl Drop for AccessEntry {
    fn drop(&mut self) {
        let peer = self.peer.map_or_else(|| "-".to_owned(), |p| p.to_string());
        let ms = (self.started.elapsed().as_secs_f64() * 1e6).round() / 1e3;
        match self.status {
            Some(status) => tracing::info!(
                target: "quiver::access",
                %peer,
                method = %self.method,
                path = %self.path,
                status = status.as_u16(),
                ms,
            ),
            None => tracing::info!(
                target: "quiver::access",
                %peer,
                method = %self.method,
                path = %self.path,
                ms,
                "client went away before the response"
            ),
        }
    }
}

fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_METHODS, "GET, POST, OPTIONS"),
            (header::ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type, Accept"),
            (header::ACCESS_CONTROL_MAX_AGE, "600"),
        ],
    )
        .into_response()
}
