//! Errors of preparing and executing queries.

/// Why a query could not be prepared or run.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// Invalid SPARQL; the message carries the line and column.
    #[error("invalid query: {0}")]
    Syntax(String),
    /// A user-supplied plan that does not fit the query.
    #[error("invalid plan: {0}")]
    Plan(String),
    /// A feature this engine does not evaluate yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The query ran past its time limit.
    #[error("query timed out after {0:.1} s")]
    Timeout(f64),
    /// The query was cancelled.
    #[error("query cancelled")]
    Cancelled,
    /// The result would exceed the configured cap.
    #[error("result exceeds the limit of {0} rows")]
    TooManyResults(usize),
}
