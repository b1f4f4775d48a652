//! The request side of the SPARQL 1.1 Protocol: which of its operations a request is, and
//! what it asks for.
//!
//! Queries:
//! - `GET ?query=…` — parameters in the URL;
//! - `POST` `application/x-www-form-urlencoded` — parameters in the body (URL parameters such
//!   as `format=` are read too);
//! - `POST` `application/sparql-query` — the body is the query, other parameters in the URL.
//!
//! Updates ([`Operation::Update`]): `POST` form-encoded with `update=`, or `POST`
//! `application/sparql-update` with the update as the body; `using-graph-uri` and
//! `using-named-graph-uri` (each repeatable, URL or form) give the dataset of operations
//! without their own `USING`/`WITH`. An update sent with GET is refused (405 on a writable
//! server, 403 on a read-only one: see the routes). [`from_get`] and [`from_post`] are the
//! query-only views (an update is refused with 403), kept for callers that only query.
//!
//! RDF dataset selection (`default-graph-uri`, `named-graph-uri`, each repeatable) replaces
//! the query's `FROM` / `FROM NAMED`, as the protocol specifies; a value that is not an
//! absolute IRI is refused with 400.
//! `format=` (or `output=`, which some clients send instead) overrides content negotiation.
//! `reasoning=on|off` (also `true|false`, `entailed|asserted`) chooses whether a query
//! reads the entailed or the asserted default graph of a store loaded with reasoning
//! (the server's `--reasoning` decides when absent). `explain=true` (also `on`, `1`) asks
//! for the query's plan instead of its results: the steps with estimated and actual rows and
//! time, as text (the query runs to count them).

use std::borrow::Cow;

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
    /// The `reasoning=` parameter, if any.
    pub reasoning: Option<bool>,
    /// `explain=true`: the plan with estimated and actual rows, not the results.
    pub explain: bool,
}

/// An update request, whichever way it came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateRequest {
    pub update: String,
    /// `using-graph-uri` values.
    pub using_graphs: Vec<NamedNode>,
    /// `using-named-graph-uri` values.
    pub using_named_graphs: Vec<NamedNode>,
}

/// What a protocol request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    Query(QueryRequest),
    Update(UpdateRequest),
}

pub use crate::auth::READ_ONLY;

/// `GET /query?…`, as a query (an update is refused with 403).
pub fn from_get(url_query: Option<&str>) -> Result<QueryRequest, ApiError> {
    only_query(operation_from_get(url_query)?)
}

/// `POST /query` with a body of `content_type`, as a query (an update is refused with 403).
pub fn from_post(
    content_type: Option<&str>,
    url_query: Option<&str>,
    body: &[u8],
) -> Result<QueryRequest, ApiError> {
    only_query(operation_from_post(content_type, url_query, body)?)
}

fn only_query(operation: Operation) -> Result<QueryRequest, ApiError> {
    match operation {
        Operation::Query(request) => Ok(request),
        Operation::Update(_) => Err(ApiError::new(StatusCode::FORBIDDEN, READ_ONLY)),
    }
}

/// `GET /query?…`: a query, or an update (which the caller must refuse: updates need POST).
pub fn operation_from_get(url_query: Option<&str>) -> Result<Operation, ApiError> {
    from_params(params(url_query.unwrap_or("").as_bytes()), None)
}

/// `POST` with a body of `content_type`: a query or an update.
pub fn operation_from_post(
    content_type: Option<&str>,
    url_query: Option<&str>,
    body: &[u8],
) -> Result<Operation, ApiError> {
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
            from_params(url_params, Some(Body::Query(text.to_owned())))
        }
        "application/sparql-update" => {
            let text = std::str::from_utf8(body)
                .map_err(|e| ApiError::bad_request(format!("the update is not UTF-8: {e}")))?;
            from_params(url_params, Some(Body::Update(text.to_owned())))
        }
        other => Err(unsupported_media_type(&format!("Content-Type {other}"))),
    }
}

fn unsupported_media_type(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "unsupported request: {what}; send application/x-www-form-urlencoded (query=…) \
             or application/sparql-query, or for updates update=… or application/sparql-update"
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

/// Decoded name and value pairs, borrowed where nothing needed decoding.
type Params<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

fn params(encoded: &[u8]) -> Params<'_> {
    crate::form::pairs(encoded)
}

/// The text of a direct POST.
enum Body {
    Query(String),
    Update(String),
}

/// Checks the parameters; `body` is the query or update of a direct POST.
fn from_params(params: Params<'_>, body: Option<Body>) -> Result<Operation, ApiError> {
    let mut queries = Vec::new();
    let mut updates = Vec::new();
    let mut format = None;
    let mut reasoning = None;
    let mut explain = false;
    let mut default_graphs = Vec::new();
    let mut named_graphs = Vec::new();
    let mut using_graphs = Vec::new();
    let mut using_named_graphs = Vec::new();
    for (name, value) in params {
        match name.as_ref() {
            "update" => updates.push(value.into_owned()),
            "query" => queries.push(value.into_owned()),
            "default-graph-uri"
            | "named-graph-uri"
            | "using-graph-uri"
            | "using-named-graph-uri" => {
                let iri = NamedNode::new(value.as_ref()).map_err(|e| {
                    ApiError::bad_request(format!("{name} {value:?} is not an IRI: {e}"))
                })?;
                match name.as_ref() {
                    "default-graph-uri" => default_graphs.push(iri),
                    "named-graph-uri" => named_graphs.push(iri),
                    "using-graph-uri" => using_graphs.push(iri),
                    _ => using_named_graphs.push(iri),
                }
            }
            "format" | "output" if !value.is_empty() => {
                format.get_or_insert(value.into_owned());
            }
            "reasoning" => {
                reasoning = Some(match value.as_ref() {
                    "on" | "true" | "1" | "entailed" => true,
                    "off" | "false" | "0" | "asserted" => false,
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "reasoning={value:?}: expected on or off"
                        )))
                    }
                });
            }
            "explain" => {
                explain = match value.as_ref() {
                    "on" | "true" | "1" => true,
                    "off" | "false" | "0" | "" => false,
                    _ => {
                        return Err(ApiError::bad_request(format!(
                            "explain={value:?}: expected true or false"
                        )))
                    }
                };
            }
            _ => {}
        }
    }
    let is_update =
        matches!(body, Some(Body::Update(_))) || (body.is_none() && !updates.is_empty());
    if is_update {
        if !queries.is_empty() {
            return Err(ApiError::bad_request(
                "a request carries either a query or an update, not both",
            ));
        }
        let update = match (body, updates.len()) {
            (Some(Body::Update(text)), 0) => text,
            (Some(_), _) => {
                return Err(ApiError::bad_request(
                    "an application/sparql-update request carries the update in its body, not \
                     in an update parameter",
                ))
            }
            (None, 1) => updates.pop().unwrap_or_default(),
            (None, _) => return Err(ApiError::bad_request("more than one update parameter")),
        };
        return Ok(Operation::Update(UpdateRequest {
            update,
            using_graphs,
            using_named_graphs,
        }));
    }
    if !updates.is_empty() {
        return Err(ApiError::bad_request(
            "a request carries either a query or an update, not both",
        ));
    }
    let body_query = match body {
        Some(Body::Query(text)) => Some(text),
        _ => None,
    };
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
    Ok(Operation::Query(QueryRequest {
        query,
        format,
        dataset,
        reasoning,
        explain,
    }))
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

    #[test]
    fn update_operations() {
        let form = operation_from_post(
            Some("application/x-www-form-urlencoded"),
            Some("using-graph-uri=http://g1"),
            b"update=CLEAR+ALL&using-named-graph-uri=http%3A%2F%2Fg2",
        )
        .unwrap();
        let Operation::Update(form) = form else {
            panic!("not an update: {form:?}")
        };
        assert_eq!(form.update, "CLEAR ALL");
        assert_eq!(form.using_graphs, [NamedNode::new("http://g1").unwrap()]);
        assert_eq!(
            form.using_named_graphs,
            [NamedNode::new("http://g2").unwrap()]
        );
        let direct = operation_from_post(
            Some("application/sparql-update; charset=utf-8"),
            None,
            b"CLEAR ALL",
        )
        .unwrap();
        assert!(matches!(direct, Operation::Update(u) if u.update == "CLEAR ALL"));
        let get = operation_from_get(Some("update=CLEAR%20ALL")).unwrap();
        assert!(matches!(get, Operation::Update(_)));
        let status = |ct: &str, query: Option<&str>, body: &[u8]| {
            operation_from_post(Some(ct), query, body)
                .unwrap_err()
                .status
        };
        let form = "application/x-www-form-urlencoded";
        assert_eq!(
            status(form, None, b"update=CLEAR%20NAMED&update=CLEAR%20DEFAULT"),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status(form, None, b"update=CLEAR%20ALL&query=ASK%7B%7D"),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status("application/sparql-update", Some("update=x"), b"CLEAR ALL"),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status(
                "application/sparql-update",
                Some("using-graph-uri=not%20an%20iri"),
                b"CLEAR ALL"
            ),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status(
                "application/sparql-update; charset=UTF-16",
                None,
                b"CLEAR ALL"
            ),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert_eq!(
            status("text/plain", None, b"CLEAR NAMED"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
    }
}
