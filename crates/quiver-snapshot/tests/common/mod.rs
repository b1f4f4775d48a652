//! Helpers shared by the integration tests: self-cleaning temporary directories and a
//! panic-catching `open`.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use quiver_snapshot::{SnapshotError, SnapshotReader};

/// A fresh directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!(
            "quiver-snapshot-test-{tag}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens `dir`, failing the test if the library panics.
pub fn open(dir: &Path) -> Result<SnapshotReader, SnapshotError> {
    std::panic::catch_unwind(|| SnapshotReader::open(dir)).expect("SnapshotReader::open panicked")
}

/// Opens `dir`, which must fail; returns the error message.
pub fn open_err(dir: &Path) -> String {
    match open(dir) {
        Ok(reader) => panic!(
            "open succeeded unexpectedly (generation {})",
            reader.generation()
        ),
        Err(e) => e.to_string(),
    }
}

/// Names of the entries of `dir`, sorted.
pub fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}
