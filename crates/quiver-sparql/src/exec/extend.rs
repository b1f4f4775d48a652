//! BIND chains and SELECT expressions: one new column per expression, innermost first.

use oxrdf::Variable;
use quiver_model::Id;
use spargebra::algebra::GraphPattern;

use super::Evaluator;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::Operator;
use crate::table::{Table, UNBOUND};

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
}
