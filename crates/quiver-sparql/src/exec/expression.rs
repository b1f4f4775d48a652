//! Where expressions meet tables: the bindings of one row for `quiver_expr`.
//!
//! Terms are decoded from the dictionary only for the variables an expression reads.
//! The expression evaluator sees EXISTS as a boolean (`filter.rs` answers it).

use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};

use super::Evaluator;
use crate::table::Table;

impl Evaluator<'_> {
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
        let var = self.vars.get(variable)?;
        self.term(table.value(row, var))
    }
}
