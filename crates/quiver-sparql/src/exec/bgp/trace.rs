//! A pattern's run over partitions as EXPLAIN's steps: each step the partitions ran, its
//! rows and time summed over the workers from their records ([`PartitionTrace`]).

use super::profile::StepProfile;
use crate::partitions::{PartitionTrace, WorkerRole, WorkerStep};

/// The steps of `trace` with their rows and times; `rows` is the run's output.
///
/// A step's rows are what its workers' runs returned (for an intersection split at run
/// time, what its checks kept: the walk's rows went on to them; for a check filtered where
/// the rows were, what it kept). A step no worker ran (the classes of a graph, read by the
/// sender of its rows) takes its rows from the next step's input, or from the output when
/// it is the last.
pub(super) fn step_profiles(trace: &PartitionTrace, rows: usize) -> Vec<StepProfile> {
    let last = trace.steps.len().saturating_sub(1);
    trace
        .steps
        .iter()
        .enumerate()
        .map(|(s, step)| {
            let at = |s: usize| trace.work.iter().filter(move |w| w.step as usize == s);
            let ran = |w: &&WorkerStep| {
                matches!(
                    w.role,
                    WorkerRole::Ran
                        | WorkerRole::Checked
                        | WorkerRole::Filtered
                        | WorkerRole::Typed
                        | WorkerRole::WalkedHere
                        | WorkerRole::Recalled
                )
            };
            let out = if at(s).any(|w| w.role != WorkerRole::Start) {
                at(s).filter(ran).map(|w| w.rows_out).sum::<u64>()
            } else if s == last {
                rows as u64
            } else {
                at(s + 1).filter(ran).map(|w| w.rows_in).sum()
            };
            let mut workers: Vec<u32> = at(s)
                .filter(|w| w.role != WorkerRole::Start)
                .map(|w| w.worker)
                .collect();
            workers.sort_unstable();
            workers.dedup();
            StepProfile {
                step: *step,
                rows: out as usize,
                // Plus 0.0: an empty sum of floats is -0.0, which EXPLAIN would print.
                micros: at(s).map(|w| w.micros).sum::<f64>() + 0.0,
                parallel: workers.len() > 1,
                split: false,
                transfer: None,
            }
        })
        .collect()
}
