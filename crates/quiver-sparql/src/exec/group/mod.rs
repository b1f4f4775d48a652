//! GROUP BY and aggregates (SPARQL 1.1 §11 and §18.5) over id tables.
//!
//! Rows are grouped by the ids of their key columns, without decoding a term (UNBOUND is a
//! key value like any other: ids identify terms, so equal ids are equal keys): one or two
//! keys packed into one integer, up to 128 bits into a `u128`, wider keys hashed and
//! compared in place. Each morsel of rows is hashed on a worker thread, then the morsels'
//! groups are numbered in order of first appearance, as one pass would number them.
//! COUNT, SAMPLE and the DISTINCT of every aggregate also work on ids; MIN and MAX compare
//! sort keys of ids (`sort_key.rs`); only SUM, AVG and GROUP_CONCAT decode the values they
//! combine, each distinct id once. SUM and AVG add numbers (`quiver_expr::Number`), not
//! terms: a term is built once per group. An aggregate over an expression (rather than a
//! plain variable) evaluates it once per row, or once per distinct id when it reads one
//! variable and nothing random or fresh (`crate::operands::per_id`); SUM and AVG (without
//! DISTINCT) take its values as numbers, without an id for each.
//!
//! Without GROUP BY variables there is exactly one group, even over no rows (so
//! `COUNT(*)` is 0 there); with them, no rows make no groups. An error inside an
//! aggregate (a non-number in SUM, an unbound or non-string value in GROUP_CONCAT…)
//! leaves that aggregate unbound for that group only; COUNT skips unbound values and
//! SAMPLE takes the first bound one.
//!
//! Rows that stand for several each (a pattern's rows counted where a cluster's workers
//! found them) are grouped by the same code, each aggregate weighing them (`counted.rs`).
//! The grouping itself is in `keys.rs`, MIN and MAX in `extremes.rs`.

use std::borrow::Cow;
use std::time::Instant;

use oxrdf::vocab::xsd;
use oxrdf::{Literal, Term};
use quiver_expr::Number;
use quiver_model::Id;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::Expression;

use super::parallel::{map_morsels, on_workers, parallel};
use super::scope::Scope;
use crate::context::{ensure_addressable, ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::table::{Table, VarId, UNBOUND};

pub use crate::operator::group::{Aggregate, Function};
pub use counted::counted;
pub(crate) use counted::{counted_columns, extreme_columns};

mod counted;
mod extremes;
mod keys;

use extremes::extremes;
pub(in crate::exec) use keys::Groups;

/// What one grouping did, for EXPLAIN.
#[derive(Debug, Clone)]
pub struct GroupProfile {
    pub rows: usize,
    pub groups: usize,
    pub micros: f64,
}

/// Groups `table` by `keys` and computes `aggregates`: one row per group with the key
/// columns and then one column per aggregate.
pub fn group(
    evaluator: &dyn Scope,
    table: &Table,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Result<(Table, GroupProfile), QueryError> {
    grouped(evaluator, table, None, keys, aggregates)
}

/// [`group`], or with `weights`, [`counted`].
fn grouped(
    evaluator: &dyn Scope,
    table: &Table,
    weights: Option<&[u64]>,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Result<(Table, GroupProfile), QueryError> {
    let started = Instant::now();
    ensure_addressable(table.rows)?;
    let ctx = evaluator.ctx();
    let mut memory = ctx.reservation();
    let groups = Groups::of(&ctx, &mut memory, table, keys)?;
    let mut vars = keys.to_vec();
    let mut columns = groups.key_columns(table, keys);
    for (var, aggregate) in aggregates {
        vars.push(*var);
        memory.try_grow(groups.count * ID_BYTES)?;
        columns.push(match weights {
            // Rows that stand for several each.
            Some(weights) => {
                counted::weighted_column(evaluator, &ctx, table, &groups, weights, aggregate)?
            }
            None => aggregate_column(evaluator, &ctx, table, &groups, aggregate)?,
        });
    }
    let rows = weights.map_or(table.rows, |w| w.iter().sum::<u64>() as usize);
    let profile = GroupProfile {
        rows,
        groups: groups.count,
        micros: started.elapsed().as_secs_f64() * 1e6,
    };
    let table = Table {
        vars,
        columns,
        rows: groups.count,
    };
    Ok((table, profile))
}

/// The columns a grouping of `keys` and `aggregates` reads of its input, when each
/// aggregate reads at most one variable (`COUNT(*)` none); `None` when an aggregate's
/// argument is an expression, or for `COUNT(DISTINCT *)`, which reads whole solutions.
pub(crate) fn columns_read(
    vars: &crate::bgp::Vars,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Option<Vec<VarId>> {
    let mut columns = keys.to_vec();
    for (_, aggregate) in aggregates {
        match &aggregate.argument {
            None if aggregate.distinct => return None,
            None => {}
            Some(Expression::Variable(variable)) => columns.push(vars.get(variable)?),
            Some(_) => return None,
        }
    }
    columns.sort_unstable();
    columns.dedup();
    Some(columns)
}

fn aggregate_column(
    evaluator: &dyn Scope,
    ctx: &ExecContext<'_>,
    table: &Table,
    groups: &Groups,
    aggregate: &Aggregate,
) -> Result<Vec<Id>, QueryError> {
    let Some(argument) = &aggregate.argument else {
        let counts = if aggregate.distinct {
            count_distinct_solutions(evaluator, ctx, table, groups)?
        } else if groups.count == 1 {
            // One group holds every row: `COUNT(*)` without GROUP BY (or with keys one
            // value of which every row has) is the number of rows, not counted one by one.
            vec![table.rows as u64]
        } else {
            count_rows(ctx, groups, None)?
        };
        return Ok(integers(evaluator, counts));
    };
    let computed = !matches!(argument, Expression::Variable(_));
    if let (Function::Sum | Function::Avg, false, true) =
        (&aggregate.function, aggregate.distinct, computed)
    {
        // The expression's values added as numbers as they come: no id for each, no
        // column of them (once per distinct id of its one variable, when it reads one).
        let column = per_id_column(evaluator, table, argument);
        let mut memo: FxHashMap<Id, Option<Number>> = FxHashMap::default();
        let value = |row: usize| {
            evaluator
                .expression(argument, table, row)
                .and_then(|term| Number::of(&term))
        };
        let mut stopped: Option<QueryError> = None;
        let rows = Checked {
            inner: 0..table.rows,
            ctx,
            seen: 0,
            stopped: &mut stopped,
        };
        let entries = rows.map(|row| {
            let number = match column {
                Some(column) => *memo.entry(column[row]).or_insert_with(|| value(row)),
                None => value(row),
            };
            (groups.of_row[row] as usize, number)
        });
        let sums = sum(evaluator, &aggregate.function, groups.count, entries);
        return match stopped {
            Some(error) => Err(error),
            None => Ok(sums),
        };
    }
    let values = argument_ids(evaluator, ctx, table, argument)?;
    if let Function::Count = aggregate.function {
        // The bound values of each group, counted on the workers as `COUNT(*)` is; the
        // distinct ones, each worker over its own share of the groups.
        let counts = if aggregate.distinct {
            count_distinct_values(ctx, groups, &values)?
        } else {
            count_rows(ctx, groups, Some(&values))?
        };
        return Ok(integers(evaluator, counts));
    }
    if let Function::Min | Function::Max = aggregate.function {
        // The extremes of a bag are those of its set: DISTINCT changes nothing.
        return extremes(
            evaluator,
            ctx,
            groups,
            &values,
            aggregate.function == Function::Min,
        );
    }
    // MIN and MAX of a bag are those of its set: skipping repeats saves decoding them.
    let distinct =
        aggregate.distinct || matches!(aggregate.function, Function::Min | Function::Max);
    let mut seen: FxHashSet<(u32, Id)> = FxHashSet::default();
    let mut memory = ctx.reservation();
    if distinct {
        // The set of (group, value) pairs: at most one entry per row.
        memory.try_grow(table.rows.saturating_mul(24))?;
    }
    let mut stopped: Option<QueryError> = None;
    let entries = Checked {
        inner: groups.of_row.iter().zip(values.iter()),
        ctx,
        seen: 0,
        stopped: &mut stopped,
    }
    .map(|(&group, &id)| (group as usize, id));
    // Two copies of the fold, so that the common case does not pay for the filter.
    let column = if distinct {
        fold(
            evaluator,
            &aggregate.function,
            groups.count,
            entries.filter(|&(group, id)| seen.insert((group as u32, id))),
        )
    } else {
        fold(evaluator, &aggregate.function, groups.count, entries)
    };
    match stopped {
        Some(error) => Err(error),
        None => Ok(column),
    }
}

/// How many rows each group has (`COUNT(*)`), or with `values`, how many of them have a
/// bound value there (`COUNT(?v)`): counted on the query's threads, morsel by morsel.
fn count_rows(
    ctx: &ExecContext<'_>,
    groups: &Groups,
    values: Option<&[Id]>,
) -> Result<Vec<u64>, QueryError> {
    let parts = per_morsel(
        ctx,
        groups,
        || vec![0u64; groups.count],
        |counts, range| match values {
            None => {
                for &group in &groups.of_row[range] {
                    counts[group as usize] += 1;
                }
            }
            Some(values) => {
                let rows = groups.of_row[range.clone()].iter().zip(&values[range]);
                for (&group, &id) in rows {
                    counts[group as usize] += u64::from(id != UNBOUND);
                }
            }
        },
    )?;
    let mut counts = vec![0; groups.count];
    for part in parts {
        for (total, count) in counts.iter_mut().zip(part) {
            *total += count;
        }
    }
    Ok(counts)
}

/// How many distinct bound values of `values` each group has (`COUNT(DISTINCT ?v)`).
///
/// The set of (group, value) pairs is the work: LUBM-1000's a17 puts 23.8 M rows into it.
/// Each worker keeps the pairs of its own share of the groups (group `g` is share
/// `g % shares`), reading every row's group but hashing only its share's rows, so the
/// sets are disjoint and no merge is needed.
fn count_distinct_values(
    ctx: &ExecContext<'_>,
    groups: &Groups,
    values: &[Id],
) -> Result<Vec<u64>, QueryError> {
    use rayon::prelude::*;
    let rows = groups.of_row.len();
    // The set of pairs: at most one entry per row, over all shares.
    let mut memory = ctx.reservation();
    memory.try_grow(rows.saturating_mul(24))?;
    let shares = if parallel(rows) {
        ctx.threads.max(1)
    } else {
        1
    };
    // Each share's counts, one per group it owns (group `g` at `g / shares`).
    memory.try_grow(groups.count.saturating_mul(std::mem::size_of::<u64>()))?;
    let share = |share: usize| -> Result<Vec<u64>, QueryError> {
        let mut seen: FxHashSet<(u32, Id)> = FxHashSet::default();
        let mut counts = vec![0u64; groups.count.saturating_sub(share).div_ceil(shares)];
        // The pairs met lately, each already in `seen`: a group's rows repeat the same few
        // values (a department's students take its courses), so most rows stop here
        // instead of probing a set of millions of pairs.
        let mut recent = [(u32::MAX, UNBOUND); RECENT_PAIRS];
        for (row, (&group, &id)) in groups.of_row.iter().zip(values).enumerate() {
            ctx.tick(row)?;
            if group as usize % shares != share || id == UNBOUND {
                continue;
            }
            let hash = (u64::from(group) << 32 ^ id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let slot = &mut recent[(hash >> 54) as usize % RECENT_PAIRS];
            if *slot == (group, id) {
                continue;
            }
            *slot = (group, id);
            if seen.insert((group, id)) {
                counts[group as usize / shares] += 1;
            }
        }
        Ok(counts)
    };
    let parts: Vec<Vec<u64>> = if shares == 1 {
        vec![share(0)?]
    } else {
        on_workers(ctx, || (0..shares).into_par_iter().map(share).collect())?
    };
    let mut counts = vec![0; groups.count];
    for (share, part) in parts.into_iter().enumerate() {
        for (at, count) in part.into_iter().enumerate() {
            counts[at * shares + share] = count;
        }
    }
    Ok(counts)
}

/// The (group, value) pairs [`count_distinct_values`] remembers it has met, by hash, before
/// its set of all pairs (a power of two at most 1024: the slot is taken from the hash's
/// top ten bits).
const RECENT_PAIRS: usize = 1024;

/// An iterator that checks the query's limits every stride of items, and ends early
/// (recording why) when a check fails.
pub(super) struct Checked<'c, 'a, I> {
    pub(super) inner: I,
    pub(super) ctx: &'c ExecContext<'a>,
    pub(super) seen: usize,
    pub(super) stopped: &'c mut Option<QueryError>,
}

impl<I: Iterator> Iterator for Checked<'_, '_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        self.seen += 1;
        if self.seen.is_multiple_of(CHECK_STRIDE) {
            if let Err(error) = self.ctx.check() {
                *self.stopped = Some(error);
                return None;
            }
        }
        self.inner.next()
    }
}

/// Combines the (group, value id) entries of an aggregate into one id per group.
pub(super) fn fold(
    evaluator: &dyn Scope,
    function: &Function,
    count: usize,
    entries: impl Iterator<Item = (usize, Id)>,
) -> Vec<Id> {
    let mut decoder = Decoder::new(evaluator);
    match function {
        Function::Count => {
            let mut counts = vec![0; count];
            for (group, id) in entries {
                counts[group] += u64::from(id != UNBOUND);
            }
            integers(evaluator, counts)
        }
        Function::Sample => {
            let mut samples = vec![UNBOUND; count];
            for (group, id) in entries {
                if samples[group] == UNBOUND {
                    samples[group] = id;
                }
            }
            samples
        }
        Function::Sum | Function::Avg => {
            // Each distinct id decoded once.
            let mut numbers: FxHashMap<Id, Option<Number>> = FxHashMap::default();
            let entries = entries.map(|(group, id)| {
                let number = *numbers
                    .entry(id)
                    .or_insert_with(|| decoder.term(id).and_then(Number::of));
                (group, number)
            });
            sum(evaluator, function, count, entries)
        }
        Function::Min | Function::Max => {
            let wanted = if *function == Function::Min {
                std::cmp::Ordering::Less
            } else {
                std::cmp::Ordering::Greater
            };
            let mut best: Vec<Extreme> = vec![Extreme::Empty; count];
            for (group, id) in entries {
                best[group] = match (std::mem::take(&mut best[group]), decoder.term(id)) {
                    (Extreme::Failed, _) | (_, None) => Extreme::Failed,
                    (Extreme::Empty, Some(term)) => Extreme::Best(id, term.clone()),
                    (Extreme::Best(old, current), Some(term)) => {
                        if quiver_expr::order_terms(Some(term), Some(&current)) == wanted {
                            Extreme::Best(id, term.clone())
                        } else {
                            Extreme::Best(old, current)
                        }
                    }
                };
            }
            best.into_iter()
                .map(|extreme| match extreme {
                    Extreme::Best(id, _) => id,
                    Extreme::Empty | Extreme::Failed => UNBOUND,
                })
                .collect()
        }
        Function::GroupConcat(separator) => {
            let mut texts: Vec<Option<String>> = vec![Some(String::new()); count];
            let mut started = vec![false; count];
            for (group, id) in entries {
                let Some(text) = &mut texts[group] else {
                    continue;
                };
                match decoder.term(id).and_then(string_value) {
                    Some(value) => {
                        if started[group] {
                            text.push_str(separator);
                        }
                        text.push_str(value);
                        started[group] = true;
                    }
                    None => texts[group] = None,
                }
            }
            texts
                .into_iter()
                .map(|text| {
                    text.map_or(UNBOUND, |text| {
                        evaluator.intern(&Literal::new_simple_literal(text).into())
                    })
                })
                .collect()
        }
    }
}

/// SUM or AVG of each group of (group, number) entries, added as numbers (`None`: a value
/// that is no number, which leaves its group's aggregate unbound); a term only per group.
fn sum(
    evaluator: &dyn Scope,
    function: &Function,
    count: usize,
    entries: impl Iterator<Item = (usize, Option<Number>)>,
) -> Vec<Id> {
    let (sums, counts) = add_up(count, entries);
    sum_terms(evaluator, function, sums, counts)
}

/// The sums and the numbers of values of `count` groups of (group, number) entries (a
/// sum is `None` once a value is no number, or an integer or decimal sum overflows).
pub(super) fn add_up(
    count: usize,
    entries: impl Iterator<Item = (usize, Option<Number>)>,
) -> (Vec<Option<Number>>, Vec<i64>) {
    let mut sums: Vec<Option<Number>> = vec![Some(Number::zero()); count];
    let mut counts = vec![0_i64; count];
    for (group, number) in entries {
        if let Some(sum) = sums[group] {
            sums[group] = number.and_then(|number| sum.checked_add(number));
            counts[group] += 1;
        }
    }
    (sums, counts)
}

/// SUM or AVG terms of the groups' sums and numbers of values.
pub(super) fn sum_terms(
    evaluator: &dyn Scope,
    function: &Function,
    sums: Vec<Option<Number>>,
    counts: Vec<i64>,
) -> Vec<Id> {
    let average = *function == Function::Avg;
    sums.into_iter()
        .zip(counts)
        .map(|(sum, count)| {
            let result = match (sum, average) {
                (sum, false) => sum.map(Number::to_term),
                (Some(_), true) if count == 0 => Some(Number::zero().to_term()),
                (Some(sum), true) => {
                    quiver_expr::divide(&sum.to_term(), &Literal::from(count).into())
                }
                (None, true) => None,
            };
            result.map_or(UNBOUND, |term| evaluator.intern(&term))
        })
        .collect()
}

/// Folds the rows into states of one entry per group, `fold` adding a range of rows to a
/// state made by `init`: one state per morsel on the query's threads when the groups are
/// few beside the rows, else one state for all rows (a state per morsel would be as long
/// as the groups), with the query's checks between ranges.
fn per_morsel<T: Send>(
    ctx: &ExecContext<'_>,
    groups: &Groups,
    init: impl Fn() -> T + Sync,
    fold: impl Fn(&mut T, std::ops::Range<usize>) + Sync,
) -> Result<Vec<T>, QueryError> {
    let rows = groups.of_row.len();
    if groups.count.saturating_mul(64) > rows {
        let mut state = init();
        for start in (0..rows).step_by(CHECK_STRIDE * 16) {
            ctx.check()?;
            fold(&mut state, start..(start + CHECK_STRIDE * 16).min(rows));
        }
        return Ok(vec![state]);
    }
    map_morsels(ctx, rows, |range| {
        let mut state = init();
        fold(&mut state, range);
        state
    })
}

/// The running MIN or MAX of a group.
#[derive(Debug, Clone, Default)]
enum Extreme {
    #[default]
    Empty,
    Best(Id, Term),
    Failed,
}

/// COUNT(DISTINCT *): distinct solutions, over the variables a solution shows (not the
/// hidden ones standing for blank nodes).
fn count_distinct_solutions(
    evaluator: &dyn Scope,
    ctx: &ExecContext<'_>,
    table: &Table,
    groups: &Groups,
) -> Result<Vec<u64>, QueryError> {
    let visible: Vec<&[Id]> = table
        .vars
        .iter()
        .zip(&table.columns)
        .filter(|(&var, _)| evaluator.is_visible(var))
        .map(|(_, column)| column.as_slice())
        .collect();
    let mut counts = vec![0; groups.count];
    let mut seen: FxHashSet<(u32, Vec<Id>)> = FxHashSet::default();
    let mut memory = ctx.reservation();
    let per_row = visible.len() * ID_BYTES + 48;
    for (row, &group) in groups.of_row.iter().enumerate() {
        if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
            ctx.check()?;
            memory.try_resize(seen.len() * per_row)?;
        }
        let solution = visible.iter().map(|column| column[row]).collect();
        if seen.insert((group, solution)) {
            counts[group as usize] += 1;
        }
    }
    Ok(counts)
}

/// The ids of the aggregated expression, row by row: a variable's column as it is, or the
/// values of an expression interned; an expression over one variable (nothing random or
/// fresh, no EXISTS) is evaluated once per distinct id of that variable.
fn argument_ids<'t>(
    evaluator: &dyn Scope,
    ctx: &ExecContext<'_>,
    table: &'t Table,
    argument: &Expression,
) -> Result<Cow<'t, [Id]>, QueryError> {
    if let Expression::Variable(variable) = argument {
        let var = evaluator.var(variable);
        return Ok(match var.and_then(|var| table.column(var)) {
            Some(column) => Cow::Borrowed(column),
            None => Cow::Owned(vec![UNBOUND; table.rows]),
        });
    }
    let value = |row: usize| {
        evaluator
            .expression(argument, table, row)
            .map_or(UNBOUND, |term| evaluator.intern(&term))
    };
    let mut ids = Vec::with_capacity(table.rows);
    match per_id_column(evaluator, table, argument) {
        Some(column) => {
            let mut memo: FxHashMap<Id, Id> = FxHashMap::default();
            for (row, id) in column.iter().enumerate() {
                ctx.tick(row)?;
                ids.push(*memo.entry(*id).or_insert_with(|| value(row)));
            }
        }
        None => {
            for row in 0..table.rows {
                ctx.tick(row)?;
                ids.push(value(row));
            }
        }
    }
    ctx.check()?;
    Ok(Cow::Owned(ids))
}

/// The column of the one variable `expression` reads, when its value is the same for every
/// row holding the same id there (`crate::operands::per_id`).
fn per_id_column<'t>(
    evaluator: &dyn Scope,
    table: &'t Table,
    expression: &Expression,
) -> Option<&'t [Id]> {
    let mut variables = Vec::new();
    if !crate::operands::per_id(expression, &mut variables) {
        return None;
    }
    match variables.as_slice() {
        [variable] => table.column(evaluator.var(variable)?),
        _ => None,
    }
}

/// Counts as `xsd:integer` ids (each distinct count interned once).
pub(super) fn integers(evaluator: &dyn Scope, counts: Vec<u64>) -> Vec<Id> {
    let mut ids: FxHashMap<u64, Id> = FxHashMap::default();
    counts
        .into_iter()
        .map(|count| {
            *ids.entry(count).or_insert_with(|| {
                i64::try_from(count).map_or(UNBOUND, |count| {
                    evaluator.intern(&Literal::from(count).into())
                })
            })
        })
        .collect()
}

/// The string of a string literal (simple, `xsd:string` or language-tagged), as CONCAT
/// takes it; `None` for any other term.
fn string_value(term: &Term) -> Option<&str> {
    match term {
        Term::Literal(literal)
            if literal.language().is_some() || literal.datatype() == xsd::STRING =>
        {
            Some(literal.value())
        }
        _ => None,
    }
}

/// Decodes ids, each once.
struct Decoder<'e> {
    evaluator: &'e dyn Scope,
    cache: FxHashMap<Id, Option<Term>>,
}

impl<'e> Decoder<'e> {
    fn new(evaluator: &'e dyn Scope) -> Self {
        Self {
            evaluator,
            cache: FxHashMap::default(),
        }
    }

    fn term(&mut self, id: Id) -> Option<&Term> {
        self.cache
            .entry(id)
            .or_insert_with(|| self.evaluator.term(id))
            .as_ref()
    }
}
