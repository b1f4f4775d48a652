//! GROUP BY and DISTINCT over a basic graph pattern that runs on partitions (a cluster's
//! workers), with or without a FILTER between them.
//!
//! Only the columns the grouping (and the filter) read are asked of the partitions; the
//! rest stay on the workers. Where the aggregates allow it (`group::counted_columns`), the
//! pattern's rows are also counted by those columns where they are found, so that each
//! combination leaves a worker once with its count instead of every row. A FILTER decided
//! by the pattern's variables alone (nothing random, fresh or EXISTS) is counted through:
//! its variables join the counted columns, and it keeps or drops a counted row as it would
//! each row that row stands for, its count kept beside it. Any other filter, or a filter
//! whose few passing ids seed the pattern (`filter_seeding_bgp`), runs as written, except
//! for its conjuncts that are FILTER (NOT) EXISTS of one edge (`edge_checks`), which the
//! partitions decide before counting, whatever the rest of the filter is. A
//! DISTINCT over a projection of the pattern (through such a filter or not) asks the same
//! counts of the projected and filtered columns, and reads none of them. A counted column
//! only MIN or MAX read is narrowed to each group's extremes before it is counted
//! (`extreme_values`).

use spargebra::algebra::Expression;

use super::group::{self, Aggregate};
use super::Evaluator;
use crate::error::QueryError;
use crate::extreme_values::ExtremeValues;
use crate::operator::{Operator, PlannedBgp};
use crate::table::{Table, VarId};

/// The column that numbers a counted table's rows while a filter runs over it, so that
/// the counts of the rows it keeps are found again. No query has this many variables.
const ROW_NUMBER: VarId = VarId::MAX - 2;

impl Evaluator<'_> {
    /// `inner` grouped by `keys` with `aggregates` when `inner` is a basic graph pattern
    /// over partitions, or a FILTER over one (the module doc); `None` otherwise, or where
    /// the filter cannot be counted through (the operators then run as written).
    pub(crate) fn group_over_partitions(
        &self,
        inner: &Operator,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
    ) -> Result<Option<Table>, QueryError> {
        if self.partitions.is_none() {
            return Ok(None);
        }
        let (filter, pattern, planned) = match inner {
            Operator::Bgp(planned) => (None, inner, planned),
            Operator::Filter(expression, filtered) => match &**filtered {
                Operator::Bgp(planned) => (Some(expression), &**filtered, planned),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        // FILTER (NOT) EXISTS of one edge runs on the partitions: what is left of the
        // filter is counted through, or not, as a filter without them would be.
        // (A copy of the rest of the filter is read only where it holds no EXISTS, which
        // `filter_columns` refuses, since an EXISTS is found by its place in the tree.)
        let (checks, rest) = match filter {
            Some(expression) => {
                let (checks, rest) = self.edge_checks(planned, expression);
                let rest = rest.into_iter().cloned().reduce(|before, conjunct| {
                    Expression::And(Box::new(before), Box::new(conjunct))
                });
                (checks, rest)
            }
            None => (Vec::new(), None),
        };
        let filter = match checks.is_empty() {
            true => filter,
            false => rest.as_ref(),
        };
        let mut columns = group::columns_read(self.vars, keys, aggregates);
        let mut count_by = group::counted_columns(self.vars, &planned.bgp, keys, aggregates);
        let mut filtered = Vec::new();
        if let Some(expression) = filter {
            let Some(read) = self.filter_columns(planned, expression) else {
                return Ok(None);
            };
            if checks.is_empty() {
                if let Some(table) = self.filter_seeding_bgp(planned, expression)? {
                    return self.grouped(table, None, keys, aggregates).map(Some);
                }
            }
            for list in [&mut columns, &mut count_by].into_iter().flatten() {
                for &var in &read {
                    if !list.contains(&var) {
                        list.push(var);
                    }
                }
            }
            filtered = read;
        }
        let extremes = count_by.as_ref().and_then(|counted| {
            let columns = group::extreme_columns(self.vars, keys, aggregates, counted, &filtered);
            let ordered_below = super::sort_key::ordered_below(self.store);
            (!columns.is_empty() && ordered_below > 0).then_some(ExtremeValues {
                columns,
                ordered_below,
            })
        });
        *self.pending_columns.borrow_mut() = columns;
        *self.pending_count_by.borrow_mut() = count_by;
        *self.pending_extremes.borrow_mut() = extremes;
        let checked = !checks.is_empty();
        *self.pending_checks.borrow_mut() = checks;
        let table = self.evaluate(pattern);
        self.pending_columns.borrow_mut().take();
        self.pending_count_by.borrow_mut().take();
        self.pending_extremes.borrow_mut().take();
        let counted = self.counted.borrow_mut().take();
        let ran = self.checks_ran();
        let table = table?;
        if checked && !ran {
            return Err(QueryError::Plan(
                "a FILTER EXISTS of one edge was left to partitions that did not run it".into(),
            ));
        }
        let (table, counted) = match filter {
            Some(expression) => self.filter_counted(table, counted, expression)?,
            None => (table, counted),
        };
        self.grouped(table, counted, keys, aggregates).map(Some)
    }

    /// The columns by which the rows of `inner` may be counted where they are found when
    /// a DISTINCT is above it: `inner` projects a basic graph pattern run over partitions,
    /// or a FILTER over one decided by the pattern's variables, and each variable projected
    /// is the pattern's. Counting only drops repeated rows, which the DISTINCT drops too:
    /// any path the filter takes (seeding the pattern included) gives the same rows.
    pub(crate) fn distinct_keys(&self, inner: &Operator) -> Option<Vec<VarId>> {
        self.partitions.as_ref()?;
        let Operator::Project(projected, vars) = inner else {
            return None;
        };
        let (planned, filter) = match &**projected {
            Operator::Bgp(planned) => (planned, None),
            Operator::Filter(expression, filtered) => match &**filtered {
                Operator::Bgp(planned) => (planned, Some(expression)),
                _ => return None,
            },
            _ => return None,
        };
        let bound = planned.bgp.vars();
        if vars.is_empty() || !vars.iter().all(|v| bound.contains(v)) {
            return None;
        }
        let mut keys = vars.clone();
        if let Some(expression) = filter {
            for var in self.filter_columns(planned, expression)? {
                if !keys.contains(&var) {
                    keys.push(var);
                }
            }
        }
        Some(keys)
    }

    /// The columns `expression` reads, when it is decided by variables the pattern binds
    /// alone (nothing random, fresh or EXISTS); `None` otherwise.
    fn filter_columns(&self, planned: &PlannedBgp, expression: &Expression) -> Option<Vec<VarId>> {
        let mut read = Vec::new();
        if !crate::operands::per_id(expression, &mut read) {
            return None;
        }
        let bound = planned.bgp.vars();
        read.iter()
            .map(|variable| self.vars.get(variable).filter(|v| bound.contains(v)))
            .collect()
    }

    /// The rows of `table` that pass `expression`, with the counts of those rows when the
    /// rows were counted.
    fn filter_counted(
        &self,
        table: Table,
        counted: Option<Vec<u64>>,
        expression: &Expression,
    ) -> Result<(Table, Option<Vec<u64>>), QueryError> {
        let Some(counts) = counted else {
            return Ok((self.filter_rows(table, expression)?, None));
        };
        let vars = table.vars.clone();
        let mut numbered = table;
        numbered.vars.push(ROW_NUMBER);
        numbered.columns.push(
            (0..numbered.rows)
                .map(|row| row as quiver_model::Id)
                .collect(),
        );
        let kept = self.filter_rows(numbered, expression)?;
        let rows = kept.column(ROW_NUMBER).ok_or_else(|| {
            QueryError::Plan("a filter over counted rows lost their numbers".into())
        })?;
        let counts = rows.iter().map(|&row| counts[row as usize]).collect();
        Ok((kept.into_reshape(&vars), Some(counts)))
    }

    /// `table` grouped, its rows standing for `counted[row]` rows each when counted; the
    /// grouping's profile kept for EXPLAIN.
    fn grouped(
        &self,
        table: Table,
        counted: Option<Vec<u64>>,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
    ) -> Result<Table, QueryError> {
        let (table, profile) = match counted {
            Some(counts) => group::counted(self, &table, &counts, keys, aggregates)?,
            None => group::group(self, &table, keys, aggregates)?,
        };
        self.group_profiles.borrow_mut().push(profile);
        Ok(table)
    }
}
