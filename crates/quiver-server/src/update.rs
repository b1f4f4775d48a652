//! The SPARQL 1.1 Protocol's update operation: checking a request and running it as one
//! transaction of the database.
//!
//! The update is parsed here first, so that a syntax error is a 400 with its line and
//! column before the request waits for the writer. The protocol's `using-graph-uri` /
//! `using-named-graph-uri` become the `USING` / `USING NAMED` of every `DELETE`/`INSERT …
//! WHERE` operation; a request that has both the parameters and a `USING` or `WITH` clause of
//! its own is refused with 400, as the protocol requires. Relative IRIs resolve against the
//! request's URL (the protocol lets the service choose the base; its endpoint is the
//! natural one).
//!
//! `LOAD` reads files on the server's machine (the database's loader takes local files and
//! directories), so over HTTP it is refused with 403 unless the server was started with
//! `--allow-load`: otherwise anyone allowed to write could copy any file the server can read
//! into the store, where every client can query it.

use axum::http::StatusCode;
use quiver_db::{Database, UpdateReport};
use quiver_sparql::update::parse_update;
use quiver_sparql::ExecOptions;
use spargebra::algebra::QueryDataset;
use spargebra::GraphUpdateOperation;

use crate::error::ApiError;
use crate::protocol::UpdateRequest;

/// An update checked and ready for [`Database::update`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedUpdate {
    /// The update text to run.
    pub text: String,
    /// The base IRI to run it against (`None` when `text` has its IRIs resolved already).
    pub base_iri: Option<String>,
    /// Operations in the request.
    pub operations: usize,
}

/// Parses `request` against `base_iri` and applies its dataset parameters; `LOAD` only when
/// `allow_load`.
pub fn prepare(
    request: &UpdateRequest,
    base_iri: &str,
    allow_load: bool,
) -> Result<PreparedUpdate, ApiError> {
    let mut update = parse_update(&request.update, Some(base_iri))
        .map_err(|error| ApiError::from_query(&error))?;
    let operations = update.operations.len();
    if !allow_load {
        let load = update
            .operations
            .iter()
            .find_map(|operation| match operation {
                GraphUpdateOperation::Load { source, .. } => Some(source),
                _ => None,
            });
        if let Some(source) = load {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "LOAD {source} is refused: it reads files on the server's machine \
                     (start the server with --allow-load to allow it)"
                ),
            ));
        }
    }
    if request.using_graphs.is_empty() && request.using_named_graphs.is_empty() {
        return Ok(PreparedUpdate {
            text: request.update.clone(),
            base_iri: Some(base_iri.to_owned()),
            operations,
        });
    }
    let dataset = QueryDataset {
        default: request.using_graphs.clone(),
        named: (!request.using_named_graphs.is_empty()).then(|| request.using_named_graphs.clone()),
    };
    for operation in &mut update.operations {
        if let GraphUpdateOperation::DeleteInsert { using, .. } = operation {
            if using.is_some() {
                return Err(ApiError::bad_request(
                    "the request has using-graph-uri/using-named-graph-uri parameters and an \
                     operation with its own USING or WITH clause: use one or the other",
                ));
            }
            *using = Some(dataset.clone());
        }
    }
    // The parsed form prints back as SPARQL with every IRI absolute.
    update.base_iri = None;
    Ok(PreparedUpdate {
        text: update.to_string(),
        base_iri: None,
        operations,
    })
}

/// Runs `prepared` as one transaction; call on a blocking thread.
pub fn run(
    db: &Database,
    prepared: &PreparedUpdate,
    options: &ExecOptions,
) -> Result<UpdateReport, ApiError> {
    db.update(&prepared.text, prepared.base_iri.as_deref(), options)
        .map_err(|error| {
            tracing::info!(%error, "update not committed");
            ApiError::from_db(&error)
        })
}

/// The body of a successful update: a line of text, or JSON when the client asks for it.
pub fn summary(report: &UpdateReport, operations: usize, json: bool) -> (&'static str, String) {
    if json {
        let body = serde_json::json!({
            "operations": operations,
            "inserted": report.inserted,
            "deleted": report.deleted,
            "triples": report.triples,
        });
        ("application/json", body.to_string())
    } else {
        (
            "text/plain; charset=utf-8",
            format!(
                "update committed: {operations} operation(s), {} quad(s) inserted, {} deleted; \
                 {} triples in the store\n",
                report.inserted, report.deleted, report.triples
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::NamedNode;

    fn request(update: &str, using: &[&str], named: &[&str]) -> UpdateRequest {
        let iris = |list: &[&str]| list.iter().map(|i| NamedNode::new(*i).unwrap()).collect();
        UpdateRequest {
            update: update.into(),
            using_graphs: iris(using),
            using_named_graphs: iris(named),
        }
    }

    #[test]
    fn without_parameters_the_text_runs_as_sent() {
        let prepared = prepare(
            &request("CLEAR ALL ; CLEAR DEFAULT", &[], &[]),
            "http://s/",
            false,
        )
        .unwrap();
        assert_eq!(prepared.text, "CLEAR ALL ; CLEAR DEFAULT");
        assert_eq!(prepared.base_iri.as_deref(), Some("http://s/"));
        assert_eq!(prepared.operations, 2);
    }

    #[test]
    fn parameters_become_using_clauses() {
        let text = "INSERT DATA { <s> <p> <o> } ; INSERT { GRAPH <http://out> { ?s a <http://C> } } WHERE { ?s ?p ?o }";
        let prepared = prepare(
            &request(text, &["http://g1"], &["http://g2"]),
            "http://base/",
            false,
        )
        .unwrap();
        assert!(prepared.base_iri.is_none());
        let reparsed = parse_update(&prepared.text, None).unwrap();
        let GraphUpdateOperation::DeleteInsert { using, .. } = &reparsed.operations[1] else {
            panic!("{}", prepared.text)
        };
        let using = using.as_ref().expect("USING added");
        assert_eq!(using.default, [NamedNode::new("http://g1").unwrap()]);
        assert_eq!(
            using.named.as_deref(),
            Some(&[NamedNode::new("http://g2").unwrap()][..])
        );
        // The relative IRIs of INSERT DATA were resolved against the base.
        assert!(
            prepared.text.contains("<http://base/s>"),
            "{}",
            prepared.text
        );
    }

    #[test]
    fn conflicts_and_syntax_errors_are_400() {
        for text in [
            "WITH <http://a> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
            "DELETE { ?s ?p ?o } USING <http://a> WHERE { ?s ?p ?o }",
        ] {
            let error =
                prepare(&request(text, &[], &["http://people"]), "http://s/", false).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST);
            assert!(error.message.contains("USING or WITH"), "{}", error.message);
        }
        let error = prepare(&request("CLEAR\n XYZ", &[], &[]), "http://s/", false).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_REQUEST);
        assert!(
            error.message.contains('2'),
            "no position: {}",
            error.message
        );
    }

    #[test]
    fn load_needs_permission() {
        let text = "CLEAR ALL ; LOAD <file:///etc/hostname> INTO GRAPH <http://g>";
        let error = prepare(&request(text, &[], &[]), "http://s/", false).unwrap_err();
        assert_eq!(error.status, StatusCode::FORBIDDEN);
        assert!(error.message.contains("--allow-load"), "{}", error.message);
        assert!(prepare(&request(text, &[], &[]), "http://s/", true).is_ok());
    }
}
