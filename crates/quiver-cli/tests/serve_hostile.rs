//! Hostile requests against a real `quiver serve` on loopback, started with small limits
//! (`--timeout 5 --max-memory 256M`, two workers). For each request: the status it must
//! get (a refusal, or 200 with the answer computed here when the engine legitimately
//! answers within the limits), that it arrives within the timeout plus a margin, that a
//! second client's light query is answered correctly meanwhile, and that the server's
//! peak resident memory stays under the memory limit plus a fixed margin.
//!
//! Stores: LUBM-1, and a generated dense graph (every vertex with a few out-edges, plus
//! literals of long runs of `a` for the regular expressions).
//!
//! The tests run one at a time (a lock): they measure a server process each and share two
//! cores.

use crate::serve_support;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serve_support::{cli_query, encode, quiver, request, store, Reply, Server};

/// The per-query limits the servers run under.
const TIMEOUT_SECONDS: u64 = 5;
const MAX_MEMORY: u64 = 256 << 20;
/// A refusal or answer comes within the timeout plus this.
const LATENESS: Duration = Duration::from_secs(5);
/// Peak resident memory may exceed the query's budget by this much: the store, the
/// runtime, result buffers and the allocator's slack.
const MEMORY_MARGIN: u64 = 512 << 20;
/// The server's address space is capped at this, so that a query escaping its budget
/// kills the server (and fails its test) instead of the machine.
const ADDRESS_SPACE: u64 = 4 << 30;

const BODY_LIMIT: usize = 1 << 20;

/// Vertices and out-degree of the dense graph.
const VERTICES: usize = 1500;
const DEGREE: usize = 8;
/// Literals of `a`s: how many, and how long.
const RUNS: usize = 40;
const RUN_LENGTH: usize = 5000;

fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn lubm() -> &'static Path {
    store("hostile")
}

fn dense_edges() -> Vec<(usize, usize)> {
    // A fixed pseudo-random graph: vertex v points at DEGREE others (no self-loops).
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut edges = Vec::new();
    for v in 0..VERTICES {
        let mut targets: Vec<usize> = Vec::new();
        while targets.len() < DEGREE {
            let t = (next() % VERTICES as u64) as usize;
            if t != v && !targets.contains(&t) {
                targets.push(t);
            }
        }
        edges.extend(targets.into_iter().map(|t| (v, t)));
    }
    edges
}

/// Literal `i` of the regular-expression tests: even ones end in `a` (they match
/// `(a+)+$`), odd ones in `b` (they do not, the case that makes a backtracking matcher
/// take exponential time).
fn run_literal(i: usize) -> String {
    let last = if i.is_multiple_of(2) { 'a' } else { 'b' };
    format!("{}{last}", "a".repeat(RUN_LENGTH))
}

fn dense() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-hostile-dense");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::new();
        for (s, o) in dense_edges() {
            text.push_str(&format!("<http://e/v{s}> <http://e/p> <http://e/v{o}> .\n"));
        }
        for i in 0..RUNS {
            text.push_str(&format!(
                "<http://e/r{i}> <http://e/name> \"{}\" .\n",
                run_literal(i)
            ));
        }
        let file = dir.join("dense.nt");
        std::fs::write(&file, text).unwrap();
        let location = dir.join("store");
        let output = quiver()
            .args(["load", "--location"])
            .arg(&location)
            .arg(&file)
            .output()
            .expect("quiver load runs");
        assert!(output.status.success(), "load failed: {output:?}");
        location
    })
}

/// A server on `location` with the tests' limits, its address space capped.
fn start(location: &Path, extra: &[&str]) -> Server {
    let timeout = TIMEOUT_SECONDS.to_string();
    let memory = MAX_MEMORY.to_string();
    let mut args = vec!["--threads", "2", "--timeout", &timeout];
    if !extra.contains(&"--max-memory") {
        args.extend_from_slice(&["--max-memory", &memory]);
    }
    args.extend_from_slice(extra);
    Server::start_capped(location, &args, ADDRESS_SPACE)
}

/// A query that answers at once, with the answer it must give.
struct Light {
    query: String,
    expected: Vec<u8>,
}

impl Light {
    fn lubm() -> Light {
        let query = "SELECT ?d WHERE { ?d a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#Department> } ORDER BY ?d";
        Light {
            query: query.into(),
            expected: cli_query(lubm(), query, "csv"),
        }
    }

    /// The out-neighbours of v0, known from the generated edges.
    fn dense() -> Light {
        let mut targets: Vec<usize> = dense_edges()
            .into_iter()
            .filter(|&(s, _)| s == 0)
            .map(|(_, o)| o)
            .collect();
        targets.sort_by_key(|t| format!("http://e/v{t}"));
        let mut expected = String::from("o\r\n");
        for t in targets {
            expected.push_str(&format!("http://e/v{t}\r\n"));
        }
        Light {
            query: "SELECT ?o WHERE { <http://e/v0> <http://e/p> ?o } ORDER BY ?o".into(),
            expected: expected.into_bytes(),
        }
    }

    fn check(&self, server: &Server) {
        let started = Instant::now();
        let reply = server.query(&self.query, "text/csv");
        assert_eq!(reply.status, 200, "light query: {}", reply.text());
        assert_eq!(reply.text(), String::from_utf8_lossy(&self.expected));
        assert!(
            started.elapsed() < Duration::from_secs(TIMEOUT_SECONDS),
            "the light query waited {:?}",
            started.elapsed()
        );
    }
}

/// `body` sent to `address` as `application/sparql-query`, CSV asked for.
fn post_query(address: &str, body: &[u8]) -> Reply {
    request(
        address,
        "POST",
        "/query",
        &[
            ("Content-Type", "application/sparql-query"),
            ("Accept", "text/csv"),
        ],
        body,
    )
}

/// Sends `body` as `application/sparql-query` from another thread, answers the light
/// query meanwhile, and returns the hostile reply and how long it took.
fn hostile(server: &Server, light: &Light, body: Vec<u8>) -> (Reply, Duration) {
    let address = server.address.clone();
    let started = Instant::now();
    let sender = std::thread::spawn(move || (post_query(&address, &body), started.elapsed()));
    // Give the hostile query time to start, then ask the light one, twice.
    std::thread::sleep(Duration::from_millis(300));
    light.check(server);
    light.check(server);
    let (reply, took) = sender.join().expect("the hostile client");
    assert!(
        took < Duration::from_secs(TIMEOUT_SECONDS) + LATENESS,
        "answered after {took:?}"
    );
    light.check(server);
    (reply, took)
}

/// The server's peak resident memory stays under the budget plus the margin.
fn assert_memory_bounded(server: &Server) {
    let peak = server.peak_rss().expect("the server's /proc status");
    assert!(
        peak < MAX_MEMORY + MEMORY_MARGIN,
        "peak RSS {} MiB over the {} MiB budget plus {} MiB",
        peak >> 20,
        MAX_MEMORY >> 20,
        MEMORY_MARGIN >> 20
    );
}

fn assert_status(reply: &Reply, status: u16, needle: &str) {
    assert_eq!(reply.status, status, "{}", reply.text());
    assert!(
        reply.text().contains(needle),
        "{needle:?} not in {}",
        reply.text()
    );
}

/// The number of data rows of a CSV result.
fn csv_rows(reply: &Reply) -> usize {
    reply.text().lines().count().saturating_sub(1)
}

#[test]
fn a_cross_product_of_everything_is_stopped_by_the_memory_limit() {
    let _one = one_at_a_time();
    // Without a result cap, so that the memory budget is what stops it.
    let server = start(lubm(), &["--max-results", "none"]);
    let light = Light::lubm();
    let (reply, _) = hostile(
        &server,
        &light,
        b"SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }".to_vec(),
    );
    assert_status(&reply, 507, "memory limit");
    assert_memory_bounded(&server);
}

#[test]
fn a_cross_product_of_everything_is_stopped_by_the_default_result_cap() {
    let _one = one_at_a_time();
    // A budget that holds the capped rows, so that the cap is what stops it.
    let server = start(lubm(), &["--max-memory", "1G"]);
    let light = Light::lubm();
    let (reply, _) = hostile(
        &server,
        &light,
        b"SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }".to_vec(),
    );
    assert_status(&reply, 422, "limit of 10000000 rows");
}

#[test]
fn a_megabyte_of_nested_parentheses_is_a_syntax_error() {
    let _one = one_at_a_time();
    let server = start(lubm(), &[]);
    let light = Light::lubm();
    let head = "SELECT * WHERE {\n  ?s ?p ?o FILTER";
    let body = format!("{head}{}", "(".repeat(BODY_LIMIT - head.len()));
    let (reply, _) = hostile(&server, &light, body.into_bytes());
    // The group's brace is one level; the 128th parenthesis is column 18 + 127 of line 2.
    assert_status(&reply, 400, "error at 2:145: nesting deeper than 128");
    assert_memory_bounded(&server);
}

#[test]
fn a_megabyte_of_nested_braces_is_a_syntax_error() {
    let _one = one_at_a_time();
    let server = start(lubm(), &[]);
    let light = Light::lubm();
    let body = format!("ASK {}", "{".repeat(BODY_LIMIT - 4));
    let (reply, _) = hostile(&server, &light, body.into_bytes());
    assert_status(&reply, 400, "error at 1:133: nesting deeper than 128");
    // The same as a GET of a URL-encoded query.
    let nested = format!("SELECT * WHERE {{ {} }}", "{".repeat(10_000));
    let reply = server.get(&format!("/query?query={}", encode(&nested)), &[]);
    assert_status(&reply, 400, "error at 1:145: nesting deeper than 128");
    assert_memory_bounded(&server);
}

#[test]
fn a_sequence_of_twenty_doubled_steps_is_refused() {
    let _one = one_at_a_time();
    let server = start(dense(), &["--max-results", "1000000"]);
    let light = Light::dense();
    let step = "(<http://e/p>|<http://e/p>)";
    let path = vec![step; 20].join("/");
    let body = format!("SELECT * WHERE {{ ?s {path} ?o }}");
    let (reply, _) = hostile(&server, &light, body.into_bytes());
    // Bag semantics: 16^20 walks from every vertex; no limit lets that through.
    assert!(
        [422, 504, 507].contains(&reply.status),
        "{}: {}",
        reply.status,
        reply.text()
    );
    assert_memory_bounded(&server);
}

#[test]
fn a_closure_over_both_directions_of_a_dense_graph_hits_the_result_cap() {
    let _one = one_at_a_time();
    let server = start(dense(), &["--max-results", "1000000"]);
    let light = Light::dense();
    let body = "SELECT * WHERE { ?s (<http://e/p>|^<http://e/p>)* ?o }";
    let (reply, _) = hostile(&server, &light, body.as_bytes().to_vec());
    // The graph is connected: every pair of its vertices, 1500², over the cap of 10^6.
    assert_status(&reply, 422, "exceeds the limit of 1000000 rows");
    assert_memory_bounded(&server);
}

fn everything_under_a_small_budget(query: &str) {
    let _one = one_at_a_time();
    // 1 MiB: less than the table of LUBM-1's 100,543 triples (three 4-byte columns).
    let server = Server::start_capped(
        lubm(),
        &["--threads", "2", "--timeout", "5", "--max-memory", "1M"],
        ADDRESS_SPACE,
    );
    let light = Light::lubm();
    let (reply, _) = hostile(&server, &light, query.as_bytes().to_vec());
    assert_status(&reply, 507, "memory limit");
    assert_memory_bounded(&server);
}

#[test]
fn order_by_over_every_triple_is_stopped_by_the_memory_limit() {
    everything_under_a_small_budget("SELECT * WHERE { ?s ?p ?o } ORDER BY ?o ?s ?p");
}

#[test]
fn group_by_over_every_triple_is_stopped_by_the_memory_limit() {
    everything_under_a_small_budget(
        "SELECT ?s ?p ?o (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s ?p ?o",
    );
}

#[test]
fn distinct_over_every_triple_is_stopped_by_the_memory_limit() {
    everything_under_a_small_budget("SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o }");
}

#[test]
fn a_backtracking_shaped_regex_answers_in_linear_time() {
    let _one = one_at_a_time();
    let server = start(dense(), &[]);
    let light = Light::dense();
    let body = "SELECT ?r WHERE { ?r <http://e/name> ?o FILTER REGEX(?o, \"(a+)+$\") }";
    let (reply, _) = hostile(&server, &light, body.as_bytes().to_vec());
    assert_eq!(reply.status, 200, "{}", reply.text());
    let mut rows: Vec<String> = reply.text().lines().skip(1).map(str::to_owned).collect();
    rows.sort();
    let mut expected: Vec<String> = (0..RUNS)
        .filter(|i| run_literal(*i).ends_with('a'))
        .map(|i| format!("http://e/r{i}"))
        .collect();
    expected.sort();
    assert_eq!(rows, expected);
    assert_memory_bounded(&server);
}

#[test]
fn a_huge_regex_is_refused_by_its_size_limit() {
    let _one = one_at_a_time();
    let server = start(dense(), &[]);
    let light = Light::dense();
    let body = "SELECT ?r WHERE { ?r <http://e/name> ?o FILTER REGEX(?o, \"a{1000}{1000}\") }";
    let (reply, took) = hostile(&server, &light, body.as_bytes().to_vec());
    // A pattern the regex engine will not compile is an error for every row: no match.
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(csv_rows(&reply), 0, "{}", reply.text());
    assert!(took < Duration::from_secs(TIMEOUT_SECONDS), "{took:?}");
    assert_memory_bounded(&server);
}

#[test]
fn a_values_block_as_big_as_the_body_limit_is_answered() {
    let _one = one_at_a_time();
    let server = start(lubm(), &[]);
    let light = Light::lubm();
    let head = "SELECT (COUNT(*) AS ?n) WHERE { VALUES ?x {";
    let mut body = String::from(head);
    let mut values = 0;
    loop {
        let value = format!(" <http://e/x{values}>");
        if body.len() + value.len() + 4 > BODY_LIMIT {
            break;
        }
        body.push_str(&value);
        values += 1;
    }
    body.push_str(" } }");
    assert!(body.len() <= BODY_LIMIT);
    let (reply, _) = hostile(&server, &light, body.into_bytes());
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.text(), format!("n\r\n{values}\r\n"));
    assert_memory_bounded(&server);
}

#[test]
fn a_body_over_the_limit_is_refused_before_it_is_read() {
    let _one = one_at_a_time();
    let server = start(lubm(), &[]);
    let light = Light::lubm();
    let body = format!("ASK {{ FILTER(\"{}\") }}", "x".repeat(2 * BODY_LIMIT));
    let (reply, took) = hostile(&server, &light, body.into_bytes());
    assert_status(&reply, 413, "larger than 1048576 bytes");
    assert!(took < Duration::from_secs(TIMEOUT_SECONDS), "{took:?}");
    let status = server.status();
    assert_eq!(status["queries_failed"], 1, "{status}");
    assert_memory_bounded(&server);
}

/// Queries that each want far more than the pool: cross products, with DISTINCT, ORDER
/// BY, GROUP BY and COUNT over them, and closures over both directions of every
/// predicate (each start reaches most of LUBM-1).
const HEAVY: [&str; 8] = [
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
    "SELECT DISTINCT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?f ?c",
    "SELECT ?a (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f } GROUP BY ?a ?d",
    "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }",
    "SELECT ?x ?y WHERE { ?x (!<http://x>|^!<http://x>)+ ?y }",
    "SELECT ?x ?y WHERE { ?x (!<http://x>|^!<http://x>)* ?y }",
];

/// The pool the concurrent test's server shares among its eight workers.
const POOL: u64 = 1 << 30;

#[test]
fn eight_hostile_queries_at_once_share_one_memory_pool() {
    let _one = one_at_a_time();
    let pool = POOL.to_string();
    let server = Server::start_capped(
        lubm(),
        &["--threads", "8", "--timeout", "60", "--max-memory", &pool],
        3 * ADDRESS_SPACE,
    );
    let light = Light::lubm();
    light.check(&server);
    let senders: Vec<_> = HEAVY
        .iter()
        .map(|query| {
            let address = server.address.clone();
            let body = query.as_bytes().to_vec();
            std::thread::spawn(move || post_query(&address, &body))
        })
        .collect();
    // The ninth client: the light query, again and again, while the heavy ones run.
    let mut answered = 0;
    let mut worst = Duration::ZERO;
    while senders.iter().any(|sender| !sender.is_finished()) {
        let started = Instant::now();
        light.check(&server);
        worst = worst.max(started.elapsed());
        answered += 1;
    }
    for (query, sender) in HEAVY.iter().zip(senders) {
        let reply = sender.join().expect("a heavy client");
        let text = reply.text();
        assert!(
            (reply.status == 507 && text.contains("memory limit"))
                || (reply.status == 422 && text.contains("exceeds the limit")),
            "{query}: {} {text}",
            reply.status
        );
    }
    light.check(&server);
    assert!(answered > 8, "only {answered} light answers");
    let peak = server.peak_rss().expect("the server's /proc status");
    assert!(
        peak < POOL + MEMORY_MARGIN,
        "peak RSS {} MiB over the {} MiB pool plus {} MiB",
        peak >> 20,
        POOL >> 20,
        MEMORY_MARGIN >> 20
    );
    // A refused query's worker lets go of its budget just after the response head.
    assert!(server.wait_for("in_flight", 0, Duration::from_secs(10)));
    let memory = &server.status()["memory"];
    assert_eq!(memory["used_bytes"], 0, "{memory}");
    assert_eq!(memory["queries"], 0, "{memory}");
    assert!(memory["peak_bytes"].as_u64().unwrap() <= POOL, "{memory}");
    assert!(memory["refused"].as_u64().unwrap() > 0, "{memory}");
    eprintln!(
        "{answered} light answers, the slowest in {worst:?}; peak RSS {} MiB",
        peak >> 20
    );
}
