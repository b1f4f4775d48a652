//! Relational joins over tables with SPARQL's compatibility semantics: a hash join on the
//! shared variables (rows with an unbound shared variable are matched by a scan), and MINUS.
//!
//! Both check the query's limits every few thousand rows or row pairs, and charge their
//! hash index and output to its memory budget as they grow.

use quiver_model::Id;
use rustc_hash::FxHashMap;

use crate::context::{ensure_addressable, table_bytes, ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::table::{Table, VarId, UNBOUND};

/// The hidden column that numbers the left rows of an OPTIONAL (seeded or hashed).
pub(crate) const ROW_VAR: VarId = usize::MAX;

/// Bytes of one entry of a hash index over `width` key columns (key, row number, the
/// table's own overhead).
fn entry_bytes(width: usize) -> usize {
    width * ID_BYTES + 4 + 3 * std::mem::size_of::<usize>() + 16
}

/// Joins compatible rows (SPARQL semantics: an unbound value is compatible with any).
/// With `track_rows`, the result carries the left row number in the `ROW_VAR` column.
pub(crate) fn hash_join(
    ctx: &ExecContext<'_>,
    left: &Table,
    right: &Table,
    track_rows: bool,
) -> Result<Table, QueryError> {
    ensure_addressable(left.rows)?;
    ensure_addressable(right.rows)?;
    let common: Vec<VarId> = left
        .vars
        .iter()
        .copied()
        .filter(|v| right.vars.contains(v) && *v != ROW_VAR)
        .collect();
    let mut vars = left.vars.clone();
    vars.extend(right.vars.iter().filter(|v| !left.vars.contains(v)));
    let track_rows = track_rows && !left.vars.contains(&ROW_VAR);
    if track_rows {
        vars.push(ROW_VAR);
    }
    let mut index_memory = ctx.reservation();
    index_memory.try_grow(right.rows.saturating_mul(entry_bytes(common.len())))?;
    let mut index: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
    let mut wildcards: Vec<u32> = Vec::new();
    for row in 0..right.rows {
        ctx.tick(row)?;
        let key: Vec<Id> = common.iter().map(|&v| right.value(row, v)).collect();
        if key.contains(&UNBOUND) {
            wildcards.push(row as u32);
        } else {
            index.entry(key).or_default().push(row as u32);
        }
    }
    let left_columns: Vec<Option<&[Id]>> = vars.iter().map(|&v| left.column(v)).collect();
    let right_columns: Vec<Option<&[Id]>> = vars.iter().map(|&v| right.column(v)).collect();
    let mut result = Table::empty(vars.clone());
    let mut output_memory = ctx.reservation();
    let mut visited = 0usize;
    let mut push = |result: &mut Table, l: usize, r: usize| -> Result<(), QueryError> {
        for (c, &var) in vars.iter().enumerate() {
            let value = if var == ROW_VAR && track_rows {
                l as Id
            } else {
                match left_columns[c].map(|column| column[l]) {
                    Some(lv) if lv != UNBOUND => lv,
                    _ => right_columns[c].map_or(UNBOUND, |column| column[r]),
                }
            };
            result.columns[c].push(value);
        }
        result.rows += 1;
        if result.rows.is_multiple_of(CHECK_STRIDE) {
            output_memory.try_resize(table_bytes(result.rows, vars.len()))?;
        }
        Ok(())
    };
    let compatible = |l: usize, r: usize| {
        common.iter().all(|&v| {
            let (a, b) = (left.value(l, v), right.value(r, v));
            a == UNBOUND || b == UNBOUND || a == b
        })
    };
    for l in 0..left.rows {
        ctx.tick(l)?;
        let key: Vec<Id> = common.iter().map(|&v| left.value(l, v)).collect();
        if key.contains(&UNBOUND) {
            for r in 0..right.rows {
                visited += 1;
                ctx.tick(visited)?;
                if compatible(l, r) {
                    push(&mut result, l, r)?;
                }
            }
            continue;
        }
        if let Some(rows) = index.get(&key) {
            for &r in rows {
                visited += 1;
                ctx.tick(visited)?;
                push(&mut result, l, r as usize)?;
            }
        }
        for &r in &wildcards {
            visited += 1;
            ctx.tick(visited)?;
            if compatible(l, r as usize) {
                push(&mut result, l, r as usize)?;
            }
        }
    }
    Ok(result)
}

/// MINUS: drops left rows compatible with a right row sharing at least one bound variable.
/// Right rows binding every shared variable are found through a hash index; the others
/// (some shared variable unbound) are scanned for each left row.
pub(crate) fn minus(
    ctx: &ExecContext<'_>,
    left: Table,
    right: &Table,
) -> Result<Table, QueryError> {
    ensure_addressable(left.rows)?;
    let common: Vec<VarId> = left
        .vars
        .iter()
        .copied()
        .filter(|v| right.vars.contains(v))
        .collect();
    if common.is_empty() {
        return Ok(left);
    }
    let mut memory = ctx.reservation();
    memory.try_grow(right.rows.saturating_mul(entry_bytes(common.len())))?;
    let mut complete: rustc_hash::FxHashSet<Vec<Id>> = rustc_hash::FxHashSet::default();
    let mut partial: Vec<usize> = Vec::new();
    for r in 0..right.rows {
        ctx.tick(r)?;
        let key: Vec<Id> = common.iter().map(|&v| right.value(r, v)).collect();
        if key.contains(&UNBOUND) {
            partial.push(r);
        } else {
            complete.insert(key);
        }
    }
    let removes = |l: usize, r: usize| {
        let mut shared = false;
        let compatible = common.iter().all(|&v| {
            let (a, b) = (left.value(l, v), right.value(r, v));
            if a != UNBOUND && b != UNBOUND {
                shared = true;
                a == b
            } else {
                true
            }
        });
        compatible && shared
    };
    let mut keep: Vec<u32> = Vec::new();
    let mut visited = 0usize;
    for l in 0..left.rows {
        ctx.tick(l)?;
        let key: Vec<Id> = common.iter().map(|&v| left.value(l, v)).collect();
        let mut removed = !key.contains(&UNBOUND) && complete.contains(&key);
        if !removed {
            // A left row with unbound shared variables may meet complete right rows on
            // the ones it binds: scan those too.
            let candidates: Box<dyn Iterator<Item = usize>> = if key.contains(&UNBOUND) {
                Box::new(0..right.rows)
            } else {
                Box::new(partial.iter().copied())
            };
            for r in candidates {
                visited += 1;
                ctx.tick(visited)?;
                if removes(l, r) {
                    removed = true;
                    break;
                }
            }
        }
        if !removed {
            keep.push(l as u32);
        }
    }
    Ok(left.gather(&keep))
}
