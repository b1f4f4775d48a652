//! FILTERs comparing two variables (`?a = ?b`, `?a != ?b`, `sameTerm(?a, ?b)` and its
//! negation) decided on ids where the ids tell, instead of decoding both terms of every
//! row.
//!
//! The dictionary holds each term once, so two ids of it are the same term exactly when
//! they are equal: `sameTerm` is id equality for every id the dictionary holds (not for
//! terms the query computed, which may repeat a stored term under another id). `=` and
//! `!=` compare literals by value (`"1"^^xsd:integer = "01"^^xsd:integer`, and `NaN` is
//! not equal to itself), so ids decide them only when neither term is a literal: blank
//! nodes and IRIs, which in the dictionary's sorted part are the ids below the first
//! literal's (`quiver_model::term`: their tags sort first). Rows with other ids are
//! evaluated as before, one by one; an unbound variable makes every one of these
//! expressions an error, so the row is dropped.

use oxrdf::Variable;
use quiver_model::term::TAG_SIMPLE;
use quiver_model::Id;
use spargebra::algebra::Expression;

use super::Evaluator;
use crate::error::QueryError;
use crate::table::{Table, UNBOUND};

/// How a filter compares its two variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparison {
    /// `=` (`negated`: `!=`).
    Equal { negated: bool },
    /// `sameTerm` (`negated`: `!sameTerm`).
    SameTerm { negated: bool },
}

/// The comparison and its two variables, when `expression` compares two variables.
fn comparison(expression: &Expression) -> Option<(Comparison, &Variable, &Variable)> {
    let (negated, inner) = match expression {
        Expression::Not(inner) => (true, &**inner),
        other => (false, other),
    };
    let (comparison, a, b) = match inner {
        Expression::Equal(a, b) => (Comparison::Equal { negated }, a, b),
        Expression::SameTerm(a, b) => (Comparison::SameTerm { negated }, a, b),
        _ => return None,
    };
    match (&**a, &**b) {
        (Expression::Variable(a), Expression::Variable(b)) if a != b => Some((comparison, a, b)),
        _ => None,
    }
}

impl Evaluator<'_> {
    /// FILTER decided on ids where they tell (the module doc) when `expression` compares
    /// two variables that `table` binds; `None` otherwise.
    pub(crate) fn filter_by_id_pairs(
        &self,
        table: &Table,
        expression: &Expression,
    ) -> Result<Option<Table>, QueryError> {
        let Some((comparison, a, b)) = comparison(expression) else {
            return Ok(None);
        };
        let column = |v: &Variable| self.vars.get(v).and_then(|var| table.column(var));
        let (Some(left), Some(right)) = (column(a), column(b)) else {
            return Ok(None);
        };
        let dictionary = self.store.dictionary();
        // Ids the dictionary holds (terms computed by the query come after them).
        let held = Id::try_from(dictionary.len()).unwrap_or(Id::MAX);
        // Blank nodes and IRIs of the sorted part; none in a cluster's share, whose ids
        // do not sort like terms.
        let not_literals = if dictionary.share().is_some() {
            0
        } else {
            Id::try_from(dictionary.rank(&[TAG_SIMPLE])).unwrap_or(0)
        };
        let ctx = self.ctx();
        let mut keep: Vec<u32> = Vec::new();
        let mut evaluated = 0usize;
        for (row, (&x, &y)) in left.iter().zip(right).enumerate() {
            ctx.tick(row)?;
            let decided = match comparison {
                _ if x == UNBOUND || y == UNBOUND => Some(false),
                Comparison::SameTerm { negated } if x < held && y < held => {
                    Some((x == y) != negated)
                }
                Comparison::Equal { negated } if x < not_literals && y < not_literals => {
                    Some((x == y) != negated)
                }
                _ => None,
            };
            let passes = decided.unwrap_or_else(|| {
                evaluated += 1;
                self.truth(expression, table, row)
            });
            if passes {
                keep.push(row as u32);
            }
        }
        ctx.check()?;
        self.notes.borrow_mut().push(format!(
            "filter: {} of {} rows kept, comparing ids, {evaluated} rows evaluated",
            keep.len(),
            table.rows,
        ));
        Ok(Some(table.gather(&keep)))
    }
}
