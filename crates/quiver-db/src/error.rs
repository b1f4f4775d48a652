//! The errors of the database.

use std::path::{Path, PathBuf};

use quiver_sparql::QueryError;
use quiver_store::{ApplyError, StoreError};

/// Errors of the database.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error(transparent)]
    Query(#[from] QueryError),
    #[error(transparent)]
    Apply(#[from] ApplyError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Text(#[from] quiver_text::TextError),
    // The I/O error is part of the message, so it is deliberately not the `source()`
    // too (a field named `source` would be, and `{:#}` would print it twice).
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// The write-ahead log cannot be used: a record that does not continue the snapshot,
    /// a file of another format.
    #[error("{path}: {message}")]
    Log { path: PathBuf, message: String },
    /// A transaction too large for one log record.
    #[error("the transaction is too large to log: {0}")]
    TooLarge(String),
    /// The database takes no more writes (opened without write access, or its log is in an
    /// unknown state after a failed write that could not be undone).
    #[error("{0}")]
    ReadOnly(String),
}

impl DbError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        DbError::Io {
            path: path.to_owned(),
            error: source,
        }
    }

    pub(crate) fn log(path: &Path, message: impl Into<String>) -> Self {
        DbError::Log {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

/// A failure of a group of commits, kept to be handed to every committer of the group
/// (an `io::Error` cannot be cloned, so its kind and text are kept).
#[derive(Debug, Clone)]
pub(crate) struct SharedFailure {
    pub path: PathBuf,
    pub kind: std::io::ErrorKind,
    pub message: String,
    pub read_only: bool,
}

impl SharedFailure {
    pub(crate) fn from_error(error: &DbError) -> Self {
        match error {
            DbError::Io { path, error } => SharedFailure {
                path: path.clone(),
                kind: error.kind(),
                message: error.to_string(),
                read_only: false,
            },
            DbError::ReadOnly(message) => SharedFailure {
                path: PathBuf::new(),
                kind: std::io::ErrorKind::Other,
                message: message.clone(),
                read_only: true,
            },
            other => SharedFailure {
                path: PathBuf::new(),
                kind: std::io::ErrorKind::Other,
                message: other.to_string(),
                read_only: false,
            },
        }
    }

    pub(crate) fn to_error(&self) -> DbError {
        if self.read_only {
            return DbError::ReadOnly(self.message.clone());
        }
        DbError::Io {
            path: self.path.clone(),
            error: std::io::Error::new(self.kind, self.message.clone()),
        }
    }
}
