//! The steps of an exploration plan: what the planner, user plans, the intersection pass
//! and the executor all speak.

use quiver_store::Direction;

/// How a step uses its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StepKind {
    /// Walk the pattern's edges: Out from subject to object, In from object to subject.
    Walk(Direction),
    /// Start from the predicate index: every subject (In) or object (Out) of the predicate.
    Index(Direction),
    /// Enumerate every triple matching the pattern.
    Scan,
}

/// One step of a plan, with the planner's estimate of the rows after it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Step {
    pub pattern: usize,
    pub kind: StepKind,
    pub estimate: f64,
    /// A second pattern that constrains the variable this walk binds, walked from its
    /// other (already bound) end in the given direction: the step binds the intersection
    /// of both neighbour lists (a worst-case-optimal join of the cycle they close).
    pub partner: Option<(usize, Direction)>,
}

impl Step {
    pub fn new(pattern: usize, kind: StepKind, estimate: f64) -> Self {
        Self {
            pattern,
            kind,
            estimate,
            partner: None,
        }
    }
}
