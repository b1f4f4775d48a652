//! SERVICE over HTTP: the [`ServiceClient`] that sends a query's SERVICE patterns to remote
//! endpoints by the SPARQL 1.1 Protocol.
//!
//! The engine (`quiver-sparql`) builds the queries (the pattern with the bindings already
//! found as `VALUES` blocks) and this crate carries them: each is a form-encoded POST
//! asking for JSON, TSV or XML results, at most [`FederationConfig::parallel`] in flight
//! per SERVICE, over pooled keep-alive connections (hyper's client on a small runtime of
//! its own, so that a query thread, whatever runtime it belongs to, only waits on a
//! channel). The query thread polls its own limits while it waits: when the query's
//! deadline passes or it is cancelled, the calls in flight are aborted (their connections
//! dropped) and the query stops at once. Each call has its own timeout, a cap on the bytes
//! of its response, and charges those bytes to the query's memory budget as they arrive.
//!
//! Which endpoints may be called is the [`Allow`] policy: `quiver serve` calls none unless
//! started with `--allow-service` (any host) or `--allow-service HOST,…`; the CLI and the
//! Python package call any. [`FederationConfig::endpoints`] maps an endpoint IRI to the URL
//! actually called (tests serve `http://example.org/sparql` from a local port; a proxy).
//!
//! `https:` endpoints are called over TLS (rustls, with the Mozilla root certificates built
//! in, so no system certificate store is needed).

mod allow;
mod answer;
mod call;

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use hyper::Uri;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use oxrdf::NamedNode;
use quiver_sparql::context::QueryState;
use quiver_sparql::{ServiceClient, ServiceError, ServiceSolutions};

pub use allow::Allow;
pub use answer::{format_of, parse as parse_results, ACCEPT};

use call::{Call, HttpClient};

/// How often a waiting query thread checks its deadline and cancellation.
const POLL: Duration = Duration::from_millis(10);

/// How a [`HttpServiceClient`] calls endpoints.
#[derive(Debug, Clone)]
pub struct FederationConfig {
    /// The endpoints it may call.
    pub allow: Allow,
    /// How long one call may take, connection to last byte (the query's own deadline
    /// applies as well).
    pub timeout: Duration,
    /// The most bytes one response may have.
    pub max_response_bytes: usize,
    /// Bindings per `VALUES` block: a bind join makes one call per block.
    pub batch: usize,
    /// Calls of one SERVICE in flight at once.
    pub parallel: usize,
    /// Endpoint IRIs called at another URL: `(iri, url)`.
    pub endpoints: Vec<(String, String)>,
}

impl Default for FederationConfig {
    /// Any endpoint, 30 s per call, 64 MiB per response, 100 bindings per call, 4 calls
    /// at once.
    fn default() -> Self {
        Self {
            allow: Allow::Any,
            timeout: Duration::from_secs(30),
            max_response_bytes: 64 << 20,
            batch: quiver_sparql::service::DEFAULT_BATCH,
            parallel: 4,
            endpoints: Vec::new(),
        }
    }
}

/// SERVICE over the SPARQL 1.1 Protocol.
#[derive(Debug, Clone)]
pub struct HttpServiceClient {
    config: FederationConfig,
}

impl HttpServiceClient {
    pub fn new(config: FederationConfig) -> Self {
        Self { config }
    }

    pub fn config(&self) -> &FederationConfig {
        &self.config
    }

    /// The URL to call for `endpoint`, if the policy allows it.
    fn target(&self, endpoint: &NamedNode) -> Result<Uri, ServiceError> {
        let iri: Uri = endpoint
            .as_str()
            .parse()
            .map_err(|_| ServiceError::Failed("the endpoint is not an http: URL".into()))?;
        self.config
            .allow
            .check_uri(&iri)
            .map_err(ServiceError::Refused)?;
        let uri = match self
            .config
            .endpoints
            .iter()
            .find(|(from, _)| from == endpoint.as_str())
        {
            Some((_, to)) => to.parse().map_err(|e| {
                ServiceError::Failed(format!("the URL {to:?} it maps to is invalid: {e}"))
            })?,
            None => iri,
        };
        match uri.scheme_str() {
            Some("http" | "https") if uri.host().is_some() => Ok(uri),
            _ => Err(ServiceError::Failed(format!(
                "{uri} is not an http: or https: URL with a host"
            ))),
        }
    }
}

impl ServiceClient for HttpServiceClient {
    fn select(
        &self,
        endpoint: &NamedNode,
        queries: &[String],
        state: &QueryState,
    ) -> Result<Vec<ServiceSolutions>, ServiceError> {
        let uri = self.target(endpoint)?;
        let (runtime, client) = shared().map_err(ServiceError::Failed)?;
        let semaphore = Arc::new(tokio::sync::Semaphore::new(self.config.parallel.max(1)));
        let (sender, receiver) = mpsc::channel();
        let mut handles = Vec::with_capacity(queries.len());
        for (i, query) in queries.iter().enumerate() {
            let call = Call {
                uri: uri.clone(),
                query: query.clone(),
                timeout: self.config.timeout,
                max_bytes: self.config.max_response_bytes,
                allow: self.config.allow.clone(),
            };
            let (client, budget) = (client.clone(), Arc::clone(state.budget()));
            let (semaphore, sender) = (Arc::clone(&semaphore), sender.clone());
            handles.push(runtime.spawn(async move {
                let Ok(_permit) = semaphore.acquire_owned().await else {
                    return;
                };
                let _ = sender.send((i, call::run(client, call, budget).await));
            }));
        }
        drop(sender);
        // Aborting drops the calls' futures: their connections close, their bytes are
        // released.
        let abort = |error: ServiceError| {
            for handle in &handles {
                handle.abort();
            }
            error
        };
        let mut answers: Vec<Option<ServiceSolutions>> = vec![None; queries.len()];
        let mut held = state.budget().reservation();
        let mut left = queries.len();
        while left > 0 {
            match receiver.recv_timeout(POLL) {
                Ok((i, Ok(response))) => {
                    // The parsed rows take about twice the body's bytes.
                    held.try_grow(2 * response.body.len())
                        .map_err(|e| abort(e.into()))?;
                    let parsed = answer::parse(&response.body, &response.content_type)
                        .map_err(|e| abort(ServiceError::Failed(e)))?;
                    answers[i] = Some(parsed);
                    left -= 1;
                }
                Ok((_, Err(error))) => return Err(abort(error)),
                Err(RecvTimeoutError::Timeout) => {
                    state.check().map_err(|e| abort(e.into()))?;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(abort(ServiceError::Failed(
                        "a call ended without an answer".into(),
                    )))
                }
            }
        }
        Ok(answers.into_iter().flatten().collect())
    }

    fn batch_size(&self) -> usize {
        self.config.batch.max(1)
    }
}

/// The runtime the calls run on and the pooled client, made on first use and kept for the
/// process (a runtime may not be dropped inside another's tasks, where a server's last
/// reference to a client could go).
fn shared() -> Result<(&'static tokio::runtime::Runtime, HttpClient), String> {
    static SHARED: OnceLock<Result<(tokio::runtime::Runtime, HttpClient), String>> =
        OnceLock::new();
    let shared = SHARED.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("quiver-service")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the SERVICE runtime: {e}"))?;
        let client = {
            let _entered = runtime.enter();
            let mut connector = HttpConnector::new();
            connector.set_nodelay(true);
            // `https:` URLs go to the connector below, which speaks TLS to them.
            connector.enforce_http(false);
            let connector = hyper_rustls::HttpsConnectorBuilder::new()
                .with_provider_and_webpki_roots(rustls::crypto::ring::default_provider())
                .map_err(|e| format!("cannot set up TLS: {e}"))?
                .https_or_http()
                .enable_http1()
                .wrap_connector(connector);
            Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(30))
                .pool_timer(TokioTimer::new())
                .build(connector)
        };
        Ok((runtime, client))
    });
    match shared {
        Ok((runtime, client)) => Ok((runtime, client.clone())),
        Err(error) => Err(error.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_the_policy_and_the_map() {
        let client = HttpServiceClient::new(FederationConfig {
            allow: Allow::hosts("example.org"),
            endpoints: vec![(
                "http://example.org/sparql".into(),
                "http://127.0.0.1:9/query".into(),
            )],
            ..FederationConfig::default()
        });
        let mapped = client
            .target(&NamedNode::new_unchecked("http://example.org/sparql"))
            .unwrap();
        assert_eq!(mapped.to_string(), "http://127.0.0.1:9/query");
        let refused = client
            .target(&NamedNode::new_unchecked("http://example.com/sparql"))
            .unwrap_err();
        assert!(matches!(refused, ServiceError::Refused(_)), "{refused}");
        let tls = HttpServiceClient::new(FederationConfig::default())
            .target(&NamedNode::new_unchecked(
                "https://query.wikidata.org/sparql",
            ))
            .unwrap();
        assert_eq!(tls.scheme_str(), Some("https"));
        let other = HttpServiceClient::new(FederationConfig::default())
            .target(&NamedNode::new_unchecked("ftp://example.org/sparql"))
            .unwrap_err();
        assert!(other.to_string().contains("https:"), "{other}");
    }
}
