//! Crashes and full disks (during a commit, during concurrent commits, during a
//! checkpoint). Each test re-executes this test binary as a child (selected by an
//! environment variable, running the same test by its exact name) that writes to a store;
//! the parent kills it or lets it hit a simulated full disk, then reopens the store and
//! checks that every acknowledged commit is there and no other commit is there in part.
//!
//! `QUIVER_CRASH_TRIALS=N` sets the number of kills (default 6; `bench/crash-test.sh` runs
//! 100).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::*;
use quiver_db::{Database, DbOptions, SyncMode};

const CRASH_CHILD: &str = "QUIVER_DB_TEST_CRASH_CHILD";
const FULL_CHILD: &str = "QUIVER_DB_TEST_FULL_CHILD";
const FULL_GROUP_CHILD: &str = "QUIVER_DB_TEST_FULL_GROUP_CHILD";
const FULL_CHECKPOINT_CHILD: &str = "QUIVER_DB_TEST_FULL_CHECKPOINT_CHILD";
const TRIAL: &str = "QUIVER_DB_TEST_TRIAL";
const BATCH: usize = 4;
const WRITERS: u64 = 3;

/// Commit number `k` of writer `w` in trial `t`.
fn number(t: u64, w: u64, k: u64) -> u64 {
    t * 1_000_000 + w * 100_000 + k
}

/// Writes a line of the child's protocol. Lines start with `#` after a newline, as the
/// test harness may have written part of a line already.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n#{line}").unwrap();
    out.flush().unwrap();
}

fn child_command(test: &str, var: &str, dir: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--exact",
            &test_name(module_path!(), test),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(var, dir)
        .stdout(Stdio::piped());
    command
}

/// The child of the crash test: writers committing tagged batches until killed, with
/// automatic checkpoints every few dozen commits.
fn crash_child(dir: &Path) {
    let trial: u64 = std::env::var(TRIAL).unwrap().parse().unwrap();
    let options = DbOptions {
        sync: SyncMode::Always,
        create: false,
        checkpoint_bytes: 16 << 10,
        read_only: false,
    };
    let db = Arc::new(Database::open(dir, options).unwrap());
    say("ready");
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for k in 0.. {
                    let n = number(trial, w, k);
                    commit_tagged(&db, n, BATCH);
                    say(&format!("ack {n}"));
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
}

/// A small xorshift generator: the kill times need no quality, only variety.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn killed_writers_lose_no_acknowledged_commit() {
    if let Some(dir) = std::env::var_os(CRASH_CHILD) {
        crash_child(Path::new(&dir));
        return;
    }
    let trials: u64 = std::env::var("QUIVER_CRASH_TRIALS")
        .ok()
        .map(|t| t.parse().expect("QUIVER_CRASH_TRIALS is a number"))
        .unwrap_or(6);
    let seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    eprintln!("crash test: {trials} trials, seed {seed}");
    let mut rng = Rng(seed);
    let dir = Scratch::new("crash");
    drop(Database::open(dir.path(), options(SyncMode::Always)).unwrap());
    let mut acknowledged = BTreeSet::new();
    let mut cuts = 0;
    let mut checkpointed = 0;
    for trial in 0..trials {
        let mut child = child_command(
            "killed_writers_lose_no_acknowledged_commit",
            CRASH_CHILD,
            dir.path(),
        )
        .env(TRIAL, trial.to_string())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (ready_sender, ready) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut acks = Vec::new();
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let Some(line) = line.strip_prefix('#') else {
                    continue;
                };
                if line == "ready" {
                    let _ = ready_sender.send(());
                } else if let Some(n) = line.strip_prefix("ack ") {
                    acks.push(n.parse::<u64>().unwrap());
                }
            }
            acks
        });
        ready
            .recv_timeout(Duration::from_secs(120))
            .expect("the child did not open the store");
        std::thread::sleep(Duration::from_millis(rng.below(300)));
        child.kill().unwrap();
        child.wait().unwrap();
        let acks = reader.join().unwrap();
        acknowledged.extend(acks.iter().copied());

        let options = DbOptions {
            sync: SyncMode::Always,
            create: false,
            ..DbOptions::default()
        };
        let db = Database::open(dir.path(), options).unwrap();
        cuts += db.open_report().cuts.len();
        checkpointed = db.open_report().snapshot_sequence;
        let counts = tag_counts(&db.snapshot());
        for (n, count) in &counts {
            assert_eq!(
                *count, BATCH,
                "commit {n} is partly present (trial {trial})"
            );
        }
        for n in &acknowledged {
            assert!(
                counts.contains_key(n),
                "acknowledged commit {n} is missing after trial {trial} ({} acks this trial)",
                acks.len()
            );
        }
        // Each writer commits in order: what is present of this trial is, per writer, a
        // prefix that ends with its last acknowledged commit or the one after it.
        for w in 0..WRITERS {
            let present: Vec<u64> = counts
                .keys()
                .copied()
                .filter(|&n| n >= number(trial, w, 0) && n < number(trial, w + 1, 0))
                .collect();
            let expected: Vec<u64> = (0..present.len() as u64)
                .map(|k| number(trial, w, k))
                .collect();
            assert_eq!(present, expected, "writer {w}, trial {trial}");
            let acked = acks
                .iter()
                .filter(|&&n| n >= number(trial, w, 0) && n < number(trial, w + 1, 0))
                .count();
            assert!(
                present.len() == acked || present.len() == acked + 1,
                "writer {w}, trial {trial}: {} present, {acked} acknowledged",
                present.len()
            );
        }
    }
    eprintln!(
        "crash test: {} acknowledged commits, all present; {cuts} torn tails cut",
        acknowledged.len()
    );
    assert!(!acknowledged.is_empty(), "no commit was acknowledged");
    // The children checkpoint every ~70 commits: with a few hundred, the snapshot has
    // moved on, so crashes around checkpoints were exercised too.
    if acknowledged.len() > 300 {
        assert!(checkpointed > 0, "no checkpoint happened");
    }
}

/// The child of the full-disk test: commits until the simulated disk is full, then checks
/// the failed commit left no trace, in memory and in the log.
fn full_disk_child(dir: &Path) {
    let options = DbOptions {
        sync: SyncMode::Always,
        create: false,
        ..DbOptions::default()
    };
    let db = Database::open(dir, options).unwrap();
    for n in 100..10_000 {
        let before = db.snapshot();
        let wal_bytes = db.wal_bytes();
        let files = log_files(dir);
        let sizes: Vec<u64> = files
            .iter()
            .map(|f| std::fs::metadata(f).unwrap().len())
            .collect();
        match db.commit_changes(|s| Ok(vec![tagged(s, n, BATCH, None)])) {
            Ok(_) => say(&format!("ack {n}")),
            Err(error) => {
                assert_eq!(db.snapshot().version(), before.version());
                assert_eq!(db.wal_bytes(), wal_bytes);
                let after: Vec<u64> = files
                    .iter()
                    .map(|f| std::fs::metadata(f).unwrap().len())
                    .collect();
                assert_eq!(after, sizes, "the failed record was not cut off the log");
                assert_eq!(log_files(dir), files);
                // The disk is still full: the next commit fails the same way.
                let again = db
                    .commit_changes(|s| Ok(vec![tagged(s, n + 1, BATCH, None)]))
                    .unwrap_err();
                assert!(again.to_string().contains("No space left on device"));
                assert_eq!(db.snapshot().version(), before.version());
                say(&format!("failed {n}: {error}"));
                return;
            }
        }
    }
    panic!("the simulated disk never filled up");
}

#[test]
fn a_full_disk_fails_the_commit_and_keeps_the_store() {
    if let Some(dir) = std::env::var_os(FULL_CHILD) {
        full_disk_child(Path::new(&dir));
        return;
    }
    let dir = Scratch::new("full");
    {
        let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
        for n in 0..3 {
            commit_tagged(&db, n, BATCH);
        }
    }
    let output = child_command(
        "a_full_disk_fails_the_commit_and_keeps_the_store",
        FULL_CHILD,
        dir.path(),
    )
    .env("QUIVER_FAULT_WRITE_LIMIT", "1000")
    .stderr(Stdio::piped())
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut expected: BTreeMap<u64, usize> = (0..3).map(|n| (n, BATCH)).collect();
    let mut failed = None;
    for line in stdout.lines().filter_map(|l| l.strip_prefix('#')) {
        if let Some(n) = line.strip_prefix("ack ") {
            expected.insert(n.parse().unwrap(), BATCH);
        } else if let Some(rest) = line.strip_prefix("failed ") {
            let (n, message) = rest.split_once(": ").unwrap();
            assert!(message.contains("No space left on device"), "{message}");
            assert!(
                message.contains("wal-"),
                "the error names the log: {message}"
            );
            failed = Some(n.parse::<u64>().unwrap());
        }
    }
    let failed = failed.expect("the child reported no failed commit");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert!(db.open_report().cuts.is_empty(), "{:?}", db.open_report());
    let counts = tag_counts(&db.snapshot());
    assert!(!counts.contains_key(&failed));
    assert_eq!(counts, expected);
}

/// The child of the concurrent full-disk test: writers commit until each gets an error;
/// the published version must then hold exactly the acknowledged commits.
fn full_disk_group_child(dir: &Path) {
    let options = DbOptions {
        sync: SyncMode::Always,
        create: false,
        ..DbOptions::default()
    };
    let db = Arc::new(Database::open(dir, options).unwrap());
    let writers: Vec<_> = (0..8u64)
        .map(|w| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                for k in 0..10_000 {
                    let n = number(1, w, k);
                    match db.commit_changes(|s| Ok(vec![tagged(s, n, BATCH, None)])) {
                        Ok(_) => {
                            say(&format!("ack {n}"));
                            acked.push(n);
                        }
                        Err(error) => {
                            assert!(error.to_string().contains("No space left on device"));
                            return acked;
                        }
                    }
                }
                panic!("the simulated disk never filled up");
            })
        })
        .collect();
    let mut acked: Vec<u64> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    acked.sort();
    let present: Vec<u64> = tag_counts(&db.snapshot()).into_keys().collect();
    assert_eq!(present, acked);
    say("done");
}

#[test]
fn a_full_disk_under_concurrent_commits_keeps_exactly_the_acknowledged_ones() {
    if let Some(dir) = std::env::var_os(FULL_GROUP_CHILD) {
        full_disk_group_child(Path::new(&dir));
        return;
    }
    let dir = Scratch::new("full-group");
    drop(Database::open(dir.path(), options(SyncMode::Always)).unwrap());
    let output = child_command(
        "a_full_disk_under_concurrent_commits_keeps_exactly_the_acknowledged_ones",
        FULL_GROUP_CHILD,
        dir.path(),
    )
    .env("QUIVER_FAULT_WRITE_LIMIT", "6000")
    .stderr(Stdio::piped())
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().filter_map(|l| l.strip_prefix('#')).collect();
    assert_eq!(lines.last(), Some(&"done"));
    let acked: BTreeSet<u64> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("ack "))
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(!acked.is_empty());
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert!(db.open_report().cuts.is_empty(), "{:?}", db.open_report());
    let counts = tag_counts(&db.snapshot());
    assert!(counts.values().all(|&c| c == BATCH));
    assert_eq!(counts.into_keys().collect::<BTreeSet<u64>>(), acked);
}

/// The child of the failed-checkpoint test: commits, a checkpoint whose snapshot does not
/// fit the disk, and more commits after it.
fn full_checkpoint_child(dir: &Path) {
    let options = DbOptions {
        sync: SyncMode::Always,
        create: false,
        ..DbOptions::default()
    };
    let db = Database::open(dir, options).unwrap();
    for n in 10..12 {
        commit_tagged(&db, n, BATCH);
        say(&format!("ack {n}"));
    }
    let error = db.checkpoint().unwrap_err();
    assert!(
        error.to_string().contains("No space left on device"),
        "{error}"
    );
    say("checkpoint failed");
    // The log was rotated before the snapshot failed: commits go on in the new file.
    assert_eq!(log_files(dir).len(), 2);
    for n in 12..14 {
        commit_tagged(&db, n, BATCH);
        say(&format!("ack {n}"));
    }
}

#[test]
fn a_checkpoint_that_fails_on_a_full_disk_loses_nothing() {
    if let Some(dir) = std::env::var_os(FULL_CHECKPOINT_CHILD) {
        full_checkpoint_child(Path::new(&dir));
        return;
    }
    let dir = Scratch::new("full-checkpoint");
    {
        let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
        for n in 0..3 {
            commit_tagged(&db, n, BATCH);
        }
    }
    let output = child_command(
        "a_checkpoint_that_fails_on_a_full_disk_loses_nothing",
        FULL_CHECKPOINT_CHILD,
        dir.path(),
    )
    .env("QUIVER_FAULT_WRITE_LIMIT", "2000")
    .stderr(Stdio::piped())
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("#checkpoint failed"));
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert!(db.open_report().cuts.is_empty(), "{:?}", db.open_report());
    assert_eq!(db.open_report().snapshot_sequence, 0);
    let expected: BTreeMap<u64, usize> = (0..3).chain(10..14).map(|n| (n, BATCH)).collect();
    assert_eq!(tag_counts(&db.snapshot()), expected);
    // A checkpoint with room succeeds and leaves one log file.
    db.checkpoint().unwrap();
    assert_eq!(log_files(dir.path()).len(), 1);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(db.open_report().snapshot_sequence, 7);
    assert_eq!(tag_counts(&db.snapshot()), expected);
}
