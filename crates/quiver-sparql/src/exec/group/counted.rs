//! Grouping over rows that stand for several each: a basic graph pattern's rows counted
//! where the partitions found them (a cluster's workers), by the GROUP BY keys and the
//! variables its aggregates read, so that each combination leaves a worker once with its
//! count instead of every row. Which groupings may be counted so ([`counted_columns`]),
//! and each aggregate over counted rows as over the rows they stand for
//! ([`weighted_column`]).

use quiver_expr::Number;
use quiver_model::Id;
use rustc_hash::FxHashMap;
use spargebra::algebra::Expression;

use super::{
    aggregate_column, argument_ids, fold, grouped, integers, sum_terms, Aggregate, Checked,
    Decoder, Function, GroupProfile, Groups,
};
use crate::context::ExecContext;
use crate::error::QueryError;
use crate::exec::scope::Scope;
use crate::extreme_values::NarrowedColumn;
use crate::table::{Table, VarId, UNBOUND};

/// The columns by which a basic graph pattern's rows may be counted before they are
/// grouped (`PartitionedBgp::count_by`): the GROUP BY keys and the variables the
/// aggregates read, when each aggregate reads variables the pattern binds (so every row
/// binds them), through an expression decided by them alone (nothing random, fresh or
/// EXISTS: it gives a counted row what it gives each row the count stands for), or reads
/// nothing (`COUNT(*)`, without DISTINCT: distinct solutions need every column), and those
/// columns are not none (without any, the rows leave the workers with no column already: a
/// number each). A plain COUNT of a variable counts rows: it reads no column. Every
/// aggregate gives the same over rows that stand for several each ([`weighted_column`]):
/// COUNT, SUM and AVG weigh them, GROUP_CONCAT repeats them, and MIN, MAX, SAMPLE and
/// every DISTINCT do not depend on how often a value comes.
pub(crate) fn counted_columns(
    vars: &crate::bgp::Vars,
    bgp: &crate::bgp::Bgp,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Option<Vec<VarId>> {
    let bound = bgp.vars();
    let mut columns = keys.to_vec();
    for (_, aggregate) in aggregates {
        match &aggregate.argument {
            None if !aggregate.distinct => {}
            None => return None,
            Some(argument) => {
                let mut read = Vec::new();
                if !crate::operands::per_id(argument, &mut read) {
                    return None;
                }
                let counts_rows = aggregate.function == Function::Count
                    && !aggregate.distinct
                    && matches!(argument, Expression::Variable(_));
                for variable in &read {
                    let var = vars.get(variable).filter(|v| bound.contains(v))?;
                    if !counts_rows && !columns.contains(&var) {
                        columns.push(var);
                    }
                }
            }
        }
    }
    let counted = !columns.is_empty() && columns.iter().all(|c| bound.contains(c));
    counted.then_some(columns)
}

/// The columns of `counted` (a grouping's [`counted_columns`]) that only MIN or MAX of the
/// plain variable read, each with which of the two do: not a GROUP BY key, not read by
/// the FILTER counted through (`filtered`), nor by any other aggregate. A worker may
/// narrow their values to each group's extremes before counting
/// ([`crate::extreme_values`]); a plain COUNT of such a variable counts rows and reads none.
pub(crate) fn extreme_columns(
    vars: &crate::bgp::Vars,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
    counted: &[VarId],
    filtered: &[VarId],
) -> Vec<NarrowedColumn> {
    let mut columns: Vec<NarrowedColumn> = Vec::new();
    let mut spoiled: Vec<VarId> = keys.iter().chain(filtered).copied().collect();
    for (_, aggregate) in aggregates {
        let Some(argument) = &aggregate.argument else {
            continue;
        };
        match (&aggregate.function, argument) {
            (Function::Min | Function::Max, Expression::Variable(variable)) => {
                let Some(var) = vars.get(variable) else {
                    continue;
                };
                let least = aggregate.function == Function::Min;
                match columns.iter_mut().find(|c| c.var == var) {
                    Some(column) => {
                        column.least |= least;
                        column.greatest |= !least;
                    }
                    None => columns.push(NarrowedColumn {
                        var,
                        least,
                        greatest: !least,
                    }),
                }
            }
            (Function::Count, Expression::Variable(_)) if !aggregate.distinct => {}
            _ => {
                let mut read = Vec::new();
                crate::operands::per_id(argument, &mut read);
                spoiled.extend(read.iter().filter_map(|variable| vars.get(variable)));
            }
        }
    }
    columns.retain(|c| counted.contains(&c.var) && !spoiled.contains(&c.var));
    columns
}

/// [`super::group`] over rows that stand for several each (`weights[row]`: a pattern's rows
/// counted where the partitions found them by the columns [`counted_columns`] names).
pub fn counted(
    evaluator: &dyn Scope,
    table: &Table,
    weights: &[u64],
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Result<(Table, GroupProfile), QueryError> {
    grouped(evaluator, table, Some(weights), keys, aggregates)
}

/// An aggregate over rows that stand for `weights[row]` rows each, as over the rows they
/// stand for ([`counted_columns`] chose them): COUNT adds the weights of the rows where
/// its argument has a value (every row binds a plain variable), SUM and AVG add
/// each value times its weight (one product: [`Number::times`]), GROUP_CONCAT repeats
/// each value as often; MIN, MAX, SAMPLE and every DISTINCT aggregate read a bag's set,
/// which the weights do not change.
pub(super) fn weighted_column(
    evaluator: &dyn Scope,
    ctx: &ExecContext<'_>,
    table: &Table,
    groups: &Groups,
    weights: &[u64],
    aggregate: &Aggregate,
) -> Result<Vec<Id>, QueryError> {
    if aggregate.distinct
        || matches!(
            aggregate.function,
            Function::Min | Function::Max | Function::Sample
        )
    {
        return aggregate_column(evaluator, ctx, table, groups, aggregate);
    }
    if aggregate.function == Function::Count {
        let values = match &aggregate.argument {
            None | Some(Expression::Variable(_)) => None,
            Some(argument) => Some(argument_ids(evaluator, ctx, table, argument)?),
        };
        let mut counts = vec![0u64; groups.count];
        for (row, (&group, &weight)) in groups.of_row.iter().zip(weights).enumerate() {
            if values.as_ref().is_none_or(|values| values[row] != UNBOUND) {
                counts[group as usize] += weight;
            }
        }
        return Ok(integers(evaluator, counts));
    }
    // Only COUNT may go without an argument (`COUNT(*)`).
    let Some(argument) = &aggregate.argument else {
        return aggregate_column(evaluator, ctx, table, groups, aggregate);
    };
    let values = argument_ids(evaluator, ctx, table, argument)?;
    let mut stopped: Option<QueryError> = None;
    let entries = Checked {
        inner: groups.of_row.iter().zip(weights).zip(values.iter()),
        ctx,
        seen: 0,
        stopped: &mut stopped,
    }
    .map(|((&group, &weight), &id)| (group as usize, id, weight));
    let column = match &aggregate.function {
        Function::Sum | Function::Avg => {
            let mut decoder = Decoder::new(evaluator);
            let mut numbers: FxHashMap<Id, Option<Number>> = FxHashMap::default();
            let mut sums: Vec<Option<Number>> = vec![Some(Number::zero()); groups.count];
            let mut counts = vec![0_i64; groups.count];
            for (group, id, weight) in entries {
                let number = *numbers
                    .entry(id)
                    .or_insert_with(|| decoder.term(id).and_then(Number::of));
                if let Some(sum) = sums[group] {
                    sums[group] = number
                        .and_then(|number| number.times(weight))
                        .and_then(|added| sum.checked_add(added));
                    counts[group] = counts[group].saturating_add(weight as i64);
                }
            }
            sum_terms(evaluator, &aggregate.function, sums, counts)
        }
        _ => fold(
            evaluator,
            &aggregate.function,
            groups.count,
            entries
                .flat_map(|(group, id, weight)| std::iter::repeat_n((group, id), weight as usize)),
        ),
    };
    match stopped {
        Some(error) => Err(error),
        None => Ok(column),
    }
}
