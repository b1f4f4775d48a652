//! ORDER BY: the keys of every row computed once, then a full sort that checks at a stride.
//! Keys that are all variables sort as the sort keys of their ids (`sort_key.rs`), in
//! parallel.

use std::cmp::Ordering;

use oxrdf::Term;
use spargebra::algebra::OrderExpression;

use super::sort_key::{sort_rows, RowKeys};
use super::top_k::{compare_keys, key_bytes, OrderKey};
use super::Evaluator;
use crate::context::{ensure_addressable, table_bytes, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::table::Table;

impl Evaluator<'_> {
    /// The ORDER BY keys of every row, charged to the memory budget.
    pub(crate) fn order_keys(
        &self,
        table: &Table,
        keys: &[OrderExpression],
    ) -> Result<(Vec<OrderKey>, Reservation<'_>), QueryError> {
        let ctx = self.ctx();
        let mut reservation = ctx.reservation();
        let mut values = Vec::with_capacity(table.rows);
        let mut bytes = 0usize;
        for row in 0..table.rows {
            if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
                ctx.check()?;
                reservation.try_resize(bytes)?;
            }
            let key: Vec<Option<Term>> = keys
                .iter()
                .map(|key| match key {
                    OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                        self.expression(e, table, row)
                    }
                })
                .collect();
            bytes += key_bytes(&key);
            values.push(key);
        }
        reservation.try_resize(bytes)?;
        ctx.check()?;
        Ok((values, reservation))
    }

    pub(crate) fn order_by(
        &self,
        table: Table,
        keys: &[OrderExpression],
    ) -> Result<Table, QueryError> {
        ensure_addressable(table.rows)?;
        let ctx = self.ctx();
        let mut memory = ctx.reservation();
        if let Some(row_keys) = RowKeys::of(self, &mut memory, &table, keys)? {
            memory.try_grow(table_bytes(table.rows, table.columns.len()) + table.rows * 8)?;
            let mut order: Vec<u32> = (0..table.rows as u32).collect();
            sort_rows(&ctx, &mut order, &|a, b| row_keys.compare(a, b))?;
            return Ok(table.gather(&order));
        }
        drop(memory);
        let (values, mut reservation) = self.order_keys(&table, keys)?;
        reservation.try_grow(table_bytes(table.rows, table.columns.len()) + table.rows * 4)?;
        let mut order: Vec<u32> = (0..table.rows as u32).collect();
        // A sort cannot stop early: its comparisons check at a stride and, once stopped,
        // call everything equal so that it ends quickly.
        let mut compared = 0usize;
        let mut stopped = None;
        order.sort_by(|&a, &b| {
            if stopped.is_some() {
                return Ordering::Equal;
            }
            compared += 1;
            if compared.is_multiple_of(16 * CHECK_STRIDE) {
                if let Err(error) = ctx.check() {
                    stopped = Some(error);
                    return Ordering::Equal;
                }
            }
            compare_keys(keys, &values[a as usize], &values[b as usize])
        });
        if let Some(error) = stopped {
            return Err(error);
        }
        Ok(table.gather(&order))
    }
}
