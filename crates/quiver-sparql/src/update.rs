//! SPARQL 1.1 Update requests: parsing and checking.
//!
//! Executing updates needs the mutable index (`quiver_store::MutableGraph`) wired into the
//! store a query reads; until then Quiver parses update requests, so that tools can validate
//! them and report syntax errors with a position the way queries do, and refuses to run them.

use spargebra::{SparqlParser, Update};

use crate::error::QueryError;

/// Parses an update request against `base_iri` (relative IRIs resolve against it).
pub fn parse_update(text: &str, base_iri: Option<&str>) -> Result<Update, QueryError> {
    crate::nesting::check(text)?;
    let mut parser = SparqlParser::new();
    if let Some(base) = base_iri {
        parser = parser
            .with_base_iri(base)
            .map_err(|e| QueryError::Syntax(e.to_string()))?;
    }
    parser
        .parse_update(text)
        .map_err(|e| QueryError::syntax(text, &e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_and_invalid_updates() {
        let update = parse_update(
            "PREFIX : <http://example.org/> INSERT DATA { :a :b :c } ; DELETE WHERE { ?s :b ?o }",
            None,
        )
        .unwrap();
        assert_eq!(update.operations.len(), 2);
        let relative = parse_update("CLEAR GRAPH <g>", Some("http://example.org/")).unwrap();
        assert!(relative.to_string().contains("<http://example.org/g>"));
        let error = parse_update("INSERT DATA { ?s <http://p> 1 }", None).unwrap_err();
        assert!(matches!(error, QueryError::Syntax(_)), "{error}");
        let error = parse_update("INSERT DATA { x:a <http://p> 1 }", None).unwrap_err();
        assert!(
            error.to_string().contains("undeclared prefix 'x:'"),
            "{error}"
        );
    }
}
