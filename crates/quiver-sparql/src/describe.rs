//! DESCRIBE: what the store says about the resources a query found.
//!
//! SPARQL leaves the description to the service; Quiver returns each resource's
//! Concise Bounded Description over the query's default graph: every triple with the
//! resource as subject, and recursively the same for every blank node reached as an
//! object (a blank node is only identified by its statements, so they belong to the
//! description). Literals describe nothing; terms the store lacks have no triples.
//!
//! The descriptions are read a frontier at a time (the resources, then the blank nodes
//! they reach, ...), one request of edges each, so that a partitioned store answers each
//! frontier in one round.

use oxrdf::{NamedOrBlankNode, Term, Triple};
use quiver_model::{DecodedTerm, Id};
use quiver_store::Direction;
use rustc_hash::FxHashSet;

use crate::error::QueryError;
use crate::exec::edges::{EdgeSource, GraphEdges, PartitionedEdges};
use crate::exec::Evaluator;
use crate::table::UNBOUND;

/// The descriptions of `resources` (ids of a result; repeats and UNBOUND allowed); fails
/// past `max_results` triples.
pub fn describe(
    evaluator: &Evaluator<'_>,
    resources: impl Iterator<Item = Id>,
    max_results: Option<usize>,
) -> Result<Vec<Triple>, QueryError> {
    let store = evaluator.store;
    let graph = evaluator.dataset.default;
    match &evaluator.partitions {
        Some(partitions) => {
            let source = PartitionedEdges {
                partitions: partitions.as_ref(),
                store,
                graph,
                merged: &evaluator.dataset.merged_names,
                state: evaluator.state,
            };
            describe_from(evaluator, &source, resources, max_results)
        }
        None => {
            let source = GraphEdges(evaluator.dataset.index(store, graph));
            describe_from(evaluator, &source, resources, max_results)
        }
    }
}

fn describe_from(
    evaluator: &Evaluator<'_>,
    source: &dyn EdgeSource,
    resources: impl Iterator<Item = Id>,
    max_results: Option<usize>,
) -> Result<Vec<Triple>, QueryError> {
    let store = evaluator.store;
    let ctx = evaluator.ctx();
    let mut memory = ctx.reservation();
    let mut visited: FxHashSet<Id> = FxHashSet::default();
    let mut frontier: Vec<Id> = resources
        .filter(|&id| id != UNBOUND && (id as u64) < store.terms())
        .collect();
    let mut triples = Vec::new();
    memory.try_grow(frontier.len() * crate::memory::ID_BYTES)?;
    while !frontier.is_empty() {
        ctx.check()?;
        frontier.retain(|&id| visited.insert(id));
        let subjects: Vec<(Id, NamedOrBlankNode)> = frontier
            .iter()
            .filter_map(|&id| Some((id, store.term(id).and_then(subject_of)?)))
            .collect();
        let starts: Vec<Id> = subjects.iter().map(|&(id, _)| id).collect();
        let edges = source.edges(&starts, None, Direction::Out)?;
        let mut next = Vec::new();
        for i in 0..edges.len() {
            ctx.tick(i)?;
            let Some(Term::NamedNode(predicate)) =
                store.term(store.predicate_term(edges.predicate[i]))
            else {
                continue;
            };
            let object = edges.end[i];
            if is_blank(evaluator, object) && !visited.contains(&object) {
                next.push(object);
            }
            if let Some(object) = store.term(object) {
                let subject = subjects[edges.start[i] as usize].1.clone();
                let triple = Triple::new(subject, predicate, object);
                count_triple(&mut memory, &triple, triples.len() + 1, max_results)?;
                triples.push(triple);
            }
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
    }
    Ok(triples)
}

fn subject_of(term: Term) -> Option<NamedOrBlankNode> {
    match term {
        Term::NamedNode(n) => Some(n.into()),
        Term::BlankNode(b) => Some(b.into()),
        _ => None,
    }
}

fn is_blank(evaluator: &Evaluator<'_>, id: Id) -> bool {
    evaluator
        .store
        .with_term(id, |term| matches!(term, Some(DecodedTerm::Blank(_))))
}

/// Bytes charged per triple of a CONSTRUCT or DESCRIBE result (three terms and the set
/// entry that removes repeats), besides the terms' text.
pub(crate) const TRIPLE_BYTES: usize = 2 * std::mem::size_of::<Triple>();

/// Charges one triple of a graph result and fails past the result cap.
pub(crate) fn count_triple(
    memory: &mut crate::memory::Reservation<'_>,
    triple: &Triple,
    count: usize,
    max_results: Option<usize>,
) -> Result<(), QueryError> {
    if let Some(cap) = max_results {
        if count > cap {
            return Err(QueryError::TooManyResults(cap));
        }
    }
    memory.try_grow(TRIPLE_BYTES + 2 * triple.to_string().len())
}
