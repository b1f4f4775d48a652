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
//! Every response passes [`edge::edge`], which gives the request its id (`X-Request-Id`),
//! answers CORS preflights when `--cors` is set, adds the CORS header, counts the request
//! in the metrics and logs it ([`crate::access`]) once its body has gone out.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{
    ConnectInfo, DefaultBodyLimit, Extension, FromRequest, OriginalUri, Request, State,
};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::middleware;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use axum::Router;

use crate::access::RequestLog;
use crate::admin;
use crate::error::ApiError;
use crate::graph_store;
use crate::protocol::{self, Operation};
use crate::service_description;
pub use crate::state::{AppState, ServerState};
use crate::ui;

mod answer;
mod edge;
mod status;
mod writes;

use answer::answer;
use edge::edge;
use status::{server_status, status};
use writes::{run_update, update_any};

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

fn refuse(state: &AppState, error: ApiError) -> Response {
    state.refuse(error)
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
        server.metrics.render(&server.readings()),
    )
        .into_response()
}
