//! `quiver serve` as an operator runs it: JSON logs and the slow-query log, a config file
//! (precedence and every error), several datasets in one server, backups taken during a
//! stream of updates, compaction during queries, `/metrics` read by Prometheus's own
//! parser, and the generated completions and manual pages.

use crate::serve_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serve_support::{encode, lubm_query, quiver, small_store, store, Reply, Server};

fn lubm() -> &'static Path {
    store("ops")
}

const FORM: (&str, &str) = ("Content-Type", "application/x-www-form-urlencoded");
const UB: &str = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";

fn assert_status(reply: &Reply, status: u16) {
    assert_eq!(reply.status, status, "body: {}", reply.text());
}

/// A scratch directory of this test binary.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("serve-ops-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn count(server: &Server, prefix: &str) -> u64 {
    let reply = server.get(
        &format!(
            "{prefix}/query?query={}",
            encode("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
        ),
        &[("Accept", "text/csv")],
    );
    assert_status(&reply, 200);
    reply.text().lines().nth(1).unwrap().trim().parse().unwrap()
}

fn update(server: &Server, prefix: &str, update: &str) -> Reply {
    server.post(
        &format!("{prefix}/update"),
        &[FORM],
        format!("update={}", encode(update)).as_bytes(),
    )
}

/// The JSON objects of the server's log (every line must be one).
fn json_lines(server: &Server) -> Vec<serde_json::Value> {
    server
        .log()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

#[test]
fn json_logs_are_one_object_per_line_and_the_slow_query_log_takes_slow_queries_only() {
    let server = Server::start(
        lubm(),
        &[
            "--log-format",
            "json",
            "--slow-query",
            "250",
            "--threads",
            "2",
        ],
    );
    let q5 = lubm_query("q5");
    assert_status(&server.query(&q5, "text/csv"), 200);
    let slow = format!("{UB} SELECT (COUNT(*) AS ?n) {{ ?a a ub:FullProfessor . ?b ?p ?c }}");
    let reply = server.query(&slow, "text/csv");
    assert_status(&reply, 200);
    let id: u64 = reply.header("x-request-id").unwrap().parse().unwrap();
    assert!(server.logged("\"target\":\"quiver::slow\""));
    // The access line is written once the body has gone out, maybe after the reply is read.
    assert!(server.logged(&format!("\"id\":{id},\"peer\"")));
    let lines = json_lines(&server);
    let access: Vec<_> = lines
        .iter()
        .filter(|line| line["target"] == "quiver::access")
        .collect();
    assert_eq!(access.len(), 2, "{lines:?}");
    for line in &access {
        for field in [
            "timestamp",
            "level",
            "id",
            "method",
            "path",
            "dataset",
            "status",
            "ms",
            "bytes",
            "rows",
            "form",
        ] {
            assert!(!line[field].is_null(), "{field} missing in {line}");
        }
        assert_eq!(line["form"], "select");
        assert_eq!(line["dataset"], "default");
        // The query's text is not in the access log.
        assert!(!line.to_string().contains("SELECT"), "{line}");
    }
    assert_eq!(access[0]["rows"], 10, "LUBM-1 q5 has 10 research groups");
    assert_eq!(access[1]["id"], id);
    assert_eq!(access[1]["rows"], 1);
    assert!(access[1]["bytes"].as_u64().unwrap() > 2);
    let slow_lines: Vec<_> = lines
        .iter()
        .filter(|line| line["target"] == "quiver::slow")
        .collect();
    assert_eq!(slow_lines.len(), 1, "only the slow query: {slow_lines:?}");
    assert_eq!(slow_lines[0]["message"], "slow query");
    let logged = slow_lines[0];
    assert_eq!(logged["id"], id);
    assert_eq!(logged["level"], "WARN");
    assert!(logged["query"].as_str().unwrap().contains("FullProfessor"));
    assert!(logged["ms"].as_f64().unwrap() >= 250.0, "{logged}");
    let plan = logged["plan"].as_str().unwrap();
    assert!(
        plan.starts_with("SELECT ") && plan.contains("BGP/2"),
        "{plan}"
    );
    // The startup lines are JSON too.
    assert!(lines.iter().any(|line| line["message"]
        .as_str()
        .is_some_and(|m| m.starts_with("listening on http://"))));
}

#[test]
fn log_levels_come_from_the_flag_or_rust_log() {
    // WARN and above only: no access lines.
    let quiet = Server::start(lubm(), &["--log-level", "warn"]);
    assert_status(&quiet.query("ASK {}", ""), 200);
    let loud = Server::start_with_env(lubm(), &[], &[("RUST_LOG", "debug")]);
    assert_status(&loud.query("ASK { ?s ?p ?o }", ""), 200);
    // DEBUG (from RUST_LOG) shows the query's text, under its own target.
    assert!(loud.logged("quiver::query"), "{}", loud.log());
    assert!(loud.logged("query=ASK { ?s ?p ?o }"), "{}", loud.log());
    assert!(!quiet.log().contains("quiver::access"), "{}", quiet.log());
    assert!(!quiet.log().contains("path=/query"), "{}", quiet.log());
    let bad = quiver()
        .args(["serve", "--location"])
        .arg(lubm())
        .args(["--log-level", "loud=="])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--log-level"));
}

/// Writes `text` as a config file in `dir`.
fn config_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("quiver.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn flags_override_the_config_file_which_overrides_the_defaults() {
    let dir = scratch("precedence");
    let file = config_file(
        &dir,
        &format!(
            "# the server\nlocation = {:?}\nthreads = 3\ntimeout = \"7s\"\nmax-results = 5\n\
             queue = 9\nbind = \"127.0.0.1:1\"\n",
            lubm().display().to_string()
        ),
    );
    let server =
        Server::start_without_location(&["--config", file.to_str().unwrap(), "--threads", "2"]);
    let limits = &server.status()["limits"];
    assert_eq!(limits["threads"], 2, "the flag wins");
    assert_eq!(
        limits["timeout_seconds"], 7.0,
        "the file wins over the default"
    );
    assert_eq!(limits["max_results"], 5);
    assert_eq!(limits["queue"], 9);
    // The default where neither says: 1 MiB bodies.
    assert_eq!(limits["max_body_bytes"], 1 << 20);
    // The file's result cap holds.
    assert_status(&server.query("SELECT * { ?s ?p ?o }", ""), 422);
}

#[test]
fn config_file_errors_name_the_key_and_line() {
    let dir = scratch("errors");
    let location = format!("location = {:?}\n", lubm().display().to_string());
    let fails = |text: &str, expected: &[&str]| {
        let path = config_file(&dir, text);
        let mut child = quiver()
            .args(["serve", "--config"])
            .arg(&path)
            .args(["--bind", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A file accepted by mistake would start a server that never ends.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{text:?} was accepted: the server started");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{text:?} was accepted");
        for part in expected {
            assert!(stderr.contains(part), "{text:?}: {part:?} not in {stderr}");
        }
    };
    fails(
        &format!("{location}\nthreds = 2\n"),
        &["line 3", "unknown key `threds`", "threads"],
    );
    fails(
        &format!("{location}threads = 0\n"),
        &["line 2", "`threads` = \"0\""],
    );
    fails(
        &format!("{location}writable = \"yes\"\n"),
        &["line 2", "`writable` takes true or false"],
    );
    fails(
        &format!("{location}timeout = \"soon\"\n"),
        &["line 2", "`timeout`"],
    );
    fails(
        &format!("{location}bind = [\"a\"]\n"),
        &["line 2", "takes one value"],
    );
    fails(
        &format!("{location}threads = \n"),
        &["quiver.toml", "line 2"],
    );
    fails(
        &format!("{location}[datasets.b]\nwritable = true\n"),
        &["line 2", "[datasets.b] has no location"],
    );
    fails(
        &format!("{location}[datasets.b]\nlocation = \"/x\"\ncolour = \"red\"\n"),
        &["line 4", "unknown key `colour` in [datasets.b]"],
    );
    fails(
        &format!("{location}[datasets.b]\nlocation = \"/x\"\ntimeout = \"x\"\n"),
        &["line 4", "datasets.b.timeout"],
    );
    fails(
        &format!("{location}[datasets.\"a b\"]\nlocation = \"/x\"\n"),
        &["line 2", "dataset name"],
    );
    fails(
        &format!("{location}[datasets.query]\nlocation = \"/x\"\n"),
        &["one of the server's routes"],
    );
    fails(
        &format!("{location}[datasets.default]\nlocation = \"/x\"\n"),
        &["default", "--location"],
    );
    // A missing file.
    let output = quiver()
        .args(["serve", "--config", "/nonexistent/quiver.toml"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read the config file"));
    // The example file of the repository parses (its stores are not here).
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/quiver.toml");
    let output = quiver()
        .args(["serve", "--config"])
        .arg(&example)
        .args(["--location", "/nonexistent-store", "--bind", "127.0.0.1:0"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot open the store at /nonexistent"),
        "{stderr}"
    );
}

#[test]
fn two_datasets_each_answer_their_own_data_one_writable_one_not() {
    let dir = scratch("datasets");
    let small = small_store("ops-datasets", "<http://e/s> <http://e/p> \"one\" .\n");
    let fresh = dir.join("fresh");
    let file = config_file(
        &dir,
        &format!(
            "log-format = \"json\"\n[datasets.w]\nlocation = {:?}\nwritable = true\ncreate = true\n",
            fresh.display().to_string()
        ),
    );
    let small_arg = format!("small={}", small.display());
    let server = Server::start(
        lubm(),
        &["--config", file.to_str().unwrap(), "--dataset", &small_arg],
    );
    let triples = count(&server, "");
    assert!(triples > 100_000);
    assert_eq!(count(&server, "/default"), triples);
    assert_eq!(count(&server, "/small"), 1);
    assert_eq!(count(&server, "/w"), 0);
    // Writes: only the writable dataset takes them.
    assert_status(
        &update(
            &server,
            "/w",
            "INSERT DATA { <http://e/a> <http://e/b> 1, 2 }",
        ),
        200,
    );
    assert_status(
        &update(&server, "", "INSERT DATA { <http://e/a> <http://e/b> 1 }"),
        403,
    );
    assert_status(
        &update(
            &server,
            "/small",
            "INSERT DATA { <http://e/a> <http://e/b> 1 }",
        ),
        403,
    );
    assert_eq!(count(&server, "/w"), 2);
    assert_eq!(count(&server, ""), triples);
    // A graph named by its URL under the dataset's routes keeps the dataset's prefix.
    let put = serve_support::request(
        &server.address,
        "PUT",
        "/w/store/people",
        &[("Content-Type", "text/turtle")],
        b"<http://e/x> <http://e/y> <http://e/z> .",
    );
    assert_status(&put, 201);
    let names = server.get(
        &format!(
            "/w/query?query={}",
            encode("SELECT ?g { GRAPH ?g { ?s ?p ?o } }")
        ),
        &[("Accept", "text/csv")],
    );
    assert!(
        names
            .text()
            .contains(&format!("http://{}/w/store/people", server.address)),
        "{}",
        names.text()
    );
    let graph = server.get("/w/store?default", &[("Accept", "application/n-triples")]);
    assert_status(&graph, 200);
    assert_eq!(graph.text().lines().count(), 2);
    // The listing.
    let listed = server.get("/$/datasets", &[]).json();
    let datasets = listed["datasets"].as_array().unwrap();
    let names: Vec<_> = datasets
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "small", "w"]);
    assert_eq!(datasets[0]["path"], "/");
    assert_eq!(datasets[0]["triples"], triples);
    assert_eq!(datasets[1]["triples"], 1);
    assert_eq!(
        (&datasets[2]["triples"], &datasets[2]["writable"]),
        (&3.into(), &true.into())
    );
    assert_eq!(datasets[2]["version"], 2);
    // Each dataset's page and status.
    assert_status(&server.get("/w/", &[]), 200);
    let moved = server.get("/w", &[]);
    assert_eq!((moved.status, moved.header("location")), (308, Some("/w/")));
    assert_eq!(server.get("/small/status", &[]).json()["triples"], 1);
    assert_status(&server.get("/nope/query?query=ASK%7B%7D", &[]), 404);
    // Metrics by dataset.
    let metrics = server.get("/metrics", &[]).text();
    assert!(
        metrics.contains("quiver_store_triples{dataset=\"w\"} 3"),
        "{metrics}"
    );
    assert!(metrics.contains(
        "quiver_http_requests_total{dataset=\"w\",endpoint=\"/update\",status=\"200\"} 1"
    ));
    // Bad names from the command line.
    let output = quiver()
        .args(["serve", "--dataset", "a/b=/x"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("dataset name"));
}

#[test]
fn a_backup_during_updates_opens_at_the_version_it_reports() {
    let dir = scratch("backup");
    let location = dir.join("store");
    let backups = dir.join("backups");
    let server = Server::start(
        &location,
        &[
            "--writable",
            "--create",
            "--sync",
            "none",
            "--backup-dir",
            backups.to_str().unwrap(),
        ],
    );
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let address = server.address.clone();
    let writer = {
        let (stop, written) = (stop.clone(), written.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let body = format!(
                    "update={}",
                    encode(&format!(
                        "INSERT DATA {{ <http://e/s{n}> <http://e/p> {n} }}"
                    ))
                );
                let reply =
                    serve_support::request(&address, "POST", "/update", &[FORM], body.as_bytes());
                assert_eq!(reply.status, 200, "{}", reply.text());
                n += 1;
                written.store(n, Ordering::Relaxed);
            }
            n
        })
    };
    while written.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut reports = Vec::new();
    for _ in 0..2 {
        let reply = server.post("/$/backup/default", &[], b"");
        assert_status(&reply, 200);
        reports.push(reply.json());
        let seen = written.load(Ordering::Relaxed);
        while written.load(Ordering::Relaxed) < seen + 10 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    stop.store(true, Ordering::Relaxed);
    let total = writer.join().unwrap();
    for report in &reports {
        let version = report["version"].as_u64().unwrap();
        assert!(version >= 20 && version < total, "{report}");
        let path = PathBuf::from(report["path"].as_str().unwrap());
        assert!(path.starts_with(backups.join("default")), "{report}");
        // Update n inserted one triple and is commit n + 1: the copy holds updates 0..version.
        let output = quiver()
            .args(["query", "--results-format", "csv", "--location"])
            .arg(&path)
            .args([
                "--query",
                "SELECT (MAX(?n) AS ?last) (COUNT(*) AS ?count) { ?s ?p ?n }",
            ])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let csv = String::from_utf8_lossy(&output.stdout).replace('\r', "");
        assert_eq!(
            csv.lines().nth(1),
            Some(format!("{},{version}", version - 1).as_str()),
            "{report}"
        );
        assert_eq!(report["triples"], version);
    }
    assert!(reports[0]["version"].as_u64() < reports[1]["version"].as_u64());
    assert_eq!(count(&server, ""), total);
    // Without the loopback or the token: refused.
    let refused = server.post("/$/backup/nope", &[], b"");
    assert_status(&refused, 404);
}

#[test]
fn a_compaction_during_queries_changes_no_answer() {
    let dir = scratch("compact");
    let location = dir.join("store");
    let server = Server::start(
        &location,
        &["--writable", "--create", "--update-token", "t0ken"],
    );
    let auth = ("Authorization", "Bearer t0ken");
    for n in 0..50 {
        let body = format!(
            "update={}",
            encode(&format!(
                "INSERT DATA {{ <http://e/s{n}> <http://e/p> {n} }}"
            ))
        );
        assert_status(&server.post("/update", &[FORM, auth], body.as_bytes()), 200);
    }
    let query = "SELECT (SUM(?n) AS ?sum) (COUNT(*) AS ?count) { ?s <http://e/p> ?n }";
    let answer = server.query(query, "text/csv").text();
    assert_eq!(answer.replace('\r', "").lines().nth(1), Some("1225,50"));
    let stop = Arc::new(AtomicBool::new(false));
    let address = server.address.clone();
    let reader = {
        let (stop, answer) = (stop.clone(), answer.clone());
        std::thread::spawn(move || {
            let mut runs = 0;
            while !stop.load(Ordering::Relaxed) || runs < 20 {
                let path = format!("/query?query={}", encode(query));
                let reply =
                    serve_support::request(&address, "GET", &path, &[("Accept", "text/csv")], b"");
                assert_eq!(reply.text(), answer);
                runs += 1;
            }
            runs
        })
    };
    let before = server.get("/$/datasets", &[]).json()["datasets"][0]["log_bytes"]
        .as_u64()
        .unwrap();
    // The token is needed once the server has one, even on the loopback.
    assert_status(&server.post("/$/compact/default", &[], b""), 401);
    let reply = server.post("/$/compact/default", &[auth], b"");
    assert_status(&reply, 200);
    let report = reply.json();
    assert_eq!(report["version"], 50);
    assert!(
        report["log_bytes"].as_u64().unwrap() < before,
        "{report} after {before}"
    );
    stop.store(true, Ordering::Relaxed);
    assert!(reader.join().unwrap() >= 20);
    let metrics = server.get("/metrics", &[]).text();
    assert!(
        metrics.contains("quiver_checkpoints_total{dataset=\"default\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("quiver_commits_total{dataset=\"default\"} 50"),
        "{metrics}"
    );
    let commit_seconds = metrics
        .lines()
        .find_map(|line| line.strip_prefix("quiver_commit_seconds_total{dataset=\"default\"} "))
        .and_then(|value| value.parse::<f64>().ok());
    assert!(commit_seconds.is_some_and(|s| s > 0.0), "{metrics}");
    assert_eq!(server.query(query, "text/csv").text(), answer);
    // A read-only server has nothing to compact.
    let read_only = Server::start(lubm(), &[]);
    assert_status(&read_only.post("/$/compact/default", &[], b""), 409);
    assert_eq!(read_only.get("/$/ping", &[]).text(), "ok\n");
}

#[test]
fn metrics_parse_with_prometheus_own_parser_and_move_with_requests() {
    let server = Server::start(lubm(), &[]);
    let q5 = lubm_query("q5");
    let scrape = || server.get("/metrics", &[]).text();
    let before = scrape();
    for _ in 0..4 {
        assert_status(&server.query(&q5, "text/csv"), 200);
    }
    assert_status(&server.query("ASK { ?s ?p ?o }", ""), 200);
    let after = scrape();
    let script = r#"
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
def samples(text):
    found = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            found[f"{s.name}{{{labels}}}"] = s.value
    return found
before, after = (samples(open(path).read()) for path in sys.argv[1:3])
for key in sys.argv[3:]:
    print(key, before.get(key, 0), after.get(key, 0))
"#;
    let dir = scratch("metrics");
    std::fs::write(dir.join("before.txt"), &before).unwrap();
    std::fs::write(dir.join("after.txt"), &after).unwrap();
    let keys = [
        "quiver_http_requests_total{dataset=default,endpoint=/query,status=200}",
        "quiver_query_duration_seconds_count{dataset=default,form=select}",
        "quiver_query_duration_seconds_count{dataset=default,form=ask}",
        "quiver_query_cache_hits_total{dataset=default}",
        "quiver_store_triples{dataset=default}",
    ];
    let output = Command::new("python3")
        .args(["-c", script])
        .arg(dir.join("before.txt"))
        .arg(dir.join("after.txt"))
        .args(keys)
        .output()
        .expect("python3 runs (scripts/test installs prometheus_client)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the exposition does not parse: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let moved: Vec<(f64, f64)> = stdout
        .lines()
        .map(|line| {
            let mut parts = line.split(' ').skip(1).map(|v| v.parse::<f64>().unwrap());
            (parts.next().unwrap(), parts.next().unwrap())
        })
        .collect();
    assert_eq!(moved.len(), keys.len(), "{stdout}");
    assert_eq!(moved[0].1 - moved[0].0, 5.0, "{stdout}");
    assert_eq!(moved[1].1 - moved[1].0, 4.0, "{stdout}");
    assert_eq!(moved[2].1 - moved[2].0, 1.0, "{stdout}");
    assert!(moved[3].1 - moved[3].0 >= 3.0, "q5 prepared once: {stdout}");
    assert!(moved[4].1 > 100_000.0, "{stdout}");
}

#[test]
fn completions_and_manual_pages_are_generated() {
    for (shell, marker) in [
        ("bash", "_quiver()"),
        ("zsh", "#compdef quiver"),
        ("fish", "complete -c quiver"),
    ] {
        let output = quiver().args(["completions", shell]).output().unwrap();
        assert!(output.status.success());
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(script.contains(marker), "{shell}: {marker} missing");
        assert!(
            script.contains("slow-query") && script.contains("log-format"),
            "{shell}"
        );
    }
    let dir = scratch("man");
    let output = quiver().arg("man").arg(&dir).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let page = std::fs::read_to_string(dir.join("quiver-serve.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH quiver-serve"),
        "{page}"
    );
    assert!(page.contains("backup\\-dir"), "{page}");
    assert!(dir.join("quiver.1").exists());
}

#[test]
fn the_books_command_line_reference_is_current() {
    let page = scratch("reference").join("cli.md");
    let output = quiver()
        .args(["man", "--markdown"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let generated = std::fs::read_to_string(&page).unwrap();
    for heading in [
        "## quiver load\n",
        "## quiver serve\n",
        "## quiver bench lubm\n",
    ] {
        assert!(generated.contains(heading), "{heading}");
    }
    assert!(generated.contains("`--location <DIR>`"), "flags listed");
    let book =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference/cli.md");
    let committed = std::fs::read_to_string(&book).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/src/reference/cli.md is stale: run `quiver man --markdown docs/src/reference/cli.md`"
    );
}
