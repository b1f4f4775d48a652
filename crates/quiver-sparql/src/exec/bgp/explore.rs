//! The graph-exploration executor: runs a plan's steps over columnar tables.
//!
//! Each step reads one column of bound vertices and walks the graph index from each:
//! an *expand* appends every neighbour as a new row, a *check* keeps the rows whose known
//! target is among the neighbours (binary search in the sorted list). A step produces a
//! selection vector of parent rows plus the new columns, so rows are never heap objects
//! (over an input of no columns, a query's first step, only the new columns).
//! Heavy queries fan out: once a step yields many rows, the table is cut into morsels and
//! the remaining steps run on every core (rayon); light queries never leave their thread.
//!
//! Under a LIMIT (or the result cap) exploration is asked for a number of rows: every step
//! then stops once it has emitted a bounded number, and if the last step ends short of the
//! rows asked while some step stopped early, the steps run again with a bound four times
//! larger. Each run's rows are solutions, so any prefix of them answers the LIMIT. With a
//! device (`device.rs`), a bound at least its `min_work` runs the steps whole instead.

use quiver_model::Id;
use rayon::prelude::*;

use super::apply::{apply_equalities, apply_step, partner};
use super::partner_sets::PartnerSets;
use super::profile::StepProfile;
use super::step_io::Bounded;
use crate::bgp::Bgp;
pub use crate::context::ExecContext;
use crate::context::{ensure_addressable, micros_since};
use crate::error::QueryError;
use crate::exec::parallel::on_workers;
use crate::step::Step;
use crate::table::Table;

pub use super::step_io::PARALLEL_MIN_ROWS;

/// The most rows of one morsel: a morsel's steps then read the records and write the
/// tables of the previous step while they are still in cache (two walks out of the same
/// vertices read the same records), and its buffers are reused memory, not fresh pages.
const MAX_MORSEL_ROWS: usize = 1 << 16;
/// The fewest rows of one morsel, where the table is large enough for it.
const MIN_MORSEL_ROWS: usize = 64;
/// The fewest morsels per thread where the table has the rows for them.
const MIN_MORSELS_PER_THREAD: usize = 8;

/// The rows of each morsel when a table of `rows` rows runs the rest of its steps on
/// `threads` threads: about 16 morsels per thread, of 64 to 65,536 rows — and at least 8
/// morsels per thread whatever their size. A table that goes parallel as soon as it
/// reaches a thousand rows may hold rows that each fan out into heavy work (q1 at
/// LUBM-2560: 2,560 universities, each the intersections of its twenty departments'
/// members with its alumni): cut into morsels of 64 rows, it made 40 morsels for 16
/// threads, two or three per thread, and the thread that drew three set the pace.
fn morsel_rows(rows: usize, threads: usize) -> usize {
    let threads = threads.max(1);
    (rows / (threads * 16))
        .clamp(MIN_MORSEL_ROWS, MAX_MORSEL_ROWS)
        .min(rows / (threads * MIN_MORSELS_PER_THREAD))
        .max(1)
}

/// Runs `steps` of `bgp` starting from `input` (the unit table, or seed rows). With
/// `limit`, stops once that many rows are found (the table may hold more, or fewer when
/// there are no more).
pub fn explore(
    bgp: &Bgp,
    steps: &[Step],
    input: Table,
    ctx: &ExecContext<'_>,
    profile: &mut Vec<StepProfile>,
    limit: Option<usize>,
) -> Result<Table, QueryError> {
    if bgp.is_unsatisfiable() {
        let mut vars = input.vars.clone();
        vars.extend(bgp.vars().into_iter().filter(|v| !input.vars.contains(v)));
        return Ok(Table::empty(vars));
    }
    let Some(limit) = limit else {
        return explore_all(bgp, steps, input, ctx, profile);
    };
    // A bound as large as a device's work (a server's result cap) is no reason to stop
    // early: the device runs the steps whole (the table may hold more rows than asked).
    if ctx.device.is_some_and(|device| limit >= device.min_work()) {
        return explore_all(bgp, steps, input, ctx, profile);
    }
    let mut cap = limit.max(64);
    loop {
        profile.clear();
        let mut table = input.clone();
        let mut truncated = false;
        // The table between steps, charged while the next step reads it.
        let mut held = ctx.reservation();
        // The rows the plan expected before the step, for its expected growth.
        let mut expected = input.rows as f64;
        for step in steps {
            let started = ctx.state.step_started();
            let split;
            // In morsels only where the step is not expected to fill the cap early: each
            // morsel would make up to the cap (a walk from 100 K courses to their 1.3 M
            // students, capped at 100 K rows, would make them eight times over).
            let growth = step.estimate / expected.max(1.0);
            expected = step.estimate;
            if ctx.threads > 1
                && table.rows >= PARALLEL_BOUNDED_ROWS
                && table.rows as f64 * growth <= cap as f64
            {
                let stopped;
                (table, stopped) = bounded_in_morsels(bgp, step, &table, ctx, cap)?;
                truncated |= stopped;
                split = true;
            } else {
                let mut bounded = Bounded::new(ctx, cap);
                table = apply_step(
                    &bgp.patterns[step.pattern],
                    *step,
                    partner(bgp, step),
                    &table,
                    &mut bounded,
                )?;
                truncated |= bounded.truncated;
                split = bounded.split;
            }
            held.try_resize(table.heap_bytes())?;
            profile.push(StepProfile {
                step: *step,
                rows: table.rows,
                micros: micros_since(started),
                parallel: false,
                split,
                transfer: None,
            });
        }
        let table = apply_equalities(ctx, table, &bgp.equalities)?;
        if table.rows >= limit || !truncated || cap == usize::MAX {
            return Ok(table);
        }
        cap = cap.saturating_mul(4);
    }
}

/// Rows from which a step under a bound runs in morsels on all threads: the rows an
/// OFFSET skips are made too (LUBM-100's undergraduates with their names, OFFSET 100000
/// LIMIT 10, walked the names of 100 K rows on one thread), where a LIMIT's few rows never
/// reach it.
const PARALLEL_BOUNDED_ROWS: usize = 16_384;

/// `step` of `bgp` over `table`, emitting at most `cap` rows, in morsels on all threads:
/// each morsel stops at the cap on its own, and their rows, in order, are cut to the cap:
/// the first rows the step makes in the table's order, as it would make them on one
/// thread, so that pages of an OFFSET stay in the same order. Whether it stopped at the
/// cap.
fn bounded_in_morsels(
    bgp: &Bgp,
    step: &Step,
    table: &Table,
    ctx: &ExecContext<'_>,
    cap: usize,
) -> Result<(Table, bool), QueryError> {
    let morsel = table.rows.div_ceil(ctx.threads * 4);
    let starts: Vec<usize> = (0..table.rows).step_by(morsel).collect();
    let parts = on_workers(ctx, || {
        starts
            .into_par_iter()
            .map(|start| {
                let part = table.slice(start, start + morsel);
                bounded_step(bgp, step, &part, ctx, cap, Some(Morsel { sets: None }))
            })
            .collect::<Result<Vec<_>, QueryError>>()
    })?;
    let mut truncated = false;
    let (mut kept, mut rows) = (Vec::with_capacity(parts.len()), 0);
    for (part, stopped, _) in parts {
        if rows >= cap {
            truncated |= part.rows > 0;
            continue;
        }
        truncated |= stopped;
        rows += part.rows;
        kept.push(part);
    }
    let mut result = on_workers(ctx, || Ok(Table::concat(kept)))?;
    if result.rows > cap {
        result = result.slice(0, cap);
        truncated = true;
    }
    Ok((result, truncated))
}

fn explore_all(
    bgp: &Bgp,
    steps: &[Step],
    input: Table,
    ctx: &ExecContext<'_>,
    profile: &mut Vec<StepProfile>,
) -> Result<Table, QueryError> {
    let mut table = input;
    // The table between steps, charged while the next step reads it.
    let mut held = ctx.reservation();
    let mut k = 0;
    while k < steps.len() {
        // Many rows (a seeded pattern's input, or what the steps so far found) run the
        // rest of the steps in morsels on all threads, unless the device takes them.
        let rest = &steps[k..];
        if ctx.threads > 1
            && table.rows >= PARALLEL_MIN_ROWS
            && !super::device::takes_next(bgp, rest, &table, ctx)
        {
            table = explore_parallel(bgp, rest, table, ctx, profile)?;
            break;
        }
        let step = &steps[k];
        if let Some((done, taken)) =
            super::device::run_on_device(bgp, &steps[k..], &table, ctx, profile)?
        {
            table = done;
            k += taken;
        } else {
            let (micros, split);
            (table, micros, split) = timed_step(bgp, step, &table, ctx, None)?;
            profile.push(StepProfile {
                step: *step,
                rows: table.rows,
                micros,
                parallel: false,
                split,
                transfer: None,
            });
            k += 1;
        }
        held.try_resize(table.heap_bytes())?;
    }
    apply_equalities(ctx, table, &bgp.equalities)
}

/// Runs `step` of `bgp` over `table` (unbounded): one step of a plan, for an executor
/// that moves rows between steps (`crate::partitions`). `ctx` names the store and graph
/// the step reads.
pub fn run_step(
    ctx: &ExecContext<'_>,
    bgp: &Bgp,
    step: &Step,
    table: &Table,
) -> Result<Table, QueryError> {
    ensure_addressable(table.rows)?;
    timed_step(bgp, step, table, ctx, None).map(|(table, _, _)| table)
}

/// Runs `step` of `bgp` over `table`, emitting at most `cap` rows: one step of a plan
/// under a LIMIT, for an executor that moves rows between steps. Returns the rows and
/// whether the step stopped at the cap (rows may then be missing).
pub fn run_step_bounded(
    ctx: &ExecContext<'_>,
    bgp: &Bgp,
    step: &Step,
    table: &Table,
    cap: usize,
) -> Result<(Table, bool), QueryError> {
    ensure_addressable(table.rows)?;
    bounded_step(bgp, step, table, ctx, cap, None).map(|(table, truncated, _)| (table, truncated))
}

/// Runs the intersecting walk `step` of `bgp` (a step with a partner) over `table`,
/// emitting at most `cap` rows: the walk's lists are read from `ctx.graph`, the partner's
/// from `partner_lists` (by the partner's source value: lists fetched from the partition
/// that holds them, for an executor over partitions). Returns the rows and whether the
/// step stopped at the cap.
pub fn run_intersection<'l>(
    ctx: &ExecContext<'_>,
    bgp: &Bgp,
    step: &Step,
    table: &Table,
    cap: usize,
    partner_lists: &dyn Fn(Id) -> &'l [Id],
) -> Result<(Table, bool), QueryError> {
    ensure_addressable(table.rows)?;
    let Some((other, direction)) = partner(bgp, step) else {
        return Err(QueryError::Plan("an intersection needs a partner".into()));
    };
    let mut bounded = Bounded::new(ctx, cap);
    let table = super::intersect::intersect_fetched(
        &bgp.patterns[step.pattern],
        *step,
        other,
        direction,
        table,
        &mut bounded,
        partner_lists,
    )?;
    Ok((table, bounded.truncated))
}

/// A step's rows are one morsel of a table cut over the query's threads: the step runs on
/// the thread it was given (splitting a morsel's rows again over the same threads nested a
/// second fork in each morsel and lost the read-ahead of the one-thread loop: q1 at
/// LUBM-1000 gained nothing from a second thread), with `sets`, the partner sets built once
/// for all the morsels.
#[derive(Clone, Copy)]
struct Morsel<'s> {
    sets: Option<&'s PartnerSets>,
}

/// `step` of `bgp` over `table`, unbounded, the microseconds it took and whether it split
/// its rows over threads; `morsel` when the table is one morsel of a parallel run.
fn timed_step(
    bgp: &Bgp,
    step: &Step,
    table: &Table,
    ctx: &ExecContext<'_>,
    morsel: Option<Morsel<'_>>,
) -> Result<(Table, f64, bool), QueryError> {
    let started = ctx.state.step_started();
    let (table, _, split) = bounded_step(bgp, step, table, ctx, usize::MAX, morsel)?;
    Ok((table, micros_since(started), split))
}

/// `step` of `bgp` over `table`, emitting at most `cap` rows; whether it stopped at the
/// cap and whether it split its rows over threads (never when `morsel` is given).
fn bounded_step(
    bgp: &Bgp,
    step: &Step,
    table: &Table,
    ctx: &ExecContext<'_>,
    cap: usize,
    morsel: Option<Morsel<'_>>,
) -> Result<(Table, bool, bool), QueryError> {
    let mut bounded = Bounded::new(ctx, cap);
    if let Some(Morsel { sets }) = morsel {
        bounded.in_morsel = true;
        bounded.sets = sets;
    }
    let table = apply_step(
        &bgp.patterns[step.pattern],
        *step,
        partner(bgp, step),
        table,
        &mut bounded,
    )?;
    Ok((table, bounded.truncated, bounded.split))
}

fn explore_parallel(
    bgp: &Bgp,
    steps: &[Step],
    table: Table,
    ctx: &ExecContext<'_>,
    profile: &mut Vec<StepProfile>,
) -> Result<Table, QueryError> {
    let morsel = morsel_rows(table.rows, ctx.threads);
    let starts: Vec<usize> = (0..table.rows).step_by(morsel).collect();
    // The constant partner lists every morsel would otherwise turn into bit sets of its
    // own are turned once, for all.
    let mut sets_memory = ctx.reservation();
    let sets = PartnerSets::of(bgp, steps, table.rows, ctx, &mut sets_memory);
    // Each morsel copies its rows on its own thread, just before its steps read them.
    let run = || {
        starts
            .into_par_iter()
            .map(|start| {
                let mut part = table.slice(start, start + morsel);
                // Each part stays charged until it is copied into the result.
                let mut memory = ctx.reservation();
                let mut local = Vec::with_capacity(steps.len());
                for step in steps {
                    let (micros, split);
                    (part, micros, split) =
                        timed_step(bgp, step, &part, ctx, Some(Morsel { sets: Some(&sets) }))?;
                    memory.try_resize(part.heap_bytes())?;
                    local.push((part.rows, micros, split));
                }
                Ok((part, local, memory))
            })
            .collect::<Result<Vec<_>, QueryError>>()
    };
    let parts = on_workers(ctx, run)?;
    drop(table);
    // The table the parts are copied into, charged before it is built.
    let mut held = ctx.reservation();
    held.try_resize(parts.iter().map(|(part, _, _)| part.heap_bytes()).sum())?;
    let mut totals = vec![(0usize, 0f64, false); steps.len()];
    let mut tables = Vec::with_capacity(parts.len());
    let mut charges = Vec::with_capacity(parts.len());
    for (part, local, charge) in parts {
        charges.push(charge);
        for (total, (rows, micros, split)) in totals.iter_mut().zip(local) {
            total.0 += rows;
            total.1 += micros;
            total.2 |= split;
        }
        tables.push(part);
    }
    let result = on_workers(ctx, || Ok(Table::concat(tables)))?;
    drop(charges);
    for (step, (rows, micros, split)) in steps.iter().zip(totals) {
        profile.push(StepProfile {
            step: *step,
            rows,
            micros,
            parallel: true,
            split,
            transfer: None,
        });
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The morsels of `rows` rows cut by [`morsel_rows`] on `threads` threads.
    fn morsels(rows: usize, threads: usize) -> usize {
        rows.div_ceil(morsel_rows(rows, threads))
    }

    /// Tables of a few thousand rows still give every thread several morsels, large
    /// tables keep morsels of at least 64 rows and at most 65,536, and every row is in a
    /// morsel.
    #[test]
    fn every_thread_gets_several_morsels() {
        // q1 at LUBM-2560 on 16 threads: 2,560 rows.
        assert!(morsels(2_560, 16) >= 16 * MIN_MORSELS_PER_THREAD);
        for threads in [2, 4, 8, 16, 64] {
            for rows in [1_024, 2_000, 2_560, 10_000, 100_000, 10_000_000] {
                let morsel = morsel_rows(rows, threads);
                assert!(morsel >= 1);
                assert!(morsel <= MAX_MORSEL_ROWS);
                assert!(
                    morsels(rows, threads) >= (threads * MIN_MORSELS_PER_THREAD).min(rows),
                    "{rows} rows on {threads} threads: morsels of {morsel}"
                );
                if rows >= threads * MIN_MORSELS_PER_THREAD * MIN_MORSEL_ROWS {
                    assert!(
                        morsel >= MIN_MORSEL_ROWS,
                        "{rows} rows on {threads} threads"
                    );
                }
            }
        }
        assert_eq!(morsel_rows(100_000_000, 16), MAX_MORSEL_ROWS);
        assert_eq!(morsel_rows(3, 16), 1);
    }
}
