//! The records a light hop's walks read where they ran, sent back with its rows, and
//! those read ahead of them.
//!
//! Read ahead: a light query that crosses to a record's owner pays a round trip (two
//! wake-ups of a thread on each side), several times its steps' time; the next light
//! queries often read records next to it in id order (ids are dense in term order: a
//! department's courses, its professors, a university's departments sit together; in a
//! cluster loaded by its processes, the terms an owner met one after another). So beside
//! the records a walk read, its answer carries those of the same kind (predicate and
//! direction) of the nearest vertices the same partition owns, as a database reads a
//! page around the row it wants: at most [`AHEAD_IDS`] ids an answer, from at most
//! [`AHEAD_VERTICES`] vertices on each side of one walked, none empty. Measured on the
//! LUBM emulator's mix (LUBM-100, 2 processes): see ARCHITECTURE.md.

use quiver_model::Id;
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::{Direction, GraphIndex, Store};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::walk::{lists_ids, Lists, Over, PlanStep, RecordKey, Walk};
use super::SENT;
use crate::types::values_of;

/// The ids an answer carries at most in records read ahead (1 KiB): a few dozen short
/// records, a small part of a round trip's cost to read, send and keep.
const AHEAD_IDS: usize = 256;

/// The vertices owned by the same partition read ahead of a walked one, on each side.
const AHEAD_VERTICES: u32 = 16;

/// The records an answer looks up at most to read ahead (empty ones included): a message
/// of many rows reads ahead around its first ones only.
const AHEAD_PROBES: usize = 4 * AHEAD_VERTICES as usize;

/// The records a light hop's walks read where they ran, as its answer carries them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RecordsRead {
    pub(super) records: Vec<(RecordKey, Lists)>,
    #[serde(skip)]
    ids: usize,
    #[serde(skip)]
    taken: FxHashSet<RecordKey>,
    /// Ids taken in read ahead, and records looked up for it.
    #[serde(skip)]
    ahead: usize,
    #[serde(skip)]
    probes: usize,
}

impl RecordsRead {
    /// Records as an answer would bring them.
    #[cfg(test)]
    pub(super) fn of(records: Vec<(RecordKey, Lists)>) -> Self {
        Self {
            records,
            ..Self::default()
        }
    }

    /// Takes in the records that `step` reads on `part` for `rows` (a message's, at its
    /// owner), while they fit in [`SENT`] ids.
    pub(crate) fn take(&mut self, part: &Store, step: PlanStep<'_>, rows: &Table) {
        let Some(walk) = Walk::of(&step, rows) else {
            return;
        };
        let Some(from) = values_of(rows, walk.from) else {
            return;
        };
        let index = part.graph();
        let partitions = part.partition_info().map_or(1, |info| info.count);
        for row in 0..rows.rows {
            let vertex = from(row);
            let key = walk.predicate.key(walk.direction, vertex);
            if vertex == UNBOUND || self.taken.contains(&key) {
                continue;
            }
            let lists = lists_of(index, key);
            if !self.keep(key, lists) {
                return;
            }
            self.read_ahead(index, key, partitions);
        }
    }

    /// Takes in `key`'s record if it fits in [`SENT`] ids; whether it did.
    fn keep(&mut self, key: RecordKey, lists: Lists) -> bool {
        let ids = lists_ids(&lists);
        if self.ids + ids > SENT {
            return false;
        }
        self.ids += ids;
        self.taken.insert(key);
        self.records.push((key, lists));
        true
    }

    /// Takes in the records of `key`'s kind of the vertices nearest to its own that the
    /// same partition owns (every `partitions`-th id), nearest first, while they fit in
    /// [`AHEAD_IDS`]; empty ones are skipped (never learnt, they are asked as before).
    /// Once a record does not fit, or [`AHEAD_PROBES`] were looked up, the answer reads
    /// ahead no more.
    fn read_ahead(&mut self, index: &GraphIndex, key: RecordKey, partitions: u32) {
        let (over, direction, vertex) = key;
        for k in 1..=AHEAD_VERTICES {
            let step = k.checked_mul(partitions.max(1));
            let sides = step.map(|step| [vertex.checked_add(step), vertex.checked_sub(step)]);
            for near in sides.into_iter().flatten().flatten() {
                let near: RecordKey = (over, direction, near);
                if self.taken.contains(&near) {
                    continue;
                }
                if self.probes >= AHEAD_PROBES {
                    return;
                }
                self.probes += 1;
                let lists = lists_of(index, near);
                if lists.is_empty() {
                    continue;
                }
                let ids = lists_ids(&lists);
                if self.ahead + ids > AHEAD_IDS || !self.keep(near, lists) {
                    self.probes = AHEAD_PROBES;
                    return;
                }
                self.ahead += ids;
            }
        }
    }
}

/// The record `key` names in `index`: a predicate's list (none when empty), or every
/// predicate's.
fn lists_of(index: &GraphIndex, (over, direction, vertex): (Over, Direction, Id)) -> Lists {
    match over {
        Over::One(p) => {
            let list = index.get(vertex, p, direction);
            match list.is_empty() {
                true => Vec::new(),
                false => vec![(p, list.to_vec())],
            }
        }
        Over::Every => index
            .edges(vertex, direction)
            .iter()
            .map(|(p, list)| (p, list.to_vec()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::{GraphName, NamedNode, Quad};

    /// Read ahead around a vertex, on a partition of 2: the records of the nearest
    /// vertices of the same owner, each the store's own and none empty, nearest first with
    /// no gap, within [`AHEAD_IDS`], stopping only at it or past [`AHEAD_VERTICES`].
    #[test]
    fn read_ahead_takes_the_nearest_records_of_the_same_owner() {
        let iri = |s: String| NamedNode::new(s).unwrap();
        // Subject i has (i mod 4) × 10 objects over p: records of 0, 10, 20 and 30, each
        // subject a q edge so that it exists either way.
        let quads: Vec<Quad> = (0..80)
            .flat_map(|i| {
                let s = iri(format!("http://ex/s{i:02}"));
                let q = Quad::new(
                    s.clone(),
                    iri("http://ex/q".into()),
                    iri("http://ex/o".into()),
                    GraphName::DefaultGraph,
                );
                (0..(i % 4) * 10)
                    .map(move |j| {
                        let o = iri(format!("http://ex/o{i}-{j}"));
                        Quad::new(
                            s.clone(),
                            iri("http://ex/p".into()),
                            o,
                            GraphName::DefaultGraph,
                        )
                    })
                    .chain([q])
            })
            .collect();
        let (store, _) = quiver_loader::load_quads(quads, None).unwrap();
        let p = store.predicate_id("http://ex/p").unwrap();
        let index = store.graph();
        let list = |v: Id| index.get(v, p, Direction::Out).to_vec();
        let mut misfits = 0;
        for (middle, partitions) in [(41, 2), (40, 2), (41, 1), (2, 2), (78, 3)] {
            let vertex = store.iri_id(&format!("http://ex/s{middle:02}")).unwrap();
            let mut read = RecordsRead::default();
            read.read_ahead(index, (Over::One(p), Direction::Out, vertex), partitions);
            let mut distances = Vec::new();
            for ((over, direction, near), lists) in &read.records {
                assert_eq!((*over, *direction), (Over::One(p), Direction::Out));
                let distance = near.abs_diff(vertex);
                assert!(
                    distance > 0 && distance.is_multiple_of(partitions),
                    "{near}"
                );
                assert!(distance <= AHEAD_VERTICES * partitions, "{near}");
                assert_eq!(lists, &vec![(p, list(*near))]);
                assert!(!list(*near).is_empty());
                distances.push(distance);
            }
            assert!(distances.is_sorted(), "{distances:?}");
            assert_eq!(read.ahead, lists_ids_of(&read.records));
            assert!(read.ahead <= AHEAD_IDS && read.ids == read.ahead);
            // Nearest first: the candidates in order, the non-empty ones taken until the
            // first that does not fit.
            let candidates = (1..=AHEAD_VERTICES)
                .flat_map(|k| {
                    [
                        vertex.checked_add(k * partitions),
                        vertex.checked_sub(k * partitions),
                    ]
                })
                .flatten()
                .filter(|&v| !list(v).is_empty());
            let taken: Vec<Id> = read.records.iter().map(|(key, _)| key.2).collect();
            let mut ids = 0;
            let mut left_out = false;
            for (at, near) in candidates.enumerate() {
                if at < taken.len() {
                    assert_eq!(taken[at], near, "around {middle} on {partitions}");
                    ids += 1 + list(near).len();
                } else {
                    assert!(ids + 1 + list(near).len() > AHEAD_IDS, "{near} left out");
                    left_out = true;
                    break;
                }
            }
            assert!(!taken.is_empty());
            // A record did not fit: the answer reads ahead no more, around any vertex.
            if left_out {
                misfits += 1;
                assert_eq!(read.probes, AHEAD_PROBES);
                let before = read.records.len();
                let far = store.iri_id(&format!("http://ex/s{:02}", (middle + 40) % 80));
                read.read_ahead(index, (Over::One(p), Direction::Out, far.unwrap()), 1);
                assert_eq!(read.records.len(), before);
            }
        }
        assert!(misfits > 0);
        // Records of 2 ids each, every vertex one: four read aheads far apart, each of
        // which would take 32, take AHEAD_PROBES in all.
        let q = store.predicate_id("http://ex/q").unwrap();
        let mut read = RecordsRead::default();
        for middle in [16, 32, 48, 64] {
            let vertex = store.iri_id(&format!("http://ex/s{middle:02}")).unwrap();
            read.read_ahead(index, (Over::One(q), Direction::Out, vertex), 1);
        }
        assert_eq!(read.records.len(), AHEAD_PROBES);
    }

    fn lists_ids_of(records: &[(RecordKey, Lists)]) -> usize {
        records.iter().map(|(_, lists)| lists_ids(lists)).sum()
    }
}
