//! Checkpoints (explicit, background, automatic, concurrent with writers and readers),
//! snapshot isolation, and replacing the store by a bulk load.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use oxrdf::{GraphName, Literal, NamedNode, Quad as OxQuad};
use quiver_db::{Database, DbError, DbOptions, SyncMode};

const BATCH: usize = 3;

#[test]
fn a_checkpoint_moves_the_log_into_the_snapshot() {
    let dir = Scratch::new("checkpoint");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    for n in 0..10 {
        commit_tagged(&db, n, BATCH);
    }
    let before = db.wal_bytes();
    let report = db.checkpoint().unwrap();
    assert_eq!(report.sequence, 10);
    assert!(report.snapshot_bytes > 0);
    assert!(
        db.wal_bytes() < before / 10,
        "{} → {}",
        before,
        db.wal_bytes()
    );
    assert_eq!(report.wal_bytes, db.wal_bytes());
    let files = log_files(dir.path());
    assert_eq!(files.len(), 1);
    let logged: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert_eq!(logged, db.wal_bytes());
    let content = quads(&db.snapshot());
    for n in 10..13 {
        commit_tagged(&db, n, BATCH);
    }
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let open = db.open_report();
    assert_eq!((open.snapshot_sequence, open.replayed), (10, 3));
    let mut want = content;
    for n in 10..13 {
        want.extend(tagged_text(n, BATCH, None));
    }
    assert_eq!(quads(&db.snapshot()), want);
}

#[test]
fn records_a_snapshot_contains_are_skipped_when_their_file_remains() {
    // A crash after the checkpoint's snapshot but before its old log files were removed.
    let dir = Scratch::new("skip");
    let saved = Scratch::new("skip-saved");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    for n in 0..4 {
        commit_tagged(&db, n, BATCH);
    }
    let old_logs = log_files(dir.path());
    for file in &old_logs {
        std::fs::copy(file, saved.path().join(file.file_name().unwrap())).unwrap();
    }
    db.checkpoint().unwrap();
    commit_tagged(&db, 4, BATCH);
    let content = quads(&db.snapshot());
    drop(db);
    copy_dir(saved.path(), dir.path());
    assert_eq!(log_files(dir.path()).len(), 2);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(db.open_report().replayed, 1, "{:?}", db.open_report());
    assert!(db.open_report().cuts.is_empty());
    assert_eq!(quads(&db.snapshot()), content);
    // The next checkpoint removes the stale file.
    db.checkpoint().unwrap();
    assert_eq!(log_files(dir.path()).len(), 1);
}

#[test]
fn checkpoints_run_while_writers_and_readers_do() {
    const WRITERS: u64 = 4;
    const COMMITS: u64 = 40;
    let dir = Scratch::new("concurrent");
    let db = Arc::new(Database::open(dir.path(), options(SyncMode::Always)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut last = 0;
                let mut reads = 0;
                // At least one read, however late the thread starts.
                loop {
                    let counts = tag_counts(&db.snapshot());
                    assert!(counts.values().all(|&c| c == BATCH), "{counts:?}");
                    assert!(counts.len() >= last, "a reader went back in time");
                    last = counts.len();
                    reads += 1;
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                reads
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for k in 0..COMMITS {
                    commit_tagged(&db, w * 1000 + k, BATCH);
                }
            })
        })
        .collect();
    // Checkpoints one after the other until the writers are done (at least one, however
    // fast they are).
    let mut checkpoints = 0;
    loop {
        db.checkpoint_in_background().join().unwrap().unwrap();
        checkpoints += 1;
        if writers.iter().all(|w| w.is_finished()) {
            break;
        }
    }
    for writer in writers {
        writer.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    assert!(checkpoints > 0);
    let content = quads(&db.snapshot());
    assert_eq!(content.len() as u64, WRITERS * COMMITS * BATCH as u64);
    let report = db.checkpoint().unwrap();
    assert_eq!(report.sequence, WRITERS * COMMITS);
    assert_eq!(log_files(dir.path()).len(), 1);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(db.open_report().replayed, 0);
    assert_eq!(quads(&db.snapshot()), content);
}

#[test]
fn a_large_log_starts_a_checkpoint_by_itself() {
    let dir = Scratch::new("auto");
    let options = DbOptions {
        sync: SyncMode::Batch,
        create: true,
        checkpoint_bytes: 2000,
        read_only: false,
    };
    let db = Database::open(dir.path(), options.clone()).unwrap();
    for n in 0..30 {
        commit_tagged(&db, n, BATCH);
    }
    assert!(db.wal_bytes() > 2000 || db.log_stats().checkpoints > 0);
    let started = Instant::now();
    while db.log_stats().checkpoints == 0 {
        assert!(started.elapsed() < Duration::from_secs(30), "no checkpoint");
        std::thread::sleep(Duration::from_millis(5));
    }
    db.sync().unwrap();
    let content = quads(&db.snapshot());
    drop(db);
    let db = Database::open(dir.path(), options).unwrap();
    assert!(db.open_report().snapshot_sequence > 0);
    assert_eq!(quads(&db.snapshot()), content);
}

#[test]
fn a_database_dropped_during_its_automatic_checkpoint_reopens_at_once() {
    let dir = Scratch::new("auto-drop");
    let options = DbOptions {
        sync: SyncMode::None,
        create: true,
        checkpoint_bytes: 2000,
        read_only: false,
    };
    let mut expected = 0;
    for round in 0..10 {
        // Opening fails while a checkpoint of the last round still holds the store.
        let db = Database::open(dir.path(), options.clone())
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(db.snapshot().triples(), expected);
        for n in 0..20 {
            commit_tagged(&db, round * 100 + n, BATCH);
        }
        expected += 20 * BATCH as u64;
        db.sync().unwrap();
    }
}

#[test]
fn a_held_snapshot_never_changes_and_readers_see_whole_commits() {
    let dir = Scratch::new("isolation");
    let db = Arc::new(Database::open(dir.path(), options(SyncMode::None)).unwrap());
    commit_tagged(&db, 0, BATCH);
    let held = db.snapshot();
    let held_quads = quads(&held);
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
            std::thread::spawn(move || {
                let tag = "http://example.org/tag";
                let mut seen = 0;
                // At least one read, however late the thread starts.
                loop {
                    let store = db.snapshot();
                    let tag = store.iri_id(tag).unwrap();
                    let mut count = 0;
                    store.for_each_quad(|q| count += usize::from(q.predicate == tag));
                    assert_eq!(count % BATCH, 0, "a reader saw part of a commit");
                    assert!(count >= seen);
                    seen = count;
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                seen
            })
        })
        .collect();
    for n in 1..60 {
        commit_tagged(&db, n, BATCH);
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        assert!(reader.join().unwrap() > 0);
    }
    assert_eq!(quads(&held), held_quads);
    assert_eq!(tag_counts(&held).len(), 1);
    assert_eq!(tag_counts(&db.snapshot()).len(), 60);
}

#[test]
fn a_replaced_store_restarts_the_log() {
    let dir = Scratch::new("replace");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    for n in 0..5 {
        commit_tagged(&db, n, BATCH);
    }
    let extra = OxQuad::new(
        NamedNode::new("http://example.org/bulk").unwrap(),
        NamedNode::new("http://example.org/p").unwrap(),
        Literal::new_simple_literal("loaded"),
        GraphName::DefaultGraph,
    );
    let extra_text = quad_text(extra.as_ref());
    let report = db
        .replace(|base| {
            let (store, _) = quiver_loader::load_quads([extra.clone()], Some(base))
                .map_err(|e| DbError::ReadOnly(e.to_string()))?;
            Ok(store)
        })
        .unwrap();
    assert_eq!(report.sequence, 6);
    let mut want = quads(&db.snapshot());
    assert!(want.contains(&extra_text));
    assert_eq!(tag_counts(&db.snapshot()).len(), 5);
    assert_eq!(log_files(dir.path()).len(), 1);
    // A failing build changes nothing.
    let version = db.snapshot().version();
    assert!(db.replace(|_| Err(DbError::ReadOnly("no".into()))).is_err());
    assert_eq!(db.snapshot().version(), version);
    commit_tagged(&db, 9, BATCH);
    want.extend(tagged_text(9, BATCH, None));
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(db.open_report().snapshot_sequence, 6);
    assert_eq!(db.open_report().replayed, 1);
    assert_eq!(quads(&db.snapshot()), want);
}
