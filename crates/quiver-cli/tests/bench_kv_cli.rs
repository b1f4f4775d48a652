//! `quiver bench kv` as a user runs it: the table, the CSV, the plot, real keys of a store,
//! and clear errors for bad workloads.

use std::path::PathBuf;
use std::process::{Command, Output};

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-kv-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn kv(args: &[&str]) -> Output {
    quiver()
        .args(["bench", "kv"])
        .args(args)
        .output()
        .expect("quiver runs")
}

#[test]
fn table_csv_and_plot() {
    let dir = scratch("table");
    let (csv, png) = (dir.join("kv.csv"), dir.join("kv.png"));
    let output = kv(&[
        "--workload",
        "churn-high",
        "--workload",
        "steady-state",
        "--operations",
        "2100000",
        "--keys",
        "4096",
        "--csv",
        csv.to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let table = text(&output.stdout);
    for needle in [
        "| Workload",
        "quiver (Mops/s)",
        "quiver-vip (Mops/s)",
        "chained-vip (Mops/s)",
        "hashbrown (Mops/s)",
        "quiver x256 (Mops/s)",
        "quiver-vip x256 (Mops/s)",
        "chained x256 (Mops/s)",
        "VIP vs chained",
        "batched vs single (quiver)",
        "| churn-high",
        "| steady-state",
    ] {
        assert!(table.contains(needle), "{needle} missing from\n{table}");
    }
    assert!(
        !text(&output.stderr).contains("warning"),
        "{}",
        text(&output.stderr)
    );
    let csv = std::fs::read_to_string(&csv).expect("the CSV");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "workload,engine,batch,ops_done,ops,seconds,mops");
    // 2.1 M operations: three batches per run; five engines and three batched runs per
    // workload; two workloads.
    assert_eq!(lines.len(), 1 + 3 * 8 * 2);
    assert!(lines
        .iter()
        .any(|l| l.starts_with("steady-state,hashbrown,2,2100000,")));
    let png = std::fs::read(&png).expect("the plot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn real_keys_of_a_store() {
    let dir = scratch("real");
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--lubm", "1", "--location"])
        .arg(&store)
        .output()
        .expect("quiver runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let output = kv(&[
        "--workload",
        "read-mostly",
        "--operations",
        "200000",
        "--engine",
        "quiver,chained",
        "--batch",
        "0",
        "--location",
        store.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let stderr = text(&output.stderr);
    assert!(stderr.contains("real keys:"), "{stderr}");
    // Each run reports how the process's memory grew while the operations ran.
    assert!(stderr.contains(" MiB)"), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let table = text(&output.stdout);
    assert!(table.contains("| read-mostly") && table.contains("chained (Mops/s)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_workloads_are_clear_errors() {
    let dir = scratch("errors");
    let file = dir.join("bad.workload");
    std::fs::write(
        &file,
        "zipf=1\ninitialSize=10\noperationCount=10\nfetchProportion=0.5\ninsertProportion=0\ndeleteProportion=0\n",
    )
    .unwrap();
    for (args, expected) in [
        (vec!["--workload", file.to_str().unwrap()], "not 1"),
        (
            vec!["--workload", "no-such-thing"],
            "unknown workload 'no-such-thing'",
        ),
        (
            vec!["--workload", "churn-high", "--engine", "btree"],
            "unknown engine",
        ),
        (vec![], "name a workload"),
    ] {
        let output = kv(&args);
        assert_eq!(output.status.code(), Some(1), "{args:?}");
        let stderr = text(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
