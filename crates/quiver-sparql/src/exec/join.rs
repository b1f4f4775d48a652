//! Joins with SPARQL's compatibility semantics. A right basic graph pattern whose shared
//! variables the left rows bind runs seeded with them (`bgp/`), and so does each branch of
//! a right UNION of such patterns (`L ⋈ (A ∪ B) = (L ⋈ A) ∪ (L ⋈ B)`); otherwise both
//! sides run alone and meet in a hash join on the shared variables (rows with an unbound
//! shared variable are looked up by the variables they bind, `key_index.rs`).
//!
//! The hash join checks the query's limits every few thousand rows or row pairs, and
//! charges its hash index and output to its memory budget as they grow.
//!
//! An empty left side ends the join before the right side runs. Under a LIMIT a join
//! builds no more than it needs: a cross product asks each side for the limit's rows
//! (each row of one side pairs with every row of the other) and stops at the limit; a join
//! on shared variables asks its left side for the limit's rows, and for four times more
//! each time the rows found do not reach the limit while the left side had more
//! ([`Evaluator::grow_until`]).

use std::cell::RefCell;

use quiver_model::Id;

use super::key_index::KeyIndex;
use super::Evaluator;
use crate::context::{ensure_addressable, table_bytes, ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::operator::estimate::{may_share, possible_vars};
use crate::operator::Operator;
use crate::table::{Table, VarId, UNBOUND};

/// The hidden column that numbers the left rows of an OPTIONAL (seeded or hashed).
pub(crate) const ROW_VAR: VarId = usize::MAX;

/// Joins compatible rows (SPARQL semantics: an unbound value is compatible with any).
/// With `track_rows`, the result carries the left row number in the `ROW_VAR` column.
pub(crate) fn hash_join(
    ctx: &ExecContext<'_>,
    left: &Table,
    right: &Table,
    track_rows: bool,
) -> Result<Table, QueryError> {
    hash_join_up_to(ctx, left, right, track_rows, usize::MAX)
}

/// [`hash_join`] stopping once it has `limit` rows.
pub(crate) fn hash_join_up_to(
    ctx: &ExecContext<'_>,
    left: &Table,
    right: &Table,
    track_rows: bool,
    limit: usize,
) -> Result<Table, QueryError> {
    ensure_addressable(left.rows)?;
    ensure_addressable(right.rows)?;
    let common: Vec<VarId> = left
        .vars
        .iter()
        .copied()
        .filter(|v| right.vars.contains(v) && *v != ROW_VAR)
        .collect();
    let mut vars = left.vars.clone();
    vars.extend(right.vars.iter().filter(|v| !left.vars.contains(v)));
    let track_rows = track_rows && !left.vars.contains(&ROW_VAR);
    if track_rows {
        vars.push(ROW_VAR);
    }
    let mut index_memory = ctx.reservation();
    let mut index = KeyIndex::build(right, &common, &mut index_memory, &mut |row| ctx.tick(row))?;
    let left_columns: Vec<Option<&[Id]>> = vars.iter().map(|&v| left.column(v)).collect();
    let right_columns: Vec<Option<&[Id]>> = vars.iter().map(|&v| right.column(v)).collect();
    let mut result = Table::empty(vars.clone());
    let mut output_memory = ctx.reservation();
    let mut visited = 0usize;
    let mut push = |result: &mut Table, l: usize, r: usize| -> Result<(), QueryError> {
        for (c, &var) in vars.iter().enumerate() {
            let value = if var == ROW_VAR && track_rows {
                l as Id
            } else {
                match left_columns[c].map(|column| column[l]) {
                    Some(lv) if lv != UNBOUND => lv,
                    _ => right_columns[c].map_or(UNBOUND, |column| column[r]),
                }
            };
            result.columns[c].push(value);
        }
        result.rows += 1;
        if result.rows.is_multiple_of(CHECK_STRIDE) {
            output_memory.try_resize(table_bytes(result.rows, vars.len()))?;
        }
        Ok(())
    };
    let mut matched: Vec<u32> = Vec::new();
    let mut key: Vec<Id> = Vec::with_capacity(common.len());
    for l in 0..left.rows {
        if result.rows >= limit {
            break;
        }
        ctx.tick(l)?;
        key.clear();
        key.extend(common.iter().map(|&v| left.value(l, v)));
        index.matches(&key, &mut index_memory, &mut matched)?;
        for &r in &matched {
            visited += 1;
            ctx.tick(visited)?;
            push(&mut result, l, r as usize)?;
        }
    }
    Ok(result)
}

/// Whether every variable `expression` reads passes `allowed`, with no EXISTS (whose
/// pattern sees every binding of the row).
fn reads_only(
    expression: &spargebra::algebra::Expression,
    allowed: &mut impl FnMut(&oxrdf::Variable) -> bool,
) -> bool {
    use spargebra::algebra::Expression;
    match expression {
        Expression::Variable(v) | Expression::Bound(v) => allowed(v),
        Expression::Exists(_) => false,
        other => {
            let mut all = true;
            crate::operands::for_each_operand(other, &mut |operand| {
                all = all && reads_only(operand, allowed)
            });
            all
        }
    }
}

/// The result of a join whose left side is empty: no rows, over the variables of both.
pub(crate) fn empty_join(left: Table, right: &Operator) -> Table {
    let mut vars = left.vars;
    crate::bgp::add_vars(&mut vars, possible_vars(right));
    Table::empty(vars)
}

impl<'a> Evaluator<'a> {
    /// `left ⋈ right`, asked for `limit` rows at most.
    pub(crate) fn join_operator(
        &self,
        left: &Operator,
        right: &Operator,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        let right_alone = RefCell::new(None);
        let Some(limit) = limit else {
            let left = self.evaluate(left)?;
            return self.join(left, right, None, &right_alone);
        };
        if !may_share(left, right) {
            // A cross product: `limit` rows of each side are enough.
            self.pending_limit.set(Some(limit));
            let left = self.evaluate(left)?;
            if left.rows == 0 {
                return Ok(empty_join(left, right));
            }
            self.pending_limit.set(Some(limit));
            let right = self.evaluate(right)?;
            let joined = hash_join_up_to(&self.ctx(), &left, &right, false, limit)?;
            self.note_cut(joined.rows, Some(limit));
            return Ok(joined);
        }
        self.grow_until(left, limit, |left| {
            self.join(left, right, Some(limit), &right_alone)
        })
    }

    /// The join of `left`'s rows with `right`, up to `limit` rows; `right_alone` keeps
    /// `right`'s rows when it runs on its own, for the next call.
    fn join(
        &self,
        left: Table,
        right: &Operator,
        limit: Option<usize>,
        right_alone: &RefCell<Option<(Table, Reservation<'a>)>>,
    ) -> Result<Table, QueryError> {
        if left.rows == 0 {
            return Ok(empty_join(left, right));
        }
        if let Some(planned) = self.seedable(&left, right) {
            return self.bgp(planned, left, true, limit);
        }
        if let Operator::Union(a, b) = right {
            if self.seeds_every_branch(&left, right) {
                // The left rows serve both branches: the copy is charged while it lives.
                let mut copy = self.ctx().reservation();
                copy.try_grow(table_bytes(left.rows, left.columns.len()))?;
                let first = self.join(left.clone(), a, limit, &RefCell::new(None))?;
                let second = self.join(left, b, limit, &RefCell::new(None))?;
                drop(copy);
                return super::union::union(&self.ctx(), first, second);
            }
        }
        // A basic graph pattern under filters that read only its own variables (those the
        // group pushed onto it): seeded, then filtered (innermost first), with no limit,
        // since the filters drop rows. A filter reading another variable must not see the
        // left rows' value of it (it is unbound in the pattern's own group).
        let mut filters = Vec::new();
        let mut under = right;
        while let Operator::Filter(expression, inner) = under {
            filters.push(expression);
            under = inner;
        }
        let own = |bgp_vars: &[VarId]| {
            filters.iter().all(|expression| {
                reads_only(expression, &mut |variable| {
                    self.vars
                        .get(variable)
                        .is_some_and(|v| bgp_vars.contains(&v))
                })
            })
        };
        if let (false, Operator::Bgp(planned)) = (filters.is_empty(), under) {
            if let Some(planned) = own(&planned.bgp.vars())
                .then(|| self.seedable(&left, under))
                .flatten()
            {
                let mut table = self.bgp(planned, left, true, None)?;
                for expression in filters.into_iter().rev() {
                    table = self.filter_rows(table, expression)?;
                }
                return Ok(table);
            }
        }
        let joined = match right {
            Operator::Path(_) | Operator::Service(_) => {
                let right = self.evaluate_right(&left, right)?;
                hash_join_up_to(
                    &self.ctx(),
                    &left,
                    &right,
                    false,
                    limit.unwrap_or(usize::MAX),
                )?
            }
            other => {
                let mut cached = right_alone.borrow_mut();
                if cached.is_none() {
                    let right = self.evaluate(other)?;
                    // Charged for as long as it is kept, across rounds.
                    let mut held = self.state.budget().reservation();
                    held.try_grow(table_bytes(right.rows, right.columns.len()))?;
                    *cached = Some((right, held));
                }
                let (right, _) = cached.as_ref().expect("evaluated above");
                hash_join_up_to(
                    &self.ctx(),
                    &left,
                    right,
                    false,
                    limit.unwrap_or(usize::MAX),
                )?
            }
        };
        self.note_cut(joined.rows, limit);
        Ok(joined)
    }

    /// Whether `operator` is a basic graph pattern seedable with `left`'s rows, or a UNION
    /// whose every branch is.
    fn seeds_every_branch(&self, left: &Table, operator: &Operator) -> bool {
        match operator {
            Operator::Union(a, b) => {
                self.seeds_every_branch(left, a) && self.seeds_every_branch(left, b)
            }
            Operator::Bgp(_) => self.seedable(left, operator).is_some(),
            _ => false,
        }
    }

    /// The right side of a join: a path between variables walks only from the values the
    /// left rows bind to one of its ends; a SERVICE is sent the left rows' bindings.
    pub(crate) fn evaluate_right(
        &self,
        left: &Table,
        right: &Operator,
    ) -> Result<Table, QueryError> {
        match right {
            Operator::Path(pattern) => self.path(pattern, Some(left)),
            Operator::Service(service) => self.service(service, Some(left), None),
            other => self.evaluate(other),
        }
    }
}
