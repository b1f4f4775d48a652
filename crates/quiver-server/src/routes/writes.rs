//! Updates over the protocol (`/update`, and POSTed to the query routes): the write
//! policy first, then the update on a blocking thread, its commit awaited.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Extension, OriginalUri, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use quiver_sparql::ExecOptions;

use crate::access::RequestLog;
use crate::error::ApiError;
use crate::limits::CancelOnDrop;
use crate::protocol::{self, Operation, UpdateRequest};
use crate::state::AppState;
use crate::update;

use super::{refuse, update_needs_post};

/// `/update`, any method: POST runs the update; other methods get the write policy's
/// refusal, or 405.
pub(super) async fn update_any(
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
pub(super) async fn run_update(
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
