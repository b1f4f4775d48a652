//! Handing exploration steps to an accelerator (see [`crate::device`]).
//!
//! Once the next step's work is large — the list entries it reads, estimated from the rows
//! and the predicate's average list length (a constant's exact one), times the depth of
//! a binary search for checks and intersections; at least the device's `min_work` — the
//! longest run of following steps the device can take (walks and checks over a constant
//! predicate, intersecting walks) goes to it in one call: the table is uploaded once,
//! stays on the device between the steps, and only the final columns come back. Other
//! steps (predicate variables, index starts, scans) stay on the CPU, before or after.

use std::time::Instant;

use super::profile::{StepProfile, TransferProfile};
use crate::bgp::{Bgp, Node, Pred};
use crate::context::ExecContext;
use crate::device::{DeviceInput, DeviceQuery, DeviceStep, DeviceTarget};
use crate::error::QueryError;
use crate::step::{Step, StepKind};
use crate::table::{Table, VarId};
use quiver_store::Direction;

/// The leading steps of `steps` a device can run from a table with columns `vars`, and
/// the variable each binding step binds.
fn translate(bgp: &Bgp, steps: &[Step], vars: &[VarId]) -> (Vec<DeviceStep>, Vec<VarId>) {
    let mut columns: Vec<VarId> = vars.to_vec();
    let mut device_steps = Vec::new();
    let mut bound = Vec::new();
    for step in steps {
        let pattern = &bgp.patterns[step.pattern];
        let StepKind::Walk(direction) = step.kind else {
            break;
        };
        let Pred::Const(predicate) = pattern.predicate else {
            break;
        };
        let (source, target) = match direction {
            Direction::Out => (pattern.subject, pattern.object),
            Direction::In => (pattern.object, pattern.subject),
        };
        let input = |node: Node| match node {
            Node::Const(id) => Some(DeviceInput::Const(id)),
            Node::Var(v) => columns
                .iter()
                .position(|&c| c == v)
                .map(DeviceInput::Column),
            Node::Absent => None,
        };
        let Some(source) = input(source) else {
            break;
        };
        let (target, binds) = match target {
            Node::Var(v) if !columns.contains(&v) => (DeviceTarget::Bind, Some(v)),
            other => match input(other) {
                Some(known) => (DeviceTarget::Check(known), None),
                None => break,
            },
        };
        let partner = match step.partner {
            None => None,
            Some((other, other_direction)) => {
                let other = &bgp.patterns[other];
                let Pred::Const(other_predicate) = other.predicate else {
                    break;
                };
                let other_source = match other_direction {
                    Direction::Out => other.subject,
                    Direction::In => other.object,
                };
                match (input(other_source), binds) {
                    (Some(other_source), Some(_)) => {
                        Some((other_source, other_predicate, other_direction))
                    }
                    _ => break,
                }
            }
        };
        device_steps.push(DeviceStep {
            source,
            predicate,
            direction,
            target,
            partner,
        });
        if let Some(v) = binds {
            columns.push(v);
            bound.push(v);
        }
    }
    (device_steps, bound)
}

/// The device steps the context's device would take from the start of `steps` on
/// `table`, and the variables they bind; `None` when the CPU keeps them.
fn device_steps(
    bgp: &Bgp,
    steps: &[Step],
    table: &Table,
    ctx: &ExecContext<'_>,
) -> Option<(Vec<DeviceStep>, Vec<VarId>)> {
    let device = ctx.device?;
    if table.rows == 0 {
        return None;
    }
    let (device_steps, bound) = translate(bgp, steps, &table.vars);
    let first = device_steps.first()?;
    // The work first: the steps of light queries stop there, before `serves`.
    if work(first, table, ctx) < device.min_work() as f64 || !device.serves(ctx.store, ctx.graph) {
        return None;
    }
    Some((device_steps, bound))
}

/// The list entries `step` reads over `table`: rows times the list length per row (a
/// constant's own, else the predicate's average in that direction), times the depth of a
/// binary search where the step searches lists (checks, intersections).
fn work(step: &DeviceStep, table: &Table, ctx: &ExecContext<'_>) -> f64 {
    let length = |input: DeviceInput, predicate, direction| -> f64 {
        match input {
            DeviceInput::Const(vertex) => ctx.graph.degree(vertex, predicate, direction) as f64,
            DeviceInput::Column(_) => {
                let stats = ctx.store.predicate_stats(predicate);
                let ends = match direction {
                    Direction::Out => stats.subjects,
                    Direction::In => stats.objects,
                };
                stats.triples as f64 / ends.max(1) as f64
            }
        }
    };
    let depth = |n: f64| (n + 2.0).log2();
    let rows = table.rows as f64;
    let list = length(step.source, step.predicate, step.direction);
    match (step.target, step.partner) {
        (DeviceTarget::Bind, None) => rows * list,
        (DeviceTarget::Check(_), _) => rows * depth(list),
        (DeviceTarget::Bind, Some((source, predicate, direction))) => {
            let other = length(source, predicate, direction);
            rows * list.min(other) * depth(list.max(other))
        }
    }
}

/// Whether the context's device takes the next of `steps` on `table`.
pub(super) fn takes_next(bgp: &Bgp, steps: &[Step], table: &Table, ctx: &ExecContext<'_>) -> bool {
    device_steps(bgp, steps, table, ctx).is_some()
}

/// Runs the leading steps of `steps` on the context's device when it takes them: the
/// table after them and how many steps ran; `None` to go on on the CPU.
pub(super) fn run_on_device(
    bgp: &Bgp,
    steps: &[Step],
    table: &Table,
    ctx: &ExecContext<'_>,
    profile: &mut Vec<StepProfile>,
) -> Result<Option<(Table, usize)>, QueryError> {
    let Some(device) = ctx.device else {
        return Ok(None);
    };
    let Some((device_steps, bound)) = device_steps(bgp, steps, table, ctx) else {
        return Ok(None);
    };
    let started = Instant::now();
    let mut memory = ctx.reservation();
    let check = || ctx.check();
    let run = device.run(
        ctx.store,
        ctx.graph,
        table,
        &device_steps,
        DeviceQuery {
            check: &check,
            memory: &mut memory,
        },
    )?;
    let Some(run) = run else {
        return Ok(None);
    };
    let mut vars = table.vars.clone();
    vars.extend(bound);
    let result = Table {
        vars,
        columns: run.columns,
        rows: run.rows,
    };
    let taken = device_steps.len();
    let transfer = TransferProfile {
        device: device.name(),
        steps: taken,
        upload_bytes: run.upload_bytes,
        upload_micros: run.upload_micros,
        download_bytes: run.download_bytes,
        download_micros: run.download_micros,
        index_bytes: run.index_bytes,
        index_micros: run.index_micros,
        total_micros: started.elapsed().as_secs_f64() * 1e6,
    };
    for (i, (step, (rows, micros))) in steps.iter().zip(run.steps).enumerate() {
        profile.push(StepProfile {
            step: *step,
            rows,
            micros,
            parallel: false,
            split: false,
            transfer: (i == 0).then(|| transfer.clone()),
        });
    }
    Ok(Some((result, taken)))
}
