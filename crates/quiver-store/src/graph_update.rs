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
use crate::graph::{GraphIndex, PredicatePatch};
use crate::patch::{encode_record, AdjacencyPatch};
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
        let mut slots: BTreeMap<usize, SlotChange> = BTreeMap::new();
        let (added, removed) = update_direction(
            &mut next.out,
            changes,
            0,
            2,
            |p, v, added| {
                let slot = slots.entry(2 * p as usize).or_default();
                if added {
                    slot.added.push(v)
                } else {
                    slot.removed.push(v)
                }
            },
            |p, degree| {
                let entry = &mut stats[p as usize];
                entry.max_out_degree = entry.max_out_degree.max(degree);
            },
        );
        update_direction(
            &mut next.inn,
            changes,
            2,
            0,
            |p, v, added| {
                let slot = slots.entry(2 * p as usize + 1).or_default();
                if added {
                    slot.added.push(v)
                } else {
                    slot.removed.push(v)
                }
            },
            |p, degree| {
                let entry = &mut stats[p as usize];
                entry.max_in_degree = entry.max_in_degree.max(degree);
            },
        );
        for (predicate, delta) in added {
            stats[predicate as usize].triples += delta;
            next.triples += delta;
        }
        for (predicate, delta) in removed {
            let entry = &mut stats[predicate as usize];
            entry.triples = entry.triples.saturating_sub(delta);
            next.triples -= delta;
        }
        apply_slot_changes(&mut next, &mut slots, predicates, stats);
        next
    }
}

/// Applies the vertices added to and removed from predicate index lists to `next`, and
/// sets the distinct subject and object counts of the predicates concerned.
fn apply_slot_changes(
    next: &mut GraphIndex,
    slots: &mut BTreeMap<usize, SlotChange>,
    predicates: usize,
    stats: &mut [PredicateStats],
) {
    let mut patch = next.predicate_patch.clone().unwrap_or_default();
    patch.predicates = patch.predicates.max(predicates);
    for (&slot, change) in slots.iter_mut() {
        change.added.sort_unstable();
        change.removed.sort_unstable();
        let list = merge(next.predicate_list(slot), &change.removed, &change.added);
        let count = list.len() as u64;
        let entry = &mut stats[slot / 2];
        if slot % 2 == 0 {
            entry.subjects = count;
        } else {
            entry.objects = count;
        }
        patch.lists.insert(slot, Arc::from(list));
    }
    next.predicate_patch = Some(PredicatePatch { ..patch });
}

/// Updates one direction: `key`/`nbr` are the positions of the record's vertex and of the
/// neighbour in a triple. `on_key(p, v, added)` reports a vertex that gained its first or
/// lost its last neighbour over `p`; `on_degree(p, len)` every new list length. Returns
/// the triples really added and removed per predicate (counted on the OUT side only, by
/// the caller's choice of the result it keeps).
fn update_direction(
    adjacency: &mut Adjacency,
    changes: &TripleChanges,
    key: usize,
    nbr: usize,
    mut on_key: impl FnMut(PredId, Id, bool),
    mut on_degree: impl FnMut(PredId, u64),
) -> (BTreeMap<PredId, u64>, BTreeMap<PredId, u64>) {
    // (vertex, predicate, neighbour, insert?) sorted; the last of a triple's entries wins,
    // and inserts sort after deletes.
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
    let dense = match &adjacency.vertices {
        None => adjacency.offsets.len().saturating_sub(1),
        Some(_) => 0,
    };
    let mut patch = adjacency
        .patch
        .take()
        .unwrap_or_else(|| AdjacencyPatch::new(dense));
    let (mut added, mut removed) = (BTreeMap::new(), BTreeMap::new());
    let view_adjacency = Adjacency {
        patch: Some(patch.clone()),
        ..adjacency.clone()
    };
    let view = view_adjacency.view();
    let mut start = 0;
    while start < edges.len() {
        let vertex = edges[start].0;
        let mut end = start;
        while end < edges.len() && edges[end].0 == vertex {
            end += 1;
        }
        let record = view.record(vertex);
        let mut lists: Vec<(PredId, Vec<Id>)> = Vec::with_capacity(record.len() + 1);
        let mut old = record.iter().peekable();
        let mut i = start;
        while i < end || old.peek().is_some() {
            let next_change = (i < end).then(|| edges[i].1);
            match (old.peek().map(|(p, _)| *p), next_change) {
                (Some(p), Some(q)) if p < q => {
                    let (p, list) = old.next().expect("peeked");
                    lists.push((p, list.to_vec()));
                }
                (Some(_), None) => {
                    let (p, list) = old.next().expect("peeked");
                    lists.push((p, list.to_vec()));
                }
                (old_p, Some(q)) => {
                    let existing: &[Id] = if old_p == Some(q) {
                        old.next().expect("peeked").1
                    } else {
                        &[]
                    };
                    let mut j = i;
                    let (mut inserts, mut deletes) = (Vec::new(), Vec::new());
                    while j < end && edges[j].1 == q {
                        let n = edges[j].2;
                        // The last entry of a neighbour decides (insert after delete).
                        if j + 1 < end && edges[j + 1].1 == q && edges[j + 1].2 == n {
                            j += 1;
                            continue;
                        }
                        if edges[j].3 {
                            inserts.push(n);
                        } else {
                            deletes.push(n);
                        }
                        j += 1;
                    }
                    i = j;
                    inserts.dedup();
                    deletes.dedup();
                    let list = merge(existing, &deletes, &inserts);
                    let gained = list.len() as i64 - existing.len() as i64;
                    let really_removed = deletes
                        .iter()
                        .filter(|d| existing.binary_search(d).is_ok())
                        .count() as u64;
                    let really_added = (gained + really_removed as i64) as u64;
                    if really_added > 0 {
                        *added.entry(q).or_insert(0) += really_added;
                    }
                    if really_removed > 0 {
                        *removed.entry(q).or_insert(0) += really_removed;
                    }
                    if existing.is_empty() && !list.is_empty() {
                        on_key(q, vertex, true);
                    } else if !existing.is_empty() && list.is_empty() {
                        on_key(q, vertex, false);
                    }
                    if !list.is_empty() {
                        on_degree(q, list.len() as u64);
                        lists.push((q, list));
                    }
                }
                (None, None) => break,
            }
        }
        patch.set(vertex, encode_record(&lists));
        start = end;
    }
    drop(view_adjacency);
    adjacency.patch = Some(patch);
    (added, removed)
}

/// `old` minus `removed` plus `added` (all sorted; `added` and `removed` distinct).
fn merge(old: &[Id], removed: &[Id], added: &[Id]) -> Vec<Id> {
    let mut out = Vec::with_capacity(old.len() + added.len());
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
    out
}

#[cfg(test)]
mod tests {
    use super::merge;

    #[test]
    fn merge_removes_then_adds() {
        assert_eq!(merge(&[1, 3, 5], &[3], &[2, 5, 7]), vec![1, 2, 5, 7]);
        assert_eq!(merge(&[], &[1], &[1]), vec![1]);
        assert!(merge(&[4], &[4], &[]).is_empty());
    }
}
