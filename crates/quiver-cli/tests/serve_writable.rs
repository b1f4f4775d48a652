//! `quiver serve --writable` against a real server on loopback: the Graph Store Protocol
//! (statuses, contents in every format, one transaction per write, queries seeing the
//! writes), SPARQL Update through the protocol (form and direct POST, dataset parameters,
//! errors), the write policy (403 read-only, 401 without or with a wrong token, reads never
//! need it), and the refusal to start a writable server on a non-loopback address without
//! a token.
//!
//! Contents are compared as RDF graphs (blank nodes up to isomorphism, through oxrdf's
//! canonicalization) against graphs parsed independently from the test's own text.

mod serve_support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use oxrdf::dataset::CanonicalizationAlgorithm;
use oxrdf::{Dataset, Graph};
use oxrdfio::{RdfFormat, RdfParser};
use serve_support::{encode, quiver, request, small_store, Reply, Server};

const SEED: &str = "<http://e/alice> <http://e/knows> <http://e/bob> .\n\
                    <http://e/bob> <http://e/name> \"Bob\" .\n";
const TURTLE: &str = "text/turtle; charset=utf-8";
const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
const UPDATE: (&str, &str) = ("Content-Type", "application/sparql-update");

fn store(tag: &str) -> PathBuf {
    small_store(tag, SEED)
}

fn writable(tag: &str) -> Server {
    Server::start(&store(tag), &["--writable"])
}

fn call(server: &Server, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    request(&server.address, method, path, headers, body)
}

fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
}

/// `text` in `format` as a canonical dataset.
fn dataset(text: &[u8], format: RdfFormat) -> Dataset {
    let mut dataset: Dataset = RdfParser::from_format(format)
        .for_slice(text)
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("not {format}: {e}\n{}", String::from_utf8_lossy(text)));
    dataset.canonicalize(CanonicalizationAlgorithm::Unstable);
    dataset
}

/// `text` in `format` as a canonical graph.
fn graph(text: &[u8], format: RdfFormat) -> Graph {
    let mut graph = Graph::new();
    for quad in RdfParser::from_format(format).for_slice(text) {
        let quad = quad.unwrap_or_else(|e| panic!("not {format}: {e}"));
        graph.insert(&oxrdf::Triple::new(
            quad.subject,
            quad.predicate,
            quad.object,
        ));
    }
    graph.canonicalize(CanonicalizationAlgorithm::Unstable);
    graph
}

fn turtle(text: &str) -> Graph {
    graph(text.as_bytes(), RdfFormat::Turtle)
}

/// GET of a graph in Turtle: 200 and its content.
fn get_graph(server: &Server, target: &str) -> Graph {
    let reply = server.get(&format!("/store?{target}"), &[("Accept", "text/turtle")]);
    assert_status(&reply, 200);
    assert_eq!(reply.header("content-type"), Some(TURTLE));
    graph(&reply.body, RdfFormat::Turtle)
}

fn ask(server: &Server, query: &str) -> bool {
    let reply = server.query(query, "application/sparql-results+json");
    assert_status(&reply, 200);
    reply.json()["boolean"].as_bool().expect("an ASK answer")
}

fn graph_param(iri: &str) -> String {
    format!("graph={}", encode(iri))
}

#[test]
fn graph_store_statuses_and_contents() {
    let server = writable("gsp");
    let g = graph_param("http://e/g1");
    let person = "@prefix : <http://e/> . :carol :knows [ :name \"Dan\" ] .";
    // PUT of a new graph: 201; GET gives it back; a query sees it.
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        person.as_bytes(),
    );
    assert_status(&reply, 201);
    assert_eq!(get_graph(&server, &g), turtle(person));
    assert!(ask(&server, "ASK { GRAPH <http://e/g1> { <http://e/carol> <http://e/knows> [ <http://e/name> \"Dan\" ] } }"));
    // PUT again replaces (204): the old triples are gone.
    let replaced =
        "<http://e/carol> <http://e/age> \"42\"^^<http://www.w3.org/2001/XMLSchema#integer> .";
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", "application/n-triples")],
        replaced.as_bytes(),
    );
    assert_status(&reply, 204);
    assert_eq!(get_graph(&server, &g), turtle(replaced));
    // POST merges (204 on an existing graph, 201 on a new one).
    let more = "<http://e/carol> <http://e/name> \"Carol\"@en .";
    let reply = call(
        &server,
        "POST",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        more.as_bytes(),
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, &g),
        turtle(&format!("{replaced}\n{more}"))
    );
    let g2 = graph_param("http://e/g2");
    let reply = call(
        &server,
        "POST",
        &format!("/store?{g2}"),
        &[("Content-Type", TURTLE)],
        more.as_bytes(),
    );
    assert_status(&reply, 201);
    // Other formats of the same graph.
    let expected = turtle(&format!("{replaced}\n{more}"));
    for (accept, format, content_type) in [
        (
            "application/n-triples",
            RdfFormat::NTriples,
            "application/n-triples",
        ),
        (
            "application/rdf+xml",
            RdfFormat::RdfXml,
            "application/rdf+xml",
        ),
        (
            "application/n-quads",
            RdfFormat::NQuads,
            "application/n-quads",
        ),
    ] {
        let reply = server.get(&format!("/store?{g}"), &[("Accept", accept)]);
        assert_status(&reply, 200);
        assert_eq!(reply.header("content-type"), Some(content_type));
        assert_eq!(graph(&reply.body, format), expected, "{accept}");
    }
    // N-Quads keeps the graph's name.
    let reply = server.get(&format!("/store?{g}"), &[("Accept", "application/n-quads")]);
    assert!(reply.text().contains("<http://e/g1> ."), "{}", reply.text());
    assert_status(
        &server.get(&format!("/store?{g}"), &[("Accept", "application/json")]),
        406,
    );
    // HEAD: 200 with the content type and no body; 404 for a missing graph.
    let head = call(
        &server,
        "HEAD",
        &format!("/store?{g}"),
        &[("Accept", "text/turtle")],
        b"",
    );
    assert_status(&head, 200);
    assert_eq!(head.header("content-type"), Some(TURTLE));
    assert!(head.body.is_empty());
    let missing = graph_param("http://e/missing");
    assert_status(
        &call(&server, "HEAD", &format!("/store?{missing}"), &[], b""),
        404,
    );
    assert_status(&server.get(&format!("/store?{missing}"), &[]), 404);
    // DELETE: 204, then the graph is gone (404 for GET and for a second DELETE).
    assert_status(
        &call(&server, "DELETE", &format!("/store?{g2}"), &[], b""),
        204,
    );
    assert_status(&server.get(&format!("/store?{g2}"), &[]), 404);
    assert_status(
        &call(&server, "DELETE", &format!("/store?{g2}"), &[], b""),
        404,
    );
    assert!(!ask(&server, "ASK { GRAPH <http://e/g2> { ?s ?p ?o } }"));
    // The default graph: GET, PUT replaces it (204: it always exists), DELETE empties it.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
    let reply = call(
        &server,
        "PUT",
        "/store?default",
        &[("Content-Type", TURTLE)],
        b"<http://e/x> <http://e/y> <http://e/z> .",
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, "default"),
        turtle("<http://e/x> <http://e/y> <http://e/z> .")
    );
    assert!(ask(
        &server,
        "ASK { <http://e/x> <http://e/y> <http://e/z> }"
    ));
    assert!(!ask(&server, "ASK { <http://e/alice> ?p ?o }"));
    // The whole store in N-Quads.
    let reply = server.get("/store", &[]);
    assert_status(&reply, 200);
    assert_eq!(reply.header("content-type"), Some("application/n-quads"));
    let all = format!(
        "<http://e/x> <http://e/y> <http://e/z> .\n{}",
        format!("{replaced}\n{more}\n").replace(" .\n", " <http://e/g1> .\n")
    );
    assert_eq!(
        dataset(&reply.body, RdfFormat::NQuads),
        dataset(all.as_bytes(), RdfFormat::NQuads)
    );
    assert_status(&call(&server, "DELETE", "/store?default", &[], b""), 204);
    assert_eq!(get_graph(&server, "default"), Graph::new());
    // Relative IRIs in a body resolve against the graph's IRI.
    let reply = call(
        &server,
        "PUT",
        &format!("/store?{g}"),
        &[("Content-Type", TURTLE)],
        b"<a> <b> <c> .",
    );
    assert_status(&reply, 204);
    assert_eq!(
        get_graph(&server, &g),
        turtle("<http://e/a> <http://e/b> <http://e/c> .")
    );
    // Blank nodes of two requests are two nodes.
    for _ in 0..2 {
        let reply = call(
            &server,
            "POST",
            "/store?default",
            &[("Content-Type", TURTLE)],
            b"_:b <http://e/p> 1 .",
        );
        assert_status(&reply, 204);
    }
    let reply = server.query(
        "SELECT (COUNT(DISTINCT ?s) AS ?n) { ?s <http://e/p> 1 }",
        "text/csv",
    );
    assert_eq!(reply.text().lines().nth(1), Some("2"), "{}", reply.text());
    let status = server.status();
    assert!(status["writable"].as_bool().unwrap());
    assert!(
        status["writes_committed"].as_u64().unwrap() >= 10,
        "{status}"
    );
}

#[test]
fn graph_store_errors() {
    let server = writable("gsp-errors");
    let g = graph_param("http://e/g");
    let put = |path: &str, content_type: &str, body: &str| {
        call(
            &server,
            "PUT",
            path,
            &[("Content-Type", content_type)],
            body.as_bytes(),
        )
    };
    // A syntax error: 400 with the line and column.
    let reply = put(
        &format!("/store?{g}"),
        TURTLE,
        "<http://a> <http://b> <http://c> .\n<http://a> <http://b> .\n",
    );
    assert_status(&reply, 400);
    assert!(reply.text().contains("line 2"), "{}", reply.text());
    assert_status(&server.get(&format!("/store?{g}"), &[]), 404);
    // Unsupported media types: 415.
    assert_status(&put(&format!("/store?{g}"), "application/json", "{}"), 415);
    assert_status(
        &call(
            &server,
            "PUT",
            &format!("/store?{g}"),
            &[],
            b"<http://a> <http://b> <http://c> .",
        ),
        415,
    );
    // A quad in a named graph sent to a graph: 400, nothing written.
    let quad = "<http://a> <http://b> <http://c> <http://other> .";
    assert_status(
        &put(&format!("/store?{g}"), "application/n-quads", quad),
        400,
    );
    assert_status(&server.get(&format!("/store?{g}"), &[]), 404);
    // Quads in the default graph of an N-Quads body are triples.
    assert_status(
        &put(
            &format!("/store?{g}"),
            "application/n-quads",
            "<http://a> <http://b> <http://c> .",
        ),
        201,
    );
    // Targets: none (for a write), both, two graphs, not an IRI.
    for query in [
        "",
        "?default&graph=http://a",
        "?graph=http://a&graph=http://b",
        "?graph=not%20an%20iri",
    ] {
        assert_status(&put(&format!("/store{query}"), TURTLE, ""), 400);
    }
    assert_status(
        &call(&server, "PATCH", &format!("/store?{g}"), &[], b""),
        405,
    );
    // The store is intact after the refusals.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
}

#[test]
fn a_read_only_server_refuses_writes_with_403() {
    let server = Server::start(&store("read-only"), &[]);
    let g = format!("/store?{}", graph_param("http://e/g"));
    let body = b"<http://a> <http://b> <http://c> .";
    let replies = [
        call(&server, "PUT", &g, &[("Content-Type", TURTLE)], body),
        call(&server, "POST", &g, &[("Content-Type", TURTLE)], body),
        call(&server, "DELETE", "/store?default", &[], b""),
        server.post("/update", &[UPDATE], b"CLEAR ALL"),
    ];
    for reply in replies {
        assert_status(&reply, 403);
        assert!(reply.text().contains("read-only"), "{}", reply.text());
    }
    // Reads work.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
    assert!(!server.status()["writable"].as_bool().unwrap());
}

#[test]
fn writes_need_the_token_and_reads_do_not() {
    let server = Server::start(
        &store("token"),
        &["--writable", "--update-token", "s3cret-token"],
    );
    let g = format!("/store?{}", graph_param("http://e/g"));
    let body = b"<http://a> <http://b> <http://c> .";
    let bearer = |token: &str| format!("Bearer {token}");
    for authorization in [
        None,
        Some(bearer("wrong")),
        Some(bearer("s3cret-toke")),
        Some("Basic czNjcmV0LXRva2Vu".to_owned()),
    ] {
        let mut headers = vec![("Content-Type", TURTLE)];
        if let Some(value) = &authorization {
            headers.push(("Authorization", value));
        }
        for reply in [
            call(&server, "PUT", &g, &headers, body),
            call(&server, "DELETE", "/store?default", &headers, b""),
            server.post(
                "/update",
                &[UPDATE, headers.last().copied().unwrap_or(UPDATE)],
                b"CLEAR ALL",
            ),
        ] {
            assert_status(&reply, 401);
            assert!(
                reply
                    .header("www-authenticate")
                    .is_some_and(|v| v.starts_with("Bearer")),
                "{authorization:?}: {:?}",
                reply.headers
            );
        }
    }
    // Nothing was written.
    assert_status(&server.get(&g, &[]), 404);
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
    // The right token writes; reads never need one.
    let auth = bearer("s3cret-token");
    let reply = call(
        &server,
        "PUT",
        &g,
        &[("Content-Type", TURTLE), ("Authorization", &auth)],
        body,
    );
    assert_status(&reply, 201);
    assert_eq!(
        get_graph(&server, &graph_param("http://e/g")),
        turtle("<http://a> <http://b> <http://c> .")
    );
    assert!(ask(
        &server,
        "ASK { GRAPH <http://e/g> { <http://a> <http://b> <http://c> } }"
    ));
}

/// Runs `quiver serve` with `args` until it prints its listening line or exits; returns
/// the exit status (None: it started) and stderr.
fn start_or_fail(
    args: &[&str],
    env: Option<(&str, &str)>,
) -> (Option<std::process::ExitStatus>, String) {
    let dir = store(&format!("exposed-{}", env.is_some()));
    let mut command = quiver();
    command
        .arg("serve")
        .arg("--location")
        .arg(&dir)
        .args(args)
        .env_remove("QUIVER_UPDATE_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some((name, value)) = env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("quiver serve starts");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut log = String::new();
    while Instant::now() < deadline {
        if let Ok(line) = rx.recv_timeout(Duration::from_millis(50)) {
            let listening = line.starts_with("listening on");
            log.push_str(&line);
            log.push('\n');
            if listening {
                let _ = child.kill();
                let _ = child.wait();
                return (None, log);
            }
        }
        if let Some(status) = child.try_wait().expect("try_wait") {
            while let Ok(line) = rx.recv_timeout(Duration::from_millis(200)) {
                log.push_str(&line);
                log.push('\n');
            }
            return (Some(status), log);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("quiver serve neither started nor exited: {log}");
}

#[test]
fn a_writable_server_beyond_loopback_needs_a_token() {
    let (status, log) = start_or_fail(&["--writable", "--bind", "0.0.0.0:0"], None);
    let status = status.unwrap_or_else(|| panic!("started without a token: {log}"));
    assert!(!status.success());
    assert!(log.contains("update token"), "{log}");
    assert!(log.contains("0.0.0.0"), "{log}");
    // With the token from the environment it starts; read-only it starts without one.
    let (status, log) = start_or_fail(
        &["--writable", "--bind", "0.0.0.0:0"],
        Some(("QUIVER_UPDATE_TOKEN", "t")),
    );
    assert!(status.is_none(), "{log}");
    let (status, log) = start_or_fail(&["--bind", "0.0.0.0:0"], None);
    assert!(status.is_none(), "{log}");
    // --sync and --update-token mean nothing without --writable: a usage error.
    let (status, log) = start_or_fail(&["--sync", "none"], None);
    assert_eq!(status.and_then(|s| s.code()), Some(2), "{log}");
}

#[test]
fn update_plumbing_statuses() {
    let server = writable("update-plumbing");
    // Syntax errors: 400 with a position, before anything runs.
    let reply = server.post(
        "/update",
        &[UPDATE],
        b"INSERT DATA {\n  <http://a> <http://b> }",
    );
    assert_status(&reply, 400);
    assert!(
        reply.text().contains("line 2") || reply.text().contains("2:"),
        "{}",
        reply.text()
    );
    let reply = server.post("/update", &[FORM], b"update=CLEAR%20XYZ");
    assert_status(&reply, 400);
    // Two update strings, a wrong media type, a non-UTF-8 charset, a query at /update.
    assert_status(
        &server.post(
            "/update",
            &[FORM],
            b"update=CLEAR%20NAMED&update=CLEAR%20DEFAULT",
        ),
        400,
    );
    assert_status(
        &server.post("/update", &[("Content-Type", "text/plain")], b"CLEAR NAMED"),
        415,
    );
    assert_status(
        &server.post(
            "/update",
            &[("Content-Type", "application/sparql-update; charset=UTF-16")],
            b"CLEAR NAMED",
        ),
        415,
    );
    assert_status(&server.post("/update", &[], b"update=CLEAR%20NAMED"), 415);
    assert_status(&server.post("/update", &[FORM], b"query=ASK%7B%7D"), 400);
    // USING/WITH together with the protocol's dataset parameters: 400.
    let with = "WITH <http://example/addresses> DELETE { ?p <http://n> 'Bill' } INSERT { ?p <http://n> 'William' } WHERE { ?p <http://n> 'Bill' }";
    let reply = server.post(
        "/update?using-named-graph-uri=http%3A%2F%2Fexample%2Fpeople",
        &[UPDATE],
        with.as_bytes(),
    );
    assert_status(&reply, 400);
    // LOAD reads the server's files: refused unless --allow-load.
    let reply = server.post("/update", &[UPDATE], b"LOAD <file:///etc/hostname>");
    assert_status(&reply, 403);
    assert!(reply.text().contains("--allow-load"), "{}", reply.text());
    // An update with GET: 405 (and 4xx at the query endpoint too).
    let get = server.get("/update", &[]);
    assert_status(&get, 405);
    assert_eq!(get.header("allow"), Some("POST"));
    assert_status(&server.get("/sparql?update=CLEAR%20ALL", &[]), 405);
    // Large bodies: 413, as for queries.
    let large = Server::start(
        &store("update-large"),
        &["--writable", "--max-body-bytes", "1000"],
    );
    let padding = "#".repeat(2000);
    assert_status(
        &large.post(
            "/update",
            &[UPDATE],
            format!("CLEAR ALL\n{padding}").as_bytes(),
        ),
        413,
    );
    assert_status(
        &large.post(
            "/store?default",
            &[("Content-Type", TURTLE)],
            format!("{padding}\n").as_bytes(),
        ),
        413,
    );
    // Nothing changed.
    assert_eq!(
        get_graph(&server, "default"),
        graph(SEED.as_bytes(), RdfFormat::NTriples)
    );
}

#[test]
fn updates_by_form_and_by_body_are_seen_by_queries() {
    let server = writable("update");
    let form = format!(
        "update={}",
        encode("INSERT DATA { <http://e/carol> <http://e/knows> <http://e/alice> }")
    );
    let reply = server.post("/update", &[FORM], form.as_bytes());
    assert_status(&reply, 200);
    assert!(reply.text().contains("committed"), "{}", reply.text());
    assert!(ask(
        &server,
        "ASK { <http://e/carol> <http://e/knows> <http://e/alice> }"
    ));
    // Direct POST, also at the query endpoint, with a JSON summary.
    let reply = server.post(
        "/sparql",
        &[UPDATE, ("Accept", "application/json")],
        b"DELETE WHERE { <http://e/bob> <http://e/name> ?n } ; INSERT DATA { GRAPH <http://e/g> { <http://e/bob> <http://e/name> \"Robert\" } }",
    );
    assert_status(&reply, 200);
    assert_eq!(reply.json()["operations"], 2);
    assert!(!ask(
        &server,
        "ASK { <http://e/bob> <http://e/name> \"Bob\" }"
    ));
    assert_eq!(
        get_graph(&server, &graph_param("http://e/g")),
        turtle("<http://e/bob> <http://e/name> \"Robert\" .")
    );
    // using-graph-uri: the WHERE clause reads the named graph as its default graph.
    let reply = server.post(
        "/update?using-graph-uri=http%3A%2F%2Fe%2Fg",
        &[UPDATE],
        b"INSERT { ?s <http://e/copied> ?o } WHERE { ?s <http://e/name> ?o }",
    );
    assert_status(&reply, 200);
    assert!(ask(
        &server,
        "ASK { <http://e/bob> <http://e/copied> \"Robert\" }"
    ));
    // Relative IRIs resolve against the endpoint's URL.
    let reply = server.post(
        "/update",
        &[UPDATE],
        b"INSERT DATA { <http://e/s> <http://e/p> <rel> }",
    );
    assert_status(&reply, 200);
    let reply = server.query("SELECT ?o { <http://e/s> <http://e/p> ?o }", "text/csv");
    let iri = reply.text().lines().nth(1).unwrap_or_default().to_owned();
    assert!(iri.starts_with("http://") && iri.ends_with("/rel"), "{iri}");
    // A Graph Store GET sees what the update wrote.
    let default = get_graph(&server, "default");
    assert!(default.contains(oxrdf::TripleRef::new(
        oxrdf::NamedNodeRef::new_unchecked("http://e/carol"),
        oxrdf::NamedNodeRef::new_unchecked("http://e/knows"),
        oxrdf::NamedNodeRef::new_unchecked("http://e/alice"),
    )));
}

/// A Graph Store GET streams the version it started on: a PUT that replaces the graph while
/// the response is only partly read does not show through, and the next GET sees the new
/// content. The graph is large enough (~10 MB as N-Triples) that the serializer is still
/// blocked on the unread response when the PUT commits, which the server's log confirms.
#[test]
fn a_response_streams_the_version_its_request_started_on() {
    use std::io::Read;
    let dir = store("isolation");
    let server = Server::start(&dir, &["--writable", "--max-body-bytes", "64M"]);
    let g = format!("/store?{}", graph_param("http://e/big"));
    let triples = |tag: &str| {
        (0..200_000)
            .map(|i| format!("<http://e/s{i}> <http://e/{tag}> \"{i}\" .\n"))
            .collect::<String>()
    };
    let (old, new) = (triples("old"), triples("new"));
    let nt = [("Content-Type", "application/n-triples")];
    assert_status(&call(&server, "PUT", &g, &nt, old.as_bytes()), 201);
    let mut stream = serve_support::send(
        &server.address,
        "GET",
        &g,
        &[("Accept", "application/n-triples")],
        b"",
    );
    let mut raw = vec![0u8; 8192];
    let mut read = 0;
    while read < 4096 {
        let n = stream.read(&mut raw[read..]).expect("the response starts");
        assert!(n > 0, "the response ended early");
        read += n;
    }
    raw.truncate(read);
    assert_status(&call(&server, "PUT", &g, &nt, new.as_bytes()), 204);
    assert!(server.logged("graph store write committed"));
    assert!(
        !server.log().contains("graph sent"),
        "the first response was complete before the PUT: the test proves nothing\n{}",
        server.log()
    );
    stream
        .read_to_end(&mut raw)
        .expect("the rest of the response");
    let reply = serve_support::parse_reply(&raw);
    assert_status(&reply, 200);
    assert!(reply.complete);
    let first = graph(&reply.body, RdfFormat::NTriples);
    assert_eq!(first, graph(old.as_bytes(), RdfFormat::NTriples));
    let reply = server.get(&g, &[("Accept", "application/n-triples")]);
    assert_eq!(
        graph(&reply.body, RdfFormat::NTriples),
        graph(new.as_bytes(), RdfFormat::NTriples)
    );
}

/// Writes are committed to the store's directory: after the writable server stops, a
/// read-only server on the same directory (and a writable one again) sees them.
#[test]
fn writes_survive_a_restart_and_a_read_only_server_sees_them() {
    let dir = store("restart");
    let g = format!("/store?{}", graph_param("http://e/kept"));
    let kept = "<http://e/k> <http://e/p> \"kept\" .";
    {
        let mut server = Server::start(&dir, &["--writable", "--sync", "always"]);
        let reply = call(
            &server,
            "PUT",
            &g,
            &[("Content-Type", TURTLE)],
            kept.as_bytes(),
        );
        assert_status(&reply, 201);
        let reply = server.post(
            "/update",
            &[UPDATE],
            b"DELETE DATA { <http://e/bob> <http://e/name> \"Bob\" }",
        );
        assert_status(&reply, 200);
        let status = server
            .terminate(Duration::from_secs(30))
            .expect("the server exits");
        assert!(status.success(), "{status:?}\n{}", server.log());
    }
    for args in [&[][..], &["--writable"][..]] {
        let server = Server::start(&dir, args);
        assert_eq!(
            get_graph(&server, &graph_param("http://e/kept")),
            turtle(kept)
        );
        assert!(!ask(
            &server,
            "ASK { <http://e/bob> <http://e/name> \"Bob\" }"
        ));
        assert!(ask(
            &server,
            "ASK { <http://e/alice> <http://e/knows> <http://e/bob> }"
        ));
    }
}

/// `--writable --create` starts from an empty store where there is none.
#[test]
fn create_starts_an_empty_store() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-create-empty");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let server = Server::start(&dir, &["--writable", "--create"]);
    assert_eq!(server.status()["triples"], 0);
    let reply = call(
        &server,
        "POST",
        "/store?default",
        &[("Content-Type", TURTLE)],
        b"<http://a> <http://b> <http://c> .",
    );
    assert_status(&reply, 204);
    assert!(ask(&server, "ASK { <http://a> <http://b> <http://c> }"));
    // Without --create, a directory without a store is an error.
    let missing = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-create-missing");
    let _ = std::fs::remove_dir_all(&missing);
    std::fs::create_dir_all(&missing).unwrap();
    let output = quiver()
        .arg("serve")
        .arg("--location")
        .arg(&missing)
        .args(["--writable", "--bind", "127.0.0.1:0"])
        .output()
        .expect("quiver serve runs");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot open the store"),
        "{output:?}"
    );
}

/// An update runs under the same bounds as a query: a WHERE clause over a cross product of
/// LUBM-1 is stopped by the time limit (504) or the memory budget (507), nothing is
/// committed, and the server keeps serving.
#[test]
fn an_update_over_its_limits_gets_the_query_statuses_and_changes_nothing() {
    let dir = serve_support::store("writable-limits");
    let server = Server::start(
        dir,
        &["--writable", "--timeout", "2", "--max-memory", "256M"],
    );
    let before = server.status()["triples"].as_u64();
    let started = Instant::now();
    let reply = server.post(
        "/update",
        &[UPDATE],
        b"INSERT { ?a <http://e/x> ?b } WHERE { ?a ?p ?o . ?b ?q ?r }",
    );
    println!("{}: {}", reply.status, reply.text());
    assert!(
        [504, 507].contains(&reply.status),
        "{}: {}",
        reply.status,
        reply.text()
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.status()["triples"].as_u64(), before);
    assert!(!ask(&server, "ASK { ?a <http://e/x> ?b }"));
}
