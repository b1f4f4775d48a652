//! `--device` as a user meets it: without a GPU, `gpu` is a clear error and `auto` falls
//! back to the CPU and says so; with the device path run on the host backend
//! (`QUIVER_DEVICE_BACKEND=host`, the kernels compiled for the CPU), `query`, `console`
//! and `bench lubm` send steps to it and give the CPU's rows.

use crate::temp_dir;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use temp_dir::TempDir;

fn quiver() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quiver"));
    command.env_remove("QUIVER_DEVICE_BACKEND");
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn lubm1(dir: &TempDir) -> std::path::PathBuf {
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--lubm", "1", "--location"])
        .arg(&store)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    store
}

fn q(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../queries/lubm-basic/{name}.rq"))
}

fn query(store: &Path, name: &str, device: &[&str], host: bool) -> Output {
    query_file(store, &q(name), device, host)
}

fn query_file(store: &Path, file: &Path, device: &[&str], host: bool) -> Output {
    let mut command = quiver();
    command
        .args([
            "query",
            "--results-format",
            "tsv",
            "--explain",
            "--location",
        ])
        .arg(store)
        .arg("--query-file")
        .arg(file)
        .args(device);
    if host {
        command.env("QUIVER_DEVICE_BACKEND", "host");
    }
    command.output().unwrap()
}

/// The TSV rows, sorted.
fn rows(output: &Output) -> Vec<String> {
    let mut rows: Vec<String> = text(&output.stdout).lines().map(str::to_owned).collect();
    rows.sort();
    rows
}

#[test]
fn without_a_gpu_device_gpu_is_an_error_and_auto_runs_on_the_cpu() {
    let dir = TempDir::new("no-gpu");
    let store = lubm1(&dir);
    let cpu = query(&store, "q7", &[], false);
    assert!(cpu.status.success());

    let gpu = query(&store, "q7", &["--device", "gpu"], false);
    assert_eq!(gpu.status.code(), Some(1));
    let message = text(&gpu.stderr);
    assert!(
        message.starts_with("error: --device gpu: no GPU available"),
        "{message}"
    );
    assert!(!message.contains("panicked"), "{message}");
    assert!(gpu.stdout.is_empty());

    let auto = query(&store, "q7", &["--device", "auto"], false);
    assert!(auto.status.success(), "{}", text(&auto.stderr));
    assert!(text(&auto.stderr).contains("--device auto: no GPU available"));
    assert!(text(&auto.stderr).contains("running on the CPU"));
    assert_eq!(rows(&auto), rows(&cpu));
    assert!(!text(&auto.stderr).contains("(device)"));

    let devices = quiver().args(["info", "--devices"]).output().unwrap();
    assert!(devices.status.success());
    assert!(!text(&devices.stdout).trim().is_empty());
}

#[test]
fn query_sends_heavy_steps_to_the_device_and_gives_the_cpu_rows() {
    let dir = TempDir::new("query");
    let store = lubm1(&dir);
    for name in ["q1", "q2", "q7", "q8", "q12"] {
        let cpu = query(&store, name, &[], false);
        let device = query(
            &store,
            name,
            &["--device", "gpu", "--gpu-min-work", "1"],
            true,
        );
        assert!(device.status.success(), "{name}: {}", text(&device.stderr));
        assert_eq!(rows(&device), rows(&cpu), "{name}");
        let explain = text(&device.stderr);
        assert!(explain.contains("graph index resident"), "{explain}");
        if name != "q1" {
            // q1 is empty on LUBM-1 before any step reaches the device.
            assert!(explain.contains("(device)"), "{name}: {explain}");
            assert!(explain.contains("ran on host"), "{name}: {explain}");
        }
    }
    // A chain with a check at its end, and a filter the CPU applies to the device's rows.
    let chain = dir.file(
        "chain.rq",
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
         SELECT ?x ?c ?t WHERE {
           ?x a ub:GraduateStudent . ?x ub:takesCourse ?c . ?t ub:teacherOf ?c .
           ?t ub:worksFor ?d . ?x ub:memberOf ?d
           FILTER (?c != <http://www.Department0.University0.edu/GraduateCourse0>)
         }",
    );
    let cpu = query_file(&store, &chain, &[], false);
    let device = query_file(
        &store,
        &chain,
        &["--device", "gpu", "--gpu-min-work", "1"],
        true,
    );
    assert!(device.status.success(), "{}", text(&device.stderr));
    assert!(rows(&cpu).len() > 100);
    assert_eq!(rows(&device), rows(&cpu));
    assert!(text(&device.stderr).contains("(device)"));
    // Above every step's work, nothing goes to the device.
    let light = query(
        &store,
        "q7",
        &["--device", "gpu", "--gpu-min-work", "1000000000"],
        true,
    );
    assert!(light.status.success());
    assert!(!text(&light.stderr).contains("(device)"));
}

#[test]
fn the_console_switches_devices() {
    let dir = TempDir::new("console");
    let store = lubm1(&dir);
    let script = format!(
        "config device gpu\nsparql -f {} --explain\nconfig device cpu\nsparql -f {} --explain\nconfig device tpu\n",
        q("q7").display(),
        q("q7").display()
    );
    let mut child = quiver()
        .args([
            "console",
            "--threads",
            "2",
            "--gpu-min-work",
            "1",
            "--location",
        ])
        .arg(&store)
        .env("QUIVER_DEVICE_BACKEND", "host")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let out = text(&output.stdout) + &text(&output.stderr);
    assert!(out.contains("device       gpu (host"), "{out}");
    assert!(out.contains("device       cpu"), "{out}");
    let first = out.find("device       cpu").unwrap();
    assert!(out[..first].contains("(device)"), "{out}");
    assert!(!out[first..].contains("(device)"), "{out}");
    assert!(
        out.contains("device is cpu, gpu or auto, not `tpu`"),
        "{out}"
    );
}

#[test]
fn bench_lubm_compares_the_device_with_the_cpu() {
    let dir = TempDir::new("bench");
    let json = dir.join("bench.json");
    let output = quiver()
        .args([
            "bench",
            "lubm",
            "-u",
            "1",
            "--runs",
            "1",
            "--threads",
            "2",
            "--device",
            "gpu",
            "--gpu-min-work",
            "100",
            "--gpu-sweep",
            "1,1000000",
            "--cache",
        ])
        .arg(dir.join("cache"))
        .arg("--json")
        .arg(&json)
        .env("QUIVER_DEVICE_BACKEND", "host")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let stdout = text(&output.stdout);
    assert!(stdout.contains("rows checked equal"), "{stdout}");
    assert!(stdout.contains("GPU exec ms, work ≥ 1 |"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let queries = report["gpu"].as_array().unwrap();
    assert_eq!(queries.len(), 15);
    assert!(queries.iter().any(|q| q["on_gpu"] == true), "{report}");
    assert!(queries.iter().all(|q| q["gpu_exec_median_us_by_min_work"]
        .as_array()
        .unwrap()
        .len()
        == 2));
}

#[test]
fn bench_kv_on_the_gpu_needs_a_store_and_a_gpu() {
    let no_store = quiver()
        .args(["bench", "kv", "--engine", "gpu"])
        .output()
        .unwrap();
    assert_eq!(no_store.status.code(), Some(1));
    assert!(
        text(&no_store.stderr).contains("give --lubm N or --location DIR"),
        "{}",
        text(&no_store.stderr)
    );
    let no_gpu = quiver()
        .args(["bench", "kv", "--engine", "gpu", "--lubm", "1"])
        .output()
        .unwrap();
    assert_eq!(no_gpu.status.code(), Some(1));
    let message = text(&no_gpu.stderr);
    assert!(message.contains("error: --engine gpu"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}
