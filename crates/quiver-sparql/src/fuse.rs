//! Fusing an expansion with a later check into one intersecting walk.
//!
//! A plan that expands `?x` from one bound vertex and later checks `?x` against another
//! bound vertex materialises every candidate before dropping most of them. When both
//! lists are sorted neighbour lists, binding `?x` to their intersection directly is a
//! worst-case-optimal join of the cycle the two patterns close (LUBM q1, q3, q7).

use quiver_store::{Direction, GraphIndex, Store};

use crate::bgp::{Bgp, Node, Pred};
use crate::step::{Step, StepKind};
use crate::table::VarId;

/// Turns "expand ?x by pattern A, later check pattern B on ?x" into one step that binds
/// ?x to the intersection of both neighbour lists, when B's other end is already bound
/// when A runs. Cycles (triangles such as LUBM q1, q3, q7) then never materialise the
/// rows that the check would have dropped.
pub fn fuse_intersections(
    bgp: &Bgp,
    store: &Store,
    graph: &GraphIndex,
    steps: Vec<Step>,
    seeds: &[VarId],
) -> Vec<Step> {
    use crate::bgp::{add_vars, node_var};
    let mut bound: Vec<VarId> = seeds.to_vec();
    let mut remaining: Vec<Option<Step>> = steps.into_iter().map(Some).collect();
    let mut fused = Vec::with_capacity(remaining.len());
    let is_bound = |node: Node, bound: &[VarId]| match node {
        Node::Var(v) => bound.contains(&v),
        _ => true,
    };
    for i in 0..remaining.len() {
        let Some(mut step) = remaining[i].take() else {
            continue;
        };
        let pattern = &bgp.patterns[step.pattern];
        if let (StepKind::Walk(direction), Pred::Const(_)) = (step.kind, pattern.predicate) {
            let target = match direction {
                Direction::Out => pattern.object,
                Direction::In => pattern.subject,
            };
            if let Node::Var(t) = target {
                if !bound.contains(&t) {
                    // Among the later checks on ?t, intersect with the one whose neighbour
                    // lists are expected to be shortest (a huge class list makes a poor
                    // partner; a department's members a good one).
                    let mut best: Option<(usize, Direction, f64)> = None;
                    for (j, slot) in remaining.iter().enumerate().skip(i + 1) {
                        let Some(later) = slot else { continue };
                        let other = &bgp.patterns[later.pattern];
                        let Pred::Const(q) = other.predicate else {
                            continue;
                        };
                        if !matches!(later.kind, StepKind::Walk(_)) {
                            continue;
                        }
                        let partner = if other.subject == Node::Var(t)
                            && other.object != Node::Var(t)
                            && is_bound(other.object, &bound)
                        {
                            Some((Direction::In, other.object))
                        } else if other.object == Node::Var(t)
                            && other.subject != Node::Var(t)
                            && is_bound(other.subject, &bound)
                        {
                            Some((Direction::Out, other.subject))
                        } else {
                            None
                        };
                        if let Some((partner_direction, source)) = partner {
                            let length = match source {
                                Node::Const(vertex) => crate::degree::constant_degree(
                                    store,
                                    graph,
                                    vertex,
                                    Pred::Const(q),
                                    partner_direction,
                                ),
                                _ => store.predicate_stats(q).avg_degree(partner_direction),
                            };
                            if best.is_none_or(|(_, _, l)| length < l) {
                                best = Some((j, partner_direction, length));
                            }
                        }
                    }
                    if let Some((j, partner_direction, _)) = best {
                        let later = remaining[j].take().expect("candidate step");
                        step.partner = Some((later.pattern, partner_direction));
                        step.estimate = later.estimate;
                    }
                }
            }
        }
        match step.kind {
            // An index step binds only one end; the pattern itself is walked later.
            StepKind::Index(Direction::In) => add_vars(&mut bound, node_var(pattern.subject)),
            StepKind::Index(Direction::Out) => add_vars(&mut bound, node_var(pattern.object)),
            _ => add_vars(&mut bound, pattern.vars()),
        }
        fused.push(step);
    }
    fused
}
