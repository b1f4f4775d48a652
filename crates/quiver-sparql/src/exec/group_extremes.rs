//! MIN and MAX of one pattern's variable with no GROUP BY keys, as in
//! `SELECT (MAX(?name) AS ?last) { ?x <name> ?name }`.
//!
//! SPARQL's MIN and MAX order values as ORDER BY does, and so do this store's (both
//! compare sort keys, `sort_key.rs`): the least value is the first row of
//! `ORDER BY ?name`, the greatest the first of `ORDER BY DESC(?name)`. The ordered scan
//! (`ordered_scan.rs`) reads a top-1's candidates from the ends of the predicate index's
//! sorted lists, so the group runs over those few rows instead of every row of the
//! pattern: microseconds instead of a pass over millions of values. Over partitions, each
//! worker sends its own top-1 of the order (`top_k.rs`'s pushed top), so one row per
//! worker crosses instead of every value. Where the order cannot be read (typed literals
//! at the end a MAX needs, an empty pattern), the group runs as usual.

use spargebra::algebra::{Expression, OrderExpression};

use super::group::group;
use super::union::union;
use super::Evaluator;
use crate::error::QueryError;
use crate::operator::group::{Aggregate, Function};
use crate::operator::Operator;
use crate::table::{Table, VarId};

impl Evaluator<'_> {
    /// The one row of a group with no keys whose aggregates are all MIN or MAX of the same
    /// variable of `inner`'s one pattern, read from the ends of its order; `None` where
    /// that does not apply.
    pub(crate) fn extremes_by_order(
        &self,
        inner: &Operator,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
    ) -> Result<Option<Table>, QueryError> {
        if !keys.is_empty() || aggregates.is_empty() {
            return Ok(None);
        }
        let mut variable = None;
        // Whether the least and the greatest value are wanted.
        let (mut least, mut greatest) = (false, false);
        for (_, aggregate) in aggregates {
            let (Function::Min | Function::Max, Some(Expression::Variable(v))) =
                (&aggregate.function, &aggregate.argument)
            else {
                return Ok(None);
            };
            if variable.is_some_and(|seen| seen != v) {
                return Ok(None);
            }
            variable = Some(v);
            match aggregate.function {
                Function::Min => least = true,
                _ => greatest = true,
            }
        }
        let Some(variable) = variable else {
            return Ok(None);
        };
        let mut rows: Option<Table> = None;
        for (wanted, key) in [
            (
                least,
                OrderExpression::Asc(Expression::Variable(variable.clone())),
            ),
            (
                greatest,
                OrderExpression::Desc(Expression::Variable(variable.clone())),
            ),
        ] {
            if !wanted {
                continue;
            }
            let candidates = match self.top_k_candidates(inner, std::slice::from_ref(&key), 1)? {
                Some(candidates) => candidates,
                // Over partitions, each worker sends its own first rows of the order (its
                // top-1, or every row where it cannot read the order): the least of all
                // is among them.
                None => match self.top_over_partitions(inner, &[key], 1) {
                    Some(top) => {
                        *self.pending_top.borrow_mut() = Some(top);
                        let rows = self.evaluate(inner);
                        self.pending_top.borrow_mut().take();
                        rows?
                    }
                    None => return Ok(None),
                },
            };
            rows = Some(match rows {
                None => candidates,
                Some(rows) => union(&self.ctx(), rows, candidates)?,
            });
        }
        let Some(rows) = rows else {
            return Ok(None);
        };
        self.notes.borrow_mut().push(format!(
            "MIN/MAX of ?{}: read from the ends of its order, {} row(s)",
            variable.as_str(),
            rows.rows
        ));
        let (table, profile) = group(self, &rows, keys, aggregates)?;
        self.group_profiles.borrow_mut().push(profile);
        Ok(Some(table))
    }
}
