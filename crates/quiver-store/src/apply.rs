//! Applying a [`ChangeSet`] to a store version, giving the next version.
//!
//! The store a reader holds never changes: [`Store::apply`] returns a new store that
//! shares the old one's arrays (columns are reference-counted) and carries the changed
//! vertex records and predicate index lists in persistent patches
//! ([`crate::patch`], [`crate::graph_update`]); new terms go to the dictionary's appended
//! segment and new predicates to the end of the predicate id space, so every existing id
//! stays valid. The cost of a change set is that of the records and lists it touches, not
//! of the store.

use std::collections::BTreeMap;

use quiver_model::term::{
    decode_term, TAG_BLANK, TAG_DIRECTIONAL, TAG_IRI, TAG_LANG, TAG_SIMPLE, TAG_TRIPLE, TAG_TYPED,
};
use quiver_model::{Id, PredId};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::changes::{ApplyError, ChangeSet};
use crate::graph::GraphIndex;
use crate::graph_update::TripleChanges;
use crate::stats::PredicateStats;
use crate::store::{next_version, Store};

impl Store {
    /// The store with `changes` applied; `self` is left as it was.
    pub fn apply(&self, changes: &ChangeSet) -> Result<Store, ApplyError> {
        if self.entailment().is_some() {
            // The asserted graphs take the changes, and the entailment follows them
            // (`entailment_update.rs`).
            return self.apply_entailed(changes);
        }
        if changes.base_terms != self.terms() {
            return Err(ApplyError::WrongBase {
                expected: changes.base_terms,
                found: self.terms(),
            });
        }
        let mut next = self.clone();
        next.version = next_version();
        let looked_up = changes.looked_up_in(self);
        let malformed = first_position(&changes.new_terms, |term| decode_term(term).is_err());
        if let Some(index) = malformed {
            return Err(ApplyError::BadTerm { index });
        }
        // Terms not interned against this very version (a replayed log, a change set
        // built elsewhere) must be absent from it and distinct.
        let unchecked = &changes.new_terms[looked_up..];
        let present = first_position(unchecked, |term| self.dictionary.lookup(term).is_some());
        if let Some(index) = present {
            return Err(ApplyError::BadTerm {
                index: looked_up + index,
            });
        }
        let mut distinct = FxHashSet::default();
        distinct.reserve(unchecked.len());
        if let Some(index) = unchecked
            .iter()
            .position(|term| !distinct.insert(&term[..]))
        {
            return Err(ApplyError::BadTerm {
                index: looked_up + index,
            });
        }
        if !changes.new_terms.is_empty() {
            next.dictionary
                .append_absent_batch(&changes.new_terms)
                .map_err(|_| ApplyError::IdsExhausted)?;
        }
        next.check_ids(changes)?;
        for graph in &changes.dropped_graphs {
            next.named_graphs.retain(|(name, _)| name != graph);
        }
        let mut per_graph: BTreeMap<Option<Id>, TripleChanges> = BTreeMap::new();
        for (quads, insert) in [(&changes.deletes, false), (&changes.inserts, true)] {
            for quad in quads {
                let predicate = next.predicate_or_append(quad.predicate) as Id;
                let entry = per_graph
                    .entry(quad.graph)
                    .or_insert_with(|| TripleChanges {
                        deletes: Vec::new(),
                        inserts: Vec::new(),
                    });
                let triple = [quad.subject, predicate, quad.object];
                if insert {
                    entry.inserts.push(triple);
                } else {
                    entry.deletes.push(triple);
                }
            }
        }
        let predicates = next.predicate_count();
        next.predicate_stats
            .resize(predicates, PredicateStats::default());
        let rdf_type = next.rdf_type();
        let mut types_changed = false;
        for (graph, triples) in per_graph {
            match graph {
                None => {
                    types_changed = rdf_type.is_none()
                        || triples
                            .deletes
                            .iter()
                            .chain(&triples.inserts)
                            .any(|t| Some(t[1] as PredId) == rdf_type);
                    next.default_graph = next.default_graph.with_changes(
                        &triples,
                        predicates,
                        &mut next.predicate_stats,
                    );
                }
                Some(name) => {
                    let position = next.named_graphs.binary_search_by_key(&name, |(g, _)| *g);
                    if position.is_err() && triples.inserts.is_empty() {
                        continue;
                    }
                    // Named graphs keep no statistics of their own: the planner's are the
                    // default graph's.
                    let mut scratch = vec![PredicateStats::default(); predicates];
                    match position {
                        Ok(i) => {
                            let graph = &next.named_graphs[i].1;
                            next.named_graphs[i].1 =
                                graph.with_changes(&triples, predicates, &mut scratch);
                        }
                        Err(i) => {
                            let graph = GraphIndex::empty_sparse().with_changes(
                                &triples,
                                predicates,
                                &mut scratch,
                            );
                            next.named_graphs.insert(i, (name, graph));
                        }
                    }
                }
            }
        }
        for &graph in &changes.created_graphs {
            if let Err(i) = next.named_graphs.binary_search_by_key(&graph, |(g, _)| *g) {
                next.named_graphs
                    .insert(i, (graph, GraphIndex::empty_sparse()));
            }
        }
        if types_changed {
            next.refresh_classes();
        }
        Ok(next)
    }

    /// Every id of `changes` is a term of the store (after its new terms), and subjects,
    /// predicates and graph names are not literals.
    fn check_ids(&self, changes: &ChangeSet) -> Result<(), ApplyError> {
        let terms = self.terms();
        // One decoding buffer for every id of the change set.
        let mut bytes = Vec::new();
        // The kind of a term is its encoding's tag. The change set's new terms were
        // checked whole already (`decode_term`); those of the sorted part when the store
        // was opened.
        let mut tag_of = |id: Id| -> Option<u8> {
            match (id as u64).checked_sub(changes.base_terms) {
                Some(new) => changes.new_terms.get(new as usize)?.first().copied(),
                None => {
                    if !self.dictionary.term_into(id, &mut bytes) {
                        return None;
                    }
                    bytes.first().copied()
                }
            }
        };
        // Quads come sorted by subject and most share their predicate: an id just
        // checked is not checked again.
        let mut last_resource = None;
        let mut resource = |id: Id| -> Result<(), ApplyError> {
            if last_resource == Some(id) {
                return Ok(());
            }
            if id as u64 >= terms {
                return Err(ApplyError::UnknownId(id));
            }
            match tag_of(id) {
                Some(TAG_BLANK | TAG_IRI) => {}
                Some(TAG_SIMPLE | TAG_LANG | TAG_TYPED | TAG_DIRECTIONAL | TAG_TRIPLE) => {
                    return Err(ApplyError::NotAResource(id))
                }
                _ => return Err(ApplyError::UnknownId(id)),
            }
            last_resource = Some(id);
            Ok(())
        };
        let mut last_predicate = None;
        for quad in changes.inserts.iter().chain(&changes.deletes) {
            resource(quad.subject)?;
            if last_predicate != Some(quad.predicate) {
                resource(quad.predicate)?;
                last_predicate = Some(quad.predicate);
            }
            if quad.object as u64 >= terms {
                return Err(ApplyError::UnknownId(quad.object));
            }
            if let Some(graph) = quad.graph {
                resource(graph)?;
            }
        }
        for &graph in changes.created_graphs.iter().chain(&changes.dropped_graphs) {
            resource(graph)?;
        }
        Ok(())
    }

    /// The predicate id of term `term`, appending it to the predicate id space if new.
    pub(crate) fn predicate_or_append(&mut self, term: Id) -> PredId {
        match self.predicate_of_term(term) {
            Some(p) => p,
            None => {
                self.appended_predicates.push(term);
                (self.predicate_count() - 1) as PredId
            }
        }
    }
}

/// Below this many terms a change set's terms are checked on the writer's thread, leaving
/// the worker threads to the queries.
const PARALLEL_TERMS: usize = 8192;

/// The position of the first term that `test` accepts, in parallel for many terms.
fn first_position(
    terms: &[std::sync::Arc<[u8]>],
    test: impl Fn(&[u8]) -> bool + Sync,
) -> Option<usize> {
    if terms.len() < PARALLEL_TERMS {
        return terms.iter().position(|term| test(term));
    }
    terms
        .par_iter()
        .with_min_len(PARALLEL_TERMS / 4)
        .position_first(|term| test(term))
}
