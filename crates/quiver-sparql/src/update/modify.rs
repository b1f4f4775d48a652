//! `DELETE { … } INSERT { … } WHERE { … }` with `USING`, `USING NAMED` and `WITH`, and
//! what the parser rewrites into it: `DELETE WHERE { … }` and the copies of `ADD`, `COPY`
//! and `MOVE`.
//!
//! The `WHERE` pattern becomes a SELECT of the templates' variables over the operation's
//! dataset, prepared and executed by the engine against the current version (the planner,
//! the time limit, the cancel flag and the memory budget apply as to any query). Every
//! solution is computed before anything changes (the change set is built against that
//! version, so later solutions never see earlier changes); then the templates are
//! instantiated per solution, deletes before inserts.
//!
//! The dataset: without `USING`, the store's default graph and all named graphs; `USING
//! <g>` (several: their merge) is the default graph and `USING NAMED` lists the named
//! graphs; `WITH <g>` (which the parser turns into a dataset whose named graphs are left
//! open, and into the graph of the templates' default-graph quads) is the default graph
//! with every named graph visible.

use oxiri::Iri;
use oxrdf::{NamedNode, Term};
use quiver_store::Store;
use spargebra::algebra::{GraphPattern, QueryDataset};
use spargebra::term::{GroundQuadPattern, QuadPattern};
use spargebra::Query;

use crate::context::table_bytes;
use crate::engine::{prepare_query, PrepareOptions, QueryResults};
use crate::error::QueryError;

use super::builder::{Builder, Built};
use super::columns::Columns;
use super::template::Templates;
use super::Request;

/// One `DELETE`/`INSERT` operation as the parser gives it.
pub(crate) struct Modify<'u> {
    pub(crate) delete: &'u [GroundQuadPattern],
    pub(crate) insert: &'u [QuadPattern],
    pub(crate) using: Option<&'u QueryDataset>,
    pub(crate) pattern: &'u GraphPattern,
    pub(crate) base_iri: Option<&'u Iri<String>>,
    /// The operation's number in the request.
    pub(crate) index: usize,
}

pub(crate) fn delete_insert(
    request: &Request<'_>,
    store: &Store,
    operation: &Modify<'_>,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    let mut columns = Columns::default();
    let mut templates = Templates::compile(
        &mut builder,
        operation.delete,
        operation.insert,
        &mut columns,
        operation.index,
    )?;
    if templates.is_empty() {
        // No template can produce a quad: the pattern need not run.
        return builder.finish();
    }
    let query = Query::Select {
        dataset: dataset(store, operation.using),
        pattern: GraphPattern::Project {
            inner: Box::new(operation.pattern.clone()),
            variables: columns.variables.clone(),
        },
        base_iri: operation.base_iri.cloned(),
    };
    let prepared = prepare_query(store, &query, &PrepareOptions::default())?;
    let results = prepared
        .execute(store, &request.exec_options()?)
        .map_err(|error| request.request_error(error))?;
    let QueryResults::Solutions(solutions) = results else {
        return Err(QueryError::Update(
            "the WHERE pattern did not give solutions".into(),
        ));
    };
    // The solutions are held until the change set is built.
    builder.charge(table_bytes(solutions.len(), columns.variables.len()))?;
    let ctx = builder.ctx();
    for row in 0..solutions.len() {
        ctx.tick(row)?;
        templates.instantiate(request, &mut builder, &solutions, row)?;
    }
    builder.finish()
}

/// The dataset of the `WHERE` evaluation (`None`: the whole store).
fn dataset(store: &Store, using: Option<&QueryDataset>) -> Option<QueryDataset> {
    let using = using?;
    let named = match &using.named {
        Some(named) => named.clone(),
        // `WITH` alone: every named graph stays visible to `GRAPH`.
        None => store
            .graph_names()
            .filter_map(|id| match store.term(id) {
                Some(Term::NamedNode(name)) => Some(name),
                _ => None,
            })
            .collect::<Vec<NamedNode>>(),
    };
    Some(QueryDataset {
        default: using.default.clone(),
        named: Some(named),
    })
}
