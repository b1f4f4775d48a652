//! The records a light hop's walks read where they ran, sent back with its rows.

use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::Store;
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::walk::{lists_ids, Lists, Over, PlanStep, RecordKey, Walk};
use super::SENT;
use crate::types::values_of;

/// The records a light hop's walks read where they ran, as its answer carries them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct RecordsRead {
    pub(super) records: Vec<(RecordKey, Lists)>,
    #[serde(skip)]
    ids: usize,
    #[serde(skip)]
    taken: FxHashSet<RecordKey>,
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
        for row in 0..rows.rows {
            let vertex = from(row);
            let key = walk.predicate.key(walk.direction, vertex);
            if vertex == UNBOUND || self.taken.contains(&key) {
                continue;
            }
            let lists: Lists = match key.0 {
                Over::One(p) => {
                    let list = index.get(vertex, p, walk.direction);
                    match list.is_empty() {
                        true => Vec::new(),
                        false => vec![(p, list.to_vec())],
                    }
                }
                Over::Every => index
                    .edges(vertex, walk.direction)
                    .iter()
                    .map(|(p, list)| (p, list.to_vec()))
                    .collect(),
            };
            let ids = lists_ids(&lists);
            if self.ids + ids > SENT {
                return;
            }
            self.ids += ids;
            self.taken.insert(key);
            self.records.push((key, lists));
        }
    }
}
