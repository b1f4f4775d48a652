//! Torn and damaged logs: recovery cuts them at the last whole record, reports it, never
//! applies a damaged record, and the database goes on from there.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use quiver_db::{Database, SyncMode};

const COMMITS: u64 = 3;
const BATCH: usize = 3;

/// A store with `COMMITS` tagged commits in its log (no checkpoint); returns the log file
/// and the offsets where each record starts (and where the last ends).
fn pristine(dir: &Path) -> (std::path::PathBuf, Vec<u64>) {
    let db = Database::open(dir, options(SyncMode::Always)).unwrap();
    let mut offsets = vec![db.wal_bytes()];
    for n in 0..COMMITS {
        commit_tagged(&db, n, BATCH);
        offsets.push(db.wal_bytes());
    }
    drop(db);
    let files = log_files(dir);
    assert_eq!(files.len(), 1);
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().len(),
        offsets[COMMITS as usize]
    );
    (files[0].clone(), offsets)
}

fn expected(commits: u64) -> BTreeMap<u64, usize> {
    (0..commits).map(|n| (n, BATCH)).collect()
}

/// Opens a copy of `pristine` damaged by `damage`, checks it holds exactly the first
/// `intact` commits and that a cut was reported iff `cut`, then that commits go on.
fn check_damaged(pristine: &Path, damage: impl FnOnce(&Path), intact: u64, cut: bool) {
    let dir = Scratch::new("torn-copy");
    copy_dir(pristine, dir.path());
    let log = log_files(dir.path()).remove(0);
    damage(&log);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let report = db.open_report().clone();
    assert_eq!(tag_counts(&db.snapshot()), expected(intact), "{report:?}");
    assert_eq!(!report.cuts.is_empty(), cut, "{report:?}");
    assert_eq!(report.replayed, intact);
    commit_tagged(&db, 50, BATCH);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert!(db.open_report().cuts.is_empty(), "{:?}", db.open_report());
    let mut want = expected(intact);
    want.insert(50, BATCH);
    assert_eq!(tag_counts(&db.snapshot()), want);
}

#[test]
fn a_log_truncated_at_any_byte_of_its_last_record_loses_only_that_record() {
    let source = Scratch::new("torn-source");
    let (_, offsets) = pristine(source.path());
    let last = offsets[COMMITS as usize - 1];
    let end = offsets[COMMITS as usize];
    for length in last..end {
        check_damaged(
            source.path(),
            |log| {
                let file = std::fs::OpenOptions::new().write(true).open(log).unwrap();
                file.set_len(length).unwrap();
            },
            COMMITS - 1,
            length != last,
        );
    }
}

#[test]
fn a_flipped_byte_anywhere_in_a_record_cuts_the_log_there() {
    let source = Scratch::new("flip-source");
    let (_, offsets) = pristine(source.path());
    // Every byte of every record: damage in the first record discards the valid records
    // after it too (reported), damage in the last one loses only it.
    for record in 0..COMMITS as usize {
        for at in offsets[record]..offsets[record + 1] {
            check_damaged(
                source.path(),
                |log| {
                    let mut bytes = std::fs::read(log).unwrap();
                    bytes[at as usize] ^= 0x5a;
                    std::fs::write(log, bytes).unwrap();
                },
                record as u64,
                true,
            );
        }
    }
}

#[test]
fn a_damaged_header_discards_the_file_and_garbage_after_the_tail_is_cut() {
    let source = Scratch::new("header-source");
    let (_, offsets) = pristine(source.path());
    for at in [0u64, 9, 17, 27] {
        check_damaged(
            source.path(),
            |log| {
                let mut bytes = std::fs::read(log).unwrap();
                bytes[at as usize] ^= 1;
                std::fs::write(log, bytes).unwrap();
            },
            0,
            true,
        );
    }
    // Zeros after the last record (a file extended but never written), and a record
    // repeated (a stale sequence number).
    check_damaged(
        source.path(),
        |log| {
            let mut bytes = std::fs::read(log).unwrap();
            bytes.extend_from_slice(&[0; 100]);
            std::fs::write(log, bytes).unwrap();
        },
        COMMITS,
        true,
    );
    check_damaged(
        source.path(),
        |log| {
            let mut bytes = std::fs::read(log).unwrap();
            let last = bytes[offsets[COMMITS as usize - 1] as usize..].to_vec();
            bytes.extend_from_slice(&last);
            std::fs::write(log, bytes).unwrap();
        },
        COMMITS,
        true,
    );
}

#[test]
fn the_cut_is_reported_with_file_offset_and_reason() {
    let source = Scratch::new("report-source");
    let (_, offsets) = pristine(source.path());
    let dir = Scratch::new("report");
    copy_dir(source.path(), dir.path());
    let log = log_files(dir.path()).remove(0);
    let mut bytes = std::fs::read(&log).unwrap();
    let at = offsets[1] as usize + 20;
    bytes[at] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    let report = db.open_report();
    assert_eq!(report.cuts.len(), 1);
    let cut = &report.cuts[0];
    assert_eq!(cut.file, log);
    assert_eq!(cut.offset, offsets[1]);
    assert_eq!(cut.bytes_discarded, offsets[COMMITS as usize] - offsets[1]);
    assert!(cut.reason.contains("checksum"), "{}", cut.reason);
    let warnings = report.warnings();
    assert!(
        warnings[0].contains("bytes of the log discarded"),
        "{warnings:?}"
    );
    // The file was cut on disk.
    assert_eq!(std::fs::metadata(&log).unwrap().len(), offsets[1]);
}

#[test]
fn a_read_only_open_replays_but_changes_nothing_on_disk() {
    let source = Scratch::new("ro-source");
    let (_, offsets) = pristine(source.path());
    let dir = Scratch::new("ro");
    copy_dir(source.path(), dir.path());
    let log = log_files(dir.path()).remove(0);
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.truncate(offsets[COMMITS as usize] as usize - 5);
    std::fs::write(&log, &bytes).unwrap();
    let options = quiver_db::DbOptions {
        read_only: true,
        ..quiver_db::DbOptions::default()
    };
    let db = Database::open(dir.path(), options).unwrap();
    assert_eq!(tag_counts(&db.snapshot()), expected(COMMITS - 1));
    assert_eq!(db.open_report().cuts.len(), 1);
    let error = db
        .commit_changes(|s| Ok(vec![tagged(s, 9, 1, None)]))
        .unwrap_err();
    assert!(matches!(error, quiver_db::DbError::ReadOnly(_)), "{error}");
    assert!(db.checkpoint().is_err());
    drop(db);
    assert_eq!(std::fs::read(&log).unwrap(), bytes);
    assert_eq!(log_files(dir.path()), std::slice::from_ref(&log));
    // A writable open cuts it.
    let db = Database::open(dir.path(), options_for_write()).unwrap();
    assert_eq!(db.open_report().cuts.len(), 1);
    assert_eq!(
        std::fs::metadata(&log).unwrap().len(),
        offsets[COMMITS as usize - 1]
    );
}

fn options_for_write() -> quiver_db::DbOptions {
    options(SyncMode::Always)
}
