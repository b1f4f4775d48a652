//! A basic graph pattern with the plans it runs by, chosen when the query is prepared.

use crate::bgp::Bgp;
use crate::dataset::GraphRef;
use crate::planner::Step;
use crate::table::VarId;

/// A basic graph pattern with its plans.
#[derive(Debug, Clone)]
pub struct PlannedBgp {
    pub bgp: Bgp,
    pub graph: GraphRef,
    /// The plan when the pattern runs on its own.
    pub alone: Vec<Step>,
    /// The plan when it runs seeded with the rows of the left side of a join, whose
    /// certainly-bound variables are `seed_vars`.
    pub seeded: Option<(Vec<VarId>, Vec<Step>)>,
}
