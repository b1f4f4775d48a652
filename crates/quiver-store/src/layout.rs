//! Laying out one direction of a graph index from its sorted edges, on every core.
//!
//! The edges are cut into parts of whole key vertices. Each part counts its records first;
//! the counts give every part its own stretch of the output arrays (record words, offsets,
//! sparse vertex list, and each predicate's key vertices), so the parts then write side by
//! side with no copy and no lock, and the result is the same whatever the cut. Done by one
//! thread, this walk was a quarter of a bulk load on two cores (most of it the kernel
//! zeroing the output's fresh pages on first touch, which now happens on every core too),
//! and it would have been most of a load on sixteen.

use std::slice::IterMut;

use quiver_model::{ColumnBuffer, Id, PredId};
use rayon::prelude::*;

use crate::adjacency::Adjacency;
use crate::stats::PredicateStats;

/// Edges consumed by a part between two releases of their pages (1.5 MiB of 32-bit
/// triples): with parts walked side by side, as much again is held per thread.
const RELEASE_EDGES: usize = 1 << 17;

/// The fewest edges worth a part of their own: below this, handing the part to a thread
/// costs more than walking it.
const MIN_PART_EDGES: usize = 1 << 16;

/// Parts per thread, so that a thread finishing early takes another.
const PARTS_PER_THREAD: usize = 4;

/// Lays out one direction from edges sorted by (key vertex, predicate, neighbour), distinct;
/// also collects, per predicate, the distinct key vertices (ascending, since edges are
/// sorted), and adds to `stats` (triples and the largest degree of this direction). The
/// records are counted first and written into arrays of their exact size, so nothing is
/// copied or over-allocated; with `release_input`, the pages of the edges laid out are given
/// back as the walk goes (their values are not read again), so the index grows while its
/// input shrinks.
///
/// The edges' predicates index `stats` and the lists returned; the records hold them as
/// they are, or, with `record_predicates`, the ids it maps them to (ascending like them: a
/// named graph lays out its few predicates numbered from 0, so that nothing is sized for
/// all the store's).
pub(crate) fn lay_out(
    edges: &mut [[Id; 3]],
    vertices: Option<u64>,
    stats: &mut [PredicateStats],
    out_direction: bool,
    release_input: bool,
    record_predicates: Option<&[PredId]>,
) -> (Adjacency, Vec<Vec<Id>>) {
    let parts = (rayon::current_num_threads() * PARTS_PER_THREAD)
        .min(edges.len() / MIN_PART_EDGES)
        .max(1);
    let walk = Walk {
        out_direction,
        release_input,
        record_predicates,
    };
    lay_out_in_parts(edges, vertices, stats, walk, parts)
}

/// How [`lay_out`] walks the edges.
#[derive(Clone, Copy)]
struct Walk<'a> {
    out_direction: bool,
    release_input: bool,
    record_predicates: Option<&'a [PredId]>,
}

/// [`lay_out`] with the edges cut into at most `parts` parts.
fn lay_out_in_parts(
    edges: &mut [[Id; 3]],
    vertices: Option<u64>,
    stats: &mut [PredicateStats],
    walk: Walk<'_>,
    parts: usize,
) -> (Adjacency, Vec<Vec<Id>>) {
    let Walk {
        out_direction,
        release_input,
        ..
    } = walk;
    let predicates = stats.len();
    // A dense map covers `0..n` and any vertex past it (as the incremental builder did).
    let dense = vertices.map(|n| {
        let past = edges.last().map_or(0, |e| e[0] as u64 + 1);
        n.max(past) as usize
    });
    let parts = cut(edges, parts);
    // One part (a small graph) is walked on the calling thread: waking others for it costs
    // more than the walk.
    let sizes: Vec<RecordSizes> = match parts.len() {
        1 => vec![RecordSizes::count(parts[0], predicates)],
        _ => parts
            .par_iter()
            .map(|part| RecordSizes::count(part, predicates))
            .collect(),
    };
    let records: usize = sizes.iter().map(|s| s.records).sum();
    let words_len: usize = sizes.iter().map(|s| s.words).sum();

    let mut words = ColumnBuffer::<Id>::zeroed(words_len);
    let mut offsets = ColumnBuffer::<u64>::zeroed(dense.unwrap_or(records) + 1);
    let mut sparse: Vec<Id> = vec![0; if dense.is_some() { 0 } else { records }];
    let mut per_predicate: Vec<Vec<Id>> = (0..predicates)
        .map(|p| vec![0; sizes.iter().map(|s| s.keys[p]).sum()])
        .collect();

    // Each part's stretch of every output. `offsets[0]` is 0 as zeroed and belongs to none.
    let mut outputs: Vec<PartOutput> = Vec::with_capacity(parts.len());
    let (mut words_rest, mut offsets_rest) = (words.values_mut(), &mut offsets.values_mut()[1..]);
    let mut sparse_rest = &mut sparse[..];
    let mut word_base = 0;
    let mut offset_base = 1;
    for (i, size) in sizes.iter().enumerate() {
        let (part_words, rest) = std::mem::take(&mut words_rest).split_at_mut(size.words);
        words_rest = rest;
        // Dense: a part owns the offsets after its first vertex up to, and including, the
        // next part's first vertex (the last part, to the end). Sparse: one per record.
        let offsets_len = match dense {
            Some(_) => match parts.get(i + 1) {
                Some(next) => next[0][0] as usize + 1 - offset_base,
                None => offsets_rest.len(),
            },
            None => size.records,
        };
        let (part_offsets, rest) = std::mem::take(&mut offsets_rest).split_at_mut(offsets_len);
        offsets_rest = rest;
        let sparse_len = if dense.is_some() { 0 } else { size.records };
        let (part_sparse, rest) = std::mem::take(&mut sparse_rest).split_at_mut(sparse_len);
        sparse_rest = rest;
        outputs.push(PartOutput {
            words: part_words,
            word_base,
            offsets: part_offsets,
            offset_base,
            sparse: dense.is_none().then_some(part_sparse),
            keys: Vec::with_capacity(predicates),
        });
        word_base += size.words;
        offset_base += offsets_len;
    }
    for (p, keys) in per_predicate.iter_mut().enumerate() {
        let mut rest = &mut keys[..];
        for (output, size) in outputs.iter_mut().zip(&sizes) {
            let (part_keys, tail) = std::mem::take(&mut rest).split_at_mut(size.keys[p]);
            output.keys.push(part_keys.iter_mut());
            rest = tail;
        }
    }

    let part_stats: Vec<Vec<DirectionStats>> = match parts.len() {
        1 => parts
            .into_iter()
            .zip(outputs)
            .map(|(part, output)| output.write(part, predicates, walk))
            .collect(),
        _ => parts
            .into_par_iter()
            .zip(outputs)
            .map(|(part, output)| output.write(part, predicates, walk))
            .collect(),
    };
    for part in part_stats {
        for (entry, part) in stats.iter_mut().zip(part) {
            if out_direction {
                entry.triples += part.triples;
                entry.max_out_degree = entry.max_out_degree.max(part.max_degree);
            } else {
                entry.max_in_degree = entry.max_in_degree.max(part.max_degree);
            }
        }
    }
    if release_input {
        // The pages that straddled two parts.
        quiver_model::memory::release_pages(edges);
    }
    let adjacency = Adjacency {
        vertices: dense.is_none().then(|| sparse.into()),
        offsets: offsets.finish(),
        words: words.finish(),
        patch: None,
        rank: Default::default(),
    };
    (adjacency, per_predicate)
}

/// Cuts sorted `edges` into at most `parts` runs of about equal length, each holding whole
/// key vertices; always at least one (empty when `edges` is).
fn cut(edges: &mut [[Id; 3]], parts: usize) -> Vec<&mut [[Id; 3]]> {
    let mut starts = vec![0];
    for k in 1..parts {
        let at = edges.len() * k / parts;
        let Some(edge) = edges.get(at) else { break };
        let vertex = edge[0];
        let start = edges.partition_point(|e| e[0] < vertex);
        if start > *starts.last().expect("starts begins with 0") {
            starts.push(start);
        }
    }
    let mut cut = Vec::with_capacity(starts.len());
    let mut rest = edges;
    for pair in starts.windows(2) {
        let (part, tail) = rest.split_at_mut(pair[1] - pair[0]);
        cut.push(part);
        rest = tail;
    }
    cut.push(rest);
    cut
}

/// One part's stretch of the outputs.
struct PartOutput<'a> {
    words: &'a mut [Id],
    /// The position of `words[0]` in the whole array of words.
    word_base: usize,
    offsets: &'a mut [u64],
    /// The position of `offsets[0]` in the whole array of offsets.
    offset_base: usize,
    /// The key vertex of each record, for a sparse map.
    sparse: Option<&'a mut [Id]>,
    /// Each predicate's stretch of its key vertices, in predicate order.
    keys: Vec<IterMut<'a, Id>>,
}

/// What one part adds to a predicate's statistics.
#[derive(Clone, Copy, Default)]
struct DirectionStats {
    triples: u64,
    max_degree: u64,
}

impl PartOutput<'_> {
    /// Writes the records of `edges`, which fill this stretch exactly. A record is
    /// `[k, p_1, end_1, …, p_k, end_k, neighbours…]` (`adjacency.rs`).
    fn write(
        mut self,
        edges: &mut [[Id; 3]],
        predicates: usize,
        walk: Walk<'_>,
    ) -> Vec<DirectionStats> {
        let release_input = walk.release_input;
        let mut stats = vec![DirectionStats::default(); predicates];
        let (w, offset) = (&mut *self.words, &mut *self.offsets);
        // `offset[..filled]` are written.
        let (mut cursor, mut filled, mut released, mut record) = (0usize, 0usize, 0usize, 0usize);
        let mut start = 0;
        while start < edges.len() {
            let vertex = edges[start][0];
            let mut end = start;
            while end < edges.len() && edges[end][0] == vertex {
                end += 1;
            }
            match &mut self.sparse {
                Some(sparse) => sparse[record] = vertex,
                // Vertices before this one without a record own empty ranges.
                None => {
                    while self.offset_base + filled <= vertex as usize {
                        offset[filled] = (self.word_base + cursor) as u64;
                        filled += 1;
                    }
                }
            }
            record += 1;
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
                w[cursor] =
                    walk.record_predicates
                        .map_or(predicate, |ids| ids[predicate as usize]) as Id;
                w[cursor + 1] = run_end as Id;
                cursor += 2;
                let degree = (run_end - run) as u64;
                let entry = &mut stats[predicate as usize];
                entry.triples += degree;
                entry.max_degree = entry.max_degree.max(degree);
                *self.keys[predicate as usize]
                    .next()
                    .expect("key vertices counted and written alike") = vertex;
                run = run_end;
            }
            w[header] = ((cursor - header - 1) / 2) as Id;
            for edge in group {
                w[cursor] = edge[2];
                cursor += 1;
            }
            offset[filled] = (self.word_base + cursor) as u64;
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
            offset[filled] = (self.word_base + cursor) as u64;
            filled += 1;
        }
        assert_eq!(cursor, w.len(), "records counted and written alike");
        stats
    }
}

/// The sizes of one part's records, counted from its sorted edges.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sorted distinct edges over `vertices` key vertices and `predicates` predicates, with
    /// vertices of one edge, of none and of many (one larger than a part).
    fn edges(seed: u64, count: usize, vertices: u32, predicates: u32) -> Vec<[Id; 3]> {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        let mut edges: Vec<[Id; 3]> = (0..count)
            .map(|_| {
                let key = if next() % 4 == 0 {
                    7
                } else {
                    next() % vertices
                };
                [key, next() % predicates, next() % 50].map(|id| id as Id)
            })
            .collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    }

    /// One direction laid out, as plain values.
    #[derive(Debug, PartialEq)]
    struct Laid {
        words: Vec<Id>,
        offsets: Vec<u64>,
        vertices: Option<Vec<Id>>,
        keys: Vec<Vec<Id>>,
        /// Triples, largest OUT degree and largest IN degree per predicate.
        stats: Vec<(u64, u64, u64)>,
    }

    fn lay_out_with(
        edges: &[[Id; 3]],
        vertices: Option<u64>,
        out_direction: bool,
        parts: usize,
    ) -> Laid {
        let mut stats = vec![PredicateStats::default(); 6];
        stats[2].triples = 5; // what the other direction left is added to
        let mut edges = edges.to_vec();
        let walk = Walk {
            out_direction,
            release_input: true,
            record_predicates: None,
        };
        let (adjacency, keys) = lay_out_in_parts(&mut edges, vertices, &mut stats, walk, parts);
        Laid {
            words: adjacency.words.to_vec(),
            offsets: adjacency.offsets.to_vec(),
            vertices: adjacency.vertices.map(|v| v.to_vec()),
            keys,
            stats: stats
                .iter()
                .map(|s| (s.triples, s.max_out_degree, s.max_in_degree))
                .collect(),
        }
    }

    #[test]
    fn the_layout_is_the_same_however_the_edges_are_cut() {
        for (seed, count, vertices) in [(1, 0, 10), (2, 1, 10), (3, 5_000, 300), (4, 5_000, 40)] {
            let edges = edges(seed, count, vertices, 6);
            for map in [Some(vertices as u64 + 20), Some(0), None] {
                for out_direction in [true, false] {
                    let whole = lay_out_with(&edges, map, out_direction, 1);
                    for parts in [2, 3, 16, 1_000, 100_000] {
                        let cut = lay_out_with(&edges, map, out_direction, parts);
                        assert_eq!(whole, cut, "{count} edges in {parts} parts, {map:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_cut_keeps_each_key_vertex_whole() {
        let mut edges = edges(5, 3_000, 30, 4);
        let all = edges.clone();
        let parts = cut(&mut edges, 9);
        assert!(parts.len() > 1, "{} parts", parts.len());
        assert_eq!(parts.concat(), all);
        for pair in parts.windows(2) {
            let (before, after) = (pair[0].last().unwrap(), pair[1].first().unwrap());
            assert!(before[0] < after[0], "{before:?} then {after:?}");
        }
    }
}
