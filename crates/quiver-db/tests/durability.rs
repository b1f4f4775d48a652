//! Commits, atomicity, durability across reopen in every sync mode, group commit.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::*;
use oxrdf::{NamedNode, TermRef};
use quiver_db::{Database, DbError, DbOptions, SyncMode};
use quiver_store::{ApplyError, ChangeSet, Quad};

/// A run of varied commits (new terms, deletes, named graphs, a dropped graph), checked
/// against a model after each commit and after reopening.
fn varied_commits(sync: SyncMode) {
    let dir = Scratch::new("varied");
    let mut model: BTreeSet<String> = BTreeSet::new();
    {
        let db = Database::open(dir.path(), options(sync)).unwrap();
        assert!(db.snapshot().triples() == 0);
        for n in 0..6u64 {
            let graph = (n % 2 == 1).then_some("http://example.org/g");
            db.commit_changes(|s| Ok(vec![tagged(s, n, 4, graph)]))
                .unwrap();
            model.extend(tagged_text(n, 4, graph));
            assert_eq!(quads(&db.snapshot()), model, "after commit {n}");
        }
        // Delete two quads of commit 0 and drop the named graph, in one transaction of
        // two change sets.
        let report = db
            .commit_changes(|s| {
                let mut first = ChangeSet::new(s);
                let tag = s.iri_id(TAG).unwrap();
                let zero = s
                    .term_id(TermRef::Literal(oxrdf::LiteralRef::new_simple_literal("0")))
                    .unwrap();
                for i in 0..2 {
                    let subject = s.iri_id(subject(0, i).as_str()).unwrap();
                    first.deletes.push(Quad {
                        subject,
                        predicate: tag,
                        object: zero,
                        graph: None,
                    });
                }
                let mut second = ChangeSet::new(s);
                second
                    .dropped_graphs
                    .push(s.iri_id("http://example.org/g").unwrap());
                Ok(vec![first, second])
            })
            .unwrap();
        assert_eq!(report.deleted, 2);
        for text in tagged_text(0, 2, None) {
            model.remove(&text);
        }
        model.retain(|q| !q.ends_with("<http://example.org/g>"));
        assert_eq!(quads(&db.snapshot()), model);
        assert!(db.log_stats().records == 7);
        if sync != SyncMode::Always {
            db.sync().unwrap();
        }
    }
    let db = Database::open(dir.path(), options(sync)).unwrap();
    assert_eq!(db.open_report().replayed, 7);
    assert!(db.open_report().cuts.is_empty());
    assert_eq!(quads(&db.snapshot()), model);
    let g = db.snapshot().iri_id("http://example.org/g").unwrap();
    assert!(!db.snapshot().has_named_graph(g));
    // Commits continue after a reopen, on the same ids.
    commit_tagged(&db, 100, 3);
    model.extend(tagged_text(100, 3, None));
    drop(db);
    let db = Database::open(dir.path(), options(sync)).unwrap();
    assert_eq!(quads(&db.snapshot()), model);
    assert_eq!(db.sequence(), 8);
}

#[test]
fn commits_survive_reopen_when_always_synced() {
    varied_commits(SyncMode::Always);
}

#[test]
fn commits_survive_reopen_when_batch_synced() {
    varied_commits(SyncMode::Batch);
}

#[test]
fn commits_survive_reopen_when_never_synced() {
    varied_commits(SyncMode::None);
}

#[test]
fn a_failing_change_set_leaves_store_and_log_unchanged() {
    let dir = Scratch::new("atomic");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    commit_tagged(&db, 1, 3);
    let before = db.snapshot();
    let log = log_files(dir.path());
    let log_bytes: Vec<Vec<u8>> = log.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let wal_bytes = db.wal_bytes();
    let error = db
        .commit_changes(|s| {
            let first = tagged(s, 2, 3, None);
            // Built against a store with one term more: refused by `Store::apply`.
            let mut second = tagged(s, 3, 3, None);
            second.base_terms += 1;
            Ok(vec![first, second])
        })
        .unwrap_err();
    assert!(
        matches!(error, DbError::Apply(ApplyError::WrongBase { .. })),
        "{error}"
    );
    // An error of the closure itself changes nothing either.
    let error = db
        .commit_changes(|_| Err(DbError::ReadOnly("refused by the test".into())))
        .unwrap_err();
    assert!(error.to_string().contains("refused by the test"));
    assert_eq!(db.snapshot().version(), before.version());
    assert_eq!(quads(&db.snapshot()), quads(&before));
    assert_eq!(db.wal_bytes(), wal_bytes);
    assert_eq!(log_files(dir.path()), log);
    let after: Vec<Vec<u8>> = log.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(after == log_bytes, "the log changed");
    // The next commit gets the next sequence number and works.
    assert_eq!(commit_tagged(&db, 4, 2).sequence, 2);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let counts = tag_counts(&db.snapshot());
    assert_eq!(counts.into_iter().collect::<Vec<_>>(), [(1, 3), (4, 2)]);
}

#[test]
fn an_update_error_leaves_the_store_unchanged() {
    let dir = Scratch::new("update-error");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    commit_tagged(&db, 1, 2);
    let version = db.snapshot().version();
    let error = db
        .update("INSERT DATA { ?s <http://p> 1 }", None, &Default::default())
        .unwrap_err();
    assert!(matches!(error, DbError::Query(_)), "{error}");
    assert_eq!(db.snapshot().version(), version);
    assert_eq!(db.log_stats().records, 1);
}

#[test]
fn an_empty_transaction_writes_nothing() {
    let dir = Scratch::new("empty");
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let bytes = db.wal_bytes();
    let report = db.commit_changes(|s| Ok(vec![ChangeSet::new(s)])).unwrap();
    assert_eq!(report.sequence, 0);
    assert_eq!(db.wal_bytes(), bytes);
    assert_eq!(db.log_stats().records, 0);
}

#[test]
fn concurrent_committers_share_fsyncs_and_all_survive() {
    const THREADS: u64 = 16;
    const PER_THREAD: u64 = 25;
    let dir = Scratch::new("group");
    let db = Arc::new(Database::open(dir.path(), options(SyncMode::Always)).unwrap());
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                for k in 0..PER_THREAD {
                    let n = t * 1000 + k;
                    let report = commit_tagged(&db, n, 2);
                    assert!(report.sequence > 0);
                    // Acknowledged means visible.
                    assert_eq!(tag_counts(&db.snapshot()).get(&n), Some(&2));
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let stats = db.log_stats();
    let commits = THREADS * PER_THREAD;
    assert_eq!(stats.records, commits);
    assert!(
        stats.fsyncs < commits,
        "{} fsyncs for {commits} commits: no group commit",
        stats.fsyncs
    );
    assert_eq!(stats.groups, stats.fsyncs);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let counts = tag_counts(&db.snapshot());
    assert_eq!(counts.len() as u64, commits);
    for t in 0..THREADS {
        for k in 0..PER_THREAD {
            assert_eq!(counts.get(&(t * 1000 + k)), Some(&2), "commit {t}/{k}");
        }
    }
    assert_eq!(db.sequence(), commits);
}

#[test]
fn an_in_memory_database_takes_commits() {
    let db = Database::in_memory(quiver_store::Store::default());
    commit_tagged(&db, 7, 3);
    assert_eq!(tag_counts(&db.snapshot()).get(&7), Some(&3));
    assert_eq!(db.wal_bytes(), 0);
    assert!(db.checkpoint().is_ok());
}

#[test]
fn opening_without_create_refuses_an_empty_directory() {
    let dir = Scratch::new("nocreate");
    let options = quiver_db::DbOptions::default();
    let error = Database::open(dir.path(), options).unwrap_err();
    assert!(matches!(error, DbError::Store(_)), "{error}");
    let _ = NamedNode::new("http://x").unwrap();
}

#[test]
fn batch_mode_syncs_in_the_background_and_none_mode_does_not() {
    let dir = Scratch::new("batch");
    let db = Database::open(dir.path(), options(SyncMode::Batch)).unwrap();
    commit_tagged(&db, 1, 2);
    assert_eq!(db.log_stats().records, 1);
    let started = std::time::Instant::now();
    while db.log_stats().fsyncs == 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "no background fsync"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    drop(db);

    let dir = Scratch::new("none");
    let db = Database::open(dir.path(), options(SyncMode::None)).unwrap();
    for n in 0..5 {
        commit_tagged(&db, n, 2);
    }
    std::thread::sleep(quiver_db::BATCH_SYNC_INTERVAL * 5);
    assert_eq!(db.log_stats().fsyncs, 0);
    db.sync().unwrap();
    assert_eq!(db.log_stats().fsyncs, 1);
}

#[test]
fn one_process_at_a_time_writes_a_store_and_readers_need_no_lock() {
    let dir = Scratch::new("lock");
    let writer = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    commit_tagged(&writer, 1, 2);
    // A second writer (here another open file description, as another process has) is
    // refused with the reason; the first goes on.
    let error = Database::open(dir.path(), options(SyncMode::Always)).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("open for writing by another process"),
        "{error}"
    );
    let reader = Database::open(
        dir.path(),
        DbOptions {
            read_only: true,
            ..options(SyncMode::Always)
        },
    )
    .unwrap();
    assert_eq!(tag_counts(&reader.snapshot()).get(&1), Some(&2));
    commit_tagged(&writer, 2, 2);
    drop(writer);
    let writer = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(tag_counts(&writer.snapshot()).len(), 2);
    assert!(dir.path().join(quiver_db::LOCK_FILE_NAME).exists());
}
