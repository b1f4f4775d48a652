//! Merging encoded chunks into one dictionary and id triples.
//!
//! Every chunk's distinct terms are sorted together (in parallel); walking the sorted list
//! assigns global ids in term order, builds the front-coded dictionary and, per chunk, the
//! table from local to global ids. Chunks are then rewritten to global ids in parallel.
//! An existing store joins as one more chunk, so adding data rebuilds a consistent store.

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

pub(crate) fn merge(chunks: Vec<Chunk>) -> Result<(Dictionary, EncodedGraphs), LoadError> {
    let mut entries: Vec<(u32, u32)> = chunks
        .iter()
        .enumerate()
        .flat_map(|(c, chunk)| (0..chunk.spans.len() as u32).map(move |local| (c as u32, local)))
        .collect();
    entries.par_sort_unstable_by(|a, b| {
        chunks[a.0 as usize]
            .term(a.1)
            .cmp(chunks[b.0 as usize].term(b.1))
    });

    let mut maps: Vec<Vec<Id>> = chunks.iter().map(|c| vec![0; c.spans.len()]).collect();
    let mut builder = DictionaryBuilder::new();
    let mut previous: Option<&[u8]> = None;
    for &(c, local) in &entries {
        let term = chunks[c as usize].term(local);
        if previous != Some(term) {
            builder.push(term);
            previous = Some(term);
        }
        let id = Id::try_from(builder.len() - 1).map_err(|_| LoadError::TooManyTerms)?;
        maps[c as usize][local as usize] = id;
    }
    drop(entries);
    let dictionary = builder.finish();

    let per_chunk: Vec<EncodedGraphs> = chunks
        .into_par_iter()
        .zip(maps.into_par_iter())
        .map(|(chunk, map)| {
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
