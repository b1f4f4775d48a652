//! FILTER, and the EXISTS patterns of every expression.
//!
//! `FILTER (NOT) EXISTS` over a basic graph pattern, with or without FILTERs of its own,
//! is a semi-join: the pattern runs once, seeded with every row. One pattern `?x p ?y`
//! whose `?y` nothing else reads ("has a `p`") is decided by the length of each row's
//! list, without walking it, and so is `MINUS` of such a pattern. Other EXISTS run row by
//! row with the row's bindings substituted. Over partitions, that one-pattern shape right
//! above a pattern is handed to the partitions as an [`EdgeCheck`], decided at the owner of
//! each row's vertex.
//! An error while running an EXISTS pattern (time, cancellation, memory) is recorded in the
//! query's state, so it stops the query at the next check instead of becoming `false`.

use quiver_model::{Id, PredId};
use quiver_store::Direction;
use spargebra::algebra::{Expression, GraphPattern};

use super::join::{hash_join, ROW_VAR};
use super::minus::minus;
use super::parallel::map_morsels;
use super::union::union;
use super::Evaluator;
use crate::bgp::{Node, Pred};
use crate::context::ensure_addressable;
use crate::edge_checks::EdgeCheck;
use crate::error::QueryError;
use crate::operator::{Operator, PlannedBgp};
use crate::table::{Table, VarId, UNBOUND};

impl Evaluator<'_> {
    /// FILTER over the rows of `inner`: (NOT) EXISTS over a basic graph pattern at once,
    /// anything else row by row.
    /// Under a LIMIT, the inner rows are asked for a round at a time
    /// ([`Evaluator::grow_until`]).
    pub(crate) fn filter_operator(
        &self,
        expression: &Expression,
        inner: &Operator,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        if let Operator::Bgp(planned) = inner {
            if let Some(table) = self.filter_seeding_bgp(planned, expression)? {
                return Ok(table);
            }
            // Over partitions, the ids the FILTER can pass are checked where the rows are.
            if self.partitions.is_some() {
                let mut conjuncts = Vec::new();
                conjuncts_of(expression, &mut conjuncts);
                *self.pending_passes.borrow_mut() = conjuncts
                    .into_iter()
                    .filter_map(|conjunct| self.passing_ids(planned, conjunct))
                    .collect();
                // And (NOT) EXISTS of one edge is decided at the owner of each row's vertex.
                let (checks, rest) = self.edge_checks(planned, expression);
                if !checks.is_empty() {
                    let passes = self.pending_passes.take();
                    // With every conjunct a check, the rows returned are the answer.
                    let answers = limit.filter(|_| rest.is_empty());
                    let before = || {
                        *self.pending_checks.borrow_mut() = checks.clone();
                        *self.pending_passes.borrow_mut() = passes.clone();
                        self.pending_answers.set(answers);
                    };
                    let finish = |table: Table| {
                        if !self.checks_ran() {
                            return self.filter_rows(table, expression);
                        }
                        // The other conjuncts one after the other: a row passes them all.
                        let mut table = table;
                        for &conjunct in &rest {
                            table = self.filter_rows(table, conjunct)?;
                        }
                        Ok(table)
                    };
                    let table = match limit {
                        // The partitions count the rows they return after the checks.
                        Some(limit) => self.grow_until_with(inner, limit, before, finish),
                        None => {
                            before();
                            let table = self.evaluate(inner);
                            self.pending_passes.borrow_mut().clear();
                            table.and_then(finish)
                        }
                    };
                    // Nothing is left for a later pattern, whatever stopped the rounds.
                    self.pending_passes.borrow_mut().clear();
                    self.pending_checks.borrow_mut().clear();
                    self.pending_answers.set(None);
                    return table;
                }
            }
        }
        let table = self.filter_inner(expression, inner, limit);
        self.pending_passes.borrow_mut().clear();
        table
    }

    /// The conjuncts of `expression` over `planned`, a pattern that runs on partitions,
    /// that they decide as [`EdgeCheck`]s, and the others (those of the operator tree's own
    /// expression: its EXISTS patterns are found by their address).
    pub(crate) fn edge_checks<'e>(
        &self,
        planned: &PlannedBgp,
        expression: &'e Expression,
    ) -> (Vec<EdgeCheck>, Vec<&'e Expression>) {
        let mut conjuncts = Vec::new();
        conjuncts_of(expression, &mut conjuncts);
        let mut checks = Vec::new();
        let mut rest = Vec::new();
        for conjunct in conjuncts {
            match self.edge_check(planned, conjunct) {
                Some(check) => checks.push(check),
                None => rest.push(conjunct),
            }
        }
        (checks, rest)
    }

    /// Whether the pattern the [`EdgeCheck`]s were left for took them (and had its
    /// partitions run them); none is left for another.
    pub(crate) fn checks_ran(&self) -> bool {
        std::mem::take(&mut *self.pending_checks.borrow_mut()).is_empty()
    }

    /// `conjunct` as an [`EdgeCheck`] of `planned`'s rows: `EXISTS { ?x <p> ?y }` or its
    /// negation, on the pattern's graph, where `?x` is the pattern's and `?y` is not (or
    /// `?y <p> ?x`, unless `<p>` is `rdf:type`, whose classes' records every partition holds
    /// a share of).
    fn edge_check(&self, planned: &PlannedBgp, conjunct: &Expression) -> Option<EdgeCheck> {
        let (pattern, exists) = match conjunct {
            Expression::Exists(pattern) => (pattern, true),
            Expression::Not(inner) => match &**inner {
                Expression::Exists(pattern) => (pattern, false),
                _ => return None,
            },
            _ => return None,
        };
        let Ok(Operator::Bgp(inner)) = self.exists_operator(pattern) else {
            return None;
        };
        self.edge_check_of(planned, inner, exists)
    }

    /// `inner`, one pattern, as an [`EdgeCheck`] of `planned`'s rows (see
    /// [`Evaluator::edge_check`]), keeping the rows with a match (`exists`) or without.
    fn edge_check_of(
        &self,
        planned: &PlannedBgp,
        inner: &PlannedBgp,
        exists: bool,
    ) -> Option<EdgeCheck> {
        if inner.graph != planned.graph {
            return None;
        }
        let bound = planned.bgp.vars();
        // Partitions hold shares of a class's `rdf:type` record, not whole ones.
        let into_class = self.store.rdf_type();
        lone_edge(inner, |var| bound.contains(&var), into_class, exists)
    }

    /// `left MINUS { ?x <p> ?y }` where the left rows bind `?x` (in some or all of them)
    /// and never `?y`: a left row binding `?x` is dropped when it has such an edge, as
    /// under `FILTER NOT EXISTS` (`?x` is the only variable the sides can share), and a
    /// row leaving `?x` unbound shares nothing and stays. Over partitions, where `left` is
    /// a pattern that runs on them, the partitions decide it as an [`EdgeCheck`] instead
    /// of both sides coming to the coordinator; on one store, each left row's list length
    /// is read, instead of every right row being hashed.
    ///
    /// Under a LIMIT (`limit`, the rows asked of the MINUS), the left rows are asked for a
    /// round at a time ([`Evaluator::grow_until`]): what a MINUS keeps is a subset of its
    /// left rows, so the first rows kept answer.
    pub(crate) fn minus_by_check(
        &self,
        left: &Operator,
        right: &Operator,
        limit: Option<usize>,
    ) -> Result<Minused, QueryError> {
        let Operator::Bgp(edge) = right else {
            return Ok(Minused::Left(None));
        };
        let Some(_) = &self.partitions else {
            return self.minus_by_lengths(left, edge, limit);
        };
        let Operator::Bgp(planned) = left else {
            return Ok(Minused::Left(None));
        };
        let Some(check) = self.edge_check_of(planned, edge, false) else {
            return Ok(Minused::Left(None));
        };
        let before = || {
            *self.pending_checks.borrow_mut() = vec![check];
            // What the check keeps is the answer.
            self.pending_answers.set(limit);
        };
        let table = match limit {
            Some(limit) => {
                // Should the partitions not take the check, the general MINUS decides
                // each round's left rows.
                let table = self.grow_until_with(left, limit, before, |table| {
                    if self.checks_ran() {
                        return Ok(table);
                    }
                    let right = self.evaluate(right)?;
                    minus(&self.ctx(), table, &right)
                });
                self.pending_checks.borrow_mut().clear();
                self.pending_answers.set(None);
                return table.map(Minused::Done);
            }
            None => {
                before();
                self.evaluate(left)
            }
        };
        let checked = self.checks_ran();
        let table = table?;
        Ok(match checked {
            true => Minused::Done(table),
            false => Minused::Left(Some(table)),
        })
    }

    /// [`Evaluator::minus_by_check`] on one store: each left row binding the edge's `?x`
    /// is kept or dropped by the length of its list.
    fn minus_by_lengths(
        &self,
        left: &Operator,
        edge: &PlannedBgp,
        limit: Option<usize>,
    ) -> Result<Minused, QueryError> {
        let graph = self.context(edge.graph).graph;
        // The rows of `table` that `check` keeps.
        let kept = |check: &EdgeCheck, table: &Table| -> Result<Vec<u32>, QueryError> {
            let keep = map_morsels(&self.ctx(), table.rows, |rows| {
                check.passing(graph, table, rows)
            })?;
            Ok(keep.concat())
        };
        let note = |kept: usize, of: usize| {
            self.notes.borrow_mut().push(format!(
                "minus: {kept} of {of} rows kept by the lengths of their lists, the other side \
                 not evaluated"
            ));
        };
        if let Some(limit) = limit {
            // Whether the check decides every round's rows is known from what the left
            // side may bind: `?x` possibly, `?y` never.
            let possible = crate::operator::estimate::possible_vars(left);
            let Some(check) = lone_edge(edge, |var| possible.contains(&var), None, false) else {
                return Ok(Minused::Left(None));
            };
            let last = std::cell::Cell::new((0, 0));
            let table = self.grow_until(left, limit, |table| {
                let keep = kept(&check, &table)?;
                last.set((keep.len(), table.rows));
                Ok(table.gather(&keep))
            })?;
            let (kept, of) = last.get();
            note(kept, of);
            return Ok(Minused::Done(table));
        }
        let table = self.evaluate(left)?;
        let check = lone_edge(edge, |var| table.vars.contains(&var), None, false);
        Ok(match check {
            Some(check) if table.rows > 0 => {
                let keep = kept(&check, &table)?;
                note(keep.len(), table.rows);
                Minused::Done(table.gather(&keep))
            }
            _ => Minused::Left(Some(table)),
        })
    }

    /// [`Evaluator::filter_operator`]'s inner rows, filtered.
    fn filter_inner(
        &self,
        expression: &Expression,
        inner: &Operator,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        match limit {
            Some(limit) => {
                self.grow_until(inner, limit, |table| self.filter_rows(table, expression))
            }
            None => {
                let table = self.evaluate(inner)?;
                self.filter_rows(table, expression)
            }
        }
    }

    /// The rows of `table` passing `expression`.
    pub(crate) fn filter_rows(
        &self,
        table: Table,
        expression: &Expression,
    ) -> Result<Table, QueryError> {
        let batched = match expression {
            Expression::Exists(pattern) => self.filter_exists(&table, pattern, false)?,
            Expression::Not(inner) => match &**inner {
                Expression::Exists(pattern) => self.filter_exists(&table, pattern, true)?,
                _ => None,
            },
            _ => None,
        };
        match batched {
            Some(table) => Ok(table),
            None => self.filter(table, expression),
        }
    }

    pub(crate) fn filter(
        &self,
        table: Table,
        expression: &Expression,
    ) -> Result<Table, QueryError> {
        if let Some(table) = self.filter_by_ids(&table, expression)? {
            return Ok(table);
        }
        if let Some(table) = self.filter_by_id_pairs(&table, expression)? {
            return Ok(table);
        }
        let mut conjuncts = Vec::new();
        conjuncts_of(expression, &mut conjuncts);
        if conjuncts.len() > 1 {
            // A row passes `a && b` when both are true (an error in either drops it): the
            // conjuncts decided per id or on pairs of ids run first, each on the rows the
            // last one kept.
            let mut table = table;
            let mut rest: Vec<&Expression> = Vec::new();
            for conjunct in conjuncts {
                if let Some(kept) = self.filter_by_ids(&table, conjunct)? {
                    table = kept;
                } else if let Some(kept) = self.filter_by_id_pairs(&table, conjunct)? {
                    table = kept;
                } else {
                    rest.push(conjunct);
                }
            }
            return if rest.is_empty() {
                Ok(table)
            } else {
                self.filter_row_by_row(table, &rest)
            };
        }
        self.filter_row_by_row(table, &[expression])
    }

    /// The rows of `table` for which every one of `conjuncts` is true, evaluated row by
    /// row. (The conjuncts are the query's own expressions, not copies: EXISTS patterns
    /// are found by where they are.)
    fn filter_row_by_row(
        &self,
        table: Table,
        conjuncts: &[&Expression],
    ) -> Result<Table, QueryError> {
        if let Some(kept) = self.filter_memoised(&table, conjuncts)? {
            return Ok(kept);
        }
        let ctx = self.ctx();
        let mut keep: Vec<u32> = Vec::new();
        for row in 0..table.rows {
            ctx.tick(row)?;
            if conjuncts.iter().all(|c| self.truth(c, &table, row)) {
                keep.push(row as u32);
            }
        }
        // An error recorded by the last rows' EXISTS must not pass as a result.
        ctx.check()?;
        Ok(table.gather(&keep))
    }

    /// `FILTER EXISTS { bgp }` or `{ bgp FILTER(…) }` (`NOT EXISTS` when `negated`) over
    /// the whole table at once: the pattern runs seeded with every row, tagged with its row
    /// number, its filters run on what it finds, and the rows that found a match are kept
    /// (or dropped). `None` when the pattern is another shape ([`batched_shape`]), shares a
    /// variable the table binds only in some rows, or has a filter but shares no variable;
    /// the caller then evaluates EXISTS row by row.
    pub(crate) fn filter_exists(
        &self,
        table: &Table,
        pattern: &GraphPattern,
        negated: bool,
    ) -> Result<Option<Table>, QueryError> {
        let operator = self.exists_operator(pattern)?;
        let mut after = Vec::new();
        let Some(planned) = batched_shape(operator, &mut after) else {
            return Ok(None);
        };
        let pattern_vars = planned.bgp.vars();
        // The outer variables the pattern's filters read are carried along, as
        // substitution gives them their values.
        let mut read = Vec::new();
        for step in &after {
            if let After::Filter(expression) = step {
                crate::operands::per_id(expression, &mut read);
            }
        }
        let mut seeds = Vec::new();
        for &var in &pattern_vars {
            match table.column(var) {
                Some(column) if column.contains(&UNBOUND) => return Ok(None),
                Some(_) => seeds.push(var),
                None => {}
            }
        }
        let carried: Vec<VarId> = read
            .iter()
            .filter_map(|variable| self.vars.get(variable))
            .filter(|var| !pattern_vars.contains(var) && table.column(*var).is_some())
            .collect();
        if !after.is_empty() && seeds.is_empty() {
            return Ok(None);
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
        if after.is_empty() {
            if let Some(keep) = self.kept_by_degree(planned, table, &seeds, negated)? {
                return Ok(Some(table.gather(&keep)));
            }
        }
        ensure_addressable(table.rows)?;
        let (steps, seeded_cost) = crate::planner::plan_costed(
            &planned.bgp,
            self.store,
            self.context(planned.graph).graph,
            &seeds,
            table.rows as f64,
        );
        if carried.is_empty() {
            let alone = self.exists_alone(planned, &after, table, &seeds, seeded_cost, negated)?;
            if let Some(keep) = alone {
                return Ok(Some(table.gather(&keep)));
            }
        }
        let mut input = table.reshape(&[&seeds[..], &carried[..]].concat());
        input.vars.push(ROW_VAR);
        input.columns.push((0..table.rows as Id).collect());
        let mut local = planned.clone();
        local.seeded = Some((seeds, steps));
        let found = self.row_numbers_found(&local, input, after.is_empty())?;
        let rows = found.rows;
        let found = self.after_exists(found, &after)?;
        if !after.is_empty() {
            self.notes.borrow_mut().push(format!(
                "exists: the pattern seeded with {} rows at once, its filters keeping {} of \
                 the {rows} rows found",
                table.rows, found.rows
            ));
        }
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

    /// The rows `seeded` (a pattern planned from the seed columns of `input`) finds from
    /// `input`'s rows, each with its row's number (`ROW_VAR`). Over partitions, when only
    /// the row numbers are read (`only_numbers`: no filter runs after the pattern), only
    /// whether a row found a match is: the workers send the row numbers as the keys of a
    /// count nobody reads (`PartitionedBgp::distinct_only`), each once where that makes
    /// them fewer, not every match.
    fn row_numbers_found(
        &self,
        seeded: &PlannedBgp,
        input: Table,
        only_numbers: bool,
    ) -> Result<Table, QueryError> {
        let counting = only_numbers && self.partitions.is_some();
        if counting {
            *self.pending_count_by.borrow_mut() = Some(vec![ROW_VAR]);
            self.pending_distinct_only.set(true);
        }
        let found = self.bgp(seeded, input, true, None);
        if counting {
            self.pending_count_by.borrow_mut().take();
            self.pending_distinct_only.set(false);
            self.counted.borrow_mut().take();
        }
        found
    }

    /// `found`, the rows an EXISTS pattern's basic graph pattern found, through what runs
    /// after it (`after`, innermost first).
    pub(super) fn after_exists(
        &self,
        mut found: Table,
        after: &[After<'_>],
    ) -> Result<Table, QueryError> {
        for step in after {
            found = match step {
                After::Filter(expression) => self.filter_rows(found, expression)?,
                After::Values(values) => {
                    hash_join(&self.ctx(), &found, &self.evaluate(values)?, false)?
                }
            };
        }
        Ok(found)
    }

    /// The rows of `table` that have a match of `planned` (none, when `negated`) when the
    /// pattern is one edge over a constant predicate whose one end is the only seed and
    /// whose other end is a variable of its own: whether the seed's list of that predicate,
    /// that way, is not empty (its length, read without walking it; see [`EdgeCheck`]).
    /// `None` otherwise, and over partitions, whose coordinator holds only its own lists.
    fn kept_by_degree(
        &self,
        planned: &PlannedBgp,
        table: &Table,
        seeds: &[VarId],
        negated: bool,
    ) -> Result<Option<Vec<u32>>, QueryError> {
        let ([seed], None) = (seeds, &self.partitions) else {
            return Ok(None);
        };
        let Some(check) = lone_edge(planned, |var| var == *seed, None, !negated) else {
            return Ok(None);
        };
        let graph = self.context(planned.graph).graph;
        let parts = map_morsels(&self.ctx(), table.rows, |rows| {
            check.passing(graph, table, rows)
        })?;
        Ok(Some(parts.concat()))
    }

    /// EXISTS for one row: runs the pattern's operator (compiled on the graph of the node
    /// holding the expression) with the row's bindings substituted. EXISTS may nest. An
    /// error is recorded (see the module doc) and answers `false` until the next check
    /// stops the query.
    pub(crate) fn exists(&self, pattern: &GraphPattern, table: &Table, row: usize) -> bool {
        if self.state.error().is_some() {
            return false;
        }
        let found = self.scoped(|| {
            let operator = self.exists_operator(pattern)?;
            let seed = table.gather(&[row as u32]);
            let bound: Vec<VarId> = seed
                .vars
                .iter()
                .copied()
                .filter(|&v| seed.value(0, v) != UNBOUND)
                .collect();
            Ok(self.substituted(operator, &seed.reshape(&bound))?.rows > 0)
        });
        found.unwrap_or_else(|error: QueryError| {
            self.state.fail(error);
            false
        })
    }

    /// Evaluates `operator` with the bindings of `seed` (one row, bound columns only)
    /// substituted, as EXISTS requires: basic graph patterns run seeded with the row and
    /// keep its columns, so every filter inside sees the row's values; joins and unions
    /// pass the row down; other operators run alone and are joined with the row.
    fn substituted(&self, operator: &Operator, seed: &Table) -> Result<Table, QueryError> {
        let ctx = self.ctx();
        Ok(match operator {
            Operator::Bgp(planned) => {
                let mut local = planned.clone();
                let steps = crate::planner::plan(
                    &planned.bgp,
                    self.store,
                    self.context(planned.graph).graph,
                    &seed.vars,
                    1.0,
                );
                local.seeded = Some((seed.vars.clone(), steps));
                self.bgp(&local, seed.clone(), true, None)?
            }
            Operator::Join(a, b) => hash_join(
                &ctx,
                &self.substituted(a, seed)?,
                &self.substituted(b, seed)?,
                false,
            )?,
            Operator::Union(a, b) => {
                union(&ctx, self.substituted(a, seed)?, self.substituted(b, seed)?)?
            }
            Operator::Filter(expression, inner) => {
                self.filter(self.substituted(inner, seed)?, expression)?
            }
            other => hash_join(&ctx, seed, &self.evaluate(other)?, false)?,
        })
    }

    /// The operator of an EXISTS pattern, compiled with the node that holds it.
    fn exists_operator(&self, pattern: &GraphPattern) -> Result<&Operator, QueryError> {
        self.exists.get(pattern).ok_or_else(|| {
            QueryError::Unsupported(format!("EXISTS {pattern} was not compiled with its node"))
        })
    }
}

/// What [`Evaluator::minus_by_check`] did with a MINUS.
pub(crate) enum Minused {
    /// Decided it: its rows.
    Done(Table),
    /// Left it to the general MINUS, with the left rows when it evaluated them.
    Left(Option<Table>),
}

/// `inner` as the one edge `?x <p> ?y` (or `?y <p> ?x`) of an [`EdgeCheck`]: one pattern
/// over a constant predicate between two variables, `?x` bound in the rows to check
/// (`is_bound`) and `?y` not. Inward edges over `into_class` (the predicate whose inward
/// records the rows' holder may not hold whole) are not taken.
fn lone_edge(
    inner: &PlannedBgp,
    is_bound: impl Fn(VarId) -> bool,
    into_class: Option<PredId>,
    exists: bool,
) -> Option<EdgeCheck> {
    let ([edge], true) = (
        inner.bgp.patterns.as_slice(),
        inner.bgp.equalities.is_empty(),
    ) else {
        return None;
    };
    let Pred::Const(predicate) = edge.predicate else {
        return None;
    };
    let (var, direction) = match (edge.subject, edge.object) {
        (Node::Var(s), Node::Var(o)) if is_bound(s) && !is_bound(o) => (s, Direction::Out),
        (Node::Var(s), Node::Var(o))
            if is_bound(o) && !is_bound(s) && Some(predicate) != into_class =>
        {
            (o, Direction::In)
        }
        _ => return None,
    };
    Some(EdgeCheck {
        var,
        predicate,
        direction,
        exists,
    })
}

/// What runs on the rows an EXISTS pattern's basic graph pattern finds: a FILTER of the
/// pattern, or a join with the VALUES row its `?v = <iri>` conjunct became (an
/// `Operator::Values` over variables of the pattern).
pub(super) enum After<'o> {
    Filter(&'o Expression),
    Values(&'o Operator),
}

/// The basic graph pattern of an EXISTS operator that is one, under FILTERs (decided from
/// the row alone: no EXISTS, nothing fresh) and joins with VALUES over its variables; what
/// runs after it goes to `after`, innermost first. `None` for any other shape.
fn batched_shape<'o>(operator: &'o Operator, after: &mut Vec<After<'o>>) -> Option<&'o PlannedBgp> {
    match operator {
        Operator::Bgp(planned) => Some(planned),
        Operator::Filter(expression, inner)
            if crate::operands::per_id(expression, &mut Vec::new()) =>
        {
            let planned = batched_shape(inner, after)?;
            after.push(After::Filter(expression));
            Some(planned)
        }
        Operator::Join(a, b) => {
            let (values, vars, inner) = match (&**a, &**b) {
                (values @ Operator::Values { vars, .. }, inner)
                | (inner, values @ Operator::Values { vars, .. }) => (values, vars, inner),
                _ => return None,
            };
            let planned = batched_shape(inner, after)?;
            let pattern_vars = planned.bgp.vars();
            if vars.iter().any(|var| !pattern_vars.contains(var)) {
                return None;
            }
            after.push(After::Values(values));
            Some(planned)
        }
        _ => None,
    }
}

/// The operands of `expression`'s top-level `&&`s, left to right (itself when it is none).
fn conjuncts_of<'e>(expression: &'e Expression, into: &mut Vec<&'e Expression>) {
    match expression {
        Expression::And(a, b) => {
            conjuncts_of(a, into);
            conjuncts_of(b, into);
        }
        other => into.push(other),
    }
}
