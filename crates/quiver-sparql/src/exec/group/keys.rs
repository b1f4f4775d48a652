//! Rows grouped by the ids of their key columns: one or two keys packed into one integer,
//! up to 128 bits into a `u128` (each morsel hashed on a worker thread, then the morsels' groups
//! numbered in order of first appearance), wider keys hashed and compared in place.

use quiver_model::Id;
use rustc_hash::FxHashMap;

use crate::context::{ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::exec::parallel::{map_stretches_mut, morsel};
use crate::memory::{Reservation, ID_BYTES};
use crate::table::{Table, VarId, UNBOUND};

/// Bytes of one entry of a group index over `width` key columns.
fn group_entry_bytes(width: usize) -> usize {
    width * ID_BYTES + 4 + 3 * std::mem::size_of::<usize>() + 8
}

/// The group of each row.
pub(in crate::exec) struct Groups {
    pub(in crate::exec) of_row: Vec<u32>,
    /// The first row of each group (its key values).
    pub(in crate::exec) first: Vec<u32>,
    pub(in crate::exec) count: usize,
}

impl Groups {
    /// The key columns of the groups: each group's values of `keys` in `table`, read from
    /// its first row.
    pub(in crate::exec) fn key_columns(&self, table: &Table, keys: &[VarId]) -> Vec<Vec<Id>> {
        keys.iter()
            .map(|&key| match table.column(key) {
                Some(column) => self.first.iter().map(|&r| column[r as usize]).collect(),
                None => vec![UNBOUND; self.count],
            })
            .collect()
    }

    pub(in crate::exec) fn of(
        ctx: &ExecContext<'_>,
        memory: &mut Reservation<'_>,
        table: &Table,
        keys: &[VarId],
    ) -> Result<Self, QueryError> {
        let rows = table.rows;
        let columns: Vec<&[Id]> = keys.iter().filter_map(|&k| table.column(k)).collect();
        memory.try_grow(rows * 4)?;
        if columns.is_empty() {
            // One group: of every row, or (without GROUP BY) the empty group of no rows.
            return Ok(Groups {
                of_row: vec![0; rows],
                first: if rows > 0 { vec![0] } else { Vec::new() },
                count: if keys.is_empty() { 1 } else { rows.min(1) },
            });
        }
        let per_group = group_entry_bytes(columns.len());
        // Keys packed into one integer when they fit, else hashed and compared in place.
        let bits = columns.len() * ID_BYTES * 8;
        let groups = match columns.as_slice() {
            [column] => hash_groups(ctx, memory, per_group, rows, |row| column[row])?,
            [a, b] if bits <= 64 => hash_groups(ctx, memory, per_group, rows, |row| {
                (u64::from(a[row]) << 32) | u64::from(b[row])
            })?,
            _ if bits <= 128 => hash_groups(ctx, memory, per_group, rows, |row| {
                columns
                    .iter()
                    .fold(0u128, |key, c| (key << (ID_BYTES * 8)) | c[row] as u128)
            })?,
            _ => chained_groups(ctx, memory, per_group, &columns, rows)?,
        };
        Ok(groups)
    }
}

/// What one morsel found: each group's key and first row (its rows' groups, numbered in
/// the morsel, are written in place).
struct Partial<K> {
    keys: Vec<K>,
    first: Vec<u32>,
}

/// Groups rows by `key(row)`: each morsel hashes its rows on a worker thread, then the
/// morsels' groups are numbered in order of first appearance (as one pass over the rows
/// would number them) and each morsel's rows renumbered in place.
fn hash_groups<K: Copy + Eq + std::hash::Hash + Send + Sync>(
    ctx: &ExecContext<'_>,
    memory: &mut Reservation<'_>,
    per_group: usize,
    rows: usize,
    key: impl Fn(usize) -> K + Sync,
) -> Result<Groups, QueryError> {
    // One array of the rows' groups, written where it ends up: a table of millions of rows
    // is grouped at the speed its memory is written, and fresh memory costs a page fault
    // per page (measured: a column per morsel renumbered into another and concatenated
    // took half of a grouping's time).
    let mut of_row = vec![0u32; rows];
    let size = morsel(ctx, rows);
    let parts = map_stretches_mut(ctx, &mut of_row, size, |_, range, groups| {
        let mut index: FxHashMap<K, u32> = FxHashMap::default();
        let mut part = Partial {
            keys: Vec::new(),
            first: Vec::new(),
        };
        // The group of the row before: rows of one key often come together (a walk lists
        // each vertex's neighbours in a run, and ids that share an IRI's prefix are
        // neighbours), and then a comparison stands for the hash table's lookup.
        let mut last: Option<(K, u32)> = None;
        for (row, group) in range.zip(groups) {
            let k = key(row);
            *group = match last {
                Some((key, group)) if key == k => group,
                _ => {
                    let next = part.keys.len() as u32;
                    let group = *index.entry(k).or_insert_with(|| {
                        part.keys.push(k);
                        part.first.push(row as u32);
                        next
                    });
                    last = Some((k, group));
                    group
                }
            };
        }
        part
    })?;
    let local: usize = parts.iter().map(|p| p.keys.len()).sum();
    memory.try_grow(local.saturating_mul(per_group))?;
    // Morsel groups to query groups.
    let mut index: FxHashMap<K, u32> = FxHashMap::default();
    let mut first: Vec<u32> = Vec::new();
    let mut renumber: Vec<Vec<u32>> = Vec::with_capacity(parts.len());
    let mut seen = 0usize;
    for part in &parts {
        let mut numbers = Vec::with_capacity(part.keys.len());
        for (&k, &row) in part.keys.iter().zip(&part.first) {
            ctx.tick(seen)?;
            seen += 1;
            let next = first.len() as u32;
            numbers.push(*index.entry(k).or_insert_with(|| {
                first.push(row);
                next
            }));
        }
        renumber.push(numbers);
    }
    // One morsel's numbering is already the query's.
    if parts.len() > 1 {
        map_stretches_mut(ctx, &mut of_row, size, |part, _, groups| {
            let numbers = &renumber[part];
            for group in groups {
                *group = numbers[*group as usize];
            }
        })?;
    }
    let count = first.len();
    memory.try_resize(rows * 4 + count * per_group)?;
    Ok(Groups {
        of_row,
        first,
        count,
    })
}

/// Groups rows by many key columns (wider than 128 bits): a hash of the row's keys
/// chains the groups that share it, compared on their first row, so no key is copied.
fn chained_groups(
    ctx: &ExecContext<'_>,
    memory: &mut Reservation<'_>,
    per_group: usize,
    columns: &[&[Id]],
    rows: usize,
) -> Result<Groups, QueryError> {
    use std::hash::{BuildHasher, Hash, Hasher};
    let base = memory.size();
    let hasher = rustc_hash::FxBuildHasher;
    let mut heads: FxHashMap<u64, u32> = FxHashMap::default();
    // The next group with the same hash (u32::MAX: none).
    let mut chain: Vec<u32> = Vec::new();
    let mut first: Vec<u32> = Vec::new();
    let mut of_row = Vec::with_capacity(rows);
    for row in 0..rows {
        if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
            ctx.check()?;
            memory.try_resize(base + first.len() * per_group)?;
        }
        let mut state = hasher.build_hasher();
        for column in columns {
            column[row].hash(&mut state);
        }
        let hash = state.finish();
        let same = |group: u32| {
            let other = first[group as usize] as usize;
            columns.iter().all(|c| c[other] == c[row])
        };
        let mut found = None;
        let mut at = heads.get(&hash).copied();
        while let Some(group) = at.filter(|&g| g != u32::MAX) {
            if same(group) {
                found = Some(group);
                break;
            }
            at = Some(chain[group as usize]);
        }
        let group = match found {
            Some(group) => group,
            None => {
                let group = first.len() as u32;
                first.push(row as u32);
                chain.push(heads.insert(hash, group).unwrap_or(u32::MAX));
                group
            }
        };
        of_row.push(group);
    }
    let count = first.len();
    memory.try_resize(base + count * per_group)?;
    Ok(Groups {
        of_row,
        first,
        count,
    })
}
