//! Errors: [`ServerError`] for starting and running the server, [`ApiError`] for one request
//! (an HTTP status with a readable plain-text message, never a panic).

use std::net::SocketAddr;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use quiver_db::DbError;
use quiver_sparql::QueryError;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("server error: {0}")]
    Serve(std::io::Error),
    /// `--writable` on an address other hosts can reach, without an update token.
    #[error(
        "refusing to accept updates on {address} (not loopback) without an update token: \
         set --update-token TOKEN or QUIVER_UPDATE_TOKEN, or bind to 127.0.0.1"
    )]
    WritableWithoutToken { address: SocketAddr },
    /// Datasets that cannot be served together (a bad or repeated name).
    #[error("{0}")]
    Datasets(String),
}

/// A request that gets an error status; the message is the response body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds for a `Retry-After` header (503).
    pub retry_after: Option<u32>,
    /// Adds `WWW-Authenticate: Bearer` (401).
    pub bearer_challenge: bool,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
            bearer_challenge: false,
        }
    }

    /// 401 with `WWW-Authenticate: Bearer`.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self {
            bearer_challenge: true,
            ..Self::new(StatusCode::UNAUTHORIZED, message)
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 503 with `Retry-After: 1`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self {
            retry_after: Some(1),
            ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message)
        }
    }

    /// The status for an engine error: bad queries are the client's (400), time limits 504,
    /// result caps 422, cancellation (shutdown) and a cluster that cannot answer 503, the
    /// memory budget 507, a failed GPU 500, a refused SERVICE 403 and a failed one 502.
    pub fn from_query(error: &QueryError) -> Self {
        let status = match error {
            QueryError::Syntax(_)
            | QueryError::Plan(_)
            | QueryError::Unsupported(_)
            | QueryError::Update(_)
            | QueryError::Text(_) => StatusCode::BAD_REQUEST,
            QueryError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            QueryError::TooManyResults(_) => StatusCode::UNPROCESSABLE_ENTITY,
            QueryError::Cancelled | QueryError::Cluster(_) => StatusCode::SERVICE_UNAVAILABLE,
            QueryError::MemoryLimit { .. } | QueryError::IdsExhausted(_) => {
                StatusCode::INSUFFICIENT_STORAGE
            }
            QueryError::Device(_) => StatusCode::INTERNAL_SERVER_ERROR,
            QueryError::ServiceRefused(_) => StatusCode::FORBIDDEN,
            QueryError::Service { .. } => StatusCode::BAD_GATEWAY,
        };
        let mut message = error.to_string();
        if let QueryError::TooManyResults(_) = error {
            message.push_str(" (the server's --max-results); add a LIMIT");
        }
        Self::new(status, message)
    }
}

impl ApiError {
    /// The status for a failed write: the engine's errors as for queries, a read-only
    /// database 403, a transaction too large to log 413, the rest (a change set the store
    /// refuses, a failed log write) 500.
    pub fn from_db(error: &DbError) -> Self {
        match error {
            DbError::Query(error) => Self::from_query(error),
            DbError::ReadOnly(message) => Self::new(StatusCode::FORBIDDEN, message.clone()),
            DbError::TooLarge(message) => Self::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("the update is too large for one transaction: {message}"),
            ),
            DbError::Apply(quiver_store::ApplyError::IdsExhausted) => Self::new(
                StatusCode::INSUFFICIENT_STORAGE,
                format!("the update was not committed: {error}"),
            ),
            other => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the update was not committed: {other}"),
            ),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = self.message;
        body.push('\n');
        let mut response = (self.status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        );
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if let Some(seconds) = self.retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.bearer_challenge {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"quiver\""),
            );
        }
        response
    }
}
