//! Building a [`GraphIndex`] from id triples, in parallel.
//!
//! Triples are sorted by (subject, predicate, object) to lay out OUT records and the
//! subjects of each predicate, then re-sorted by (object, predicate, subject) for IN
//! records and the objects of each predicate. Sorting is a parallel radix sort
//! ([`crate::triple_sort`]); the record layout ([`crate::layout`]) walks each direction in
//! parts on every core, into arrays of the exact size counted just before. The peak of a bulk load is here (the id
//! triples, both directions and the dictionary at once), so the re-sorted triples are given
//! back page by page as the second direction consumes them.

use quiver_model::phases::time;
use quiver_model::{Id, PredId};
use rayon::prelude::*;

use crate::graph::GraphIndex;
use crate::layout::lay_out;
use crate::sorted_tail::{merge_head, order_tail, sort_with_sorted_tail};
use crate::stats::PredicateStats;
use crate::triple_sort::{sort_triples, PARALLEL_TRIPLES};

/// Builds the index of one graph from `triples` as `[subject, predicate, object]`
/// (duplicates allowed; they are removed). `vertices`: `Some(n)` gives a dense vertex map
/// over `0..n` (the default graph), `None` a sparse one (see also [`build_named_graph`]).
/// `predicates` is the size of the predicate id space. Returns the index and per-predicate
/// statistics.
pub fn build_graph(
    triples: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
) -> (GraphIndex, Vec<PredicateStats>) {
    build(triples, vertices, predicates, None, None)
}

/// The default graph's triples of a load on top of a store that the store's index gives in
/// order (see `sorted_tail.rs`): the input's `triples[start..]` by (subject, predicate,
/// object), and `refill`, which writes the same triples as `[object, predicate, subject]`,
/// in that order, into a slice of exactly their number.
pub struct Presorted<'a> {
    pub start: usize,
    pub refill: Refill<'a>,
}

/// What writes a [`Presorted`] tail again in the order of objects.
pub type Refill<'a> = Box<dyn FnOnce(&mut [[Id; 3]]) + Send + 'a>;

impl std::fmt::Debug for Presorted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Presorted")
            .field("start", &self.start)
            .finish_non_exhaustive()
    }
}

/// [`build_graph`] for `triples` of which `presorted` says which come in order already:
/// those are merged with the others rather than sorted again.
pub fn build_presorted_graph(
    triples: Vec<[Id; 3]>,
    presorted: Presorted<'_>,
    vertices: Option<u64>,
    predicates: usize,
) -> (GraphIndex, Vec<PredicateStats>) {
    build(triples, vertices, predicates, None, Some(presorted))
}

/// Builds the index of a named graph from `triples` as `[subject, predicate, object]`
/// (duplicates allowed): sparse in its vertices and in its predicates, so that nothing is
/// sized for the store's vertex or predicate count (see [`GraphIndex::predicate_ids`]).
/// Named graphs keep no statistics of their own.
pub fn build_named_graph(mut triples: Vec<[Id; 3]>) -> GraphIndex {
    let ids = number_predicates(&mut [&mut triples]);
    let (mut index, _) = build(triples, None, ids.len(), Some(&ids), None);
    index.predicate_ids = Some(ids.into());
    index
}

/// The predicates of the edges of `sets`, ascending; each edge's predicate is replaced by
/// its place among them, so that a named graph's index is sized for its own predicates.
fn number_predicates(sets: &mut [&mut Vec<[Id; 3]>]) -> Vec<PredId> {
    let mut ids: Vec<PredId> = sets
        .iter()
        .flat_map(|edges| edges.iter().map(|t| t[1] as PredId))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let local = |p: Id| ids.binary_search(&(p as PredId)).expect("a predicate") as Id;
    for edges in sets.iter_mut() {
        for_each(edges, |t| t[1] = local(t[1]));
    }
    ids
}

/// [`build_graph`], the records holding `record_predicates[p]` for the triples' predicate
/// `p` where given (see [`lay_out`]), the triples `presorted` names merged rather than
/// sorted.
fn build(
    mut triples: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
    record_predicates: Option<&[PredId]>,
    presorted: Option<Presorted<'_>>,
) -> (GraphIndex, Vec<PredicateStats>) {
    let mut stats = vec![PredicateStats::default(); predicates];

    // Sorted by (subject, predicate, object), without duplicates; with a presorted tail,
    // its length, the head sorted and its refill, kept for the order of objects unless the
    // tail held a duplicate (never in a store's index), as its refill would not fit.
    let presorted = time("index: sort by subject", || match presorted {
        Some(Presorted { start, refill }) => {
            let tail = triples.len() - start;
            let (head, distinct) = sort_with_sorted_tail(&mut triples, start, sort_triples);
            distinct.then_some((tail, head, refill))
        }
        None => {
            sort_triples(&mut triples);
            triples.dedup();
            None
        }
    });
    let count = triples.len() as u64;
    let names = record_predicates;
    let (out, subjects) = time("index: out-records", || {
        lay_out(&mut triples, vertices, &mut stats, true, false, names)
    });

    // The same buffer as (object, predicate, subject), given back as it is read: the
    // presorted tail refilled in that order, the other triples merged in; or all re-sorted.
    time("index: sort by object", || match presorted {
        // The tail refilled at the end, the head's triples it lacks merged in front of it.
        Some((tail, mut head, refill)) => {
            let gap = triples.len() - tail;
            refill(&mut triples[gap..]);
            let kept = gap + order_tail(&mut triples[gap..], sort_triples);
            for_each(&mut head, |t| t.swap(0, 2));
            sort_triples(&mut head);
            let merged = merge_head(&mut triples[..kept], gap, &head);
            assert_eq!(
                merged as u64, count,
                "a refilled tail holds the triples it held in order"
            );
        }
        None => {
            for_each(&mut triples, |t| t.swap(0, 2));
            sort_triples(&mut triples);
        }
    });
    let (inn, objects) = time("index: in-records", || {
        lay_out(&mut triples, vertices, &mut stats, false, true, names)
    });
    drop(triples);

    time("index: assemble", || {
        assemble(out, subjects, inn, objects, stats, count)
    })
}

/// Ids copied per task of a parallel copy: a list shorter than this is copied by the
/// calling thread.
const COPY_CHUNK: usize = 1 << 20;

/// Copies `from` into `to` (of the same length), by the pool's threads when it is long.
fn copy_ids(to: &mut [Id], from: &[Id]) {
    if from.len() < 2 * COPY_CHUNK {
        to.copy_from_slice(from);
    } else {
        to.par_chunks_mut(COPY_CHUNK)
            .zip(from.par_chunks(COPY_CHUNK))
            .for_each(|(to, from)| to.copy_from_slice(from));
    }
}

fn for_each(triples: &mut [[Id; 3]], f: impl Fn(&mut [Id; 3]) + Sync + Send) {
    if triples.len() < PARALLEL_TRIPLES {
        triples.iter_mut().for_each(f);
    } else {
        triples.par_iter_mut().for_each(f);
    }
}

/// Builds the index of one partition of a graph (`partition.rs`) from its OUT edges as
/// `[subject, predicate, object]` and its IN edges as `[object, predicate, subject]`,
/// which need not be the same triples: a partition holds the OUT records of the vertices
/// it owns and the IN records of the vertices it owns. `triples` counts the OUT edges.
pub fn build_split_graph(
    out_edges: Vec<[Id; 3]>,
    in_edges: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
) -> (GraphIndex, Vec<PredicateStats>) {
    build_split(out_edges, in_edges, vertices, predicates, None)
}

/// [`build_split_graph`] for a named graph: sparse in its vertices and in its predicates,
/// as [`build_named_graph`] builds one.
pub fn build_split_named_graph(
    mut out_edges: Vec<[Id; 3]>,
    mut in_edges: Vec<[Id; 3]>,
) -> GraphIndex {
    let ids = number_predicates(&mut [&mut out_edges, &mut in_edges]);
    let (mut index, _) = build_split(out_edges, in_edges, None, ids.len(), Some(&ids));
    index.predicate_ids = Some(ids.into());
    index
}

/// [`build_split_graph`], the records holding `record_predicates[p]` for the edges'
/// predicate `p` where given (see [`lay_out`]).
fn build_split(
    mut out_edges: Vec<[Id; 3]>,
    mut in_edges: Vec<[Id; 3]>,
    vertices: Option<u64>,
    predicates: usize,
    record_predicates: Option<&[PredId]>,
) -> (GraphIndex, Vec<PredicateStats>) {
    let mut stats = vec![PredicateStats::default(); predicates];
    sort_triples(&mut out_edges);
    out_edges.dedup();
    sort_triples(&mut in_edges);
    in_edges.dedup();
    let count = out_edges.len() as u64;
    let names = record_predicates;
    let (out, subjects) = lay_out(&mut out_edges, vertices, &mut stats, true, true, names);
    drop(out_edges);
    let (inn, objects) = lay_out(&mut in_edges, vertices, &mut stats, false, true, names);
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
    predicate_offsets.push(0u64);
    for (p, (s, o)) in subjects.iter().zip(&objects).enumerate() {
        stats[p].subjects = s.len() as u64;
        stats[p].objects = o.len() as u64;
        let before = *predicate_offsets.last().expect("starts at 0");
        predicate_offsets.push(before + s.len() as u64);
        predicate_offsets.push(before + (s.len() + o.len()) as u64);
    }
    // Zeroed memory (fresh pages, for a large size), filled in place: each list is freed
    // once copied, as the loop above freed them, and a large one (`rdf:type`'s members) is
    // copied by the pool's threads, each touching its own pages (one thread copied them all:
    // 0.23 s of LUBM-1000's load).
    let total = *predicate_offsets.last().expect("starts at 0") as usize;
    let mut predicate_members: Vec<Id> = vec![0; total];
    let mut rest: &mut [Id] = &mut predicate_members;
    for (s, o) in subjects.into_iter().zip(objects) {
        for list in [s, o] {
            let (place, after) = rest.split_at_mut(list.len());
            copy_ids(place, &list);
            rest = after;
        }
    }
    let index = GraphIndex {
        out,
        inn,
        predicate_offsets: predicate_offsets.into(),
        predicate_members: predicate_members.into(),
        predicate_ids: None,
        triples: count,
        predicate_patch: None,
    };
    (index, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicate_members_are_laid_out_whole_long_lists_included() {
        // Predicate 1's subjects are long enough to be copied by the pool's threads.
        let long = (2 * COPY_CHUNK + 12_345) as Id;
        let mut triples: Vec<[Id; 3]> = (0..long).map(|s| [s, 1, s % 7]).collect();
        triples.extend([[3, 0, 5], [4, 0, 5], [9, 2, 1]]);
        let (graph, stats) = build_graph(triples, Some(u64::from(long)), 3);
        assert_eq!(graph.predicate_subjects(0), [3, 4]);
        assert_eq!(graph.predicate_objects(0), [5]);
        assert!(graph.predicate_subjects(1).iter().copied().eq(0..long));
        assert!(graph.predicate_objects(1).iter().copied().eq(0..7));
        assert_eq!(graph.predicate_subjects(2), [9]);
        assert_eq!(graph.predicate_objects(2), [1]);
        assert_eq!(
            stats
                .iter()
                .map(|s| (s.subjects, s.objects))
                .collect::<Vec<_>>(),
            [(2, 1), (u64::from(long), 7), (1, 1)]
        );
    }
}
