//! The on-disk layout: data-file header, manifest envelope and file naming.
//!
//! Both the writer and the reader go through this module, so the layout is defined in
//! exactly one place. Decoding treats every byte as untrusted: lengths are checked
//! before any slice is taken and every failure is an error naming the file.
//!
//! # Data file `<file>-<generation>.qvs`
//!
//! A 64-byte little-endian header, then the sections, each starting at a multiple of 8
//! and preceded by zero padding:
//!
//! | bytes  | field                                  |
//! |--------|----------------------------------------|
//! | 0..8   | magic `QUIVERSN`                       |
//! | 8..12  | format version (`u32`)                 |
//! | 12..16 | number of sections (`u32`)             |
//! | 16..24 | generation (`u64`)                     |
//! | 24..32 | total file length in bytes (`u64`)     |
//! | 32     | byte order of the values: 0 little-, 1 big-endian |
//! | 33..60 | reserved, zero                         |
//! | 60..64 | crc32 of bytes 0..60                   |
//!
//! # Manifest `manifest.json`
//!
//! `{"crc32":"<8 lowercase hex digits>","manifest":<body>}` and a newline, where the
//! checksum covers the exact bytes of `<body>`, a JSON [`Manifest`] that holds the table
//! of contents (each file's size and each section's offset, length and crc32) and the
//! caller's metadata. Checksumming raw bytes (not re-serialized JSON) keeps the check
//! exact, and the whole file is still plain JSON for anyone who wants to look.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{SnapshotError, FORMAT_VERSION};

/// Name of the manifest inside a store directory.
pub(crate) const MANIFEST: &str = "manifest.json";
/// Name of the manifest while it is being written.
pub(crate) const MANIFEST_TMP: &str = "manifest.json.tmp";
/// Extension of data files.
const DATA_EXT: &str = ".qvs";
/// Extra extension of data files still being written.
const TMP_EXT: &str = ".tmp";

/// Bytes in a data-file header; also the offset of the first section.
pub(crate) const HEADER_LEN: usize = 64;
/// Alignment of every section within its file.
pub(crate) const ALIGN: u64 = 8;
const MAGIC: &[u8; 8] = b"QUIVERSN";
/// Value of the manifest's `magic` field.
pub(crate) const MANIFEST_MAGIC: &str = "quiver-snapshot";

const ENVELOPE_PREFIX: &[u8] = b"{\"crc32\":\"";
const ENVELOPE_MID: &[u8] = b"\",\"manifest\":";
const ENVELOPE_SUFFIX: &[u8] = b"}\n";
const HEX: &[u8; 16] = b"0123456789abcdef";
/// Byte-order tag of this build; sections hold values in native byte order.
const NATIVE_ORDER: u8 = if cfg!(target_endian = "big") { 1 } else { 0 };

/// The fixed-size header at the start of every data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub section_count: u32,
    pub generation: u64,
    pub file_len: u64,
}

impl Header {
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&self.section_count.to_le_bytes());
        h[16..24].copy_from_slice(&self.generation.to_le_bytes());
        h[24..32].copy_from_slice(&self.file_len.to_le_bytes());
        h[32] = NATIVE_ORDER;
        let crc = crc32fast::hash(&h[..60]);
        h[60..64].copy_from_slice(&crc.to_le_bytes());
        h
    }

    /// Decodes and checks the header at the start of `bytes` (the file at `path`).
    /// The version is checked before the checksum, so a file from another format
    /// version is reported as such rather than as corrupt.
    pub(crate) fn decode(path: &Path, bytes: &[u8]) -> Result<Header, SnapshotError> {
        let Some(h) = bytes.get(..HEADER_LEN) else {
            return Err(SnapshotError::Truncated {
                path: path.to_path_buf(),
                expected: HEADER_LEN as u64,
                found: bytes.len() as u64,
            });
        };
        let u32_at = |at: usize| u32::from_le_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
        let u64_at = |at: usize| u64::from(u32_at(at)) | (u64::from(u32_at(at + 4)) << 32);
        if &h[0..8] != MAGIC {
            return Err(SnapshotError::NotSnapshot {
                path: path.to_path_buf(),
            });
        }
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(SnapshotError::Version {
                path: path.to_path_buf(),
                found: version.into(),
            });
        }
        if crc32fast::hash(&h[..60]) != u32_at(60) {
            return Err(SnapshotError::Checksum {
                path: path.to_path_buf(),
                region: "header".into(),
            });
        }
        if h[32] != NATIVE_ORDER {
            let reason = "written on a machine of the other byte order; rebuild the store here";
            return Err(SnapshotError::corrupt(path, reason));
        }
        if h[33..60].iter().any(|&b| b != 0) {
            return Err(SnapshotError::corrupt(
                path,
                "reserved header bytes are not zero",
            ));
        }
        Ok(Header {
            section_count: u32_at(12),
            generation: u64_at(16),
            file_len: u64_at(24),
        })
    }
}

/// The manifest body: what a generation consists of, and the caller's metadata.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Manifest {
    pub magic: String,
    pub format_version: u64,
    pub generation: u64,
    pub files: Vec<FileEntry>,
    pub metadata: serde_json::Value,
}

/// One data file of a generation.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileEntry {
    /// Logical name; the file on disk is [`data_file_name`]`(name, generation)`.
    pub name: String,
    /// Exact size on disk in bytes.
    pub size: u64,
    pub sections: Vec<SectionEntry>,
}

/// One section of a data file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SectionEntry {
    pub name: String,
    /// Byte offset within the file; a multiple of [`ALIGN`], at least [`HEADER_LEN`].
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
    pub crc32: u32,
}

/// Serializes a manifest into its checksummed envelope.
pub(crate) fn encode_manifest(manifest: &Manifest) -> Vec<u8> {
    let body = serde_json::to_vec_pretty(manifest).expect("a JSON value always serializes");
    let crc = crc32fast::hash(&body);
    let mut out = Vec::with_capacity(body.len() + 32);
    out.extend_from_slice(ENVELOPE_PREFIX);
    out.extend((0..8).rev().map(|i| HEX[((crc >> (4 * i)) & 0xf) as usize]));
    out.extend_from_slice(ENVELOPE_MID);
    out.extend_from_slice(&body);
    out.extend_from_slice(ENVELOPE_SUFFIX);
    out
}

/// Checks a manifest's envelope, checksum and version, and parses it.
pub(crate) fn decode_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, SnapshotError> {
    let not_snapshot = || SnapshotError::NotSnapshot {
        path: path.to_path_buf(),
    };
    let rest = bytes
        .strip_prefix(ENVELOPE_PREFIX)
        .ok_or_else(not_snapshot)?;
    let (hex, rest) = rest.split_at_checked(8).ok_or_else(not_snapshot)?;
    let mut expected = 0u32;
    for &digit in hex {
        let value = HEX
            .iter()
            .position(|&h| h == digit)
            .ok_or_else(not_snapshot)?;
        expected = (expected << 4) | value as u32;
    }
    let body = rest
        .strip_prefix(ENVELOPE_MID)
        .and_then(|rest| rest.strip_suffix(ENVELOPE_SUFFIX))
        .ok_or_else(not_snapshot)?;
    if crc32fast::hash(body) != expected {
        return Err(SnapshotError::Checksum {
            path: path.to_path_buf(),
            region: "manifest".into(),
        });
    }
    // Look at the version before the full schema, which another version may change.
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| SnapshotError::corrupt(path, format!("manifest is not valid JSON: {e}")))?;
    if value.get("magic").and_then(|m| m.as_str()) != Some(MANIFEST_MAGIC) {
        return Err(not_snapshot());
    }
    match value.get("format_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(FORMAT_VERSION) => {}
        Some(found) => {
            return Err(SnapshotError::Version {
                path: path.to_path_buf(),
                found,
            })
        }
        None => {
            return Err(SnapshotError::corrupt(
                path,
                "manifest has no format_version",
            ))
        }
    }
    serde_json::from_value(value)
        .map_err(|e| SnapshotError::corrupt(path, format!("malformed manifest: {e}")))
}

/// Checks that `name` can be used as a logical file name (it becomes part of a path).
pub(crate) fn validate_file_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || name.len() > 100 || name.starts_with('.') || !name.chars().all(ok_char) {
        return Err(format!(
            "invalid file name '{name}' (use 1 to 100 ASCII letters, digits, '_', '-' or '.', \
             not starting with '.')"
        ));
    }
    Ok(())
}

/// Final name of the data file `name` of generation `generation`.
pub(crate) fn data_file_name(name: &str, generation: u64) -> String {
    format!("{name}-{generation}{DATA_EXT}")
}

/// Name of the data file while it is being written.
pub(crate) fn tmp_file_name(name: &str, generation: u64) -> String {
    format!("{}{TMP_EXT}", data_file_name(name, generation))
}

/// Recognizes names made by [`data_file_name`] or [`tmp_file_name`]: the generation and
/// whether it is a temporary file.
pub(crate) fn parse_file_name(file_name: &str) -> Option<(u64, bool)> {
    let (stem, tmp) = match file_name.strip_suffix(TMP_EXT) {
        Some(stem) => (stem, true),
        None => (file_name, false),
    };
    let (name, generation) = stem.strip_suffix(DATA_EXT)?.rsplit_once('-')?;
    validate_file_name(name).ok()?;
    if generation.is_empty() || !generation.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((generation.parse().ok()?, tmp))
}

/// Rounds `n` up to the next multiple of [`ALIGN`].
pub(crate) fn align_up(n: u64) -> Option<u64> {
    n.checked_add(ALIGN - 1).map(|n| n & !(ALIGN - 1))
}

/// Makes renames and file creations inside `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), SnapshotError> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| SnapshotError::io(dir, e))?;
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let header = Header {
            section_count: 3,
            generation: 42,
            file_len: 1234,
        };
        let bytes = header.encode();
        assert_eq!(Header::decode(Path::new("f"), &bytes).unwrap(), header);
        assert!(Header::decode(Path::new("f"), &bytes[..63]).is_err());
    }

    #[test]
    fn file_names() {
        assert_eq!(parse_file_name(&data_file_name("a-b", 7)), Some((7, false)));
        assert_eq!(
            parse_file_name(&tmp_file_name("index", 12)),
            Some((12, true))
        );
        assert_eq!(parse_file_name("manifest.json"), None);
        assert_eq!(parse_file_name("x-.qvs"), None);
        assert_eq!(parse_file_name("x-+1.qvs"), None);
        assert!(validate_file_name("../etc").is_err());
        assert!(validate_file_name("").is_err());
    }

    #[test]
    fn manifest_round_trip() {
        let manifest = Manifest {
            magic: MANIFEST_MAGIC.into(),
            format_version: FORMAT_VERSION.into(),
            generation: 5,
            files: vec![],
            metadata: serde_json::json!({"x": 1.5, "y": [1, 2]}),
        };
        let bytes = encode_manifest(&manifest);
        let back = decode_manifest(Path::new("m"), &bytes).unwrap();
        assert_eq!(back.generation, 5);
        assert_eq!(back.metadata, manifest.metadata);
    }
}
