//! The package's exceptions, and the mapping of engine and loader errors onto Python's.
//!
//! Invalid SPARQL and malformed RDF raise `SyntaxError` (as pyoxigraph does), with the
//! line and column in the message; a missing file raises `FileNotFoundError` naming the
//! path; a time limit raises `quiver.QueryTimeout` (a `TimeoutError`); other failures of a
//! query or update raise `quiver.QueryError`; a store that cannot be read or written raises
//! `OSError`.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyException, PyFileNotFoundError, PyNotImplementedError, PyOSError, PySyntaxError,
    PyTimeoutError, PyValueError,
};
use pyo3::PyErr;
use quiver_db::DbError;
use quiver_loader::LoadError;
use quiver_sparql::QueryError as EngineError;
use quiver_store::StoreError;

create_exception!(
    quiver,
    QueryError,
    PyException,
    "A query that could not run: too many results, its memory limit, a cancellation."
);
create_exception!(
    quiver,
    QueryTimeout,
    PyTimeoutError,
    "A query that ran past its `timeout`."
);

pub fn query_error(error: EngineError) -> PyErr {
    let message = error.to_string();
    match error {
        EngineError::Syntax(_) | EngineError::Plan(_) => PySyntaxError::new_err(message),
        EngineError::Unsupported(_) => PyNotImplementedError::new_err(message),
        EngineError::Timeout(_) => QueryTimeout::new_err(message),
        _ => QueryError::new_err(message),
    }
}

pub fn load_error(error: LoadError) -> PyErr {
    let message = error.to_string();
    match error {
        LoadError::Io { path, error } => io_error(&path, &error, message),
        LoadError::Syntax { .. } => PySyntaxError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// The exception of a database error: a query's for evaluation errors, `OSError` for the
/// disk.
pub fn db_error(error: DbError) -> PyErr {
    match error {
        DbError::Query(error) => query_error(error),
        DbError::Store(error) => store_error(error),
        DbError::Io { path, error } => {
            let message = format!("{}: {error}", path.display());
            io_error(&path, &error, message)
        }
        DbError::Apply(error) => QueryError::new_err(error.to_string()),
        other => PyOSError::new_err(other.to_string()),
    }
}

pub fn store_error(error: StoreError) -> PyErr {
    PyOSError::new_err(error.to_string())
}

/// An `OSError` of the right subclass (`FileNotFoundError`…) with `errno` and `filename`.
pub fn io_error(path: &std::path::Path, error: &std::io::Error, message: String) -> PyErr {
    let filename = path.display().to_string();
    match error.raw_os_error() {
        Some(errno) if error.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err((errno, message, filename))
        }
        Some(errno) => PyOSError::new_err((errno, message, filename)),
        None => PyOSError::new_err(message),
    }
}
