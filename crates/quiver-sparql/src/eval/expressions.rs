//! Where expressions meet tables: FILTER, BIND chains, ORDER BY keys and EXISTS.
//!
//! Terms are decoded from the dictionary only for the variables an expression reads.
//! The expression evaluator sees EXISTS as a boolean; an error while running its pattern
//! (time, cancellation, memory, an unsupported pattern) is recorded in the query's state,
//! so it stops the query at the next check instead of becoming `false`.

use std::cmp::Ordering;
use std::rc::Rc;

use oxrdf::{Term, Variable};
use quiver_model::Id;
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};

use super::Evaluator;
use crate::algebra::{Compiler, Operator};
use crate::context::{ensure_addressable, table_bytes, CHECK_STRIDE};
use crate::error::QueryError;
use crate::join::hash_join;
use crate::memory::{Reservation, ID_BYTES};
use crate::table::{Table, VarId, UNBOUND};
use crate::top_k::{compare_keys, key_bytes, OrderKey};

impl Evaluator<'_> {
    /// A chain of BINDs / SELECT expressions, evaluated innermost first. The expressions of
    /// one chain see one solution per row, so `BNODE(str)` gives the same blank node for the
    /// same string within a row (one scope id per row) and a fresh one in other rows.
    pub(crate) fn extend(&self, mut operator: &Operator) -> Result<Table, QueryError> {
        let mut chain = Vec::new();
        while let Operator::Extend {
            inner,
            var,
            expression,
        } = operator
        {
            chain.push((*var, expression));
            operator = inner;
        }
        let mut table = self.evaluate(operator)?;
        let ctx = self.ctx();
        let scopes = self.expressions.fresh_scope();
        let mut reservation = ctx.reservation();
        for (var, expression) in chain.into_iter().rev() {
            reservation.try_grow(table.rows.saturating_mul(ID_BYTES))?;
            let mut column: Vec<Id> = Vec::with_capacity(table.rows);
            for row in 0..table.rows {
                ctx.tick(row)?;
                let bindings = |variable: &Variable| self.binding(&table, row, variable);
                let exists = |pattern: &GraphPattern| self.exists(pattern, &table, row);
                let scope = scopes.wrapping_add(row as u64);
                column.push(
                    quiver_expr::evaluate_in_scope(
                        expression,
                        &bindings,
                        &exists,
                        &self.expressions,
                        scope,
                    )
                    .map_or(UNBOUND, |term| self.intern(&term)),
                );
            }
            match table.column_of(var) {
                Some(c) => table.columns[c] = column,
                None => {
                    table.vars.push(var);
                    table.columns.push(column);
                }
            }
        }
        Ok(table)
    }

    pub(crate) fn filter(
        &self,
        table: Table,
        expression: &Expression,
    ) -> Result<Table, QueryError> {
        let ctx = self.ctx();
        let mut keep: Vec<u32> = Vec::new();
        for row in 0..table.rows {
            ctx.tick(row)?;
            if self.truth(expression, &table, row) {
                keep.push(row as u32);
            }
        }
        // An error recorded by the last rows' EXISTS must not pass as a result.
        ctx.check()?;
        Ok(table.gather(&keep))
    }

    pub(crate) fn truth(&self, expression: &Expression, table: &Table, row: usize) -> bool {
        let bindings = |variable: &Variable| self.binding(table, row, variable);
        let exists = |pattern: &GraphPattern| self.exists(pattern, table, row);
        quiver_expr::filter(expression, &bindings, &exists, &self.expressions)
    }

    pub(crate) fn expression(
        &self,
        expression: &Expression,
        table: &Table,
        row: usize,
    ) -> Option<Term> {
        let bindings = |variable: &Variable| self.binding(table, row, variable);
        let exists = |pattern: &GraphPattern| self.exists(pattern, table, row);
        quiver_expr::evaluate(expression, &bindings, &exists, &self.expressions)
    }

    pub(crate) fn binding(&self, table: &Table, row: usize, variable: &Variable) -> Option<Term> {
        let var = self.vars.borrow().get(variable)?;
        self.term(table.value(row, var))
    }

    /// FILTER (NOT) EXISTS: runs the pattern, on the graph of the filter, seeded with the
    /// current row. Each pattern is compiled once per graph; the cache is not borrowed while
    /// the pattern runs, so EXISTS may nest. An error is recorded (see the module doc) and
    /// answers `false` until the next check stops the query.
    pub(crate) fn exists(&self, pattern: &GraphPattern, table: &Table, row: usize) -> bool {
        if self.state.error().is_some() {
            return false;
        }
        let found = self.scoped(|| {
            let operator = self.exists_operator(pattern)?;
            let seed = table.gather(&[row as u32]);
            let bound: Vec<VarId> = seed
                .vars
                .iter()
                .copied()
                .filter(|&v| seed.value(0, v) != UNBOUND)
                .collect();
            Ok(self.substituted(&operator, &seed.reshape(&bound))?.rows > 0)
        });
        found.unwrap_or_else(|error: QueryError| {
            self.state.fail(error);
            false
        })
    }

    /// Evaluates `operator` with the bindings of `seed` (one row, bound columns only)
    /// substituted, as EXISTS requires: basic graph patterns run seeded with the row and
    /// keep its columns, so every filter inside sees the row's values; joins and unions
    /// pass the row down; other operators run alone and are joined with the row.
    fn substituted(&self, operator: &Operator, seed: &Table) -> Result<Table, QueryError> {
        let ctx = self.ctx();
        Ok(match operator {
            Operator::Bgp(planned) => {
                let mut local = planned.clone();
                let steps = crate::planner::plan(
                    &planned.bgp,
                    self.store,
                    self.context(planned.graph).graph,
                    &seed.vars,
                    1.0,
                );
                local.seeded = Some((seed.vars.clone(), steps));
                self.bgp(&local, seed.clone(), true, None)?
            }
            Operator::Join(a, b) => hash_join(
                &ctx,
                &self.substituted(a, seed)?,
                &self.substituted(b, seed)?,
                false,
            )?,
            Operator::Union(a, b) => {
                super::union(&ctx, self.substituted(a, seed)?, self.substituted(b, seed)?)?
            }
            Operator::Filter(expression, inner, graph) => {
                let table = self.substituted(inner, seed)?;
                let outer = self.active_graph.replace(*graph);
                let table = self.filter(table, expression);
                self.active_graph.set(outer);
                table?
            }
            other => hash_join(&ctx, seed, &self.evaluate(other)?, false)?,
        })
    }

    /// The operator of an EXISTS pattern on the active graph, compiled once per graph.
    pub(crate) fn exists_operator(
        &self,
        pattern: &GraphPattern,
    ) -> Result<Rc<Operator>, QueryError> {
        let graph = self.active_graph.get();
        let key = (pattern as *const GraphPattern as usize, graph);
        if let Some(operator) = self.exists_cache.borrow().get(&key) {
            return Ok(operator.clone());
        }
        let vars = std::mem::take(&mut *self.vars.borrow_mut());
        let mut compiler = Compiler::new(self.store, None);
        compiler.vars = vars;
        compiler.dataset = self.dataset.clone();
        let compiled = compiler.compile(pattern, graph);
        *self.vars.borrow_mut() = compiler.vars;
        let operator = Rc::new(compiled?);
        self.exists_cache.borrow_mut().insert(key, operator.clone());
        Ok(operator)
    }

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
