//! Copying a store's sections out and writing them back as a new generation.
//!
//! The writer computes fresh checksums, so a section changed in between yields a store
//! whose files verify but whose contents may be anything: how tests and fuzzers craft
//! stores that reach the structural validation behind the checksums.

use std::path::Path;

use crate::{SnapshotError, SnapshotReader, SnapshotWriter};

/// One section's bytes and where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub file: String,
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Every section of the store in `dir` (by file name, then position in the file) and its
/// metadata.
pub fn read_sections(dir: &Path) -> Result<(Vec<Section>, serde_json::Value), SnapshotError> {
    let reader = SnapshotReader::open(dir)?;
    let mut sections = Vec::new();
    for (file, name) in reader.section_names() {
        let bytes = reader.column::<u8>(&file, &name)?.to_vec();
        sections.push(Section { file, name, bytes });
    }
    Ok((sections, reader.metadata().clone()))
}

/// Commits `sections` and `metadata` as a new generation of the store in `dir` (created
/// if absent); returns its bytes on disk.
pub fn write_sections(
    dir: &Path,
    sections: &[Section],
    metadata: serde_json::Value,
) -> Result<u64, SnapshotError> {
    let mut writer = SnapshotWriter::create(dir)?;
    for section in sections {
        writer.section(&section.file, &section.name, &section.bytes)?;
    }
    writer.commit(metadata)
}
