//! Sort keys of term ids: one integer per id that orders as ORDER BY orders the terms, so
//! ORDER BY, top-k, MIN and MAX compare integers instead of decoded terms.
//!
//! The dictionary's sorted part numbers terms in the byte order of their encoding (tag,
//! then text; `quiver_model::term`). For blank nodes, IRIs and simple literals (`xsd:string`)
//! that is exactly the order of ORDER BY (kinds in the order blank < IRI < literal, simple
//! literals first among literals, each kind by its text), and those three kinds hold the
//! base ids below the first language-tagged literal's, `ordered_below`. So:
//!
//! - UNBOUND is key 0 (it sorts first);
//! - a base id `x < ordered_below` is key `(x + 1) << 64`, computed without decoding;
//! - a term of those kinds outside the sorted part (appended by an update, or computed by
//!   the query) is placed by its rank among the sorted terms (a binary search of the
//!   dictionary) between the keys of its neighbours;
//! - language-tagged and typed literals (numbers, dates…), whose ids do not sort like their
//!   values, sort after every term of the three kinds above (so do their keys); they are
//!   decoded once per distinct id and ranked among themselves with `quiver_expr`'s order.
//!
//! Distinct terms get distinct keys, since ORDER BY calls only identical terms equal.

use oxrdf::Term;
use quiver_model::Id;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::parallel::{map_morsels, morsel, on_workers, parallel};
use super::scope::Scope;
use crate::context::ExecContext;
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::table::UNBOUND;

use crate::term_keys::keys_of_terms;
pub(crate) use crate::term_keys::{ordered_below, SortKey};

/// Bytes charged per id that is decoded to get its key.
const DECODED_BYTES: usize = 2 * std::mem::size_of::<Term>() + 64;

/// The sort keys of the ids of some columns.
pub(crate) struct KeyMap {
    ordered_below: Id,
    /// Keys of the ids that are not below `ordered_below` (nor UNBOUND).
    others: FxHashMap<Id, SortKey>,
}

impl KeyMap {
    /// The keys of every id in `columns`: each id that does not sort like its term is
    /// decoded once.
    pub(crate) fn of(
        scope: &dyn Scope,
        memory: &mut Reservation<'_>,
        columns: &[&[Id]],
    ) -> Result<Self, QueryError> {
        let ctx = scope.ctx();
        let ordered_below = ordered_below(ctx.store);
        let mut distinct: FxHashSet<Id> = FxHashSet::default();
        for column in columns {
            distinct.extend(unordered_ids(&ctx, column, ordered_below)?);
        }
        memory.try_grow(distinct.len().saturating_mul(DECODED_BYTES))?;
        let others = keys_of_terms(ctx.store, distinct, |id| scope.term(id), |i| ctx.tick(i))?;
        Ok(Self {
            ordered_below,
            others,
        })
    }

    /// Whether every id the map was built over is UNBOUND or sorts like its term, so that
    /// the ids themselves compare as their keys do.
    pub(crate) fn all_ordered(&self) -> bool {
        self.others.is_empty()
    }

    /// The key of `id` (one of the ids the map was built over).
    #[inline]
    pub(crate) fn key(&self, id: Id) -> SortKey {
        if id < self.ordered_below {
            (u128::from(id) + 1) << 64
        } else if id == UNBOUND {
            0
        } else {
            self.others.get(&id).copied().unwrap_or(0)
        }
    }

    /// The keys of a column, computed on the query's threads.
    pub(crate) fn keys(
        &self,
        ctx: &ExecContext<'_>,
        column: &[Id],
    ) -> Result<Vec<SortKey>, QueryError> {
        let parts = map_morsels(ctx, column.len(), |rows| {
            column[rows]
                .iter()
                .map(|&id| self.key(id))
                .collect::<Vec<_>>()
        })?;
        Ok(parts.concat())
    }
}

/// The distinct ids of `column` that are neither UNBOUND nor below `ordered_below`.
fn unordered_ids(
    ctx: &ExecContext<'_>,
    column: &[Id],
    ordered_below: Id,
) -> Result<FxHashSet<Id>, QueryError> {
    let parts = map_morsels(ctx, column.len(), |rows| {
        column[rows]
            .iter()
            .copied()
            .filter(|&id| id >= ordered_below && id != UNBOUND)
            .collect::<FxHashSet<Id>>()
    })?;
    let mut all = FxHashSet::default();
    for part in parts {
        all.extend(part);
    }
    Ok(all)
}

/// The ORDER BY keys of a table's rows when every key is a variable: one column of sort
/// keys per variable, and whether it is descending.
pub(crate) struct RowKeys {
    columns: Vec<(Vec<SortKey>, bool)>,
}

impl RowKeys {
    /// The keys of `table`'s rows under `order`; `None` when a key is not a plain variable
    /// (the caller evaluates the expressions instead).
    pub(crate) fn of(
        scope: &dyn Scope,
        memory: &mut Reservation<'_>,
        table: &crate::table::Table,
        order: &[spargebra::algebra::OrderExpression],
    ) -> Result<Option<Self>, QueryError> {
        use spargebra::algebra::{Expression, OrderExpression};
        let mut columns = Vec::with_capacity(order.len());
        for key in order {
            let (expression, descending) = match key {
                OrderExpression::Asc(e) => (e, false),
                OrderExpression::Desc(e) => (e, true),
            };
            let Expression::Variable(variable) = expression else {
                return Ok(None);
            };
            // A variable the table does not bind is UNBOUND in every row: no order.
            let Some(column) = scope.var(variable).and_then(|var| table.column(var)) else {
                continue;
            };
            let map = KeyMap::of(scope, memory, &[column])?;
            memory.try_grow(column.len() * std::mem::size_of::<SortKey>())?;
            columns.push((map.keys(&scope.ctx(), column)?, descending));
        }
        Ok(Some(Self { columns }))
    }

    /// The order of rows `a` and `b`: by their keys, then by row number (so an unstable
    /// sort gives the stable order).
    #[inline]
    pub(crate) fn compare(&self, a: u32, b: u32) -> std::cmp::Ordering {
        for (column, descending) in &self.columns {
            let ordering = column[a as usize].cmp(&column[b as usize]);
            if ordering.is_ne() {
                return if *descending {
                    ordering.reverse()
                } else {
                    ordering
                };
            }
        }
        a.cmp(&b)
    }
}

/// The first `k` of rows `0..rows` under `compare` (a total order), in order: each
/// morsel keeps its best `k` rows on a worker thread, and the survivors are sorted.
pub(crate) fn top_rows(
    ctx: &ExecContext<'_>,
    rows: usize,
    k: usize,
    compare: &(impl Fn(u32, u32) -> std::cmp::Ordering + Sync),
) -> Result<Vec<u32>, QueryError> {
    let k = k.min(rows);
    if k == 0 {
        return Ok(Vec::new());
    }
    let parts = map_morsels(ctx, rows, |range| {
        let mut part: Vec<u32> = (range.start as u32..range.end as u32).collect();
        if part.len() > k {
            part.select_nth_unstable_by(k, |&a, &b| compare(a, b));
            part.truncate(k);
        }
        part
    })?;
    let mut best = parts.concat();
    ctx.check()?;
    if best.len() > k {
        best.select_nth_unstable_by(k, |&a, &b| compare(a, b));
        best.truncate(k);
    }
    sort_rows(ctx, &mut best, compare)?;
    Ok(best)
}

/// Sorts row numbers under `compare` on the query's threads: morsels sorted in parallel,
/// then merged pairwise, checking the query's limits between rounds.
pub(crate) fn sort_rows(
    ctx: &ExecContext<'_>,
    rows: &mut [u32],
    compare: &(impl Fn(u32, u32) -> std::cmp::Ordering + Sync),
) -> Result<(), QueryError> {
    let size = morsel(ctx, rows.len());
    if size >= rows.len() || ctx.threads <= 1 || !parallel(rows.len()) {
        // A sort cannot stop early: its comparisons check at a stride and, once stopped,
        // call everything equal so that it ends quickly.
        let mut compared = 0usize;
        let mut stopped = None;
        rows.sort_unstable_by(|&a, &b| {
            if stopped.is_some() {
                return std::cmp::Ordering::Equal;
            }
            compared += 1;
            if compared.is_multiple_of(16 * crate::context::CHECK_STRIDE) {
                if let Err(error) = ctx.check() {
                    stopped = Some(error);
                    return std::cmp::Ordering::Equal;
                }
            }
            compare(a, b)
        });
        return stopped.map_or(Ok(()), Err);
    }
    on_workers(ctx, || {
        rows.par_chunks_mut(size).try_for_each(|part| {
            ctx.check()?;
            part.sort_unstable_by(|&a, &b| compare(a, b));
            Ok::<(), QueryError>(())
        })?;
        let mut scratch = vec![0u32; rows.len()];
        let mut run = size;
        let (mut from, mut to): (&mut [u32], &mut [u32]) = (rows, &mut scratch);
        let mut in_scratch = false;
        while run < from.len() {
            ctx.check()?;
            from.par_chunks(2 * run)
                .zip(to.par_chunks_mut(2 * run))
                .for_each(|(pair, out)| merge(pair, run.min(pair.len()), out, compare));
            std::mem::swap(&mut from, &mut to);
            in_scratch = !in_scratch;
            run *= 2;
        }
        if in_scratch {
            to.copy_from_slice(from);
        }
        Ok(())
    })
}

/// Merges the sorted halves `rows[..middle]` and `rows[middle..]` into `out`.
fn merge(
    rows: &[u32],
    middle: usize,
    out: &mut [u32],
    compare: &impl Fn(u32, u32) -> std::cmp::Ordering,
) {
    let (mut a, mut b) = (0, middle);
    for slot in out.iter_mut() {
        let take_a = b >= rows.len() || (a < middle && compare(rows[a], rows[b]).is_le());
        if take_a {
            *slot = rows[a];
            a += 1;
        } else {
            *slot = rows[b];
            b += 1;
        }
    }
}
