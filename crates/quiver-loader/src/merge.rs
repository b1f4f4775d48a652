//! Merging encoded chunks into one dictionary and id triples.
//!
//! Every chunk's distinct terms are sorted on their own (chunks in parallel), then the
//! sorted runs are merged: walking the merge assigns global ids in term order, builds the
//! front-coded dictionary and, per chunk, the table from local to global ids. Chunks are then rewritten to global ids in parallel.
//! An existing store joins as one more chunk, so adding data rebuilds a consistent store.

use std::cmp::Ordering;
use std::collections::binary_heap::{BinaryHeap, PeekMut};

use quiver_model::{Dictionary, DictionaryBuilder, Id};
use quiver_store::{EncodedGraphs, Store};
use rayon::prelude::*;

use crate::chunk::{Chunk, DEFAULT_GRAPH};
use crate::LoadError;

/// Turns an existing store back into a chunk (its terms and triples). Chunks number terms
/// with `u32`, so a store of more terms (possible with wide ids) cannot be extended yet.
pub(crate) fn store_as_chunk(store: &Store) -> Result<Chunk, LoadError> {
    if store.terms() >= u64::from(DEFAULT_GRAPH) {
        return Err(LoadError::TooManyTerms);
    }
    // Lossless: every id is below `store.terms()`, checked above.
    #[allow(clippy::unnecessary_cast)]
    let local = |id: Id| id as u32;
    let mut chunk = Chunk::new();
    store.dictionary().for_each(|_, term| {
        chunk.intern(term);
    });
    let mut add_graph = |graph: &quiver_store::GraphIndex, name: u32| {
        graph.for_each_triple(|s, p, o| {
            let p = store.predicate_term(p);
            chunk.quads.push([local(s), local(p), local(o), name]);
        });
    };
    add_graph(store.graph(), DEFAULT_GRAPH);
    for name in store.graph_names() {
        add_graph(store.named_graph(name).expect("listed graph"), local(name));
    }
    chunk.seal();
    Ok(chunk)
}

pub(crate) fn merge(mut chunks: Vec<Chunk>) -> Result<(Dictionary, EncodedGraphs), LoadError> {
    // Each chunk's terms sorted on their own (in parallel, in cache), then one k-way merge
    // of the sorted runs: sorting all chunks' terms together compared terms through two
    // indirections scattered over every chunk's arena, which was the slowest step of a load.
    let runs: Vec<SortedRun> = chunks.par_iter_mut().map(SortedRun::new).collect();
    // Global ids by rank in each run, written in order; turned into tables by local id in
    // parallel below (scattering them here would miss the cache on every term).
    let mut by_rank: Vec<Vec<Id>> = runs
        .iter()
        .map(|r| Vec::with_capacity(r.locals.len()))
        .collect();
    let mut builder = DictionaryBuilder::new();
    let mut heap: BinaryHeap<Head<'_>> = runs
        .iter()
        .enumerate()
        .filter(|(_, run)| !run.locals.is_empty())
        .map(|(index, run)| Head {
            term: run.term(0),
            run: index as u32,
            rank: 0,
        })
        .collect();
    let mut previous: Option<&[u8]> = None;
    while let Some(mut head) = heap.peek_mut() {
        let term = head.term;
        if previous != Some(term) {
            builder.push(term);
            previous = Some(term);
        }
        let id = quiver_model::term_id(builder.len() - 1).map_err(|_| LoadError::TooManyTerms)?;
        let run = &runs[head.run as usize];
        by_rank[head.run as usize].push(id);
        head.rank += 1;
        if (head.rank as usize) < run.locals.len() {
            head.term = run.term(head.rank as usize);
        } else {
            PeekMut::pop(head);
        }
    }
    drop(heap);
    let locals: Vec<Vec<u32>> = runs.into_iter().map(|run| run.locals).collect();
    let dictionary = builder.finish();

    let per_chunk: Vec<EncodedGraphs> = chunks
        .into_par_iter()
        .zip(locals.into_par_iter().zip(by_rank.into_par_iter()))
        .map(|(chunk, (locals, by_rank))| {
            let mut map: Vec<Id> = vec![0; locals.len()];
            for (&local, id) in locals.iter().zip(by_rank) {
                map[local as usize] = id;
            }
            let mut graphs = EncodedGraphs::default();
            let mut named: Vec<[Id; 4]> = Vec::new();
            for q in &chunk.quads {
                let triple = [map[q[0] as usize], map[q[1] as usize], map[q[2] as usize]];
                if q[3] == DEFAULT_GRAPH {
                    graphs.default_graph.push(triple);
                } else {
                    named.push([triple[0], triple[1], triple[2], map[q[3] as usize]]);
                }
            }
            named.sort_unstable_by_key(|q| q[3]);
            for group in named.chunk_by(|a, b| a[3] == b[3]) {
                let triples = group.iter().map(|q| [q[0], q[1], q[2]]).collect();
                graphs.named_graphs.push((group[0][3], triples));
            }
            graphs
        })
        .collect();

    let total = per_chunk.iter().map(|g| g.default_graph.len()).sum();
    let mut merged = EncodedGraphs {
        default_graph: Vec::with_capacity(total),
        named_graphs: Vec::new(),
    };
    for graphs in per_chunk {
        merged
            .default_graph
            .extend_from_slice(&graphs.default_graph);
        merged.named_graphs.extend(graphs.named_graphs);
    }
    Ok((dictionary, merged))
}

/// A chunk's distinct terms in ascending order, packed in one arena.
struct SortedRun {
    arena: Vec<u8>,
    /// End offset in `arena` of each term, by rank.
    ends: Vec<u64>,
    /// The chunk's local id of each term, by rank.
    locals: Vec<u32>,
}

impl SortedRun {
    /// Sorts a chunk's terms, taking them out of the chunk (its statements stay).
    fn new(chunk: &mut Chunk) -> Self {
        let mut locals: Vec<u32> = (0..chunk.spans.len() as u32).collect();
        locals.sort_unstable_by(|&a, &b| chunk.term(a).cmp(chunk.term(b)));
        let mut arena = Vec::with_capacity(chunk.arena.len());
        let ends = locals
            .iter()
            .map(|&local| {
                arena.extend_from_slice(chunk.term(local));
                arena.len() as u64
            })
            .collect();
        chunk.arena = Vec::new();
        chunk.spans = Vec::new();
        Self {
            arena,
            ends,
            locals,
        }
    }

    fn term(&self, rank: usize) -> &[u8] {
        let start = if rank == 0 { 0 } else { self.ends[rank - 1] };
        &self.arena[start as usize..self.ends[rank] as usize]
    }
}

/// The smallest term not yet merged of one run (ordered so the heap's top is the least).
#[derive(PartialEq, Eq)]
struct Head<'a> {
    term: &'a [u8],
    run: u32,
    rank: u32,
}

impl Ord for Head<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .term
            .cmp(self.term)
            .then_with(|| other.run.cmp(&self.run))
    }
}

impl PartialOrd for Head<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
