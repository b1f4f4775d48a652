//! Limits on the command line: values out of range are usage errors (exit 2) naming the
//! flag and the accepted range, for every subcommand that takes them; `quiver serve`'s
//! default limits (60 s, ten million rows, a quarter of physical memory, read here from
//! `/proc/meminfo`) and their overrides, as `/status` reports them; the console's
//! settings; and a burst of clients that the admission queue serves instead of refusing.

use crate::serve_support;

use std::process::Output;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serve_support::{quiver, store, Server};

fn lubm() -> &'static std::path::Path {
    store("limits")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_usage_error(output: &Output, needles: &[&str]) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in: {message}");
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Physical memory, read independently of the CLI.
fn mem_total() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo (Linux)");
    let line = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .expect("a MemTotal line");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("MemTotal in kB");
    kib * 1024
}

#[test]
fn out_of_range_values_are_usage_errors_naming_the_flag_and_range() {
    let location = lubm().to_str().unwrap().to_owned();
    let max_threads = (4 * cores()).max(8);
    let too_many = (max_threads + 1).to_string();
    let range = format!("from 1 to {max_threads}");
    let cases: Vec<(Vec<&str>, &str, &str)> = vec![
        (
            vec!["serve", "--timeout", "-1"],
            "--timeout",
            "at most 31536000",
        ),
        (
            vec!["serve", "--timeout", "NaN"],
            "--timeout",
            "at most 31536000",
        ),
        (
            vec!["serve", "--timeout", "1e300"],
            "--timeout",
            "at most 31536000",
        ),
        (
            vec!["serve", "--send-timeout", "0"],
            "--send-timeout",
            "above 0",
        ),
        (
            vec!["serve", "--send-timeout", "-5"],
            "--send-timeout",
            "above 0",
        ),
        (
            vec!["serve", "--queue-timeout", "inf"],
            "--queue-timeout",
            "at most",
        ),
        (vec!["serve", "--max-memory", "-1G"], "--max-memory", ""),
        (
            vec!["serve", "--max-memory", "4X"],
            "--max-memory",
            "such as 512M",
        ),
        (
            vec!["serve", "--max-results", "-3"],
            "--max-results",
            "whole number",
        ),
        (
            vec!["serve", "--max-body-bytes", "0"],
            "--max-body-bytes",
            "above 0",
        ),
        (vec!["serve", "--threads", &too_many], "--threads", &range),
        (vec!["serve", "--threads", "0"], "--threads", &range),
        (
            vec!["query", "--query", "ASK {}", "--max-memory", "lots"],
            "--max-memory",
            "such as 512M",
        ),
        (
            vec!["query", "--query", "ASK {}", "--threads", "4096"],
            "--threads",
            &range,
        ),
        (vec!["console", "--timeout", "-2"], "--timeout", "at most"),
        (vec!["console", "--threads", &too_many], "--threads", &range),
        (
            vec!["load", "--lubm", "1", "--threads", &too_many],
            "--threads",
            &range,
        ),
        (
            vec!["gen", "lubm", "--threads", &too_many],
            "--threads",
            &range,
        ),
        (
            vec!["bench", "emulate", "--duration", "-1"],
            "--duration",
            "above 0",
        ),
        (
            vec!["bench", "emulate", "--duration", "1e20"],
            "--duration",
            "at most",
        ),
    ];
    for (args, flag, range) in cases {
        let mut command = quiver();
        command.args(&args);
        if args[0] != "gen" {
            command.args(["--location", &location]);
        }
        let output = command.output().expect("quiver runs");
        assert_usage_error(&output, &[flag, range]);
    }
}

#[test]
fn serve_limits_default_to_a_minute_ten_million_rows_and_a_quarter_of_memory() {
    let server = Server::start(lubm(), &[]);
    let limits = &server.status()["limits"];
    assert_eq!(limits["timeout_seconds"], 60.0, "{limits}");
    assert_eq!(limits["max_results"], 10_000_000, "{limits}");
    assert_eq!(limits["max_memory_bytes"], mem_total() / 4, "{limits}");
    assert_eq!(limits["queue_timeout_seconds"], 0.5, "{limits}");
    assert!(
        server.logged("limits: timeout 60s, max-results 10000000"),
        "{}",
        server.log()
    );
    drop(server);

    // Each is overridden, and `none`/`0` removes it.
    let server = Server::start(
        lubm(),
        &[
            "--timeout",
            "none",
            "--max-results",
            "0",
            "--max-memory",
            "1.5GiB",
            "--queue-timeout",
            "250ms",
        ],
    );
    let limits = &server.status()["limits"];
    assert!(limits["timeout_seconds"].is_null(), "{limits}");
    assert!(limits["max_results"].is_null(), "{limits}");
    assert_eq!(limits["max_memory_bytes"], 3u64 << 29, "{limits}");
    assert_eq!(limits["queue_timeout_seconds"], 0.25, "{limits}");
    drop(server);

    let server = Server::start(lubm(), &["--max-memory", "off"]);
    assert!(server.status()["limits"]["max_memory_bytes"].is_null());
}

/// 64 clients send a light query at the same moment to a server with two workers: the
/// queue holds them and each is answered, none refused.
#[test]
fn a_burst_of_light_queries_is_served_not_refused() {
    let server = Server::start(lubm(), &["--threads", "2"]);
    let clients = 64;
    let barrier = Arc::new(Barrier::new(clients));
    let handles: Vec<_> = (0..clients)
        .map(|_| {
            let address = server.address.clone();
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                serve_support::request(
                    &address,
                    "GET",
                    &format!("/query?query={}", serve_support::encode("ASK { ?s ?p ?o }")),
                    &[("Accept", "text/csv")],
                    b"",
                )
            })
        })
        .collect();
    for handle in handles {
        let reply = handle.join().unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.text(), "true");
    }
    assert!(server.wait_for("in_flight", 0, Duration::from_secs(10)));
    let status = server.status();
    assert_eq!(status["queries_rejected"], 0, "{status}");
    assert_eq!(status["queries_served"], clients as u64, "{status}");
    assert_eq!(status["queued"], 0, "{status}");
}

#[test]
fn the_console_sets_and_shows_every_limit() {
    let mut child = quiver()
        .args([
            "console",
            "--max-memory",
            "512M",
            "--timeout",
            "2",
            "--location",
        ])
        .arg(lubm())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"config\n\
              config max-memory 1.5G\n\
              config max-memory off\n\
              config max-memory lots\n\
              config timeout -1\n\
              config threads 100000\n\
              sparql -f /dev/null -m 100000\n",
        )
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    let err = stderr(&output);
    assert!(out.contains("max-memory   512 MiB"), "{out}");
    assert!(out.contains("timeout      2 s"), "{out}");
    assert!(out.contains("max-memory   1.5 GiB"), "{out}");
    assert!(out.contains("max-memory   off"), "{out}");
    assert!(err.contains("config: max-memory must be a size"), "{err}");
    assert!(
        err.contains("config: timeout must be a number of seconds"),
        "{err}"
    );
    let range = format!("from 1 to {}", (4 * cores()).max(8));
    assert!(
        err.contains(&format!("config: threads must be a whole number {range}")),
        "{err}"
    );
    assert!(
        err.contains(&format!("sparql: -m must be a whole number {range}")),
        "{err}"
    );
    assert!(err.contains("4 command(s) failed"), "{err}");
    assert_eq!(output.status.code(), Some(1));
}
