//! The walks whose records are learnt and recalled, and a vertex's lists as one of them
//! reads them: from a partition of this process, or from a record learnt.

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pred};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::{Table, VarId};
use quiver_store::adjacency::Record;
use quiver_store::Direction;
use serde::{Deserialize, Serialize};

use crate::route::{place, Placement, IN_PLACE_ROWS};

/// The predicates a record holds the neighbours over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(super) enum Over {
    /// One predicate's.
    One(PredId),
    /// Every predicate's, as a walk over a variable predicate reads them.
    Every,
}

/// One record of the default graph: a vertex's neighbours in a direction.
pub(super) type RecordKey = (Over, Direction, Id);

/// A learnt record's lists: (predicate, neighbours) pairs, predicates ascending (one pair
/// at most for a record [`Over::One`]).
pub(super) type Lists = Vec<(PredId, Vec<Id>)>;

/// The ids a record's lists cost to keep: its neighbours, and a word per predicate.
pub(super) fn lists_ids(lists: &Lists) -> usize {
    lists.iter().map(|(_, list)| 1 + list.len()).sum()
}

/// The predicate of a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WalkPredicate {
    /// A constant (never `rdf:type`).
    Const(PredId),
    /// A variable the rows bind: each row walks its own.
    Bound(VarId),
    /// A variable the walk binds: each row walks every predicate, binding it.
    Free(VarId),
}

impl WalkPredicate {
    /// The record a walk of this predicate out of `vertex` in `direction` reads.
    pub(super) fn key(self, direction: Direction, vertex: Id) -> RecordKey {
        match self {
            WalkPredicate::Const(p) => (Over::One(p), direction, vertex),
            WalkPredicate::Bound(_) | WalkPredicate::Free(_) => (Over::Every, direction, vertex),
        }
    }
}

/// A step of a plan, with what places it: the plan's BGP, graph, `rdf:type` and the
/// graph's classes.
pub(crate) struct PlanStep<'a> {
    pub(crate) bgp: &'a Bgp,
    pub(crate) step: &'a Step,
    pub(crate) graph: GraphRef,
    pub(crate) rdf_type: Option<PredId>,
    pub(crate) classes: &'a [Id],
}

/// A walk whose records the owner of its source holds whole, as it runs there.
pub(super) struct Walk {
    pub(super) predicate: WalkPredicate,
    pub(super) direction: Direction,
    pub(super) from: Node,
    pub(super) to: Node,
}

impl Walk {
    /// `planned` over `rows`, placed as its owner runs it (`route::place`: a
    /// walk whose target is bound runs as a check out of the subject; a walk over a
    /// variable predicate into a vertex runs at its owner unless the vertex is one of the
    /// graph's `classes`), if it is such a walk: in the default graph, with no partner,
    /// over light rows, its predicate a constant other than `rdf:type` or a variable that
    /// is neither end (an OUT record is whole at its owner, `rdf:type`'s included; an IN
    /// record too but for a class's instances, which every partition holds its share of).
    pub(super) fn of(planned: &PlanStep<'_>, rows: &Table) -> Option<Walk> {
        let PlanStep {
            bgp,
            step,
            graph,
            rdf_type,
            classes,
        } = *planned;
        if graph != GraphRef::Default
            || step.partner.is_some()
            || rows.rows > IN_PLACE_ROWS as usize
        {
            return None;
        }
        let pattern = &bgp.patterns[step.pattern];
        let predicate = match pattern.predicate {
            Pred::Const(p) if Some(p) == rdf_type => return None,
            Pred::Const(p) => WalkPredicate::Const(p),
            Pred::Var(v) if pattern.subject == Node::Var(v) || pattern.object == Node::Var(v) => {
                return None
            }
            Pred::Var(v) if rows.column(v).is_some() => WalkPredicate::Bound(v),
            Pred::Var(v) => WalkPredicate::Free(v),
            Pred::Absent => return None,
        };
        let (Placement::Owner(_), placed) = place(bgp, step, rows, rdf_type, classes) else {
            return None;
        };
        let StepKind::Walk(direction) = placed.kind else {
            return None;
        };
        let (from, to) = match direction {
            Direction::Out => (pattern.subject, pattern.object),
            Direction::In => (pattern.object, pattern.subject),
        };
        Some(Walk {
            predicate,
            direction,
            from,
            to,
        })
    }
}

/// A vertex's lists in a walk's direction, as one row reads them.
#[derive(Clone, Copy)]
pub(super) enum VertexLists<'a> {
    /// Its record in a partition of this process.
    Own(Record<'a>),
    /// A record learnt from its owner.
    Learnt(&'a [(PredId, Vec<Id>)]),
}

impl<'a> VertexLists<'a> {
    /// The neighbours over `predicate`.
    pub(super) fn get(self, predicate: PredId) -> &'a [Id] {
        match self {
            VertexLists::Own(record) => record.get(predicate),
            VertexLists::Learnt(lists) => lists
                .binary_search_by_key(&predicate, |(p, _)| *p)
                .map_or(&[][..], |at| &lists[at].1),
        }
    }

    /// Each (predicate, neighbours) pair, predicates ascending.
    pub(super) fn each(self, mut f: impl FnMut(PredId, &'a [Id])) {
        match self {
            VertexLists::Own(record) => record.iter().for_each(|(p, list)| f(p, list)),
            VertexLists::Learnt(lists) => lists.iter().for_each(|(p, list)| f(*p, list)),
        }
    }
}
