//! `quiver load --partitions` and `quiver partition` as a user runs them: the layout file
//! and one snapshot per partition, whose triples add up to the store's (a store changed by
//! `quiver update` included), and the refusals: a partitioned store or one partition
//! opened as one store, a non-empty output, no partitions.

use crate::temp_dir;

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use temp_dir::TempDir;

fn quiver(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("quiver runs");
    assert!(!stderr(&output).contains("panicked"), "{}", stderr(&output));
    output
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(file: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap()
}

/// The triples a snapshot's manifest records, and its partition (index, count) if any.
fn snapshot(dir: &Path) -> (u64, Option<(u64, u64)>) {
    let metadata = &json(&dir.join("manifest.json"))["manifest"]["metadata"];
    let partition = &metadata["info"]["partition"];
    (
        metadata["triples"].as_u64().unwrap(),
        partition["index"]
            .as_u64()
            .map(|i| (i, partition["count"].as_u64().unwrap())),
    )
}

/// Checks the partitioned store in `dir`: `count` partitions that say which they are and
/// whose triples add up to `triples`, each holding some.
fn check_layout(dir: &Path, count: u64, triples: u64) {
    let layout = json(&dir.join("partitions.json"));
    assert_eq!(layout["partitions"], count);
    assert_eq!(layout["triples"], triples);
    assert_eq!(layout["hash"], "modulo");
    let mut sum = 0;
    for i in 0..count {
        let (part, info) = snapshot(&dir.join(format!("partition-{i}")));
        assert_eq!(info, Some((i, count)));
        assert!(
            part > 0 && part < triples,
            "partition {i}: {part} of {triples}"
        );
        sum += part;
    }
    assert_eq!(sum, triples);
    assert!(!dir.join(format!("partition-{count}")).exists());
}

#[test]
fn partitioned_loads_and_cuts_write_every_triple_once_and_refuse_whole_store_opens() {
    let temp = TempDir::new("partitions");
    let whole = temp.join("whole");
    let out = quiver(&["load", "--lubm", "1", "--location", path(&whole)]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (triples, info) = snapshot(&whole);
    assert_eq!(info, None);

    let loaded = temp.join("loaded");
    let out = quiver(&[
        "load",
        "--lubm",
        "1",
        "--partitions",
        "3",
        "--location",
        path(&loaded),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cut 100543 triples into 3 partitions"),
        "{}",
        stderr(&out)
    );
    check_layout(&loaded, 3, triples);
    // No replication budget given: none recorded (the cluster's default applies).
    assert!(json(&loaded.join("partitions.json"))
        .get("replication_budget")
        .is_none());

    // A replication budget is recorded in the layout; it is for clusters only.
    let cut = temp.join("budgeted");
    let out = quiver(&[
        "partition",
        "--location",
        path(&whole),
        "--partitions",
        "2",
        "--output",
        path(&cut),
        "--replication-budget",
        "64M",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    check_layout(&cut, 2, triples);
    assert_eq!(
        json(&cut.join("partitions.json"))["replication_budget"],
        64 << 20
    );
    let out = quiver(&[
        "load",
        "--lubm",
        "1",
        "--location",
        path(&temp.join("not-a-cluster")),
        "--replication-budget",
        "0",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--replication-budget is for a cluster"),
        "{}",
        stderr(&out)
    );

    // Opened as one store, the whole layout or one partition is refused.
    let query = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }";
    let out = quiver(&["query", "--location", path(&loaded), "--query", query]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("cut into 3 partitions"),
        "{}",
        stderr(&out)
    );
    let one = loaded.join("partition-1");
    for args in [
        vec!["query", "--location", path(&one), "--query", query],
        vec!["info", "--location", path(&one)],
        vec![
            "update",
            "--location",
            path(&one),
            "--update",
            "INSERT DATA { <a:x> <a:y> <a:z> }",
        ],
    ] {
        let out = quiver(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            stderr(&out).contains("is partition 1 of 3"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A partitioned store is written into a new or empty directory only.
    let out = quiver(&[
        "load",
        "--lubm",
        "1",
        "--partitions",
        "2",
        "--location",
        path(&loaded),
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not empty"), "{}", stderr(&out));
    check_layout(&loaded, 3, triples);

    // A store changed by an update (its log not yet folded) is cut as it now is.
    let update = temp.file(
        "update.ru",
        "INSERT DATA { <http://ex/new> <http://ex/p> \"one more\" }",
    );
    let out = quiver(&[
        "update",
        "--location",
        path(&whole),
        "--update-file",
        path(&update),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let cut = temp.join("cut");
    let out = quiver(&[
        "partition",
        "--location",
        path(&whole),
        "--partitions",
        "2",
        "--output",
        path(&cut),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    check_layout(&cut, 2, triples + 1);

    let out = quiver(&[
        "partition",
        "--location",
        path(&whole),
        "--partitions",
        "0",
        "--output",
        path(&temp.join("none")),
    ]);
    assert!(!out.status.success());
    assert!(!temp.join("none").exists());
}
