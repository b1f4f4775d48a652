//! Folding a store version's patches into fresh arrays: what a checkpoint saves.
//!
//! A version after updates reads its changed records from persistent patches
//! ([`crate::patch`]). [`Store::compacted`] writes every graph out again in vertex order,
//! copying each record as it is visible (base or patch) verbatim, and recomputes the
//! predicate index arrays and the class statistics. Ids do not change, so the log of
//! commits made after the compacted version still applies to it. Predicates added by
//! updates are not in term order; a version that has some is rebuilt from its quads
//! instead, which sorts the predicate id space again (predicate ids are internal to a
//! store version; change sets name predicates by term id).

use quiver_model::{Id, PredId};
use rayon::prelude::*;

use crate::adjacency::{Adjacency, AdjacencyBuilder};
use crate::graph::GraphIndex;
use crate::store::{next_version, EncodedGraphs, Store};

impl Store {
    /// Whether this version has no patches: its arrays are all there is.
    pub fn is_compact(&self) -> bool {
        let covered = |adjacency: &Adjacency| {
            adjacency.vertices.is_some()
                || adjacency.offsets.len().saturating_sub(1) as u64 == self.terms()
        };
        let compact =
            |graph: &GraphIndex| covered(&graph.out) && covered(&graph.inn) && !graph.is_patched();
        // A predicate index is sized for all the store's predicates, or, in a named graph,
        // for those it has, as a snapshot stores them.
        let sized =
            |graph: &GraphIndex| graph.predicate_offsets.len() == 2 * self.predicate_count() + 1;
        self.appended_predicates.is_empty()
            && compact(&self.default_graph)
            && sized(&self.default_graph)
            && self
                .named_graphs
                .iter()
                .all(|(_, g)| !g.is_patched() && (g.predicate_ids.is_some() || sized(g)))
            && self
                .entailment()
                .is_none_or(|layer| compact(&layer.entailed.default_graph))
    }

    /// This version with its patches folded into fresh arrays (the same triples and ids).
    pub fn compacted(&self) -> Store {
        if !self.appended_predicates.is_empty() {
            // The entailment is computed again over the rebuilt asserted graphs.
            return match self.entailment() {
                Some(layer) => {
                    self.without_entailment()
                        .rebuilt()
                        .reasoned(layer.profile(), &mut |_| {})
                        .0
                }
                None => self.rebuilt(),
            };
        }
        let predicates = self.predicate_count();
        let mut next = self.clone();
        next.version = next_version();
        let (default_graph, named_graphs) = rayon::join(
            || {
                self.default_graph
                    .compacted(Some(self.terms()), Some(predicates))
            },
            || {
                self.named_graphs
                    .par_iter()
                    .map(|(name, graph)| (*name, graph.compacted(None, None)))
                    .collect()
            },
        );
        next.default_graph = default_graph;
        next.named_graphs = named_graphs;
        next.compute_classes();
        if let Some(layer) = self.entailment() {
            // The entailed graph folded likewise, with its catalog and statistics.
            let mut view = next.clone();
            view.default_graph = layer
                .entailed
                .default_graph
                .compacted(Some(self.terms()), Some(predicates));
            view.compute_classes();
            next.set_entailment(
                layer.profile(),
                layer.derived(),
                Some(crate::entailment::Layer::of(&view)),
            );
        }
        next
    }

    /// The store built again from its quads, with the same dictionary.
    fn rebuilt(&self) -> Store {
        let mut input = EncodedGraphs::default();
        for (name, _) in &self.named_graphs {
            input.named_graphs.push((*name, Vec::new()));
        }
        let mut named: Vec<Vec<[Id; 3]>> = vec![Vec::new(); self.named_graphs.len()];
        let mut cursor = 0;
        self.for_each_quad(|quad| {
            let triple = [quad.subject, quad.predicate, quad.object];
            match quad.graph {
                None => input.default_graph.push(triple),
                Some(name) => {
                    while self.named_graphs[cursor].0 != name {
                        cursor += 1;
                    }
                    named[cursor].push(triple);
                }
            }
        });
        for (slot, triples) in input.named_graphs.iter_mut().zip(named) {
            slot.1 = triples;
        }
        Store::build(self.dictionary.clone(), input, self.info.clone())
    }
}

impl GraphIndex {
    /// The index with its patches folded in; `dense`: the vertex count of a dense map.
    /// `predicates`: `Some(n)`, a predicate index over the store's `n` predicates; `None`,
    /// one over the graph's own (a named graph, see [`GraphIndex::predicate_ids`]),
    /// whatever it was before: a store of an earlier format sized every named graph's
    /// predicate index for all predicates.
    fn compacted(&self, dense: Option<u64>, predicates: Option<usize>) -> GraphIndex {
        let (out, inn) = rayon::join(
            || compact_adjacency(&self.out, dense),
            || compact_adjacency(&self.inn, dense),
        );
        let listed: Vec<PredId> = match predicates {
            Some(n) => (0..n as PredId).collect(),
            None => self.predicates_with_lists(),
        };
        let (mut offsets, mut members) = (vec![0u64], Vec::new());
        for &p in &listed {
            for list in [self.predicate_subjects(p), self.predicate_objects(p)] {
                members.extend_from_slice(list);
                offsets.push(members.len() as u64);
            }
        }
        GraphIndex {
            out,
            inn,
            predicate_offsets: offsets.into(),
            predicate_members: members.into(),
            predicate_ids: predicates.is_none().then(|| listed.into()),
            triples: self.triples,
            predicate_patch: None,
        }
    }

    /// The predicates with a subject or an object in the predicate index, in its arrays or
    /// in its patch, ascending.
    fn predicates_with_lists(&self) -> Vec<PredId> {
        let mut candidates: Vec<PredId> = match &self.predicate_ids {
            Some(ids) => ids.to_vec(),
            None => (0..self.predicates() as PredId).collect(),
        };
        if let Some(patch) = &self.predicate_patch {
            candidates.extend(patch.lists.keys().map(|&slot| (slot / 2) as PredId));
        }
        candidates.sort_unstable();
        candidates.dedup();
        candidates.retain(|&p| {
            !self.predicate_subjects(p).is_empty() || !self.predicate_objects(p).is_empty()
        });
        candidates
    }
}

fn compact_adjacency(adjacency: &Adjacency, dense: Option<u64>) -> Adjacency {
    let mut builder = AdjacencyBuilder::new(dense, adjacency.words.len());
    adjacency.for_each_record(|vertex, record| builder.push_record(vertex, record.words()));
    builder.finish()
}
