//! `quiver bench bsbm` as a user runs it on a generated dataset: in process and over HTTP
//! against `quiver serve` with the same rows query by query (`--expect`), its failure when
//! rows differ or when the dataset is not the one named, its JSON, CSV and query file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const PRODUCTS: &str = "300";

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-bsbm-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn run_ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    output
}

fn bench(store: &Path) -> Command {
    let mut command = quiver();
    command
        .args(["bench", "bsbm", "--products", PRODUCTS, "--location"])
        .arg(store);
    command
}

/// A server on a free port for `store`, killed when dropped.
struct Server(std::process::Child, u16);

impl Server {
    fn start(store: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = quiver()
            .args([
                "serve",
                "--bind",
                &format!("127.0.0.1:{port}"),
                "--location",
            ])
            .arg(store)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed().as_secs() < 30, "the server did not start");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        Self(child, port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn bench_bsbm_runs_both_mixes_in_process_and_over_http_with_the_same_rows() {
    let dir = temp_dir("mixes");
    let data = dir.join("bsbm.nt");
    run_ok(
        quiver()
            .args(["gen", "bsbm", "--products", PRODUCTS, "--forward-chaining"])
            .arg("--output")
            .arg(&data),
    );
    let store = dir.join("store");
    run_ok(
        quiver()
            .arg("load")
            .arg(&data)
            .arg("--location")
            .arg(&store),
    );

    let (json, csv) = (dir.join("quiver.json"), dir.join("quiver.csv"));
    let output = run_ok(
        bench(&store)
            .args([
                "--mix",
                "both",
                "--runs",
                "2",
                "--warmup",
                "1",
                "--clients",
                "2",
            ])
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(&csv),
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains("BSBM explore (quiver): 2 clients, 2 mixes"),
        "{text}"
    );
    assert!(text.contains("QMpH") && text.contains("bi-q8"), "{text}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let use_cases = report["use_cases"].as_array().unwrap();
    assert_eq!(use_cases.len(), 2);
    for (use_case, queries, templates) in [(&use_cases[0], 50, 11), (&use_cases[1], 30, 8)] {
        assert!(use_case["qmph"].as_f64().unwrap() > 0.0, "{use_case}");
        assert_eq!(
            use_case["errors"].as_array().unwrap().len(),
            0,
            "{use_case}"
        );
        let rows: Vec<u64> = use_case["queries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| q[4].as_u64().unwrap())
            .collect();
        assert_eq!(rows.len(), queries);
        assert!(
            rows.iter().filter(|&&r| r > 0).count() > queries / 2,
            "{rows:?}"
        );
        let templates_seen = use_case["templates"].as_array().unwrap();
        assert_eq!(templates_seen.len(), templates);
        let counted: u64 = templates_seen
            .iter()
            .map(|t| t["count"].as_u64().unwrap())
            .sum();
        assert_eq!(counted, queries as u64);
    }
    let lines = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(lines.lines().count(), 1 + 11 + 8, "{lines}");
    assert!(lines.starts_with("engine,use_case,clients,qmph,template"));

    // The same mixes over HTTP, one client: the same rows, query by query.
    let server = Server::start(&store);
    let endpoint = format!("http://127.0.0.1:{}/query", server.1);
    let output = run_ok(
        quiver()
            .args(["bench", "bsbm", "--products", PRODUCTS, "--mix", "both"])
            .args(["--runs", "2", "--warmup", "0", "--label", "http"])
            .args(["--endpoint", &endpoint, "--expect"])
            .arg(&json),
    );
    assert!(
        stderr(&output).contains("rows of all 72 queries equal quiver's (8 DESCRIBE"),
        "{}",
        stderr(&output)
    );
    drop(server);

    // One row count changed: the check names that query.
    let mut tampered = report.clone();
    let first = &mut tampered["use_cases"][0]["queries"][0];
    first[4] = Value::from(first[4].as_u64().unwrap() + 1);
    let wrong = dir.join("tampered.json");
    std::fs::write(&wrong, tampered.to_string()).unwrap();
    let output = bench(&store)
        .args(["--runs", "2", "--warmup", "0", "--expect"])
        .arg(&wrong)
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("1 of 42 queries differ in rows")
            && stderr(&output).contains("explore mix 0 query 0 (explore-q1)"),
        "{}",
        stderr(&output)
    );

    // Other parameters than the expected run's: refused, not compared.
    let output = bench(&store)
        .args([
            "--runs",
            "1",
            "--warmup",
            "0",
            "--driver-seed",
            "7",
            "--expect",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("another query there"),
        "{}",
        stderr(&output)
    );

    // A dataset of other products than named: refused before any query.
    let output = quiver()
        .args(["bench", "bsbm", "--products", "301", "--location"])
        .arg(&store)
        .output()
        .unwrap();
    assert_ne!(output.status.code(), Some(0));
    assert!(
        stderr(&output).contains("not BSBM's dataset of 301 products"),
        "{}",
        stderr(&output)
    );

    // The queries themselves, for `bench log` or another tool.
    let queries = dir.join("queries.json");
    run_ok(
        quiver()
            .args(["bench", "bsbm", "--products", PRODUCTS, "--runs", "2"])
            .arg("--write-queries")
            .arg(&queries),
    );
    let list: Vec<Value> = serde_json::from_slice(&std::fs::read(&queries).unwrap()).unwrap();
    assert_eq!(list.len(), 50);
    assert_eq!(list[0]["name"], "explore-q1 mix 0 #0");
    assert!(list[0]["query"]
        .as_str()
        .unwrap()
        .contains("bsbm:productFeature <http"));
    let _ = std::fs::remove_dir_all(&dir);
}
