//! EXPLAIN: the chosen plan with estimated and actual rows and time per step, and what
//! each GROUP BY did.

use std::fmt::Write;

use quiver_store::Direction;

use crate::engine::ExecutionProfile;
use crate::partitions::{Exchanged, PartitionTrace, WorkerRole};
use crate::step::StepKind;

/// Renders a profile as a table, one block per basic graph pattern run.
pub fn render(profile: &ExecutionProfile) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "planning {:.1} µs, execution {:.1} µs",
        profile.plan_micros, profile.execute_micros
    );
    for (b, bgp) in profile.bgps.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nbasic graph pattern {}{}:",
            b + 1,
            if bgp.seeded {
                " (seeded by the rows before it)"
            } else {
                ""
            }
        );
        if let Some(limit) = bgp.limit {
            let _ = writeln!(
                out,
                "  limit pushed down: exploration stops once {limit} rows are found"
            );
        }
        for (i, pattern) in bgp.patterns.iter().enumerate() {
            let _ = writeln!(out, "  [{}] {pattern}", i + 1);
        }
        let _ = writeln!(
            out,
            "  {:<4} {:<26} {:>14} {:>12} {:>12}",
            "step", "operation", "estimated", "actual", "time µs"
        );
        // Steps left in the current run on a device.
        let mut device_left = 0;
        for (s, step) in bgp.steps.iter().enumerate() {
            if let Some(run) = &step.transfer {
                device_left = run.steps;
            }
            let operation = match step.step.kind {
                StepKind::Walk(Direction::Out) => {
                    format!("{} >  (walk out)", step.step.pattern + 1)
                }
                StepKind::Walk(Direction::In) => format!("{} <  (walk in)", step.step.pattern + 1),
                StepKind::Index(Direction::In) => {
                    format!("{} << (subjects index)", step.step.pattern + 1)
                }
                StepKind::Index(Direction::Out) => {
                    format!("{} >> (objects index)", step.step.pattern + 1)
                }
                StepKind::Scan => format!("{} scan", step.step.pattern + 1),
            };
            let operation = match step.step.partner {
                Some((partner, _)) => format!("{operation} ∩ {}", partner + 1),
                None => operation,
            };
            let estimate = if step.step.estimate.is_nan() {
                "user plan".to_owned()
            } else {
                format!("{:.0}", step.step.estimate)
            };
            let _ = writeln!(
                out,
                "  {:<4} {:<26} {:>14} {:>12} {:>12.1}{}",
                s + 1,
                operation,
                estimate,
                step.rows,
                step.micros,
                if step.parallel && bgp.partitions.is_some() {
                    " (on several workers, summed)"
                } else if step.parallel {
                    " (parallel, summed)"
                } else if step.split {
                    " (rows split over threads)"
                } else if device_left > 0 {
                    " (device)"
                } else {
                    ""
                }
            );
            device_left = device_left.saturating_sub(1);
        }
        if let Some(trace) = &bgp.partitions {
            render_workers(&mut out, trace);
        }
        for (s, step) in bgp.steps.iter().enumerate() {
            if let Some(run) = &step.transfer {
                let _ = writeln!(
                    out,
                    "  steps {}–{} ran on {}: upload {} bytes in {:.1} µs, download {} bytes in {:.1} µs, {:.1} µs in all",
                    s + 1,
                    s + run.steps,
                    run.device,
                    run.upload_bytes,
                    run.upload_micros,
                    run.download_bytes,
                    run.download_micros,
                    run.total_micros
                );
                if run.index_bytes > 0 {
                    let _ = writeln!(
                        out,
                        "  predicate segments copied to {} first: {} bytes in {:.1} µs",
                        run.device, run.index_bytes, run.index_micros
                    );
                }
            }
        }
    }
    for group in &profile.groups {
        let _ = writeln!(
            out,
            "\ngroup: {} rows into {} groups, {:.1} µs",
            group.rows, group.groups, group.micros
        );
    }
    for note in &profile.notes {
        let _ = writeln!(out, "\n{note}");
    }
    let _ = writeln!(
        out,
        "\nrows built by operators and steps: {}",
        profile.rows_built
    );
    if profile.peak_memory > 0 {
        let _ = writeln!(
            out,
            "\npeak memory held by operators: {} bytes",
            profile.peak_memory
        );
    }
    for (p, path) in profile.paths.iter().enumerate() {
        let _ = writeln!(
            out,
            "\nproperty path {}: {}\n  {}, {} start vertices, {} rows, {:.1} µs",
            p + 1,
            path.pattern,
            path.start,
            path.starts,
            path.rows,
            path.micros
        );
    }
    out
}

/// What each worker of a run over partitions did at each step, and what moved between
/// them.
fn render_workers(out: &mut String, trace: &PartitionTrace) {
    let _ = writeln!(
        out,
        "  on {}, by step and worker (moved: sent to other workers):",
        trace.executor
    );
    let _ = writeln!(
        out,
        "  {:<4} {:>6} {:<10} {:>9} {:>12} {:>12} {:>12} {:>12} {:>14}",
        "step",
        "worker",
        "role",
        "messages",
        "rows in",
        "rows out",
        "time µs",
        "moved rows",
        "moved bytes"
    );
    let mut work = trace.work.clone();
    work.sort_by_key(|w| (w.step, w.role != WorkerRole::Start, w.worker, w.role as u8));
    let mut moved = Exchanged::default();
    for w in &work {
        moved += w.sent;
        let _ = writeln!(
            out,
            "  {:<4} {:>6} {:<10} {:>9} {:>12} {:>12} {:>12.1} {:>12} {:>14}",
            w.step + 1,
            w.worker,
            w.role.name(),
            w.messages,
            w.rows_in,
            w.rows_out,
            w.micros,
            w.sent.rows,
            w.sent.bytes
        );
    }
    let _ = writeln!(
        out,
        "  moved between workers: {} messages, {} rows, {} bytes",
        moved.messages, moved.rows, moved.bytes
    );
    if let Some(keys) = &trace.counted_by {
        let _ = writeln!(
            out,
            "  rows left each worker counted by {} key(s) (a GROUP BY or DISTINCT over them)",
            keys.len()
        );
    }
    if let Some(extremes) = &trace.narrowed {
        let _ = writeln!(
            out,
            "  before counting, each worker narrowed {} column(s) read only by MIN or MAX \
             to each group's least and greatest value that sort by id",
            extremes.columns.len()
        );
    }
    if !trace.filtered.is_empty() {
        let ranges: usize = trace.filtered.iter().map(|f| f.ranges.len()).sum();
        let _ = writeln!(
            out,
            "  rows each worker found filtered where they were by {} FILTER(s) decided by {} \
             range(s) of ids",
            trace.filtered.len(),
            ranges
        );
    }
    if !trace.checked.is_empty() {
        let first = trace.steps.len() + 1;
        let exists = trace.checked.iter().filter(|c| c.exists).count();
        let _ = writeln!(
            out,
            "  rows checked at the owners of their vertices by {} FILTER EXISTS and {} FILTER \
             NOT EXISTS of one edge (step {first} on in the table)",
            exists,
            trace.checked.len() - exists,
        );
    }
    if let Some(top) = &trace.cut_to {
        let _ = writeln!(
            out,
            "  rows left each worker cut to the first {} in the order of {} key(s) (a top-k \
             over them), with every row whose keys it could not rank",
            top.k,
            top.keys.len()
        );
    }
}
