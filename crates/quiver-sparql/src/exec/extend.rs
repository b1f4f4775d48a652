//! BIND chains and SELECT expressions: one new column per expression, innermost first.
//!
//! An expression that is a function of the ids of the variables it reads (nothing random or
//! fresh, no EXISTS: `operands::per_id`) is evaluated once per distinct tuple of those ids
//! and its id reused in the rows that repeat the tuple: `xsd:float(?count) / ?countBefore`
//! over thousands of groups reads a few dozen distinct pairs of counts, and each
//! evaluation decodes its operands, builds its terms and looks the result up in the
//! dictionary.

use oxrdf::Variable;
use quiver_model::Id;
use rustc_hash::FxHashMap;
use spargebra::algebra::{Expression, GraphPattern};

use super::Evaluator;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::Operator;
use crate::table::{Table, VarId, UNBOUND};

/// The most variables an expression may read to be remembered by their ids.
const REMEMBERED_VARS: usize = 4;

/// The most distinct tuples remembered per expression; past them, new tuples are evaluated
/// without being remembered.
const REMEMBERED_TUPLES: usize = 1 << 16;

/// Bytes charged per remembered tuple (the key, the id and the hash table's overhead),
/// given back once the column is made.
const TUPLE_BYTES: usize = (REMEMBERED_VARS + 1) * ID_BYTES + 16;

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
            // A variable's value is its id: copied, not decoded and interned again (every
            // aggregate surfaces this way, `(COUNT(?x) AS ?n)` over each of its groups).
            if let Expression::Variable(variable) = expression {
                let column = match self.vars.get(variable).and_then(|v| table.column(v)) {
                    Some(values) => values.to_vec(),
                    None => vec![UNBOUND; table.rows],
                };
                table.set_column(var, column);
                continue;
            }
            let term_of = |row: usize| {
                let bindings = |variable: &Variable| self.binding(&table, row, variable);
                let exists = |pattern: &GraphPattern| self.exists(pattern, &table, row);
                let scope = scopes.wrapping_add(row as u64);
                quiver_expr::evaluate_in_scope(
                    expression,
                    &bindings,
                    &exists,
                    &self.expressions,
                    scope,
                )
            };
            // Terms other owners hold, asked of them in one batch for the column.
            self.learn_held_elsewhere(|visit| {
                for row in 0..table.rows {
                    ctx.tick(row)?;
                    if let Some(term) = term_of(row) {
                        visit(&term);
                    }
                }
                Ok(())
            })?;
            let evaluate =
                |row: usize| -> Id { term_of(row).map_or(UNBOUND, |term| self.intern(&term)) };
            let column = match self.remembered_inputs(expression, &table) {
                Some(columns) => {
                    let mut remembered: FxHashMap<[Id; REMEMBERED_VARS], Id> = FxHashMap::default();
                    let mut evaluations = 0usize;
                    let mut column: Vec<Id> = Vec::with_capacity(table.rows);
                    for row in 0..table.rows {
                        ctx.tick(row)?;
                        let mut key = [UNBOUND; REMEMBERED_VARS];
                        for (slot, values) in key.iter_mut().zip(&columns) {
                            *slot = values[row];
                        }
                        let id = match remembered.get(&key) {
                            Some(&id) => id,
                            None => {
                                evaluations += 1;
                                let id = evaluate(row);
                                // The table is memory the evaluation can do without.
                                if remembered.len() < REMEMBERED_TUPLES
                                    && reservation.try_grow_optional(TUPLE_BYTES)
                                {
                                    remembered.insert(key, id);
                                }
                                id
                            }
                        };
                        column.push(id);
                    }
                    reservation.shrink(remembered.len() * TUPLE_BYTES);
                    self.notes.borrow_mut().push(format!(
                        "bind ?{}: {evaluations} evaluations for {} rows, one per distinct \
                         tuple of the variables it reads",
                        self.vars.name(var),
                        table.rows
                    ));
                    column
                }
                None => {
                    let mut column: Vec<Id> = Vec::with_capacity(table.rows);
                    for row in 0..table.rows {
                        ctx.tick(row)?;
                        column.push(evaluate(row));
                    }
                    column
                }
            };
            table.set_column(var, column);
        }
        Ok(table)
    }

    /// The columns of the variables `expression` reads when it is a function of their ids
    /// (a variable the table does not bind is UNBOUND in every row and needs none), at most
    /// [`REMEMBERED_VARS`] of them; `None` when it is not.
    fn remembered_inputs<'t>(
        &self,
        expression: &Expression,
        table: &'t Table,
    ) -> Option<Vec<&'t [Id]>> {
        let mut variables = Vec::new();
        if table.rows < 2 || !crate::operands::per_id(expression, &mut variables) {
            return None;
        }
        let columns: Vec<&[Id]> = variables
            .iter()
            .filter_map(|variable| {
                let var: VarId = self.vars.get(variable)?;
                table.column(var)
            })
            .collect();
        (columns.len() <= REMEMBERED_VARS).then_some(columns)
    }
}
