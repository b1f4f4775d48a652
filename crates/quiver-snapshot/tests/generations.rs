//! Generations: a commit replaces the previous generation atomically; an abandoned
//! writer leaves it untouched and cleans up after itself.

use crate::common;

use std::path::Path;

use common::{list, open, TempDir};
use quiver_snapshot::{SnapshotReader, SnapshotWriter};
use serde_json::json;

fn commit(dir: &Path, seed: u32, meta: &str) -> u64 {
    let mut writer = SnapshotWriter::create(dir).unwrap();
    let generation = writer.generation();
    writer
        .column("index", "offsets", &[seed, seed + 1, seed + 2])
        .unwrap();
    writer
        .section("dict", "bytes", format!("dictionary {seed}").as_bytes())
        .unwrap();
    writer.commit(json!({ "meta": meta })).unwrap();
    generation
}

fn assert_generation(dir: &Path, generation: u64, seed: u32, meta: &str) {
    let reader = open(dir).unwrap();
    assert_eq!(reader.generation(), generation);
    assert_eq!(reader.metadata(), &json!({ "meta": meta }));
    assert_eq!(
        &*reader.column::<u32>("index", "offsets").unwrap(),
        &[seed, seed + 1, seed + 2]
    );
    assert_eq!(
        &*reader.column::<u8>("dict", "bytes").unwrap(),
        format!("dictionary {seed}").as_bytes()
    );
}

#[test]
fn second_commit_replaces_the_first() {
    let tmp = TempDir::new("replace");
    let dir = tmp.path();
    assert_eq!(commit(dir, 10, "first"), 1);
    assert_eq!(list(dir), ["dict-1.qvs", "index-1.qvs", "manifest.json"]);
    let old_reader = open(dir).unwrap();
    let old_column = old_reader.column::<u32>("index", "offsets").unwrap();

    assert_eq!(commit(dir, 20, "second"), 2);
    assert_generation(dir, 2, 20, "second");
    assert_eq!(list(dir), ["dict-2.qvs", "index-2.qvs", "manifest.json"]);
    // A reader of the old generation keeps working: its files stay mapped.
    assert_eq!(&*old_column, &[10, 11, 12]);
    assert_eq!(old_reader.metadata(), &json!({ "meta": "first" }));

    assert_eq!(commit(dir, 30, "third"), 3);
    assert_generation(dir, 3, 30, "third");
    assert_eq!(list(dir), ["dict-3.qvs", "index-3.qvs", "manifest.json"]);
}

#[test]
fn dropped_writer_leaves_previous_generation() {
    let tmp = TempDir::new("drop");
    let dir = tmp.path();
    commit(dir, 10, "first");
    let before = list(dir);

    let mut writer = SnapshotWriter::create(dir).unwrap();
    assert_eq!(writer.generation(), 2);
    writer.column("index", "offsets", &[1u32, 2, 3]).unwrap();
    writer.section("new-file", "x", &[9; 100]).unwrap();
    assert!(list(dir).iter().any(|name| name.ends_with(".tmp")));
    drop(writer);

    assert_eq!(list(dir), before);
    assert_generation(dir, 1, 10, "first");
    // The abandoned generation number is reused safely.
    assert_eq!(commit(dir, 20, "second"), 2);
    assert_generation(dir, 2, 20, "second");
}

#[test]
fn dropped_writer_in_new_directory_leaves_no_store() {
    let tmp = TempDir::new("drop-new");
    let dir = tmp.path().join("store");
    let mut writer = SnapshotWriter::create(&dir).unwrap();
    writer.section("f", "s", &[1, 2, 3]).unwrap();
    drop(writer);
    assert!(!SnapshotReader::exists(&dir));
    assert!(list(&dir).is_empty());
    assert!(common::open_err(&dir).contains("no Quiver store"));
}

#[test]
fn leftovers_of_a_crashed_writer_are_skipped_and_removed() {
    let tmp = TempDir::new("crash");
    let dir = tmp.path();
    commit(dir, 10, "first");
    // What a writer killed mid-commit may leave behind.
    std::fs::write(dir.join("index-7.qvs.tmp"), b"partial").unwrap();
    std::fs::write(dir.join("index-5.qvs"), b"renamed but never committed").unwrap();
    std::fs::write(dir.join("manifest.json.tmp"), b"{\"half").unwrap();
    std::fs::write(dir.join("notes.txt"), b"not ours").unwrap();
    assert_generation(dir, 1, 10, "first");

    // The next generation is numbered past every leftover, so nothing collides.
    assert_eq!(commit(dir, 20, "second"), 8);
    assert_generation(dir, 8, 20, "second");
    assert_eq!(
        list(dir),
        ["dict-8.qvs", "index-8.qvs", "manifest.json", "notes.txt"]
    );
}

#[test]
fn failed_commit_keeps_previous_generation() {
    let tmp = TempDir::new("failed-commit");
    let dir = tmp.path();
    commit(dir, 10, "first");
    // A directory where the new manifest must be written makes the commit fail after
    // the data files were renamed into place.
    fs_mkdir(&dir.join("manifest.json.tmp"));
    let mut writer = SnapshotWriter::create(dir).unwrap();
    writer.column("index", "offsets", &[7u32]).unwrap();
    let err = writer.commit(json!(null)).unwrap_err().to_string();
    assert!(err.contains("manifest.json.tmp"), "{err}");
    assert_generation(dir, 1, 10, "first");
    assert_eq!(
        list(dir),
        [
            "dict-1.qvs",
            "index-1.qvs",
            "manifest.json",
            "manifest.json.tmp"
        ]
    );
}

fn fs_mkdir(path: &Path) {
    std::fs::create_dir(path).unwrap();
}

#[test]
fn readers_racing_a_writer_see_whole_generations() {
    let tmp = TempDir::new("race");
    let dir = tmp.path().to_path_buf();
    commit(&dir, 0, "0");
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for seed in 1..=30 {
                commit(&dir, seed, &seed.to_string());
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        let mut opened = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) || opened == 0 {
            let reader = open(&dir).unwrap();
            let meta = reader.metadata()["meta"].as_str().unwrap().to_owned();
            let seed: u32 = meta.parse().unwrap();
            let offsets = reader.column::<u32>("index", "offsets").unwrap();
            assert_eq!(&*offsets, &[seed, seed + 1, seed + 2]);
            opened += 1;
        }
    });
    assert_generation(&dir, 31, 30, "30");
}
