//! Merging encoded chunks into one dictionary and id triples.
//!
//! Every chunk's distinct terms are sorted on their own when it is sealed (chunks in
//! parallel), then the sorted runs are merged, on every core: the merge assigns global ids
//! in term order, builds the front-coded dictionary and, per chunk, the table from local to
//! global ids. Chunks are then rewritten to global ids in parallel, straight into one array.
//! An existing store joins as one more chunk, so adding data rebuilds a consistent store.

use quiver_model::dictionary::{merge_into_dictionary, SortedRun};
use quiver_model::{Dictionary, Id};
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
    // Sealed chunks hold their terms sorted (sorted on the parser threads, in cache), so
    // one k-way merge of the chunks' runs assigns global ids in term order: sorting all
    // chunks' terms together compared terms scattered over every chunk, the slowest step
    // of a load. The merge runs on every core, each thread over its own range of terms.
    chunks.par_iter_mut().for_each(Chunk::seal);
    // Each run is read once and given back behind the merge, as the dictionary grows.
    let mut runs: Vec<&mut SortedRun> = chunks
        .iter_mut()
        .map(|c| c.sorted_run().expect("sealed above"))
        .collect();
    // Global ids by local id (a sealed chunk's local id is its term's rank).
    let (dictionary, maps) =
        merge_into_dictionary(&mut runs).map_err(|_| LoadError::TooManyTerms)?;
    drop(runs);
    // The chunks' terms are in the dictionary now: only their statements are needed.
    chunks.iter_mut().for_each(Chunk::release_terms);
    quiver_model::memory::trim_heap();

    // The default graph's triples go straight to their place in one array (each chunk's
    // share counted first), so the id triples never exist twice; each chunk's statements
    // are freed as soon as it is rewritten.
    let shares: Vec<usize> = chunks
        .par_iter()
        .map(|c| c.quads.iter().filter(|q| q[3] == DEFAULT_GRAPH).count())
        .collect();
    let mut default_graph: Vec<[Id; 3]> = vec![[0; 3]; shares.iter().sum()];
    let mut places = Vec::with_capacity(shares.len());
    let mut rest = default_graph.as_mut_slice();
    for &share in &shares {
        let (place, tail) = rest.split_at_mut(share);
        places.push(place);
        rest = tail;
    }
    let named_graphs: Vec<(Id, Vec<[Id; 3]>)> = chunks
        .into_par_iter()
        .zip(maps.into_par_iter())
        .zip(places.into_par_iter())
        .flat_map_iter(|((mut chunk, map), place)| {
            let mut named: Vec<[Id; 4]> = Vec::new();
            let mut next = place.iter_mut();
            for q in &chunk.quads {
                let triple = [map[q[0] as usize], map[q[1] as usize], map[q[2] as usize]];
                if q[3] == DEFAULT_GRAPH {
                    *next.next().expect("counted above") = triple;
                } else {
                    named.push([triple[0], triple[1], triple[2], map[q[3] as usize]]);
                }
            }
            // The statements' pages go back now: freed, they would stay with the allocator
            // while the id triples fill beside them.
            quiver_model::memory::release_pages(&mut chunk.quads);
            drop(chunk);
            named.sort_unstable_by_key(|q| q[3]);
            let graphs: Vec<(Id, Vec<[Id; 3]>)> = named
                .chunk_by(|a, b| a[3] == b[3])
                .map(|group| {
                    (
                        group[0][3],
                        group.iter().map(|q| [q[0], q[1], q[2]]).collect(),
                    )
                })
                .collect();
            graphs
        })
        .collect();
    let merged = EncodedGraphs {
        default_graph,
        named_graphs,
    };
    Ok((dictionary, merged))
}
