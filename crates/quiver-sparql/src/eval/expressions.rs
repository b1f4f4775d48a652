//! Where expressions meet tables: FILTER, BIND chains, ORDER BY keys and EXISTS.
//!
//! Terms are decoded from the dictionary only for the variables an expression reads.

use std::rc::Rc;

use oxrdf::{Term, Variable};
use quiver_model::Id;
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};

use super::Evaluator;
use crate::algebra::{Compiler, Operator};
use crate::error::QueryError;
use crate::join::hash_join;
use crate::table::{Table, VarId, UNBOUND};

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
        let scopes = self.expressions.fresh_scope();
        for (var, expression) in chain.into_iter().rev() {
            let column: Vec<Id> = (0..table.rows)
                .map(|row| {
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
                    .map_or(UNBOUND, |term| self.intern(&term))
                })
                .collect();
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

    pub(crate) fn filter(&self, table: Table, expression: &Expression) -> Table {
        let keep: Vec<u32> = (0..table.rows)
            .filter(|&row| self.truth(expression, &table, row))
            .map(|row| row as u32)
            .collect();
        table.gather(&keep)
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
    /// the pattern runs, so EXISTS may nest.
    pub(crate) fn exists(&self, pattern: &GraphPattern, table: &Table, row: usize) -> bool {
        let Some(operator) = self.exists_operator(pattern) else {
            return false;
        };
        let seed = table.gather(&[row as u32]);
        let bound: Vec<VarId> = seed
            .vars
            .iter()
            .copied()
            .filter(|&v| seed.value(0, v) != UNBOUND)
            .collect();
        self.substituted(&operator, &seed.reshape(&bound))
            .is_ok_and(|t| t.rows > 0)
    }

    /// Evaluates `operator` with the bindings of `seed` (one row, bound columns only)
    /// substituted, as EXISTS requires: basic graph patterns run seeded with the row and
    /// keep its columns, so every filter inside sees the row's values; joins and unions
    /// pass the row down; other operators run alone and are joined with the row.
    fn substituted(&self, operator: &Operator, seed: &Table) -> Result<Table, QueryError> {
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
                self.bgp(&local, seed.clone(), true)?
            }
            Operator::Join(a, b) => hash_join(
                &self.substituted(a, seed)?,
                &self.substituted(b, seed)?,
                false,
            ),
            Operator::Union(a, b) => {
                super::union(self.substituted(a, seed)?, self.substituted(b, seed)?)
            }
            Operator::Filter(expression, inner, graph) => {
                let table = self.substituted(inner, seed)?;
                let outer = self.active_graph.replace(*graph);
                let table = self.filter(table, expression);
                self.active_graph.set(outer);
                table
            }
            other => hash_join(seed, &self.evaluate(other)?, false),
        })
    }

    /// The operator of an EXISTS pattern on the active graph, compiled once per graph
    /// (`None` when it cannot be compiled).
    pub(crate) fn exists_operator(&self, pattern: &GraphPattern) -> Option<Rc<Operator>> {
        let graph = self.active_graph.get();
        let key = (pattern as *const GraphPattern as usize, graph);
        if let Some(operator) = self.exists_cache.borrow().get(&key) {
            return Some(operator.clone());
        }
        let vars = std::mem::take(&mut *self.vars.borrow_mut());
        let mut compiler = Compiler::new(self.store, None);
        compiler.vars = vars;
        compiler.dataset = self.dataset.clone();
        let compiled = compiler.compile(pattern, graph);
        *self.vars.borrow_mut() = compiler.vars;
        let operator = Rc::new(compiled.ok()?);
        self.exists_cache.borrow_mut().insert(key, operator.clone());
        Some(operator)
    }

    pub(crate) fn order_by(&self, table: Table, keys: &[OrderExpression]) -> Table {
        let values: Vec<Vec<Option<Term>>> = (0..table.rows)
            .map(|row| {
                keys.iter()
                    .map(|key| match key {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                            self.expression(e, &table, row)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut order: Vec<u32> = (0..table.rows as u32).collect();
        order.sort_by(|&a, &b| {
            for (k, key) in keys.iter().enumerate() {
                let ordering = quiver_expr::order_terms(
                    values[a as usize][k].as_ref(),
                    values[b as usize][k].as_ref(),
                );
                let ordering = match key {
                    OrderExpression::Asc(_) => ordering,
                    OrderExpression::Desc(_) => ordering.reverse(),
                };
                if ordering.is_ne() {
                    return ordering;
                }
            }
            std::cmp::Ordering::Equal
        });
        table.gather(&order)
    }
}
