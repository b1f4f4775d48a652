//! Merging encoded chunks into one dictionary and id triples.
//!
//! Every chunk's distinct terms are sorted on their own when it is sealed (chunks in
//! parallel), then the sorted runs are merged, on every core: the merge assigns global ids
//! in term order, builds the front-coded dictionary and, per chunk, the table from local to
//! global ids. Chunks are then rewritten to global ids in parallel, straight into one array.
//!
//! A load on top of an existing store rebuilds a consistent store from the old and the new.
//! The store's dictionary is already a sorted run (a term's id is its rank), so it joins the
//! merge as it is, with the few terms updates appended after it as a second run; its
//! triples are read from its index by stretches of subjects on every core and rewritten to
//! the new ids in the same array as the chunks'. Nothing of it is interned, sorted or held
//! as statements, and the pages of a store mapped from its snapshot are given back as they
//! are read, so that it is not resident beside the store being built. Its triples come out
//! in order, and stay in order in the new ids (the merged dictionary keeps the old terms'
//! order): when the new triples are few beside them, the build merges the new ones in
//! rather than sorting all, and reads the store's IN records again for the order of
//! objects (see `quiver-store/src/sorted_tail.rs`).

use quiver_model::dictionary::{merge_into_dictionary, SortedRun};
use quiver_model::{Dictionary, DictionaryBuilder, Id, PredId};
use quiver_store::graph::VertexStretch;
use quiver_store::{EncodedGraphs, Presorted, Store};
use rayon::prelude::*;

use crate::chunk::{Chunk, DEFAULT_GRAPH};
use crate::id_map::{CompactIdMap, IdMap};
use crate::LoadError;

/// Stretches of a store's vertices read per thread when its triples are rewritten: many
/// and short, as each gives its mapped pages back once read, so that about a stretch per
/// thread is resident at a time (LUBM-1000's IN records, 1 GB, in stretches of ~8 MB on 2
/// threads).
const STRETCHES_PER_THREAD: usize = 64;

/// A load on top of a store merges its new triples into the store's, in order already,
/// rather than sorting all, when they are at most this share of all (1 in 16).
const PRESORTED_SHARE: usize = 16;

/// A store a load adds to, as the merge takes it in.
struct Existing<'a> {
    store: &'a Store,
    /// The dictionary's sorted part (ids below `base`).
    sorted: SortedRun,
    base: u64,
    /// The terms updates appended after the sorted part, sorted.
    appended: SortedRun,
    /// Rank in `appended` of appended term `i` (id `base + i`).
    appended_ranks: Vec<u64>,
}

impl<'a> Existing<'a> {
    fn new(store: &'a Store) -> Self {
        let dictionary = store.dictionary();
        let sorted = SortedRun::of_dictionary(dictionary);
        let mut appended: Vec<(&[u8], usize)> = dictionary.appended().zip(0..).collect();
        appended.sort_unstable();
        // Appended terms are distinct (a dictionary refuses a term it holds), so their
        // ranks are their places once sorted.
        let mut builder = DictionaryBuilder::new();
        let mut appended_ranks = vec![0; appended.len()];
        for (rank, &(term, index)) in appended.iter().enumerate() {
            builder.push(term);
            appended_ranks[index] = rank as u64;
        }
        Existing {
            store,
            base: sorted.len(),
            sorted,
            appended: builder.finish_run(),
            appended_ranks,
        }
    }
}

/// Merges the chunks (and `existing`, the store they are added to) into one dictionary
/// and their triples in its ids; with an existing store, which of the default graph's
/// triples are its own, in order (ids keep the old terms' order), and how to read them
/// again in the order of objects, so that the build merges them rather than sorting them.
pub(crate) fn merge<'a>(
    mut chunks: Vec<Chunk>,
    existing: Option<&'a Store>,
) -> Result<(Dictionary, EncodedGraphs, Option<Presorted<'a>>), LoadError> {
    // Sealed chunks hold their terms sorted (sorted on the parser threads, in cache), so
    // one k-way merge of the chunks' runs assigns global ids in term order: sorting all
    // chunks' terms together compared terms scattered over every chunk, the slowest step
    // of a load. The merge runs on every core, each thread over its own range of terms.
    chunks.par_iter_mut().for_each(Chunk::seal);
    let mut existing = existing.map(Existing::new);
    if let Some(existing) = &existing {
        // Its terms are copied into runs now; its triples are read again below.
        existing.store.release_mapped_pages();
    }
    // Each run is read once and given back behind the merge, as the dictionary grows.
    let mut runs: Vec<&mut SortedRun> = chunks
        .iter_mut()
        .map(|c| c.sorted_run().expect("sealed above"))
        .collect();
    if let Some(existing) = &mut existing {
        runs.push(&mut existing.sorted);
        runs.push(&mut existing.appended);
    }
    // Global ids by local id (a sealed chunk's local id is its term's rank).
    let (dictionary, mut maps) =
        quiver_model::phases::time("merge the dictionary", || merge_into_dictionary(&mut runs))
            .map_err(|_| LoadError::TooManyTerms)?;
    drop(runs);
    let existing = existing.map(|existing| {
        let appended = maps.pop().expect("the appended terms' run was merged");
        let sorted = maps.pop().expect("the sorted terms' run was merged");
        let map = IdMap::new(sorted, appended, existing.base, existing.appended_ranks);
        (existing.store, map)
    });
    // The chunks' terms are in the dictionary now: only their statements are needed.
    chunks.iter_mut().for_each(Chunk::release_terms);
    quiver_model::memory::trim_heap();

    let (merged, presorted) =
        quiver_model::phases::time("statements to ids", || to_ids(chunks, maps, existing));
    Ok((dictionary, merged, presorted))
}

/// The chunks' statements in the merged ids (`maps[i]`: chunk `i`'s global ids by local
/// id), with the existing store's triples rewritten by `existing`'s map; which of the
/// default graph's triples are the store's, and how to read them again in the order of
/// objects, when the build should merge them rather than sort them.
fn to_ids<'a>(
    chunks: Vec<Chunk>,
    maps: Vec<Vec<Id>>,
    existing: Option<(&'a Store, IdMap)>,
) -> (EncodedGraphs, Option<Presorted<'a>>) {
    // The default graph's triples go straight to their place in one array (each chunk's
    // and each stretch of the existing store's share counted first), so the id triples
    // never exist twice; each chunk's statements are freed as soon as it is rewritten.
    let shares: Vec<usize> = chunks
        .par_iter()
        .map(|c| c.quads.iter().filter(|q| q[3] == DEFAULT_GRAPH).count())
        .collect();
    let stretches = existing.as_ref().map_or_else(Vec::new, |(store, _)| {
        let parts = rayon::current_num_threads() * STRETCHES_PER_THREAD;
        store.graph().subject_stretches(parts)
    });
    let stretch_shares: Vec<usize> = stretches.par_iter().map(count_and_release).collect();
    let total = shares.iter().chain(&stretch_shares).sum();
    let mut default_graph: Vec<[Id; 3]> = vec![[0; 3]; total];
    let all_shares: Vec<usize> = shares.iter().chain(&stretch_shares).copied().collect();
    let mut places = cut(&mut default_graph, &all_shares);
    let stretch_places = places.split_off(shares.len());
    let chunk_triples: usize = shares.iter().sum();
    let mut named_graphs: Vec<(Id, Vec<[Id; 3]>)> = chunks
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
    let mut presorted = None;
    if let Some((store, map)) = existing {
        let predicates: Vec<Id> = (0..store.predicate_count())
            .map(|p| map.get(store.predicate_term(p as PredId)))
            .collect();
        let rewrite = |s: Id, p: PredId, o: Id| [map.get(s), predicates[p as usize], map.get(o)];
        rewrite_stretches(&stretches, stretch_places, rewrite);
        let names: Vec<Id> = store.graph_names().collect();
        named_graphs.par_extend(names.into_par_iter().filter_map(|name| {
            let graph = store.named_graph(name).expect("a listed graph");
            let mut triples = Vec::with_capacity(graph.triples() as usize);
            graph.for_each_triple(|s, p, o| triples.push(rewrite(s, p, o)));
            // A graph without triples is not kept, as a load of its triples would not.
            (!triples.is_empty()).then(|| (map.get(name), triples))
        }));
        store.release_mapped_pages();
        // The build copies the new triples aside to merge them: worth it for a few beside
        // many (a file added to a large store), not where they would add to its peak.
        if chunk_triples.saturating_mul(PRESORTED_SHARE) <= default_graph.len() {
            // Held while the new store is built (its peak): compacted.
            let map = map.compact();
            presorted = Some(Presorted {
                start: chunk_triples,
                refill: Box::new(move |place: &mut [[Id; 3]]| {
                    refill_by_objects(store, &map, &predicates, place)
                }),
            });
        }
    }
    let merged = EncodedGraphs {
        default_graph,
        named_graphs,
    };
    (merged, presorted)
}

/// Writes the default graph's triples of `store` into `place`, of exactly their number,
/// as `[object, predicate, subject]` in the merged ids (`map`; `predicates`: the merged id
/// of each predicate's term) and in the order of the store's IN records; then gives the
/// store's mapped pages back again.
fn refill_by_objects(store: &Store, map: &CompactIdMap, predicates: &[Id], place: &mut [[Id; 3]]) {
    let parts = rayon::current_num_threads() * STRETCHES_PER_THREAD;
    let stretches = store.graph().object_stretches(parts);
    let shares: Vec<usize> = stretches.par_iter().map(count_and_release).collect();
    assert_eq!(
        shares.iter().sum::<usize>(),
        place.len(),
        "a store's triples fill their place"
    );
    let places = cut(place, &shares);
    let rewrite = |o: Id, p: PredId, s: Id| [map.get(o), predicates[p as usize], map.get(s)];
    rewrite_stretches(&stretches, places, rewrite);
    store.release_mapped_pages();
}

/// `place` cut into consecutive places of `shares` triples each (they fit in it).
fn cut<'p>(mut place: &'p mut [[Id; 3]], shares: &[usize]) -> Vec<&'p mut [[Id; 3]]> {
    let mut places = Vec::with_capacity(shares.len());
    for &share in shares {
        let (first, rest) = place.split_at_mut(share);
        places.push(first);
        place = rest;
    }
    places
}

/// Writes each stretch's triples as `rewrite` gives them into its place, of their number,
/// on every core; each stretch's mapped pages are given back once read.
fn rewrite_stretches(
    stretches: &[VertexStretch<'_>],
    places: Vec<&mut [[Id; 3]]>,
    rewrite: impl Fn(Id, PredId, Id) -> [Id; 3] + Sync,
) {
    stretches
        .par_iter()
        .zip(places.into_par_iter())
        .for_each(|(stretch, place)| {
            let mut next = place.iter_mut();
            stretch.for_each_triple(|v, p, n| {
                *next.next().expect("counted above") = rewrite(v, p, n);
            });
            stretch.release_mapped_pages();
        });
}

/// A stretch's triples, counted; its pages given back (read again to rewrite them), so that
/// the store read is not resident beside what the load builds.
fn count_and_release(stretch: &VertexStretch<'_>) -> usize {
    let triples = stretch.triples();
    stretch.release_mapped_pages();
    triples
}
