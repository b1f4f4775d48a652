//! Where a step's rows go next: the messages that carry them to the workers where the step
//! runs ([`route`]), after what can be done where they are (steps over the classes, checks
//! against this process's replicas and learnt records, a top-k's cut, the coordinator's
//! columns only past the last step), or to the owners of a node's values ([`to_owners`]).

use std::sync::Arc;

use quiver_sparql::bgp::Node;
use quiver_sparql::partitions::{Exchanged, PassingIds, WorkerRole, WorkerStep};
use quiver_sparql::step::Step;
use quiver_sparql::table::Table;

use crate::counted::{count_if_smaller, distinct_if_smaller};
use crate::learnt::{LearntRecords, PlanStep, Recalled};
use crate::replicas::{Answered, Replicas};
use crate::route::{by_owner, orient, place, sole_owner, with_classes, Placement};

use super::{Message, Payload, Plan, PlanCopy};

/// What a route can check rows against where they are, and where it records those checks
/// under a traced plan (with worker 0: the caller names the worker).
pub(crate) struct Filter<'a> {
    /// This process's replicas (`rdf:type` memberships, small predicates), if it holds
    /// them.
    pub replicas: Option<&'a Replicas>,
    pub records: &'a mut Vec<WorkerStep>,
    /// This worker's partition, whose dictionary (a copy of the whole store's, in a store
    /// cut into partitions) ranks a top-k's keys by their terms ([`TopRows::cut_with_terms`]).
    pub terms: Option<&'a quiver_store::Store>,
    /// The records of other processes this process learnt from light queries' answers.
    pub learnt: Option<&'a LearntRecords>,
}

/// The messages that carry `rows`, at step `step` of `plan`, to where that step runs:
/// steps over the classes, and with this process's replicas (`replicas`), checks of
/// `rdf:type` and walks of the replicated predicates (recorded under a traced plan), run
/// here first, and rows past the
/// last step go to the query's coordinator (with the columns it reads only, a top-k's
/// first rows only, counted where asked). Empty rows travel to one worker only, so that
/// the end still learns their columns. A count read from the index goes to every worker.
pub(crate) fn route(
    plan: &Arc<Plan>,
    query: u64,
    mut step: usize,
    mut rows: Table,
    workers: u32,
    truncated: bool,
    filter: Filter<'_>,
) -> Vec<Message> {
    let Filter {
        replicas,
        records,
        terms,
        learnt,
    } = filter;
    let message = |step: usize, to: u32, run: Option<Step>, rows: Table| Message {
        query,
        step: step as u32,
        to,
        from: 0,
        plan: Arc::clone(plan),
        plan_copy: PlanCopy::Sent,
        run,
        payload: Payload::Rows(Ok(rows)),
        exchanged: Exchanged::default(),
        weight: None,
        truncated,
        trace: Vec::new(),
    };
    if !plan.passes.is_empty() {
        rows = PassingIds::keep_all(&plan.passes, rows);
    }
    if plan.aggregate.is_some() && step == 0 {
        return (0..workers)
            .map(|to| message(0, to, None, rows.clone()))
            .collect();
    }
    loop {
        let Some(planned) = plan.steps.get(step) else {
            if let Some(check) = plan.checks.get(step - plan.steps.len()) {
                return to_owners(
                    rows,
                    Node::Var(check.var),
                    workers,
                    plan.coordinator,
                    |to, part| message(step, to, None, part),
                );
            }
            // Cut before the columns are dropped: the order's keys are among the pattern's.
            let rows = match (&plan.top, terms) {
                (Some(top), Some(store)) => top.cut_with_terms(rows, store),
                (Some(top), None) => top.cut(rows),
                (None, _) => rows,
            };
            let rows = match &plan.keep {
                Some(keep) => rows.into_reshape(keep),
                None => rows,
            };
            let rows = match (&plan.count_by, &plan.extremes) {
                (Some(keys), Some(extremes)) => {
                    let rows = match terms {
                        Some(store) => extremes.narrow_with_terms(rows, keys, store),
                        None => extremes.narrow(rows, keys),
                    };
                    count_if_smaller(rows, keys)
                }
                (Some(keys), None) if plan.distinct_only => distinct_if_smaller(rows, keys),
                (Some(keys), None) => count_if_smaller(rows, keys),
                (None, _) => rows,
            };
            return vec![message(step, plan.coordinator, None, rows)];
        };
        let started = plan.trace.then(std::time::Instant::now);
        // Answered where the rows are, from the replicas or the records learnt: the role
        // it is traced as, and whether it gave the rows a new column.
        let replicated = replicas.and_then(|replicas| {
            let (rows, how) = crate::replicas::answer(
                replicas,
                &plan.bgp,
                planned,
                plan.graph,
                plan.rdf_type,
                &rows,
            )?;
            let role = match how {
                Answered::Typed => (WorkerRole::Typed, false),
                Answered::Checked => (WorkerRole::Filtered, false),
                Answered::Walked => (WorkerRole::WalkedHere, true),
            };
            Some((rows, role))
        });
        let answered = replicated.or_else(|| {
            let (rows, how) = learnt?.answer(
                PlanStep {
                    bgp: &plan.bgp,
                    step: planned,
                    graph: plan.graph,
                    rdf_type: plan.rdf_type,
                    classes: &plan.classes,
                },
                &rows,
            )?;
            Some((rows, (WorkerRole::Recalled, how == Recalled::Walked)))
        });
        if let Some((answered, (role, walked))) = answered {
            if let Some(started) = started {
                // The worker is filled in by the caller, which knows it.
                records.push(WorkerStep {
                    rows_out: answered.rows as u64,
                    micros: started.elapsed().as_secs_f64() * 1e6,
                    ..WorkerStep::new(step as u32, 0, role, rows.rows as u64)
                });
            }
            // A walk's new column may be one the FILTER's passing ids decide.
            rows = match walked && !plan.passes.is_empty() {
                true => PassingIds::keep_all(&plan.passes, answered),
                false => answered,
            };
            step += 1;
            continue;
        }
        let run = planned.partner.map(|_| orient(&plan.bgp, planned, &rows));
        match place(
            &plan.bgp,
            run.as_ref().unwrap_or(planned),
            &rows,
            plan.rdf_type,
            &plan.classes,
        )
        .0
        {
            Placement::Classes => {
                rows = with_classes(&plan.bgp, planned, &rows, &plan.classes);
                step += 1;
            }
            Placement::Owner(node) => {
                return to_owners(rows, node, workers, plan.coordinator, |to, part| {
                    message(step, to, run, part)
                })
            }
            Placement::Everywhere if rows.rows == 0 => {
                return vec![message(step, plan.coordinator, run, rows)]
            }
            Placement::Everywhere => {
                return (0..workers)
                    .map(|to| message(step, to, run, rows.clone()))
                    .collect();
            }
        }
    }
}

/// The messages that carry `rows` to the owners of `node`'s values (`message` makes one,
/// for a worker and its rows); rows without one go to the query's coordinator, empty, so
/// that the end still learns their columns.
pub(crate) fn to_owners(
    rows: Table,
    node: Node,
    workers: u32,
    coordinator: u32,
    message: impl Fn(u32, Table) -> Message,
) -> Vec<Message> {
    if let Some(to) = sole_owner(&rows, node, workers) {
        return vec![message(to, rows)];
    }
    let mut messages: Vec<Message> = by_owner(&rows, node, workers)
        .into_iter()
        .enumerate()
        .filter(|(_, part)| part.rows > 0)
        .map(|(to, part)| message(to as u32, part))
        .collect();
    if messages.is_empty() {
        messages.push(message(coordinator, rows));
    }
    messages
}
