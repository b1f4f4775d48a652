//! The records a light hop's walks read where they ran, sent back with its rows, and
//! those read ahead of them.
//!
//! Read ahead: a light query that crosses to a record's owner pays a round trip (two
//! wake-ups of a thread on each side), several times its steps' time; the next light
//! queries often read the same kind of record of a vertex next to it among the instances
//! of its class (ids are dense in term order: a department's courses, its professors sit
//! together, and the next departments are the next instances of their class; in a
//! cluster loaded by its processes, the terms an owner met one after another). So beside
//! the records a walk read, its answer carries those of the same kind (predicate and
//! direction) of the nearest vertices of its class that the same partition holds (of the
//! nearest ids it owns, for a vertex with no class), as a database reads a page around
//! the row it wants: at most [`AHEAD_IDS`] ids an answer, from at most [`AHEAD_VERTICES`]
//! vertices on each side of one walked, none empty. Measured on the LUBM emulator's mix
//! (LUBM-100, 2 and 4 processes): see ARCHITECTURE.md.

use quiver_model::{Id, PredId};
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
        let around = Around {
            partitions: part.partition_info().map_or(1, |info| info.count),
            rdf_type: part.rdf_type(),
        };
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
            self.read_ahead(index, key, around);
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
    /// same partition owns ([`Around::nearest`]), nearest first, while they fit in
    /// [`AHEAD_IDS`]; empty ones are skipped (never learnt, they are asked as before).
    /// Once a record does not fit, or [`AHEAD_PROBES`] were looked up, the answer reads
    /// ahead no more.
    fn read_ahead(&mut self, index: &GraphIndex, key: RecordKey, around: Around) {
        if self.probes >= AHEAD_PROBES {
            return;
        }
        let (over, direction, vertex) = key;
        for near in around.nearest(index, vertex) {
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

/// What places a partition's vertices next to each other: the cluster's partitions (a
/// partition owns every `partitions`-th id) and `rdf:type`.
#[derive(Debug, Clone, Copy)]
struct Around {
    partitions: u32,
    rdf_type: Option<PredId>,
}

impl Around {
    /// The vertices read ahead of `vertex` (owned by the partition of `index`), nearest
    /// first, at most [`AHEAD_VERTICES`] on each side: its neighbours among the instances
    /// of its class that the partition holds (its first class by id: a department's
    /// neighbours are the next departments, thousands of ids away), else among the ids
    /// the partition owns.
    fn nearest(self, index: &GraphIndex, vertex: Id) -> Vec<Id> {
        let side = AHEAD_VERTICES as usize;
        if let Some(rdf_type) = self.rdf_type {
            if let Some(&class) = index.get(vertex, rdf_type, Direction::Out).first() {
                let instances = index.get(class, rdf_type, Direction::In);
                if let Ok(at) = instances.binary_search(&vertex) {
                    return (1..=side)
                        .flat_map(|k| {
                            [
                                instances.get(at + k),
                                at.checked_sub(k).map(|i| &instances[i]),
                            ]
                        })
                        .flatten()
                        .copied()
                        .collect();
                }
            }
        }
        (1..=AHEAD_VERTICES)
            .filter_map(|k| k.checked_mul(self.partitions.max(1)))
            .map(|step| step as Id)
            .flat_map(|step| [vertex.checked_add(step), vertex.checked_sub(step)])
            .flatten()
            .collect()
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

    /// The default graph's triple `<subject> <predicate> <object>`.
    fn edge(subject: &str, predicate: &str, object: &str) -> Quad {
        let iri = |s: &str| NamedNode::new(s).unwrap();
        Quad::new(
            iri(subject),
            iri(predicate),
            iri(object),
            GraphName::DefaultGraph,
        )
    }

    /// Read ahead around a vertex, on a partition of 2: the records of the nearest
    /// vertices of the same owner, each the store's own and none empty, nearest first with
    /// no gap, within [`AHEAD_IDS`], stopping only at it or past [`AHEAD_VERTICES`].
    #[test]
    fn read_ahead_takes_the_nearest_records_of_the_same_owner() {
        // Subject i has (i mod 4) × 10 objects over p: records of 0, 10, 20 and 30, each
        // subject a q edge so that it exists either way.
        let quads: Vec<Quad> = (0..80)
            .flat_map(|i| {
                let s = format!("http://ex/s{i:02}");
                let q = edge(&s, "http://ex/q", "http://ex/o");
                (0..(i % 4) * 10)
                    .map(move |j| edge(&s, "http://ex/p", &format!("http://ex/o{i}-{j}")))
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
            let around = Around {
                partitions,
                rdf_type: None,
            };
            read.read_ahead(index, (Over::One(p), Direction::Out, vertex), around);
            let mut distances = Vec::new();
            for ((over, direction, near), lists) in &read.records {
                assert_eq!((*over, *direction), (Over::One(p), Direction::Out));
                let distance = near.abs_diff(vertex);
                assert!(
                    distance > 0 && distance.is_multiple_of(partitions as Id),
                    "{near}"
                );
                assert!(distance <= (AHEAD_VERTICES * partitions) as Id, "{near}");
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
                        vertex.checked_add((k * partitions) as Id),
                        vertex.checked_sub((k * partitions) as Id),
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
                let key = (Over::One(p), Direction::Out, far.unwrap());
                read.read_ahead(
                    index,
                    key,
                    Around {
                        partitions: 1,
                        ..around
                    },
                );
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
            let around = Around {
                partitions: 1,
                rdf_type: None,
            };
            read.read_ahead(index, (Over::One(q), Direction::Out, vertex), around);
        }
        assert_eq!(read.records.len(), AHEAD_PROBES);
    }

    /// Read ahead around a vertex with a class: its neighbours among its class's
    /// instances (ids of other classes between them skipped), nearest first; around one
    /// with none, its neighbours in id order.
    #[test]
    fn read_ahead_follows_the_class_of_the_vertex() {
        let rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
        // Subject i (of 60) has one p edge, and class C(i mod 3) below 50.
        let quads: Vec<Quad> = (0..60)
            .flat_map(|i| {
                let s = format!("http://ex/s{i:02}");
                let p = edge(&s, "http://ex/p", &format!("http://ex/o{i}"));
                let class = (i < 50).then(|| edge(&s, rdf_type, &format!("http://ex/C{}", i % 3)));
                [Some(p), class].into_iter().flatten()
            })
            .collect();
        let (store, _) = quiver_loader::load_quads(quads, None).unwrap();
        let p = store.predicate_id("http://ex/p").unwrap();
        let index = store.graph();
        let id = |i: usize| store.iri_id(&format!("http://ex/s{i:02}")).unwrap();
        let around = Around {
            partitions: 1,
            rdf_type: store.rdf_type(),
        };
        assert!(around.rdf_type.is_some());
        // Nearest first among `peers` (sorted), at most 16 each side, as read ahead takes
        // them (every record here is 2 ids: all fit).
        let nearest = |peers: &[Id], vertex: Id| -> Vec<Id> {
            let at = peers.iter().position(|&v| v == vertex).unwrap();
            (1..=AHEAD_VERTICES as usize)
                .flat_map(|k| [peers.get(at + k), at.checked_sub(k).map(|i| &peers[i])])
                .flatten()
                .copied()
                .collect()
        };
        for middle in [25, 1, 48] {
            let mut peers: Vec<Id> = (0..50).filter(|i| i % 3 == middle % 3).map(id).collect();
            peers.sort_unstable();
            let mut read = RecordsRead::default();
            read.read_ahead(index, (Over::One(p), Direction::Out, id(middle)), around);
            let taken: Vec<Id> = read.records.iter().map(|(key, _)| key.2).collect();
            assert_eq!(taken, nearest(&peers, id(middle)), "around {middle}");
        }
        // No class: the subjects nearest in id order that have a p record.
        let mut subjects: Vec<Id> = (0..60).map(id).collect();
        subjects.sort_unstable();
        let vertex = id(55);
        let mut read = RecordsRead::default();
        read.read_ahead(index, (Over::One(p), Direction::Out, vertex), around);
        let taken: Vec<Id> = read.records.iter().map(|(key, _)| key.2).collect();
        let by_id: Vec<Id> = (1..=AHEAD_VERTICES)
            .map(|k| k as Id)
            .flat_map(|k| [vertex.checked_add(k), vertex.checked_sub(k)])
            .flatten()
            .filter(|v| subjects.contains(v))
            .collect();
        assert_eq!(taken, by_id);
    }

    fn lists_ids_of(records: &[(RecordKey, Lists)]) -> usize {
        records.iter().map(|(_, lists)| lists_ids(lists)).sum()
    }
}
