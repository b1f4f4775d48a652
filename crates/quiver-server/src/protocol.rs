//! The request side of the SPARQL 1.1 Protocol: which of its three query operations a
//! request is, and what it asks for.
//!
//! - `GET ?query=…` — parameters in the URL;
//! - `POST` `application/x-www-form-urlencoded` — parameters in the body (URL parameters such
//!   as `format=` are read too);
//! - `POST` `application/sparql-query` — the body is the query, other parameters in the URL.
//!
//! The endpoint is read-only: an `update=` parameter or an `application/sparql-update` body is
//! refused with 403. RDF dataset selection (`default-graph-uri`, `named-graph-uri`, each
//! repeatable) replaces the query's `FROM` / `FROM NAMED`, as the protocol specifies; a value
//! that is not an absolute IRI is refused with 400.
//! `format=` (or `output=`, which some clients send instead) overrides content negotiation.

use axum::http::StatusCode;
use oxrdf::NamedNode;
use spargebra::algebra::QueryDataset;

use crate::error::ApiError;

/// A query request, whichever way it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryRequest {
    pub query: String,
    /// The `format=` / `output=` parameter, if any.
    pub format: Option<String>,
    /// The dataset of `default-graph-uri` / `named-graph-uri` (`None`: the query's own).
    pub dataset: Option<QueryDataset>,
}

/// The message of every refused update.
pub const READ_ONLY: &str =
    "SPARQL Update is not allowed: this endpoint is read-only (load data with `quiver load`)";

/// `GET /query?…`.
pub fn from_get(url_query: Option<&str>) -> Result<QueryRequest, ApiError> {
    from_params(params(url_query.unwrap_or("").as_bytes()), None)
}

/// `POST /query` with a body of `content_type`.
pub fn from_post(
    content_type: Option<&str>,
    url_query: Option<&str>,
    body: &[u8],
) -> Result<QueryRequest, ApiError> {
    let url_params = params(url_query.unwrap_or("").as_bytes());
    let Some(content_type) = content_type else {
        return Err(unsupported_media_type("no Content-Type"));
    };
    let (media_type, charset) = parse_content_type(content_type);
    if let Some(charset) = &charset {
        if charset != "utf-8" && charset != "utf8" {
            return Err(unsupported_media_type(&format!(
                "charset {charset} (only UTF-8 is accepted)"
            )));
        }
    }
    match media_type.as_str() {
        "application/x-www-form-urlencoded" => {
            let mut all = params(body);
            all.extend(url_params);
            from_params(all, None)
        }
        "application/sparql-query" => {
            let text = std::str::from_utf8(body)
                .map_err(|e| ApiError::bad_request(format!("the query is not UTF-8: {e}")))?;
            from_params(url_params, Some(text.to_owned()))
        }
        "application/sparql-update" => Err(ApiError::new(StatusCode::FORBIDDEN, READ_ONLY)),
        other => Err(unsupported_media_type(&format!("Content-Type {other}"))),
    }
}

fn unsupported_media_type(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "unsupported request: {what}; send application/x-www-form-urlencoded (query=…) \
             or application/sparql-query"
        ),
    )
}

/// The media type (lowercase, no parameters) and the charset parameter, if any.
fn parse_content_type(value: &str) -> (String, Option<String>) {
    let mut parts = value.split(';');
    let media_type = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    let charset = parts.find_map(|part| {
        let (name, value) = part.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
    });
    (media_type, charset)
}

fn params(encoded: &[u8]) -> Vec<(String, String)> {
    form_urlencoded::parse(encoded)
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect()
}

/// Checks the parameters; `body_query` is the query of an `application/sparql-query` body.
fn from_params(
    params: Vec<(String, String)>,
    body_query: Option<String>,
) -> Result<QueryRequest, ApiError> {
    let mut queries = Vec::new();
    let mut format = None;
    let mut default_graphs = Vec::new();
    let mut named_graphs = Vec::new();
    for (name, value) in params {
        match name.as_str() {
            "update" => return Err(ApiError::new(StatusCode::FORBIDDEN, READ_ONLY)),
            "query" => queries.push(value),
            "default-graph-uri" | "named-graph-uri" => {
                let iri = NamedNode::new(value.as_str()).map_err(|e| {
                    ApiError::bad_request(format!("{name} {value:?} is not an IRI: {e}"))
                })?;
                if name == "default-graph-uri" {
                    default_graphs.push(iri);
                } else {
                    named_graphs.push(iri);
                }
            }
            "format" | "output" if !value.is_empty() => {
                format.get_or_insert(value);
            }
            _ => {}
        }
    }
    let query = match (body_query, queries.len()) {
        (Some(text), 0) => text,
        (Some(_), _) => {
            return Err(ApiError::bad_request(
                "an application/sparql-query request carries the query in its body, not in a \
                 query parameter",
            ))
        }
        (None, 1) => queries.pop().unwrap_or_default(),
        (None, 0) => {
            return Err(ApiError::bad_request(
                "missing the query parameter (GET /query?query=SELECT…)",
            ))
        }
        (None, _) => return Err(ApiError::bad_request("more than one query parameter")),
    };
    let dataset =
        (!default_graphs.is_empty() || !named_graphs.is_empty()).then_some(QueryDataset {
            default: default_graphs,
            named: Some(named_graphs),
        });
    Ok(QueryRequest {
        query,
        format,
        dataset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_reads_query_and_format() {
        let request = from_get(Some("query=ASK%20%7B%7D&format=csv&output=xml")).unwrap();
        assert_eq!(request.query, "ASK {}");
        assert_eq!(request.format.as_deref(), Some("csv"));
    }

    #[test]
    fn get_errors() {
        assert_eq!(from_get(None).unwrap_err().status, StatusCode::BAD_REQUEST);
        let twice = from_get(Some("query=ASK{}&query=ASK{}")).unwrap_err();
        assert!(twice.message.contains("more than one"));
        let update = from_get(Some("update=CLEAR%20ALL")).unwrap_err();
        assert_eq!(update.status, StatusCode::FORBIDDEN);
        let dataset = from_get(Some("query=ASK{}&default-graph-uri=not%20an%20iri")).unwrap_err();
        assert_eq!(dataset.status, StatusCode::BAD_REQUEST);
        assert!(
            dataset.message.contains("not an IRI"),
            "{}",
            dataset.message
        );
    }

    #[test]
    fn dataset_parameters() {
        let request = from_get(Some(
            "query=ASK{}&default-graph-uri=http://a&named-graph-uri=http://b&default-graph-uri=http://c",
        ))
        .unwrap();
        let dataset = request.dataset.unwrap();
        let names = |list: &[NamedNode]| {
            list.iter()
                .map(|n| n.as_str().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&dataset.default), ["http://a", "http://c"]);
        assert_eq!(names(dataset.named.as_deref().unwrap()), ["http://b"]);
        assert!(from_get(Some("query=ASK{}")).unwrap().dataset.is_none());
    }

    #[test]
    fn post_variants() {
        let form = from_post(
            Some("application/x-www-form-urlencoded; charset=UTF-8"),
            Some("format=tsv"),
            b"query=SELECT+*+%7B%7D",
        )
        .unwrap();
        assert_eq!(form.query, "SELECT * {}");
        assert_eq!(form.format.as_deref(), Some("tsv"));
        let direct = from_post(Some("application/sparql-query"), None, b"ASK {}").unwrap();
        assert_eq!(direct.query, "ASK {}");
        let both = from_post(Some("application/sparql-query"), Some("query=x"), b"ASK {}");
        assert_eq!(both.unwrap_err().status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn post_errors() {
        let status = |ct: Option<&str>, body: &[u8]| from_post(ct, None, body).unwrap_err().status;
        assert_eq!(status(None, b"ASK {}"), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(
            status(Some("text/plain"), b"ASK {}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert_eq!(
            status(Some("application/sparql-query; charset=latin1"), b"ASK {}"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert_eq!(
            status(Some("application/sparql-update"), b"CLEAR ALL"),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status(
                Some("application/x-www-form-urlencoded"),
                b"update=CLEAR+ALL"
            ),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            status(Some("application/sparql-query"), b"\xff\xfe"),
            StatusCode::BAD_REQUEST
        );
    }
}
