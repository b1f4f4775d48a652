//! The server's request path without a socket: protocol decoding and content negotiation,
//! and for writes the Graph Store target and body parsing (multipart included).
//!
//! The input is split at NUL bytes into a mode, a `Content-Type`, a URL query string, an
//! `Accept` header and a body, handed to the same functions the routes call. Errors are
//! fine (they become 4xx answers), panics are not. A second property: a query and a
//! `format=` value encoded by a form serializer come back unchanged from a GET.

use quiver_server::{graph_store, negotiate, protocol, rdf_io};

/// The check of the `http_request` target.
pub fn request(data: &[u8]) {
    let mut parts = data.split(|&b| b == 0);
    let mode = parts.next().and_then(|m| m.first()).copied().unwrap_or(0);
    let mut text = || {
        parts
            .next()
            .map(|p| String::from_utf8_lossy(p).into_owned())
    };
    let content_type = text();
    let url_query = text();
    let accept = text();
    let body = text().unwrap_or_default();
    let request = match mode % 3 {
        0 => protocol::from_get(url_query.as_deref()),
        1 => {
            // The write path decodes the same parts.
            let _ = protocol::operation_from_post(
                content_type.as_deref(),
                url_query.as_deref(),
                body.as_bytes(),
            );
            let _ = graph_store::target(url_query.as_deref());
            let _ = rdf_io::parse_body(content_type.as_deref(), body.as_bytes(), "http://base/");
            let _ = rdf_io::negotiate(accept.as_deref(), rdf_io::GRAPH_OFFERS);
            protocol::from_post(
                content_type.as_deref(),
                url_query.as_deref(),
                body.as_bytes(),
            )
        }
        _ => {
            round_trip(&body, url_query.as_deref().unwrap_or(""));
            return;
        }
    };
    if let Ok(request) = request {
        if let Ok(negotiated) = negotiate::negotiate(accept.as_deref(), request.format.as_deref()) {
            for kind in [negotiate::ResultKind::Tabular, negotiate::ResultKind::Graph] {
                if let Ok(format) = negotiated.for_kind(kind) {
                    assert!(!negotiate::content_type(format).is_empty());
                }
            }
        }
    }
}

/// A GET built by a form serializer decodes to the query and format it encodes.
fn round_trip(query: &str, format: &str) {
    let encoded = form_urlencoded::Serializer::new(String::new())
        .append_pair("query", query)
        .append_pair("format", format)
        .finish();
    let request = protocol::from_get(Some(&encoded))
        .unwrap_or_else(|e| panic!("GET ?{encoded} refused: {e:?}"));
    assert_eq!(request.query, query, "query of GET ?{encoded}");
    let expected = (!format.is_empty()).then_some(format);
    assert_eq!(
        request.format.as_deref(),
        expected,
        "format of GET ?{encoded}"
    );
}
