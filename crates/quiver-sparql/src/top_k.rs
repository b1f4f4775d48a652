//! ORDER BY under a LIMIT: the first `k` rows of the order without sorting them all.
//!
//! Each row's keys are computed (as a full sort would) and the row enters a max-heap of at
//! most `k` rows only when it sorts before the heap's last one; ties keep the input order,
//! as the stable full sort does, so the result equals sorting everything and slicing.
//! Memory stays at `k` rows of keys instead of the whole table's.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use oxrdf::Term;
use spargebra::algebra::OrderExpression;

use crate::context::{ensure_addressable, table_bytes, CHECK_STRIDE};
use crate::error::QueryError;
use crate::eval::expressions::{compare_keys, key_bytes};
use crate::eval::Evaluator;
use crate::table::Table;

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
    evaluator: &Evaluator<'_>,
    table: Table,
    keys: &[OrderExpression],
    k: usize,
) -> Result<Table, QueryError> {
    ensure_addressable(table.rows)?;
    let ctx = evaluator.ctx();
    let k = k.min(table.rows);
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
    evaluator.notes.borrow_mut().push(format!(
        "top-k: the first {} of {} rows in order, through a heap of at most {k}",
        rows.len(),
        table.rows
    ));
    Ok(table.gather(&rows))
}
