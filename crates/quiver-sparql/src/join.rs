//! Relational joins over tables with SPARQL's compatibility semantics: a hash join on the
//! shared variables (rows with an unbound shared variable are matched by a scan), and MINUS.

use quiver_model::Id;
use rustc_hash::FxHashMap;

use crate::table::{Table, VarId, UNBOUND};

/// The hidden column that numbers the left rows of an OPTIONAL (seeded or hashed).
pub(crate) const ROW_VAR: VarId = usize::MAX;

/// Joins compatible rows (SPARQL semantics: an unbound value is compatible with any).
/// With `track_rows`, the result carries the left row number in the `ROW_VAR` column.
pub(crate) fn hash_join(left: &Table, right: &Table, track_rows: bool) -> Table {
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
    let mut index: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
    let mut wildcards: Vec<u32> = Vec::new();
    for row in 0..right.rows {
        let key: Vec<Id> = common.iter().map(|&v| right.value(row, v)).collect();
        if key.contains(&UNBOUND) {
            wildcards.push(row as u32);
        } else {
            index.entry(key).or_default().push(row as u32);
        }
    }
    let mut result = Table::empty(vars.clone());
    let mut push = |l: usize, r: usize| {
        for (c, &var) in vars.iter().enumerate() {
            let value = if var == ROW_VAR && track_rows {
                l as Id
            } else {
                let lv = left.value(l, var);
                if lv != UNBOUND {
                    lv
                } else {
                    right.value(r, var)
                }
            };
            result.columns[c].push(value);
        }
        result.rows += 1;
    };
    let compatible = |l: usize, r: usize| {
        common.iter().all(|&v| {
            let (a, b) = (left.value(l, v), right.value(r, v));
            a == UNBOUND || b == UNBOUND || a == b
        })
    };
    for l in 0..left.rows {
        let key: Vec<Id> = common.iter().map(|&v| left.value(l, v)).collect();
        if key.contains(&UNBOUND) {
            for r in 0..right.rows {
                if compatible(l, r) {
                    push(l, r);
                }
            }
            continue;
        }
        if let Some(rows) = index.get(&key) {
            for &r in rows {
                push(l, r as usize);
            }
        }
        for &r in &wildcards {
            if compatible(l, r as usize) {
                push(l, r as usize);
            }
        }
    }
    result
}

/// MINUS: drops left rows compatible with a right row sharing at least one bound variable.
pub(crate) fn minus(left: Table, right: &Table) -> Table {
    let common: Vec<VarId> = left
        .vars
        .iter()
        .copied()
        .filter(|v| right.vars.contains(v))
        .collect();
    if common.is_empty() {
        return left;
    }
    let keep: Vec<u32> = (0..left.rows)
        .filter(|&l| {
            !(0..right.rows).any(|r| {
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
            })
        })
        .map(|l| l as u32)
        .collect();
    left.gather(&keep)
}
