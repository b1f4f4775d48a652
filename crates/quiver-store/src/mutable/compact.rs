//! Compaction: merging a frozen delta into a new compact base.
//!
//! The base's records and the delta's entries (sorted by direction, vertex, predicate) are
//! both in vertex order, so a compaction is one linear merge per direction, the two
//! directions in parallel, not a rebuild from triples: a vertex without changes has its
//! record copied verbatim, a changed vertex gets a new record made of its base lists with
//! the changed keys' lists in their place (an empty list drops the key). The predicate
//! index and the triple count are recomputed from the new records in the same pass.

use quiver_model::{Column, Id, PredId};

use super::list::List;
use crate::adjacency::{Adjacency, Record};
use crate::graph::{Direction, GraphIndex, Key};

/// A new index: `base` with the lists of `entries` (sorted by direction, vertex,
/// predicate, as [`Delta::sorted_entries`](super::delta::Delta::sorted_entries) gives them).
pub(crate) fn merge(base: &GraphIndex, entries: &[(Key, List)]) -> GraphIndex {
    let split = entries.partition_point(|(key, _)| key.direction == Direction::Out);
    let (out_entries, in_entries) = entries.split_at(split);
    let predicates = entries
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(key, _)| key.predicate as usize + 1)
        .max()
        .unwrap_or(0)
        .max(base.predicates());
    let ((out, subjects, triples), (inn, objects, _)) = rayon::join(
        || merge_direction(&base.out, out_entries, predicates),
        || merge_direction(&base.inn, in_entries, predicates),
    );

    let mut predicate_offsets = Vec::with_capacity(2 * predicates + 1);
    let mut predicate_members = Vec::with_capacity(
        subjects.iter().map(Vec::len).sum::<usize>() + objects.iter().map(Vec::len).sum::<usize>(),
    );
    predicate_offsets.push(0u64);
    for (s, o) in subjects.iter().zip(&objects) {
        predicate_members.extend_from_slice(s);
        predicate_offsets.push(predicate_members.len() as u64);
        predicate_members.extend_from_slice(o);
        predicate_offsets.push(predicate_members.len() as u64);
    }
    GraphIndex {
        out,
        inn,
        predicate_offsets: predicate_offsets.into(),
        predicate_members: predicate_members.into(),
        predicate_ids: None,
        triples,
        predicate_patch: None,
    }
}

/// Merges one direction. Returns the adjacency, the vertices having each predicate
/// (ascending) and the number of neighbours in all.
fn merge_direction(
    base: &Adjacency,
    entries: &[(Key, List)],
    predicates: usize,
) -> (Adjacency, Vec<Vec<Id>>, u64) {
    let dense = base.vertices.is_none();
    let base_slots = base.offsets.len().saturating_sub(1);
    let base_vertex = |slot: usize| match &base.vertices {
        None => slot as Id,
        Some(list) => list[slot],
    };
    let extra: usize = entries.iter().map(|(_, list)| list.len() + 3).sum();
    let mut words: Vec<Id> = Vec::with_capacity(base.words.len() + extra);
    let mut offsets: Vec<u64> = Vec::with_capacity(base.offsets.len().max(1));
    offsets.push(0);
    let mut vertices: Vec<Id> = Vec::new();
    let mut per_predicate: Vec<Vec<Id>> = vec![Vec::new(); predicates];
    let mut neighbours = 0u64;
    let mut pairs: Vec<(PredId, &[Id])> = Vec::new();

    let (mut slot, mut next) = (0, 0);
    loop {
        let from_base = (slot < base_slots).then(|| base_vertex(slot));
        let from_delta = entries.get(next).map(|(key, _)| key.vertex);
        let vertex = match (from_base, from_delta) {
            (None, None) => break,
            (Some(v), None) | (None, Some(v)) => v,
            (Some(a), Some(b)) => a.min(b),
        };
        let record = if from_base == Some(vertex) {
            slot += 1;
            base.record(vertex)
        } else {
            Record::EMPTY
        };
        let first = next;
        while entries
            .get(next)
            .is_some_and(|(key, _)| key.vertex == vertex)
        {
            next += 1;
        }
        let changes = &entries[first..next];

        if dense {
            while offsets.len() < vertex as usize + 1 {
                offsets.push(words.len() as u64);
            }
        }
        let before = words.len();
        if changes.is_empty() {
            words.extend_from_slice(record.words());
            for (predicate, list) in record.iter() {
                per_predicate[predicate as usize].push(vertex);
                neighbours += list.len() as u64;
            }
        } else {
            pairs.clear();
            let mut old = record.iter().peekable();
            for (key, list) in changes {
                while let Some(&(predicate, old_list)) = old.peek() {
                    if predicate > key.predicate {
                        break;
                    }
                    old.next();
                    if predicate < key.predicate {
                        pairs.push((predicate, old_list));
                    }
                }
                if !list.is_empty() {
                    pairs.push((key.predicate, list));
                }
            }
            pairs.extend(old);
            if !pairs.is_empty() {
                words.push(pairs.len() as Id);
                let mut end = 0usize;
                for (predicate, list) in &pairs {
                    end += list.len();
                    words.push(*predicate as Id);
                    words.push(end as Id);
                }
                for (predicate, list) in &pairs {
                    words.extend_from_slice(list);
                    per_predicate[*predicate as usize].push(vertex);
                }
                neighbours += end as u64;
            }
        }
        if dense {
            offsets.push(words.len() as u64);
        } else if words.len() > before {
            vertices.push(vertex);
            offsets.push(words.len() as u64);
        }
    }
    words.shrink_to_fit();
    let adjacency = Adjacency {
        vertices: (!dense).then(|| vertices.into()),
        offsets: Column::with_huge_pages(offsets),
        words: Column::with_huge_pages(words),
        patch: None,
        rank: Default::default(),
    };
    (adjacency, per_predicate, neighbours)
}
