//! `quiver serve` over HTTP, as a client sees it: the three SPARQL Protocol query
//! operations, content negotiation, every error status, the limits (timeout, result cap,
//! body size, overload, slow clients), cancellation, CORS, the page, `/status`, and
//! graceful shutdown. Each test starts the real binary on an ephemeral loopback port.

use crate::serve_support;

use std::time::{Duration, Instant};

use serve_support::{
    cli_query, encode, lubm_query, quiver, read_reply, send, store, Reply, Server,
};

fn lubm() -> &'static std::path::Path {
    store("http")
}

/// A cross product of the whole store with itself: runs until a limit stops it.
const ENDLESS: &str = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }";
/// Every triple: ~100k rows, ~20 MB of JSON.
const EVERYTHING: &str = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }";
const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
const DIRECT: (&str, &str) = ("Content-Type", "application/sparql-query");

fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
}

#[test]
fn get_and_both_posts_answer_like_quiver_query() {
    let server = Server::start(lubm(), &[]);
    let q5 = lubm_query("q5");
    let expected = cli_query(lubm(), &q5, "json");
    let form = format!("query={}", encode(&q5));
    for path in ["/query", "/sparql"] {
        let get = server.get(&format!("{path}?query={}", encode(&q5)), &[]);
        let post_form = server.post(path, &[FORM], form.as_bytes());
        let post_direct = server.post(path, &[DIRECT], q5.as_bytes());
        for reply in [get, post_form, post_direct] {
            assert_status(&reply, 200);
            assert_eq!(
                reply.header("content-type"),
                Some("application/sparql-results+json")
            );
            assert!(reply.complete);
            assert_eq!(reply.text(), String::from_utf8_lossy(&expected));
        }
    }
    let rows = server.query(&q5, "").json()["results"]["bindings"]
        .as_array()
        .map(Vec::len);
    assert_eq!(rows, Some(10), "LUBM-1 q5 has 10 research groups");
    assert!(server.logged("path=/query dataset=default status=200"));
}

#[test]
fn every_format_is_byte_identical_to_the_cli() {
    let server = Server::start(lubm(), &[]);
    let q4 = lubm_query("q4"); // IRIs and literals
    for (accept, name, content_type) in [
        (
            "application/sparql-results+json",
            "json",
            "application/sparql-results+json",
        ),
        (
            "application/sparql-results+xml",
            "xml",
            "application/sparql-results+xml",
        ),
        ("text/csv", "csv", "text/csv; charset=utf-8"),
        (
            "text/tab-separated-values",
            "tsv",
            "text/tab-separated-values; charset=utf-8",
        ),
    ] {
        let reply = server.query(&q4, accept);
        assert_status(&reply, 200);
        assert_eq!(reply.header("content-type"), Some(content_type));
        assert_eq!(reply.body, cli_query(lubm(), &q4, name), "format {name}");
        // format= overrides Accept.
        let path = format!("/query?query={}&format={name}", encode(&q4));
        let overridden = server.get(&path, &[("Accept", "image/png")]);
        assert_eq!(overridden.body, reply.body, "format={name}");
    }
    let construct = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
        CONSTRUCT { ?x ub:name ?n } WHERE { ?x a ub:ResearchGroup ; ub:subOrganizationOf ?d . \
        ?d ub:name ?n } LIMIT 7";
    for (accept, name, content_type) in [
        ("application/n-triples", "nt", "application/n-triples"),
        ("text/turtle", "ttl", "text/turtle; charset=utf-8"),
        ("application/rdf+xml", "rdfxml", "application/rdf+xml"),
    ] {
        let reply = server.query(construct, accept);
        assert_status(&reply, 200);
        assert_eq!(reply.header("content-type"), Some(content_type));
        assert_eq!(
            reply.body,
            cli_query(lubm(), construct, name),
            "format {name}"
        );
    }
    // Defaults: JSON for SELECT/ASK, Turtle for CONSTRUCT.
    assert_eq!(
        server.query(construct, "").header("content-type"),
        Some("text/turtle; charset=utf-8")
    );
    let ask = server.query("ASK { ?s ?p ?o }", "");
    assert_eq!(ask.json()["boolean"], serde_json::Value::Bool(true));
}

#[test]
fn content_negotiation_and_406() {
    let server = Server::start(lubm(), &[]);
    let q5 = lubm_query("q5");
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let reply = server.query(&q5, browser);
    assert_eq!(
        reply.header("content-type"),
        Some("application/sparql-results+xml")
    );
    let reply = server.query(&q5, "text/csv;q=0.5, text/tab-separated-values");
    assert!(reply
        .header("content-type")
        .unwrap()
        .starts_with("text/tab-separated-values"));
    // Nothing acceptable at all: 406 before running.
    let reply = server.query(&q5, "image/png");
    assert_status(&reply, 406);
    assert!(
        reply.text().contains("no acceptable format"),
        "{}",
        reply.text()
    );
    // Only graph formats for a SELECT, only tabular ones for a CONSTRUCT: 406.
    assert_status(&server.query(&q5, "text/turtle"), 406);
    assert_status(
        &server.query("CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1", "text/csv"),
        406,
    );
    let path = format!(
        "/query?query={}&format=csv",
        encode("CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1")
    );
    assert_status(&server.get(&path, &[]), 406);
    // An unknown format name is a client error.
    let path = format!("/query?query={}&format=yaml", encode(&q5));
    assert_status(&server.get(&path, &[]), 400);
    assert_status(&server.query(&q5, ""), 200);
}

#[test]
fn malformed_requests_get_readable_errors() {
    let server = Server::start(lubm(), &[]);
    let reply = server.query("SELECT ?x WHERE {\n  ?x ?y \n}", "");
    assert_status(&reply, 400);
    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    let message = reply.text();
    assert!(
        message.contains("invalid query") && message.contains("3:"),
        "{message}"
    );
    assert_status(&server.post("/query", &[DIRECT], b"SELEC * {}"), 400);
    // Without a query or update, a GET gets the service description; a POST an error.
    let described = server.get("/query", &[]);
    assert_status(&described, 200);
    assert!(
        described.text().contains("sd:Service"),
        "{}",
        described.text()
    );
    let missing = server.post("/query", &[FORM], b"default-graph-uri=http%3A%2F%2Fg");
    assert_status(&missing, 400);
    assert!(missing.text().contains("missing the query parameter"));
    assert_status(
        &server.get("/query?query=ASK%7B%7D&query=ASK%7B%7D", &[]),
        400,
    );
    let dataset = server.get(
        "/query?query=ASK%7B%7D&default-graph-uri=not%20an%20IRI",
        &[],
    );
    assert_status(&dataset, 400);
    assert!(dataset.text().contains("not an IRI"), "{}", dataset.text());
    // A dataset named by the request replaces the query's: the store has no graph
    // <http://g>, so its default graph is empty there.
    let any = b"ASK { ?s ?p ?o }";
    let whole = server.post(
        "/query",
        &[DIRECT, ("Accept", "application/sparql-results+json")],
        any,
    );
    assert_eq!(whole.json()["boolean"], true, "{}", whole.text());
    let named = server.post(
        "/query?default-graph-uri=http%3A%2F%2Fg",
        &[DIRECT, ("Accept", "application/sparql-results+json")],
        any,
    );
    assert_status(&named, 200);
    assert_eq!(named.json()["boolean"], false, "{}", named.text());
    assert_status(
        &server.post("/query", &[("Content-Type", "text/plain")], b"ASK {}"),
        415,
    );
    assert_status(&server.post("/query", &[], b"ASK {}"), 415);
    let latin = (
        "Content-Type",
        "application/sparql-query; charset=iso-8859-1",
    );
    assert_status(&server.post("/query", &[latin], b"ASK {}"), 415);
    assert_status(&server.post("/query", &[DIRECT], b"ASK { \xff }"), 400);
    assert_status(&server.get("/nowhere", &[]), 404);
    assert_status(
        &serve_support::request(&server.address, "PUT", "/query", &[], b"x"),
        405,
    );
    // SERVICE without --allow-service: refused, naming the flag.
    let refused = server.query("SELECT * { SERVICE <http://x> { ?s ?p ?o } }", "");
    assert_status(&refused, 403);
    assert!(
        refused.text().contains("--allow-service"),
        "{}",
        refused.text()
    );
    // Still serving.
    assert_status(&server.query("ASK {}", ""), 200);
    assert!(server.status()["queries_failed"].as_u64().unwrap() >= 10);
}

#[test]
fn updates_are_refused_with_403() {
    let server = Server::start(lubm(), &[]);
    let form = format!("update={}", encode("INSERT DATA { <a:a> <a:b> <a:c> }"));
    let replies = [
        server.post("/query", &[FORM], form.as_bytes()),
        server.post(
            "/sparql",
            &[("Content-Type", "application/sparql-update")],
            b"CLEAR ALL",
        ),
        server.post("/update", &[FORM], form.as_bytes()),
        server.get("/update", &[]),
        server.get(&format!("/query?{form}"), &[]),
    ];
    for reply in replies {
        assert_status(&reply, 403);
        assert!(reply.text().contains("read-only"), "{}", reply.text());
    }
    let triples = server.status()["triples"].as_u64();
    assert_eq!(triples, Some(100_543));
}

#[test]
fn large_bodies_get_413() {
    let server = Server::start(lubm(), &["--max-body-bytes", "1000"]);
    let padding = "#".repeat(2000);
    let query = format!("ASK {{}}\n{padding}");
    let reply = server.post("/query", &[DIRECT], query.as_bytes());
    assert_status(&reply, 413);
    assert!(
        reply.text().contains("larger than 1000 bytes"),
        "{}",
        reply.text()
    );
    // Chunked, so of unknown length: cut at the limit while reading.
    let chunked = format!("{:x}\r\n{query}\r\n0\r\n\r\n", query.len());
    let reply = server.post(
        "/query",
        &[DIRECT, ("Transfer-Encoding", "chunked")],
        chunked.as_bytes(),
    );
    assert_status(&reply, 413);
    // Announced as too large: refused before the body is read (the client waits for 100).
    let stream = send(
        &server.address,
        "POST",
        "/query",
        &[
            DIRECT,
            ("Expect", "100-continue"),
            ("Content-Length", "50000000"),
        ],
        b"",
    );
    assert_status(&read_reply(stream), 413);
    assert_status(&server.post("/query", &[DIRECT], b"ASK {}"), 200);
}

#[test]
fn timeouts_give_504_and_the_server_keeps_serving() {
    // No result cap: on a fast machine the cross product reaches the default cap of 10 M
    // rows (a 422) before 0.3 s.
    let server = Server::start(lubm(), &["--timeout", "0.3", "--max-results", "none"]);
    let started = Instant::now();
    let reply = server.query(ENDLESS, "");
    assert_status(&reply, 504);
    assert!(reply.text().contains("timed out"), "{}", reply.text());
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(server.wait_for("in_flight", 0, Duration::from_secs(5)));
    assert_status(&server.query(&lubm_query("q5"), ""), 200);
}

#[test]
fn result_caps_give_422() {
    let server = Server::start(lubm(), &["--max-results", "5"]);
    let reply = server.query(EVERYTHING, "");
    assert_status(&reply, 422);
    assert!(reply.text().contains("limit of 5 rows"), "{}", reply.text());
    let construct = server.query("CONSTRUCT WHERE { ?s ?p ?o }", "");
    assert_status(&construct, 422);
    let limited = server.query(&format!("{EVERYTHING} LIMIT 5"), "");
    assert_status(&limited, 200);
    assert_eq!(
        limited.json()["results"]["bindings"]
            .as_array()
            .map(Vec::len),
        Some(5)
    );
}

/// A large result streams in chunks; a small one of a query that ran on a worker (a scan
/// the planner cannot tell light) goes whole with its head, its length given.
#[test]
fn large_results_stream_in_chunks_and_small_ones_go_whole() {
    let server = Server::start(lubm(), &[]);
    let small = "SELECT ?s WHERE { ?s ?p ?o } ORDER BY ?s LIMIT 3";
    let reply = server.query(small, "text/tab-separated-values");
    assert_status(&reply, 200);
    assert_eq!(reply.header("transfer-encoding"), None);
    assert_eq!(
        reply.header("content-length"),
        Some(reply.body.len().to_string().as_str())
    );
    assert_eq!(reply.body, cli_query(lubm(), small, "tsv"));
    assert_eq!(reply.text().lines().count(), 3 + 1);
    let reply = server.query(EVERYTHING, "text/tab-separated-values");
    assert_status(&reply, 200);
    assert_eq!(reply.header("transfer-encoding"), Some("chunked"));
    assert!(reply.complete);
    assert_eq!(reply.body, cli_query(lubm(), EVERYTHING, "tsv"));
    assert_eq!(reply.text().lines().count(), 100_543 + 1);
}

/// One worker, one queue place: a client that stops reading holds the worker (the bounded
/// channel stops the serializer instead of buffering 20 MB); a light query is still answered
/// at once (it runs on the request's task); the next request the planner cannot tell light
/// queues, the one after gets 503; the send timeout cuts the stalled client off and the
/// queued one is served.
#[test]
fn overload_gives_503_and_stalled_clients_are_cut_off() {
    let server = Server::start(
        lubm(),
        &[
            "--threads",
            "1",
            "--queue",
            "1",
            "--queue-timeout",
            "30",
            "--send-timeout",
            "4",
        ],
    );
    let stalled = send(
        &server.address,
        "GET",
        &format!("/query?query={}", encode(EVERYTHING)),
        &[],
        b"",
    );
    assert!(server.wait_for("running", 1, Duration::from_secs(10)));
    // Never run before, planned as light: answered while the only worker is held.
    let light = "SELECT ?x WHERE { ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> <http://www.Department0.University0.edu/GraduateCourse0> }";
    let asked = Instant::now();
    let answered = server.query(light, "text/tab-separated-values");
    assert_status(&answered, 200);
    // Waiting for the worker would take the send timeout (4 s).
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(answered.body, cli_query(lubm(), light, "tsv"));
    assert!(answered.text().lines().count() > 1, "{}", answered.text());
    // A scan of every triple is not light: it waits for the worker.
    let heavy = "ASK { ?s ?p ?o }";
    let address = server.address.clone();
    let queued = std::thread::spawn(move || {
        serve_support::request(
            &address,
            "GET",
            &format!("/query?query={}", encode(heavy)),
            &[],
            b"",
        )
    });
    assert!(server.wait_for("in_flight", 2, Duration::from_secs(10)));
    let refused = server.query(heavy, "");
    assert_status(&refused, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(refused.text().contains("busy"), "{}", refused.text());
    // The queued request gets the worker once the stalled response is aborted.
    let started = Instant::now();
    let queued = queued.join().unwrap();
    assert_status(&queued, 200);
    assert!(started.elapsed() < Duration::from_secs(10));
    let cut = read_reply(stalled);
    assert_eq!(cut.status, 200);
    assert!(
        !cut.complete,
        "the stalled response must end without its final chunk"
    );
    assert!(
        cut.body.len() < 15_000_000,
        "cut after {} bytes",
        cut.body.len()
    );
    assert!(server.logged("response aborted"), "{}", server.log());
    let status = server.status();
    assert_eq!(status["queries_rejected"].as_u64(), Some(1));
    assert_status(&server.query(heavy, ""), 200);
}

#[test]
fn a_client_that_hangs_up_cancels_its_query() {
    let server = Server::start(lubm(), &["--timeout", "60"]);
    let stream = send(
        &server.address,
        "GET",
        &format!("/query?query={}", encode(ENDLESS)),
        &[],
        b"",
    );
    assert!(server.wait_for("running", 1, Duration::from_secs(10)));
    drop(stream);
    // Cancelled server-side long before the 60 s timeout.
    assert!(
        server.wait_for("in_flight", 0, Duration::from_secs(10)),
        "{}",
        server.log()
    );
    assert!(server.logged("query cancelled"), "{}", server.log());
    // Hanging up while the result streams stops the serializer too.
    let path = format!("/query?query={}&format=xml", encode(EVERYTHING));
    let mut stream = send(&server.address, "GET", &path, &[], b"");
    let mut start = [0u8; 4096];
    std::io::Read::read_exact(&mut stream, &mut start).unwrap();
    assert!(String::from_utf8_lossy(&start).starts_with("HTTP/1.1 200"));
    drop(stream);
    assert!(
        server.wait_for("in_flight", 0, Duration::from_secs(10)),
        "{}",
        server.log()
    );
    assert!(server.logged("response aborted"), "{}", server.log());
    assert_status(&server.query("ASK {}", ""), 200);
}

#[test]
fn the_page_and_status() {
    let server = Server::start(lubm(), &[]);
    let page = server.get("/", &[]);
    assert_status(&page, 200);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let html = page.text();
    assert!(html.contains("ui/yasgui.min.js") && html.contains("ui/quiver.js"));
    assert!(
        !html.contains("src=\"http") && !html.contains("href=\"http"),
        "no external assets"
    );
    let policy = page.header("content-security-policy").unwrap_or("");
    assert!(
        policy.contains("script-src 'self'") && policy.contains("connect-src 'self'"),
        "{policy}"
    );
    // The assets: embedded, compressed for clients that accept it, revalidated by ETag.
    let script = server.get("/ui/yasgui.min.js", &[("Accept-Encoding", "gzip")]);
    assert_status(&script, 200);
    assert_eq!(script.header("content-encoding"), Some("gzip"));
    let plain = server.get("/ui/yasgui.min.js", &[]);
    assert_eq!(plain.header("content-encoding"), None);
    assert!(plain.body.len() > 3 * script.body.len(), "compressed");
    let etag = plain.header("etag").unwrap().to_owned();
    assert_status(
        &server.get("/ui/yasgui.min.js", &[("If-None-Match", &etag)]),
        304,
    );
    assert_status(&server.get("/ui/nothing.js", &[]), 404);
    // The page's configuration: the store's prefixes and examples from its own classes.
    let config = server.get("/ui/config", &[]).json();
    assert_eq!(config["endpoint"], "query");
    assert_eq!(config["writable"], false);
    assert_eq!(
        config["prefixes"]["univ-bench"],
        "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
    );
    let examples = config["examples"].as_array().unwrap();
    assert!(examples.len() >= 4, "{config}");
    for example in examples {
        let query = example["query"].as_str().unwrap();
        assert_status(&server.query(query, "*/*"), 200);
    }
    // Completions: the store's classes and predicates starting with what was typed.
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    let classes = server
        .get(
            &format!("/ui/complete?type=class&q={}", encode(&format!("{ub}Grad"))),
            &[],
        )
        .json();
    let classes: Vec<&str> = classes
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(classes.len(), 2, "{classes:?}");
    assert!(
        classes.contains(&&*format!("{ub}GraduateStudent"))
            && classes.contains(&&*format!("{ub}GraduateCourse"))
    );
    let predicates = server
        .get(
            &format!(
                "/ui/complete?type=property&q={}",
                encode(&format!("{ub}adv"))
            ),
            &[],
        )
        .json();
    assert_eq!(predicates, serde_json::json!([format!("{ub}advisor")]));
    assert_status(&server.get("/ui/complete?type=other", &[]), 400);
    // EXPLAIN over the protocol: the plan with estimated and actual rows.
    let explained = server.get(
        &format!("/query?explain=true&query={}", encode(&lubm_query("q5"))),
        &[],
    );
    assert_status(&explained, 200);
    let plan = explained.text();
    assert!(
        plan.contains("estimated") && plan.contains("actual"),
        "{plan}"
    );
    assert!(
        plan.contains("answered 10 rows, reading the asserted triples"),
        "{plan}"
    );
    assert_status(
        &server.get("/query?explain=maybe&query=ASK%7B%7D", &[]),
        400,
    );
    let served = server.status()["queries_served"].as_u64().unwrap();
    server.query("ASK {}", "");
    let status = server.status();
    let info = quiver()
        .args(["info", "--json", "--location"])
        .arg(lubm())
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(status["triples"], info["triples"]);
    assert_eq!(status["terms"], info["terms"]);
    assert_eq!(status["queries_served"].as_u64(), Some(served + 1));
    assert_eq!(status["in_flight"].as_u64(), Some(0));
    assert!(status["uptime_seconds"].as_f64().unwrap() > 0.0);
    // No CORS header unless asked for.
    assert_eq!(
        server
            .query("ASK {}", "")
            .header("access-control-allow-origin"),
        None
    );
}

#[test]
fn cors_when_configured() {
    let server = Server::start(lubm(), &["--cors", "https://example.org"]);
    let reply = server.query("ASK {}", "");
    assert_eq!(
        reply.header("access-control-allow-origin"),
        Some("https://example.org")
    );
    let preflight = serve_support::request(
        &server.address,
        "OPTIONS",
        "/query",
        &[
            ("Origin", "https://example.org"),
            ("Access-Control-Request-Method", "POST"),
        ],
        b"",
    );
    assert_status(&preflight, 204);
    assert!(preflight
        .header("access-control-allow-methods")
        .unwrap()
        .contains("POST"));
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://example.org")
    );
}

#[test]
fn sigterm_finishes_or_cancels_in_flight_queries_then_exits() {
    // Idle: exits at once.
    let mut idle = Server::start(lubm(), &[]);
    let status = idle
        .terminate(Duration::from_secs(10))
        .expect("exits after SIGTERM");
    assert!(status.success());
    assert!(idle.logged("server stopped"));

    // A stalled client: cancelled after the grace period (`--shutdown-grace`; without a
    // query timeout, where the query's own deadline would end the stalled response first).
    let mut busy = Server::start(
        lubm(),
        &[
            "--timeout",
            "none",
            "--send-timeout",
            "120",
            "--shutdown-grace",
            "2",
        ],
    );
    let stalled = send(
        &busy.address,
        "GET",
        &format!("/query?query={}", encode(EVERYTHING)),
        &[],
        b"",
    );
    assert!(busy.wait_for("running", 1, Duration::from_secs(10)));
    let started = Instant::now();
    let status = busy
        .terminate(Duration::from_secs(25))
        .expect("exits after SIGTERM");
    assert!(status.success(), "{}", busy.log());
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "the grace period is honoured"
    );
    assert!(busy.logged("cancelled in-flight queries"), "{}", busy.log());
    // The serializer stopped (the stalled socket itself is closed when the process exits).
    assert!(
        busy.logged("response aborted error=query cancelled"),
        "{}",
        busy.log()
    );
    assert!(!read_reply(stalled).complete);
}

#[test]
fn bad_arguments() {
    let missing = quiver()
        .args([
            "serve",
            "--location",
            "/nonexistent/quiver-store",
            "--bind",
            "127.0.0.1:0",
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot open the store"));
    let bind = quiver()
        .args(["serve", "--location", "x", "--bind", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(bind.status.code(), Some(2));
    let timeout = quiver()
        .arg("serve")
        .arg("--location")
        .arg(lubm())
        .args(["--bind", "127.0.0.1:0", "--timeout", "-1"])
        .output()
        .unwrap();
    assert_eq!(timeout.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&timeout.stderr).contains("--timeout"));
}

/// The query's `--timeout` covers sending its results: a client that stops reading is cut
/// off at the query's deadline even when the send timeout is longer.
#[test]
fn the_query_deadline_covers_sending_the_results() {
    let server = Server::start(
        lubm(),
        &["--threads", "1", "--timeout", "2", "--send-timeout", "120"],
    );
    let started = Instant::now();
    let stalled = send(
        &server.address,
        "GET",
        &format!("/query?query={}", encode(EVERYTHING)),
        &[],
        b"",
    );
    assert!(
        server.logged("while sending its results"),
        "{}",
        server.log()
    );
    assert!(started.elapsed() < Duration::from_secs(12));
    let cut = read_reply(stalled);
    assert_eq!(cut.status, 200);
    assert!(
        !cut.complete,
        "the response must end without its final chunk"
    );
    // The worker is free again.
    assert_status(&server.query("ASK {}", ""), 200);
}

/// The value of the sample `name` (with its labels, as written) in a metrics exposition.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|value| value.trim().parse().ok())
}

#[test]
fn metrics_count_requests_and_read_the_store_and_memory_pool() {
    let server = Server::start(lubm(), &["--max-memory", "1M"]);
    let q5 = lubm_query("q5");
    for _ in 0..3 {
        assert_status(&server.query(&q5, "text/csv"), 200);
    }
    let refused = server.post("/query", &[DIRECT], ENDLESS.as_bytes());
    assert_status(&refused, 507);
    assert_status(&server.get("/query?query=", &[]), 400);
    // A refused query's worker lets go of its ticket just after the response head.
    assert!(server.wait_for("in_flight", 0, Duration::from_secs(10)));
    let reply = server.get("/metrics", &[]);
    assert_status(&reply, 200);
    assert!(reply
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/openmetrics-text")));
    let text = reply.text();
    assert!(text.trim_end().ends_with("# EOF"), "{text}");
    let count = |labels: &str| sample(&text, &format!("quiver_http_requests_total{{{labels}}}"));
    assert_eq!(
        count("dataset=\"default\",endpoint=\"/query\",status=\"200\""),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        count("dataset=\"default\",endpoint=\"/query\",status=\"507\""),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        count("dataset=\"default\",endpoint=\"/query\",status=\"400\""),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(
            &text,
            "quiver_http_request_duration_seconds_count{endpoint=\"/query\"}"
        ),
        Some(5.0),
        "{text}"
    );
    let status = server.status();
    assert_eq!(
        sample(&text, "quiver_store_triples{dataset=\"default\"}"),
        status["triples"].as_f64(),
        "{text}"
    );
    assert_eq!(
        sample(&text, "quiver_store_terms{dataset=\"default\"}"),
        status["terms"].as_f64()
    );
    assert_eq!(
        sample(&text, "quiver_memory_pool_limit_bytes"),
        Some(1048576.0)
    );
    assert_eq!(sample(&text, "quiver_memory_pool_used_bytes"), Some(0.0));
    assert_eq!(
        sample(&text, "quiver_memory_pool_refusals"),
        Some(1.0),
        "{text}"
    );
    assert!(sample(&text, "quiver_memory_pool_peak_bytes").unwrap() > 0.0);
    assert_eq!(sample(&text, "quiver_queries_in_flight"), Some(0.0));
}
