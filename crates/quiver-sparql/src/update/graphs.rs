//! Graph management: `LOAD`, `CLEAR`, `DROP` and `CREATE`.
//!
//! The store keeps named graphs that exist but are empty, so the four operations differ:
//! `CLEAR GRAPH <g>` empties `g` and keeps it, `DROP GRAPH <g>` removes it, `CREATE GRAPH
//! <g>` makes an empty one. `CLEAR`/`DROP` of a graph that does not exist and `CREATE` of
//! one that does fail the request unless `SILENT`. The default graph always exists:
//! clearing or dropping it deletes its triples. `NAMED` is every named graph, `ALL` those
//! and the default graph.
//!
//! `LOAD <source>` asks the caller's [`LoadHandler`] for the source's quads; their blank
//! nodes are made fresh (a file's `_:b` is never a node of the store), and `INTO GRAPH
//! <g>` puts the source's triples (its default graph) into `g`, which exists afterwards
//! even when the source is empty. A source that cannot be loaded fails the request unless
//! `SILENT`.

use oxrdf::{GraphName as QuadGraph, NamedNode};
use quiver_model::Id;
use quiver_store::{Quad, Store};
use spargebra::algebra::GraphTarget;
use spargebra::term::GraphName;

use crate::error::QueryError;

use super::builder::{Builder, Built};
use super::data::{intern_object, intern_subject};
use super::{LoadHandler, Request};

/// `CLEAR` (`drop` false) or `DROP` (`drop` true) of `target`.
pub(crate) fn clear(
    request: &Request<'_>,
    store: &Store,
    target: &GraphTarget,
    silent: bool,
    drop: bool,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    let named: Vec<Id> = match target {
        GraphTarget::NamedNode(name) => {
            match store
                .term_id(name.as_ref().into())
                .filter(|&id| store.has_named_graph(id))
            {
                Some(id) => vec![id],
                None if silent => Vec::new(),
                None => return Err(missing_graph(name)),
            }
        }
        GraphTarget::DefaultGraph => Vec::new(),
        GraphTarget::NamedGraphs | GraphTarget::AllGraphs => store.graph_names().collect(),
    };
    if matches!(target, GraphTarget::DefaultGraph | GraphTarget::AllGraphs) {
        clear_default_graph(&mut builder)?;
    }
    for name in named {
        builder.drop_graph(name);
        if !drop {
            builder.create_graph(name);
        }
    }
    builder.finish()
}

/// Deletes every triple of the default graph.
fn clear_default_graph(builder: &mut Builder<'_>) -> Result<(), QueryError> {
    let store = builder.store();
    let mut failed = None;
    store.graph().for_each_triple(|subject, predicate, object| {
        if failed.is_some() {
            return;
        }
        let quad = Quad {
            subject,
            predicate: store.predicate_term(predicate),
            object,
            graph: None,
        };
        if let Err(error) = builder.delete_held(quad) {
            failed = Some(error);
        }
    });
    failed.map_or(Ok(()), Err)
}

/// `CREATE GRAPH <name>`.
pub(crate) fn create(
    request: &Request<'_>,
    store: &Store,
    name: &NamedNode,
    silent: bool,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    let exists = store
        .term_id(name.as_ref().into())
        .is_some_and(|id| store.has_named_graph(id));
    if exists {
        if !silent {
            return Err(QueryError::Update(format!("graph {name} already exists")));
        }
    } else {
        let id = builder.intern(name.as_ref().into())?;
        builder.create_graph(id);
    }
    builder.finish()
}

/// `LOAD <source> [INTO GRAPH <destination>]`, operation `index` of the request.
pub(crate) fn load(
    request: &Request<'_>,
    store: &Store,
    loader: &dyn LoadHandler,
    source: &NamedNode,
    destination: &GraphName,
    silent: bool,
    index: usize,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    builder.ctx().check()?;
    let quads = match loader.load(source.as_str()) {
        Ok(quads) => quads,
        Err(_) if silent => return builder.finish(),
        Err(error) => {
            return Err(QueryError::Update(format!("LOAD {source} failed: {error}")));
        }
    };
    builder.ctx().check()?;
    // The loaded quads are held until the change set is built.
    builder.charge(
        quads
            .len()
            .saturating_mul(std::mem::size_of::<oxrdf::Quad>()),
    )?;
    let scope = format!("o{index}l");
    let destination = match destination {
        GraphName::DefaultGraph => None,
        GraphName::NamedNode(name) => {
            let id = builder.intern(name.as_ref().into())?;
            builder.create_graph(id);
            Some(id)
        }
    };
    for quad in &quads {
        let subject = intern_subject(&mut builder, request, &scope, &quad.subject)?;
        let predicate = builder.intern(quad.predicate.as_ref().into())?;
        let object = intern_object(&mut builder, request, &scope, &quad.object)?;
        let graph = match &quad.graph_name {
            QuadGraph::DefaultGraph => destination,
            QuadGraph::NamedNode(name) => Some(builder.intern(name.as_ref().into())?),
            QuadGraph::BlankNode(node) => {
                let fresh = request.fresh_blank(&scope, node.as_str());
                Some(builder.intern(fresh.as_ref().into())?)
            }
        };
        builder.insert(Quad {
            subject,
            predicate,
            object,
            graph,
        })?;
    }
    builder.finish()
}

fn missing_graph(name: &NamedNode) -> QueryError {
    QueryError::Update(format!("graph {name} does not exist"))
}
