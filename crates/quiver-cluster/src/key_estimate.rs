//! How many distinct keys a worker's rows hold, estimated from a sample before it counts
//! them by those keys (`counted::count_if_smaller`): counting rows whose keys hardly repeat
//! hashes every row to send as many.
//!
//! A prefix of the rows does not tell: 200,000 offers of 20,000 products, in the order of
//! the offers, repeat no product in their first 4,096 rows, yet count to a tenth of their
//! number. So the rows are sampled evenly over the whole table, and the number of keys is
//! estimated from how often each key of the sample came back, by Chao's estimator: the keys
//! seen, plus f1² / 2f2 for those not seen (f1 keys seen once, f2 twice; bias-corrected,
//! f1(f1 − 1) / 2(f2 + 1)). Keys that never repeat in the sample estimate to every row.
//! It errs low on heavy-tailed keys; then the worker hashes its rows for nothing and sends
//! them uncounted, which the caller checks. It errs high on rows grouped by key in runs
//! shorter than the sample's stride (each sampled row a new key); the caller then falls
//! back on the prefix, where such runs repeat.

use std::hash::{Hash, Hasher};

use quiver_model::Id;
use quiver_sparql::table::{Table, VarId, UNBOUND};
use rustc_hash::FxHashMap;

/// Rows sampled at most.
pub(crate) const SAMPLE: usize = 4096;

/// The estimated number of distinct values of `keys` over `rows` (exact when the table has
/// no more rows than [`SAMPLE`]).
pub(crate) fn distinct_keys(rows: &Table, keys: &[VarId]) -> usize {
    let columns: Vec<&[Id]> = keys
        .iter()
        .map(|&k| rows.column(k).unwrap_or(&[]))
        .collect();
    // A row's key as one hash of its values (no allocation per row; a collision only
    // lowers an estimate by one).
    let key = |row: usize| -> u64 {
        let mut hasher = rustc_hash::FxHasher::default();
        for column in &columns {
            column
                .get(row)
                .copied()
                .unwrap_or(UNBOUND)
                .hash(&mut hasher);
        }
        hasher.finish()
    };
    let sampled = rows.rows.min(SAMPLE);
    if sampled == 0 {
        return 0;
    }
    let mut seen: FxHashMap<u64, u32> = FxHashMap::default();
    for i in 0..sampled {
        // Evenly spread over the rows (every row when they are few).
        let row = i * rows.rows / sampled;
        *seen.entry(key(row)).or_default() += 1;
    }
    if sampled == rows.rows {
        return seen.len();
    }
    let once = seen.values().filter(|&&n| n == 1).count() as f64;
    let twice = seen.values().filter(|&&n| n == 2).count() as f64;
    let unseen = once * (once - 1.0).max(0.0) / (2.0 * (twice + 1.0));
    let estimate = seen.len() as f64 + unseen;
    // Keys that never came back: as many as the rows, for all the sample tells.
    if once as usize == sampled {
        return rows.rows;
    }
    (estimate.round() as usize).min(rows.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(keys: impl Iterator<Item = Id>) -> Table {
        let column: Vec<Id> = keys.collect();
        Table {
            vars: vec![7],
            rows: column.len(),
            columns: vec![column],
        }
    }

    /// A pseudo-random sequence (a linear congruential generator), for keys in random
    /// order.
    fn shuffled(count: usize, modulo: u64) -> impl Iterator<Item = Id> {
        let mut state = 12_345u64;
        (0..count).map(move |_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            ((state >> 33) % modulo) as Id
        })
    }

    #[test]
    fn keys_in_random_order_are_estimated_within_a_fifth() {
        for (rows, keys) in [(200_000, 20_000), (200_000, 40_000), (100_000, 1_000)] {
            let estimate = distinct_keys(&table(shuffled(rows, keys)), &[7]) as f64;
            let found = (estimate - keys as f64).abs() / keys as f64;
            assert!(
                found < 0.2,
                "{rows} rows of {keys} keys: estimated {estimate}"
            );
        }
    }

    #[test]
    fn keys_that_never_repeat_are_as_many_as_the_rows() {
        assert_eq!(distinct_keys(&table(0..100_000), &[7]), 100_000);
    }

    #[test]
    fn few_rows_are_counted_exactly() {
        let rows = table([3, 1, 3, 2, 1].into_iter());
        assert_eq!(distinct_keys(&rows, &[7]), 3);
        assert_eq!(distinct_keys(&table(std::iter::empty()), &[7]), 0);
    }
}
