//! Finding a GROUP BY over a cross product under one triple's (NOT) EXISTS in the
//! operator tree: the two sides (a join of operators that share no variable, or the
//! unconnected parts of one basic graph pattern), which side holds the keys, and the
//! EXISTS triple that links them.

use std::borrow::Cow;

use quiver_store::Direction;
use rustc_hash::FxHashMap;
use spargebra::algebra::{Expression, GraphPattern};

use super::super::group::{Aggregate, Function};
use super::super::Evaluator;
use crate::bgp::{Bgp, Node, Pattern, Pred};
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::operator::estimate::{may_share, possible_vars};
use crate::operator::{Operator, PlannedBgp};
use crate::table::VarId;

/// A GROUP BY this module can answer, found in the operator tree.
pub(super) struct Shape<'o> {
    pub(super) keyed: Cow<'o, Operator>,
    pub(super) valued: Cow<'o, Operator>,
    pub(super) filter: &'o Expression,
    /// The EXISTS triple: its predicate (`None`: absent from the store, so the triple is
    /// never found), the keyed and valued variables, and the direction in which the valued
    /// variable's list holds keyed values.
    pub(super) predicate: Option<quiver_model::PredId>,
    pub(super) keyed_var: VarId,
    pub(super) valued_var: VarId,
    pub(super) direction: Direction,
    pub(super) negated: bool,
    pub(super) graph: GraphRef,
}

impl Evaluator<'_> {
    /// The shape of `inner` and the aggregates, when this module applies.
    pub(super) fn pair_shape<'o>(
        &self,
        inner: &'o Operator,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
    ) -> Result<Option<Shape<'o>>, QueryError> {
        let Operator::Filter(filter, product) = inner else {
            return Ok(None);
        };
        let (pattern, negated) = match filter {
            Expression::Exists(pattern) => (pattern, false),
            Expression::Not(inner) => match &**inner {
                Expression::Exists(pattern) => (pattern, true),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        if keys.is_empty() || self.partitions.is_some() {
            return Ok(None);
        }
        let (a, b) = match &**product {
            Operator::Join(a, b) if !may_share(a, b) => (Cow::Borrowed(&**a), Cow::Borrowed(&**b)),
            Operator::Bgp(planned) => match self.split_bgp(planned, keys) {
                Some((keyed, valued)) => (Cow::Owned(keyed), Cow::Owned(valued)),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        let (a_vars, b_vars) = (possible_vars(&a), possible_vars(&b));
        let (keyed, valued, keyed_vars, valued_vars) = if keys.iter().all(|k| a_vars.contains(k)) {
            (a, b, a_vars, b_vars)
        } else if keys.iter().all(|k| b_vars.contains(k)) {
            (b, a, b_vars, a_vars)
        } else {
            return Ok(None);
        };
        for (_, aggregate) in aggregates {
            let plain = aggregate.argument.is_none() && !aggregate.distinct;
            let ok = plain
                || match &aggregate.argument {
                    None => false,
                    Some(argument) => {
                        let mut variables = Vec::new();
                        let decidable = crate::operands::per_id(argument, &mut variables);
                        let one_side = |vars: &[VarId]| {
                            variables
                                .iter()
                                .all(|v| self.vars.get(v).is_some_and(|v| vars.contains(&v)))
                        };
                        decidable
                            && (one_side(&keyed_vars) || one_side(&valued_vars))
                            && (!aggregate.distinct
                                || matches!(aggregate.function, Function::Min | Function::Max))
                    }
                };
            if !ok {
                return Ok(None);
            }
        }
        let Some((triple, graph)) = self.exists_triple(pattern) else {
            return Ok(None);
        };
        let predicate = match triple.predicate {
            Pred::Const(predicate) => Some(predicate),
            Pred::Absent => None,
            Pred::Var(_) => return Ok(None),
        };
        let (Node::Var(subject), Node::Var(object)) = (triple.subject, triple.object) else {
            return Ok(None);
        };
        let (keyed_var, valued_var, direction) =
            if keyed_vars.contains(&subject) && valued_vars.contains(&object) {
                (subject, object, Direction::In)
            } else if keyed_vars.contains(&object) && valued_vars.contains(&subject) {
                (object, subject, Direction::Out)
            } else {
                return Ok(None);
            };
        Ok(Some(Shape {
            keyed,
            valued,
            filter,
            predicate,
            keyed_var,
            valued_var,
            direction,
            negated,
            graph,
        }))
    }

    /// A basic graph pattern whose triples fall apart into unconnected parts (a cross
    /// product), as the parts that bind `keys` and the others, each planned on its own.
    fn split_bgp(&self, planned: &PlannedBgp, keys: &[VarId]) -> Option<(Operator, Operator)> {
        let patterns = &planned.bgp.patterns;
        // Connected parts by shared variables (union-find over patterns).
        let mut parent: Vec<usize> = (0..patterns.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut first_with: FxHashMap<VarId, usize> = FxHashMap::default();
        for (i, pattern) in patterns.iter().enumerate() {
            for var in pattern.vars() {
                let j = *first_with.entry(var).or_insert(i);
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a] = b;
            }
        }
        let keyed_roots: Vec<usize> = (0..patterns.len())
            .filter(|&i| patterns[i].vars().any(|v| keys.contains(&v)))
            .map(|i| root(&mut parent, i))
            .collect();
        let in_keyed: Vec<bool> = (0..patterns.len())
            .map(|i| keyed_roots.contains(&root(&mut parent, i)))
            .collect();
        if in_keyed.iter().all(|&k| k) || !in_keyed.iter().any(|&k| k) {
            return None;
        }
        let part = |keyed: bool| {
            let bgp = Bgp {
                patterns: patterns
                    .iter()
                    .zip(&in_keyed)
                    .filter(|(_, &k)| k == keyed)
                    .map(|(p, _)| p.clone())
                    .collect(),
                equalities: Vec::new(),
            };
            let vars = bgp.vars();
            (bgp, vars)
        };
        let ((mut keyed, keyed_vars), (mut valued, valued_vars)) = (part(true), part(false));
        for &(a, b) in &planned.bgp.equalities {
            if keyed_vars.contains(&a) && keyed_vars.contains(&b) {
                keyed.equalities.push((a, b));
            } else if valued_vars.contains(&a) && valued_vars.contains(&b) {
                valued.equalities.push((a, b));
            } else {
                return None;
            }
        }
        let graph = self.context(planned.graph).graph;
        let operator = |bgp: Bgp| {
            let alone = crate::planner::plan(&bgp, self.store, graph, &[], 1.0);
            Operator::Bgp(PlannedBgp {
                bgp,
                graph: planned.graph,
                alone,
                seeded: None,
            })
        };
        Some((operator(keyed), operator(valued)))
    }

    /// The one triple pattern of an EXISTS (predicate, subject, object) and its graph.
    fn exists_triple(&self, pattern: &GraphPattern) -> Option<(&Pattern, GraphRef)> {
        let Some(Operator::Bgp(planned)) = self.exists.get(pattern) else {
            return None;
        };
        match (
            planned.bgp.patterns.as_slice(),
            planned.bgp.equalities.is_empty(),
        ) {
            ([triple], true) => Some((triple, planned.graph)),
            _ => None,
        }
    }
}
