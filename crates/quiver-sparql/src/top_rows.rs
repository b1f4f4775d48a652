//! The first rows of an ORDER BY, cut where the rows are found: a top-k over a basic
//! graph pattern that runs on partitions (`ORDER BY ?e LIMIT 100` over a million emails)
//! needs, of each worker's rows, only the `k` that sort first there, so that `k` rows per
//! worker leave it instead of all of them. The caller's top-k over what arrives then
//! gives the same answer (rows tied at the cut may be others, which SPARQL leaves open).
//!
//! A worker compares ids where it can: the ids of a whole store's sorted dictionary below
//! its first language-tagged literal sort as their terms do (blank nodes, IRIs, simple
//! literals; `exec::sort_key`). With ids alone ([`TopRows::cut`]), a row whose keys are
//! all such ids (or unbound, which sorts first) competes for the cut, and any other row (a
//! typed literal, a term appended after the sort) is kept. A worker that holds a copy of
//! the whole dictionary (each partition of a store cut into partitions) also ranks the
//! other ids by their decoded terms, once per distinct id ([`TopRows::cut_with_terms`]),
//! so that every row competes. Over a cluster's partitioned dictionary, whose ids do not
//! sort, no cut is asked and every row is kept.

use quiver_model::Id;
use serde::{Deserialize, Serialize};

use crate::table::{Table, VarId, UNBOUND};

/// Only the first `k` rows in the order of `keys` are read (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopRows {
    /// The ORDER BY's variables in order, each with whether it is descending.
    pub keys: Vec<(VarId, bool)>,
    pub k: usize,
    /// Ids below this sort as their terms do (0: none does).
    pub ordered_below: Id,
}

impl TopRows {
    /// `rows` with only those dropped that at least `k` kept rows of comparable keys sort
    /// before or with; kept rows stay in their order. Only ids that sort by id compare.
    pub fn cut(&self, rows: Table) -> Table {
        if rows.rows <= self.k || self.ordered_below == 0 {
            return rows;
        }
        self.cut_ranked(rows, |id| {
            (id < self.ordered_below).then(|| (u128::from(id) + 1) << 64)
        })
    }

    /// [`TopRows::cut`] where the worker holds the whole store's dictionary (`store`'s, as
    /// each partition of a store cut into partitions does): every key compares, the ids
    /// that do not sort by id (typed and language-tagged literals) decoded once each and
    /// ranked as ORDER BY ranks their terms (`exec::sort_key`'s keys). A row with an id
    /// this dictionary does not hold (a term the query computed) is kept.
    pub fn cut_with_terms(&self, rows: Table, store: &quiver_store::Store) -> Table {
        if rows.rows <= self.k || self.ordered_below == 0 {
            return rows;
        }
        let columns = self.keys.iter().filter_map(|&(var, _)| rows.column(var));
        let keys = crate::term_keys::HeldKeys::of(store, self.ordered_below, columns);
        self.cut_ranked(rows, |id| keys.key(id))
    }

    /// The cut with `key(id)` ranking each bound id of a key column (`None`: it does not
    /// compare, and its row is kept); unbound ranks first.
    fn cut_ranked(&self, rows: Table, key: impl Fn(Id) -> Option<u128>) -> Table {
        let columns: Vec<(Option<&[Id]>, bool)> = self
            .keys
            .iter()
            .map(|&(var, descending)| (rows.column(var), descending))
            .collect();
        let rank = |column: Option<&[Id]>, row: u32| match column.map(|c| c[row as usize]) {
            None | Some(UNBOUND) => Some(0),
            Some(id) => key(id),
        };
        let (mut ranked, mut kept): (Vec<u32>, Vec<u32>) =
            (0..rows.rows as u32).partition(|&row| {
                columns
                    .iter()
                    .all(|&(column, _)| rank(column, row).is_some())
            });
        if ranked.len() <= self.k {
            return rows;
        }
        let order = |a: &u32, b: &u32| {
            for &(column, descending) in &columns {
                let ordering = rank(column, *a).cmp(&rank(column, *b));
                let ordering = if descending {
                    ordering.reverse()
                } else {
                    ordering
                };
                if ordering.is_ne() {
                    return ordering;
                }
            }
            std::cmp::Ordering::Equal
        };
        ranked.select_nth_unstable_by(self.k - 1, order);
        ranked.truncate(self.k);
        kept.extend(ranked);
        kept.sort_unstable();
        rows.gather(&kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rows of `table` as tuples of `vars`.
    fn rows_of(table: &Table, vars: &[VarId]) -> Vec<Vec<Id>> {
        (0..table.rows)
            .map(|row| {
                vars.iter()
                    .map(|&v| table.column(v).map_or(UNBOUND, |c| c[row]))
                    .collect()
            })
            .collect()
    }

    /// A total order of rows standing in for ORDER BY's over terms: ids below
    /// `ordered_below` sort by id, and the others (whose ids do not sort) by a scrambled
    /// value, after them; unbound first.
    fn term_order(row: &[Id], keys: &[(usize, bool)], ordered_below: Id) -> Vec<i128> {
        keys.iter()
            .map(|&(column, descending)| {
                let id = row[column];
                let rank = match id {
                    UNBOUND => -1,
                    id if id < ordered_below => i128::from(id),
                    id => (1 << 40) + i128::from(id.wrapping_mul(2_654_435_761) % 1000),
                };
                if descending {
                    -rank
                } else {
                    rank
                }
            })
            .collect()
    }

    /// The first `k` rows of `rows` in the order of `keys` (a full sort, then the slice),
    /// with the whole row as the final tie-break so that the answer is one.
    fn first(
        rows: &[Vec<Id>],
        keys: &[(usize, bool)],
        k: usize,
        ordered_below: Id,
    ) -> Vec<Vec<Id>> {
        let mut sorted = rows.to_vec();
        sorted.sort_by_key(|row| (term_order(row, keys, ordered_below), row.clone()));
        sorted.truncate(k);
        sorted
    }

    proptest! {
        /// The cut keeps every row a top-k of all the rows needs: the first `k` rows of
        /// what it keeps are the first `k` of all (ties on the keys broken by the whole
        /// row, so that the answer is one), and it keeps at most `k` rows whose keys sort
        /// by id.
        #[test]
        fn a_top_k_of_the_cut_rows_is_the_top_k_of_all(
            rows in proptest::collection::vec((0..12 as Id, 0..12 as Id), 0..80),
            unbound in proptest::collection::vec(any::<bool>(), 80),
            k in 1..10usize,
            ordered_below in 0..14 as Id,
            descending in (any::<bool>(), any::<bool>()),
        ) {
            let (a, b) = (0, 1);
            let first_column: Vec<Id> = rows
                .iter()
                .zip(&unbound)
                .map(|(&(x, _), &u)| if u { UNBOUND } else { x })
                .collect();
            let second_column: Vec<Id> = rows.iter().map(|&(_, y)| y).collect();
            let table = Table {
                vars: vec![a, b],
                rows: rows.len(),
                columns: vec![first_column, second_column],
            };
            let top = TopRows { keys: vec![(a, descending.0), (b, descending.1)], k, ordered_below };
            let all = rows_of(&table, &[a, b]);
            let cut = top.cut(table);
            let kept = rows_of(&cut, &[a, b]);
            let keys = [(0, descending.0), (1, descending.1)];
            prop_assert_eq!(first(&kept, &keys, k, ordered_below), first(&all, &keys, k, ordered_below));
            let sorting = kept
                .iter()
                .filter(|row| row.iter().all(|&id| id == UNBOUND || id < ordered_below))
                .count();
            prop_assert!(sorting <= k || ordered_below == 0 || kept.len() == all.len());
        }
    }

    /// A variable the rows do not bind sorts as unbound: the cut still keeps `k` rows.
    #[test]
    fn a_key_the_rows_lack_counts_as_unbound() {
        let table = Table {
            vars: vec![0],
            columns: vec![(0..10).collect()],
            rows: 10,
        };
        let top = TopRows {
            keys: vec![(5, false), (0, true)],
            k: 3,
            ordered_below: 100,
        };
        assert_eq!(
            rows_of(&top.cut(table), &[0]),
            vec![vec![7], vec![8], vec![9]]
        );
    }
}
