//! OPTIONAL: every left row, extended by the compatible right rows that pass the filter.
//!
//! A right basic graph pattern runs seeded with the left rows, each tagged with its row
//! number; otherwise both sides run alone and meet in a hash join that tracks left rows.

use quiver_model::Id;
use spargebra::algebra::Expression;

use super::join::{hash_join, ROW_VAR};
use super::Evaluator;
use crate::context::ensure_addressable;
use crate::error::QueryError;
use crate::operator::{certain_vars, Operator};
use crate::table::{Table, VarId};

impl Evaluator<'_> {
    pub(crate) fn left_join(
        &self,
        left: Table,
        right: &Operator,
        filter: Option<&Expression>,
    ) -> Result<Table, QueryError> {
        let right_vars = certain_or_all_vars(right);
        if let Some(planned) = self.seedable(&left, right) {
            ensure_addressable(left.rows)?;
            let mut seeded = left.clone();
            seeded.vars.push(ROW_VAR);
            seeded.columns.push((0..left.rows as Id).collect());
            let mut joined = self.bgp(planned, seeded, true, None)?;
            if let Some(filter) = filter {
                joined = self.filter(joined, filter)?;
            }
            let rows = joined
                .column(ROW_VAR)
                .map(<[Id]>::to_vec)
                .unwrap_or_default();
            let mut matched = vec![false; left.rows];
            for row in rows {
                matched[row as usize] = true;
            }
            let mut vars: Vec<VarId> = joined
                .vars
                .iter()
                .copied()
                .filter(|&v| v != ROW_VAR)
                .collect();
            vars.extend(
                right_vars
                    .iter()
                    .filter(|v| !vars.contains(v))
                    .collect::<Vec<_>>(),
            );
            let mut result = joined.reshape(&vars);
            let unmatched: Vec<u32> = (0..left.rows)
                .filter(|&r| !matched[r])
                .map(|r| r as u32)
                .collect();
            result.append(left.gather(&unmatched).reshape(&vars));
            return Ok(result);
        }
        let right = self.evaluate_right(&left, right)?;
        let mut vars = left.vars.clone();
        vars.extend(right.vars.iter().filter(|v| !left.vars.contains(v)));
        let joined = hash_join(&self.ctx(), &left, &right, true)?;
        // Keep joined rows passing the filter; remember which left rows matched.
        let mut joined_with_rows = joined;
        if let Some(filter) = filter {
            joined_with_rows = self.filter(joined_with_rows, filter)?;
        }
        let mut matched = vec![false; left.rows];
        for &row in joined_with_rows.column(ROW_VAR).unwrap_or(&[]) {
            matched[row as usize] = true;
        }
        let mut result = joined_with_rows.reshape(&vars);
        let unmatched: Vec<u32> = (0..left.rows)
            .filter(|&r| !matched[r])
            .map(|r| r as u32)
            .collect();
        result.append(left.gather(&unmatched).reshape(&vars));
        Ok(result)
    }
}

fn certain_or_all_vars(operator: &Operator) -> Vec<VarId> {
    match operator {
        Operator::Bgp(planned) => planned.bgp.vars(),
        Operator::Path(pattern) => pattern.vars(),
        Operator::Service(service) => service.possible_vars(),
        other => certain_vars(other),
    }
}
