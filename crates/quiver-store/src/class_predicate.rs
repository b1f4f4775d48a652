//! The characteristic statistics of the planner: for each class `c`, predicate `p` and side
//! (subjects or objects of `p`), how many instances of `c` are on that side of `p`; and,
//! summed over the classes, how many `rdf:type` edges leave the vertices on each side of a
//! predicate. The sums tell the planner how many types a vertex bound from a predicate has
//! (in BSBM a product has five: its type and their ancestors, while the average subject of
//! `rdf:type` has one), which no per-predicate average can.

use std::sync::{Arc, OnceLock};

use quiver_model::Column;

use crate::graph::Direction;

/// Counts at `(c * predicates + p) * 2 + side` (side 0: subjects, 1: objects), with the
/// per-predicate sums computed on first use and shared by the store's versions.
#[derive(Debug, Default, Clone)]
pub(crate) struct ClassPredicate {
    counts: Column<u64>,
    sums: Arc<OnceLock<Vec<u64>>>,
}

impl From<Column<u64>> for ClassPredicate {
    fn from(counts: Column<u64>) -> Self {
        Self {
            counts,
            sums: Arc::default(),
        }
    }
}

impl From<Vec<u64>> for ClassPredicate {
    fn from(counts: Vec<u64>) -> Self {
        Column::from(counts).into()
    }
}

impl ClassPredicate {
    pub(crate) fn counts(&self) -> &Column<u64> {
        &self.counts
    }

    pub(crate) fn get(&self, index: usize) -> Option<u64> {
        self.counts.get(index).copied()
    }

    pub(crate) fn len(&self) -> usize {
        self.counts.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub(crate) fn data_bytes(&self) -> usize {
        self.counts.data_bytes()
    }

    /// The instances of all classes on `side` of `predicate`, counted once per class: the
    /// `rdf:type` edges that leave those vertices. `predicates` is the width the counts
    /// were computed for; `None` past it.
    pub(crate) fn typed_on_side(
        &self,
        predicate: usize,
        side: Direction,
        predicates: usize,
    ) -> Option<u64> {
        if predicate >= predicates || self.counts.is_empty() {
            return None;
        }
        let sums = self.sums.get_or_init(|| {
            let width = predicates * 2;
            let mut sums = vec![0u64; width];
            for row in self.counts.chunks(width) {
                for (sum, count) in sums.iter_mut().zip(row) {
                    *sum += count;
                }
            }
            sums
        });
        sums.get(predicate * 2 + usize::from(side == Direction::In))
            .copied()
    }
}
