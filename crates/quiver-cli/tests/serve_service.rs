//! SERVICE between `quiver serve` processes and from `quiver query`: a server calls no
//! endpoint until started with `--allow-service` (the refusal names the flag), an
//! allow-list admits only its hosts, the answers of a bind join across two servers equal
//! the answers over one store holding both graphs, and a stalled endpoint gives 502 within
//! `--service-timeout` (or, with SILENT, the local rows).

use crate::serve_support;

use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use serve_support::{quiver, small_store, Reply, Server};

const LOCAL: &str = "<http://e/a> <http://e/knows> <http://e/p1> .\n\
                     <http://e/b> <http://e/knows> <http://e/p2> .\n\
                     <http://e/c> <http://e/knows> <http://e/p9> .\n";
const REMOTE: &str = "<http://e/p1> <http://e/name> \"one\" .\n\
                      <http://e/p2> <http://e/name> \"two\" .\n\
                      <http://e/p3> <http://e/name> \"three\" .\n";

fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
}

fn federated(endpoint: &str, silent: bool) -> String {
    format!(
        "SELECT ?s ?n {{ ?s <http://e/knows> ?p SERVICE {}<{endpoint}> {{ ?p <http://e/name> ?n }} }} ORDER BY ?s",
        if silent { "SILENT " } else { "" }
    )
}

/// The CSV body's rows after the header.
fn csv_rows(reply: &Reply) -> Vec<String> {
    reply
        .text()
        .lines()
        .skip(1)
        .map(|l| l.trim().to_owned())
        .collect()
}

#[test]
fn servers_call_endpoints_only_when_allowed() {
    let remote = Server::start(&small_store("service-remote", REMOTE), &[]);
    let endpoint = remote.url("/query");
    let local_store = small_store("service-local", LOCAL);
    let query = federated(&endpoint, false);

    let closed = Server::start(&local_store, &[]);
    let reply = closed.query(&query, "text/csv");
    assert_status(&reply, 403);
    assert!(reply.text().contains("--allow-service"), "{}", reply.text());
    // SILENT: the refusal is one empty solution.
    let reply = closed.query(&federated(&endpoint, true), "text/csv");
    assert_status(&reply, 200);
    assert_eq!(csv_rows(&reply).len(), 3);

    let open = Server::start(&local_store, &["--allow-service=127.0.0.1"]);
    let reply = open.query(&query, "text/csv");
    assert_status(&reply, 200);
    assert_eq!(
        csv_rows(&reply),
        ["http://e/a,one", "http://e/b,two"],
        "{}",
        reply.text()
    );
    // The same answers as one store holding both graphs.
    let both = Server::start(
        &small_store("service-both", &format!("{LOCAL}{REMOTE}")),
        &[],
    );
    let whole = both.query(
        "SELECT ?s ?n { ?s <http://e/knows> ?p . ?p <http://e/name> ?n } ORDER BY ?s",
        "text/csv",
    );
    assert_eq!(csv_rows(&reply), csv_rows(&whole));

    let listed = Server::start(&local_store, &["--allow-service=example.org"]);
    let reply = listed.query(&query, "text/csv");
    assert_status(&reply, 403);
    assert!(reply.text().contains("allow-list"), "{}", reply.text());

    // The command line calls any endpoint unless told not to.
    let output = quiver()
        .args(["query", "--results-format", "csv", "--location"])
        .arg(&local_store)
        .args(["--query", &query])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).lines().count(),
        3,
        "{output:?}"
    );
    let output = quiver()
        .args(["query", "--allow-service=off", "--location"])
        .arg(&local_store)
        .args(["--query", &query])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("SERVICE refused"),
        "{output:?}"
    );
}

#[test]
fn a_stalled_endpoint_is_a_bad_gateway_within_the_service_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}/sparql", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut stream in listener.incoming().flatten() {
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            held.push(stream);
        }
    });
    let server = Server::start(
        &small_store("service-stall", LOCAL),
        &["--allow-service", "--service-timeout", "0.5"],
    );
    let started = Instant::now();
    let reply = server.query(&federated(&endpoint, false), "text/csv");
    assert_status(&reply, 502);
    assert!(
        reply.text().contains("no answer within 0.5 s"),
        "{}",
        reply.text()
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let reply = server.query(&federated(&endpoint, true), "text/csv");
    assert_status(&reply, 200);
    assert_eq!(csv_rows(&reply).len(), 3);
}
