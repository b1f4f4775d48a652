//! `bench log --endpoint URL` and `bench bsbm --endpoint URL`: each query sent to a SPARQL
//! 1.1 Protocol endpoint (Quiver's, or any other) as a URL-encoded POST (`query=…`, the
//! form every endpoint takes: Virtuoso 7.2 leaves a POST `application/sparql-query`
//! unanswered) on one keep-alive HTTP/1.1 connection (hyper's client), timed from the
//! request to the last byte of its result (TSV for solutions, N-Triples for graphs; rows
//! are also counted in SPARQL XML and JSON results, which some endpoints answer instead).
//! A query past the time limit is abandoned with its connection, and the next query
//! opens a new one.
//!
//! The status comes from the HTTP status: 200 answered, 400 a syntax error (or
//! "unsupported" when the message says so), 504 or the client's own time limit a
//! timeout, 507 the memory budget, 422 the result cap, anything else an error.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;

/// A SPARQL endpoint and the connection to it, if one is open.
pub(crate) struct Endpoint {
    runtime: tokio::runtime::Runtime,
    uri: Uri,
    address: String,
    connection: Option<SendRequest<Full<Bytes>>>,
}

/// What one request gave: rows, or a status and its message.
pub(crate) type Answer = std::result::Result<usize, (&'static str, String)>;

impl Endpoint {
    pub(crate) fn new(url: &str) -> Result<Self> {
        let uri: Uri = url
            .parse()
            .with_context(|| format!("--endpoint {url}: not a URL"))?;
        if uri.scheme_str() != Some("http") {
            bail!("--endpoint {url}: only http:// endpoints are supported");
        }
        let host = uri.host().context("--endpoint: no host")?;
        let address = format!("{host}:{}", uri.port_u16().unwrap_or(80));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Self {
            runtime,
            uri,
            address,
            connection: None,
        })
    }

    /// Sends `text` and reads its whole answer: its rows, or its status and message.
    pub(crate) fn request(&mut self, text: &str, timeout: Duration) -> Answer {
        let connection = self.connection.take();
        let (uri, address) = (self.uri.clone(), self.address.clone());
        let body = Bytes::from(
            form_urlencoded::Serializer::new(String::new())
                .append_pair("query", text)
                .finish(),
        );
        let (answer, connection) = self.runtime.block_on(async move {
            let work = async move {
                let mut sender = match connection {
                    Some(sender) if !sender.is_closed() => sender,
                    _ => connect(&address).await?,
                };
                let request = Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
                    .header(hyper::header::HOST, address.as_str())
                    .header(
                        hyper::header::CONTENT_TYPE,
                        "application/x-www-form-urlencoded",
                    )
                    .header(
                        hyper::header::ACCEPT,
                        "text/tab-separated-values, application/n-triples;q=0.9, */*;q=0.1",
                    )
                    .body(Full::new(body))
                    .map_err(|e| ("error", e.to_string()))?;
                let response = sender
                    .send_request(request)
                    .await
                    .map_err(|e| ("error", format!("the endpoint: {e}")))?;
                let status = response.status();
                let content_type = response
                    .headers()
                    .get(hyper::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                let kind = if content_type.contains("json") {
                    Kind::Json
                } else if content_type.contains("tab-separated") {
                    Kind::Tsv
                } else if content_type.contains("sparql-results+xml") {
                    Kind::Xml
                } else {
                    Kind::Lines
                };
                let bytes = response
                    .into_body()
                    .collect()
                    .await
                    .map_err(|e| ("error", format!("reading the result: {e}")))?
                    .to_bytes();
                Ok::<_, (&'static str, String)>((status, kind, bytes, sender))
            };
            match tokio::time::timeout(timeout, work).await {
                Ok(Ok((status, kind, bytes, sender))) => {
                    (answer(status.as_u16(), kind, &bytes), Some(sender))
                }
                Ok(Err(error)) => (Err(error), None),
                Err(_) => (
                    Err(("timeout", format!("no whole answer after {timeout:?}"))),
                    None,
                ),
            }
        });
        self.connection = connection;
        answer
    }
}

async fn connect(
    address: &str,
) -> std::result::Result<SendRequest<Full<Bytes>>, (&'static str, String)> {
    let stream = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| ("error", format!("cannot connect to {address}: {e}")))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| ("error", format!("HTTP handshake with {address}: {e}")))?;
    tokio::spawn(connection);
    Ok(sender)
}

/// The syntax of a result, as its content type says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// SPARQL JSON: asked for booleans only (some endpoints answer it for solutions too).
    Json,
    Tsv,
    /// SPARQL XML results.
    Xml,
    /// One line per triple (N-Triples) or anything else.
    Lines,
}

/// Rows of a 200 answer, or the status of an error answer.
fn answer(status: u16, kind: Kind, body: &[u8]) -> Answer {
    let message = || String::from_utf8_lossy(body).trim().to_owned();
    match status {
        200 => Ok(rows(kind, body)),
        400 if message().contains("unsupported") => Err(("unsupported", message())),
        400 => Err(("syntax", message())),
        504 => Err(("timeout", message())),
        507 => Err(("memory", message())),
        422 => Err(("too-many-results", message())),
        other => Err(("error", format!("HTTP {other}: {}", message()))),
    }
}

/// Rows of a result: TSV lines after the header, N-Triples lines, SPARQL XML `<result>`
/// elements or JSON bindings, 0 or 1 for a boolean.
fn rows(kind: Kind, body: &[u8]) -> usize {
    let text = String::from_utf8_lossy(body);
    match kind {
        Kind::Json => match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(json) => match json.get("boolean") {
                Some(boolean) => usize::from(boolean.as_bool() == Some(true)),
                None => json["results"]["bindings"].as_array().map_or(0, Vec::len),
            },
            Err(_) => 0,
        },
        Kind::Xml if text.contains("<boolean>") => usize::from(text.contains("<boolean>true")),
        Kind::Xml => text.matches("<result>").count() + text.matches("<result ").count(),
        Kind::Tsv => match text.trim() {
            "true" => 1,
            "false" => 0,
            // Fuseki answers ASK in TSV as a column of its own.
            boolean if boolean.starts_with("?_askResult") => usize::from(boolean.ends_with("true")),
            _ => text
                .lines()
                .filter(|l| !l.is_empty())
                .count()
                .saturating_sub(1),
        },
        Kind::Lines => text.lines().filter(|l| !l.is_empty()).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_statuses_and_rows() {
        assert_eq!(answer(200, Kind::Tsv, b"?s\n<a>\n<b>\n"), Ok(2));
        assert_eq!(answer(200, Kind::Tsv, b"false\n"), Ok(0));
        assert_eq!(answer(200, Kind::Tsv, b"?_askResult\ntrue\n"), Ok(1));
        assert_eq!(answer(200, Kind::Tsv, b"?_askResult\nfalse\n"), Ok(0));
        assert_eq!(answer(200, Kind::Lines, b"<a> <p> <b> .\n"), Ok(1));
        assert_eq!(answer(200, Kind::Json, b"{\"boolean\":true}"), Ok(1));
        let bindings = br#"{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"a"}},{}]}}"#;
        assert_eq!(answer(200, Kind::Json, bindings), Ok(2));
        let xml = b"<sparql><head><variable name=\"s\"/></head><results>\n<result><binding name=\"s\"><uri>a</uri></binding></result>\n<result>\n</result></results></sparql>";
        assert_eq!(answer(200, Kind::Xml, xml), Ok(2));
        assert_eq!(
            answer(200, Kind::Xml, b"<sparql><boolean>true</boolean></sparql>"),
            Ok(1)
        );
        assert_eq!(
            answer(400, Kind::Lines, b"invalid query: x").unwrap_err().0,
            "syntax"
        );
        assert_eq!(
            answer(400, Kind::Lines, b"unsupported: SERVICE")
                .unwrap_err()
                .0,
            "unsupported"
        );
        assert_eq!(answer(504, Kind::Lines, b"late").unwrap_err().0, "timeout");
        assert_eq!(answer(507, Kind::Lines, b"big").unwrap_err().0, "memory");
        assert_eq!(answer(503, Kind::Lines, b"busy").unwrap_err().0, "error");
    }
}
