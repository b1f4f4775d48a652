//! Values only MIN or MAX read, narrowed where they are found: a GROUP BY over a basic
//! graph pattern that runs on partitions counts the pattern's rows by its keys and the
//! variables its aggregates read (`PartitionedBgp::count_by`), but a variable whose values
//! hardly repeat (`MIN(?e)` over a million e-mail addresses, grouped by class) leaves the
//! counts as many as the rows. When only MIN or MAX read such a variable, a worker needs
//! send of it only each group's least and greatest value: it replaces every other value by
//! one of those two, after which the rows count down to a few per group. Counts, and so
//! COUNT, are unchanged; MIN and MAX read a group's set of values, whose extremes stay.
//!
//! A group here is a combination of the other counted columns (the GROUP BY keys and what
//! the other aggregates and a FILTER counted through read): finer than the coordinator's
//! groups, and one that a filter over those columns keeps or drops whole.
//!
//! A worker compares ids where it can, as a top-k's cut does (`top_rows`): the ids of a
//! whole store's sorted dictionary below its first language-tagged literal sort as their
//! terms do (blank nodes, IRIs, simple literals; `exec::sort_key`). A worker that holds a
//! copy of the whole dictionary (each partition of a store cut into partitions) also ranks
//! the other values (numbers, dates, language-tagged literals) by their decoded terms, once
//! per distinct id ([`ExtremeValues::narrow_with_terms`]). Any value it cannot rank (a term
//! appended after the sort, without that copy) is kept as it is, and the coordinator
//! compares it with the extremes as terms. Over a cluster's partitioned dictionary, whose
//! ids do not sort, nothing is narrowed.

use quiver_model::Id;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::table::{Table, VarId, UNBOUND};

/// Columns whose values only MIN or MAX read (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtremeValues {
    /// Each narrowed column with whether its least and whether its greatest value is read.
    pub columns: Vec<NarrowedColumn>,
    /// Ids below this sort as their terms do (0: none does, and nothing is narrowed).
    pub ordered_below: Id,
}

/// One column of [`ExtremeValues`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NarrowedColumn {
    pub var: VarId,
    /// A MIN reads it.
    pub least: bool,
    /// A MAX reads it.
    pub greatest: bool,
}

impl ExtremeValues {
    /// `rows` with each narrowed column's values that sort by id replaced by its group's
    /// least (or, where only the greatest is read, greatest) such value, except the
    /// greatest where it is read; a group is a combination of the values of the columns of
    /// `counted_by` that are not narrowed.
    pub fn narrow(&self, rows: Table, counted_by: &[VarId]) -> Table {
        if self.ordered_below == 0 || rows.rows == 0 {
            return rows;
        }
        let sorts = |id: Id| id != UNBOUND && id < self.ordered_below;
        self.narrow_ranked(rows, counted_by, |id| sorts(id).then_some(u128::from(id)))
    }

    /// [`ExtremeValues::narrow`] where the worker holds the whole store's dictionary
    /// (`store`'s, as each partition of a store cut into partitions does): the values that
    /// do not sort by id (numbers, dates, language-tagged literals) are decoded once each
    /// and ranked as ORDER BY ranks their terms (`term_keys`), so that they are narrowed
    /// too. A value the dictionary does not hold is kept.
    pub fn narrow_with_terms(
        &self,
        rows: Table,
        counted_by: &[VarId],
        store: &quiver_store::Store,
    ) -> Table {
        if self.ordered_below == 0 || rows.rows == 0 {
            return rows;
        }
        let columns = self.columns.iter().filter_map(|c| rows.column(c.var));
        let keys = crate::term_keys::HeldKeys::of(store, self.ordered_below, columns);
        self.narrow_ranked(rows, counted_by, |id| keys.key(id))
    }

    /// The narrowing with `key(id)` ranking the values of the narrowed columns (`None`: the
    /// value does not compare, and is kept as it is).
    fn narrow_ranked(
        &self,
        mut rows: Table,
        counted_by: &[VarId],
        key: impl Fn(Id) -> Option<u128>,
    ) -> Table {
        let narrowed = |var: &VarId| self.columns.iter().any(|c| c.var == *var);
        let others: Vec<&[Id]> = counted_by
            .iter()
            .filter(|var| !narrowed(var))
            .filter_map(|&var| rows.column(var))
            .collect();
        let (group_of, groups) = group_rows(&others, rows.rows);
        for column in &self.columns {
            let Some(at) = rows.vars.iter().position(|&v| v == column.var) else {
                continue;
            };
            let values = &mut rows.columns[at];
            // Each group's least and greatest value that compares, with its key.
            let mut least: Vec<Option<(u128, Id)>> = vec![None; groups];
            let mut greatest: Vec<Option<(u128, Id)>> = vec![None; groups];
            for (&id, &group) in values.iter().zip(&group_of) {
                let Some(rank) = key(id) else { continue };
                let (low, high) = (&mut least[group as usize], &mut greatest[group as usize]);
                if low.is_none_or(|(k, _)| rank < k) {
                    *low = Some((rank, id));
                }
                if high.is_none_or(|(k, _)| rank > k) {
                    *high = Some((rank, id));
                }
            }
            for (id, &group) in values.iter_mut().zip(&group_of) {
                if key(*id).is_none() {
                    continue;
                }
                let (Some((_, low)), Some((_, high))) =
                    (least[group as usize], greatest[group as usize])
                else {
                    continue;
                };
                *id = match (column.least, column.greatest) {
                    (_, true) if *id == high => high,
                    (true, _) => low,
                    _ => high,
                };
            }
        }
        rows
    }
}

/// The group of each of `rows` rows by the values of `columns` (numbered in order of first
/// appearance), and the number of groups.
fn group_rows(columns: &[&[Id]], rows: usize) -> (Vec<u32>, usize) {
    fn number<K: std::hash::Hash + Eq>(rows: usize, key: impl Fn(usize) -> K) -> (Vec<u32>, usize) {
        let mut found: FxHashMap<K, u32> = FxHashMap::default();
        let group_of = (0..rows)
            .map(|row| {
                let next = found.len() as u32;
                *found.entry(key(row)).or_insert(next)
            })
            .collect();
        (group_of, found.len())
    }
    let bits = Id::BITS as usize;
    match columns {
        [] => (vec![0; rows], 1),
        [a] => number(rows, |row| a[row]),
        _ if columns.len() * bits <= 128 => number(rows, |row| {
            columns
                .iter()
                .fold(0u128, |key, c| (key << bits) | u128::from(c[row]))
        }),
        _ => number(rows, |row| {
            columns.iter().map(|c| c[row]).collect::<Vec<Id>>()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Per group (column 0), the number of rows and the least and greatest value of
    /// column 1 in the order [`term_rank`] gives every id.
    fn summary(table: &Table, ordered_below: Id) -> Vec<(Id, usize, Id, Id)> {
        let (groups, values) = (table.column(0).unwrap(), table.column(1).unwrap());
        let mut out: std::collections::BTreeMap<Id, (usize, Id, Id)> = Default::default();
        for (&group, &value) in groups.iter().zip(values) {
            let rank = |id: Id| term_rank(id, ordered_below);
            let entry = out.entry(group).or_insert((0, value, value));
            entry.0 += 1;
            if rank(value) < rank(entry.1) {
                entry.1 = value;
            }
            if rank(value) > rank(entry.2) {
                entry.2 = value;
            }
        }
        out.into_iter()
            .map(|(g, (n, lo, hi))| (g, n, lo, hi))
            .collect()
    }

    /// An order of terms standing in for SPARQL's: ids below `ordered_below` by id, the
    /// others after them in a scrambled order.
    fn term_rank(id: Id, ordered_below: Id) -> u64 {
        if id < ordered_below {
            u64::from(id)
        } else {
            (1 << 40) + u64::from(id.wrapping_mul(2_654_435_761) % 1000)
        }
    }

    proptest! {
        /// Narrowed rows keep each group's row count and its least and greatest value in
        /// term order, and hold at most two values per group that sort by id.
        #[test]
        fn narrowing_keeps_counts_and_extremes(
            rows in proptest::collection::vec((0u32..5, 0u32..200), 0..300),
            ordered_below in 0u32..220,
            (least, greatest) in prop_oneof![
                Just((true, false)),
                Just((false, true)),
                Just((true, true)),
            ],
        ) {
            let table = Table {
                vars: vec![0, 1],
                columns: vec![
                    rows.iter().map(|r| Id::from(r.0)).collect(),
                    rows.iter().map(|r| Id::from(r.1)).collect(),
                ],
                rows: rows.len(),
            };
            let extremes = ExtremeValues {
                columns: vec![NarrowedColumn { var: 1, least, greatest }],
                ordered_below: Id::from(ordered_below),
            };
            let narrowed = extremes.narrow(table.clone(), &[0, 1]);
            let before = summary(&table, extremes.ordered_below);
            let after = summary(&narrowed, extremes.ordered_below);
            prop_assert_eq!(before.len(), after.len());
            for (b, a) in before.iter().zip(&after) {
                prop_assert_eq!((b.0, b.1), (a.0, a.1));
                if least { prop_assert_eq!(b.2, a.2); }
                if greatest { prop_assert_eq!(b.3, a.3); }
            }
            if ordered_below > 0 {
                let mut sorting: std::collections::BTreeSet<(Id, Id)> = Default::default();
                let groups = narrowed.column(0).unwrap();
                for (&g, &v) in groups.iter().zip(narrowed.column(1).unwrap()) {
                    if v < extremes.ordered_below {
                        sorting.insert((g, v));
                    }
                }
                let kept_per_group = usize::from(least) + usize::from(greatest);
                prop_assert!(sorting.len() <= kept_per_group * before.len());
            }
        }
    }
}
