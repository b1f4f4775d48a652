//! The next version of one graph's index after some triples were deleted and inserted.
//!
//! Changed vertex records are rebuilt whole (from the visible record and the vertex's
//! changes, merged per predicate) and put into the adjacency's persistent patch; the
//! predicate index lists whose vertex sets changed are rebuilt the same way. Nothing the
//! previous version can see is modified, so readers of it are unaffected.

use std::collections::BTreeMap;
use std::sync::Arc;

use quiver_model::{Id, PredId};

use crate::adjacency::Adjacency;
use crate::graph::GraphIndex;
use crate::patch::{patch_as_delta, AdjacencyPatch, LazyList, PatchedRecord, RecordDelta};
use crate::stats::PredicateStats;

/// Triples as `[subject, predicate id, object]`, with whether each is inserted (deletes
/// are applied first, so a triple both deleted and inserted ends up present).
pub(crate) struct TripleChanges {
    pub(crate) deletes: Vec<[Id; 3]>,
    pub(crate) inserts: Vec<[Id; 3]>,
}

/// Vertices added to and removed from one list of the predicate index.
#[derive(Default)]
struct SlotChange {
    added: Vec<Id>,
    removed: Vec<Id>,
}

impl GraphIndex {
    /// This index with `changes` applied; `stats` (indexed by predicate id, long enough
    /// for every predicate of `changes`) is updated: triples, distinct subjects and
    /// objects, and the largest degrees (which only grow until the next checkpoint).
    pub(crate) fn with_changes(
        &self,
        changes: &TripleChanges,
        predicates: usize,
        stats: &mut [PredicateStats],
    ) -> GraphIndex {
        let mut next = self.clone();
        let (mut out, mut inn) = (std::mem::take(&mut next.out), std::mem::take(&mut next.inn));
        let run_out = |adjacency: &mut Adjacency| update_direction(adjacency, changes, 0, 2);
        let run_in = |adjacency: &mut Adjacency| update_direction(adjacency, changes, 2, 0);
        // The two directions are independent; a large change set updates them in parallel.
        let (out_result, in_result) =
            if changes.deletes.len() + changes.inserts.len() >= PARALLEL_CHANGES {
                rayon::join(|| run_out(&mut out), || run_in(&mut inn))
            } else {
                (run_out(&mut out), run_in(&mut inn))
            };
        (next.out, next.inn) = (out, inn);
        let mut slots: BTreeMap<usize, SlotChange> = BTreeMap::new();
        for (result, side) in [(&out_result, 0), (&in_result, 1)] {
            for &(p, v, added) in &result.keys {
                let slot = slots.entry(2 * p as usize + side).or_default();
                if added {
                    slot.added.push(v)
                } else {
                    slot.removed.push(v)
                }
            }
            for (&p, &degree) in &result.max_degree {
                let entry = &mut stats[p as usize];
                if side == 0 {
                    entry.max_out_degree = entry.max_out_degree.max(degree);
                } else {
                    entry.max_in_degree = entry.max_in_degree.max(degree);
                }
            }
        }
        for (&predicate, &delta) in &out_result.added {
            stats[predicate as usize].triples += delta;
            next.triples += delta;
        }
        for (&predicate, &delta) in &out_result.removed {
            let entry = &mut stats[predicate as usize];
            entry.triples = entry.triples.saturating_sub(delta);
            next.triples -= delta;
        }
        apply_slot_changes(&mut next, &mut slots, predicates, stats);
        next
    }
}

/// Applies the vertices added to and removed from predicate index lists to `next` (as
/// deltas over the base lists, see [`LazyList`]), and sets the distinct subject and object
/// counts of the predicates concerned.
fn apply_slot_changes(
    next: &mut GraphIndex,
    slots: &mut BTreeMap<usize, SlotChange>,
    predicates: usize,
    stats: &mut [PredicateStats],
) {
    let mut patch = next.predicate_patch.clone().unwrap_or_default();
    patch.predicates = patch.predicates.max(predicates);
    for (&slot, change) in slots.iter_mut() {
        let base = next.base_predicate_list(slot);
        let mut delta = patch
            .lists
            .get(&slot)
            .map(|list| list.delta.clone())
            .unwrap_or_default();
        for &v in &change.removed {
            delta.remove(base, v);
        }
        change.added.sort_unstable();
        delta.insert_sorted(base, &change.added);
        let count = delta.len(base) as u64;
        let entry = &mut stats[slot / 2];
        if slot % 2 == 0 {
            entry.subjects = count;
        } else {
            entry.objects = count;
        }
        patch.lists.insert(slot, Arc::new(LazyList::new(delta)));
    }
    next.predicate_patch = Some(patch);
}

/// What one vertex's changes did to one of its lists.
struct ListChange {
    before: usize,
    after: usize,
    added: u64,
    removed: u64,
}

/// Change sets at least this large update the two directions in parallel.
const PARALLEL_CHANGES: usize = 4096;

/// What updating one direction did.
#[derive(Default)]
struct DirectionResult {
    /// Triples really added and removed, per predicate.
    added: BTreeMap<PredId, u64>,
    removed: BTreeMap<PredId, u64>,
    /// (predicate, vertex, gained): a vertex that gained its first or lost its last
    /// neighbour over the predicate.
    keys: Vec<(PredId, Id, bool)>,
    /// The longest new list per predicate.
    max_degree: BTreeMap<PredId, u64>,
}

/// The running totals of the predicate reported last, added to a [`DirectionResult`]'s
/// maps when another predicate comes: the vertices of a batch mostly change the same
/// predicate one after the other, and a map update per vertex cost more than rebuilding
/// the vertex's record.
#[derive(Default)]
struct Tally {
    predicate: Option<PredId>,
    added: u64,
    removed: u64,
    longest: u64,
}

impl DirectionResult {
    /// Counts what one vertex's changes did to its list of predicate `q`.
    fn report(&mut self, tally: &mut Tally, q: PredId, vertex: Id, change: ListChange) {
        if tally.predicate != Some(q) {
            self.flush(tally);
            tally.predicate = Some(q);
        }
        tally.added += change.added;
        tally.removed += change.removed;
        tally.longest = tally.longest.max(change.after as u64);
        if change.before == 0 && change.after > 0 {
            self.keys.push((q, vertex, true));
        } else if change.before > 0 && change.after == 0 {
            self.keys.push((q, vertex, false));
        }
    }

    /// Adds the tally's totals to the maps and empties it.
    fn flush(&mut self, tally: &mut Tally) {
        let Tally {
            predicate,
            added,
            removed,
            longest,
        } = std::mem::take(tally);
        let Some(q) = predicate else {
            return;
        };
        if added > 0 {
            *self.added.entry(q).or_insert(0) += added;
        }
        if removed > 0 {
            *self.removed.entry(q).or_insert(0) += removed;
        }
        let entry = self.max_degree.entry(q).or_insert(0);
        *entry = (*entry).max(longest);
    }
}

/// Updates one direction: `key`/`nbr` are the positions of the record's vertex and of the
/// neighbour in a triple.
fn update_direction(
    adjacency: &mut Adjacency,
    changes: &TripleChanges,
    key: usize,
    nbr: usize,
) -> DirectionResult {
    // (vertex, predicate, neighbour, insert?) sorted: a triple's delete sorts before its
    // insert, and the last entry of a triple decides.
    let mut edges: Vec<(Id, PredId, Id, bool)> = changes
        .deletes
        .iter()
        .map(|t| (t[key], t[1] as PredId, t[nbr], false))
        .chain(
            changes
                .inserts
                .iter()
                .map(|t| (t[key], t[1] as PredId, t[nbr], true)),
        )
        .collect();
    edges.sort_unstable();
    edges.dedup_by(|later, earlier| {
        // `dedup_by` passes (current, previous): keep the later entry of a triple.
        if later.0 == earlier.0 && later.1 == earlier.1 && later.2 == earlier.2 {
            *earlier = *later;
            true
        } else {
            false
        }
    });
    let dense = match &adjacency.vertices {
        None => adjacency.offsets.len().saturating_sub(1),
        Some(_) => 0,
    };
    let mut patch = adjacency
        .patch
        .take()
        .unwrap_or_else(|| AdjacencyPatch::new(dense));
    let mut result = DirectionResult::default();
    let snapshot = Adjacency {
        patch: Some(patch.clone()),
        ..adjacency.clone()
    };
    let view = snapshot.view();
    let mut scratch = RecordScratch::default();
    let mut tally = Tally::default();
    let mut report =
        |q: PredId, vertex: Id, change: ListChange| result.report(&mut tally, q, vertex, change);
    for group in edges.chunk_by(|a, b| a.0 == b.0) {
        let vertex = group[0].0;
        if patch.is_fresh(vertex) {
            // A new vertex (a new term, beyond the base and every patched record): its
            // record is its inserts, grouped by predicate, sorted and distinct already.
            scratch.clear();
            for changes in group.chunk_by(|a, b| a.1 == b.1) {
                let q = changes[0].1;
                scratch.merged.clear();
                scratch
                    .merged
                    .extend(changes.iter().filter(|c| c.3).map(|c| c.2));
                let after = scratch.merged.len();
                report(
                    q,
                    vertex,
                    ListChange {
                        before: 0,
                        after,
                        added: after as u64,
                        removed: 0,
                    },
                );
                scratch.push_merged(q);
            }
            if !scratch.heads.is_empty() {
                patch.set(vertex, scratch.encode());
            }
            continue;
        }
        let base = view.base_record(vertex);
        let existing = snapshot.patch.as_ref().and_then(|p| p.record(vertex));
        let as_delta = match existing {
            Some(PatchedRecord::Delta(_)) => true,
            Some(PatchedRecord::Words(_) | PatchedRecord::Edge(_)) => false,
            None => patch_as_delta(base.words().len()),
        };
        if as_delta {
            let mut lists = match existing {
                Some(PatchedRecord::Delta(delta)) => delta.lists.clone(),
                _ => BTreeMap::new(),
            };
            for changes in group.chunk_by(|a, b| a.1 == b.1) {
                let q = changes[0].1;
                let base_list = base.get(q);
                let delta = lists.entry(q).or_default();
                let before = delta.len(base_list);
                let (mut really_added, mut really_removed) = (0, 0);
                for &(_, _, n, insert) in changes {
                    if insert {
                        really_added += u64::from(delta.insert(base_list, n));
                    } else {
                        really_removed += u64::from(delta.remove(base_list, n));
                    }
                }
                let after = delta.len(base_list);
                report(
                    q,
                    vertex,
                    ListChange {
                        before,
                        after,
                        added: really_added,
                        removed: really_removed,
                    },
                );
            }
            patch.set(
                vertex,
                PatchedRecord::Delta(Arc::new(RecordDelta::new(lists))),
            );
            continue;
        }
        let record = view.record(vertex);
        scratch.clear();
        let mut old = record.iter().peekable();
        for changes in group.chunk_by(|a, b| a.1 == b.1) {
            let q = changes[0].1;
            while let Some((p, list)) = old.next_if(|(p, _)| *p < q) {
                scratch.push_list(p, list);
            }
            let existing: &[Id] = old.next_if(|(p, _)| *p == q).map_or(&[], |(_, list)| list);
            scratch.inserts.clear();
            scratch.deletes.clear();
            for &(_, _, n, insert) in changes {
                if insert {
                    scratch.inserts.push(n);
                } else {
                    scratch.deletes.push(n);
                }
            }
            merge_into(
                existing,
                &scratch.deletes,
                &scratch.inserts,
                &mut scratch.merged,
            );
            let really_removed = scratch
                .deletes
                .iter()
                .filter(|d| existing.binary_search(d).is_ok())
                .count() as u64;
            let after = scratch.merged.len();
            let really_added = (after + really_removed as usize - existing.len()) as u64;
            report(
                q,
                vertex,
                ListChange {
                    before: existing.len(),
                    after,
                    added: really_added,
                    removed: really_removed,
                },
            );
            scratch.push_merged(q);
        }
        for (p, list) in old {
            scratch.push_list(p, list);
        }
        patch.set(vertex, scratch.encode());
    }
    result.flush(&mut tally);
    drop(snapshot);
    adjacency.patch = Some(patch);
    result
}

/// The buffers one record is rebuilt in, reused from vertex to vertex: a batch of new
/// vertices then costs one allocation per record, the record itself.
#[derive(Default)]
struct RecordScratch {
    /// (predicate, end of its list in `neighbours`), predicates ascending.
    heads: Vec<(PredId, usize)>,
    neighbours: Vec<Id>,
    inserts: Vec<Id>,
    deletes: Vec<Id>,
    merged: Vec<Id>,
    words: Vec<Id>,
}

impl RecordScratch {
    fn clear(&mut self) {
        self.heads.clear();
        self.neighbours.clear();
    }

    /// Appends a non-empty list of predicate `p` (above every predicate so far).
    fn push_list(&mut self, p: PredId, list: &[Id]) {
        self.neighbours.extend_from_slice(list);
        self.heads.push((p, self.neighbours.len()));
    }

    /// Appends `merged` as the list of `p`, unless it is empty.
    fn push_merged(&mut self, p: PredId) {
        if !self.merged.is_empty() {
            self.neighbours.extend_from_slice(&self.merged);
            self.heads.push((p, self.neighbours.len()));
        }
    }

    /// The record of the lists pushed, in the layout of [`crate::record::encode_record`]: in place for
    /// one edge.
    fn encode(&mut self) -> PatchedRecord {
        if let ([(p, 1)], [n]) = (&self.heads[..], &self.neighbours[..]) {
            return PatchedRecord::Edge([1, *p as Id, 1, *n]);
        }
        self.words.clear();
        self.words.push(self.heads.len() as Id);
        for &(p, end) in &self.heads {
            self.words.extend([p as Id, end as Id]);
        }
        self.words.extend_from_slice(&self.neighbours);
        PatchedRecord::Words(Arc::from(&self.words[..]))
    }
}

/// `old` minus `removed` plus `added` (all sorted; `added` and `removed` distinct), into
/// `out`.
fn merge_into(old: &[Id], removed: &[Id], added: &[Id], out: &mut Vec<Id>) {
    out.clear();
    out.reserve(old.len() + added.len());
    let (mut a, mut r) = (0, 0);
    for &x in old {
        while a < added.len() && added[a] < x {
            out.push(added[a]);
            a += 1;
        }
        while r < removed.len() && removed[r] < x {
            r += 1;
        }
        let is_removed = r < removed.len() && removed[r] == x;
        let is_added = a < added.len() && added[a] == x;
        if is_added {
            a += 1;
        }
        if !is_removed || is_added {
            out.push(x);
        }
    }
    out.extend_from_slice(&added[a..]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::encode_record;

    fn merge(old: &[Id], removed: &[Id], added: &[Id]) -> Vec<Id> {
        let mut out = vec![99];
        merge_into(old, removed, added, &mut out);
        out
    }

    #[test]
    fn merge_removes_then_adds() {
        assert_eq!(merge(&[1, 3, 5], &[3], &[2, 5, 7]), vec![1, 2, 5, 7]);
        assert_eq!(merge(&[], &[1], &[1]), vec![1]);
        assert!(merge(&[4], &[4], &[]).is_empty());
    }

    fn words(record: &PatchedRecord) -> Vec<Id> {
        match record {
            PatchedRecord::Words(words) => words.to_vec(),
            PatchedRecord::Edge(words) => words.to_vec(),
            PatchedRecord::Delta(_) => panic!("a delta"),
        }
    }

    #[test]
    fn a_record_built_in_the_scratch_is_encoded_like_one_built_from_lists() {
        let cases: [Vec<(PredId, Vec<Id>)>; 4] = [
            vec![(1, vec![4, 9]), (3, vec![2]), (7, vec![1, 5, 6])],
            vec![(5, vec![8])],
            vec![(5, vec![8, 9])],
            vec![(2, vec![3]), (5, vec![8])],
        ];
        let mut scratch = RecordScratch::default();
        for lists in cases {
            scratch.push_list(99, &[1]);
            scratch.clear();
            for (p, list) in &lists {
                scratch.merged = list.clone();
                scratch.push_merged(*p);
            }
            scratch.merged.clear();
            scratch.push_merged(8);
            let record = scratch.encode();
            // One edge is held in place, anything else allocated.
            let one_edge = lists.len() == 1 && lists[0].1.len() == 1;
            assert_eq!(matches!(record, PatchedRecord::Edge(_)), one_edge);
            assert_eq!(words(&record), encode_record(&lists).to_vec());
        }
        assert_eq!(words(&RecordScratch::default().encode()), vec![0]);
    }
}
