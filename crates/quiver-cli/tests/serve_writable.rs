//! `quiver serve --writable` against a real server on loopback: SPARQL Update through the
//! protocol (form and direct POST, dataset parameters, errors, limits), the write policy
//! (403 read-only, 401 without or with a wrong token, reads never need it), the refusal to
//! start a writable server on a non-loopback address without a token, durability across a
//! restart and `--create`. The Graph Store Protocol is in `serve_graph_store.rs`.

use crate::serve_support;

use serve_support::writes::*;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use oxrdfio::RdfFormat;
use serve_support::{encode, quiver, Server};

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

/// A query the server has cached (and, being cheap, runs inline) is prepared again after
/// an update: its answers follow every commit, the constant it names included.
#[test]
fn a_repeated_query_sees_every_update() {
    let server = writable("cached");
    let query = "SELECT ?o { <http://e/dave> <http://e/knows> ?o }";
    let count = |server: &Server| {
        let reply = server.query(query, "text/csv");
        assert_status(&reply, 200);
        reply.text().lines().count() - 1
    };
    // <http://e/dave> is not in the store yet: the cached plan knows the pattern is empty.
    for _ in 0..3 {
        assert_eq!(count(&server), 0);
    }
    for (i, friend) in ["alice", "bob", "carol"].iter().enumerate() {
        let update =
            format!("INSERT DATA {{ <http://e/dave> <http://e/knows> <http://e/{friend}> }}");
        assert_status(&server.post("/update", &[UPDATE], update.as_bytes()), 200);
        for _ in 0..3 {
            assert_eq!(count(&server), i + 1);
        }
    }
    assert_status(
        &server.post(
            "/update",
            &[UPDATE],
            b"DELETE WHERE { <http://e/dave> ?p ?o }",
        ),
        200,
    );
    assert_eq!(count(&server), 0);
}
