//! Queries over the protocol: negotiated, admitted, run on the request's own task when
//! light or handed to a blocking thread, and answered with their timing.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use quiver_sparql::{CachedQuery, ExecOptions, PrepareOptions};
use quiver_store::Store;
use tokio::sync::oneshot;

use crate::access::RequestLog;
use crate::error::ApiError;
use crate::execute::{self, Inline, Job};
use crate::limits::CancelOnDrop;
use crate::negotiate::{content_type, negotiate};
use crate::protocol::QueryRequest;
use crate::state::AppState;
use crate::stream;

use super::refuse;

/// Negotiates, admits, runs the query on a blocking thread and streams its result.
pub(super) async fn answer(
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

/// The header name of the server's timing, made once (a name given as a `&str` is copied
/// on every insert).
const SERVER_TIMING: HeaderName = HeaderName::from_static("server-timing");

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
