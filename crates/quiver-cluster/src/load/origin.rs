//! The origins' part of a load: their statements as OUT and IN edges for their owners, a
//! chunk per activation, and the predicates and graph names they use.

use std::collections::{BTreeMap, BTreeSet};

use quiver_loader::{Chunk, DEFAULT_GRAPH};
use quiver_model::Id;
use quiver_store::partition::owner;
use quiver_store::store::RDF_TYPE;

use super::message::*;

/// An origin takes its terms' ids and the owners' counts.
pub(super) fn take_ids(message: LoadMessage, state: &Shared, counts: &mut [u64]) {
    let mut state = state.borrow_mut();
    match message {
        LoadMessage::Ids { refs, ids, .. } => {
            for (reference, id) in refs.into_iter().zip(ids) {
                let (chunk, local) = ((reference >> 32) as usize, reference as u32 as usize);
                if let Some(slot) = state.ids.get_mut(chunk).and_then(|c| c.get_mut(local)) {
                    *slot = id;
                }
            }
        }
        LoadMessage::Count {
            from, terms, load, ..
        } => {
            if let Some(count) = counts.get_mut(from as usize) {
                *count = terms;
            }
            if from == 0 {
                state.load = load;
            }
        }
        LoadMessage::Failed { message, .. } => {
            state.failure.get_or_insert(message);
        }
        _ => {}
    }
}

/// An origin's statements as edges for their owners, one chunk per activation (so the
/// builders take in each chunk's edges before the next is made), then its vocabulary to
/// every worker.
#[derive(Default)]
pub(super) struct EdgeSender {
    started: bool,
    next: usize,
    chunks: Vec<Chunk>,
    ids: Vec<Vec<Id>>,
    vocabulary: BTreeMap<Id, String>,
    rdf_type: Option<Id>,
    graphs: BTreeSet<Id>,
    id_bound: u64,
}

impl EdgeSender {
    /// The number of the chunk the next step sends (one past the last for the vocabulary).
    pub(super) fn next_chunk(&self) -> usize {
        self.next
    }

    /// The next messages, and whether they are the last.
    pub(super) fn step(
        &mut self,
        index: u32,
        workers: u32,
        counts: &[u64],
        state: &Shared,
    ) -> (Vec<LoadMessage>, bool) {
        if !self.started {
            self.started = true;
            let mut state = state.borrow_mut();
            if let Some(message) = state.failure.clone() {
                return (vec![LoadMessage::Failed { to: index, message }], true);
            }
            let most = counts.iter().copied().max().unwrap_or(0);
            self.id_bound = most * u64::from(workers);
            self.chunks = std::mem::take(&mut state.chunks);
            // The owners' answers are taken in and freed: give them back before the edges.
            quiver_model::memory::trim_heap();
            self.ids = std::mem::take(&mut state.ids);
            for (&reference, iri) in &std::mem::take(&mut state.predicates) {
                let (chunk, local) = ((reference >> 32) as usize, reference as u32 as usize);
                self.vocabulary.insert(self.ids[chunk][local], iri.clone());
            }
            self.rdf_type = self
                .vocabulary
                .iter()
                .find(|(_, iri)| iri.as_str() == RDF_TYPE)
                .map(|(&id, _)| id);
        }
        if let Some(chunk) = self.chunks.get_mut(self.next) {
            let mut quads = std::mem::take(&mut chunk.quads);
            let ids = std::mem::take(&mut self.ids[self.next]);
            self.next += 1;
            let messages = self.edges(&quads, &ids, workers);
            // Given back now: freed, the statements' pages would stay with the allocator
            // while the edges this process owns pile up beside them.
            quiver_model::memory::release_pages(&mut quads);
            return (messages, false);
        }
        let predicates: Vec<(Id, String)> =
            std::mem::take(&mut self.vocabulary).into_iter().collect();
        let graphs: Vec<Id> = std::mem::take(&mut self.graphs).into_iter().collect();
        let messages = (0..workers)
            .map(|to| LoadMessage::Vocabulary {
                to,
                predicates: predicates.clone(),
                graphs: graphs.clone(),
                id_bound: (to == index).then_some(self.id_bound),
            })
            .collect();
        (messages, true)
    }

    /// One chunk's statements as OUT and IN edges, batched by owner.
    pub(super) fn edges(
        &mut self,
        quads: &[[u32; 4]],
        ids: &[Id],
        workers: u32,
    ) -> Vec<LoadMessage> {
        let mut batches: Vec<QuadEdges> = (0..workers).map(|_| Default::default()).collect();
        let mut messages = Vec::new();
        let flush = |to: u32, batches: &mut [QuadEdges], messages: &mut Vec<LoadMessage>, all| {
            let (out, inn) = &batches[to as usize];
            let size = out.len() + inn.len();
            if (all && size > 0) || size >= EDGES {
                let (out, inn) = std::mem::take(&mut batches[to as usize]);
                messages.push(LoadMessage::Edges { to, out, inn });
            }
        };
        for &[s, p, o, g] in quads {
            let (s, p, o) = (ids[s as usize], ids[p as usize], ids[o as usize]);
            let g = if g == DEFAULT_GRAPH {
                DEFAULT
            } else {
                let g = ids[g as usize];
                self.graphs.insert(g);
                g
            };
            let at = owner(s, workers);
            batches[at as usize].0.push([s, p, o, g]);
            flush(at, &mut batches, &mut messages, false);
            let keeper = if Some(p) == self.rdf_type { s } else { o };
            let at = owner(keeper, workers);
            batches[at as usize].1.push([o, p, s, g]);
            flush(at, &mut batches, &mut messages, false);
        }
        for to in 0..workers {
            flush(to, &mut batches, &mut messages, true);
        }
        messages
    }
}
