//! Basic graph patterns: graph exploration, alone or seeded with the rows already found.
//!
//! When the left side of a join binds every variable the right side shares with it, the
//! right basic graph pattern runs seeded with the left rows (exploration continues from
//! them) instead of joining two independent results.

use super::Evaluator;
use crate::error::QueryError;
use crate::operator::{Operator, PlannedBgp};
use crate::table::{Table, UNBOUND};
use explore::explore;
use profile::StepProfile;

mod apply;
mod device;
pub mod explore;
mod intersect;
mod partner_sets;
pub mod profile;
mod step_io;
mod trace;

/// The profile of one basic graph pattern's run.
#[derive(Debug, Clone)]
pub struct BgpProfile {
    pub patterns: Vec<String>,
    pub seeded: bool,
    pub steps: Vec<StepProfile>,
    /// The rows a LIMIT (or the result cap) asked of the exploration, which stops once it
    /// has found them.
    pub limit: Option<usize>,
    /// Over partitions: what each worker did at each step (`steps` are then the steps as
    /// the partitions ran them, their rows and times summed over the workers).
    pub partitions: Option<crate::partitions::PartitionTrace>,
}

impl Evaluator<'_> {
    /// A basic graph pattern, alone or (`seeded`) continuing from the rows of `input`.
    pub(crate) fn bgp(
        &self,
        planned: &PlannedBgp,
        input: Table,
        seeded: bool,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        let steps = match (&planned.seeded, seeded) {
            (Some((_, steps)), true) => steps,
            _ => &planned.alone,
        };
        let mut profile = Vec::new();
        let mut trace = None;
        let ctx = self.context(planned.graph);
        let result = match &self.partitions {
            Some(partitions) => {
                let explored = partitions.explore(crate::partitions::PartitionedBgp {
                    bgp: &planned.bgp,
                    steps,
                    graph: planned.graph,
                    merged: &self.dataset.merged_names,
                    input,
                    state: self.state,
                    keep: self
                        .pending_columns
                        .take()
                        .filter(|_| planned.bgp.equalities.is_empty()),
                    // Equalities drop rows after the partitions: no bound may stop them.
                    limit: limit.filter(|_| planned.bgp.equalities.is_empty()),
                    answers: self
                        .pending_answers
                        .take()
                        .filter(|_| planned.bgp.equalities.is_empty() && limit.is_some()),
                    count_by: self
                        .pending_count_by
                        .take()
                        .filter(|_| planned.bgp.equalities.is_empty() && limit.is_none()),
                    distinct_only: self.pending_distinct_only.take(),
                    extremes: self
                        .pending_extremes
                        .take()
                        .filter(|_| planned.bgp.equalities.is_empty() && limit.is_none()),
                    top: self
                        .pending_top
                        .take()
                        .filter(|_| planned.bgp.equalities.is_empty() && limit.is_none()),
                    passes: self.pending_passes.take(),
                    checks: self.pending_checks.take(),
                    trace: self.trace_partitions,
                })?;
                *self.counted.borrow_mut() = explored.counts;
                if let Some(t) = &explored.trace {
                    profile = trace::step_profiles(t, explored.rows.rows);
                }
                trace = explored.trace;
                apply::apply_equalities(&ctx, explored.rows, &planned.bgp.equalities)?
            }
            None => explore(&planned.bgp, steps, input, &ctx, &mut profile, limit)?,
        };
        self.note_cut(result.rows, limit);
        // The last step's rows are the output, which `evaluate` counts.
        let steps: usize = profile.iter().rev().skip(1).map(|step| step.rows).sum();
        self.built(steps);
        if self.profiling {
            self.profiles.borrow_mut().push(BgpProfile {
                patterns: planned
                    .bgp
                    .patterns
                    .iter()
                    .map(|p| p.text.clone())
                    .collect(),
                seeded,
                steps: profile,
                limit,
                partitions: trace,
            });
        }
        Ok(result)
    }

    /// Whether `left` can seed the exploration of `right`: its seed columns are complete.
    pub(crate) fn seedable<'o>(&self, left: &Table, right: &'o Operator) -> Option<&'o PlannedBgp> {
        let Operator::Bgp(planned) = right else {
            return None;
        };
        let (seeds, _) = planned.seeded.as_ref()?;
        let complete = seeds
            .iter()
            .all(|&v| left.column(v).is_some_and(|c| !c.contains(&UNBOUND)));
        // Every variable the left rows share with the pattern must be a seed: the seeded
        // plan binds the others itself, without comparing them with the left rows' values
        // (a variable only some branches of a left UNION bind is not one of the seeds,
        // certain variables, yet its column may hold values).
        let shared_seeded = planned
            .bgp
            .vars()
            .iter()
            .filter(|&&v| left.column(v).is_some())
            .all(|v| seeds.contains(v));
        (complete && shared_seeded).then_some(planned)
    }
}
