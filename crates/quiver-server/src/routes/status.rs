//! `/status`: a dataset's size, limits and activity as JSON, and the server's own when no
//! dataset is served at the root.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::state::{AppState, ServerState};

pub(super) async fn status(State(state): State<Arc<AppState>>) -> Response {
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
pub(super) async fn server_status(State(server): State<Arc<ServerState>>) -> Response {
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
