//! A query not run before runs on its connection's thread on the planner's estimate, under
//! `Config::inline_guess_limit`: past it, the query is stopped and answered from a
//! blocking thread instead, with the same rows, and `/status` counts it. Once it has run,
//! the same text (cheap now) runs on the connection's thread without that limit.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::Duration;

use quiver_server::Config;
use quiver_store::Store;

fn store() -> Store {
    let ntriples: String = (0..200)
        .map(|i| format!("<http://e/s{i}> <http://e/p> <http://e/o{}> .\n", i % 7))
        .collect();
    let quads: Vec<oxrdf::Quad> = oxttl::NTriplesParser::new()
        .for_slice(ntriples.as_bytes())
        .map(|t| t.unwrap().in_graph(oxrdf::GraphName::DefaultGraph))
        .collect();
    quiver_loader::load_quads(quads, None).unwrap().0
}

/// A server of [`store`] with `config`, for as long as the returned runtime lives.
fn server(config: Config) -> (tokio::runtime::Runtime, SocketAddr) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(quiver_server::bind("127.0.0.1:0".parse().unwrap()))
        .unwrap();
    let address = listener.local_addr().unwrap();
    runtime.spawn(quiver_server::serve_store(
        listener,
        store(),
        config,
        std::future::pending(),
    ));
    (runtime, address)
}

/// GET `path` (already encoded); the status line and the body.
fn get(address: SocketAddr, path: &str, accept: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: test\r\nAccept: {accept}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// The subjects whose object is `o{n}`, as the server answers them in TSV, sorted.
fn subjects(address: SocketAddr, n: usize) -> Vec<String> {
    let query = format!("SELECT ?s WHERE {{ ?s <http://e/p> <http://e/o{n}> }}");
    let encoded: String = form_urlencoded::byte_serialize(query.as_bytes()).collect();
    let (status, body) = get(
        address,
        &format!("/query?query={encoded}"),
        "text/tab-separated-values",
    );
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    let mut rows: Vec<String> = body.lines().skip(1).map(str::to_string).collect();
    rows.sort();
    rows
}

fn expected(n: usize) -> Vec<String> {
    let mut rows: Vec<String> = (0..200)
        .filter(|i| i % 7 == n)
        .map(|i| format!("<http://e/s{i}>"))
        .collect();
    rows.sort();
    rows
}

fn moved(address: SocketAddr) -> u64 {
    let (status, body) = get(address, "/status", "application/json");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    let status: serde_json::Value = serde_json::from_str(&body).unwrap();
    status["queries_moved_to_workers"]
        .as_u64()
        .unwrap_or_else(|| panic!("no queries_moved_to_workers in {status}"))
}

#[test]
fn a_guess_past_its_limit_is_answered_from_a_worker_and_counted() {
    let (_runtime, address) = server(Config {
        inline_guess_limit: Duration::ZERO,
        ..Config::new(2)
    });
    assert_eq!(subjects(address, 3), expected(3));
    assert_eq!(moved(address), 1, "the first run of a text is a guess");
    assert_eq!(subjects(address, 3), expected(3));
    assert_eq!(moved(address), 1, "a text run before is not a guess");
    assert_eq!(subjects(address, 5), expected(5));
    assert_eq!(moved(address), 2);
}

#[test]
fn a_guess_within_its_limit_stays_on_its_thread() {
    // A limit no run reaches, even on a busy machine that takes the thread away for a few
    // milliseconds (the default's 2 ms would then move the query: not what this checks).
    let (_runtime, address) = server(Config {
        inline_guess_limit: Duration::from_secs(30),
        ..Config::new(2)
    });
    assert_eq!(subjects(address, 3), expected(3));
    assert_eq!(subjects(address, 5), expected(5));
    assert_eq!(moved(address), 0);
}
