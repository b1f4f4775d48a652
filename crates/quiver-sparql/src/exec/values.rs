//! VALUES: the query's inline rows, terms the dictionary lacks interned as computed ones.

use oxrdf::Term;
use spargebra::term::GroundTerm;

use super::Evaluator;
use crate::context::table_bytes;
use crate::error::QueryError;
use crate::table::{Table, VarId, UNBOUND};

impl Evaluator<'_> {
    /// `VALUES`: its rows, terms the dictionary lacks interned as computed ones.
    pub(crate) fn values(
        &self,
        vars: &[VarId],
        rows: &[Vec<Option<GroundTerm>>],
    ) -> Result<Table, QueryError> {
        let ctx = self.ctx();
        let mut reservation = ctx.reservation();
        reservation.try_grow(table_bytes(rows.len(), vars.len()))?;
        // On a cluster's coordinator, the terms other owners hold are asked of them in one
        // batch first: interned unasked, a stored term another owner holds would get a
        // query-local id and join with none of the rows that name it.
        self.learn_held_elsewhere(|visit| {
            for (i, row) in rows.iter().enumerate() {
                ctx.tick(i)?;
                for term in row.iter().flatten() {
                    visit(&ground_term(term));
                }
            }
            Ok(())
        })?;
        let mut table = Table::empty(vars.to_vec());
        for (i, row) in rows.iter().enumerate() {
            ctx.tick(i)?;
            for (c, value) in row.iter().enumerate() {
                let id = value
                    .as_ref()
                    .map_or(UNBOUND, |v| self.intern(&ground_term(v)));
                table.columns[c].push(id);
            }
            table.rows += 1;
        }
        Ok(table)
    }
}

fn ground_term(term: &GroundTerm) -> Term {
    term.clone().into()
}
