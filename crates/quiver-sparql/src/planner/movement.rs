//! What moving rows between a cluster's partitions adds to a plan's cost.
//!
//! Over partitions, a step runs where the records it reads are: a walk out of a vertex at
//! the vertex's owner, a walk into a vertex over a constant predicate at that vertex's
//! owner, a predicate index or a walk over a class's instances on every partition, each
//! over what it owns (the executor's placement, `quiver-cluster`'s `route`). Rows that
//! are not at the owner a step needs cross to it first, and those that leave their process
//! are serialized, sent and read back: on a 2-core machine, moving a row cost two to four
//! times as much as making one (BSBM's ten newest reviews over 2 processes: 26.4 ms when
//! the walk in from the dates left 99,927 rows to cross to their reviews' owners, 17.3 ms
//! when listing the reviews kept every row where it was; the whole store makes the plan's
//! 420,000 rows in 13.2 ms). So a plan's cost counts, beside the rows after each step,
//! [`ROW_MOVED`] (the low end) for each row expected to cross to another partition; two
//! orders that make the same rows then differ by what they move, and the planner takes the
//! one whose rows stay where they are.
//!
//! On one store nothing moves ([`Spread::ONE`]), and plans are those of the rows alone.

use quiver_model::PredId;
use quiver_store::{Direction, Store};

use crate::bgp::{Node, Pattern, Pred};
use crate::step::StepKind;

/// What one row moved to another partition costs, in rows made by a step (the planner's
/// unit): see the module's documentation.
pub const ROW_MOVED: f64 = 2.0;

/// The most rows a walk of a replicated predicate is expected to start from for the planner
/// to count it as run where the rows are (the cluster sends a walk that would give more
/// than a few thousand rows to its owners).
pub const REPLICATED_WALK_ROWS: f64 = 4096.0;

/// How the store a query runs on spreads its records over partitions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spread {
    /// Partitions, each with the records of the vertices it owns (1: one store).
    pub partitions: u32,
    /// Whether every partition can tell every vertex's classes (the `rdf:type`
    /// memberships replicated), so that a check or walk out over `rdf:type` runs where the
    /// rows are.
    pub types_everywhere: bool,
    /// Predicates whose edges of the default graph every partition holds, sorted: a walk
    /// of few rows over one runs where the rows are.
    pub replicated: Vec<PredId>,
}

impl Default for Spread {
    fn default() -> Self {
        Self::ONE
    }
}

/// Where a plan's rows are between its steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum At {
    /// At the query's coordinator: before the first step (its one seed row), or after a
    /// step over the classes, which the coordinator lists.
    Coordinator,
    /// Each row at the owner of this node's value in it (a constant's owner: one).
    Owner(Node),
}

impl Spread {
    /// One store: nothing moves.
    pub const ONE: Spread = Spread {
        partitions: 1,
        types_everywhere: false,
        replicated: Vec::new(),
    };

    /// This spread for a pattern over `graph`: the replicated edges are the default
    /// graph's.
    pub fn over(&self, graph: crate::dataset::GraphRef) -> Spread {
        match graph {
            crate::dataset::GraphRef::Default => self.clone(),
            _ => Spread {
                replicated: Vec::new(),
                ..self.clone()
            },
        }
    }

    /// The rows expected to move to run step `kind` of `pattern` over `rows` rows that are
    /// `at`, and where the rows are after it (a check is a walk out of its subject).
    pub(crate) fn step(
        &self,
        store: &Store,
        pattern: &Pattern,
        kind: StepKind,
        rows: f64,
        at: At,
    ) -> (f64, At) {
        if self.partitions <= 1 {
            return (0.0, at);
        }
        let rdf_type = store.rdf_type();
        let is_type = is_pred(pattern.predicate, rdf_type);
        let everywhere = rows * f64::from(self.partitions - 1);
        if let (StepKind::Walk(_), Pred::Const(p)) = (kind, pattern.predicate) {
            if rows <= REPLICATED_WALK_ROWS && self.replicated.binary_search(&p).is_ok() {
                return (0.0, at);
            }
        }
        match kind {
            // Each partition over its own vertices: the rows are copied to every one.
            StepKind::Scan | StepKind::Index(Direction::In) => {
                (everywhere, At::Owner(pattern.subject))
            }
            StepKind::Index(Direction::Out) if is_type => (0.0, At::Coordinator),
            StepKind::Index(Direction::Out) => (everywhere, At::Owner(pattern.object)),
            // Answered from the memberships every partition holds, where the rows are.
            StepKind::Walk(Direction::Out) if is_type && self.types_everywhere => (0.0, at),
            StepKind::Walk(Direction::Out) => self.reaching(pattern.subject, rows, at),
            StepKind::Walk(Direction::In) => {
                let whole_at_owner = match pattern.predicate {
                    Pred::Const(_) => !is_type,
                    Pred::Absent => false,
                    // Only a class's IN record is shared among the partitions.
                    Pred::Var(_) => match pattern.object {
                        Node::Const(vertex) => store.class_of_term(vertex).is_none(),
                        _ => true,
                    },
                };
                match whole_at_owner {
                    true => self.reaching(pattern.object, rows, at),
                    false => (everywhere, At::Owner(pattern.subject)),
                }
            }
        }
    }

    /// The rows expected to move for `rows` rows `at` to reach the owners of `node`, and
    /// where they are then.
    fn reaching(&self, node: Node, rows: f64, at: At) -> (f64, At) {
        let there = At::Owner(node);
        if at == there {
            return (0.0, there);
        }
        // Rows at random owners: all but one in `partitions` go elsewhere.
        (rows * (1.0 - 1.0 / f64::from(self.partitions)), there)
    }
}

fn is_pred(predicate: Pred, rdf_type: Option<PredId>) -> bool {
    matches!(predicate, Pred::Const(p) if Some(p) == rdf_type)
}
