//! The build side of a hash join, indexed by the shared variables each row binds.
//!
//! SPARQL joins an unbound value with anything, so a row that leaves some shared variables
//! unbound cannot sit in one hash index keyed by all of them. Scanning such rows for every
//! probe row is quadratic: BSBM BI Q5 joins 63,630 rows with 12,898 rows whose `?country`
//! is unbound (their subquery groups by a variable it never binds), 820 million checks.
//! Instead, rows are grouped by which shared variables they bind (a bit mask), and a probe
//! row looks each group up by the variables both bind: an index per (group, variables)
//! pair, built the first time a probe needs it. Rows in a group that shares no bound
//! variable with the probe are all compatible. The rows binding every shared variable are
//! indexed by all of them at once, as a plain hash join's build side.

use quiver_model::Id;
use rustc_hash::FxHashMap;

use crate::error::QueryError;
use crate::memory::{Reservation, ID_BYTES};
use crate::table::{Table, VarId, UNBOUND};

/// Bytes of one entry of a hash index over `width` key columns (key, row number, the
/// table's own overhead).
pub(super) fn entry_bytes(width: usize) -> usize {
    width * ID_BYTES + 4 + 3 * std::mem::size_of::<usize>() + 16
}

/// Rows of the build side binding the same shared variables.
struct Group {
    /// Bit `i`: the row binds `common[i]`.
    mask: u64,
    rows: Vec<u32>,
    /// Indexes by the values of a subset of `mask`'s variables (the subset's bits).
    indexes: FxHashMap<u64, FxHashMap<Vec<Id>, Vec<u32>>>,
}

/// A hash join's build side (see the module doc).
pub(super) struct KeyIndex<'t> {
    table: &'t Table,
    common: &'t [VarId],
    groups: Vec<Group>,
}

/// The bits of `key`'s bound values.
fn mask_of(key: &[Id]) -> u64 {
    key.iter()
        .enumerate()
        .filter(|(_, &id)| id != UNBOUND)
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The values of `key` at the bits of `mask`.
fn key_at(key: &[Id], mask: u64) -> Vec<Id> {
    key.iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, &id)| id)
        .collect()
}

impl<'t> KeyIndex<'t> {
    /// Indexes the rows of `table` by `common`, charging the index to `memory`; `tick` is
    /// called per row (the query's limits).
    pub(super) fn build(
        table: &'t Table,
        common: &'t [VarId],
        memory: &mut Reservation<'_>,
        tick: &mut dyn FnMut(usize) -> Result<(), QueryError>,
    ) -> Result<Self, QueryError> {
        if common.len() > 64 {
            return Err(QueryError::Unsupported(format!(
                "a join on {} shared variables (at most 64)",
                common.len()
            )));
        }
        let full = if common.len() == 64 {
            u64::MAX
        } else {
            (1u64 << common.len()) - 1
        };
        memory.try_grow(table.rows.saturating_mul(entry_bytes(common.len())))?;
        let mut groups: Vec<Group> = Vec::new();
        let mut whole: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
        let mut key = Vec::with_capacity(common.len());
        for row in 0..table.rows {
            tick(row)?;
            key.clear();
            key.extend(common.iter().map(|&v| table.value(row, v)));
            let mask = mask_of(&key);
            if mask == full {
                whole.entry(key.clone()).or_default().push(row as u32);
            }
            match groups.iter_mut().find(|g| g.mask == mask) {
                Some(group) => group.rows.push(row as u32),
                None => groups.push(Group {
                    mask,
                    rows: vec![row as u32],
                    indexes: FxHashMap::default(),
                }),
            }
        }
        if let Some(group) = groups.iter_mut().find(|g| g.mask == full) {
            group.indexes.insert(full, whole);
        }
        Ok(Self {
            table,
            common,
            groups,
        })
    }

    /// The rows compatible with a probe row whose values of the shared variables are
    /// `key` (UNBOUND where unbound), ascending, into `out`.
    pub(super) fn matches(
        &mut self,
        key: &[Id],
        memory: &mut Reservation<'_>,
        out: &mut Vec<u32>,
    ) -> Result<(), QueryError> {
        out.clear();
        let probe = mask_of(key);
        let mut contributing = 0;
        for group in &mut self.groups {
            let shared = probe & group.mask;
            if shared == 0 {
                out.extend_from_slice(&group.rows);
                contributing += 1;
                continue;
            }
            if !group.indexes.contains_key(&shared) {
                memory.try_grow(
                    group
                        .rows
                        .len()
                        .saturating_mul(entry_bytes(shared.count_ones() as usize)),
                )?;
                let mut index: FxHashMap<Vec<Id>, Vec<u32>> = FxHashMap::default();
                let mut row_key = Vec::with_capacity(self.common.len());
                for &row in &group.rows {
                    row_key.clear();
                    row_key.extend(
                        self.common
                            .iter()
                            .map(|&v| self.table.value(row as usize, v)),
                    );
                    index.entry(key_at(&row_key, shared)).or_default().push(row);
                }
                group.indexes.insert(shared, index);
            }
            let index = &group.indexes[&shared];
            // A probe binding every shared variable looks up by its own key, uncopied.
            let rows = if shared.count_ones() as usize == key.len() {
                index.get(key)
            } else {
                index.get(&key_at(key, shared))
            };
            if let Some(rows) = rows {
                out.extend_from_slice(rows);
                contributing += 1;
            }
        }
        if contributing > 1 {
            out.sort_unstable();
        }
        Ok(())
    }
}
