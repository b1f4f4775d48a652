//! The access log: one line per request, written when its response has gone out (or the
//! client went away), with what an operator looks for: the request id, method, path,
//! dataset, status, time to the last byte, bytes sent and, for a query, its form and rows.
//!
//! The edge middleware gives each request a [`RequestLog`] (in the request's extensions,
//! for the handlers to fill in the form and rows) and wraps the response body in a
//! [`LoggedBody`], which counts the bytes as they are sent and writes the line when it is
//! dropped: after the last chunk, or when the connection was cut. The line is a `tracing`
//! event at INFO, target `quiver::access`: text or JSON as the subscriber is set up
//! (`--log-format`). It never holds the query's text or a header's value: the text is
//! logged at DEBUG (target `quiver::query`) and in the slow-query log, which an operator
//! asks for.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::http::{Method, StatusCode};
use http_body::{Frame, SizeHint};

use crate::metrics::Metrics;

/// What the handlers of a request tell the access log.
#[derive(Debug)]
pub struct RequestLog {
    /// The request's id (also the `X-Request-Id` response header).
    pub id: u64,
    rows: AtomicU64,
    form: OnceLock<&'static str>,
}

const NO_ROWS: u64 = u64::MAX;

impl RequestLog {
    pub fn new(id: u64) -> Self {
        Self {
            id,
            rows: AtomicU64::new(NO_ROWS),
            form: OnceLock::new(),
        }
    }

    /// Records the rows (solutions, triples, or 1 for ASK) of the answer.
    pub fn set_rows(&self, rows: usize) {
        self.rows.store(rows as u64, Ordering::Relaxed);
    }

    /// Records the operation's form: `select`, `ask`, `construct`, `describe`, `update`.
    pub fn set_form(&self, form: &'static str) {
        let _ = self.form.set(form);
    }

    fn rows(&self) -> Option<u64> {
        Some(self.rows.load(Ordering::Relaxed)).filter(|&rows| rows != NO_ROWS)
    }

    fn form(&self) -> Option<&'static str> {
        self.form.get().copied()
    }
}

/// One access-log line, written when dropped.
pub struct AccessEntry {
    pub started: Instant,
    pub method: Method,
    pub path: String,
    /// The dataset the request went to (empty: a route of the server itself).
    pub dataset: String,
    pub endpoint: &'static str,
    pub peer: Option<SocketAddr>,
    pub request: Arc<RequestLog>,
    pub metrics: Arc<Metrics>,
    /// The response's status, once its head is ready.
    pub status: Option<StatusCode>,
    bytes: u64,
    /// Whether the body went out to its end.
    complete: bool,
}

impl AccessEntry {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        method: Method,
        path: String,
        dataset: String,
        endpoint: &'static str,
        peer: Option<SocketAddr>,
        request: Arc<RequestLog>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            started: Instant::now(),
            method,
            path,
            dataset,
            endpoint,
            peer,
            request,
            metrics,
            status: None,
            bytes: 0,
            complete: false,
        }
    }
}

impl Drop for AccessEntry {
    fn drop(&mut self) {
        let took = self.started.elapsed();
        let ms = (took.as_secs_f64() * 1e6).round() / 1e3;
        // Written only if the line is (not formatted for a disabled log on every request).
        let peer = Peer(self.peer);
        let id = self.request.id;
        let form = self.request.form().unwrap_or("-");
        let Some(status) = self.status else {
            tracing::info!(
                target: "quiver::access",
                id,
                %peer,
                method = %self.method,
                path = %self.path,
                dataset = %self.dataset,
                ms,
                "client went away before the response"
            );
            return;
        };
        if let (Some(form), true) = (self.request.form(), status.is_success() && self.complete) {
            self.metrics.observe_query(&self.dataset, form, took);
        }
        // `rows` is left out of the line where there are none (`None` records nothing).
        tracing::info!(
            target: "quiver::access",
            id,
            %peer,
            method = %self.method,
            path = %self.path,
            dataset = %self.dataset,
            status = status.as_u16(),
            ms,
            bytes = self.bytes,
            rows = self.request.rows(),
            form,
            complete = self.complete,
        );
    }
}

/// A client's address in the access log, `-` when unknown.
struct Peer(Option<SocketAddr>);

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(address) => address.fmt(f),
            None => f.write_str("-"),
        }
    }
}

/// A response body that counts what it sends and writes its request's access-log line
/// when dropped.
pub struct LoggedBody {
    inner: Body,
    entry: AccessEntry,
}

impl LoggedBody {
    /// `inner`, logged by `entry` (whose status is set).
    pub fn new(inner: Body, entry: AccessEntry) -> Self {
        Self { inner, entry }
    }
}

impl http_body::Body for LoggedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.entry.bytes += data.len() as u64;
                }
            }
            Poll::Ready(None) => this.entry.complete = true,
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for LoggedBody {
    fn drop(&mut self) {
        // A body whose length is known is not polled past its last frame (nor at all for
        // HEAD): it ended if nothing is left of it.
        let entry = &mut self.entry;
        entry.complete |=
            http_body::Body::is_end_stream(&self.inner) || entry.method == Method::HEAD;
    }
}
