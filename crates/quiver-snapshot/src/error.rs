//! The one error type of this crate.
//!
//! Every variant carries the path of the file (or store directory) involved, and its
//! message starts with that path, so an operator can tell at a glance which file of a
//! store is damaged or missing.

use std::io;
use std::path::{Path, PathBuf};

use crate::FORMAT_VERSION;

/// Why a snapshot could not be written or opened.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// An operating-system error while reading or writing `path`. The I/O error is part
    /// of the message, so it is not also the `source()` (which would print it twice).
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },

    /// `dir` holds no manifest, so there is no store to open.
    #[error("{}: no Quiver store here (missing manifest)", dir.display())]
    NoStore { dir: PathBuf },

    /// The manifest lists a data file that does not exist.
    #[error("{}: missing (the manifest lists it, but the file does not exist)", path.display())]
    MissingFile { path: PathBuf },

    /// The file does not start with the expected magic bytes.
    #[error("{}: not a Quiver snapshot file", path.display())]
    NotSnapshot { path: PathBuf },

    /// The file was written by a build using another format version.
    #[error(
        "{}: format version {found}, this build reads version {FORMAT_VERSION}",
        path.display()
    )]
    Version { path: PathBuf, found: u64 },

    /// The file is shorter than the manifest or its header says.
    #[error("{}: truncated (expected {expected} bytes, found {found})", path.display())]
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },

    /// A checksum does not match; `region` is e.g. "section 'offsets'", "header" or "manifest".
    #[error("{}: checksum mismatch in {region}", path.display())]
    Checksum { path: PathBuf, region: String },

    /// The file is structurally damaged in some other way.
    #[error("{}: corrupt: {reason}", path.display())]
    Corrupt { path: PathBuf, reason: String },

    /// The requested section is not in the store.
    #[error("{}: no section '{section}' in file '{file}'", path.display())]
    MissingSection {
        path: PathBuf,
        file: String,
        section: String,
    },

    /// The section exists but cannot be viewed as the requested element type.
    #[error("{}: section '{section}' cannot be viewed as {ty}: {reason}", path.display())]
    BadColumn {
        path: PathBuf,
        section: String,
        ty: &'static str,
        reason: String,
    },

    /// The writer was used wrongly (bad name, duplicate section, use after a failed write).
    #[error("{}: {reason}", path.display())]
    Usage { path: PathBuf, reason: String },
}

impl SnapshotError {
    /// Wraps an I/O error with the path it happened on.
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        SnapshotError::Io {
            path: path.to_path_buf(),
            error: source,
        }
    }

    pub(crate) fn corrupt(path: &Path, reason: impl Into<String>) -> Self {
        SnapshotError::Corrupt {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    pub(crate) fn usage(path: &Path, reason: impl Into<String>) -> Self {
        SnapshotError::Usage {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }
}
