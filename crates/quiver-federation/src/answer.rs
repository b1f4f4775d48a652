//! A remote endpoint's response body as solutions: SPARQL results in JSON, XML or TSV
//! (sparesults' parsers), chosen by the response's media type.

use quiver_sparql::ServiceSolutions;
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};

/// The media types asked for, best first: JSON is the most widely served, TSV the most
/// compact (both stream), XML the SPARQL 1.0 format every endpoint has.
pub const ACCEPT: &str = "application/sparql-results+json, text/tab-separated-values;q=0.9, \
                          application/sparql-results+xml;q=0.8";

/// The results format of a `Content-Type` value (parameters ignored).
pub fn format_of(content_type: &str) -> Option<QueryResultsFormat> {
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media.as_str() {
        "application/sparql-results+json" | "application/json" => Some(QueryResultsFormat::Json),
        "application/sparql-results+xml" | "application/xml" | "text/xml" => {
            Some(QueryResultsFormat::Xml)
        }
        "text/tab-separated-values" => Some(QueryResultsFormat::Tsv),
        _ => None,
    }
}

/// The solutions of `body`, or why it holds none.
pub fn parse(body: &[u8], content_type: &str) -> Result<ServiceSolutions, String> {
    let format = format_of(content_type).ok_or_else(|| {
        format!("answered with Content-Type {content_type:?}, not SPARQL results")
    })?;
    let output = QueryResultsParser::from_format(format)
        .for_slice(body)
        .map_err(|e| format!("answered invalid SPARQL results: {e}"))?;
    let SliceQueryResultsParserOutput::Solutions(solutions) = output else {
        return Err("answered a boolean, not solutions".into());
    };
    let variables = solutions.variables().to_vec();
    let mut rows = Vec::new();
    for solution in solutions {
        let solution = solution.map_err(|e| format!("answered invalid SPARQL results: {e}"))?;
        rows.push(solution.values().to_vec());
    }
    Ok(ServiceSolutions {
        variables,
        rows,
        bytes: body.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_tsv_and_xml_parse_and_garbage_is_named() {
        let json = br#"{"head":{"vars":["s","o"]},"results":{"bindings":[
            {"s":{"type":"uri","value":"http://e/a"},"o":{"type":"literal","value":"x"}},
            {"s":{"type":"uri","value":"http://e/b"}}]}}"#;
        let parsed = parse(json, "application/sparql-results+json; charset=utf-8").unwrap();
        assert_eq!(parsed.variables.len(), 2);
        assert_eq!(parsed.rows.len(), 2);
        assert_eq!(parsed.rows[1][1], None);
        let tsv = b"?s\t?o\n<http://e/a>\t\"x\"\n";
        assert_eq!(
            parse(tsv, "text/tab-separated-values").unwrap().rows.len(),
            1
        );
        let error = parse(b"<html>oops</html>", "text/html").unwrap_err();
        assert!(error.contains("text/html"), "{error}");
        let error = parse(b"{not json", "application/sparql-results+json").unwrap_err();
        assert!(error.contains("invalid SPARQL results"), "{error}");
        let error = parse(br#"{"head":{},"boolean":true}"#, "application/json").unwrap_err();
        assert!(error.contains("boolean"), "{error}");
    }
}
