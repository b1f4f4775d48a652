//! `GET /metrics`: the server in the Prometheus exposition format (OpenMetrics text, as
//! `prometheus-client` writes it), for an operator's Prometheus or Grafana.
//!
//! Counted as requests pass the edge middleware: requests by dataset, endpoint and status
//! (the rejections 503/507/422/504 among them), their time to the response head by
//! endpoint, and queries' and updates' time to the last byte by dataset and form (`select`,
//! `ask`, `construct`, `describe`, `update`). Read when scraped (the server's state gathers
//! them into [`Readings`]): queries in flight, running and queued; the memory pool's limit,
//! use, peak and refusals; and per dataset the store's triples, terms, version (its last
//! commit's sequence number) and log size, commits and checkpoints with their time, the
//! prepared-query cache's hits and misses, device (GPU) runs, and for a cluster the rows,
//! messages and bytes exchanged between workers and what this process holds beside its
//! partitions (network buffers, the replicated `rdf:type` memberships). Endpoints are the
//! routes' names (`/store/…` is `/store`) and datasets the configured ones, so a client
//! cannot grow the label set.
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

use quiver_db::LogStats;
use quiver_sparql::partitions::{Exchanged, FlowControl, HeldBytes};

use crate::error::ApiError;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    /// The dataset's name; empty for the server's own routes.
    dataset: String,
    endpoint: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FormLabels {
    dataset: String,
    form: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DatasetLabels {
    dataset: String,
}

type PerDataset<M> = Family<DatasetLabels, M>;

/// Counters and gauges of each dataset, set from its state when scraped.
#[derive(Default)]
struct DatasetMetrics {
    triples: PerDataset<Gauge>,
    terms: PerDataset<Gauge>,
    version: PerDataset<Gauge>,
    log_bytes: PerDataset<Gauge>,
    commits: PerDataset<Counter>,
    commit_seconds: PerDataset<Counter<f64>>,
    log_syncs: PerDataset<Counter>,
    checkpoints: PerDataset<Counter>,
    checkpoint_seconds: PerDataset<Counter<f64>>,
    cache_hits: PerDataset<Counter>,
    cache_misses: PerDataset<Counter>,
    device_runs: PerDataset<Counter>,
    exchanged_rows: PerDataset<Counter>,
    exchanged_messages: PerDataset<Counter>,
    exchanged_bytes: PerDataset<Counter>,
    network_buffer_bytes: PerDataset<Gauge>,
    network_buffer_peak_bytes: PerDataset<Gauge>,
    messages_waited: PerDataset<Counter>,
    most_messages_in_flight: PerDataset<Gauge>,
    message_window: PerDataset<Gauge>,
    replicated_bytes: PerDataset<Gauge>,
    cluster_answering: PerDataset<Gauge>,
}

/// The server's metrics: counted per request, the rest read from the state when scraped.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Family<EndpointLabels, Histogram>,
    queries: Family<FormLabels, Histogram>,
    in_flight: Gauge,
    running: Gauge,
    queued: Gauge,
    memory_limit: Gauge,
    memory_used: Gauge,
    memory_peak: Gauge,
    memory_refused: Gauge,
    writes: Gauge,
    datasets: DatasetMetrics,
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

/// Latency buckets: 100 µs to about 26 s, ×4 a bucket.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(1e-4, 4.0, 10))
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("quiver");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by dataset, endpoint and status",
            requests.clone(),
        );
        let durations =
            Family::<EndpointLabels, Histogram>::new_with_constructor(latency_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time to the response head, by endpoint",
            durations.clone(),
        );
        let queries = Family::<FormLabels, Histogram>::new_with_constructor(latency_histogram);
        registry.register(
            "query_duration_seconds",
            "Time from the request to the last byte of the answer, by dataset and query \
             form (update: SPARQL Update), for requests answered with a success status",
            queries.clone(),
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
        let writes = gauge("writes_committed", "Writes committed since the start");
        let datasets = DatasetMetrics::default();
        let d = &datasets;
        registry.register(
            "store_triples",
            "Triples of the latest version",
            d.triples.clone(),
        );
        registry.register(
            "store_terms",
            "Terms of the latest version",
            d.terms.clone(),
        );
        registry.register(
            "store_version",
            "The sequence number of the latest version's last commit",
            d.version.clone(),
        );
        registry.register(
            "log_bytes",
            "Bytes of the write-ahead log on disk",
            d.log_bytes.clone(),
        );
        registry.register(
            "commits",
            "Transactions committed (updates and Graph Store writes)",
            d.commits.clone(),
        );
        registry.register(
            "commit_seconds",
            "Time the committed transactions took, from request to durable and published",
            d.commit_seconds.clone(),
        );
        registry.register("log_syncs", "fsync calls on the log", d.log_syncs.clone());
        registry.register(
            "checkpoints",
            "Checkpoints completed",
            d.checkpoints.clone(),
        );
        registry.register(
            "checkpoint_seconds",
            "Time the completed checkpoints took",
            d.checkpoint_seconds.clone(),
        );
        registry.register(
            "query_cache_hits",
            "Queries found prepared in the cache",
            d.cache_hits.clone(),
        );
        registry.register(
            "query_cache_misses",
            "Queries prepared anew",
            d.cache_misses.clone(),
        );
        registry.register(
            "device_runs",
            "Exploration steps run on the device (GPU)",
            d.device_runs.clone(),
        );
        registry.register(
            "cluster_exchanged_rows",
            "Rows moved between a cluster's workers",
            d.exchanged_rows.clone(),
        );
        registry.register(
            "cluster_exchanged_messages",
            "Messages between a cluster's workers",
            d.exchanged_messages.clone(),
        );
        registry.register(
            "cluster_exchanged_bytes",
            "Bytes moved between a cluster's processes",
            d.exchanged_bytes.clone(),
        );
        registry.register(
            "cluster_network_buffer_bytes",
            "Bytes this process's network buffers between a cluster's processes hold",
            d.network_buffer_bytes.clone(),
        );
        registry.register(
            "cluster_network_buffer_peak_bytes",
            "The most bytes this process's network buffers between a cluster's processes held at once since it started",
            d.network_buffer_peak_bytes.clone(),
        );
        registry.register(
            "cluster_messages_waited",
            "Messages a worker of this process held back until a worker of another process took in earlier ones (flow control)",
            d.messages_waited.clone(),
        );
        registry.register(
            "cluster_most_messages_in_flight",
            "The most messages a worker of this process had in flight to one worker of another process (at most the window)",
            d.most_messages_in_flight.clone(),
        );
        registry.register(
            "cluster_message_window",
            "The most messages a worker may have in flight to one worker of another process",
            d.message_window.clone(),
        );
        registry.register(
            "cluster_replicated_bytes",
            "Bytes of what every process of a cluster holds whole (the rdf:type memberships, the small predicates' edges)",
            d.replicated_bytes.clone(),
        );
        registry.register(
            "cluster_answering",
            "1 while the cluster can answer queries, 0 once a process of it ended",
            d.cluster_answering.clone(),
        );
        Self {
            registry,
            requests,
            durations,
            queries,
            in_flight,
            running,
            queued,
            memory_limit,
            memory_used,
            memory_peak,
            memory_refused,
            writes,
            datasets,
        }
    }

    /// Counts one request on `endpoint` of `dataset` (empty: the server's own routes)
    /// whose head was ready after `took`.
    pub fn observe(
        &self,
        dataset: &str,
        endpoint: &'static str,
        status: StatusCode,
        took: Duration,
    ) {
        self.requests
            .get_or_create(&RequestLabels {
                dataset: dataset.to_owned(),
                endpoint,
                status: status.as_u16(),
            })
            .inc();
        self.durations
            .get_or_create(&EndpointLabels { endpoint })
            .observe(took.as_secs_f64());
    }

    /// Counts a query (or update, `form` `update`) of `dataset` answered in `took`, to the
    /// last byte.
    pub fn observe_query(&self, dataset: &str, form: &'static str, took: Duration) {
        self.queries
            .get_or_create(&FormLabels {
                dataset: dataset.to_owned(),
                form,
            })
            .observe(took.as_secs_f64());
    }

    /// The exposition of the server's metrics, with what its state read when scraped.
    pub fn render(&self, readings: &Readings) -> String {
        let as_i64 = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.in_flight.set(as_i64(readings.in_flight));
        self.running.set(as_i64(readings.running));
        self.queued.set(as_i64(readings.queued));
        self.memory_limit
            .set(readings.memory_limit.map_or(-1, as_i64));
        self.memory_used.set(as_i64(readings.memory_used));
        self.memory_peak.set(as_i64(readings.memory_peak));
        let as_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        self.memory_refused.set(as_i64(readings.memory_refused));
        self.writes.set(as_i64(readings.writes));
        let d = &self.datasets;
        for dataset in &readings.datasets {
            let labels = DatasetLabels {
                dataset: dataset.name.clone(),
            };
            let log = &dataset.log;
            d.triples
                .get_or_create(&labels)
                .set(as_i64(dataset.triples));
            d.terms.get_or_create(&labels).set(as_i64(dataset.terms));
            d.version
                .get_or_create(&labels)
                .set(as_i64(dataset.version));
            d.log_bytes.get_or_create(&labels).set(as_i64(log.bytes));
            let set = |family: &PerDataset<Counter>, value: u64| {
                family
                    .get_or_create(&labels)
                    .inner()
                    .store(value, Ordering::Relaxed);
            };
            set(&d.commits, dataset.commits);
            let seconds = |family: &PerDataset<Counter<f64>>, value: f64| {
                family
                    .get_or_create(&labels)
                    .inner()
                    .store(value.to_bits(), Ordering::Relaxed);
            };
            seconds(&d.commit_seconds, dataset.commit_time.as_secs_f64());
            set(&d.log_syncs, log.fsyncs);
            set(&d.checkpoints, log.checkpoints);
            seconds(&d.checkpoint_seconds, log.checkpoint_micros as f64 / 1e6);
            let (hits, misses) = dataset.cache;
            set(&d.cache_hits, hits);
            set(&d.cache_misses, misses);
            if let Some(runs) = dataset.device_runs {
                set(&d.device_runs, runs);
            }
            if let Some(cluster) = &dataset.cluster {
                let exchanged = cluster.exchanged;
                set(&d.exchanged_rows, exchanged.rows);
                set(&d.exchanged_messages, exchanged.messages);
                set(&d.exchanged_bytes, exchanged.bytes);
                let held = cluster.held;
                let gauge = |family: &PerDataset<Gauge>, value: u64| {
                    family
                        .get_or_create(&labels)
                        .set(i64::try_from(value).unwrap_or(i64::MAX));
                };
                gauge(&d.network_buffer_bytes, held.network_buffers);
                gauge(&d.network_buffer_peak_bytes, held.network_buffers_peak);
                let flow = cluster.flow;
                set(&d.messages_waited, flow.waited);
                gauge(&d.most_messages_in_flight, flow.most_in_flight);
                gauge(&d.message_window, flow.window);
                gauge(&d.replicated_bytes, held.replicated);
                gauge(&d.cluster_answering, u64::from(cluster.answering));
            }
        }
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// What the server's state says when its metrics are scraped
/// (`ServerState::readings` reads it).
#[derive(Debug, Default)]
pub struct Readings {
    /// Queries in flight, running and queued.
    pub in_flight: usize,
    pub running: usize,
    pub queued: usize,
    /// The memory pool's limit (`None`: none), use, peak and refusals.
    pub memory_limit: Option<usize>,
    pub memory_used: usize,
    pub memory_peak: usize,
    pub memory_refused: u64,
    /// Writes committed.
    pub writes: u64,
    pub datasets: Vec<DatasetReadings>,
}

/// What one dataset's state says when scraped.
#[derive(Debug, Default)]
pub struct DatasetReadings {
    pub name: String,
    pub triples: u64,
    pub terms: u64,
    /// The last commit's sequence number.
    pub version: u64,
    pub log: LogStats,
    /// Commits, and their time together.
    pub commits: u64,
    pub commit_time: Duration,
    /// The prepared-query cache's hits and misses.
    pub cache: (u64, u64),
    /// Runs on the device, where the dataset has one.
    pub device_runs: Option<u64>,
    /// Where the dataset is a cluster's.
    pub cluster: Option<ClusterReadings>,
}

/// What a cluster's process moved and holds, when scraped.
#[derive(Debug)]
pub struct ClusterReadings {
    pub exchanged: Exchanged,
    pub held: HeldBytes,
    pub flow: FlowControl,
    /// Whether every process of the cluster answers.
    pub answering: bool,
}

/// The label of a request path within its dataset (the path after `/NAME`): its route,
/// or `other`.
pub fn endpoint(path: &str) -> &'static str {
    match path {
        "/" | "" => "/",
        "/query" => "/query",
        "/sparql" => "/sparql",
        "/update" => "/update",
        "/status" => "/status",
        "/metrics" => "/metrics",
        _ if path == "/store" || path.starts_with("/store/") => "/store",
        "/$/ping" => "/$/ping",
        "/$/datasets" => "/$/datasets",
        _ if path.starts_with("/$/backup/") => "/$/backup",
        _ if path.starts_with("/$/compact/") => "/$/compact",
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
