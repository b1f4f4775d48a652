//! A FILTER's answer as ranges of ids, checked where a pattern's rows are found: a
//! `STRSTARTS(?n, "UndergraduateStudent1")` over a pattern that runs on partitions keeps
//! 222,777 of LUBM-100's 795,970 names, so the other 573,193 rows need not leave their
//! workers.
//!
//! Some filters over one variable hold for known ranges of the sorted dictionary's ids
//! (`exec::id_filter`'s shapes: a string prefix, an equality, a `sameTerm`). A worker that
//! has such a filter's ranges drops each row whose id in that column is below the sorted
//! part's end and outside the ranges, and keeps every other row: ids appended after the
//! sort, and unbound values, are left to the FILTER itself, which still runs over what
//! arrives. The caller's FILTER thus gives the same answer over fewer rows. Over a
//! cluster's partitioned dictionary, whose ids do not sort, no ranges are asked.

use std::ops::Range;

use quiver_model::Id;
use serde::{Deserialize, Serialize};

use crate::table::{Table, VarId, UNBOUND};

/// The ids of one column that a FILTER can pass (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassingIds {
    pub var: VarId,
    /// Sorted, disjoint ranges of the ids below `decided_below` that pass.
    pub ranges: Vec<Range<Id>>,
    /// Ids from here on (appended after the dictionary was sorted) are not decided by the
    /// ranges: their rows are kept.
    pub decided_below: Id,
}

impl PassingIds {
    /// Whether a row holding `id` in this column may pass the FILTER.
    pub fn may_pass(&self, id: Id) -> bool {
        if id == UNBOUND || id >= self.decided_below {
            return true;
        }
        let after = self.ranges.partition_point(|range| range.end <= id);
        self.ranges
            .get(after)
            .is_some_and(|range| range.start <= id)
    }

    /// `rows` without those that cannot pass, in their order (all of them when they do
    /// not hold the column yet).
    pub fn keep(&self, rows: Table) -> Table {
        let Some(column) = rows.column(self.var) else {
            return rows;
        };
        if column.iter().all(|&id| self.may_pass(id)) {
            return rows;
        }
        let kept: Vec<u32> = (0..rows.rows)
            .filter(|&row| self.may_pass(column[row]))
            .map(|row| row as u32)
            .collect();
        rows.gather(&kept)
    }

    /// `rows` without those that cannot pass every one of `filters`.
    pub fn keep_all(filters: &[PassingIds], rows: Table) -> Table {
        filters.iter().fold(rows, |rows, filter| filter.keep(rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A row is dropped exactly when its id is decided by the ranges and outside
        /// them; the rows kept keep their order.
        #[test]
        fn only_rows_decided_outside_the_ranges_are_dropped(
            bounds in proptest::collection::btree_set((0 as Id)..200, 0..12),
            ids in proptest::collection::vec(prop_oneof![(0 as Id)..260, Just(UNBOUND)], 0..80),
            decided_below in (100 as Id)..260,
        ) {
            let bounds: Vec<Id> = bounds.into_iter().collect();
            let ranges: Vec<Range<Id>> = bounds.chunks_exact(2).map(|p| p[0]..p[1]).collect();
            let filter = PassingIds { var: 3, ranges: ranges.clone(), decided_below };
            let rows = Table {
                vars: vec![3, 5],
                columns: vec![ids.clone(), (0..ids.len() as Id).collect()],
                rows: ids.len(),
            };
            let kept = filter.keep(rows);
            let expected: Vec<(Id, Id)> = ids
                .iter()
                .enumerate()
                .filter(|(_, &id)| {
                    id == UNBOUND || id >= decided_below || ranges.iter().any(|r| r.contains(&id))
                })
                .map(|(row, &id)| (id, row as Id))
                .collect();
            let found: Vec<(Id, Id)> = kept
                .column(3)
                .unwrap()
                .iter()
                .copied()
                .zip(kept.column(5).unwrap().iter().copied())
                .collect();
            prop_assert_eq!(found, expected);
        }
    }

    #[test]
    fn rows_without_the_column_are_kept() {
        let filter = PassingIds {
            var: 9,
            ranges: Vec::new(),
            decided_below: Id::MAX,
        };
        let rows = Table {
            vars: vec![1],
            columns: vec![vec![1, 2, 3]],
            rows: 3,
        };
        assert_eq!(filter.keep(rows).rows, 3);
    }
}
