//! The remote endpoints of the SERVICE tests: each `qt:serviceData` served by a Quiver
//! server (the one `quiver serve` runs) on a local port, and the SERVICE client the test's
//! query runs with, which calls those servers at the endpoint IRIs the test names
//! (`http://example1.org/sparql` …) and refuses every other host. The servers' own queries
//! use the same client, so a SERVICE nested in a remote pattern reaches its endpoint too.

use std::sync::Arc;

use oxrdf::GraphName;
use quiver_federation::{Allow, FederationConfig, HttpServiceClient};
use quiver_sparql::ServiceClient;

use crate::files::read_quads;

/// The servers of one test, stopped when dropped.
pub struct Endpoints {
    runtime: Option<tokio::runtime::Runtime>,
    pub client: Arc<dyn ServiceClient>,
}

impl Endpoints {
    /// Serves each `(endpoint IRI, data files)` on a free local port.
    pub fn start(service_data: &[(String, Vec<String>)]) -> Result<Self, String> {
        let hosts: Vec<&str> = service_data.iter().map(|(iri, _)| host_of(iri)).collect();
        if service_data.is_empty() {
            return Ok(Self {
                runtime: None,
                client: client(Vec::new(), Vec::new()),
            });
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the endpoints' runtime: {e}"))?;
        let mut listeners = Vec::new();
        let mut map = Vec::new();
        for (iri, _) in service_data {
            let listener = runtime
                .block_on(quiver_server::bind(([127, 0, 0, 1], 0).into()))
                .map_err(|e| e.to_string())?;
            let address = listener.local_addr().map_err(|e| e.to_string())?;
            map.push((iri.clone(), format!("http://{address}/query")));
            listeners.push(listener);
        }
        let client = client(hosts, map);
        for ((_, files), listener) in service_data.iter().zip(listeners) {
            let mut quads = Vec::new();
            for (i, file) in files.iter().enumerate() {
                quads.extend(read_quads(
                    file,
                    &GraphName::DefaultGraph,
                    &format!("e{i}_"),
                )?);
            }
            let store = quiver_loader::load_quads(quads, None)
                .map_err(|e| e.to_string())?
                .0;
            let mut config = quiver_server::Config::new(2);
            config.service = Some(Arc::clone(&client));
            runtime.spawn(quiver_server::serve_store(
                listener,
                store,
                config,
                std::future::pending(),
            ));
        }
        Ok(Self {
            runtime: Some(runtime),
            client,
        })
    }
}

impl Drop for Endpoints {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// The host of an `http://host[:port]/…` IRI.
fn host_of(iri: &str) -> &str {
    let rest = iri.split_once("://").map_or(iri, |(_, rest)| rest);
    rest.split(['/', ':', '?', '#']).next().unwrap_or(rest)
}

/// A client that calls only `hosts`, at the URLs of `map`.
fn client(hosts: Vec<&str>, map: Vec<(String, String)>) -> Arc<dyn ServiceClient> {
    Arc::new(HttpServiceClient::new(FederationConfig {
        allow: Allow::hosts(&hosts.join(",")),
        endpoints: map,
        ..FederationConfig::default()
    }))
}
