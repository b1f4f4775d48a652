//! `GRAPH ?var`: the inner pattern run on each named graph, its rows tagged with the name.

use quiver_model::Id;

use super::union::union;
use super::Evaluator;
use crate::error::QueryError;
use crate::operator::Operator;
use crate::table::{Table, VarId, UNBOUND};

impl Evaluator<'_> {
    /// `GRAPH ?var`: each named graph's rows with `var` bound to the graph's name (rows
    /// that bind `var` inside to another term are dropped, unbound ones get the name),
    /// concatenated.
    pub(crate) fn graph_var(
        &self,
        var: VarId,
        branches: &[(Id, Operator)],
    ) -> Result<Table, QueryError> {
        let ctx = self.ctx();
        let mut result = Table::empty(vec![var]);
        for (name, branch) in branches {
            let mut table = self.evaluate(branch)?;
            match table.column_of(var) {
                Some(c) => {
                    let mut keep = Vec::new();
                    for row in 0..table.rows {
                        ctx.tick(row)?;
                        let id = table.columns[c][row];
                        if id == *name || id == UNBOUND {
                            keep.push(row as u32);
                        }
                    }
                    table = table.gather(&keep);
                    table.columns[c].fill(*name);
                }
                None => {
                    table.vars.push(var);
                    table.columns.push(vec![*name; table.rows]);
                }
            }
            result = union(&ctx, result, table)?;
        }
        Ok(result)
    }
}
