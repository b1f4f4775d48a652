//! What the compiler knows of an operator before it runs: how many rows it should
//! produce, and which variables its rows may bind.
//!
//! The estimates order the operands of a group's joins (`compile/join_order.rs`): a
//! pattern that cannot match (a constant the store lacks) is exactly 0, VALUES exactly its
//! rows, a basic graph pattern what its plan expects after its last step; the rest is
//! combined from their inputs, and what nothing tells (a path between two variables) is
//! taken as large, so it runs after whatever binds one of its ends (a SERVICE too, so it
//! is sent the bindings of the rows before it).

use super::{certain_vars, Operator, PathTerm};
use crate::bgp::add_vars;
use crate::table::VarId;

/// Rows assumed for what no statistics tell: a path between two variables.
pub const UNKNOWN_ROWS: f64 = 1e12;

/// Rows assumed for a path walked from a constant.
const PATH_FROM_CONSTANT_ROWS: f64 = 100.0;

/// The rows `operator` is expected to produce.
pub fn estimated_rows(operator: &Operator) -> f64 {
    match operator {
        Operator::Bgp(planned) => {
            if planned.bgp.is_unsatisfiable() {
                0.0
            } else {
                planned.alone.last().map_or(1.0, |step| step.estimate)
            }
        }
        Operator::Path(pattern) => {
            if matches!(pattern.subject, PathTerm::Term(_))
                || matches!(pattern.object, PathTerm::Term(_))
            {
                PATH_FROM_CONSTANT_ROWS
            } else {
                UNKNOWN_ROWS
            }
        }
        Operator::Values { rows, .. } => rows.len() as f64,
        Operator::Join(a, b) => {
            let (a_rows, b_rows) = (estimated_rows(a), estimated_rows(b));
            if may_share(a, b) {
                a_rows.max(b_rows)
            } else {
                a_rows * b_rows
            }
        }
        Operator::LeftJoin { left, .. } | Operator::Minus(left, _) => estimated_rows(left),
        Operator::Filter(_, inner) => estimated_rows(inner) / 2.0,
        Operator::Union(a, b) => estimated_rows(a) + estimated_rows(b),
        Operator::Extend { inner, .. }
        | Operator::Project(inner, _)
        | Operator::Distinct(inner)
        | Operator::OrderBy(inner, _) => estimated_rows(inner),
        Operator::TopK { inner, k, .. } => estimated_rows(inner).min(*k as f64),
        Operator::Slice { inner, length, .. } => {
            let rows = estimated_rows(inner);
            length.map_or(rows, |length| rows.min(length as f64))
        }
        Operator::GraphVar { branches, .. } => branches
            .iter()
            .map(|(_, branch)| estimated_rows(branch))
            .sum(),
        Operator::Group { inner, keys, .. } => {
            if keys.is_empty() {
                1.0
            } else {
                estimated_rows(inner)
            }
        }
        // Nothing is known of a remote endpoint's data: run it after whatever binds its
        // variables, so it is sent their bindings.
        Operator::Service(_) => UNKNOWN_ROWS,
        Operator::Text(text) => text.estimate,
        Operator::IndexAggregate(aggregate) => {
            if aggregate.key.is_none() {
                1.0
            } else {
                PATH_FROM_CONSTANT_ROWS
            }
        }
    }
}

/// The rows `operator` is expected to build in all, its inputs' included: what a server
/// weighs before running a query on a thread that serves other requests.
///
/// A basic graph pattern builds the rows of each of its steps (the seeded plan's too, for
/// a pattern that may run seeded); a join, union or minus its operands' and, for a join,
/// its own. What no statistics bound is [`UNKNOWN_ROWS`]: a property path (a closure
/// walks as far as the graph goes, even from a constant), a SERVICE, the distinct keys of
/// an index aggregate.
pub fn estimated_work(operator: &Operator) -> f64 {
    match operator {
        Operator::Bgp(planned) => {
            if planned.bgp.is_unsatisfiable() {
                return 0.0;
            }
            let steps = |steps: &[crate::planner::Step]| -> f64 {
                steps.iter().map(|step| step.estimate.max(1.0)).sum()
            };
            steps(&planned.alone) + planned.seeded.as_ref().map_or(0.0, |(_, s)| steps(s))
        }
        Operator::Path(_) | Operator::Service(_) => UNKNOWN_ROWS,
        Operator::Values { rows, .. } => rows.len() as f64,
        Operator::Join(a, b) | Operator::Union(a, b) | Operator::Minus(a, b) => {
            estimated_work(a) + estimated_work(b) + estimated_rows(operator)
        }
        Operator::LeftJoin { left, right, .. } => {
            estimated_work(left) + estimated_work(right) + estimated_rows(operator)
        }
        Operator::Filter(_, inner)
        | Operator::Extend { inner, .. }
        | Operator::Project(inner, _)
        | Operator::Distinct(inner)
        | Operator::OrderBy(inner, _)
        | Operator::TopK { inner, .. }
        | Operator::Slice { inner, .. }
        | Operator::Group { inner, .. } => estimated_work(inner) + estimated_rows(inner),
        Operator::GraphVar { branches, .. } => branches
            .iter()
            .map(|(_, branch)| estimated_work(branch))
            .sum(),
        Operator::Text(text) => text.estimate,
        Operator::IndexAggregate(aggregate) => {
            if aggregate.key.is_none() {
                1.0
            } else {
                UNKNOWN_ROWS
            }
        }
    }
}

/// Every variable a row of `operator` may bind (those [`certain_vars`] gives, and those
/// bound in some rows only).
pub fn possible_vars(operator: &Operator) -> Vec<VarId> {
    let mut vars = Vec::new();
    match operator {
        Operator::Bgp(planned) => add_vars(&mut vars, planned.bgp.vars()),
        Operator::Path(pattern) => add_vars(&mut vars, pattern.vars()),
        Operator::Values { vars: columns, .. } => add_vars(&mut vars, columns.iter().copied()),
        Operator::Join(a, b) | Operator::Union(a, b) => {
            add_vars(&mut vars, possible_vars(a));
            add_vars(&mut vars, possible_vars(b));
        }
        Operator::LeftJoin { left, right, .. } => {
            add_vars(&mut vars, possible_vars(left));
            add_vars(&mut vars, possible_vars(right));
        }
        Operator::Minus(left, _)
        | Operator::Filter(_, left)
        | Operator::Distinct(left)
        | Operator::OrderBy(left, _)
        | Operator::TopK { inner: left, .. }
        | Operator::Slice { inner: left, .. } => add_vars(&mut vars, possible_vars(left)),
        Operator::Extend { inner, var, .. } => {
            add_vars(&mut vars, possible_vars(inner));
            add_vars(&mut vars, [*var]);
        }
        Operator::Project(_, columns) => add_vars(&mut vars, columns.iter().copied()),
        Operator::GraphVar { var, branches } => {
            add_vars(&mut vars, [*var]);
            for (_, branch) in branches {
                add_vars(&mut vars, possible_vars(branch));
            }
        }
        Operator::Group {
            keys, aggregates, ..
        } => {
            add_vars(&mut vars, keys.iter().copied());
            add_vars(&mut vars, aggregates.iter().map(|(var, _)| *var));
        }
        Operator::IndexAggregate(_) => add_vars(&mut vars, certain_vars(operator)),
        Operator::Service(service) => add_vars(&mut vars, service.possible_vars()),
        Operator::Text(text) => add_vars(&mut vars, text.vars()),
    }
    vars
}

/// Whether rows of `a` and `b` may share a variable (if not, their join is a cross
/// product).
pub fn may_share(a: &Operator, b: &Operator) -> bool {
    let b = possible_vars(b);
    possible_vars(a).iter().any(|v| b.contains(v))
}
