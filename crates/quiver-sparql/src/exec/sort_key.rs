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

use oxrdf::vocab::xsd;
use oxrdf::Term;
use quiver_model::term::{encode_term, TAG_LANG};
use quiver_model::Id;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::parallel::{map_morsels, morsel, on_workers, parallel};
use super::scope::Scope;
use crate::context::ExecContext;
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::table::UNBOUND;

/// An ORDER BY key of one term.
pub(crate) type SortKey = u128;

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
        let others = keys_of_terms(
            ctx.store.dictionary(),
            distinct,
            |id| scope.term(id),
            |i| ctx.tick(i),
        )?;
        Ok(Self {
            ordered_below,
            others,
        })
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
}

/// The keys of `ids` (none below the dictionary's `ordered_below`, none UNBOUND), each
/// decoded once with `term`: terms of the kinds that sort by encoding placed among the
/// dictionary's sorted terms, other literals ranked among themselves after them, and an
/// id `term` does not know sorting as UNBOUND does (key 0). `tick(i)` runs before the
/// `i`th id (the query's checks).
pub(crate) fn keys_of_terms(
    dictionary: &quiver_model::Dictionary,
    ids: impl IntoIterator<Item = Id>,
    term: impl Fn(Id) -> Option<Term>,
    mut tick: impl FnMut(usize) -> Result<(), QueryError>,
) -> Result<FxHashMap<Id, SortKey>, QueryError> {
    // Terms of the kinds that sort by encoding, placed among the sorted terms, and the
    // other literals, ranked among themselves.
    let mut placed: Vec<(u64, Vec<u8>, Id)> = Vec::new();
    let mut ranked: Vec<(Option<Term>, Id)> = Vec::new();
    for (i, id) in ids.into_iter().enumerate() {
        tick(i)?;
        let term = term(id);
        match &term {
            Some(term) if sorts_by_encoding(term) => {
                let mut bytes = Vec::new();
                encode_term(term.as_ref(), &mut bytes);
                placed.push((dictionary.rank(&bytes), bytes, id));
            }
            _ => ranked.push((term, id)),
        }
    }
    let mut others =
        FxHashMap::with_capacity_and_hasher(placed.len() + ranked.len(), Default::default());
    placed.sort_unstable();
    let mut previous: Option<u64> = None;
    let mut next = 0u128;
    for (rank, _, id) in placed {
        if previous != Some(rank) {
            previous = Some(rank);
            next = u128::from(rank) << 64;
        }
        next += 1;
        others.insert(id, next);
    }
    // Each literal's value parsed once, not at each comparison.
    let mut order: Vec<(Option<quiver_expr::OrderedTerm<'_>>, Id)> = ranked
        .iter()
        .map(|(term, id)| (term.as_ref().map(quiver_expr::OrderedTerm::new), *id))
        .collect();
    order.sort_unstable();
    // After every key placed among the sorted terms, whose ranks are at most the first
    // language-tagged literal's (which is above `ordered_below` in a cluster's share
    // of a dictionary, whose ids do not sort: there `ordered_below` is 0).
    let start = (u128::from(dictionary.rank(&[TAG_LANG])) + 1) << 64;
    let mut rank = 0u128;
    for (i, &(term, id)) in order.iter().enumerate() {
        if term.is_none() {
            // Not a term: sorts as UNBOUND does.
            others.insert(id, 0);
            continue;
        }
        if i > 0 && order[i - 1].0 != term {
            rank += 1;
        }
        others.insert(id, start + rank);
    }
    Ok(others)
}

impl KeyMap {
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

/// The ids below which ids sort as their terms do in `store`'s dictionary: its sorted
/// part, up to the first language-tagged literal (0 for a cluster's share of a
/// dictionary, whose ids do not sort).
pub(crate) fn ordered_below(store: &quiver_store::Store) -> Id {
    let dictionary = store.dictionary();
    Id::try_from(dictionary.rank(&[TAG_LANG]).min(dictionary.ordered_below())).unwrap_or(Id::MAX)
}

/// Whether a term is of a kind whose encoding sorts like ORDER BY: blank node, IRI or
/// simple literal.
fn sorts_by_encoding(term: &Term) -> bool {
    match term {
        Term::BlankNode(_) | Term::NamedNode(_) => true,
        Term::Literal(literal) => literal.language().is_none() && literal.datatype() == xsd::STRING,
        Term::Triple(_) => false,
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
