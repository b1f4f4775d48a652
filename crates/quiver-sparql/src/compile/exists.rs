//! EXISTS compiled at prepare time: every EXISTS pattern of a node's expression is
//! compiled on the node's graph and recorded under the pattern's place in the tree.

use spargebra::algebra::{Expression, GraphPattern};

use super::Compiler;
use crate::dataset::GraphRef;
use crate::error::QueryError;

impl Compiler<'_> {
    /// Compiles the EXISTS patterns of `expression`, which the operator tree holds (so the
    /// patterns keep their address), on `graph`. User plans are for the query's own basic
    /// graph patterns only, so they are set aside meanwhile.
    pub(super) fn compile_exists(
        &mut self,
        expression: &Expression,
        graph: GraphRef,
    ) -> Result<(), QueryError> {
        let mut patterns = Vec::new();
        exists_patterns(expression, &mut patterns);
        for pattern in patterns {
            let user_plans = self.user_plans.take();
            let compiled = self.compile(pattern, graph);
            self.user_plans = user_plans;
            self.exists.insert(pattern, compiled?);
        }
        Ok(())
    }
}

/// The patterns of the EXISTS in `expression`, outermost first (the ones nested in a
/// pattern are reached when that pattern is compiled).
fn exists_patterns<'e>(expression: &'e Expression, out: &mut Vec<&'e GraphPattern>) {
    match expression {
        Expression::Exists(pattern) => out.push(pattern),
        _ => crate::operands::for_each_operand(expression, &mut |operand| {
            exists_patterns(operand, out)
        }),
    }
}
