//! RDF documents in and out of the Graph Store Protocol: the media types offered for a
//! graph or the whole store, the formats accepted in request bodies, and parsing a body
//! into quads with errors that point at a line and column. A `multipart/form-data` body
//! (several documents in one request, as the protocol allows for POST) is parsed part by
//! part, each in the format of its own `Content-Type`.

use axum::http::StatusCode;
use oxrdf::GraphName;
use oxrdfio::{RdfFormat, RdfParseError, RdfParser};

use crate::error::ApiError;
use crate::negotiate::{best, parse_accept};

/// Media types offered for one graph, in order of preference (Turtle is the default).
pub const GRAPH_OFFERS: &[(&str, RdfFormat)] = &[
    ("text/turtle", RdfFormat::Turtle),
    ("application/x-turtle", RdfFormat::Turtle),
    ("application/n-triples", RdfFormat::NTriples),
    ("text/plain", RdfFormat::NTriples),
    ("application/n-quads", RdfFormat::NQuads),
    ("application/rdf+xml", RdfFormat::RdfXml),
    ("application/xml", RdfFormat::RdfXml),
    ("application/ld+json", JSON_LD),
];

/// Media types offered for the whole store (every graph), in order of preference.
pub const DATASET_OFFERS: &[(&str, RdfFormat)] = &[
    ("application/n-quads", RdfFormat::NQuads),
    ("application/trig", RdfFormat::TriG),
    ("application/ld+json", JSON_LD),
];

/// JSON-LD as `oxjsonld` reads and writes it (no profile).
pub const JSON_LD: RdfFormat = RdfFormat::JsonLd {
    profile: oxrdfio::JsonLdProfileSet::empty(),
};

/// The format of a response, from `Accept` (none or `*/*`: the first offer), or 406.
pub fn negotiate(
    accept: Option<&str>,
    offers: &[(&str, RdfFormat)],
) -> Result<RdfFormat, ApiError> {
    let ranges = parse_accept(accept.unwrap_or("*/*"));
    best(&ranges, offers).ok_or_else(|| {
        let offered: Vec<&str> = offers.iter().map(|(media, _)| *media).collect();
        ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            format!(
                "no acceptable format in Accept: {}; offered: {}",
                accept.unwrap_or(""),
                offered.join(", ")
            ),
        )
    })
}

/// The `Content-Type` of a response in `format`.
pub fn content_type(format: RdfFormat) -> &'static str {
    match format {
        RdfFormat::Turtle => "text/turtle; charset=utf-8",
        RdfFormat::NTriples => "application/n-triples",
        RdfFormat::NQuads => "application/n-quads",
        RdfFormat::TriG => "application/trig",
        RdfFormat::RdfXml => "application/rdf+xml",
        RdfFormat::JsonLd { .. } => "application/ld+json",
        _ => "application/octet-stream",
    }
}

/// The format of a request body from its `Content-Type`, or 415.
pub fn body_format(content_type: Option<&str>) -> Result<RdfFormat, ApiError> {
    let unsupported = |what: &str| {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "unsupported body: {what}; send text/turtle, application/n-triples, \
                 application/n-quads, application/trig, application/rdf+xml or \
                 application/ld+json"
            ),
        )
    };
    let Some(value) = content_type else {
        return Err(unsupported("no Content-Type"));
    };
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    for part in parts {
        if let Some((name, charset)) = part.split_once('=') {
            let charset = charset.trim().trim_matches('"').to_ascii_lowercase();
            if name.trim().eq_ignore_ascii_case("charset")
                && charset != "utf-8"
                && charset != "utf8"
            {
                return Err(unsupported(&format!(
                    "charset {charset} (only UTF-8 is accepted)"
                )));
            }
        }
    }
    match media.as_str() {
        "text/turtle" | "application/x-turtle" => Ok(RdfFormat::Turtle),
        "application/n-triples" | "text/plain" => Ok(RdfFormat::NTriples),
        "application/n-quads" | "text/x-nquads" => Ok(RdfFormat::NQuads),
        "application/trig" => Ok(RdfFormat::TriG),
        "application/rdf+xml" | "application/xml" | "text/xml" => Ok(RdfFormat::RdfXml),
        "application/ld+json" => Ok(JSON_LD),
        other => Err(unsupported(&format!("Content-Type {other}"))),
    }
}

/// Parses a request body of `content_type` (one RDF document, or `multipart/form-data`
/// with one per part) against `base_iri`: 415 for an unsupported type, 400 for bad syntax.
pub fn parse_body(
    content_type: Option<&str>,
    body: &[u8],
    base_iri: &str,
) -> Result<Vec<oxrdf::Quad>, ApiError> {
    let multipart = content_type.and_then(|value| {
        let mut parts = value.split(';');
        let media = parts.next()?.trim();
        if !media.eq_ignore_ascii_case("multipart/form-data") {
            return None;
        }
        Some(parts.find_map(|part| {
            let (name, boundary) = part.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("boundary")
                .then(|| boundary.trim().trim_matches('"').to_owned())
        }))
    });
    match multipart {
        None => parse(body, body_format(content_type)?, base_iri),
        Some(None) => Err(ApiError::bad_request(
            "a multipart/form-data body needs a boundary parameter",
        )),
        Some(Some(boundary)) => {
            let mut quads = Vec::new();
            for (i, (headers, part)) in multipart_parts(body, &boundary)?.into_iter().enumerate() {
                let content_type = headers.lines().find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.trim()
                        .eq_ignore_ascii_case("content-type")
                        .then(|| value.trim())
                });
                let format = body_format(content_type).map_err(|mut error| {
                    error.message =
                        format!("part {} of the multipart body: {}", i + 1, error.message);
                    error
                })?;
                quads.extend(parse(part, format, base_iri).map_err(|mut error| {
                    error.message =
                        format!("part {} of the multipart body: {}", i + 1, error.message);
                    error
                })?);
            }
            Ok(quads)
        }
    }
}

/// The parts of a `multipart/form-data` body: each one's header block and content.
fn multipart_parts<'a>(
    body: &'a [u8],
    boundary: &str,
) -> Result<Vec<(String, &'a [u8])>, ApiError> {
    let bad = |what: &str| ApiError::bad_request(format!("malformed multipart body: {what}"));
    let delimiter = format!("--{boundary}");
    let delimiter = delimiter.as_bytes();
    let find = |haystack: &[u8], from: usize| {
        haystack[from..]
            .windows(delimiter.len())
            .position(|w| w == delimiter)
            .map(|i| i + from)
    };
    let mut position = find(body, 0).ok_or_else(|| bad("no boundary"))? + delimiter.len();
    let mut parts = Vec::new();
    loop {
        let rest = &body[position..];
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        let next = find(body, position).ok_or_else(|| bad("no closing boundary"))?;
        // The part lies between the line break after this delimiter and the one before the
        // next.
        let mut part = &body[position..next];
        part = part
            .strip_prefix(b"\r\n")
            .or_else(|| part.strip_prefix(b"\n"))
            .unwrap_or(part);
        part = part
            .strip_suffix(b"\r\n")
            .or_else(|| part.strip_suffix(b"\n"))
            .unwrap_or(part);
        // No headers: the blank line comes first.
        let empty = [(b"\r\n".as_slice(), 2), (b"\n".as_slice(), 1)]
            .into_iter()
            .find(|(start, _)| part.starts_with(start))
            .map(|(_, length)| (0, length));
        let split = empty
            .or_else(|| {
                part.windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map(|i| (i, 4))
            })
            .or_else(|| part.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)))
            .ok_or_else(|| bad("a part without a blank line after its headers"))?;
        let headers = String::from_utf8_lossy(&part[..split.0]).into_owned();
        parts.push((headers, &part[split.0 + split.1..]));
        position = next + delimiter.len();
    }
}

/// Parses `body` in `format` against `base_iri`. Blank nodes get fresh labels, so that
/// `_:b` in two requests are two nodes, as RDF requires of separate documents.
pub fn parse(body: &[u8], format: RdfFormat, base_iri: &str) -> Result<Vec<oxrdf::Quad>, ApiError> {
    if matches!(
        format,
        RdfFormat::NTriples | RdfFormat::NQuads | RdfFormat::Turtle | RdfFormat::TriG
    ) {
        // Refused before the parser could overflow its stack on them.
        quiver_model::nesting::check_nesting(body)
            .map_err(|e| ApiError::bad_request(format!("bad RDF at {e}")))?;
    }
    let parser = RdfParser::from_format(format)
        .rename_blank_nodes()
        .with_base_iri(base_iri)
        .map_err(|e| ApiError::bad_request(format!("bad base IRI {base_iri}: {e}")))?;
    let mut quads = Vec::new();
    for quad in parser.for_slice(body) {
        quads.push(quad.map_err(|error| syntax_error(RdfParseError::Syntax(error)))?);
    }
    Ok(quads)
}

/// The quads of `body` as triples of one graph: a quad in a named graph (an N-Quads or
/// TriG body sent to a graph) is refused with 400 rather than silently moved.
pub fn triples_only(quads: Vec<oxrdf::Quad>) -> Result<Vec<oxrdf::Triple>, ApiError> {
    quads
        .into_iter()
        .map(|quad| match quad.graph_name {
            GraphName::DefaultGraph => Ok(oxrdf::Triple::new(
                quad.subject,
                quad.predicate,
                quad.object,
            )),
            name => Err(ApiError::bad_request(format!(
                "the body puts a triple in graph {name}, but a Graph Store request addresses \
                 one graph: send triples only (or send the quads to /store without parameters \
                 through SPARQL Update)"
            ))),
        })
        .collect()
}

fn syntax_error(error: RdfParseError) -> ApiError {
    let message = error.to_string();
    // Turtle-family messages carry their position; RDF/XML's do not always.
    let position = match &error {
        RdfParseError::Syntax(syntax) if !message.contains("line ") => {
            syntax.location().map(|range| {
                format!(
                    " at line {}, column {}",
                    range.start.line + 1,
                    range.start.column + 1
                )
            })
        }
        _ => None,
    };
    ApiError::bad_request(format!(
        "the body is not valid RDF{}: {message}",
        position.unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation() {
        assert_eq!(negotiate(None, GRAPH_OFFERS).unwrap(), RdfFormat::Turtle);
        assert_eq!(
            negotiate(Some("*/*"), GRAPH_OFFERS).unwrap(),
            RdfFormat::Turtle
        );
        assert_eq!(
            negotiate(Some("application/n-triples"), GRAPH_OFFERS).unwrap(),
            RdfFormat::NTriples
        );
        assert_eq!(
            negotiate(Some("text/turtle;q=0.5, application/rdf+xml"), GRAPH_OFFERS).unwrap(),
            RdfFormat::RdfXml
        );
        assert_eq!(negotiate(None, DATASET_OFFERS).unwrap(), RdfFormat::NQuads);
        let error = negotiate(Some("application/json"), GRAPH_OFFERS).unwrap_err();
        assert_eq!(error.status, StatusCode::NOT_ACCEPTABLE);
    }

    #[test]
    fn body_formats() {
        assert_eq!(
            body_format(Some("text/turtle; charset=utf-8")).unwrap(),
            RdfFormat::Turtle
        );
        assert_eq!(
            body_format(Some("application/n-quads")).unwrap(),
            RdfFormat::NQuads
        );
        for bad in [
            None,
            Some("application/json"),
            Some("text/turtle; charset=latin1"),
        ] {
            assert_eq!(
                body_format(bad).unwrap_err().status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn parsing_renames_blank_nodes_and_points_at_errors() {
        let body = b"@prefix : <http://e/> .\n:a :b _:x .\n_:x :c \"d\" .\n";
        let first = parse(body, RdfFormat::Turtle, "http://base/").unwrap();
        let second = parse(body, RdfFormat::Turtle, "http://base/").unwrap();
        assert_eq!(first.len(), 2);
        // One node within a document, different nodes across documents.
        assert_eq!(first[0].object, first[1].subject.clone().into());
        assert_ne!(first[0].object, second[0].object);
        let relative = parse(b"<a> <b> <c> .", RdfFormat::Turtle, "http://base/").unwrap();
        assert_eq!(relative[0].subject.to_string(), "<http://base/a>");
        let error = parse(
            b"<http://a> <http://b> <http://c> .\n<http://a> <http://b> .\n",
            RdfFormat::Turtle,
            "http://base/",
        )
        .unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        assert!(error.message.contains("line 2"), "{}", error.message);
        let quads = parse(
            b"<http://a> <http://b> <http://c> <http://g> .\n",
            RdfFormat::NQuads,
            "http://base/",
        )
        .unwrap();
        assert_eq!(
            triples_only(quads).unwrap_err().status,
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn multipart_bodies() {
        let body = "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\
                    Content-Type: text/turtle\r\n\r\n<http://a> <http://b> \"1\" .\r\n\
                    --XyZ\r\nContent-Type: application/n-triples\r\n\r\n\
                    <http://a> <http://b> \"2\" .\n\r\n--XyZ--\r\n";
        let quads = parse_body(
            Some("multipart/form-data; boundary=XyZ"),
            body.as_bytes(),
            "http://base/",
        )
        .unwrap();
        let objects: Vec<String> = quads.iter().map(|q| q.object.to_string()).collect();
        assert_eq!(objects, ["\"1\"", "\"2\""]);
        let status = |content_type: &str, body: &str| {
            parse_body(Some(content_type), body.as_bytes(), "http://base/")
                .unwrap_err()
                .status
        };
        assert_eq!(status("multipart/form-data", body), StatusCode::BAD_REQUEST);
        assert_eq!(
            status("multipart/form-data; boundary=other", body),
            StatusCode::BAD_REQUEST
        );
        let untyped = "--XyZ\r\n\r\n<http://a> <http://b> <http://c> .\r\n--XyZ--";
        assert_eq!(
            status("multipart/form-data; boundary=XyZ", untyped),
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        let broken = "--XyZ\r\nContent-Type: text/turtle\r\n\r\n<http://a> <http://b> .\r\n--XyZ--";
        assert_eq!(
            status("multipart/form-data; boundary=XyZ", broken),
            StatusCode::BAD_REQUEST
        );
    }
}
