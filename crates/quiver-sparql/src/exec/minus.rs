//! MINUS: drops left rows compatible with a right row sharing at least one bound variable.
//!
//! It checks the query's limits every few thousand rows or row pairs, and charges its hash
//! index to its memory budget as it grows.

use quiver_model::Id;

use crate::context::{ensure_addressable, ExecContext};
use crate::error::QueryError;
use crate::table::{Table, VarId, UNBOUND};

use super::key_index::entry_bytes;

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
