//! Content negotiation: the result format from the `Accept` header, or from a `format=`
//! parameter, which overrides it.
//!
//! Which formats fit depends on the query form (solutions and booleans take SPARQL JSON,
//! XML, CSV or TSV; CONSTRUCT graphs take Turtle, N-Triples or RDF/XML), known only once the
//! query is prepared, so negotiation picks one candidate of each kind up front: a request
//! that accepts neither kind gets 406 before anything runs, one that accepts only the kind
//! the query does not produce gets 406 after. Without `Accept` (or with `*/*`) the defaults
//! are SPARQL JSON and Turtle. Among equal `q` values the server's order decides.

use axum::http::StatusCode;
use quiver_sparql::ResultsFormat;

use crate::error::ApiError;

/// What a query produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// SELECT solutions or an ASK boolean.
    Tabular,
    /// A CONSTRUCT graph.
    Graph,
}

/// The media types offered for each kind, in order of preference.
const TABULAR: &[(&str, ResultsFormat)] = &[
    ("application/sparql-results+json", ResultsFormat::Json),
    ("application/json", ResultsFormat::Json),
    ("application/sparql-results+xml", ResultsFormat::Xml),
    ("application/xml", ResultsFormat::Xml),
    ("text/xml", ResultsFormat::Xml),
    ("text/csv", ResultsFormat::Csv),
    ("text/tab-separated-values", ResultsFormat::Tsv),
];
const GRAPH: &[(&str, ResultsFormat)] = &[
    ("text/turtle", ResultsFormat::Turtle),
    ("application/x-turtle", ResultsFormat::Turtle),
    ("application/n-triples", ResultsFormat::NTriples),
    ("text/plain", ResultsFormat::NTriples),
    ("application/rdf+xml", ResultsFormat::RdfXml),
    ("application/xml", ResultsFormat::RdfXml),
    ("text/xml", ResultsFormat::RdfXml),
    ("application/ld+json", ResultsFormat::JsonLd),
];

/// The `Content-Type` of a response in `format`.
pub fn content_type(format: ResultsFormat) -> &'static str {
    match format {
        ResultsFormat::Json => "application/sparql-results+json",
        ResultsFormat::Xml => "application/sparql-results+xml",
        ResultsFormat::Csv => "text/csv; charset=utf-8",
        ResultsFormat::Tsv => "text/tab-separated-values; charset=utf-8",
        ResultsFormat::Turtle => "text/turtle; charset=utf-8",
        ResultsFormat::NTriples => "application/n-triples",
        ResultsFormat::RdfXml => "application/rdf+xml",
        ResultsFormat::JsonLd => "application/ld+json",
    }
}

/// The chosen format for each kind of result (`None`: the client accepts none of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub tabular: Option<ResultsFormat>,
    pub graph: Option<ResultsFormat>,
}

impl Negotiated {
    /// The format for a result of `kind`, or 406.
    pub fn for_kind(&self, kind: ResultKind) -> Result<ResultsFormat, ApiError> {
        let (choice, what) = match kind {
            ResultKind::Tabular => (
                self.tabular,
                "SELECT/ASK results (SPARQL JSON, XML, CSV, TSV)",
            ),
            ResultKind::Graph => (self.graph, "CONSTRUCT results (Turtle, N-Triples, RDF/XML)"),
        };
        choice.ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_ACCEPTABLE,
                format!("the requested format does not fit {what}"),
            )
        })
    }
}

/// Chooses the formats from a `format=` value if given, else from `Accept`.
pub fn negotiate(accept: Option<&str>, format: Option<&str>) -> Result<Negotiated, ApiError> {
    let negotiated = match format {
        Some(name) => by_name(name)?,
        None => from_accept(accept.unwrap_or("*/*")),
    };
    if negotiated.tabular.is_none() && negotiated.graph.is_none() {
        return Err(ApiError::new(
            StatusCode::NOT_ACCEPTABLE,
            format!(
                "no acceptable format in Accept: {}; offered: {}",
                accept.unwrap_or(""),
                offered()
            ),
        ));
    }
    Ok(negotiated)
}

/// The formats an `Accept` header picks. A client sends the same header with each of its
/// requests, so each thread remembers the last header it read and what it picked: parsing
/// it and weighing fifteen offers against its ranges cost more than a light query's
/// routing.
fn from_accept(header: &str) -> Negotiated {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, Negotiated)>> =
            const { std::cell::RefCell::new(None) };
    }
    let pick = || {
        let ranges = parse_accept(header);
        Negotiated {
            tabular: best(&ranges, TABULAR),
            graph: best(&ranges, GRAPH),
        }
    };
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        match &mut *last {
            Some((seen, negotiated)) if seen == header => *negotiated,
            Some((seen, negotiated)) => {
                *negotiated = pick();
                seen.clear();
                seen.push_str(header);
                *negotiated
            }
            None => {
                let negotiated = pick();
                *last = Some((header.to_owned(), negotiated));
                negotiated
            }
        }
    })
}

fn offered() -> String {
    let mut names: Vec<&str> = TABULAR.iter().chain(GRAPH).map(|(m, _)| *m).collect();
    names.dedup();
    names.join(", ")
}

/// A `format=` value: a short name or a media type. `xml` means RDF/XML for graphs.
fn by_name(name: &str) -> Result<Negotiated, ApiError> {
    use ResultsFormat::*;
    let lower = name
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let (tabular, graph) = match lower.as_str() {
        "json" | "srj" | "application/sparql-results+json" | "application/json" => {
            (Some(Json), None)
        }
        "xml" | "srx" | "application/xml" | "text/xml" => (Some(Xml), Some(RdfXml)),
        "application/sparql-results+xml" => (Some(Xml), None),
        "csv" | "text/csv" => (Some(Csv), None),
        "tsv" | "text/tab-separated-values" => (Some(Tsv), None),
        "ttl" | "turtle" | "n3" | "text/turtle" | "application/x-turtle" => (None, Some(Turtle)),
        "nt" | "ntriples" | "n-triples" | "application/n-triples" => (None, Some(NTriples)),
        "rdf" | "rdfxml" | "rdf+xml" | "rdf/xml" | "application/rdf+xml" => (None, Some(RdfXml)),
        _ => {
            return Err(ApiError::bad_request(format!(
                "unknown format '{name}': use json, xml, csv, tsv (SELECT/ASK) or turtle, nt, \
                 rdfxml (CONSTRUCT/DESCRIBE), or a media type"
            )))
        }
    };
    Ok(Negotiated { tabular, graph })
}

/// One media range of an Accept header, borrowed from it (compared without regard to
/// case, so that parsing a header allocates only the list: it is read on every query).
#[derive(Debug)]
pub(crate) struct Range<'a> {
    kind: &'a str,
    subtype: &'a str,
    q: f32,
}

pub(crate) fn parse_accept(header: &str) -> Vec<Range<'_>> {
    header
        .split(',')
        .filter_map(|item| {
            let mut parts = item.split(';');
            let (kind, subtype) = parts.next()?.split_once('/')?;
            let mut q = 1.0;
            for param in parts {
                if let Some((name, value)) = param.split_once('=') {
                    if name.trim().eq_ignore_ascii_case("q") {
                        q = value.trim().parse::<f32>().unwrap_or(1.0).clamp(0.0, 1.0);
                    }
                }
            }
            Some(Range {
                kind: kind.trim(),
                subtype: subtype.trim(),
                q,
            })
        })
        .collect()
}

/// The quality the client gives `media`: that of the most specific matching range.
fn quality(ranges: &[Range], media: &str) -> f32 {
    let (kind, subtype) = media.split_once('/').unwrap_or((media, ""));
    let mut best: Option<(u8, f32)> = None;
    for range in ranges {
        let same_kind = range.kind.eq_ignore_ascii_case(kind);
        let specificity = match (range.kind, range.subtype) {
            (_, s) if same_kind && s.eq_ignore_ascii_case(subtype) => 2,
            (_, "*") if same_kind => 1,
            ("*", "*") => 0,
            _ => continue,
        };
        if best.is_none_or(|(s, _)| specificity > s) {
            best = Some((specificity, range.q));
        }
    }
    best.map_or(0.0, |(_, q)| q)
}

/// The offer the client likes best (the first among equals), if it accepts any.
pub(crate) fn best<F: Copy>(ranges: &[Range], offers: &[(&str, F)]) -> Option<F> {
    let mut chosen: Option<(f32, F)> = None;
    for (media, format) in offers {
        let q = quality(ranges, media);
        if q > 0.0 && chosen.is_none_or(|(best, _)| q > best) {
            chosen = Some((q, *format));
        }
    }
    chosen.map(|(_, format)| format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ResultsFormat::*;

    fn pick(accept: &str) -> (Option<ResultsFormat>, Option<ResultsFormat>) {
        let n = negotiate(Some(accept), None).unwrap();
        (n.tabular, n.graph)
    }

    #[test]
    fn defaults_and_wildcards() {
        let n = negotiate(None, None).unwrap();
        assert_eq!((n.tabular, n.graph), (Some(Json), Some(Turtle)));
        assert_eq!(pick("*/*"), (Some(Json), Some(Turtle)));
        assert_eq!(pick("text/*"), (Some(Xml), Some(Turtle)));
    }

    #[test]
    fn exact_types_and_quality() {
        assert_eq!(pick("text/csv"), (Some(Csv), None));
        assert_eq!(pick("application/n-triples"), (None, Some(NTriples)));
        assert_eq!(
            pick("application/sparql-results+json;q=0.5, application/sparql-results+xml"),
            (Some(Xml), None)
        );
        // A browser: XML at 0.9 beats everything else at 0.8.
        assert_eq!(
            pick("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            (Some(Xml), Some(RdfXml))
        );
        // The most specific range wins, even with a lower q.
        assert_eq!(pick("*/*;q=1, text/csv;q=0"), (Some(Json), Some(Turtle)));
        assert_eq!(pick("text/*;q=0, text/csv;q=0.1"), (Some(Csv), None));
    }

    /// A thread's remembered header answers only that header: alternating headers each
    /// get their own formats.
    #[test]
    fn a_remembered_header_answers_only_itself() {
        for _ in 0..3 {
            assert_eq!(pick("text/csv"), (Some(Csv), None));
            assert_eq!(pick("text/turtle"), (None, Some(Turtle)));
            assert_eq!(pick("text/turtle"), (None, Some(Turtle)));
            assert!(negotiate(Some("image/png"), None).is_err());
            assert_eq!(pick("text/tab-separated-values"), (Some(Tsv), None));
        }
    }

    #[test]
    fn not_acceptable() {
        let error = negotiate(Some("image/png"), None).unwrap_err();
        assert_eq!(error.status, StatusCode::NOT_ACCEPTABLE);
        let n = negotiate(Some("text/csv"), None).unwrap();
        assert_eq!(
            n.for_kind(ResultKind::Graph).unwrap_err().status,
            StatusCode::NOT_ACCEPTABLE
        );
    }

    #[test]
    fn format_parameter_overrides_accept() {
        let n = negotiate(Some("text/csv"), Some("tsv")).unwrap();
        assert_eq!(n.for_kind(ResultKind::Tabular).unwrap(), Tsv);
        let n = negotiate(None, Some("xml")).unwrap();
        assert_eq!((n.tabular, n.graph), (Some(Xml), Some(RdfXml)));
        let n = negotiate(None, Some("text/turtle")).unwrap();
        assert_eq!((n.tabular, n.graph), (None, Some(Turtle)));
        let error = negotiate(None, Some("yaml")).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type(Json), "application/sparql-results+json");
        assert!(content_type(Csv).starts_with("text/csv"));
    }
}
