//! The operators of the EXISTS patterns inside a query's expressions.
//!
//! Each pattern is compiled when the query is prepared, together with the node whose
//! expression holds it, on that node's graph. They are found again by the address of the
//! pattern inside the operator tree's own expression (a boxed pattern does not move with
//! the tree), so execution never compiles.

use rustc_hash::FxHashMap;
use spargebra::algebra::GraphPattern;

use super::Operator;

/// EXISTS operators by the pattern they were compiled from.
#[derive(Debug, Default)]
pub struct ExistsOperators(FxHashMap<usize, Operator>);

impl ExistsOperators {
    /// Records the operator of `pattern`, a pattern held by the operator tree.
    pub fn insert(&mut self, pattern: &GraphPattern, operator: Operator) {
        self.0.insert(key(pattern), operator);
    }

    /// The operator compiled for `pattern`.
    pub fn get(&self, pattern: &GraphPattern) -> Option<&Operator> {
        self.0.get(&key(pattern))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn key(pattern: &GraphPattern) -> usize {
    pattern as *const GraphPattern as usize
}
