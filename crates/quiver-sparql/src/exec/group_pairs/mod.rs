//! GROUP BY over a cross product filtered by one triple's (NOT) EXISTS, without building
//! the product.
//!
//! "The average price of the offers whose product lacks feature ?f", for every feature ?f
//! of a type (BSBM's business-intelligence Q4), is written as
//!
//! ```sparql
//! { SELECT DISTINCT ?f { … } }  ?product … ?offer … ?price .
//! FILTER NOT EXISTS { ?product :feature ?f }
//! } GROUP BY ?f
//! ```
//!
//! The two sides share no variable, so the filter runs over their cross product: 1,480
//! features × 28,525 offers are 42 M rows built, filtered by a lookup each, and grouped,
//! to make 1,480 averages. Here the product is never built. The side holding the group
//! keys (the *keyed* side, `?f`) is grouped once; for each row of the other side (the
//! *valued* side), the EXISTS triple's list (`?product`'s features) names the keyed rows
//! it excludes (NOT EXISTS) or keeps (EXISTS), and each aggregate adds that row's value
//! to the groups of the kept keyed rows. The pairs come in the order the product would
//! list them (valued row by valued row), so sums add in the same order.
//!
//! It applies when: the GROUP BY keys are variables of one side only; the filter is one
//! `(NOT) EXISTS` of a single triple pattern with a constant predicate joining a variable
//! of each side, bound in every row; each aggregate is `COUNT(*)` or reads one side only
//! (a variable, or an expression of one side's variables with nothing random or fresh),
//! and none is DISTINCT other than MIN and MAX. Otherwise the operator tree runs as
//! written. A group whose pairs are all filtered out makes no row, as it would not exist
//! in the product.

mod pairs;
mod shape;

use std::time::Instant;

use quiver_expr::Number;
use quiver_model::Id;
use rustc_hash::FxHashMap;
use spargebra::algebra::Expression;

use super::group::{fold, integers, sum_terms, Aggregate, Function, GroupProfile, Groups};
use super::join::hash_join;
use super::Evaluator;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::Operator;
use crate::table::{Table, VarId, UNBOUND};
use pairs::{add_up_pairs, Addends, Job, PairSource, Partial};

/// Where an aggregate's values come from: a value per keyed row or per valued row.
pub(super) enum Side<T> {
    Keyed(Vec<T>),
    Valued(Vec<T>),
}

impl<T: Copy> Side<T> {
    /// The values, row by row of their side.
    pub(super) fn values(&self) -> &[T] {
        match self {
            Side::Keyed(values) | Side::Valued(values) => values,
        }
    }

    /// Other values of the same side.
    pub(super) fn like<U>(&self, values: Vec<U>) -> Side<U> {
        match self {
            Side::Keyed(_) => Side::Keyed(values),
            Side::Valued(_) => Side::Valued(values),
        }
    }

    /// The value paired with keyed row `keyed` and valued row `valued`.
    #[inline]
    pub(super) fn at(&self, keyed: u32, valued: u32) -> T {
        match self {
            Side::Keyed(values) => values[keyed as usize],
            Side::Valued(values) => values[valued as usize],
        }
    }
}

impl Evaluator<'_> {
    /// GROUP BY `keys` computing `aggregates` over `inner`, when `inner` is a cross
    /// product under one triple's (NOT) EXISTS (see the module doc); `None` otherwise.
    pub(crate) fn group_over_pairs(
        &self,
        inner: &Operator,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
    ) -> Result<Option<Table>, QueryError> {
        let Some(shape) = self.pair_shape(inner, keys, aggregates)? else {
            return Ok(None);
        };
        let started = Instant::now();
        let keyed = self.evaluate(&shape.keyed)?;
        let valued = self.evaluate(&shape.valued)?;
        let unbound = |table: &Table, var: VarId| {
            table
                .column(var)
                .is_none_or(|column| column.contains(&UNBOUND))
        };
        if unbound(&keyed, shape.keyed_var) || unbound(&valued, shape.valued_var) {
            // The EXISTS pattern would be free in that variable: run the product.
            let product = hash_join(&self.ctx(), &keyed, &valued, false)?;
            let filtered = self.filter_rows(product, shape.filter)?;
            let (table, profile) = super::group::group(self, &filtered, keys, aggregates)?;
            self.group_profiles.borrow_mut().push(profile);
            return Ok(Some(table));
        }
        let graph = self.context(shape.graph).graph;
        let source = PairSource::new(&shape, &keyed, &valued, graph);
        let ctx = self.ctx();
        let mut memory = ctx.reservation();
        let groups = Groups::of(&ctx, &mut memory, &keyed, keys)?;
        let mut jobs = Vec::with_capacity(aggregates.len());
        for (_, aggregate) in aggregates {
            jobs.push(self.job(aggregate, &keyed, &valued)?);
        }
        memory.try_grow(groups.count * (ID_BYTES * aggregates.len() + 40))?;
        let (counts, partials) =
            add_up_pairs(&ctx, &source, &groups, &jobs, keyed.rows, valued.rows)?;
        let mut vars = keys.to_vec();
        let mut columns = groups.key_columns(&keyed, keys);
        for ((var, aggregate), (job, partial)) in aggregates.iter().zip(jobs.iter().zip(partials)) {
            vars.push(*var);
            columns.push(match (job, partial) {
                (Job::All, _) => integers(self, counts.clone()),
                (_, Partial::Counts(bound)) => integers(self, bound),
                (_, Partial::Sums(sums, numbers)) => {
                    sum_terms(self, &aggregate.function, sums, numbers)
                }
                (Job::Fold(ids), Partial::Later) => {
                    let mut stopped = None;
                    let all = 0..groups.count as u32;
                    let entries = source
                        .pairs(&ctx, &mut stopped, &groups.of_row, all)
                        .map(|(k, v)| (groups.of_row[k as usize] as usize, ids.at(k, v)));
                    let column = fold(self, &aggregate.function, groups.count, entries);
                    if let Some(error) = stopped {
                        return Err(error);
                    }
                    column
                }
                _ => unreachable!("each job makes its kind of partial"),
            });
        }
        // Only the groups that kept a pair exist.
        let kept: Vec<usize> = (0..groups.count).filter(|&g| counts[g] > 0).collect();
        let rows = kept.len();
        let columns = columns
            .into_iter()
            .map(|column| kept.iter().map(|&g| column[g]).collect())
            .collect();
        let total: u64 = counts.iter().sum();
        self.group_profiles.borrow_mut().push(GroupProfile {
            rows: usize::try_from(total).unwrap_or(usize::MAX),
            groups: rows,
            micros: started.elapsed().as_secs_f64() * 1e6,
        });
        self.notes.borrow_mut().push(format!(
            "group over pairs: {} × {} rows under {}EXISTS, {total} pairs kept, none built",
            keyed.rows,
            valued.rows,
            if shape.negated { "NOT " } else { "" },
        ));
        Ok(Some(Table {
            vars,
            columns,
            rows,
        }))
    }

    /// What `aggregate` needs of each side's rows.
    fn job(&self, aggregate: &Aggregate, keyed: &Table, valued: &Table) -> Result<Job, QueryError> {
        let Some(argument) = &aggregate.argument else {
            return Ok(Job::All);
        };
        Ok(match (&aggregate.function, aggregate.distinct) {
            (Function::Sum | Function::Avg, false) => Job::Add(Addends::of(self.side_values(
                argument,
                keyed,
                valued,
                |term| term.and_then(|term| Number::of(&term)),
            )?)),
            (Function::Count, false) => {
                Job::Bound(self.side_values(argument, keyed, valued, |term| term.is_some())?)
            }
            _ => Job::Fold(match argument {
                Expression::Variable(variable) => {
                    side_column(self.vars.get(variable), keyed, valued)
                }
                _ => self.side_values(argument, keyed, valued, |term| {
                    term.map_or(UNBOUND, |term| self.intern(&term))
                })?,
            }),
        })
    }

    /// The value of `argument` for each row of the side whose variables it reads, each
    /// distinct id of its one variable evaluated once.
    fn side_values<T: Copy>(
        &self,
        argument: &Expression,
        keyed: &Table,
        valued: &Table,
        convert: impl Fn(Option<oxrdf::Term>) -> T,
    ) -> Result<Side<T>, QueryError> {
        let mut variables = Vec::new();
        crate::operands::per_id(argument, &mut variables);
        let reads = |table: &Table| {
            variables
                .iter()
                .all(|v| self.vars.get(v).is_some_and(|v| table.vars.contains(&v)))
        };
        let table = if reads(keyed) { keyed } else { valued };
        let ctx = self.ctx();
        let column = match variables.as_slice() {
            [variable] => self.vars.get(variable).and_then(|v| table.column(v)),
            _ => None,
        };
        let value = |row: usize| {
            convert(match argument {
                Expression::Variable(_) => column
                    .map(|c| c[row])
                    .filter(|&id| id != UNBOUND)
                    .and_then(|id| self.term(id)),
                _ => self.expression(argument, table, row),
            })
        };
        let mut values = Vec::with_capacity(table.rows);
        let mut memo: FxHashMap<Id, T> = FxHashMap::default();
        for row in 0..table.rows {
            ctx.tick(row)?;
            values.push(match column {
                Some(column) => *memo.entry(column[row]).or_insert_with(|| value(row)),
                None => value(row),
            });
        }
        Ok(if std::ptr::eq(table, keyed) {
            Side::Keyed(values)
        } else {
            Side::Valued(values)
        })
    }
}

/// A variable's ids on the side that binds it (unbound everywhere when neither does).
fn side_column(var: Option<VarId>, keyed: &Table, valued: &Table) -> Side<Id> {
    let column = |table: &Table| var.and_then(|var| table.column(var)).map(<[Id]>::to_vec);
    match (column(keyed), column(valued)) {
        (Some(ids), _) => Side::Keyed(ids),
        (None, Some(ids)) => Side::Valued(ids),
        (None, None) => Side::Valued(vec![UNBOUND; valued.rows]),
    }
}
