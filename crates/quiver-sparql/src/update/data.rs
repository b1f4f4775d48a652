//! `INSERT DATA` and `DELETE DATA`: quads given in the request.
//!
//! Blank nodes of `INSERT DATA` are fresh: each label becomes a new node of the request
//! (the parser already refuses a label shared between two operations), never one the store
//! holds. `DELETE DATA` cannot name blank nodes (the grammar has none there), so it only
//! removes quads of IRIs and literals; a quad the store lacks is ignored. The blank nodes
//! inside a triple term (RDF 1.2) are fresh like the others.

use oxrdf::{NamedOrBlankNode, Term, Triple};
use quiver_model::Id;
use quiver_store::{Quad, Store};
use spargebra::term::{GraphName, GroundQuad, GroundTerm, Quad as DataQuad};

use crate::error::QueryError;

use super::builder::{Builder, Built};
use super::Request;

/// `INSERT DATA { … }`, operation `index` of the request.
pub(crate) fn insert_data(
    request: &Request<'_>,
    store: &Store,
    data: &[DataQuad],
    index: usize,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    let scope = format!("o{index}");
    for quad in data {
        let subject = intern_subject(&mut builder, request, &scope, &quad.subject)?;
        let predicate = builder.intern(quad.predicate.as_ref().into())?;
        let object = intern_object(&mut builder, request, &scope, &quad.object)?;
        let graph = graph_id(&mut builder, &quad.graph_name)?;
        builder.insert(Quad {
            subject,
            predicate,
            object,
            graph,
        })?;
    }
    builder.finish()
}

/// The quads of an `INSERT DATA` already encoded (read by a fast reader that does not
/// build a SPARQL syntax tree): term `i` has the encoding `term(i)`, and graph
/// `default_graph` is the default graph. The terms hold no blank nodes.
pub(crate) fn insert_encoded<'t>(
    request: &Request<'_>,
    store: &Store,
    terms: usize,
    term: impl Fn(u32) -> &'t [u8] + Sync,
    quads: &[[u32; 4]],
    default_graph: u32,
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    // The terms are distinct: look them all up at once (in parallel for many, leaving the
    // worker threads to queries otherwise), then append the absent ones, in order.
    let found = store
        .dictionary()
        .lookup_batch(terms, |local| term(local as u32));
    // The memory of the new terms and of the quads is charged at once, not per item.
    let (absent, absent_bytes) = found
        .iter()
        .enumerate()
        .filter(|(_, found)| found.is_none())
        .fold((0, 0), |(count, bytes), (local, _)| {
            (count + 1, bytes + term(local as u32).len())
        });
    builder.charge_absent(absent, absent_bytes)?;
    let ids: Vec<Id> = found
        .into_iter()
        .enumerate()
        .map(|(local, found)| match found {
            Some(id) => Ok(id),
            None => builder.intern_absent_charged(term(local as u32)),
        })
        .collect::<Result<_, QueryError>>()?;
    builder.charge_inserts(quads.len())?;
    for &[subject, predicate, object, graph] in quads {
        let id = |local: u32| {
            ids.get(local as usize)
                .copied()
                .ok_or_else(|| QueryError::Update(format!("no term {local} in the data")))
        };
        builder.insert_charged(Quad {
            subject: id(subject)?,
            predicate: id(predicate)?,
            object: id(object)?,
            graph: if graph == default_graph {
                None
            } else {
                Some(id(graph)?)
            },
        })?;
    }
    builder.finish()
}

/// `DELETE DATA { … }`.
pub(crate) fn delete_data(
    request: &Request<'_>,
    store: &Store,
    data: &[GroundQuad],
) -> Result<Built, QueryError> {
    let mut builder = Builder::new(request, store);
    for quad in data {
        let object = match &quad.object {
            GroundTerm::NamedNode(node) => builder.existing(node.as_ref().into()),
            GroundTerm::Literal(literal) => builder.existing(literal.as_ref().into()),
            GroundTerm::Triple(triple) => {
                builder.existing(Term::from(Triple::from((**triple).clone())).as_ref())
            }
        };
        let graph = match &quad.graph_name {
            GraphName::DefaultGraph => Some(None),
            GraphName::NamedNode(name) => builder.existing(name.as_ref().into()).map(Some),
        };
        let (Some(subject), Some(predicate), Some(object), Some(graph)) = (
            builder.existing(quad.subject.as_ref().into()),
            builder.existing(quad.predicate.as_ref().into()),
            object,
            graph,
        ) else {
            // A term the store lacks: the quad is not there.
            continue;
        };
        builder.delete(Quad {
            subject,
            predicate,
            object,
            graph,
        })?;
    }
    builder.finish()
}

/// The id of a quad's graph (`None`: the default graph), interned.
fn graph_id(builder: &mut Builder<'_>, graph: &GraphName) -> Result<Option<Id>, QueryError> {
    Ok(match graph {
        GraphName::DefaultGraph => None,
        GraphName::NamedNode(name) => Some(builder.intern(name.as_ref().into())?),
    })
}

/// The id of a quad's subject; a blank node becomes the fresh node of its label in `scope`.
pub(crate) fn intern_subject(
    builder: &mut Builder<'_>,
    request: &Request<'_>,
    scope: &str,
    subject: &NamedOrBlankNode,
) -> Result<Id, QueryError> {
    match subject {
        NamedOrBlankNode::NamedNode(node) => builder.intern(node.as_ref().into()),
        NamedOrBlankNode::BlankNode(node) => {
            let fresh = request.fresh_blank(scope, node.as_str());
            builder.intern(fresh.as_ref().into())
        }
    }
}

/// The id of a quad's object, blank nodes as in [`intern_subject`].
pub(crate) fn intern_object(
    builder: &mut Builder<'_>,
    request: &Request<'_>,
    scope: &str,
    object: &Term,
) -> Result<Id, QueryError> {
    match object {
        Term::BlankNode(node) => {
            let fresh = request.fresh_blank(scope, node.as_str());
            builder.intern(fresh.as_ref().into())
        }
        Term::Triple(triple) => {
            let fresh = fresh_triple(request, scope, triple);
            builder.intern(Term::from(fresh).as_ref())
        }
        term => builder.intern(term.as_ref()),
    }
}

/// `triple` with its blank nodes (at any depth) made fresh as in [`intern_subject`].
fn fresh_triple(request: &Request<'_>, scope: &str, triple: &Triple) -> Triple {
    let subject = match &triple.subject {
        NamedOrBlankNode::BlankNode(node) => request.fresh_blank(scope, node.as_str()).into(),
        subject => subject.clone(),
    };
    let object = match &triple.object {
        Term::BlankNode(node) => request.fresh_blank(scope, node.as_str()).into(),
        Term::Triple(inner) => fresh_triple(request, scope, inner).into(),
        object => object.clone(),
    };
    Triple::new(subject, triple.predicate.clone(), object)
}
