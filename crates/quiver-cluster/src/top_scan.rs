//! A top-k over one pattern `?s p ?o` in the order of `?o` (`ORDER BY ?e LIMIT 100` over a
//! predicate's pairs, or `DESC(?e)`), read by each worker in object order, as the single
//! store reads it (`quiver_sparql::exec::ordered_scan`): the predicate's objects a
//! partition holds the records of are sorted by id, and ids of a whole store's sorted
//! dictionary sort as their terms do, so the first (or last) objects' rows hold the
//! partition's first rows of the order.
//! A worker then sends those rows (every row of its first objects until it has `k`, and
//! of every object appended after the sort) straight to the coordinator, instead of
//! walking all of the predicate's pairs to cut them afterwards. Where it cannot read them
//! so (fewer than `k` such rows) it sends every row of the objects it
//! holds: all workers take the same path for a plan, so that their rows are those of the
//! objects each holds, each row once (rows of the subjects each holds, as the plan's steps
//! give, would overlap them). A share of a dictionary, whose ids do not sort, has no cut
//! asked of it.
//!
//! In the order of `?s` (over `?s p ?o` or `?s ?p ?o`), a worker reads its first subjects
//! the same way (`subject_order_candidates`): a partition holds every edge out of the
//! subjects it owns, so each row comes from one worker; where it finds fewer than `k` rows
//! in order, it sends every edge out of the subjects it owns.

use quiver_model::PredId;
use quiver_sparql::bgp::{Node, Pred};
use quiver_sparql::context::ExecContext;
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::run_step;
use quiver_sparql::exec::ordered_scan::{object_order_candidates, subject_order_candidates, Ties};
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::Table;
use quiver_store::Direction;

use crate::message::Plan;

/// The rows this worker sends for `plan`'s top-k from the start of its run (`rows`: the
/// pattern's input, one row binding nothing), read in object order from `ctx`'s graph;
/// `None` where the plan is not that shape or the order cannot be read there.
pub(crate) fn first_rows(
    ctx: &ExecContext<'_>,
    plan: &Plan,
    rows: &Table,
) -> Result<Option<Table>, QueryError> {
    let Some(top) = &plan.top else {
        return Ok(None);
    };
    if let Some(subjects) = subject_order(plan) {
        return first_rows_by_subject(ctx, plan, rows, subjects);
    }
    let Some(predicate) = object_order(plan) else {
        return Ok(None);
    };
    if rows.rows != 1 || !rows.vars.is_empty() || top.k == 0 {
        return Ok(None);
    }
    let pattern = &plan.bgp.patterns[0];
    let (Node::Var(subject), Node::Var(object)) = (pattern.subject, pattern.object) else {
        return Ok(None);
    };
    // The columns in the order the plan's steps bind them, as the other workers' rows
    // have them (the coordinator puts every worker's rows together column by column).
    let subject_first = match plan.steps.first().map(|step| step.kind) {
        Some(StepKind::Index(Direction::In)) => true,
        Some(StepKind::Index(Direction::Out)) => false,
        _ => return Ok(None),
    };
    let descending = top.keys[0].1;
    let table = match object_order_candidates(ctx, predicate, (top.k, ties(top)), descending)? {
        Some(candidates) => candidates.into_table(subject, object),
        // Fewer rows in order here than `k`: every row of the
        // objects it holds. Every worker sends rows of the objects it holds (where it
        // holds their records), never rows of the subjects as the steps would, so that
        // together they send each row once.
        None => {
            let pattern = 0;
            let objects = Step::new(pattern, StepKind::Index(Direction::Out), 0.0);
            let subjects = Step::new(pattern, StepKind::Walk(Direction::In), 0.0);
            let objects = run_step(ctx, &plan.bgp, &objects, rows)?;
            run_step(ctx, &plan.bgp, &subjects, &objects)?
        }
    };
    Ok(Some(match subject_first {
        true => table.into_reshape(&[subject, object]),
        false => table.into_reshape(&[object, subject]),
    }))
}

/// Which rows tied on the last value read a worker sends: with one key, only those its `k`
/// still need (each worker's first `k` rows hold the order's first `k`, ties being any).
fn ties(top: &quiver_sparql::top_rows::TopRows) -> Ties {
    match top.keys.len() {
        1 => Ties::Any,
        _ => Ties::All,
    }
}

/// The predicate of `plan`'s one pattern `?s p ?o` when its top-k orders by `?o` first
/// (ascending or descending). Not `rdf:type`, whose objects' records (the classes'
/// instances) a partition holds for the instances it owns, not by class.
fn object_order(plan: &Plan) -> Option<PredId> {
    let top = plan.top.as_ref()?;
    if plan.aggregate.is_some() || !plan.bgp.equalities.is_empty() {
        return None;
    }
    let [pattern] = plan.bgp.patterns.as_slice() else {
        return None;
    };
    let (Node::Var(subject), Pred::Const(predicate), Node::Var(object)) =
        (pattern.subject, pattern.predicate, pattern.object)
    else {
        return None;
    };
    (subject != object
        && top.keys.first().is_some_and(|&(var, _)| var == object)
        && Some(predicate) != plan.rdf_type)
        .then_some(predicate)
}

/// The pattern `?s p ?o` (`p` a constant) or `?s ?p ?o` of `plan`, whose top-k orders by
/// `?s` first: its subject, predicate and object.
#[derive(Clone, Copy)]
struct BySubject {
    subject: quiver_sparql::table::VarId,
    predicate: Pred,
    object: quiver_sparql::table::VarId,
}

fn subject_order(plan: &Plan) -> Option<BySubject> {
    let top = plan.top.as_ref()?;
    if plan.aggregate.is_some() || !plan.bgp.equalities.is_empty() {
        return None;
    }
    let [pattern] = plan.bgp.patterns.as_slice() else {
        return None;
    };
    let (Node::Var(subject), Node::Var(object)) = (pattern.subject, pattern.object) else {
        return None;
    };
    let distinct = match pattern.predicate {
        Pred::Const(_) => subject != object,
        Pred::Var(p) => subject != object && p != subject && p != object,
        Pred::Absent => false,
    };
    (distinct && top.keys.first().is_some_and(|&(var, _)| var == subject)).then_some(BySubject {
        subject,
        predicate: pattern.predicate,
        object,
    })
}

/// [`first_rows`] in the order of the subject: the edges out of this partition's first
/// subjects, in the columns the plan's first step binds.
fn first_rows_by_subject(
    ctx: &ExecContext<'_>,
    plan: &Plan,
    rows: &Table,
    by: BySubject,
) -> Result<Option<Table>, QueryError> {
    let Some(top) = &plan.top else {
        return Ok(None);
    };
    if rows.rows != 1 || !rows.vars.is_empty() || top.k == 0 {
        return Ok(None);
    }
    let (predicate, columns) = match (by.predicate, plan.steps.first().map(|step| step.kind)) {
        (Pred::Const(p), Some(StepKind::Index(Direction::In))) => {
            (Some(p), vec![by.subject, by.object])
        }
        (Pred::Const(p), Some(StepKind::Index(Direction::Out))) => {
            (Some(p), vec![by.object, by.subject])
        }
        (Pred::Var(p), Some(StepKind::Scan)) => (None, vec![by.subject, p, by.object]),
        _ => return Ok(None),
    };
    let descending = top.keys[0].1;
    let table = match subject_order_candidates(ctx, predicate, (top.k, ties(top)), descending)? {
        Some(candidates) => {
            let predicates: Vec<_> = match by.predicate {
                Pred::Var(_) => candidates
                    .predicates
                    .iter()
                    .map(|&p| ctx.store.predicate_term(p))
                    .collect(),
                _ => Vec::new(),
            };
            let mut table = candidates.into_table(by.subject, by.object);
            if let Pred::Var(p) = by.predicate {
                table.set_column(p, predicates);
            }
            table
        }
        // Fewer rows in order here than `k`: every edge out of the subjects it owns, as
        // the other workers' candidates are.
        None => match by.predicate {
            Pred::Var(_) => run_step(ctx, &plan.bgp, &Step::new(0, StepKind::Scan, 0.0), rows)?,
            _ => {
                let subjects = Step::new(0, StepKind::Index(Direction::In), 0.0);
                let objects = Step::new(0, StepKind::Walk(Direction::Out), 0.0);
                let subjects = run_step(ctx, &plan.bgp, &subjects, rows)?;
                run_step(ctx, &plan.bgp, &objects, &subjects)?
            }
        },
    };
    Ok(Some(table.into_reshape(&columns)))
}
