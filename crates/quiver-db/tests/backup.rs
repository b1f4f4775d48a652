//! Backups taken while writers commit: the copy opens, at exactly the version it reports.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use quiver_db::{Database, DbOptions, SyncMode};

const BATCH: usize = 4;

#[test]
fn a_backup_during_commits_opens_at_the_version_it_reports() {
    let dir = Scratch::new("backup-live");
    let backups = Scratch::new("backup-copies");
    let db = Arc::new(Database::open(dir.path(), options(SyncMode::None)).unwrap());
    commit_tagged(&db, 0, BATCH);
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 1;
            while !stop.load(Ordering::Relaxed) {
                commit_tagged(&db, n, BATCH);
                n += 1;
            }
            n
        })
    };
    let mut reports = Vec::new();
    for i in 0..4 {
        // Some commits between backups, so that the copies differ.
        let seen = db.sequence();
        while db.sequence() < seen + 3 {
            std::thread::yield_now();
        }
        reports.push(
            db.backup(&backups.path().join(format!("copy-{i}")))
                .unwrap(),
        );
    }
    stop.store(true, Ordering::Relaxed);
    let committed = writer.join().unwrap();
    assert!(committed > 12, "{committed} commits");
    for (i, report) in reports.iter().enumerate() {
        assert!(!backups.path().join(format!("copy-{i}.partial")).exists());
        let copy = Database::open(
            &report.path,
            DbOptions {
                read_only: true,
                ..DbOptions::default()
            },
        )
        .unwrap();
        assert_eq!(copy.sequence(), report.sequence, "copy {i}");
        // Commit n is sequence n + 1: the copy holds commits 0..sequence, no other.
        let want: std::collections::BTreeSet<String> = (0..report.sequence)
            .flat_map(|n| tagged_text(n, BATCH, None))
            .collect();
        let store = copy.snapshot();
        assert_eq!(
            quads(&store),
            want,
            "copy {i} at sequence {}",
            report.sequence
        );
        assert_eq!(store.triples(), report.triples);
        assert!(report.bytes > 0);
    }
    assert!(reports.windows(2).all(|w| w[0].sequence < w[1].sequence));
    // The live store goes on: it holds every commit, and more than any copy.
    assert_eq!(db.sequence(), committed);
}

#[test]
fn a_backup_never_overwrites() {
    let dir = Scratch::new("backup-exists");
    let db = Database::open(dir.path(), options(SyncMode::None)).unwrap();
    commit_tagged(&db, 0, BATCH);
    let target = dir.path().join("copy");
    db.backup(&target).unwrap();
    let error = db.backup(&target).unwrap_err().to_string();
    assert!(error.contains("already exists"), "{error}");
    // A partial copy left by a failed backup is replaced, never opened.
    std::fs::create_dir_all(dir.path().join("again.partial/junk")).unwrap();
    let report = db.backup(&dir.path().join("again")).unwrap();
    assert_eq!(report.sequence, 1);
    assert!(!dir.path().join("again.partial").exists());
}
