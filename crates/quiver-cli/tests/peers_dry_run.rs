//! `bench/peers/peers.py --dry-run`: the command lines that install, load and serve each
//! peer (Oxigraph, Virtuoso, Jena) and run the workloads against it, checked without
//! running them (the real run installs servers, which CI does not). Every flag the script
//! passes to `quiver` must be one the command takes, so the script and the CLI cannot drift
//! apart unnoticed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn dry_run(args: &[&str]) -> Output {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("peers-dry-run");
    Command::new(python)
        .arg(root().join("bench/peers/peers.py"))
        .args([
            "--dry-run",
            "--quiver",
            env!("CARGO_BIN_EXE_quiver"),
            "--work",
        ])
        .arg(&work)
        .args(args)
        .output()
        .expect("python3 runs")
}

fn stdout(output: &Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The `quiver` command lines printed, as argument lists after the binary.
fn quiver_commands(text: &str) -> Vec<Vec<String>> {
    let binary = env!("CARGO_BIN_EXE_quiver");
    text.lines()
        .filter_map(|line| line.strip_prefix("+ "))
        .filter_map(|line| line.strip_prefix(binary))
        .map(|rest| {
            rest.split("   #")
                .next()
                .unwrap()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Panics unless every `--flag` of `command` is in the help of its subcommand.
fn assert_flags_exist(command: &[String]) {
    let subcommand: Vec<&str> = command
        .iter()
        .take_while(|a| !a.starts_with('-') && !a.starts_with('/'))
        .map(String::as_str)
        .collect();
    let help = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(&subcommand)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    for flag in command.iter().filter(|a| a.starts_with("--")) {
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "`quiver {}` takes no {flag}",
            subcommand.join(" ")
        );
    }
}

#[test]
fn the_bsbm_run_installs_loads_serves_and_checks_every_peer() {
    let text = stdout(&dry_run(&["--bsbm", "100", "--memory-gib", "16"]));
    for engine in ["quiver", "oxigraph", "virtuoso", "jena"] {
        assert!(text.contains(&format!("== {engine}\n")), "{text}");
    }
    for expected in [
        "gen bsbm --products 100 --forward-chaining --output",
        // Oxigraph's own server from crates.io.
        "cargo install oxigraph-cli --locked --root",
        "oxigraph load --location",
        "oxigraph optimize --location",
        "oxigraph serve-read-only --location",
        // Virtuoso as its documentation recommends for 16 GB.
        "NumberOfBuffers 1360000, MaxDirtyBuffers 1020000",
        "ResultSetMaxRows 1000000000",
        "virtuoso-t +configfile",
        "ld_dir(",
        "exec=rdf_loader_run();",
        "exec=checkpoint;",
        // Jena: TDB2's parallel loader, its statistics, Fuseki.
        "tdb2.tdbloader --loader=parallel --loc",
        "tdb2.tdbstats --loc",
        "org.apache.jena.fuseki.main.cmds.FusekiMainCmd --port",
    ] {
        assert!(text.contains(expected), "no `{expected}` in\n{text}");
    }
    // Two mixes × two client counts per engine; the peers' rows checked against Quiver's.
    assert_eq!(
        text.matches(" bench bsbm --products 100 ").count(),
        16,
        "{text}"
    );
    assert_eq!(text.matches("--expect ").count(), 12, "{text}");
    assert!(text.contains("/ds/query --mix explore"), "{text}");
    assert!(text.contains(":7410/sparql --mix bi"), "{text}");
    let commands = quiver_commands(&text);
    // gen, load, serve, and the 16 benchmark runs.
    assert_eq!(commands.len(), 19, "{commands:?}");
    for command in &commands {
        assert_flags_exist(command);
    }
}

#[test]
fn the_lubm_run_sends_the_lubm_and_analytics_queries() {
    let text = stdout(&dry_run(&[
        "--lubm",
        "1",
        "--engines",
        "jena,quiver",
        "--runs",
        "3",
        "--analytics-runs",
        "1",
    ]));
    // Quiver first, whatever the order asked.
    assert!(text.find("== quiver").unwrap() < text.find("== jena").unwrap());
    // The analytics set takes its own number of runs.
    assert_eq!(text.matches("lubm-basic --endpoint").count(), 2, "{text}");
    for line in text.lines().filter(|l| l.contains("queries/lubm-basic")) {
        assert!(line.contains("--runs 3 "), "{line}");
    }
    for line in text
        .lines()
        .filter(|l| l.contains("queries/lubm-analytics"))
    {
        assert!(line.contains("--runs 1 "), "{line}");
    }
    assert!(
        text.contains("gen lubm --universities 1 --output"),
        "{text}"
    );
    assert_eq!(
        text.matches("queries/lubm-analytics --endpoint").count(),
        2,
        "{text}"
    );
    for command in &quiver_commands(&text) {
        assert_flags_exist(command);
    }
}

#[test]
fn unknown_engines_are_refused() {
    let output = dry_run(&["--bsbm", "10", "--engines", "quiver,graphdb"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("unknown engines: graphdb"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_bi_mix_takes_its_own_runs_clients_and_warm_up() {
    let text = stdout(&dry_run(&[
        "--bsbm",
        "100",
        "--engines",
        "quiver",
        "--bi-runs",
        "3",
        "--bi-clients",
        "1",
        "--bi-warmup",
        "0",
    ]));
    for clients in ["1", "2"] {
        assert!(
            text.contains(&format!(
                "--mix explore --clients {clients} --runs 20 --warmup 5 "
            )),
            "{text}"
        );
    }
    assert!(
        text.contains("--mix bi --clients 1 --runs 3 --warmup 0 "),
        "{text}"
    );
    assert!(!text.contains("--mix bi --clients 2"), "{text}");
}
