//! SPARQL 1.1 Update requests: parsing and checking.
//!
//! Executing updates needs the mutable index (`quiver_store::MutableGraph`) wired into the
//! store a query reads; until then Quiver parses update requests, so that tools can validate
//! them and report syntax errors with a position the way queries do, and refuses to run them.

use quiver_store::{ChangeSet, Store};
use spargebra::{SparqlParser, Update};

use crate::engine::ExecOptions;
use crate::error::QueryError;

/// Reads the data of a `LOAD <iri>` operation (a local file or directory; the database
/// layer provides it).
pub trait LoadHandler: Send + Sync {
    /// The quads of `source_iri`; triples come back in the default graph.
    fn load(&self, source_iri: &str) -> Result<Vec<oxrdf::Quad>, String>;
}

/// What an update request did: the final store version and one change set per operation.
#[derive(Debug)]
pub struct UpdateOutcome {
    pub store: Store,
    pub changes: Vec<ChangeSet>,
    pub inserted: u64,
    pub deleted: u64,
}

/// Evaluates `update` against `store`, operation after operation, each seeing the ones
/// before it. The store is not modified: the caller commits the outcome, or drops it.
pub fn execute_update(
    store: &Store,
    update: &Update,
    options: &ExecOptions,
    loader: &dyn LoadHandler,
) -> Result<UpdateOutcome, QueryError> {
    let _ = (store, update, options, loader);
    Err(QueryError::Unsupported("SPARQL Update evaluation".into()))
}

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
