//! `quiver cluster` as a user runs it: a LUBM-1 store cut into partitions and served by
//! 1, 2 and 3 real processes on this machine answers Wukong's q1–q12, a count, an
//! aggregate, a property path and a DESCRIBE over HTTP exactly as `quiver serve` on the
//! whole store does, and so does a cluster loaded by 2 and 3 processes (`load
//! --processes`); with `--accept-queries`, every process answers the same; EXPLAIN shows
//! what each process's worker did; a cluster of the wrong size refuses to start; SIGTERM
//! stops every process; what a process sends another stays within its window.

use crate::serve_support;

use std::path::Path;
use std::time::Duration;

use serve_support::{lubm_query, quiver, store, Server};

const TSV: &str = "text/tab-separated-values";
const N_TRIPLES: &str = "application/n-triples";

/// The reply's lines, sorted (row order is not part of an unordered answer, nor triple
/// order of a graph).
fn rows(server: &Server, query: &str) -> Vec<String> {
    let accept = if query.starts_with("DESCRIBE") {
        N_TRIPLES
    } else {
        TSV
    };
    let reply = server.query(query, accept);
    assert_eq!(reply.status, 200, "{query}: {}", reply.text());
    let mut lines: Vec<String> = reply.text().lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// [`rows`] of the server at `address` (another process of a cluster).
fn rows_at(address: &str, query: &str) -> Vec<String> {
    let path = format!("/query?query={}", serve_support::encode(query));
    let accept = if query.starts_with("DESCRIBE") {
        N_TRIPLES
    } else {
        TSV
    };
    let reply = serve_support::request(address, "GET", &path, &[("Accept", accept)], b"");
    assert_eq!(reply.status, 200, "{query}: {}", reply.text());
    let mut lines: Vec<String> = reply.text().lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// The HTTP addresses of processes 1… of a cluster started with `--accept-queries`, from
/// their `process I: listening on http://…` lines (waited for).
fn other_addresses(cluster: &Server, processes: u32) -> Vec<(u32, String)> {
    let started = std::time::Instant::now();
    loop {
        let log = cluster.log();
        let found: Vec<(u32, String)> = (1..processes)
            .filter_map(|process| {
                let prefix = format!("process {process}: listening on http://");
                let line = log.lines().find_map(|line| line.strip_prefix(&prefix))?;
                Some((process, line.trim().to_owned()))
            })
            .collect();
        if found.len() == processes as usize - 1 {
            return found;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "not every process listens: {log}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn partition(store: &Path, partitions: u32, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let output = quiver()
        .arg("partition")
        .arg("--location")
        .arg(store)
        .args(["--partitions", &partitions.to_string()])
        .arg("--output")
        .arg(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_cluster_of_processes_answers_like_the_whole_store() {
    let whole = store("cluster");
    let mut queries: Vec<String> = (1..=12).map(|q| lubm_query(&format!("q{q}"))).collect();
    queries.push("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }".into());
    queries.push(
        "SELECT ?c (COUNT(?x) AS ?n) WHERE { ?x a ?c } GROUP BY ?c ORDER BY DESC(?n) ?c".into(),
    );
    queries.push(
        std::fs::read_to_string(serve_support::queries_dir().join("lubm-sparql11/path1.rq"))
            .unwrap(),
    );
    queries.push(
        "DESCRIBE ?x WHERE { ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#name> \"Course0\" }"
            .into(),
    );
    let reference = Server::start(whole, &[]);
    let expected: Vec<Vec<String>> = queries.iter().map(|q| rows(&reference, q)).collect();
    assert!(
        expected.last().unwrap().len() > 10,
        "a DESCRIBE that describes little"
    );
    drop(reference);
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for processes in [1, 2, 3] {
        let dir = scratch.join(format!("cluster-cli-{processes}"));
        partition(whole, processes, &dir);
        // On 3 processes, every process accepts queries (`--accept-queries`) and answers
        // them as process 0 does, coordinating them itself.
        let accepting = processes == 3;
        let flags: &[&str] = if accepting {
            &["--accept-queries"]
        } else {
            &[]
        };
        let mut cluster = Server::start_cluster(&dir, processes, flags);
        let others = if accepting {
            other_addresses(&cluster, processes)
        } else {
            Vec::new()
        };
        for (query, expected) in queries.iter().zip(&expected) {
            assert_eq!(
                &rows(&cluster, query),
                expected,
                "{processes} processes: {query}"
            );
            for (process, address) in &others {
                assert_eq!(
                    &rows_at(address, query),
                    expected,
                    "asked of process {process} of {processes}: {query}"
                );
            }
        }
        // EXPLAIN says what each process's worker did at each step of q7.
        let explained = cluster.get(
            &format!(
                "/query?explain=true&query={}",
                serve_support::encode(&lubm_query("q7"))
            ),
            &[],
        );
        assert_eq!(explained.status, 200);
        let plan = explained.text();
        assert!(
            plan.contains(&format!(
                "on {processes} timely workers, by step and worker"
            )),
            "{plan}"
        );
        for worker in 0..processes {
            let ran = plan.lines().any(|line| {
                let words: Vec<&str> = line.split_whitespace().collect();
                words.get(1) == Some(&worker.to_string().as_str()) && words.get(2) == Some(&"ran")
            });
            assert!(ran, "worker {worker}: {plan}");
        }
        let status = cluster
            .terminate(Duration::from_secs(20))
            .expect("the cluster stops");
        assert!(status.success(), "{status:?}: {}", cluster.log());
        // The other processes return when process 0's dataflow ends, each saying so.
        for process in 1..processes {
            let line = format!("process {process} stopped");
            assert!(cluster.logged(&line), "{line}: {}", cluster.log());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    // A cluster loaded by its processes (`load --processes`: each parses its universities,
    // every partition holds only its own terms) answers the same over HTTP; on 3 processes,
    // with no `rdf:type` memberships replicated (a budget of 0, recorded in the layout).
    for processes in [2, 3] {
        let dir = scratch.join(format!("cluster-cli-loaded-{processes}"));
        let _ = std::fs::remove_dir_all(&dir);
        let budget: &[&str] = if processes == 3 {
            &["--replication-budget", "0"]
        } else {
            &[]
        };
        let output = quiver()
            .args(["load", "--lubm", "1", "--processes", &processes.to_string()])
            .args(budget)
            .arg("--location")
            .arg(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("into {processes} partitions")),
            "{stderr}"
        );
        let layout: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("partitions.json")).unwrap()).unwrap();
        let recorded = (processes == 3).then_some(0);
        assert_eq!(layout["replication_budget"].as_u64(), recorded, "{layout}");
        let mut cluster = Server::start_cluster(&dir, processes, &[]);
        for (query, expected) in queries.iter().zip(&expected) {
            assert_eq!(
                &rows(&cluster, query),
                expected,
                "loaded by {processes} processes: {query}"
            );
        }
        // Each process says whether it holds the memberships (process 0 before it serves).
        let said = if processes == 3 {
            "process 1: no rdf:type memberships replicated"
        } else {
            "process 0: the cluster's rdf:type memberships held here"
        };
        assert!(cluster.logged(said), "{said}: {}", cluster.log());
        let status = cluster
            .terminate(Duration::from_secs(20))
            .expect("the cluster stops");
        assert!(status.success(), "{status:?}: {}", cluster.log());
        if processes == 2 {
            // Started again: every process reads the replicas it kept, the same answers.
            // Started as a shell starts a command, and stopped by Ctrl-C (SIGINT to its
            // process group): process 0 stops, and the others with it, none reported lost.
            let mut cluster = Server::start_cluster_in_group(&dir, processes, &[]);
            for process in 0..processes {
                let said = format!("process {process}: the replicas read from the copy");
                assert!(cluster.logged(&said), "{said}: {}", cluster.log());
            }
            for (query, expected) in queries.iter().zip(&expected) {
                assert_eq!(&rows(&cluster, query), expected, "kept replicas: {query}");
            }
            let status = cluster
                .interrupt_group(Duration::from_secs(20))
                .expect("the cluster stops");
            assert!(status.success(), "{status:?}: {}", cluster.log());
            assert!(cluster.logged("process 1 stopped"), "{}", cluster.log());
            assert!(!cluster.log().contains("lost"), "{}", cluster.log());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    // A cluster of another size than the store's partitions refuses to start.
    let dir = scratch.join("cluster-cli-size");
    partition(whole, 3, &dir);
    let output = quiver()
        .args([
            "cluster",
            "--processes",
            "2",
            "--bind",
            "127.0.0.1:0",
            "--location",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cut into 3 partitions"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cluster_reads_its_config_file_logs_json_from_every_process_and_reports_the_whole_store() {
    let whole = store("cluster");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = scratch.join("cluster-cli-ops");
    partition(whole, 2, &dir);
    let file = scratch.join("cluster-cli-ops.toml");
    std::fs::write(&file, "log-format = \"json\"\nmax-results = 70000\n").unwrap();
    let mut cluster = Server::start_cluster(&dir, 2, &["--config", file.to_str().unwrap()]);
    let reference = Server::start(whole, &[]);
    let status = cluster.status();
    assert_eq!(status["triples"], reference.status()["triples"]);
    assert_eq!(status["limits"]["max_results"], 70000, "from the file");
    assert_eq!(cluster.query("SELECT * { ?s ?p ?o }", TSV).status, 422);
    assert_eq!(
        rows(&cluster, &lubm_query("q2")),
        rows(&reference, &lubm_query("q2"))
    );
    let metrics = cluster.get("/metrics", &[]).text();
    let exchanged = metric(&metrics, "cluster_exchanged_rows_total");
    assert!(exchanged.is_some_and(|rows| rows > 0), "{metrics}");
    // What the coordinator's process holds beside its partition: network buffers (the
    // query above moved rows between the processes) and the replicated memberships.
    assert!(
        metric(&metrics, "cluster_network_buffer_bytes").is_some_and(|b| b >= 1 << 20),
        "{metrics}"
    );
    assert!(
        metric(&metrics, "cluster_replicated_bytes").is_some_and(|b| b > 0),
        "{metrics}"
    );
    let stopped = cluster
        .terminate(Duration::from_secs(20))
        .expect("the cluster stops");
    assert!(stopped.success(), "{}", cluster.log());
    assert!(cluster.logged("process 1 stopped"));
    // Both processes' lines, each one JSON object.
    for line in cluster.log().lines() {
        let event: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(event["timestamp"].is_string(), "{line}");
    }
    assert!(cluster.logged("process 1 of 2: serving partitions 1..2"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends SIGKILL to process `pid`.
/// A metric's value in a `/metrics` page.
fn metric(page: &str, name: &str) -> Option<u64> {
    page.lines()
        .find_map(|line| line.strip_prefix(&format!("quiver_{name}{{dataset=\"default\"}} ")))
        .and_then(|value| value.parse::<u64>().ok())
}

/// A cluster loaded by its processes decodes the terms of its rows by asking their owners,
/// a few pieces of the question per owner at a time: on LUBM-15 (about half a million
/// terms), a filter on every triple's subject and object strings asks for several pieces'
/// worth per owner, each sent as an earlier one is answered, and the count is the whole
/// store's.
#[test]
fn a_coordinator_asks_the_owners_for_many_terms_a_few_pieces_at_a_time() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let load = |dir: &Path, processes: &[&str]| {
        let _ = std::fs::remove_dir_all(dir);
        let output = quiver()
            .args(["load", "--lubm", "15"])
            .args(processes)
            .arg("--location")
            .arg(dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
    };
    let whole = scratch.join("cluster-cli-terms-whole");
    let dir = scratch.join("cluster-cli-terms");
    load(&whole, &[]);
    load(&dir, &["--processes", "2"]);
    let query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o \
        FILTER(STRLEN(STR(?s)) + STRLEN(STR(?o)) > 90) }";
    let reference = Server::start(&whole, &[]);
    let expected = rows(&reference, query);
    // More than 2 pieces of 65,536 ids for each of the 2 owners.
    let terms = reference.status()["terms"].as_u64().expect("terms");
    assert!(terms > 400_000, "{terms} terms");
    let mut cluster = Server::start_cluster(&dir, 2, &[]);
    assert_eq!(rows(&cluster, query), expected);
    let status = cluster
        .terminate(Duration::from_secs(20))
        .expect("the cluster stops");
    assert!(status.success(), "{status:?}: {}", cluster.log());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&whole);
}

/// Flow control between the processes: a query whose rows cross from process 1 to process
/// 0 in far more messages than the window (a pairing of each department's members, about
/// 2 M rows, filtered only at the coordinator) gives the whole store's answer, and process
/// 1's workers never had more messages in flight to process 0's worker than the window,
/// holding the rest back until credited.
#[test]
fn a_cluster_holds_back_what_it_sends_another_process_past_its_window() {
    let whole = store("cluster");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = scratch.join("cluster-cli-window");
    partition(whole, 2, &dir);
    let query = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
        SELECT (COUNT(*) AS ?n) WHERE { ?a ub:memberOf ?d . ?b ub:memberOf ?d \
        FILTER(STRLEN(STR(?a)) > STRLEN(STR(?b)) + 6) }";
    let reference = Server::start(whole, &[]);
    let expected = rows(&reference, query);
    assert_ne!(expected[0], "0", "the filter keeps some rows: {expected:?}");
    let mut cluster = Server::start_cluster(&dir, 2, &["--accept-queries"]);
    let others = other_addresses(&cluster, 2);
    assert_eq!(rows(&cluster, query), expected);
    let page = serve_support::request(&others[0].1, "GET", "/metrics", &[], b"").text();
    let window = metric(&page, "cluster_message_window").expect("the window");
    let most = metric(&page, "cluster_most_messages_in_flight").expect("in flight");
    let waited = metric(&page, "cluster_messages_waited_total").expect("waited");
    assert!(window > 0, "{page}");
    assert!(
        most > 0 && most <= window,
        "{most} in flight, window {window}"
    );
    assert!(
        waited > 0,
        "nothing waited: the rows went in {most} messages or fewer"
    );
    let exchanged = metric(
        &cluster.get("/metrics", &[]).text(),
        "cluster_exchanged_rows_total",
    );
    assert!(
        exchanged.is_some_and(|rows| rows > 1_000_000),
        "{exchanged:?}"
    );
    let status = cluster
        .terminate(Duration::from_secs(20))
        .expect("the cluster stops");
    assert!(status.success(), "{status:?}: {}", cluster.log());
    let _ = std::fs::remove_dir_all(&dir);
}

fn kill(pid: u32) {
    signal(pid, "-KILL");
}

/// A process of the cluster killed: process 0 says so in one line of its log (not a
/// panic with a backtrace from each of timely's threads), `/status` answers 503 within
/// 2 s, with no query asked, the `cluster_answering` gauge falls to 0, and a query fails
/// with 503 and a message that says why. Process 0 killed: process 1 ends with an error
/// that says why, without a panic.
#[test]
fn a_killed_process_makes_the_cluster_unavailable_and_says_so_once() {
    let whole = store("cluster");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = scratch.join("cluster-cli-killed");
    partition(whole, 2, &dir);
    let mut cluster = Server::start_cluster(&dir, 2, &[]);
    let status = cluster.get("/status", &[]);
    assert_eq!(status.status, 200, "{}", status.text());
    assert_eq!(status.json()["cluster"]["answering"], true);
    // The header and q4's ten rows.
    assert_eq!(rows(&cluster, &lubm_query("q4")).len(), 11);
    let answering = |cluster: &Server| {
        let metrics = cluster.get("/metrics", &[]).text();
        metrics
            .lines()
            .find_map(|line| line.strip_prefix("quiver_cluster_answering{dataset=\"default\"} "))
            .map(str::to_owned)
    };
    assert_eq!(answering(&cluster).as_deref(), Some("1"));
    let children = cluster.children();
    assert_eq!(children.len(), 1, "process 1 alone: {children:?}");
    kill(children[0]);
    let started = std::time::Instant::now();
    let status = loop {
        let status = cluster.get("/status", &[]);
        if status.status != 200 || started.elapsed() > Duration::from_secs(5) {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let noticed = started.elapsed();
    assert_eq!(status.status, 503, "{}", status.text());
    assert!(
        noticed < Duration::from_secs(2),
        "noticed after {noticed:?}"
    );
    let body = status.json();
    assert_eq!(body["status"], "unavailable", "{body}");
    assert_eq!(body["cluster"]["answering"], false, "{body}");
    assert!(
        body["cluster"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("restart the cluster")),
        "{body}"
    );
    assert_eq!(answering(&cluster).as_deref(), Some("0"));
    let reply = cluster.query(&lubm_query("q4"), TSV);
    assert_eq!(reply.status, 503, "{}", reply.text());
    assert!(
        reply.text().contains("the cluster cannot answer"),
        "{}",
        reply.text()
    );
    assert!(cluster.logged("lost its connection to another process of the cluster"));
    let log = cluster.log();
    assert_eq!(log.matches("lost its connection").count(), 1, "{log}");
    assert!(!log.contains("panicked at"), "{log}");
    assert!(!log.contains("stack backtrace"), "{log}");
    cluster.terminate(Duration::from_secs(20));

    // Process 0 killed: process 1 ends, saying why in one line, with an error status.
    let cluster = Server::start_cluster(&dir, 2, &[]);
    let process_1 = cluster.children()[0];
    kill(cluster.pid());
    // Process 1 writes to the stderr it shares with process 0.
    let said = "error: process 1: a connection to another process of the cluster closed";
    assert!(cluster.logged(said), "{}", cluster.log());
    let log = cluster.log();
    assert!(log.contains("process 1 stopped"), "{log}");
    assert!(!log.contains("panicked at"), "{log}");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(format!("/proc/{process_1}/stat"))
        .is_ok_and(|stat| !stat.contains(") Z "))
    {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "process 1 lives on"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `signal` (`-KILL`, `-STOP`, `-CONT`) to process `pid`.
fn signal(pid: u32, signal: &str) {
    let sent = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

/// Waits until every thread of process `pid` is stopped. A stop signal is sent to one
/// thread, which stops the others only once it is scheduled; on a loaded machine the
/// others go on meanwhile, and may still answer a request sent after `kill` returned.
fn await_stopped(pid: u32) {
    let started = std::time::Instant::now();
    loop {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
        let running = tasks.filter_map(Result::ok).any(|task| {
            std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
                // The state is the field after the command name, which ends at the last ')'.
                let state = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
                !state.starts_with('T') && !state.starts_with('t')
            })
        });
        if !running {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "process {pid} did not stop"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A process of the cluster stopped (SIGSTOP: its connections stay open and its kernel
/// answers keepalive probes): the next query that needs it fails within 2 s with 503 and a
/// message that names the silent process, where it waited for its deadline before;
/// `/status` says so. Continued, the process is heard again and the cluster answers as
/// before. (q4 is first asked while the process is stopped: once answered, its records on
/// process 1 are learnt, and it needs process 1 no more.)
#[test]
fn a_stopped_process_is_found_by_its_silence_and_answers_once_continued() {
    let whole = store("cluster");
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = scratch.join("cluster-cli-stopped");
    partition(whole, 2, &dir);
    let cluster = Server::start_cluster(&dir, 2, &["--timeout", "60"]);
    let q4 = lubm_query("q4");
    let q1 = lubm_query("q1");
    let heavy = rows(&cluster, &q1);
    let process_1 = cluster.children()[0];
    signal(process_1, "-STOP");
    await_stopped(process_1);
    let stopped = std::time::Instant::now();
    let reply = cluster.query(&q4, TSV);
    let failed = stopped.elapsed();
    // Continue it whatever the assertions say: a stopped process outlives the test.
    let continued = std::panic::catch_unwind(|| {
        assert_eq!(reply.status, 503, "{}", reply.text());
        assert!(failed < Duration::from_secs(2), "failed after {failed:?}");
        assert!(
            reply
                .text()
                .contains("process 1 of the cluster has not been heard from"),
            "{}",
            reply.text()
        );
        let status = cluster.get("/status", &[]);
        assert_eq!(status.status, 503, "{}", status.text());
        let body = status.json();
        assert!(
            body["cluster"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("not been heard from")),
            "{body}"
        );
    });
    signal(process_1, "-CONT");
    if let Err(panic) = continued {
        std::panic::resume_unwind(panic);
    }
    let resumed = std::time::Instant::now();
    while cluster.get("/status", &[]).status != 200 {
        assert!(
            resumed.elapsed() < Duration::from_secs(10),
            "never heard again"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The header and q4's ten rows, as in the other tests.
    assert_eq!(rows(&cluster, &q4).len(), 11);
    assert_eq!(rows(&cluster, &q1), heavy);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The console's report lines of `script` (`N rows`, `N triples`, `answer: …`) on the
/// store at `location`, with `extra` arguments.
fn console_counts(location: &Path, extra: &[&str], script: &str) -> Vec<String> {
    use std::io::Write as _;
    let mut child = quiver()
        .arg("console")
        .arg("--location")
        .arg(location)
        .args(extra)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.ends_with(" rows") || l.ends_with(" triples") || l.contains("answer:"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_console_coordinates_a_cluster_like_the_whole_store() {
    let whole = store("cluster");
    let basic = serve_support::queries_dir().join("lubm-basic");
    let mut script = String::new();
    for q in [2, 4, 7, 8, 9, 12] {
        script.push_str(&format!(
            "sparql -f {}\n",
            basic.join(format!("q{q}.rq")).display()
        ));
    }
    let path = serve_support::queries_dir().join("lubm-sparql11/path1.rq");
    script.push_str(&format!("sparql -f {}\n", path.display()));
    script.push_str(
        "DESCRIBE ?x WHERE { ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#name> \"Course0\" }\n\n",
    );
    script.push_str("quit\n");
    let expected = console_counts(whole, &[], &script);
    assert_eq!(expected.len(), 8, "{expected:?}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cluster-console");
    partition(whole, 2, &dir);
    let got = console_counts(&dir, &["--processes", "2"], &format!("stats\n{script}"));
    assert_eq!(got, expected);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--accept-queries` without a cluster is refused, saying what it is for, before the store
/// is opened (it was ignored).
#[test]
fn accept_queries_without_a_cluster_is_refused() {
    let output = quiver()
        .args(["serve", "--location", "no-such-store", "--accept-queries"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--accept-queries is for a process of a cluster"),
        "{stderr}"
    );
}
