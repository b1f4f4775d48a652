//! One remote call: a SPARQL Protocol query request (POST, form-encoded) and its response
//! body, read frame by frame under a byte cap and the query's memory budget, all within
//! the per-request timeout. Redirects (an `http:` endpoint moved to `https:`, as public
//! endpoints do) are followed up to [`MAX_REDIRECTS`] times, the query posted again to the
//! new location, whose host the allow-list must admit too.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{ACCEPT, CONTENT_TYPE, LOCATION, USER_AGENT};
use hyper::{Request, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use quiver_sparql::memory::MemoryBudget;
use quiver_sparql::ServiceError;

use crate::answer;

/// The pooled HTTP/1.1 client every call goes through (TLS for `https:` endpoints).
pub(crate) type HttpClient = Client<HttpsConnector<HttpConnector>, Full<Bytes>>;

/// Bytes of an error response's body kept for the message.
const ERROR_SNIPPET: usize = 300;

/// Redirects followed at most in one call.
pub(crate) const MAX_REDIRECTS: usize = 3;

/// What one call sends and how long it may take.
pub(crate) struct Call {
    pub uri: Uri,
    pub query: String,
    pub timeout: Duration,
    pub max_bytes: usize,
    /// The hosts a redirect may lead to.
    pub allow: crate::Allow,
}

/// A successful response: its media type and body.
pub(crate) struct Response {
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Runs `call`; the body's bytes are charged to `budget` while they are read.
pub(crate) async fn run(
    client: HttpClient,
    call: Call,
    budget: Arc<MemoryBudget>,
) -> Result<Response, ServiceError> {
    let form = Bytes::from(
        form_urlencoded::Serializer::new(String::new())
            .append_pair("query", &call.query)
            .finish(),
    );
    let exchange = async {
        let mut uri = call.uri.clone();
        let mut redirects = 0;
        let response = loop {
            let request = Request::post(uri.clone())
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(ACCEPT, answer::ACCEPT)
                .header(USER_AGENT, concat!("quiver/", env!("CARGO_PKG_VERSION")))
                .body(Full::new(form.clone()))
                .map_err(|e| ServiceError::Failed(format!("cannot build the request: {e}")))?;
            let response = client
                .request(request)
                .await
                .map_err(|e| ServiceError::Failed(chain(&e)))?;
            if !response.status().is_redirection() {
                break response;
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            if redirects == MAX_REDIRECTS || location.is_empty() {
                return Err(ServiceError::Failed(format!(
                    "answered HTTP {} to {location:?}{}",
                    response.status(),
                    if location.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " after {redirects} redirects (at most {MAX_REDIRECTS} are followed)"
                        )
                    }
                )));
            }
            uri = redirected(&uri, location, &call.allow)?;
            redirects += 1;
        };
        let status = response.status();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let mut body = response.into_body();
        let mut reservation = budget.reservation();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| {
                ServiceError::Failed(format!("the response broke off: {}", chain(&e)))
            })?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            if bytes.len() + data.len() > call.max_bytes {
                return Err(ServiceError::Failed(format!(
                    "the response is larger than the cap of {} bytes (--service-max-bytes)",
                    call.max_bytes
                )));
            }
            reservation.try_grow(data.len())?;
            bytes.extend_from_slice(&data);
            if !status.is_success() && bytes.len() >= ERROR_SNIPPET {
                break;
            }
        }
        if !status.is_success() {
            let snippet = String::from_utf8_lossy(&bytes[..bytes.len().min(ERROR_SNIPPET)])
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            return Err(ServiceError::Failed(format!(
                "answered HTTP {status}{}",
                if snippet.is_empty() {
                    String::new()
                } else {
                    format!(": {snippet}")
                }
            )));
        }
        Ok(Response {
            content_type,
            body: bytes,
        })
    };
    match tokio::time::timeout(call.timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(ServiceError::Failed(format!(
            "no answer within {:.1} s (--service-timeout)",
            call.timeout.as_secs_f64()
        ))),
    }
}

/// Where a redirect from `from` to `location` (absolute, or a path on the same host) leads,
/// if `allow` admits its host.
fn redirected(from: &Uri, location: &str, allow: &crate::Allow) -> Result<Uri, ServiceError> {
    let target: Uri = if location.starts_with('/') {
        let authority = from.authority().map_or("", |a| a.as_str());
        let scheme = from.scheme_str().unwrap_or("http");
        format!("{scheme}://{authority}{location}").parse()
    } else {
        location.parse()
    }
    .map_err(|e| ServiceError::Failed(format!("redirected to an invalid URL {location:?}: {e}")))?;
    if !matches!(target.scheme_str(), Some("http" | "https")) || target.host().is_none() {
        return Err(ServiceError::Failed(format!(
            "redirected to {location:?}, not an http: or https: URL"
        )));
    }
    allow
        .check_uri(&target)
        .map_err(|e| ServiceError::Refused(format!("redirected to {target}: {e}")))?;
    Ok(target)
}

/// An error and its causes, `a: b: c` (hyper's own message is only the outermost).
fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let part = cause.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = cause.source();
    }
    text
}
