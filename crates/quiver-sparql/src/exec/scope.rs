//! What the operators computed over tables (GROUP BY, top-k) need from the running query
//! besides its limits: expression values per row, term ids, variables, EXPLAIN notes.
//!
//! The evaluator implements it; these operators depend on this trait instead of on the
//! evaluator, so they can be tested and reused without a whole execution.

use oxrdf::{Term, Variable};
use quiver_model::Id;
use spargebra::algebra::Expression;

use crate::context::ExecContext;
use crate::table::{Table, VarId};

/// The running query as seen by an operator.
pub trait Scope {
    /// The context of an operator that reads no graph.
    fn ctx(&self) -> ExecContext<'_>;
    /// The value of `expression` in row `row` of `table` (`None`: an error or unbound).
    fn expression(&self, expression: &Expression, table: &Table, row: usize) -> Option<Term>;
    /// The term of an id (`None` for UNBOUND).
    fn term(&self, id: Id) -> Option<Term>;
    /// The id of a term, computed terms included.
    fn intern(&self, term: &Term) -> Id;
    /// A query variable's id.
    fn var(&self, variable: &Variable) -> Option<VarId>;
    /// Whether `var` is a variable a solution shows (not one standing for a blank node).
    fn is_visible(&self, var: VarId) -> bool;
    /// Records a line for EXPLAIN.
    fn note(&self, note: String);
}
