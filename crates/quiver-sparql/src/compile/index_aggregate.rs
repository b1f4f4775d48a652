//! Recognising counts and distinct values that the graph index answers without rows
//! ([`IndexAggregate`]), wherever they appear (top level, subqueries, under ORDER BY, LIMIT
//! or a projection): a GROUP BY of at most one key with only COUNTs, or a DISTINCT of one
//! projected variable, over one triple pattern (in one graph or under `GRAPH ?g`).
//!
//! Only the simple shape qualifies: one pattern, its variables distinct (`?x p ?x` is
//! not), its subject not a literal, the key and every counted variable bound by it (or
//! `?g`), `COUNT(DISTINCT *)` only without blank nodes (whose bindings are not part of a
//! solution). Anything else compiles as it was, so the answer never depends on the
//! rewrite.

use spargebra::algebra::{Expression, OrderExpression};

use crate::bgp::{Node, Pattern, Vars};
use crate::operator::index_aggregate::{Count, CountCut, Graphs, Position};
use crate::operator::{Aggregate, Function, IndexAggregate, Operator, PlannedBgp};
use crate::table::VarId;

/// GROUP BY `keys` computing `aggregates` over `inner`, read from the index if it can be.
pub(super) fn group(
    vars: &Vars,
    inner: &Operator,
    keys: &[VarId],
    aggregates: &[(VarId, Aggregate)],
) -> Option<Operator> {
    let (pattern, graphs) = source(inner)?;
    let key = match keys {
        [] => None,
        [key] => Some((*key, position(&pattern, &graphs, *key)?)),
        _ => return None,
    };
    let counts = aggregates
        .iter()
        .map(|(var, aggregate)| Some((*var, count(vars, &pattern, &graphs, aggregate)?)))
        .collect::<Option<Vec<_>>>()?;
    if key.is_none() && counts.is_empty() {
        return None;
    }
    Some(Operator::IndexAggregate(IndexAggregate {
        pattern,
        graphs,
        key,
        aggregates: counts,
        cut: None,
        first: None,
    }))
}

/// Sets the [`CountCut`] of a count read from the index under `inner` (through BINDs
/// and projections) when the ORDER BY `keys` of a top-k of `k` rows starts with one of
/// its counts (`ORDER BY DESC(?n) … LIMIT k` over `SELECT ?x (COUNT(*) AS ?n) … GROUP BY ?x`).
pub(super) fn cut_counts(vars: &Vars, inner: &mut Operator, keys: &[OrderExpression], k: usize) {
    let (first, descending) = match keys.first() {
        Some(OrderExpression::Asc(Expression::Variable(first))) => (first, false),
        Some(OrderExpression::Desc(Expression::Variable(first))) => (first, true),
        _ => return,
    };
    let Some(mut var) = vars.get(first) else {
        return;
    };
    let mut node = inner;
    loop {
        match node {
            Operator::Extend {
                inner,
                var: bound,
                expression,
            } => {
                if *bound == var {
                    let Expression::Variable(copied) = expression else {
                        return;
                    };
                    let Some(copied) = vars.get(copied) else {
                        return;
                    };
                    var = copied;
                }
                node = inner;
            }
            Operator::Project(inner, _) => node = inner,
            Operator::IndexAggregate(aggregate) if aggregate.key.is_some() => {
                if let Some(place) = aggregate.aggregates.iter().position(|(v, _)| *v == var) {
                    aggregate.cut = Some(CountCut {
                        aggregate: place,
                        descending,
                        k,
                    });
                }
                return;
            }
            _ => return,
        }
    }
}

/// DISTINCT over `inner`, read from the index if it is the projection of one variable of
/// one pattern (also through an ORDER BY on that variable, which then sorts the values).
pub(super) fn distinct(vars: &Vars, inner: &Operator) -> Option<Operator> {
    let Operator::Project(projected, projection) = inner else {
        return None;
    };
    let [var] = projection.as_slice() else {
        return None;
    };
    let (pattern, order) = match &**projected {
        Operator::OrderBy(pattern, keys) if keys.iter().all(|k| orders_by(vars, k, *var)) => {
            (&**pattern, Some(keys))
        }
        other => (other, None),
    };
    let aggregate = group(vars, pattern, &[*var], &[])?;
    Some(match order {
        Some(keys) => Operator::OrderBy(Box::new(aggregate), keys.clone()),
        None => aggregate,
    })
}

/// Whether an ORDER BY key is the variable `var` itself.
fn orders_by(vars: &Vars, key: &OrderExpression, var: VarId) -> bool {
    match key {
        OrderExpression::Asc(Expression::Variable(v))
        | OrderExpression::Desc(Expression::Variable(v)) => vars.get(v) == Some(var),
        _ => false,
    }
}

/// The one pattern `operator` matches and the graphs it reads.
fn source(operator: &Operator) -> Option<(Pattern, Graphs)> {
    match operator {
        Operator::Bgp(planned) => Some((single(planned)?, Graphs::One(planned.graph))),
        Operator::GraphVar { var, branches } => {
            let mut found: Option<Pattern> = None;
            let mut graphs = Vec::new();
            for (name, branch) in branches {
                let Operator::Bgp(planned) = branch else {
                    return None;
                };
                let pattern = single(planned)?;
                if pattern.vars().any(|v| v == *var) {
                    return None;
                }
                match &found {
                    None => found = Some(pattern),
                    Some(first)
                        if first.subject == pattern.subject
                            && first.predicate == pattern.predicate
                            && first.object == pattern.object => {}
                    Some(_) => return None,
                }
                graphs.push((*name, planned.graph));
            }
            // Without a named graph there is no pattern to read: the general path answers.
            Some((found?, Graphs::Each { var: *var, graphs }))
        }
        _ => None,
    }
}

/// The pattern of a basic graph pattern of one simple pattern.
fn single(planned: &PlannedBgp) -> Option<Pattern> {
    let [pattern] = planned.bgp.patterns.as_slice() else {
        return None;
    };
    if !planned.bgp.equalities.is_empty() {
        return None;
    }
    // A literal subject (known to the store or not) as written: the pattern's text starts
    // with the literal's quote.
    if !matches!(pattern.subject, Node::Var(_)) && pattern.text.starts_with('"') {
        return None;
    }
    Some(pattern.clone())
}

/// Where `var` is bound: a position of the pattern or the graph variable.
fn position(pattern: &Pattern, graphs: &Graphs, var: VarId) -> Option<Position> {
    use crate::bgp::{node_var, pred_var};
    if node_var(pattern.subject) == Some(var) {
        Some(Position::Subject)
    } else if pred_var(pattern.predicate) == Some(var) {
        Some(Position::Predicate)
    } else if node_var(pattern.object) == Some(var) {
        Some(Position::Object)
    } else if matches!(graphs, Graphs::Each { var: g, .. } if *g == var) {
        Some(Position::Graph)
    } else {
        None
    }
}

/// What a COUNT aggregate counts; `None` for any other aggregate.
fn count(vars: &Vars, pattern: &Pattern, graphs: &Graphs, aggregate: &Aggregate) -> Option<Count> {
    if aggregate.function != Function::Count {
        return None;
    }
    match &aggregate.argument {
        None if !aggregate.distinct => Some(Count::Matches),
        // Distinct solutions are distinct matches unless a blank node's binding, which is
        // no part of a solution, tells two matches apart.
        None => pattern
            .vars()
            .all(|v| !vars.is_hidden(v))
            .then_some(Count::Matches),
        Some(Expression::Variable(variable)) => {
            let position = position(pattern, graphs, vars.get(variable)?)?;
            Some(if aggregate.distinct {
                Count::Distinct(position)
            } else {
                Count::Matches
            })
        }
        Some(_) => None,
    }
}
