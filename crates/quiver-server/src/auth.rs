//! Who may write.
//!
//! A server started without `--writable` refuses every write (SPARQL Update, Graph Store
//! PUT/POST/DELETE) with 403. A writable server with an update token accepts a write only
//! with `Authorization: Bearer TOKEN`; anything else gets 401 with `WWW-Authenticate:
//! Bearer`. Reads never need the token.
//!
//! The token is compared in constant time ([`constant_time_eq`]): the time a comparison
//! takes depends on the expected token's length only, never on how many leading bytes of a
//! guess are right, so response times do not let a client find the token byte by byte. The
//! workspace has no `subtle` crate, and the dozen lines below do not warrant one.

use axum::http::{header, HeaderMap, StatusCode};

use crate::error::ApiError;

/// The message of every write refused by a read-only server.
pub const READ_ONLY: &str = "this endpoint is read-only: SPARQL Update and Graph Store writes \
     are refused (start the server with `quiver serve --writable` to allow them)";

/// The write policy of a server.
#[derive(Clone, Default)]
pub struct WriteAccess {
    /// Whether writes are allowed at all.
    pub writable: bool,
    /// The bearer token writes must carry, if any.
    pub token: Option<String>,
}

impl std::fmt::Debug for WriteAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the token.
        f.debug_struct("WriteAccess")
            .field("writable", &self.writable)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl WriteAccess {
    /// Whether the request with `headers` may write: 403 on a read-only server, 401 when a
    /// token is required and missing or wrong.
    pub fn check(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        if !self.writable {
            return Err(ApiError::new(StatusCode::FORBIDDEN, READ_ONLY));
        }
        match &self.token {
            Some(token) => check_bearer(headers, token),
            None => Ok(()),
        }
    }
}

/// Whether `headers` carry `Authorization: Bearer TOKEN` with this `token`: 401 otherwise.
pub fn check_bearer(headers: &HeaderMap, token: &str) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(ApiError::unauthorized(
            "this needs an Authorization: Bearer header with the server's update token",
        ));
    };
    // The scheme is case-insensitive (RFC 9110).
    let bytes = value.as_bytes();
    let presented = (bytes.len() > 7 && bytes[..7].eq_ignore_ascii_case(b"bearer "))
        .then(|| bytes[7..].trim_ascii());
    match presented {
        Some(presented) if constant_time_eq(presented, token.as_bytes()) => Ok(()),
        Some(_) => Err(ApiError::unauthorized("wrong update token")),
        None => Err(ApiError::unauthorized(
            "this needs an Authorization: Bearer header with the server's update token",
        )),
    }
}

/// Whether `presented` equals `expected`, in time that depends only on `expected.len()`.
pub fn constant_time_eq(presented: &[u8], expected: &[u8]) -> bool {
    // A length mismatch is folded into the difference instead of returning early.
    let mut difference = (presented.len() ^ expected.len()) as u64;
    for (i, &byte) in expected.iter().enumerate() {
        let other = presented.get(i).copied().unwrap_or(0);
        difference |= u64::from(std::hint::black_box(other ^ byte));
    }
    std::hint::black_box(difference) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn constant_time_compare() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secreT", b"secret"));
        assert!(!constant_time_eq(b"secret!", b"secret"));
        assert!(!constant_time_eq(b"secre", b"secret"));
        assert!(!constant_time_eq(b"", b"secret"));
        assert!(constant_time_eq(b"", b""));
        // A prefix padded with NUL bytes is not the token either.
        assert!(!constant_time_eq(b"secret\0", b"secret"));
    }

    fn headers(authorization: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(value) = authorization {
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn policy() {
        let read_only = WriteAccess::default();
        let error = read_only.check(&headers(None)).unwrap_err();
        assert_eq!(error.status, StatusCode::FORBIDDEN);
        let open = WriteAccess {
            writable: true,
            token: None,
        };
        assert!(open.check(&headers(None)).is_ok());
        let guarded = WriteAccess {
            writable: true,
            token: Some("t0ken".into()),
        };
        assert!(guarded.check(&headers(Some("Bearer t0ken"))).is_ok());
        assert!(guarded.check(&headers(Some("BEARER  t0ken "))).is_ok());
        for bad in [
            None,
            Some("Bearer t0keN"),
            Some("Basic t0ken"),
            Some("t0ken"),
        ] {
            let error = guarded.check(&headers(bad)).unwrap_err();
            assert_eq!(error.status, StatusCode::UNAUTHORIZED, "{bad:?}");
            assert!(error.bearer_challenge);
        }
        assert!(!format!("{guarded:?}").contains("t0ken"));
    }
}
