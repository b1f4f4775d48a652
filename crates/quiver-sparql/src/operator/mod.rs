//! The operator tree of a query: what `compile` builds and `exec` runs, types only.
//!
//! Each node type lives in its own file when it carries more than its children (a planned
//! basic graph pattern, a property path, aggregates, the EXISTS patterns of expressions).

use spargebra::algebra::{Expression, OrderExpression};
use spargebra::term::GroundTerm;

use crate::table::VarId;

pub mod bgp;
pub mod estimate;
pub mod exists;
pub mod group;
pub mod index_aggregate;
pub mod path;
pub mod service;
pub mod summary;
pub mod text;

pub use bgp::PlannedBgp;
pub use exists::ExistsOperators;
pub use group::{Aggregate, Function};
pub use index_aggregate::IndexAggregate;
pub use path::{Path, PathPattern, PathTerm};
pub use service::{ServiceEndpoint, ServicePattern};
pub use text::{TextPattern, TextQuery};

/// The operator tree of a query.
#[derive(Debug, Clone)]
pub enum Operator {
    Bgp(PlannedBgp),
    /// A property path pattern.
    Path(PathPattern),
    Join(Box<Operator>, Box<Operator>),
    LeftJoin {
        left: Box<Operator>,
        right: Box<Operator>,
        filter: Option<Expression>,
    },
    /// A filter (its `EXISTS` patterns are compiled in [`ExistsOperators`]).
    Filter(Expression, Box<Operator>),
    Union(Box<Operator>, Box<Operator>),
    Extend {
        inner: Box<Operator>,
        var: VarId,
        expression: Expression,
    },
    Minus(Box<Operator>, Box<Operator>),
    /// `GRAPH ?var { … }`: the inner pattern compiled once per named graph it may visit
    /// (graph name id, operator); each branch's rows get `var` bound to that name.
    GraphVar {
        var: VarId,
        branches: Vec<(quiver_model::Id, Operator)>,
    },
    Values {
        vars: Vec<VarId>,
        rows: Vec<Vec<Option<GroundTerm>>>,
    },
    Project(Box<Operator>, Vec<VarId>),
    Distinct(Box<Operator>),
    OrderBy(Box<Operator>, Vec<OrderExpression>),
    /// ORDER BY keeping only the first `k` rows (a LIMIT over an ORDER BY): a bounded
    /// heap instead of a full sort.
    TopK {
        inner: Box<Operator>,
        keys: Vec<OrderExpression>,
        k: usize,
    },
    Slice {
        inner: Box<Operator>,
        start: usize,
        length: Option<usize>,
    },
    /// GROUP BY `keys` (none: one group of everything) computing `aggregates`.
    Group {
        inner: Box<Operator>,
        keys: Vec<VarId>,
        aggregates: Vec<(VarId, Aggregate)>,
    },
    /// Counts or distinct values of one triple pattern read from the index, without rows.
    IndexAggregate(IndexAggregate),
    /// `SERVICE`: a pattern a remote endpoint evaluates; on the right of a join it is sent
    /// the left rows' bindings (a bind join).
    Service(ServicePattern),
    /// A search of the store's full-text index: `?literal quiver:matches "words"`, or the
    /// candidates of a `CONTAINS` filter.
    Text(TextPattern),
}

/// Variables bound in every solution of `operator`.
pub fn certain_vars(operator: &Operator) -> Vec<VarId> {
    match operator {
        Operator::Bgp(planned) => planned.bgp.vars(),
        Operator::Path(pattern) => pattern.vars(),
        Operator::Join(a, b) => {
            let mut vars = certain_vars(a);
            for v in certain_vars(b) {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            vars
        }
        Operator::LeftJoin { left, .. } | Operator::Minus(left, _) => certain_vars(left),
        Operator::Filter(_, inner) | Operator::Distinct(inner) | Operator::OrderBy(inner, _) => {
            certain_vars(inner)
        }
        Operator::TopK { inner, .. } => certain_vars(inner),
        Operator::Slice { inner, .. } => certain_vars(inner),
        Operator::Extend { inner, .. } => certain_vars(inner),
        Operator::Union(a, b) => {
            let right = certain_vars(b);
            certain_vars(a)
                .into_iter()
                .filter(|v| right.contains(v))
                .collect()
        }
        Operator::GraphVar { var, branches } => {
            let mut vars = branches
                .iter()
                .map(|(_, branch)| certain_vars(branch))
                .reduce(|a, b| a.into_iter().filter(|v| b.contains(v)).collect())
                .unwrap_or_default();
            if !vars.contains(var) {
                vars.push(*var);
            }
            vars
        }
        Operator::Values { vars, rows } => vars
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                rows.iter()
                    .all(|row| row.get(*i).is_some_and(Option::is_some))
            })
            .map(|(_, v)| *v)
            .collect(),
        Operator::Project(inner, vars) => certain_vars(inner)
            .into_iter()
            .filter(|v| vars.contains(v))
            .collect(),
        Operator::IndexAggregate(aggregate) => aggregate.vars(),
        Operator::Service(service) => service.certain_vars(),
        Operator::Text(text) => text.vars(),
        // The keys bound in every input row, and the counts (never an error).
        Operator::Group {
            inner,
            keys,
            aggregates,
        } => {
            let inner = certain_vars(inner);
            keys.iter()
                .copied()
                .filter(|key| inner.contains(key))
                .chain(
                    aggregates
                        .iter()
                        .filter(|(_, a)| a.function == Function::Count)
                        .map(|(var, _)| *var),
                )
                .collect()
        }
    }
}
