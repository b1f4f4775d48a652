//! Damaged stores are refused at open with an error naming the damaged file.
//!
//! Every byte of every file is flipped in turn (the stores are small), every file is
//! truncated at several lengths, and version fields are patched; `open` must return an
//! error naming the file each time, and must never panic.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{list, open, open_err, TempDir};
use quiver_snapshot::SnapshotWriter;
use serde_json::json;

/// A small store whose files contain a header, sections, padding and a manifest.
fn small_store(dir: &Path) {
    let mut writer = SnapshotWriter::create(dir).unwrap();
    writer.section("dict", "bytes", b"odd length").unwrap();
    writer.section("dict", "empty", &[]).unwrap();
    writer.column("dict", "ids", &[1u32, 2, 3]).unwrap();
    writer.column("index", "offsets", &[0u64, 5, 9]).unwrap();
    writer.section("index", "tail", b"xyz").unwrap();
    writer
        .commit(json!({"triples": 3, "source": "test.nt"}))
        .unwrap();
}

fn files_of(dir: &Path) -> Vec<PathBuf> {
    let files: Vec<PathBuf> = list(dir).iter().map(|name| dir.join(name)).collect();
    assert_eq!(files.len(), 3, "expected two data files and a manifest");
    files
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_str().unwrap().to_owned()
}

#[test]
fn every_flipped_byte_is_detected() {
    let tmp = TempDir::new("flip");
    let dir = tmp.path();
    small_store(dir);
    assert!(open(dir).is_ok());
    for path in files_of(dir) {
        let name = file_name(&path);
        let original = fs::read(&path).unwrap();
        for position in 0..original.len() {
            for mask in [0x01u8, 0x20, 0x80] {
                let mut damaged = original.clone();
                damaged[position] ^= mask;
                fs::write(&path, &damaged).unwrap();
                let err = open_err(dir);
                assert!(
                    err.contains(&name),
                    "flip {mask:#x} at {position} of {name}: {err}"
                );
            }
        }
        fs::write(&path, &original).unwrap();
        assert!(open(dir).is_ok());
    }
}

#[test]
fn truncated_files_are_detected() {
    let tmp = TempDir::new("truncate");
    let dir = tmp.path();
    small_store(dir);
    for path in files_of(dir) {
        let name = file_name(&path);
        let original = fs::read(&path).unwrap();
        for len in [0, 1, original.len() / 2, original.len() - 1] {
            fs::write(&path, &original[..len]).unwrap();
            let err = open_err(dir);
            assert!(err.contains(&name), "{name} truncated to {len}: {err}");
            if name != "manifest.json" {
                assert!(
                    err.contains("truncated"),
                    "{name} truncated to {len}: {err}"
                );
            }
        }
        // Too long is as wrong as too short.
        let mut longer = original.clone();
        longer.extend_from_slice(&[0; 8]);
        fs::write(&path, &longer).unwrap();
        let err = open_err(dir);
        assert!(err.contains(&name), "{name} extended: {err}");
        fs::write(&path, &original).unwrap();
    }
    assert!(open(dir).is_ok());
}

#[test]
fn foreign_format_version_is_reported() {
    let tmp = TempDir::new("version");
    let dir = tmp.path();
    small_store(dir);
    let path = dir.join("index-1.qvs");
    let original = fs::read(&path).unwrap();
    let mut patched = original.clone();
    patched[8..12].copy_from_slice(&7u32.to_le_bytes());
    fs::write(&path, &patched).unwrap();
    let err = open_err(dir);
    assert!(
        err.contains("index-1.qvs") && err.contains("format version 7"),
        "{err}"
    );
    assert!(err.contains("reads version 1"), "{err}");
    fs::write(&path, &original).unwrap();

    // A manifest from another version, with a valid checksum.
    let path = dir.join("manifest.json");
    let text = fs::read_to_string(&path).unwrap();
    let body_start = text.find("\"manifest\":").unwrap() + "\"manifest\":".len();
    let body =
        text[body_start..text.len() - 2].replace("\"format_version\": 1", "\"format_version\": 9");
    let patched = format!(
        "{{\"crc32\":\"{:08x}\",\"manifest\":{body}}}\n",
        crc32fast::hash(body.as_bytes())
    );
    fs::write(&path, patched).unwrap();
    let err = open_err(dir);
    assert!(
        err.contains("manifest.json") && err.contains("format version 9"),
        "{err}"
    );
}

#[test]
fn missing_or_swapped_files_are_detected() {
    let tmp = TempDir::new("missing");
    let dir = tmp.path();
    small_store(dir);
    let old_index = fs::read(dir.join("index-1.qvs")).unwrap();
    small_store(dir); // generation 2, same contents

    // A file of the right size and contents but from another generation.
    let path = dir.join("index-2.qvs");
    let original = fs::read(&path).unwrap();
    assert_eq!(old_index.len(), original.len());
    fs::write(&path, &old_index).unwrap();
    let err = open_err(dir);
    assert!(
        err.contains("index-2.qvs") && err.contains("generation"),
        "{err}"
    );

    fs::remove_file(&path).unwrap();
    let err = open_err(dir);
    assert!(
        err.contains("index-2.qvs") && err.contains("missing"),
        "{err}"
    );
    fs::write(&path, &original).unwrap();
    assert!(open(dir).is_ok());

    fs::write(dir.join("manifest.json"), "hello").unwrap();
    let err = open_err(dir);
    assert!(
        err.contains("manifest.json") && err.contains("not a Quiver snapshot file"),
        "{err}"
    );
}

#[test]
fn no_store_is_reported() {
    let tmp = TempDir::new("nostore");
    let err = open_err(tmp.path());
    assert!(err.contains("no Quiver store here"), "{err}");
    assert!(err.contains(tmp.path().to_str().unwrap()), "{err}");
    let err = open_err(&tmp.path().join("does-not-exist"));
    assert!(err.contains("no Quiver store here"), "{err}");
}
