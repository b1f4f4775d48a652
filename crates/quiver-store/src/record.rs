//! The record of one vertex in one direction of the graph index, and its encoding:
//! `[k, p_1, end_1, …, p_k, end_k, neighbours of p_1 …, neighbours of p_k …]`, predicates
//! ascending and `end_i` the cumulative neighbour count (see `adjacency.rs`). Read where
//! the adjacency's arrays hold it or where an update's patch replaced it (`patch.rs`).

use std::sync::Arc;

use quiver_model::{Id, PredId};

/// The record of one vertex.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// The encoded record (empty: a vertex without edges), as laid out in `adjacency.rs`.
    pub(crate) words: &'a [Id],
}

impl<'a> Record<'a> {
    /// The record of a vertex without edges.
    pub(crate) const EMPTY: Record<'static> = Record { words: &[] };

    /// Number of predicates with neighbours.
    #[inline]
    pub fn len(&self) -> usize {
        self.words.first().map_or(0, |&k| k as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th (predicate, neighbours) pair.
    #[inline]
    pub fn entry(&self, i: usize) -> (PredId, &'a [Id]) {
        let k = self.len();
        let base = 1 + 2 * k;
        let start = if i == 0 {
            0
        } else {
            self.words[2 * i] as usize
        };
        let end = self.words[2 * i + 2] as usize;
        (
            self.words[1 + 2 * i] as PredId,
            &self.words[base + start..base + end],
        )
    }

    /// The neighbours over `predicate` (empty if none).
    #[inline(always)]
    pub fn get(&self, predicate: PredId) -> &'a [Id] {
        let k = self.len();
        // Predicates per vertex are few; a linear scan beats binary search up to dozens.
        if k <= 16 {
            for i in 0..k {
                let p = self.words[1 + 2 * i] as PredId;
                if p == predicate {
                    return self.entry(i).1;
                }
                if p > predicate {
                    break;
                }
            }
            return &[];
        }
        let (mut low, mut high) = (0, k);
        while low < high {
            let mid = (low + high) / 2;
            let p = self.words[1 + 2 * mid] as PredId;
            match p.cmp(&predicate) {
                std::cmp::Ordering::Equal => return self.entry(mid).1,
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
            }
        }
        &[]
    }

    /// Every (predicate, neighbours) pair, predicates ascending.
    pub fn iter(&self) -> impl Iterator<Item = (PredId, &'a [Id])> + '_ {
        (0..self.len()).map(|i| self.entry(i))
    }

    /// The record's words as laid out in the adjacency (copied verbatim by compaction).
    pub(crate) fn words(&self) -> &'a [Id] {
        self.words
    }
}

/// Encodes a record from its (predicate, neighbours) lists, predicates ascending and lists
/// non-empty: `[k, p_1, end_1, …, p_k, end_k, neighbours…]`.
pub(crate) fn encode_record(lists: &[(PredId, Vec<Id>)]) -> Arc<[Id]> {
    let neighbours: usize = lists.iter().map(|(_, list)| list.len()).sum();
    let mut words = Vec::with_capacity(1 + 2 * lists.len() + neighbours);
    words.push(lists.len() as Id);
    let mut end = 0usize;
    for (predicate, list) in lists {
        end += list.len();
        words.push(*predicate as Id);
        words.push(end as Id);
    }
    for (_, list) in lists {
        words.extend_from_slice(list);
    }
    words.into()
}
