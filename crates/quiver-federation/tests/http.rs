//! SERVICE over real sockets: against a second Quiver server (the answers must equal the
//! same query over one store holding both graphs), and against endpoints that stall,
//! answer garbage, fail with 500, send too much or refuse the connection: each gives the
//! right error, or the SILENT empty solution, within the query's deadline.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_federation::{Allow, FederationConfig, HttpServiceClient};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::Store;

fn store(ntriples: &str) -> Store {
    let quads: Vec<oxrdf::Quad> = oxttl::NTriplesParser::new()
        .for_slice(ntriples.as_bytes())
        .map(|t| t.unwrap().in_graph(oxrdf::GraphName::DefaultGraph))
        .collect();
    quiver_loader::load_quads(quads, None).unwrap().0
}

/// The rows of `query` on `store`, sorted, each as its terms joined by spaces.
fn rows(store: &Store, query: &str, options: &ExecOptions) -> Result<Vec<String>, QueryError> {
    let prepared = prepare(store, query, &PrepareOptions::default())?;
    let QueryResults::Solutions(solutions) = prepared.execute(store, options)? else {
        panic!("not solutions")
    };
    let mut rows: Vec<String> = (0..solutions.len())
        .map(|r| {
            solutions
                .row(r)
                .iter()
                .map(|t| t.as_ref().map_or("UNDEF".into(), ToString::to_string))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    rows.sort();
    Ok(rows)
}

fn client(config: FederationConfig) -> ExecOptions {
    ExecOptions {
        service: Some(Arc::new(HttpServiceClient::new(config))),
        ..ExecOptions::default()
    }
}

/// A Quiver server of `store` on a free local port, for as long as the returned runtime
/// lives.
fn quiver_server(store: Store) -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(quiver_server::bind("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(quiver_server::serve_store(
        listener,
        store,
        quiver_server::Config::new(2),
        std::future::pending(),
    ));
    (runtime, address)
}

#[test]
fn a_bind_join_with_a_second_quiver_server_equals_one_store() {
    let local: String = (0..40)
        .map(|i| {
            format!(
                "<http://e/s{i}> <http://e/knows> <http://e/p{}> .\n",
                i % 13
            )
        })
        .collect();
    let remote: String = (0..13)
        .flat_map(|i| {
            [
                format!("<http://e/p{i}> <http://e/name> \"person {i}\" .\n"),
                format!("<http://e/p{i}> <http://e/age> \"{}\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n", 20 + i),
            ]
        })
        .collect();
    let (_server, address) = quiver_server(store(&remote));
    let endpoint = format!("http://{address}/query");
    let options = client(FederationConfig {
        batch: 5,
        ..FederationConfig::default()
    });
    let both = store(&format!("{local}{remote}"));
    for pattern in [
        "?p <http://e/name> ?n",
        "?p <http://e/name> ?n . ?p <http://e/age> ?a FILTER(?a > 25)",
        "OPTIONAL { ?p <http://e/age> ?a }",
    ] {
        let federated =
            format!("SELECT * {{ ?s <http://e/knows> ?p SERVICE <{endpoint}> {{ {pattern} }} }}");
        let whole = format!("SELECT * {{ ?s <http://e/knows> ?p . {pattern} }}");
        let ours = rows(&store(&local), &federated, &options)
            .unwrap_or_else(|e| panic!("{federated}: {e}"));
        assert!(!ours.is_empty(), "{federated}");
        assert_eq!(
            ours,
            rows(&both, &whole, &ExecOptions::default()).unwrap(),
            "{federated}"
        );
    }
}

/// How a fake endpoint misbehaves.
#[derive(Clone)]
enum Fake {
    /// 301 to this location.
    Redirect(String),
    /// Reads the request and never answers.
    Stall,
    /// 200 with a SPARQL JSON content type and a body that is not JSON.
    Garbage,
    /// 500 with a message.
    ServerError,
    /// 200 with `n` bytes of a valid-looking JSON body.
    Huge(usize),
}

/// A fake endpoint on a free port, answering every connection as `fake` says.
fn fake_endpoint(fake: Fake) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let fake = fake.clone();
            std::thread::spawn(move || {
                let mut buffer = [0u8; 65536];
                let _ = stream.read(&mut buffer);
                let reply = |head: &str, body: &[u8]| {
                    let mut out = format!(
                        "HTTP/1.1 {head}\r\nconnection: close\r\ncontent-length: {}\r\ncontent-type: application/sparql-results+json\r\n\r\n",
                        body.len()
                    )
                    .into_bytes();
                    out.extend_from_slice(body);
                    out
                };
                let response = match fake {
                    Fake::Redirect(location) => format!(
                        "HTTP/1.1 301 Moved Permanently\r\nlocation: {location}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
                    )
                    .into_bytes(),
                    Fake::Stall => {
                        std::thread::sleep(Duration::from_secs(20));
                        return;
                    }
                    Fake::Garbage => reply("200 OK", b"{\"head\": this is not json"),
                    Fake::ServerError => {
                        reply("500 Internal Server Error", b"the database is on fire")
                    }
                    Fake::Huge(n) => {
                        let mut body =
                            b"{\"head\":{\"vars\":[\"x\"]},\"results\":{\"bindings\":[".to_vec();
                        while body.len() < n {
                            body.extend_from_slice(
                                b"{\"x\":{\"type\":\"literal\",\"value\":\"abcdefghij\"}},",
                            );
                        }
                        body.extend_from_slice(b"{}]}}");
                        reply("200 OK", &body)
                    }
                };
                let _ = stream.write_all(&response);
            });
        }
    });
    format!("http://{address}/sparql")
}

const LOCAL: &str = "<http://e/a> <http://e/p> <http://e/b> .\n";

fn service_query(endpoint: &str, silent: bool) -> String {
    format!(
        "SELECT * {{ ?s <http://e/p> ?o SERVICE {}<{endpoint}> {{ ?o <http://e/q> ?x }} }}",
        if silent { "SILENT " } else { "" }
    )
}

#[test]
fn failing_endpoints_give_errors_or_the_silent_empty_solution() {
    let local = store(LOCAL);
    let config = FederationConfig {
        timeout: Duration::from_millis(300),
        max_response_bytes: 10_000,
        ..FederationConfig::default()
    };
    // Nothing listens on a port just freed.
    let closed = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/sparql", listener.local_addr().unwrap())
    };
    let cases = [
        (fake_endpoint(Fake::Stall), "no answer within 0.3 s"),
        (fake_endpoint(Fake::Garbage), "invalid SPARQL results"),
        (
            fake_endpoint(Fake::ServerError),
            "HTTP 500 Internal Server Error: the database is on fire",
        ),
        (
            fake_endpoint(Fake::Huge(50_000)),
            "larger than the cap of 10000 bytes",
        ),
        (closed, "onnect"),
    ];
    for (endpoint, expected) in cases {
        let started = Instant::now();
        let error = rows(
            &local,
            &service_query(&endpoint, false),
            &client(config.clone()),
        )
        .unwrap_err();
        assert!(
            matches!(&error, QueryError::Service { message, .. } if message.contains(expected)),
            "{endpoint}: {error}"
        );
        assert!(error.to_string().contains(&endpoint), "{error}");
        assert!(started.elapsed() < Duration::from_secs(5), "{endpoint}");
        // SILENT: the local row, unextended.
        let silent = rows(
            &local,
            &service_query(&endpoint, true),
            &client(config.clone()),
        )
        .unwrap();
        assert_eq!(
            silent,
            vec!["<http://e/a> <http://e/b> UNDEF"],
            "{endpoint}"
        );
    }
}

#[test]
fn the_querys_own_limits_stop_a_stalled_call_even_when_silent() {
    let local = store(LOCAL);
    let stall = fake_endpoint(Fake::Stall);
    let patient = FederationConfig::default(); // 30 s per call
    for silent in [false, true] {
        let started = Instant::now();
        let options = ExecOptions {
            timeout: Some(Duration::from_millis(200)),
            ..client(patient.clone())
        };
        let error = rows(&local, &service_query(&stall, silent), &options).unwrap_err();
        assert!(matches!(error, QueryError::Timeout(_)), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3));

        let cancel = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancel);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(150));
            flag.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let options = ExecOptions {
            cancel: Some(cancel),
            ..client(patient.clone())
        };
        let error = rows(&local, &service_query(&stall, silent), &options).unwrap_err();
        assert!(matches!(error, QueryError::Cancelled), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
    // A body within the byte cap but beyond the query's memory budget.
    let huge = fake_endpoint(Fake::Huge(400_000));
    let options = ExecOptions {
        max_memory: Some(100_000),
        ..client(FederationConfig::default())
    };
    let error = rows(&local, &service_query(&huge, true), &options).unwrap_err();
    assert!(matches!(error, QueryError::MemoryLimit { .. }), "{error}");
}

#[test]
fn redirects_are_followed_to_allowed_hosts_a_few_times() {
    let (_server, address) = quiver_server(store("<http://e/b> <http://e/q> \"found\" .\n"));
    let moved = fake_endpoint(Fake::Redirect(format!("http://{address}/query")));
    let answer = rows(
        &store(LOCAL),
        &service_query(&moved, false),
        &client(FederationConfig::default()),
    )
    .unwrap();
    assert_eq!(answer, vec!["<http://e/a> <http://e/b> \"found\""]);
    // A redirect to a host the allow-list does not admit is refused.
    let elsewhere = fake_endpoint(Fake::Redirect("http://example.com/sparql".into()));
    let config = FederationConfig {
        allow: Allow::hosts("127.0.0.1"),
        ..FederationConfig::default()
    };
    let error = rows(
        &store(LOCAL),
        &service_query(&elsewhere, false),
        &client(config),
    )
    .unwrap_err();
    assert!(matches!(error, QueryError::ServiceRefused(_)), "{error}");
    assert!(error.to_string().contains("example.com"), "{error}");
    // A loop ends after a few.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let looping = format!("http://{}/sparql", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let mut buffer = [0u8; 65536];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(
                b"HTTP/1.1 302 Found\r\nlocation: /sparql\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
            );
        }
    });
    let error = rows(
        &store(LOCAL),
        &service_query(&looping, false),
        &client(FederationConfig::default()),
    )
    .unwrap_err();
    assert!(error.to_string().contains("after 3 redirects"), "{error}");
}

#[test]
fn https_endpoints_are_called_over_tls() {
    // A plain-HTTP endpoint called as https: the TLS handshake fails, and says so.
    let plain = fake_endpoint(Fake::Garbage).replacen("http:", "https:", 1);
    let error = rows(
        &store(LOCAL),
        &service_query(&plain, false),
        &client(FederationConfig::default()),
    )
    .unwrap_err();
    let message = error.to_string().to_ascii_lowercase();
    assert!(matches!(error, QueryError::Service { .. }), "{error}");
    assert!(
        message.contains("tls") || message.contains("handshake") || message.contains("corrupt"),
        "{error}"
    );
}

#[test]
fn a_refused_endpoint_names_the_setting() {
    let local = store(LOCAL);
    let options = client(FederationConfig {
        allow: Allow::Nothing {
            hint: "start the server with --allow-service".into(),
        },
        ..FederationConfig::default()
    });
    let error = rows(
        &local,
        &service_query("http://127.0.0.1:9/sparql", false),
        &options,
    )
    .unwrap_err();
    assert!(matches!(error, QueryError::ServiceRefused(_)), "{error}");
    assert!(error.to_string().contains("--allow-service"), "{error}");
}
