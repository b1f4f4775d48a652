//! Joins, OPTIONALs and property paths that continue from the rows already found.
//!
//! When the left side of a join binds every variable the right side shares with it, the
//! right basic graph pattern runs seeded with the left rows (graph exploration continues
//! from them) and a property path walks only from the values they bind; otherwise both
//! sides run alone and meet in a hash join. `FILTER (NOT) EXISTS` over a basic graph
//! pattern is the same idea as a semi-join: the pattern runs once, seeded with every row.

use std::time::Instant;

use quiver_model::Id;
use spargebra::algebra::Expression;

use super::{BgpProfile, Evaluator};
use crate::algebra::{certain_vars, GraphRef, Operator, PlannedBgp};
use crate::context::ensure_addressable;
use crate::error::QueryError;
use crate::explore::explore;
use crate::join::{hash_join, ROW_VAR};
use crate::path::{End, PathPattern, PathProfile, PathTerm};
use crate::table::{Table, VarId, UNBOUND};

impl Evaluator<'_> {
    pub(crate) fn bgp(
        &self,
        planned: &PlannedBgp,
        input: Table,
        seeded: bool,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        let steps = match (&planned.seeded, seeded) {
            (Some((_, steps)), true) => steps,
            _ => &planned.alone,
        };
        let mut profile = Vec::new();
        let result = explore(
            &planned.bgp,
            steps,
            input,
            &self.context(planned.graph),
            &mut profile,
            limit,
        )?;
        self.profiles.borrow_mut().push(BgpProfile {
            patterns: planned
                .bgp
                .patterns
                .iter()
                .map(|p| p.text.clone())
                .collect(),
            seeded,
            steps: profile,
            limit,
        });
        Ok(result)
    }

    /// `FILTER EXISTS { bgp }` (or `NOT EXISTS` when `negated`) over the whole table at
    /// once: the pattern runs seeded with every row, tagged with its row number, and the
    /// rows that found a match are kept (or dropped). `None` when the pattern is not a
    /// basic graph pattern or shares a variable the table binds only in some rows; the
    /// caller then evaluates EXISTS row by row.
    pub(crate) fn filter_exists(
        &self,
        table: &Table,
        pattern: &spargebra::algebra::GraphPattern,
        negated: bool,
    ) -> Result<Option<Table>, QueryError> {
        let operator = self.exists_operator(pattern)?;
        let Operator::Bgp(planned) = &*operator else {
            return Ok(None);
        };
        let mut seeds = Vec::new();
        for var in planned.bgp.vars() {
            match table.column(var) {
                Some(column) if column.contains(&UNBOUND) => return Ok(None),
                Some(_) => seeds.push(var),
                None => {}
            }
        }
        if seeds.is_empty() {
            // Nothing shared: the pattern has the same answer for every row.
            let found = self.bgp(planned, Table::unit(), false, Some(1))?.rows > 0;
            return Ok(Some(if found != negated {
                table.clone()
            } else {
                table.gather(&[])
            }));
        }
        ensure_addressable(table.rows)?;
        let mut input = table.reshape(&seeds);
        input.vars.push(ROW_VAR);
        input.columns.push((0..table.rows as Id).collect());
        let steps = crate::planner::plan(
            &planned.bgp,
            self.store,
            self.context(planned.graph).graph,
            &seeds,
            table.rows as f64,
        );
        let mut local = planned.clone();
        local.seeded = Some((seeds, steps));
        let found = self.bgp(&local, input, true, None)?;
        let ctx = self.ctx();
        let mut matched = vec![false; table.rows];
        for (i, &row) in found.column(ROW_VAR).unwrap_or(&[]).iter().enumerate() {
            ctx.tick(i)?;
            matched[row as usize] = true;
        }
        let mut keep: Vec<u32> = Vec::new();
        for (row, &matched) in matched.iter().enumerate() {
            ctx.tick(row)?;
            if matched != negated {
                keep.push(row as u32);
            }
        }
        Ok(Some(table.gather(&keep)))
    }

    /// Whether `left` can seed the exploration of `right`: its seed columns are complete.
    pub(crate) fn seedable<'o>(&self, left: &Table, right: &'o Operator) -> Option<&'o PlannedBgp> {
        let Operator::Bgp(planned) = right else {
            return None;
        };
        let (seeds, _) = planned.seeded.as_ref()?;
        let complete = seeds
            .iter()
            .all(|&v| left.column(v).is_some_and(|c| !c.contains(&UNBOUND)));
        // Other shared variables must be complete too, or exploration could miss matches.
        let shared_complete = planned
            .bgp
            .vars()
            .iter()
            .filter_map(|&v| left.column(v))
            .all(|c| !c.contains(&UNBOUND));
        (complete && shared_complete).then_some(planned)
    }

    pub(crate) fn join(&self, left: Table, right: &Operator) -> Result<Table, QueryError> {
        if let Some(planned) = self.seedable(&left, right) {
            return self.bgp(planned, left, true, None);
        }
        let right = self.evaluate_right(&left, right)?;
        hash_join(&self.ctx(), &left, &right, false)
    }

    /// The right side of a join: a path between variables walks only from the values the
    /// left rows bind to one of its ends.
    pub(crate) fn evaluate_right(
        &self,
        left: &Table,
        right: &Operator,
    ) -> Result<Table, QueryError> {
        match right {
            Operator::Path(pattern) => self.path(pattern, Some(left)),
            other => self.evaluate(other),
        }
    }

    /// A property path pattern; with `left`, seeded by its rows where they bind an end
    /// variable in every row (the end with fewer distinct values).
    pub(crate) fn path(
        &self,
        pattern: &PathPattern,
        left: Option<&Table>,
    ) -> Result<Table, QueryError> {
        if pattern.graph == GraphRef::Missing {
            return Ok(Table::empty(pattern.vars()));
        }
        let started = Instant::now();
        let resolve = |end: &PathTerm| match end {
            PathTerm::Var(v) => End::Var(*v),
            PathTerm::Term(term) => End::Const(self.intern(term)),
        };
        let (subject, object) = (resolve(&pattern.subject), resolve(&pattern.object));
        let seeds = match (subject, object, left) {
            (End::Var(s), End::Var(o), Some(left)) => [s, o]
                .into_iter()
                .filter_map(|var| {
                    let column = left.column(var)?;
                    if column.contains(&UNBOUND) {
                        return None;
                    }
                    let mut values = column.to_vec();
                    values.sort_unstable();
                    values.dedup();
                    Some((var, values))
                })
                .min_by_key(|(_, values)| values.len()),
            _ => None,
        };
        let context = self.context(pattern.graph);
        let mut profile = PathProfile {
            pattern: pattern.text.clone(),
            ..PathProfile::default()
        };
        let table = crate::path::evaluate(
            subject,
            &pattern.path,
            object,
            seeds,
            context.graph,
            &context,
            &mut profile,
        )?;
        profile.micros = started.elapsed().as_secs_f64() * 1e6;
        self.path_profiles.borrow_mut().push(profile);
        Ok(table)
    }

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
        other => certain_vars(other),
    }
}
