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
use quiver_db::{parse_insert_data, Database, InsertData, UpdateReport};
use quiver_sparql::update::parse_update;
use quiver_sparql::ExecOptions;
use spargebra::algebra::QueryDataset;
use spargebra::GraphUpdateOperation;

use crate::error::ApiError;
use crate::protocol::UpdateRequest;

/// An update checked and ready for [`Database::update`].
#[derive(Debug)]
pub struct PreparedUpdate {
    /// The parsed request, its IRIs resolved and the dataset parameters applied.
    pub update: ParsedUpdate,
    /// Operations in the request.
    pub operations: usize,
}

/// A request as read.
#[derive(Debug)]
pub enum ParsedUpdate {
    /// By the SPARQL parser.
    Sparql(spargebra::Update),
    /// One `INSERT DATA` of N-Triples statements, by the fast reader
    /// ([`quiver_db::parse_insert_data`]; it holds only absolute IRIs, so the base does
    /// not matter).
    Data(InsertData),
}

/// Parses `request` against `base_iri` and applies its dataset parameters; `LOAD` only when
/// `allow_load`.
pub fn prepare(
    request: &UpdateRequest,
    base_iri: &str,
    allow_load: bool,
) -> Result<PreparedUpdate, ApiError> {
    if request.using_graphs.is_empty() && request.using_named_graphs.is_empty() {
        if let Some(data) = parse_insert_data(&request.update) {
            return Ok(PreparedUpdate {
                update: ParsedUpdate::Data(data),
                operations: 1,
            });
        }
    }
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
            update: ParsedUpdate::Sparql(update),
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
    Ok(PreparedUpdate {
        update: ParsedUpdate::Sparql(update),
        operations,
    })
}

/// Runs `prepared` as one transaction; call on a blocking thread.
pub fn run(
    db: &Database,
    prepared: &PreparedUpdate,
    options: &ExecOptions,
) -> Result<UpdateReport, ApiError> {
    match &prepared.update {
        ParsedUpdate::Sparql(update) => db.update_parsed(update, options),
        ParsedUpdate::Data(data) => db.insert_data(data, options),
    }
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
        let ParsedUpdate::Sparql(update) = &prepared.update else {
            panic!("{prepared:?}")
        };
        assert_eq!(
            update.operations,
            parse_update("CLEAR ALL ; CLEAR DEFAULT", None)
                .unwrap()
                .operations
        );
        assert_eq!(prepared.operations, 2);
    }

    #[test]
    fn an_insert_data_of_n_triples_takes_the_fast_reader_unless_using_parameters_come() {
        let text = "INSERT DATA {\n<http://x/s> <http://x/p> \"o\" .\n}";
        let prepared = prepare(&request(text, &[], &[]), "http://s/", false).unwrap();
        let ParsedUpdate::Data(data) = &prepared.update else {
            panic!("{prepared:?}")
        };
        assert_eq!(data.quads().len(), 1);
        assert_eq!(prepared.operations, 1);
        let prepared = prepare(&request(text, &["http://g"], &[]), "http://s/", false).unwrap();
        assert!(matches!(prepared.update, ParsedUpdate::Sparql(_)));
        // Relative IRIs need the base: the SPARQL parser's.
        let relative = "INSERT DATA { <s> <http://x/p> \"o\" . }";
        let prepared = prepare(&request(relative, &[], &[]), "http://s/", false).unwrap();
        assert!(matches!(prepared.update, ParsedUpdate::Sparql(_)));
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
        let ParsedUpdate::Sparql(update) = &prepared.update else {
            panic!("{prepared:?}")
        };
        let text = update.to_string();
        let GraphUpdateOperation::DeleteInsert { using, .. } = &update.operations[1] else {
            panic!("{text}")
        };
        let using = using.as_ref().expect("USING added");
        assert_eq!(using.default, [NamedNode::new("http://g1").unwrap()]);
        assert_eq!(
            using.named.as_deref(),
            Some(&[NamedNode::new("http://g2").unwrap()][..])
        );
        // The relative IRIs of INSERT DATA were resolved against the base.
        assert!(text.contains("<http://base/s>"), "{text}");
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
