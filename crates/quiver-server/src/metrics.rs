//! `GET /metrics`: the server in the Prometheus exposition format (OpenMetrics text, as
//! `prometheus-client` writes it), for an operator's Prometheus or Grafana.
//!
//! Counted as requests pass the edge middleware: requests by endpoint and status (the
//! rejections 503/507/422/504 among them) and their latency by endpoint. Read when scraped:
//! queries in flight, running and queued; the memory pool's limit, use, peak and refusals;
//! the store's triples, terms and version; writes committed. Endpoints are the routes'
//! names (`/store/…` is `/store`), so a client cannot grow the label set.
//!
//! Who may read it: a client on the loopback; others with the update token, or anyone
//! when the server runs with `--public-metrics` ([`allowed`]).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::error::ApiError;
use crate::state::AppState;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

/// The server's metrics: counted per request, the rest read from the state when scraped.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<EndpointLabels, Histogram>,
    in_flight: Gauge,
    running: Gauge,
    queued: Gauge,
    memory_limit: Gauge,
    memory_used: Gauge,
    memory_peak: Gauge,
    memory_refused: Gauge,
    triples: Gauge,
    terms: Gauge,
    version: Gauge,
    writes: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("quiver");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by endpoint and status",
            requests.clone(),
        );
        // 100 µs to about 26 s, ×4 a bucket.
        let durations = Family::<EndpointLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(1e-4, 4.0, 10))
        });
        registry.register(
            "http_request_duration_seconds",
            "Time to the response head, by endpoint",
            durations.clone(),
        );
        let mut gauge = |name: &str, help: &str| {
            let gauge = Gauge::default();
            registry.register(name, help, gauge.clone());
            gauge
        };
        let in_flight = gauge("queries_in_flight", "Queries admitted and not finished");
        let running = gauge("queries_running", "Queries holding a worker");
        let queued = gauge("queries_queued", "Queries waiting for a worker");
        let memory_limit = gauge(
            "memory_pool_limit_bytes",
            "The memory pool's size (--max-memory; -1: none)",
        );
        let memory_used = gauge("memory_pool_used_bytes", "Bytes the queries in flight hold");
        let memory_peak = gauge("memory_pool_peak_bytes", "The most bytes held at once");
        let memory_refused = gauge(
            "memory_pool_refusals",
            "Queries stopped by the memory pool so far",
        );
        let triples = gauge("store_triples", "Triples of the latest version");
        let terms = gauge("store_terms", "Terms of the latest version");
        let version = gauge("store_version", "The latest version's number");
        let writes = gauge("writes_committed", "Writes committed since the start");
        Self {
            registry,
            requests,
            durations,
            in_flight,
            running,
            queued,
            memory_limit,
            memory_used,
            memory_peak,
            memory_refused,
            triples,
            terms,
            version,
            writes,
        }
    }

    /// Counts one answered request on `path`.
    pub fn observe(&self, path: &str, status: StatusCode, took: Duration) {
        let endpoint = endpoint(path);
        self.requests
            .get_or_create(&RequestLabels {
                endpoint,
                status: status.as_u16(),
            })
            .inc();
        self.durations
            .get_or_create(&EndpointLabels { endpoint })
            .observe(took.as_secs_f64());
    }

    /// The exposition of `state`'s metrics.
    pub fn render(&self, state: &AppState) -> String {
        let limits = &state.limits;
        let as_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.in_flight.set(as_i64(limits.in_flight()));
        self.running.set(as_i64(limits.running()));
        self.queued.set(as_i64(limits.queued()));
        let memory = &state.memory;
        self.memory_limit.set(memory.limit().map_or(-1, as_i64));
        self.memory_used.set(as_i64(memory.used()));
        self.memory_peak.set(as_i64(memory.peak()));
        self.memory_refused
            .set(i64::try_from(memory.refused()).unwrap_or(i64::MAX));
        let store = state.snapshot();
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.triples.set(as_i64(store.triples()));
        self.terms.set(as_i64(store.terms()));
        self.version.set(as_i64(store.version()));
        self.writes
            .set(as_i64(limits.committed.load(Ordering::Relaxed)));
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// The label of a request path: its route, or `other`.
fn endpoint(path: &str) -> &'static str {
    match path {
        "/" => "/",
        "/query" => "/query",
        "/sparql" => "/sparql",
        "/update" => "/update",
        "/status" => "/status",
        "/metrics" => "/metrics",
        _ if path == "/store" || path.starts_with("/store/") => "/store",
        _ => "other",
    }
}

/// Whether a client at `peer` may read the metrics: on the loopback, or with the update
/// token, or anyone with `--public-metrics`.
pub fn allowed(
    peer: Option<SocketAddr>,
    public: bool,
    token: Option<&str>,
    headers: &HeaderMap,
) -> Result<(), ApiError> {
    if public || peer.is_some_and(|peer| peer.ip().is_loopback()) {
        return Ok(());
    }
    match token {
        Some(token) => crate::auth::check_bearer(headers, token),
        None => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "metrics are served to loopback clients, to clients with the update token, or to \
             anyone when the server runs with --public-metrics",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{header, HeaderValue};

    #[test]
    fn only_loopback_the_token_or_public_metrics_may_read() {
        let loopback: SocketAddr = "127.0.0.1:5000".parse().unwrap();
        let remote: SocketAddr = "192.0.2.7:5000".parse().unwrap();
        let none = HeaderMap::new();
        let mut bearer = HeaderMap::new();
        bearer.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer secret"),
        );
        assert!(allowed(Some(loopback), false, None, &none).is_ok());
        assert!(allowed(Some(remote), true, None, &none).is_ok());
        assert_eq!(
            allowed(Some(remote), false, None, &none)
                .unwrap_err()
                .status,
            StatusCode::FORBIDDEN
        );
        assert!(allowed(Some(remote), false, Some("secret"), &none).is_err());
        assert!(allowed(Some(remote), false, Some("other"), &bearer).is_err());
        assert!(allowed(Some(remote), false, Some("secret"), &bearer).is_ok());
        assert!(allowed(None, false, Some("secret"), &none).is_err());
    }

    #[test]
    fn endpoints_are_the_routes() {
        assert_eq!(endpoint("/store/http%3A%2F%2Fe"), "/store");
        assert_eq!(endpoint("/store"), "/store");
        assert_eq!(endpoint("/anything/else"), "other");
        assert_eq!(endpoint("/query"), "/query");
    }
}
