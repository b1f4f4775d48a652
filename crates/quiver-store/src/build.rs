//! Building a [`GraphIndex`] from id triples, in parallel.
//!
//! Triples are sorted by (subject, predicate, object) to lay out OUT records and the
//! subjects of each predicate, then re-sorted by (object, predicate, subject) for IN
//! records and the objects of each predicate. Sorting uses rayon's parallel sort; the
//! record layout is one linear pass per direction, into arrays of the exact size counted
//! just before. The peak of a bulk load is here (the id triples, both directions and the
//! dictionary at once), so the re-sorted triples are given back page by page as the second
//! direction consumes them.

use quiver_model::{ColumnBuffer, Id, PredId};
use rayon::prelude::*;

use crate::graph::GraphIndex;
use crate::stats::PredicateStats;

/// Builds the index of one graph from `triples` as `[subject, predicate, object]`
/// (duplicates allowed; they are removed). `vertices`: `Some(n)` gives a dense vertex map
/// over `0..n` (the default graph), `None` a sparse one (named graphs). `predicates` is the
/// size of the predicate id space. Returns the index and per-predicate statistics.
pub fn build_graph(
    mut triples: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
) -> (GraphIndex, Vec<PredicateStats>) {
    let mut stats = vec![PredicateStats::default(); predicates];

    triples.par_sort_unstable();
    triples.dedup();
    let count = triples.len() as u64;
    let (out, subjects) = build_direction(&mut triples, vertices, &mut stats, true, false);

    // Re-sort the same buffer as (object, predicate, subject), given back as it is read.
    triples.par_iter_mut().for_each(|t| t.swap(0, 2));
    triples.par_sort_unstable();
    let (inn, objects) = build_direction(&mut triples, vertices, &mut stats, false, true);
    drop(triples);

    assemble(out, subjects, inn, objects, stats, count)
}

/// Builds the index of one partition of a graph (`partition.rs`) from its OUT edges as
/// `[subject, predicate, object]` and its IN edges as `[object, predicate, subject]`,
/// which need not be the same triples: a partition holds the OUT records of the vertices
/// it owns and the IN records of the vertices it owns. `triples` counts the OUT edges.
pub fn build_split_graph(
    mut out_edges: Vec<[Id; 3]>,
    mut in_edges: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
) -> (GraphIndex, Vec<PredicateStats>) {
    let mut stats = vec![PredicateStats::default(); predicates];
    out_edges.par_sort_unstable();
    out_edges.dedup();
    in_edges.par_sort_unstable();
    in_edges.dedup();
    let count = out_edges.len() as u64;
    let (out, subjects) = build_direction(&mut out_edges, vertices, &mut stats, true, true);
    drop(out_edges);
    let (inn, objects) = build_direction(&mut in_edges, vertices, &mut stats, false, true);
    drop(in_edges);
    assemble(out, subjects, inn, objects, stats, count)
}

/// The index from both directions' records and each predicate's key vertices.
fn assemble(
    out: crate::adjacency::Adjacency,
    subjects: Vec<Vec<Id>>,
    inn: crate::adjacency::Adjacency,
    objects: Vec<Vec<Id>>,
    mut stats: Vec<PredicateStats>,
    count: u64,
) -> (GraphIndex, Vec<PredicateStats>) {
    let predicates = stats.len();
    // Interleave per predicate: subjects of p, then objects of p.
    let mut predicate_offsets = Vec::with_capacity(2 * predicates + 1);
    let mut predicate_members = Vec::with_capacity(
        subjects.iter().map(Vec::len).sum::<usize>() + objects.iter().map(Vec::len).sum::<usize>(),
    );
    predicate_offsets.push(0u64);
    for (p, (s, o)) in subjects.into_iter().zip(objects).enumerate() {
        stats[p].subjects = s.len() as u64;
        stats[p].objects = o.len() as u64;
        predicate_members.extend_from_slice(&s);
        predicate_offsets.push(predicate_members.len() as u64);
        predicate_members.extend_from_slice(&o);
        predicate_offsets.push(predicate_members.len() as u64);
    }
    let index = GraphIndex {
        out,
        inn,
        predicate_offsets: predicate_offsets.into(),
        predicate_members: predicate_members.into(),
        triples: count,
        predicate_patch: None,
    };
    (index, stats)
}

/// Edges consumed between two releases of their pages (3 MiB of 32-bit triples).
const RELEASE_EDGES: usize = 1 << 18;

/// Lays out one direction from edges sorted by (key vertex, predicate, neighbour), distinct;
/// also collects, per predicate, the distinct key vertices (ascending, since edges are
/// sorted). The records are counted first and written into arrays of their exact size, so
/// nothing is copied or over-allocated; with `release_input`, the pages of the edges laid
/// out are given back as the walk goes (their values are not read again), so the index
/// grows while its input shrinks.
fn build_direction(
    edges: &mut [[Id; 3]],
    vertices: Option<u64>,
    stats: &mut [PredicateStats],
    out_direction: bool,
    release_input: bool,
) -> (crate::adjacency::Adjacency, Vec<Vec<Id>>) {
    let sizes = RecordSizes::count(edges, stats.len());
    let mut words = ColumnBuffer::<Id>::zeroed(sizes.words);
    // A dense map covers `0..n` and any vertex past it (as the incremental builder did).
    let dense = vertices.map(|n| {
        let past = edges.last().map_or(0, |e| e[0] as u64 + 1);
        n.max(past) as usize
    });
    let mut offsets = ColumnBuffer::<u64>::zeroed(dense.unwrap_or(sizes.records) + 1);
    let mut sparse: Vec<Id> =
        Vec::with_capacity(if vertices.is_some() { 0 } else { sizes.records });
    let mut per_predicate: Vec<Vec<Id>> =
        sizes.keys.iter().map(|&n| Vec::with_capacity(n)).collect();
    let (w, offset) = (words.values_mut(), offsets.values_mut());
    // `offset[..filled]` are written; `offset[0]` is 0 as zeroed.
    let (mut cursor, mut filled, mut released) = (0usize, 1usize, 0usize);
    let mut start = 0;
    while start < edges.len() {
        let vertex = edges[start][0];
        let mut end = start;
        while end < edges.len() && edges[end][0] == vertex {
            end += 1;
        }
        if vertices.is_some() {
            // Vertices before this one without a record own empty ranges.
            while filled <= vertex as usize {
                offset[filled] = cursor as u64;
                filled += 1;
            }
        } else {
            sparse.push(vertex);
        }
        let group = &edges[start..end];
        let header = cursor;
        cursor += 1;
        let mut run = 0;
        while run < group.len() {
            let predicate = group[run][1] as PredId;
            let mut run_end = run;
            while run_end < group.len() && group[run_end][1] as PredId == predicate {
                run_end += 1;
            }
            w[cursor] = group[run][1];
            w[cursor + 1] = run_end as Id;
            cursor += 2;
            let degree = (run_end - run) as u64;
            let entry = &mut stats[predicate as usize];
            if out_direction {
                entry.triples += degree;
                entry.max_out_degree = entry.max_out_degree.max(degree);
            } else {
                entry.max_in_degree = entry.max_in_degree.max(degree);
            }
            per_predicate[predicate as usize].push(vertex);
            run = run_end;
        }
        w[header] = ((cursor - header - 1) / 2) as Id;
        for edge in group {
            w[cursor] = edge[2];
            cursor += 1;
        }
        offset[filled] = cursor as u64;
        filled += 1;
        start = end;
        if release_input && start - released >= RELEASE_EDGES {
            quiver_model::memory::release_pages(&mut edges[released..start]);
            released = start;
        }
    }
    if release_input {
        quiver_model::memory::release_pages(&mut edges[released..]);
    }
    while filled < offset.len() {
        offset[filled] = cursor as u64;
        filled += 1;
    }
    assert_eq!(cursor, w.len(), "records counted and written alike");
    let adjacency = crate::adjacency::Adjacency {
        vertices: vertices.is_none().then(|| sparse.into()),
        offsets: offsets.finish(),
        words: words.finish(),
        patch: None,
        rank: Default::default(),
    };
    (adjacency, per_predicate)
}

/// The sizes of one direction's records, counted from its sorted edges: a record is
/// `[k, p_1, end_1, …, p_k, end_k, neighbours…]` (`adjacency.rs`).
struct RecordSizes {
    records: usize,
    words: usize,
    /// Distinct key vertices per predicate.
    keys: Vec<usize>,
}

impl RecordSizes {
    fn count(edges: &[[Id; 3]], predicates: usize) -> Self {
        let mut sizes = RecordSizes {
            records: 0,
            words: edges.len(),
            keys: vec![0; predicates],
        };
        for (i, edge) in edges.iter().enumerate() {
            let previous = i.checked_sub(1).map(|i| &edges[i]);
            if previous.is_none_or(|p| p[0] != edge[0]) {
                sizes.records += 1;
                sizes.words += 1;
            }
            if previous.is_none_or(|p| p[0] != edge[0] || p[1] != edge[1]) {
                sizes.words += 2;
                sizes.keys[edge[1] as usize] += 1;
            }
        }
        sizes
    }
}
