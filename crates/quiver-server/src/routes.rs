//! The HTTP surface: routes, handlers, the access log and CORS.
//!
//! Each dataset has these routes, under `/NAME/` (and the dataset of `--location` also at
//! the root, as `/query`, …, and under `/default/`):
//!
//! | route | methods | what |
//! |---|---|---|
//! | `/` | GET | the query page: YASGUI wired to the dataset, every asset embedded ([`crate::ui`]) |
//! | `/ui/…` | GET | the page's scripts, styles, configuration and completions ([`crate::ui`]) |
//! | `/query`, `/sparql` | GET, POST | SPARQL 1.1 Protocol queries (and updates, POSTed); a GET without `query` gets the service description ([`crate::service_description`]); `explain=true` answers the plan with estimated and actual rows |
//! | `/update` | POST | SPARQL 1.1 Protocol updates ([`crate::update`]) |
//! | `/store` | GET, HEAD, PUT, POST, DELETE | SPARQL 1.1 Graph Store Protocol ([`crate::graph_store`]) |
//! | `/store/…` | GET, HEAD, PUT, POST, DELETE | the same, the request's URL naming the graph (direct identification) |
//! | `/status` | GET | JSON: store size, uptime, counters, limits (for health checks) |
//!
//! The server's own: `/metrics` ([`crate::metrics`]), `/status` when no dataset is at the
//! root, and the operator's routes under `/$/` ([`crate::admin`]).
//!
//! Writes (updates and Graph Store PUT/POST/DELETE) pass the write policy first
//! ([`crate::auth`]): 403 on a read-only server, 401 without the update token. An update sent
//! with GET gets 405 on a writable server (the protocol requires POST).
//!
//! Every response passes [`edge`], which gives the request its id (`X-Request-Id`),
//! answers CORS preflights when `--cors` is set, adds the CORS header, counts the request
//! in the metrics and logs it ([`crate::access`]) once its body has gone out.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{
    ConnectInfo, DefaultBodyLimit, Extension, FromRequest, OriginalUri, Request, State,
};
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use axum::Router;
use quiver_sparql::{CachedQuery, ExecOptions, PrepareOptions};
use quiver_store::Store;
use tokio::sync::oneshot;

use crate::access::{AccessEntry, LoggedBody, RequestLog};
use crate::admin;
use crate::error::ApiError;
use crate::execute::{self, Inline, Job};
use crate::graph_store;
use crate::limits::CancelOnDrop;
use crate::negotiate::{content_type, negotiate};
use crate::protocol::{self, Operation, QueryRequest, UpdateRequest};
use crate::service_description;
use crate::state::body_too_large;
pub use crate::state::{AppState, ServerState};
use crate::stream;
use crate::ui;
use crate::update;

/// The router of the server: its own routes, and every dataset's.
pub fn router(server: Arc<ServerState>) -> Router {
    let mut router = Router::new()
        .route("/metrics", get(metrics))
        .route("/$/ping", get(admin::ping))
        .route("/$/datasets", get(admin::datasets))
        .route("/$/backup/{name}", post(admin::backup))
        .route("/$/compact/{name}", post(admin::compact))
        .with_state(server.clone());
    match &server.root {
        Some(root) => {
            router = router
                .route("/", get(ui::page))
                .merge(dataset_routes(root.clone()))
        }
        None => {
            router = router.route("/status", get(server_status).with_state(server.clone()));
            if let Some(first) = server.datasets.first() {
                let to = format!("/{}/", first.name);
                router = router.route("/", get(move || async move { Redirect::to(&to) }));
            }
        }
    }
    for dataset in &server.datasets {
        let prefix = format!("/{}", dataset.name);
        let page_path = format!("{prefix}/");
        router = router
            .nest(&prefix, dataset_routes(dataset.clone()))
            // The page's links are relative: it must be read from `/NAME/`.
            .route(
                &prefix,
                get(move || async move { Redirect::permanent(&page_path) }),
            )
            .route(&format!("{prefix}/"), get(ui::page));
    }
    router
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(server.config.max_body_bytes))
        .layer(middleware::from_fn_with_state(server, edge))
}

/// The routes of one dataset.
fn dataset_routes(state: Arc<AppState>) -> Router {
    let query = get(query_get).post(query_post);
    let graph_store = get(graph_store::get)
        .put(graph_store::put)
        .post(graph_store::post)
        .delete(graph_store::delete);
    Router::new()
        .route("/query", query.clone())
        .route("/sparql", query)
        .route("/update", any(update_any))
        .route("/store", graph_store.clone())
        .route("/store/{*graph}", graph_store)
        .route("/status", get(status))
        .with_state(state.clone())
        .merge(ui::routes(state))
}

async fn query_get(
    State(state): State<Arc<AppState>>,
    Extension(log): Extension<Arc<RequestLog>>,
    OriginalUri(uri): OriginalUri,
    mut request: Request,
) -> Response {
    // Taken, not cloned as the `HeaderMap` extractor would (a map and its entries per query).
    let headers = std::mem::take(request.headers_mut());
    // Neither a query nor an update: the endpoint describes itself.
    if service_description::is_requested(uri.query()) {
        return service_description::respond(&state, &headers, &uri);
    }
    match protocol::operation_from_get(uri.query()) {
        Ok(Operation::Query(request)) => answer(&state, request, &headers, log).await,
        Ok(Operation::Update(_)) => refuse(&state, update_needs_post(&state, &headers)),
        Err(error) => refuse(&state, error),
    }
}

/// The refusal of an update sent with GET: the write policy's, else 405.
fn update_needs_post(state: &AppState, headers: &HeaderMap) -> ApiError {
    match state.access.check(headers) {
        Err(error) => error,
        Ok(()) => ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "SPARQL Update must be sent with POST (form-encoded update=… or \
             application/sparql-update)",
        ),
    }
}

async fn query_post(
    State(state): State<Arc<AppState>>,
    Extension(log): Extension<Arc<RequestLog>>,
    OriginalUri(uri): OriginalUri,
    mut request: Request,
) -> Response {
    // Taken, not cloned as the `HeaderMap` extractor would (a map and its entries per
    // query); the body is read after, within the same limit.
    let headers = std::mem::take(request.headers_mut());
    let body = match Bytes::from_request(request, &()).await {
        Ok(body) => body,
        Err(rejection) => return refuse(&state, state.body_rejection(rejection)),
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    match protocol::operation_from_post(content_type, uri.query(), &body) {
        Ok(Operation::Query(request)) => answer(&state, request, &headers, log).await,
        Ok(Operation::Update(request)) => run_update(&state, request, &headers, &uri, &log).await,
        Err(error) => refuse(&state, error),
    }
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
    state.refuse(error)
}

/// Negotiates, admits, runs the query on a blocking thread and streams its result.
async fn answer(
    state: &Arc<AppState>,
    request: QueryRequest,
    headers: &HeaderMap,
    log: Arc<RequestLog>,
) -> Response {
    // The query's text only where an operator asks for it (DEBUG, or the slow-query log).
    tracing::debug!(target: "quiver::query", id = log.id, dataset = %state.name, query = %request.query);
    if request.explain {
        return explain(state, request, log).await;
    }
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
    let cancel = ticket.cancel_flag();
    let options = exec_options(state, &cancel);
    let store = match state.query_snapshot(request.reasoning) {
        Ok(store) => store,
        Err(error) => return refuse(state, error),
    };
    // A light query runs here, on this task, without waiting for a worker (heavy queries
    // holding every worker do not delay it, and the hand-off would cost more than the
    // query); never over a cluster, whose answers come from other processes (the task
    // would block the runtime's thread while it waits for them).
    let looked_up = Instant::now();
    let prepare_options = PrepareOptions {
        dataset: request.dataset.clone(),
        partitions: state.config.partitions.clone(),
        ..PrepareOptions::default()
    };
    let inline = if state.config.partitions.is_some() {
        None
    } else {
        match light_query(state, &store, &request.query, &prepare_options) {
            Ok(inline) => inline,
            Err(error) => return refuse(state, error),
        }
    };
    if let Some(light) = inline {
        let plan_micros = looked_up.elapsed().as_secs_f64() * 1e6;
        let report = execute::Report {
            log: log.clone(),
            dataset: state.name.clone(),
            slow_query: state.config.slow_query,
            text: &request.query,
        };
        let guess_limit = light.guessed.then_some(state.config.inline_guess_limit);
        let outcome = execute::run_inline(
            &store,
            &light.cached,
            &negotiated,
            &options,
            guess_limit,
            plan_micros,
            report,
        );
        match outcome {
            Inline::Done(outcome) => {
                drop(ticket);
                return match outcome {
                    Ok((head, bytes)) => {
                        state.limits.served.fetch_add(1, Ordering::Relaxed);
                        respond(head, Body::from(bytes))
                    }
                    Err(error) => refuse(state, error),
                };
            }
            // A guess gone wrong: the query runs again below, on a blocking thread.
            Inline::TooSlow => {
                state
                    .limits
                    .moved_to_workers
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    let permit = match state.limits.acquire().await {
        Ok(permit) => permit,
        Err(error) => return error.into_response(),
    };
    // From here the body owns the guard: dropping this future or the body cancels the query.
    let (sender, body) = stream::channel(CancelOnDrop(cancel));
    let (head_tx, head_rx) = oneshot::channel();
    let job = Job {
        store,
        query: request.query,
        dataset: request.dataset,
        negotiated,
        options,
        send_timeout: state.config.send_timeout,
        cache: state.queries.clone(),
        log,
        dataset_name: state.name.clone(),
        slow_query: state.config.slow_query,
    };
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        execute::run(job, runtime, head_tx, sender);
    });
    match head_rx.await {
        Ok(Ok((head, Some(whole)))) => {
            state.limits.served.fetch_add(1, Ordering::Relaxed);
            respond(head, Body::from(whole))
        }
        Ok(Ok((head, None))) => {
            state.limits.served.fetch_add(1, Ordering::Relaxed);
            respond(head, Body::new(body))
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

/// A query to run on the request's task.
struct LightQuery {
    cached: Arc<CachedQuery>,
    /// Run on the planner's estimate alone (it has not run before): stopped at
    /// [`crate::Config::inline_guess_limit`].
    guessed: bool,
}

/// The prepared query, if it should run on the request's task: a cached query whose
/// fastest run was cheap ([`execute::INLINE_MICROS`], [`execute::INLINE_BYTES`]), or one
/// not yet run, prepared here when its text is short, whose plan expects little work
/// ([`execute::INLINE_WORK`]; run under [`crate::Config::inline_guess_limit`]). Never a
/// query with SERVICE: it waits on remote endpoints. A query that does not parse or
/// resolve is answered here too.
fn light_query(
    state: &Arc<AppState>,
    store: &Store,
    text: &str,
    options: &PrepareOptions,
) -> Result<Option<LightQuery>, ApiError> {
    // A short text is prepared here (from the cache when it is there); a long one runs
    // here only when cached and known cheap.
    let cached = if text.len() <= execute::INLINE_TEXT_BYTES {
        match state.queries.prepare(store, text, options) {
            Ok((cached, _)) => cached,
            Err(error) => return Err(ApiError::from_query(&error)),
        }
    } else {
        match state.queries.get(store, text, options) {
            Some(cached) => cached,
            None => return Ok(None),
        }
    };
    if cached.query.calls_services() {
        return Ok(None);
    }
    if cached.has_run() {
        let cheap = cached.was_cheaper_than(execute::INLINE_MICROS, execute::INLINE_BYTES);
        return Ok(cheap.then_some(LightQuery {
            cached,
            guessed: false,
        }));
    }
    if cached.query.estimated_work() > execute::INLINE_WORK {
        return Ok(None);
    }
    Ok(Some(LightQuery {
        cached,
        guessed: true,
    }))
}

/// The engine's options for a query of `state`'s dataset under its limits.
fn exec_options(state: &AppState, cancel: &Arc<std::sync::atomic::AtomicBool>) -> ExecOptions {
    // Options the engine adds later keep their defaults.
    #[allow(clippy::needless_update)]
    ExecOptions {
        threads: state.config.threads,
        timeout: state.config.timeout,
        max_results: state.config.max_results,
        max_memory: state.config.max_memory,
        pool: Some(state.memory.clone()),
        cancel: Some(cancel.clone()),
        device: state.config.device.clone(),
        partitions: state.config.partitions.clone(),
        service: state.config.service.clone(),
        ..ExecOptions::default()
    }
}

/// `explain=true`: runs the query under the same limits as any other and answers its plan
/// with estimated and actual rows per step, as text.
async fn explain(state: &Arc<AppState>, request: QueryRequest, log: Arc<RequestLog>) -> Response {
    let ticket = match state.limits.enter() {
        Ok(ticket) => ticket,
        Err(error) => return error.into_response(),
    };
    let cancel = ticket.cancel_flag();
    let options = exec_options(state, &cancel);
    let store = match state.query_snapshot(request.reasoning) {
        Ok(store) => store,
        Err(error) => return refuse(state, error),
    };
    let permit = match state.limits.acquire().await {
        Ok(permit) => permit,
        Err(error) => return error.into_response(),
    };
    let cache = state.queries.clone();
    // Dropping this future (the client went away) cancels the query.
    let _cancel_on_drop = CancelOnDrop(cancel);
    let explained = tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        execute::explain(&store, &request, &cache, &options, &log)
    })
    .await;
    match explained {
        Ok(Ok(text)) => {
            state.limits.served.fetch_add(1, Ordering::Relaxed);
            (
                [
                    (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                text,
            )
                .into_response()
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

/// The response to an answered query: its body, content type and `Server-Timing`.
fn respond(head: execute::Head, body: Body) -> Response {
    // Written on the stack and copied once into the header (a `String` and its copy before).
    let mut timing = [0u8; 96];
    let mut cursor = std::io::Cursor::new(&mut timing[..]);
    // Milliseconds with three decimals from whole microseconds: integers format several
    // times faster than floats with a precision.
    let millis = |micros: f64| {
        let micros = micros.round().max(0.0) as u64;
        (micros / 1000, micros % 1000)
    };
    let ((plan, plan_frac), (exec, exec_frac)) =
        (millis(head.plan_micros), millis(head.execute_micros));
    let written = std::io::Write::write_fmt(
        &mut cursor,
        format_args!("plan;dur={plan}.{plan_frac:03}, exec;dur={exec}.{exec_frac:03}"),
    );
    let length = cursor.position() as usize;
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(head.format)),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    if let (Ok(()), Ok(value)) = (written, HeaderValue::from_bytes(&timing[..length])) {
        headers.insert(SERVER_TIMING, value);
    }
    response
}

/// Header names of the server's own, made once (a name given as a `&str` is copied on
/// every insert).
const SERVER_TIMING: HeaderName = HeaderName::from_static("server-timing");
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// `/update`, any method: POST runs the update; other methods get the write policy's
/// refusal, or 405.
async fn update_any(
    State(state): State<Arc<AppState>>,
    Extension(log): Extension<Arc<RequestLog>>,
    method: Method,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    if let Err(error) = state.access.check(&headers) {
        return refuse(&state, error);
    }
    if method != Method::POST {
        let mut response = refuse(&state, update_needs_post(&state, &headers));
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let body = match body {
        Ok(body) => body,
        Err(rejection) => return refuse(&state, state.body_rejection(rejection)),
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok());
    match protocol::operation_from_post(content_type, uri.query(), &body) {
        Ok(Operation::Update(request)) => run_update(&state, request, &headers, &uri, &log).await,
        Ok(Operation::Query(_)) => refuse(
            &state,
            ApiError::bad_request("/update takes updates; send queries to /query"),
        ),
        Err(error) => refuse(&state, error),
    }
}

/// Checks the write policy, parses, admits and runs an update as one transaction on a
/// blocking thread, and answers with a short summary.
async fn run_update(
    state: &Arc<AppState>,
    request: UpdateRequest,
    headers: &HeaderMap,
    uri: &Uri,
    log: &RequestLog,
) -> Response {
    log.set_form("update");
    if let Err(error) = state.access.check(headers) {
        return refuse(state, error);
    }
    let base = crate::state::request_url(headers, uri);
    let prepared = match update::prepare(&request, &base, state.config.allow_load) {
        Ok(prepared) => prepared,
        Err(error) => return refuse(state, error),
    };
    let (ticket, permit) = match state.admit().await {
        Ok(admitted) => admitted,
        Err(response) => return response,
    };
    let cancel = ticket.cancel_flag();
    // The request's future owns the guard: a client that hangs up cancels its update.
    let _guard = CancelOnDrop(cancel.clone());
    // Options the engine adds later keep their defaults.
    #[allow(clippy::needless_update)]
    let options = ExecOptions {
        threads: state.config.threads,
        timeout: state.config.timeout,
        max_results: None,
        max_memory: state.config.max_memory,
        pool: Some(state.memory.clone()),
        cancel: Some(cancel),
        device: state.config.device.clone(),
        partitions: state.config.partitions.clone(),
        service: state.config.service.clone(),
        ..ExecOptions::default()
    };
    let db = state.db.clone();
    let operations = prepared.operations;
    let outcome = tokio::task::spawn_blocking(move || {
        let _held = (permit, ticket);
        update::run(&db, &prepared, &options)
    })
    .await;
    match outcome {
        Ok(Ok(report)) => {
            state.limits.served.fetch_add(1, Ordering::Relaxed);
            state.limits.committed.fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                id = log.id,
                dataset = %state.name,
                inserted = report.inserted,
                deleted = report.deleted,
                "update committed"
            );
            let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
            let json = accept.is_some_and(|a| a.contains("json"));
            let (content_type, body) = update::summary(&report, operations, json);
            (
                StatusCode::OK,
                [
                    (header::CONTENT_TYPE, content_type),
                    (header::CACHE_CONTROL, "no-store"),
                ],
                body,
            )
                .into_response()
        }
        Ok(Err(error)) => refuse(state, error),
        Err(_) => refuse(
            state,
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the update failed unexpectedly",
            ),
        ),
    }
}

async fn not_found(uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!(
            "no such resource: {} (try / , /query, /sparql, /update, /store, /status, \
             /NAME/… for a dataset NAME of /$/datasets, or /$/ping)",
            uri.path()
        ),
    )
    .into_response()
}

async fn status(State(state): State<Arc<AppState>>) -> Response {
    let limits = &state.limits;
    let config = &state.config;
    let store = state.snapshot();
    let (triples, terms) = state.size();
    // A cluster that cannot answer (a process ended): the status says so, as 503, for the
    // health checks of whoever restarts it.
    let unavailable = config.partitions.as_ref().and_then(|p| p.unavailable());
    let body = serde_json::json!({
        "status": if unavailable.is_some() { "unavailable" } else { "ok" },
        "version": env!("CARGO_PKG_VERSION"),
        "writable": state.access.writable,
        "dataset": state.name,
        "store_version": state.db.sequence(),
        "triples": triples,
        "terms": terms,
        "named_graphs": store.graph_names().count(),
        // The entailment of a store loaded with reasoning, and whether queries read it
        // unless they send reasoning=off.
        "reasoning": store.entailment().map(|layer| serde_json::json!({
            "profile": layer.profile().name(),
            "derived_triples": layer.derived(),
            "entailed_triples": layer.triples(),
            "default": config.reasoning,
        })),
        "limits": {
            "threads": config.threads,
            "queue": config.queue,
            "queue_timeout_seconds": config.queue_timeout.as_secs_f64(),
            "timeout_seconds": config.timeout.map(|t| t.as_secs_f64()),
            "max_results": config.max_results,
            "max_memory_bytes": config.max_memory,
            "max_body_bytes": config.max_body_bytes,
        },
        "device": config.device.as_ref().map(|device| serde_json::json!({
            "name": device.name(),
            "runs": device.runs(),
        })),
        "cluster": config.partitions.as_ref().map(|partitions| serde_json::json!({
            "partitions": partitions.name(),
            "answering": unavailable.is_none(),
            "error": unavailable,
        })),
    });
    let body = with_activity(body, limits, &state.memory, state.started);
    let code = match unavailable {
        Some(_) => StatusCode::SERVICE_UNAVAILABLE,
        None => StatusCode::OK,
    };
    (
        code,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// `status` with what the whole server does added: uptime, requests served, failed and
/// rejected, writes, what is in flight, and the memory pool (shared by every dataset).
fn with_activity(
    mut status: serde_json::Value,
    limits: &crate::limits::Limits,
    memory: &quiver_sparql::memory::MemoryPool,
    started: Instant,
) -> serde_json::Value {
    let activity = serde_json::json!({
        "uptime_seconds": started.elapsed().as_secs_f64(),
        "queries_served": limits.served.load(Ordering::Relaxed),
        "queries_failed": limits.failed.load(Ordering::Relaxed),
        "queries_rejected": limits.rejected.load(Ordering::Relaxed),
        "queries_moved_to_workers": limits.moved_to_workers.load(Ordering::Relaxed),
        "writes_committed": limits.committed.load(Ordering::Relaxed),
        "in_flight": limits.in_flight(),
        "running": limits.running(),
        "queued": limits.queued(),
        "memory": {
            "limit_bytes": memory.limit(),
            "used_bytes": memory.used(),
            "peak_bytes": memory.peak(),
            "queries": memory.queries(),
            "refused": memory.refused(),
        },
    });
    if let (Some(status), serde_json::Value::Object(activity)) = (status.as_object_mut(), activity)
    {
        status.extend(activity);
    }
    status
}

/// The server's `/status` when no dataset is served at the root: what is server-wide.
async fn server_status(State(server): State<Arc<ServerState>>) -> Response {
    let body = serde_json::json!({
        "status": "ok",
        "version": env!("CARGO_PKG_VERSION"),
        "datasets": server.datasets.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
    });
    let body = with_activity(body, &server.limits, &server.memory, server.started);
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body.to_string(),
    )
        .into_response()
}

/// The dataset (empty: the server itself) and endpoint a request `path` goes to.
fn locate(server: &ServerState, path: &str) -> (String, &'static str) {
    let rest = path.strip_prefix('/').unwrap_or(path);
    let first = rest.split('/').next().unwrap_or("");
    if !first.is_empty() && first != "$" {
        if let Some(dataset) = server.dataset(first) {
            let endpoint = crate::metrics::endpoint(&path[1 + first.len()..]);
            return (dataset.name.clone(), endpoint);
        }
    }
    let endpoint = crate::metrics::endpoint(path);
    let server_route = matches!(endpoint, "/metrics" | "other") || endpoint.starts_with("/$/");
    match &server.root {
        Some(root) if !server_route => (root.name.clone(), endpoint),
        _ => (String::new(), endpoint),
    }
}

/// Ids, CORS, metrics and the access log, around every route.
async fn edge(
    State(server): State<Arc<ServerState>>,
    mut request: Request,
    next: Next,
) -> Response {
    let id = server.next_request_id();
    let log = Arc::new(RequestLog::new(id));
    request.extensions_mut().insert(log.clone());
    let path = request.uri().path().to_owned();
    let (dataset, endpoint) = locate(&server, &path);
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    let mut entry = AccessEntry::new(
        request.method().clone(),
        path,
        dataset,
        endpoint,
        peer,
        log,
        server.metrics.clone(),
    );
    let cors = server
        .config
        .cors
        .as_deref()
        .and_then(|origin| HeaderValue::from_str(origin).ok());
    let mut response = if cors.is_some() && entry.method == Method::OPTIONS {
        preflight()
    } else if announced_length(&request).is_some_and(|n| n > server.config.max_body_bytes) {
        // Refused before reading a byte (and before `100 Continue`); longer bodies without
        // a Content-Length are cut at the limit by `DefaultBodyLimit`.
        server.limits.failed.fetch_add(1, Ordering::Relaxed);
        body_too_large(server.config.max_body_bytes).into_response()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    headers.insert(REQUEST_ID, HeaderValue::from(id));
    if let Some(origin) = cors {
        if origin != "*" {
            headers.append(header::VARY, HeaderValue::from_static("Origin"));
        }
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("server-timing, x-request-id"),
        );
    }
    let status = response.status();
    entry.status = Some(status);
    server
        .metrics
        .observe(&entry.dataset, endpoint, status, entry.started.elapsed());
    response.map(|body| Body::new(LoggedBody::new(body, entry)))
}

/// `GET /metrics`: see `metrics.rs`.
async fn metrics(
    State(server): State<Arc<ServerState>>,
    headers: HeaderMap,
    request: Request,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    if let Err(error) = crate::metrics::allowed(
        peer,
        server.config.public_metrics,
        server.config.update_token.as_deref(),
        &headers,
    ) {
        return error.into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        server.metrics.render(&server),
    )
        .into_response()
}

fn preflight() -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (
                header::ACCESS_CONTROL_ALLOW_METHODS,
                "GET, HEAD, POST, PUT, DELETE, OPTIONS",
            ),
            (
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                "Content-Type, Accept, Authorization",
            ),
            (header::ACCESS_CONTROL_MAX_AGE, "600"),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(plan_micros: f64, execute_micros: f64) -> String {
        let head = execute::Head {
            format: quiver_sparql::ResultsFormat::Tsv,
            plan_micros,
            execute_micros,
        };
        let response = respond(head, Body::empty());
        response.headers()[SERVER_TIMING]
            .to_str()
            .unwrap()
            .to_owned()
    }

    /// The `Server-Timing` header gives milliseconds with three decimals, as a float
    /// formatted with a precision would (ties aside: whole microseconds are rounded).
    #[test]
    fn server_timing_in_milliseconds() {
        for (plan, exec) in [
            (0.0, 0.4),
            (12.4, 999.6),
            (0.6, 3.7),
            (1_234.0, 56_789_012.3),
            (7.0, 1e3),
        ] {
            assert_eq!(
                timing(plan, exec),
                format!("plan;dur={:.3}, exec;dur={:.3}", plan / 1e3, exec / 1e3)
            );
        }
    }
}
