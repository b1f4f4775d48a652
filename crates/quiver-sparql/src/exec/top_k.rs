//! ORDER BY under a LIMIT: the first `k` rows of the order without sorting them all.
//!
//! Each row's keys are computed (as a full sort would) and the row enters a max-heap of at
//! most `k` rows only when it sorts before the heap's last one; ties keep the input order,
//! as the stable full sort does, so the result equals sorting everything and slicing.
//! Memory stays at `k` rows of keys instead of the whole table's.
//!
//! When every key is a variable, rows are compared by the sort keys of their ids
//! (`sort_key.rs`: no decoding for IRIs and simple literals, one decoding per distinct id
//! otherwise), and each morsel of rows keeps its best `k` on a worker thread.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use oxrdf::Term;
use spargebra::algebra::{Expression, OrderExpression};

use super::scope::Scope;
use super::sort_key::{top_rows, RowKeys};
use crate::context::{ensure_addressable, table_bytes, CHECK_STRIDE};
use crate::error::QueryError;
use crate::table::Table;
use crate::top_rows::TopRows;

/// The ORDER BY keys of one row.
pub(crate) type OrderKey = Vec<Option<Term>>;

/// Bytes of one computed ORDER BY key besides the text of its term.
const KEY_BYTES: usize = std::mem::size_of::<Option<Term>>();

/// One row in the heap: its keys and number (the tie-break).
struct Entry<'k> {
    keys: Vec<Option<Term>>,
    row: u32,
    order: &'k [OrderExpression],
}

impl Ord for Entry<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_keys(self.order, &self.keys, &other.keys).then(self.row.cmp(&other.row))
    }
}

impl PartialOrd for Entry<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Entry<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Entry<'_> {}

/// The first `k` rows of `table` in the order of `keys`.
pub(crate) fn top_k(
    evaluator: &dyn Scope,
    table: Table,
    keys: &[OrderExpression],
    k: usize,
) -> Result<Table, QueryError> {
    ensure_addressable(table.rows)?;
    let ctx = evaluator.ctx();
    let k = k.min(table.rows);
    let mut memory = ctx.reservation();
    if let Some(row_keys) = RowKeys::of(evaluator, &mut memory, &table, keys)? {
        memory.try_grow(table_bytes(k, table.columns.len()))?;
        let rows = top_rows(&ctx, table.rows, k, &|a, b| row_keys.compare(a, b))?;
        evaluator.note(format!(
            "top-k: the first {} of {} rows in order, on sort keys of ids",
            rows.len(),
            table.rows
        ));
        return Ok(table.gather(&rows));
    }
    drop(memory);
    let mut heap: BinaryHeap<Entry<'_>> = BinaryHeap::with_capacity(k);
    let mut reservation = ctx.reservation();
    let mut bytes = 0usize;
    if k > 0 {
        for row in 0..table.rows {
            if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
                ctx.check()?;
                reservation.try_resize(bytes)?;
            }
            let values: Vec<Option<Term>> = keys
                .iter()
                .map(|key| match key {
                    OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                        evaluator.expression(e, &table, row)
                    }
                })
                .collect();
            let entry = Entry {
                keys: values,
                row: row as u32,
                order: keys,
            };
            if heap.len() < k {
                bytes += key_bytes(&entry.keys);
                heap.push(entry);
            } else if heap.peek().is_some_and(|worst| entry < *worst) {
                let out = heap.pop().map_or(0, |e| key_bytes(&e.keys));
                bytes = bytes - out + key_bytes(&entry.keys);
                heap.push(entry);
            }
        }
    }
    reservation.try_resize(bytes + table_bytes(k, table.columns.len()))?;
    ctx.check()?;
    let rows: Vec<u32> = heap.into_sorted_vec().iter().map(|e| e.row).collect();
    evaluator.note(format!(
        "top-k: the first {} of {} rows in order, through a heap of at most {k}",
        rows.len(),
        table.rows
    ));
    Ok(table.gather(&rows))
}

impl super::Evaluator<'_> {
    /// What a top-k over `inner` asks of the partitions ([`TopRows`]): when `inner` is a
    /// basic graph pattern that runs on them, every key is a variable of the query and
    /// some ids sort as their terms do; `None` otherwise.
    pub(crate) fn top_over_partitions(
        &self,
        inner: &crate::operator::Operator,
        keys: &[OrderExpression],
        k: usize,
    ) -> Option<TopRows> {
        self.partitions.as_ref()?;
        if !matches!(inner, crate::operator::Operator::Bgp(_)) || k == 0 {
            return None;
        }
        let keys = keys
            .iter()
            .map(|key| {
                let (expression, descending) = match key {
                    OrderExpression::Asc(e) => (e, false),
                    OrderExpression::Desc(e) => (e, true),
                };
                let Expression::Variable(variable) = expression else {
                    return None;
                };
                Some((self.vars.get(variable)?, descending))
            })
            .collect::<Option<Vec<_>>>()?;
        let ordered_below = super::sort_key::ordered_below(self.store);
        (ordered_below > 0).then_some(TopRows {
            keys,
            k,
            ordered_below,
        })
    }
}

/// Bytes of one row's ORDER BY keys.
pub(crate) fn key_bytes(key: &[Option<Term>]) -> usize {
    key.iter()
        .map(|term| KEY_BYTES + term.as_ref().map_or(0, crate::memory::term_text_bytes))
        .sum::<usize>()
        + std::mem::size_of::<Vec<Option<Term>>>()
}

/// The order of two rows' keys under the ORDER BY `keys`.
pub(crate) fn compare_keys(
    keys: &[OrderExpression],
    a: &[Option<Term>],
    b: &[Option<Term>],
) -> Ordering {
    for (k, key) in keys.iter().enumerate() {
        let ordering = quiver_expr::order_terms(a[k].as_ref(), b[k].as_ref());
        let ordering = match key {
            OrderExpression::Asc(_) => ordering,
            OrderExpression::Desc(_) => ordering.reverse(),
        };
        if ordering.is_ne() {
            return ordering;
        }
    }
    Ordering::Equal
}
