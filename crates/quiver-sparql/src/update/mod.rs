//! SPARQL 1.1 Update: parsing and evaluation.
//!
//! An update request is a sequence of operations, each seeing the ones before it. Evaluation
//! never modifies a store: each operation is turned into one [`ChangeSet`] built against
//! the current version (`data.rs`: `INSERT DATA` / `DELETE DATA`; `modify.rs` with
//! `template.rs`: `DELETE`/`INSERT … WHERE`, `DELETE WHERE`, and `ADD`/`COPY`/`MOVE`, which
//! the parser rewrites into drops and copies; `graphs.rs`: `LOAD`, `CLEAR`, `CREATE`,
//! `DROP`), which [`Store::apply`] turns into the next version. The outcome is the final
//! version and every change set in order: the caller (the database layer) logs and
//! publishes them, or drops the whole outcome, so a failing operation leaves nothing
//! behind (atomicity).
//!
//! The whole request runs under one execution state (`context.rs`): its deadline, cancel
//! flag and memory budget bound the `WHERE` evaluations (which go through the same
//! prepare/execute path as queries) and the loops that build change sets
//! (`builder.rs`).

mod builder;
mod columns;
mod data;
mod graphs;
mod modify;
mod template;
mod triple_template;

use std::sync::Arc;
use std::time::Instant;

use oxrdf::BlankNode;
use quiver_store::{ChangeSet, Store};
use spargebra::{GraphUpdateOperation, Update};

use crate::context::{ExecContext, QueryState};
use crate::engine::ExecOptions;
use crate::error::QueryError;
use crate::memory::MemoryBudget;

use builder::Built;

/// Reads the data of a `LOAD <iri>` operation (a local file or directory; the database
/// layer provides it).
pub trait LoadHandler: Send + Sync {
    /// The quads of `source_iri`; triples come back in the default graph.
    fn load(&self, source_iri: &str) -> Result<Vec<oxrdf::Quad>, String>;
}

/// A [`LoadHandler`] that loads nothing: every `LOAD` fails (or, with `SILENT`, does
/// nothing). For callers that have no files to offer.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoLoad;

impl LoadHandler for NoLoad {
    fn load(&self, source_iri: &str) -> Result<Vec<oxrdf::Quad>, String> {
        Err(format!("loading <{source_iri}> is not available here"))
    }
}

/// What an update request did: the final store version and one change set per operation.
#[derive(Debug)]
pub struct UpdateOutcome {
    pub store: Store,
    /// One per operation of the request, in order (empty when the operation changed
    /// nothing).
    pub changes: Vec<ChangeSet>,
    /// Quads inserted that the store did not hold, and quads deleted that it held (a
    /// cleared or dropped graph counts its triples).
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
    let request = Request::new(options);
    let mut current = store.clone();
    let mut outcome = UpdateOutcome {
        store: store.clone(),
        changes: Vec::with_capacity(update.operations.len()),
        inserted: 0,
        deleted: 0,
    };
    for (index, operation) in update.operations.iter().enumerate() {
        request.ctx(&current).check()?;
        let built = evaluate(&request, &current, update, operation, index, loader)?;
        let Built {
            changes,
            inserted,
            deleted,
        } = built;
        if !changes.is_empty() {
            current = current.apply(&changes).map_err(|error| {
                QueryError::Update(format!(
                    "operation {} cannot be applied: {error}",
                    index + 1
                ))
            })?;
        }
        outcome.inserted += inserted;
        outcome.deleted += deleted;
        outcome.changes.push(changes);
    }
    request.ctx(&current).check()?;
    outcome.store = current;
    Ok(outcome)
}

/// [`execute_update`] of one `INSERT DATA` whose quads are already encoded (see
/// `data::insert_encoded`): `terms` local terms, `term(i)` the encoding of local term
/// `i`, `quads` as local ids with `default_graph` for the default graph.
pub fn execute_insert_encoded<'t>(
    store: &Store,
    terms: usize,
    term: impl Fn(u32) -> &'t [u8] + Sync,
    quads: &[[u32; 4]],
    default_graph: u32,
    options: &ExecOptions,
) -> Result<UpdateOutcome, QueryError> {
    let request = Request::new(options);
    request.ctx(store).check()?;
    let Built {
        changes,
        inserted,
        deleted,
    } = data::insert_encoded(&request, store, terms, term, quads, default_graph)?;
    let next = if changes.is_empty() {
        store.clone()
    } else {
        store.apply(&changes).map_err(|error| {
            QueryError::Update(format!("operation 1 cannot be applied: {error}"))
        })?
    };
    request.ctx(&next).check()?;
    Ok(UpdateOutcome {
        store: next,
        changes: vec![changes],
        inserted,
        deleted,
    })
}

fn evaluate(
    request: &Request<'_>,
    store: &Store,
    update: &Update,
    operation: &GraphUpdateOperation,
    index: usize,
    loader: &dyn LoadHandler,
) -> Result<Built, QueryError> {
    match operation {
        GraphUpdateOperation::InsertData { data } => data::insert_data(request, store, data, index),
        GraphUpdateOperation::DeleteData { data } => data::delete_data(request, store, data),
        GraphUpdateOperation::DeleteInsert {
            delete,
            insert,
            using,
            pattern,
        } => modify::delete_insert(
            request,
            store,
            &modify::Modify {
                delete,
                insert,
                using: using.as_ref(),
                pattern,
                base_iri: update.base_iri.as_ref(),
                index,
            },
        ),
        GraphUpdateOperation::Load {
            silent,
            source,
            destination,
        } => graphs::load(request, store, loader, source, destination, *silent, index),
        GraphUpdateOperation::Clear { silent, graph } => {
            graphs::clear(request, store, graph, *silent, false)
        }
        GraphUpdateOperation::Drop { silent, graph } => {
            graphs::clear(request, store, graph, *silent, true)
        }
        GraphUpdateOperation::Create { silent, graph } => {
            graphs::create(request, store, graph, *silent)
        }
    }
}

/// What every operation of one request shares: the execution state (deadline, cancel flag,
/// memory budget), the options the `WHERE` evaluations run with, and the random prefix of
/// the request's fresh blank nodes.
pub(crate) struct Request<'o> {
    options: &'o ExecOptions,
    state: QueryState,
    /// When the request started and its time limit.
    deadline: Option<(Instant, f64)>,
    budget: Arc<MemoryBudget>,
    /// 128 random bits (hex): blank nodes the request creates are labelled with it, so
    /// they are distinct from every blank node of the store.
    blank_prefix: String,
}

impl<'o> Request<'o> {
    fn new(options: &'o ExecOptions) -> Self {
        let deadline = options
            .timeout
            .map(|t| (Instant::now() + t, t.as_secs_f64()));
        let budget = options.query_budget();
        let state = QueryState::new(
            deadline,
            options.cancel.clone(),
            budget.clone(),
            options.check_hook.clone(),
        );
        Self {
            options,
            state,
            deadline,
            budget,
            blank_prefix: BlankNode::default().as_str().to_owned(),
        }
    }

    /// The execution context of the request's own loops over `store`.
    pub(crate) fn ctx<'a>(&'a self, store: &'a Store) -> ExecContext<'a> {
        ExecContext {
            store,
            graph: store.graph(),
            threads: self.options.threads.max(1),
            state: &self.state,
            device: None,
        }
    }

    /// The options of a `WHERE` evaluation: what is left of the request's time, its
    /// cancel flag, its memory budget, no result cap.
    fn exec_options(&self) -> Result<ExecOptions, QueryError> {
        let timeout = match self.deadline {
            Some((deadline, seconds)) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(QueryError::Timeout(seconds));
                }
                Some(left)
            }
            None => None,
        };
        Ok(ExecOptions {
            threads: self.options.threads,
            timeout,
            max_results: None,
            cancel: self.options.cancel.clone(),
            max_memory: self.options.max_memory,
            pool: self.options.pool.clone(),
            budget: Some(self.budget.clone()),
            check_hook: self.options.check_hook.clone(),
            device: self.options.device.clone(),
            partitions: self.options.partitions.clone(),
            service: self.options.service.clone(),
            explain: false,
        })
    }

    /// A `WHERE` evaluation's error as the request's: its time limit is the request's.
    fn request_error(&self, error: QueryError) -> QueryError {
        match (error, self.deadline) {
            (QueryError::Timeout(_), Some((_, seconds))) => QueryError::Timeout(seconds),
            (error, _) => error,
        }
    }

    /// A fresh blank node of the request: `scope` tells the operation (and solution) it
    /// belongs to, `label` the blank node of the request text or of a loaded file. Equal
    /// arguments give the same node; different ones, different nodes.
    fn fresh_blank(&self, scope: &str, label: &str) -> BlankNode {
        BlankNode::new_unchecked(format!("{}{scope}_{label}", self.blank_prefix))
    }
}

/// Parses an update request against `base_iri` (relative IRIs resolve against it), with
/// the second reading of a rejected text (`crate::reparse`).
pub fn parse_update(text: &str, base_iri: Option<&str>) -> Result<Update, QueryError> {
    crate::nesting::check(text)?;
    let parser = crate::reparse::parser(base_iri)?;
    crate::reparse::parse_again(text, |text| parser.clone().parse_update(text))
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

    /// `TRUE` is the keyword `true` (SPARQL's keywords are case-insensitive), and an
    /// error in a request that has one is the parser's on the text as written.
    #[test]
    fn boolean_keywords_in_any_case() {
        let update = parse_update("INSERT DATA { <http://s> <http://p> TRUE, False }", None)
            .unwrap()
            .to_string();
        assert!(
            update.contains("true") && update.contains("false") && !update.contains("TRUE"),
            "{update}"
        );
        // Both readings fail: the error is the text's as written, at the variable.
        let error = parse_update("INSERT DATA { <http://s> <http://p> TRUE ?o }", None)
            .unwrap_err()
            .to_string();
        assert!(error.contains("found '?'"), "{error}");
    }

    #[test]
    fn fresh_blank_nodes_differ_by_scope_and_request() {
        let options = ExecOptions::default();
        let (one, two) = (Request::new(&options), Request::new(&options));
        assert_eq!(one.fresh_blank("o1", "b"), one.fresh_blank("o1", "b"));
        assert_ne!(one.fresh_blank("o1", "b"), one.fresh_blank("o2", "b"));
        assert_ne!(one.fresh_blank("o1", "b"), one.fresh_blank("o1", "c"));
        assert_ne!(one.fresh_blank("o1", "b"), two.fresh_blank("o1", "b"));
    }
}
