//! MIN and MAX of each group, compared on the sort keys of the values' ids: no decoding for
//! IRIs and simple literals, one term decoded per distinct id otherwise.

use quiver_model::Id;

use crate::context::ExecContext;
use crate::error::QueryError;
use crate::exec::scope::Scope;
use crate::exec::sort_key::{KeyMap, SortKey};
use crate::table::UNBOUND;

use super::{per_morsel, Groups};

/// MIN or MAX of each group, compared on the sort keys of the values' ids (no decoding for
/// IRIs and simple literals, one per distinct id otherwise). A group with an unbound value
/// or one that is no term has no extreme, as when values are compared decoded.
pub(super) fn extremes(
    evaluator: &dyn Scope,
    ctx: &ExecContext<'_>,
    groups: &Groups,
    values: &[Id],
    min: bool,
) -> Result<Vec<Id>, QueryError> {
    let mut memory = ctx.reservation();
    let keys = KeyMap::of(evaluator, &mut memory, &[values])?;
    if keys.all_ordered() {
        memory.try_grow(groups.count * std::mem::size_of::<u64>())?;
        return ordered_extremes(ctx, groups, values, min);
    }
    memory.try_grow(groups.count * (std::mem::size_of::<(SortKey, Id)>() + 1))?;
    // Key 0 (unbound) marks a group that failed; `None` one that has no value yet.
    let better = |slot: &mut Option<(SortKey, Id)>, candidate: Option<(SortKey, Id)>| {
        let Some((key, id)) = candidate else {
            return;
        };
        *slot = match *slot {
            Some((0, _)) => return,
            _ if key == 0 => Some((0, UNBOUND)),
            None => Some((key, id)),
            Some((old, _)) if (key < old) == min && key != old => Some((key, id)),
            kept => kept,
        };
    };
    let parts = per_morsel(
        ctx,
        groups,
        || vec![None; groups.count],
        |best, range| {
            for row in range {
                let id = values[row];
                better(
                    &mut best[groups.of_row[row] as usize],
                    Some((keys.key(id), id)),
                );
            }
        },
    )?;
    // Morsels in row order, so that ties keep the first row's value.
    let mut best: Vec<Option<(SortKey, Id)>> = vec![None; groups.count];
    for part in parts {
        for (slot, candidate) in best.iter_mut().zip(part) {
            better(slot, candidate);
        }
    }
    Ok(best
        .into_iter()
        .map(|slot| match slot {
            Some((key, id)) if key != 0 => id,
            _ => UNBOUND,
        })
        .collect())
}

/// [`extremes`] where every value is UNBOUND or an id that sorts like its term (a whole
/// store's terms of its sorted part): the ids are compared themselves, with no key looked
/// up, one word per group. A group's state is [`NO_VALUE`] before its first value and
/// [`FAILED`] after an unbound one (its extreme is then unbound, as with keys); else the
/// smallest id for MIN, and the largest id plus one for MAX (so that the state before the
/// first value is below every value). Equal ids are the same term, so which row gave the
/// extreme does not matter.
fn ordered_extremes(
    ctx: &ExecContext<'_>,
    groups: &Groups,
    values: &[Id],
    min: bool,
) -> Result<Vec<Id>, QueryError> {
    let empty = if min { NO_VALUE } else { 0 };
    let merge = |state: u64, value: u64| match (state, value) {
        (FAILED, _) | (_, FAILED) => FAILED,
        _ if min => state.min(value),
        _ => state.max(value),
    };
    let parts = per_morsel(
        ctx,
        groups,
        || vec![empty; groups.count],
        |states, range| {
            for (&group, &id) in groups.of_row[range.clone()].iter().zip(&values[range]) {
                let value = match id {
                    UNBOUND => FAILED,
                    id if min => id as u64,
                    id => id as u64 + 1,
                };
                let state = &mut states[group as usize];
                *state = merge(*state, value);
            }
        },
    )?;
    let mut states = vec![empty; groups.count];
    for part in parts {
        for (state, other) in states.iter_mut().zip(part) {
            *state = merge(*state, other);
        }
    }
    Ok(states
        .into_iter()
        .map(|state| match state {
            FAILED | NO_VALUE => UNBOUND,
            0 if !min => UNBOUND,
            state if min => state as Id,
            state => (state - 1) as Id,
        })
        .collect())
}

/// A group of [`ordered_extremes`] with no value yet (for MIN; 0 for MAX).
const NO_VALUE: u64 = u64::MAX;
/// A group of [`ordered_extremes`] that met an unbound value.
const FAILED: u64 = u64::MAX - 1;
