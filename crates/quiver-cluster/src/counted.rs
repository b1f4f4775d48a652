//! Rows counted by the values of a GROUP BY's keys where a worker found them, so that each
//! key leaves a worker once with its count (or once, uncounted, where only the distinct keys
//! are read), and the coordinator's side: the counts taken back out of the rows, and the
//! counts of an index aggregate carried as a table.

use quiver_model::Id;
use quiver_sparql::operator::index_aggregate::Counts;
use quiver_sparql::table::{Table, VarId};

/// The variables of the two columns that hold a count's 32-bit halves after the keys
/// (`count_rows`); no query has this many variables.
pub(crate) const COUNT_HIGH: VarId = VarId::MAX;
pub(crate) const COUNT_LOW: VarId = VarId::MAX - 1;

/// `rows` counted by the values of `keys`: each distinct key once, in order of first
/// appearance, then its count's high and low 32 bits (columns [`COUNT_HIGH`],
/// [`COUNT_LOW`]). A GROUP BY over these columns (or a DISTINCT of them) needs no more of
/// a worker's rows.
#[cfg(test)]
pub(crate) fn count_rows(rows: &Table, keys: &[VarId]) -> Table {
    count_rows_while(rows, keys, |_, _| true).expect("counting goes on")
}

/// `count_rows`, given up (`None`) once `goes_on(rows seen, keys found)` says no: asked
/// after 4,096 rows and at every doubling, so that rows whose keys hardly repeat are not
/// hashed to the end.
fn count_rows_while(
    rows: &Table,
    keys: &[VarId],
    goes_on: impl Fn(usize, usize) -> bool,
) -> Option<Table> {
    let columns: Vec<&[Id]> = keys
        .iter()
        .map(|&k| rows.column(k).unwrap_or(&[]))
        .collect();
    let value = |column: &[Id], row: usize| {
        column
            .get(row)
            .copied()
            .unwrap_or(quiver_sparql::table::UNBOUND)
    };
    // Keys that fit 128 bits together (four 32-bit ids) packed into one integer, more
    // compared as vectors.
    let bits = Id::BITS as usize;
    let (first, counts) = match columns.as_slice() {
        [] => (
            vec![0; rows.rows.min(1)],
            vec![rows.rows as u64; rows.rows.min(1)],
        ),
        [a] => count_by_key(rows.rows, |row| u128::from(value(a, row)), goes_on)?,
        _ if columns.len() * bits <= 128 => count_by_key(
            rows.rows,
            |row| {
                columns
                    .iter()
                    .fold(0u128, |key, c| (key << bits) | u128::from(value(c, row)))
            },
            goes_on,
        )?,
        _ => count_by_key(
            rows.rows,
            |row| columns.iter().map(|c| value(c, row)).collect::<Vec<Id>>(),
            goes_on,
        )?,
    };
    let mut vars = keys.to_vec();
    vars.extend([COUNT_HIGH, COUNT_LOW]);
    let mut out: Vec<Vec<Id>> = columns
        .iter()
        .map(|c| first.iter().map(|&r| value(c, r)).collect())
        .collect();
    out.push(counts.iter().map(|&n| (n >> 32) as Id).collect());
    out.push(counts.iter().map(|&n| n as Id).collect());
    Some(Table {
        vars,
        columns: out,
        rows: first.len(),
    })
}

/// `rows` as they leave a worker under a count by `keys`: counted (`count_rows`) where
/// that makes them smaller, else the rows of `keys` as they are, each standing for itself
/// (found after a few thousand rows where the keys hardly repeat: no more are hashed).
/// Keys nearly unique per row (`MIN(?x)` grouped by `?d` counts by both) count to about as
/// many rows, which would carry the count's two columns more; [`uniform_counts`] joins the
/// two kinds at the coordinator.
pub(crate) fn count_if_smaller(rows: Table, keys: &[VarId]) -> Table {
    let width = keys.len();
    // Keys found in so many rows shrink them past the count's two columns more.
    let shrinks = |seen: usize, found: usize| width == 0 || found * (width + 2) < seen * width;
    // Keys that a sample over all the rows finds repeating are counted to the end; else
    // counting stops where the first rows show that they hardly repeat (rows grouped by
    // key, which the sample misses, repeat there).
    let sampled = crate::key_estimate::distinct_keys(&rows, keys);
    let counted = if shrinks(rows.rows, sampled) {
        count_rows_while(&rows, keys, |_, _| true)
    } else {
        count_rows_while(&rows, keys, shrinks)
    };
    match counted {
        Some(counted) if shrinks(rows.rows, counted.rows) => counted,
        _ => rows.into_reshape(keys),
    }
}

/// `rows` as they leave a worker under a count whose counts are not read
/// ([`crate::message::Plan::distinct_only`]): the rows of `keys` without the repeats that
/// follow each other (an exploration emits a row's matches together: the row numbers an
/// EXISTS pattern seeded with LUBM-100's graduate students found come twice each in a row,
/// and half of them stay home), a pass with no hashing; then counted as any other where keys
/// repeat apart ([`count_if_smaller`]). Hashing every row to drop each repeat cost that
/// EXISTS more than moving its rows between two processes on one machine.
pub(crate) fn distinct_if_smaller(rows: Table, keys: &[VarId]) -> Table {
    let rows = rows.into_reshape(keys);
    let repeats = |row: usize| {
        rows.columns
            .iter()
            .all(|column| column[row] == column[row - 1])
    };
    let keep: Vec<u32> = (0..rows.rows)
        .filter(|&row| row == 0 || !repeats(row))
        .map(|row| row as u32)
        .collect();
    let rows = if keep.len() < rows.rows {
        rows.gather(&keep)
    } else {
        rows
    };
    count_if_smaller(rows, keys)
}

/// The parts of a counted run's answer (the rows each finished message brought), made one
/// shape for [`Table::concat`]: a part a worker sent uncounted ([`count_if_smaller`]) gets
/// a count of one for each row, and every part the counted parts' columns, in their order.
/// Parts of a run that counted nowhere stay as they are ([`counted_rows`] counts each of
/// their rows once).
pub(crate) fn uniform_counts(parts: Vec<Table>) -> Vec<Table> {
    let Some(vars) = parts
        .iter()
        .find(|part| part.column(COUNT_HIGH).is_some())
        .map(|part| part.vars.clone())
    else {
        return parts;
    };
    parts
        .into_iter()
        .map(|mut part| {
            if part.column(COUNT_HIGH).is_none() {
                part.vars.extend([COUNT_HIGH, COUNT_LOW]);
                part.columns.push(vec![0; part.rows]);
                part.columns.push(vec![1; part.rows]);
            }
            part.into_reshape(&vars)
        })
        .collect()
}

/// Rows counted before [`count_rows_while`] first asks whether to go on.
const COUNT_CHECKED_AFTER: usize = 4096;

/// The first row of each distinct `key(row)` over `rows` rows, in order, and its count;
/// `None` once `goes_on(rows seen, keys found)` says no ([`count_rows_while`]).
fn count_by_key<K: std::hash::Hash + Eq>(
    rows: usize,
    key: impl Fn(usize) -> K,
    goes_on: impl Fn(usize, usize) -> bool,
) -> Option<(Vec<usize>, Vec<u64>)> {
    let mut found: rustc_hash::FxHashMap<K, usize> = Default::default();
    let mut first = Vec::new();
    let mut counts: Vec<u64> = Vec::new();
    let mut check = COUNT_CHECKED_AFTER;
    for row in 0..rows {
        if row == check {
            if !goes_on(row, first.len()) {
                return None;
            }
            check *= 2;
        }
        let at = *found.entry(key(row)).or_insert_with(|| {
            first.push(row);
            counts.push(0);
            first.len() - 1
        });
        counts[at] += 1;
    }
    Some((first, counts))
}

/// The keys and counts of `count_rows`'s tables (of every worker, concatenated).
pub(crate) fn counted_rows(table: Table, keys: &[VarId]) -> (Table, Vec<u64>) {
    let (Some(high), Some(low)) = (table.column(COUNT_HIGH), table.column(COUNT_LOW)) else {
        // Rows that were not counted (every route counts them, so none): each stands for
        // itself.
        let counts = vec![1; table.rows];
        return (table.into_reshape(keys), counts);
    };
    let counts = high
        .iter()
        .zip(low)
        .map(|(&h, &l)| (u64::from(h) << 32) | u64::from(l))
        .collect();
    (table.into_reshape(keys), counts)
}

/// A partition's counts as rows: the keys, then each count as two 32-bit halves.
pub(crate) fn counts_table((keys, counts): Counts, keyed: bool) -> Table {
    let rows = counts.first().map_or(keys.len(), Vec::len);
    let mut columns = Vec::new();
    if keyed {
        columns.push(keys);
    }
    for column in counts {
        columns.push(column.iter().map(|&n| (n >> 32) as Id).collect());
        columns.push(column.iter().map(|&n| n as Id).collect());
    }
    Table {
        vars: (0..columns.len()).collect(),
        columns,
        rows,
    }
}

/// The counts of [`counts_table`]'s rows (of every partition, concatenated).
pub(crate) fn table_counts(table: &Table, keyed: bool, width: usize) -> Counts {
    let at = usize::from(keyed);
    let keys = if keyed {
        table.columns.first().cloned().unwrap_or_default()
    } else {
        Vec::new()
    };
    let counts = (0..width)
        .map(|a| {
            let (high, low) = (&table.columns[at + 2 * a], &table.columns[at + 2 * a + 1]);
            high.iter()
                .zip(low)
                .map(|(&h, &l)| (u64::from(h) << 32) | u64::from(l))
                .collect()
        })
        .collect();
    (keys, counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_counted_by_key_add_up_to_a_naive_count() {
        use std::collections::BTreeMap;
        // 3 columns with few distinct values each; counted by none, one, two, three keys.
        let rows = 5_000;
        let table = Table {
            vars: vec![0, 1, 2],
            columns: vec![
                (0..rows).map(|r| (r * 7 % 13) as Id).collect(),
                (0..rows).map(|r| (r * 11 % 5) as Id).collect(),
                (0..rows).map(|r| (r % 3) as Id).collect(),
            ],
            rows,
        };
        for keys in [
            vec![],
            vec![1],
            vec![2, 0],
            vec![0, 1, 2],
            vec![0, 1, 2, 1, 0],
        ] {
            let mut naive: BTreeMap<Vec<Id>, u64> = BTreeMap::new();
            for r in 0..rows {
                *naive
                    .entry(keys.iter().map(|&k| table.value(r, k)).collect())
                    .or_default() += 1;
            }
            // Two workers' counts, concatenated as the coordinator gets them.
            let halves = [table.slice(0, 1_234), table.slice(1_234, rows)];
            let parts = halves.iter().map(|h| count_rows(h, &keys)).collect();
            let (found, counts) = counted_rows(Table::concat(parts), &keys);
            assert_eq!(found.vars, keys);
            let mut summed: BTreeMap<Vec<Id>, u64> = BTreeMap::new();
            for (r, &count) in counts.iter().enumerate() {
                *summed
                    .entry(keys.iter().map(|&k| found.value(r, k)).collect())
                    .or_default() += count;
            }
            assert_eq!(summed, naive, "{keys:?}");
        }
        // Rows that counting would not shrink leave uncounted, and join counted ones.
        let unique = table.slice(0, 13);
        let keys = [0, 2];
        let sent = count_if_smaller(unique.clone(), &keys);
        assert!(sent.column(COUNT_HIGH).is_none(), "{sent:?}");
        let many = Table {
            vars: vec![0, 1],
            columns: vec![(0..10_000).collect(), vec![4; 10_000]],
            rows: 10_000,
        };
        assert!(count_rows_while(&many, &[0, 1], |seen, found| found < seen / 2).is_none());
        let sent_many = count_if_smaller(many, &[1, 0]);
        assert_eq!(
            (sent_many.vars.as_slice(), sent_many.rows),
            (&[1, 0][..], 10_000)
        );
        // Keys that repeat over the rows but not in their first ones (offers of products,
        // in the offers' order): the first rows alone would stop counting, a sample over
        // all of them does not.
        let mut state = 7u64;
        let scattered = Table {
            vars: vec![0],
            columns: vec![(0..40_000)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    ((state >> 33) % 4_000) as Id
                })
                .collect()],
            rows: 40_000,
        };
        let width = 1;
        let prefix_only = |seen: usize, found: usize| found * (width + 2) < seen * width;
        assert!(count_rows_while(&scattered, &[0], prefix_only).is_none());
        let counted = count_if_smaller(scattered, &[0]);
        assert!(
            counted.column(COUNT_HIGH).is_some() && counted.rows == 4_000,
            "{}",
            counted.rows
        );
        let few = count_if_smaller(table.clone(), &keys);
        assert!(few.column(COUNT_HIGH).is_some() && few.rows < table.rows);
        let (found, counts) = counted_rows(Table::concat(uniform_counts(vec![sent, few])), &keys);
        let mut summed: BTreeMap<(Id, Id), u64> = BTreeMap::new();
        for (r, &count) in counts.iter().enumerate() {
            *summed
                .entry((found.value(r, 0), found.value(r, 2)))
                .or_default() += count;
        }
        let mut naive: BTreeMap<(Id, Id), u64> = BTreeMap::new();
        for part in [&unique, &table] {
            for r in 0..part.rows {
                *naive
                    .entry((part.value(r, 0), part.value(r, 2)))
                    .or_default() += 1;
            }
        }
        assert_eq!(summed, naive);
        // A count past 32 bits survives its halves.
        let big = Table {
            vars: vec![0, COUNT_HIGH, COUNT_LOW],
            columns: vec![vec![9], vec![3], vec![7]],
            rows: 1,
        };
        assert_eq!(counted_rows(big, &[0]).1, vec![(3u64 << 32) | 7]);
    }

    #[test]
    fn keys_whose_counts_are_not_read_leave_once_each_where_that_makes_them_fewer() {
        let keys_of = |table: &Table| {
            let mut keys = table.column(3).unwrap().to_vec();
            keys.sort_unstable();
            keys.dedup();
            keys
        };
        // Each key twice in a row (an EXISTS's row numbers): once each, uncounted, and only
        // the keys' column leaves.
        let in_runs = Table {
            vars: vec![3, 5],
            columns: vec![(0..12_000).map(|row| row / 2).collect(), vec![1; 12_000]],
            rows: 12_000,
        };
        let sent = distinct_if_smaller(in_runs, &[3]);
        assert_eq!(sent.vars, vec![3]);
        assert_eq!(sent.columns, vec![(0..6_000).collect::<Vec<Id>>()]);
        // Each key four times, apart: counted as any other count.
        let apart = Table {
            vars: vec![3],
            columns: vec![(0..12_000).map(|row| row % 3_000).collect()],
            rows: 12_000,
        };
        let sent = distinct_if_smaller(apart, &[3]);
        assert!(sent.column(COUNT_HIGH).is_some() && sent.rows == 3_000);
        assert_eq!(keys_of(&sent), (0..3_000).collect::<Vec<Id>>());
        // Keys that never repeat leave as they are, and the coordinator takes each row it
        // gets for one.
        let unique = Table {
            vars: vec![3],
            columns: vec![(0..20_000).rev().collect()],
            rows: 20_000,
        };
        let sent = distinct_if_smaller(unique.clone(), &[3]);
        assert_eq!(sent.columns, unique.columns);
        let (found, counts) = counted_rows(sent, &[3]);
        assert_eq!((found.rows, counts.iter().sum::<u64>()), (20_000, 20_000));
    }
}
