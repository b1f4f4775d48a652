//! What every request passes on its way in and out ([`edge`]): its id, CORS, the size its
//! body announces, its count in the metrics and its line in the access log.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderName, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::access::{AccessEntry, LoggedBody, RequestLog};
use crate::state::{body_too_large, ServerState};

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
pub(super) async fn edge(
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

/// The header name of a request's id, made once (a name given as a `&str` is copied on
/// every insert).
const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
