//! What one timely worker does with the messages of the exploration dataflow
//! ([`crate::message`]): run a step on its partition and route the rows on, fetch the
//! partner lists of an intersection ([`crate::fetch`]), answer other workers' fetches,
//! and stop a query that was cancelled, ran out of time or out of memory.
//!
//! Each query carries its limits in its plan (the time left when it was asked, its memory
//! budget, the rows a LIMIT asks): a worker builds the query's own state from them on the
//! query's first message, so every step on every worker checks the query's deadline and
//! charges its memory, as the steps of a single store do. The coordinator broadcasts a
//! cancellation when the asker gives up, and a worker drops every later message of that
//! query.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pred};
use quiver_sparql::context::{ExecContext, QueryState};
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::{run_step_bounded, PARALLEL_MIN_ROWS};
use quiver_sparql::memory::{MemoryBudget, MemoryPool};
use quiver_sparql::partitions::{Exchanged, WorkerRole, WorkerStep};
use quiver_sparql::step::Step;
use quiver_sparql::table::Table;
use quiver_store::{GraphIndex, Store};
use rustc_hash::FxHashMap;

use crate::counted::counts_table;
use crate::fetch::{ProcessLists, Stash, Waiting};
use crate::learnt::LearntRecords;
use crate::message::{route, Carried, Failure, Filter, Message, Payload, Plan, PlanCopy};
use crate::pieces::Tally;
use crate::replicas::SharedReplicas;
use crate::route::{count_on, partition_graph, place, source};

mod intersections;

/// A worker's shares of the merges of `FROM` graphs it was asked for lately, by the
/// graphs' names (a store being read-only, a share stays valid).
#[derive(Default)]
struct Merges(Vec<(Vec<Id>, Arc<GraphIndex>)>);

/// Shares of merges a worker keeps.
const MERGES_KEPT: usize = 4;

impl Merges {
    fn share(&mut self, part: &Store, names: &[Id]) -> Arc<GraphIndex> {
        if let Some((_, share)) = self.0.iter().find(|(n, _)| n == names) {
            return Arc::clone(share);
        }
        let share = Arc::new(partition_graph(part, GraphRef::Merged, names).into_owned());
        if self.0.len() == MERGES_KEPT {
            self.0.remove(0);
        }
        self.0.push((names.to_vec(), Arc::clone(&share)));
        share
    }
}

/// The states of the queries a worker saw last, each built from its plan's limits on its
/// first message there, their budgets drawn from the process's memory pool.
struct States {
    kept: VecDeque<(u64, Arc<QueryState>)>,
    pool: Arc<MemoryPool>,
}

/// Query states a worker keeps (queries in flight at once, with room to spare).
const STATES_KEPT: usize = 256;

impl States {
    /// The state of `query`, built from `plan`'s limits on its first message here. The
    /// pool's limit is taken from `plan` only `with_limit` (a cancellation's plan is empty:
    /// it has no limit to give).
    fn of(&mut self, query: u64, plan: &Plan, with_limit: bool) -> Arc<QueryState> {
        if let Some((_, state)) = self.kept.iter().find(|(q, _)| *q == query) {
            return Arc::clone(state);
        }
        let deadline = plan
            .time_left
            .map(|(left, seconds)| (Instant::now() + left, seconds));
        // Every plan carries the coordinator's limit, the same for all.
        if with_limit {
            self.pool.set_limit(plan.max_memory);
        }
        let budget = self.pool.budget();
        let state = Arc::new(QueryState::new(deadline, None, budget, None));
        if self.kept.len() == STATES_KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back((query, Arc::clone(&state)));
        state
    }

    /// Drops `query`'s state (and with it, its memory budget).
    fn forget(&mut self, query: u64) {
        self.kept.retain(|(q, _)| *q != query);
    }
}

/// A worker's partition and what it keeps between messages.
pub(crate) struct Worker {
    part: Store,
    index: u32,
    workers: u32,
    merges: Merges,
    states: States,
    /// Its process's partitions and the partner lists fetched from other processes.
    lists: Arc<ProcessLists>,
    stash: Stash,
    /// This process's replicas (memberships, small predicates), once exchanged.
    replicas: SharedReplicas,
    /// Under a traced plan, the checks the message being handled filtered by them.
    filtered: Vec<WorkerStep>,
    /// Rows (or, answering a fetch, list ids) the message being handled produced, for its
    /// record under a traced plan, and its role when not the one its message says (the
    /// walk of a split intersection, a top-k's first rows read in order).
    produced: u64,
    role: Option<WorkerRole>,
    /// Threads a large step's rows are split over ([`in_morsels`]).
    threads: usize,
    /// The records of other processes this process learnt ([`crate::learnt`]).
    learnt: Arc<LearntRecords>,
}

/// The partner pattern's predicate and direction of a kept intersection, and its source.
fn partner_of(bgp: &Bgp, run: &Step) -> Option<(PredId, quiver_store::Direction, Node)> {
    let (partner, direction) = run.partner?;
    let pattern = &bgp.patterns[partner];
    match pattern.predicate {
        Pred::Const(q) => Some((q, direction, source(pattern, direction))),
        _ => None,
    }
}

impl Worker {
    pub(crate) fn new(
        part: Store,
        index: u32,
        workers: u32,
        pool: Arc<MemoryPool>,
        replicas: SharedReplicas,
    ) -> Self {
        Self {
            replicas,
            filtered: Vec::new(),
            part,
            index,
            workers,
            merges: Merges::default(),
            states: States {
                kept: VecDeque::new(),
                pool,
            },
            lists: Arc::default(),
            stash: Stash::default(),
            produced: 0,
            role: None,
            threads: 1,
            learnt: Arc::default(),
        }
    }

    /// The worker answering walks from `learnt`, its process's records learnt from other
    /// processes ([`crate::learnt`]).
    pub(crate) fn with_learnt(mut self, learnt: Arc<LearntRecords>) -> Self {
        self.learnt = learnt;
        self
    }

    /// The worker reading partner lists from `lists`, its process's partitions and the
    /// lists its process fetched ([`crate::fetch`]).
    pub(crate) fn with_lists(mut self, lists: Arc<ProcessLists>) -> Self {
        self.lists = lists;
        self
    }

    /// The worker with `threads` threads for a large step (its share of the cores).
    pub(crate) fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The memory budget of `query` on this worker, once a message of it was handled here
    /// (what its messages waiting for their windows are charged to).
    pub(crate) fn budget_of(&self, query: u64) -> Option<Arc<MemoryBudget>> {
        let (_, state) = self.states.kept.iter().rev().find(|(q, _)| *q == query)?;
        Some(Arc::clone(state.budget()))
    }

    /// Drops what the worker holds of `query`: rows waiting for partner lists, its state.
    pub(crate) fn forget(&mut self, query: u64) {
        self.stash.forget(query);
        self.states.forget(query);
    }

    /// This worker's share of the merge of `FROM` graphs `plan` reads, if it reads one
    /// ([`read`] gives the graph either way).
    fn share(&mut self, plan: &Plan) -> Option<Arc<GraphIndex>> {
        (plan.graph == GraphRef::Merged).then(|| self.merges.share(&self.part, &plan.merged))
    }

    /// The messages that take a step's rows on to the next step (or its error to the
    /// coordinator).
    fn forward(
        &mut self,
        query: u64,
        step: u32,
        plan: &Arc<Plan>,
        result: Result<(Table, bool), QueryError>,
        truncated: bool,
    ) -> Vec<Message> {
        match result {
            Ok((rows, cut)) => {
                self.produced += rows.rows as u64;
                route(
                    plan,
                    query,
                    step as usize + 1,
                    rows,
                    self.workers,
                    truncated || cut,
                    Filter {
                        replicas: self.replicas.get(),
                        records: &mut self.filtered,
                        terms: Some(&self.part),
                        learnt: Some(&self.learnt),
                    },
                )
            }
            Err(error) => vec![failed(query, plan, error.into())],
        }
    }

    /// Handles one message that is not finished; returns the messages it sends on, what
    /// the hops before them exchanged and their weight, and under a traced plan, what this
    /// worker did (for `message::hand_on`).
    pub(crate) fn handle(
        &mut self,
        message: Message,
    ) -> (Vec<Message>, Carried, Option<WorkerStep>) {
        let record = if message.plan.trace {
            self.record_of(&message)
                .map(|record| (record, Instant::now()))
        } else {
            None
        };
        self.produced = 0;
        self.role = None;
        let (next, mut carried) = self.run(message);
        let filtered = std::mem::take(&mut self.filtered)
            .into_iter()
            .map(|record| WorkerStep {
                worker: self.index,
                ..record
            });
        WorkerStep::add_all(&mut carried.trace, filtered);
        let record = record.map(|(record, started)| WorkerStep {
            role: self.role.unwrap_or(record.role),
            rows_out: self.produced,
            micros: started.elapsed().as_secs_f64() * 1e6,
            ..record
        });
        (next, carried, record)
    }

    /// What handling `message` will be recorded as (its rows out and time once handled;
    /// none for a cancellation).
    fn record_of(&self, message: &Message) -> Option<WorkerStep> {
        let (role, rows_in) = match &message.payload {
            Payload::Rows(rows) => {
                let rows = rows.as_ref().map_or(0, |rows| rows.rows as u64);
                match &message.run {
                    // The check of an intersection split at run time.
                    Some(run) if run.partner.is_none() => (WorkerRole::Checked, rows),
                    _ => (WorkerRole::Ran, rows),
                }
            }
            Payload::Fetch { values, .. } => (WorkerRole::Lent, values.len() as u64),
            // The intersection, once every owner answered (its rows were counted in).
            Payload::Lists { .. } => (WorkerRole::Ran, 0),
            Payload::Cancel | Payload::Forget(_) | Payload::Credit(_) => return None,
        };
        Some(WorkerStep::new(message.step, self.index, role, rows_in))
    }

    /// Handles one message (see [`Self::handle`]).
    fn run(&mut self, message: Message) -> (Vec<Message>, Carried) {
        if let Payload::Forget(queries) = &message.payload {
            for &query in queries {
                self.forget(query);
            }
            return (Vec::new(), Carried::default());
        }
        let cancel = matches!(message.payload, Payload::Cancel);
        let state = self.states.of(message.query, &message.plan, !cancel);
        if cancel {
            state.fail(QueryError::Cancelled);
            // Its rows waiting for lists wait no more: the answers are dropped too.
            self.stash.forget(message.query);
            return (Vec::new(), Carried::default());
        }
        if matches!(state.error(), Some(QueryError::Cancelled)) {
            // Given up by the asker: nothing waits for these rows.
            return (Vec::new(), Carried::default());
        }
        if let Payload::Lists {
            batch,
            lists,
            piece,
        } = message.payload
        {
            return self.lists_arrived(
                &message.plan,
                message.run,
                (batch, piece),
                lists,
                Carried {
                    exchanged: message.exchanged,
                    weight: message.weight,
                    trace: message.trace,
                },
                &state,
            );
        }
        let Message {
            query,
            step,
            plan,
            run,
            payload,
            exchanged,
            truncated,
            weight,
            trace,
            ..
        } = message;
        let next = match payload {
            Payload::Rows(rows) => {
                let rows =
                    rows.and_then(|rows| state.check().map(|()| rows).map_err(Failure::from));
                match (rows, run) {
                    (Ok(rows), Some(run)) if run.partner.is_some() => {
                        let waiting = Waiting {
                            query,
                            step,
                            run,
                            plan,
                            rows,
                            carried: Carried {
                                exchanged: Exchanged::default(),
                                weight: Some(0),
                                trace: Vec::new(),
                            },
                            truncated,
                            answers: 0,
                            tally: Tally::default(),
                            lists: FxHashMap::default(),
                        };
                        self.fetch(waiting, &state)
                    }
                    (Ok(rows), run) => {
                        self.advance(query, step, &plan, run, rows, truncated, &state)
                    }
                    (Err(error), _) => vec![failed(query, &plan, error)],
                }
            }
            Payload::Fetch {
                batch,
                from,
                values,
            } => self.answer_fetch(query, step, &plan, run, batch, from, values),
            Payload::Lists { .. } | Payload::Cancel | Payload::Forget(_) | Payload::Credit(_) => {
                Vec::new()
            }
        };
        (
            next,
            Carried {
                exchanged,
                weight,
                trace,
            },
        )
    }

    /// Runs the plain step `step` of `plan` (or `run`, the check of an intersection split
    /// at run time) over `rows` and routes its rows on.
    #[allow(clippy::too_many_arguments)]
    fn advance(
        &mut self,
        query: u64,
        step: u32,
        plan: &Arc<Plan>,
        run: Option<Step>,
        rows: Table,
        truncated: bool,
        state: &QueryState,
    ) -> Vec<Message> {
        let share = self.share(plan);
        let part = &self.part;
        // Past the last step: a FILTER (NOT) EXISTS of one edge, at the rows' owner.
        let check = (step as usize)
            .checked_sub(plan.steps.len())
            .and_then(|c| plan.checks.get(c));
        if let Some(check) = check {
            let rows = check.keep(read(part, &share, plan), rows);
            self.role = Some(WorkerRole::Checked);
            return self.forward(query, step, plan, Ok((rows, false)), truncated);
        }
        if step == 0 && run.is_none() && plan.top.is_some() {
            let ctx = context(part, read(part, &share, plan), state);
            match crate::top_scan::first_rows(&ctx, plan, &rows) {
                // The pattern's rows this worker sends for the top-k: past the last step.
                Ok(Some(first)) => {
                    self.role = Some(WorkerRole::Ordered);
                    let last = plan.steps.len().saturating_sub(1) as u32;
                    return self.forward(query, last, plan, Ok((first, false)), truncated);
                }
                Ok(None) => {}
                Err(error) => return self.forward(query, step, plan, Err(error), truncated),
            }
        }
        let result = if let Some(aggregate) = &plan.aggregate {
            count_on(part, aggregate, &plan.merged, state)
                .map(|counts| (counts_table(counts, aggregate.key.is_some()), false))
        } else {
            let planned = run.as_ref().unwrap_or(&plan.steps[step as usize]);
            let (_, planned) = place(&plan.bgp, planned, &rows, plan.rdf_type, &plan.classes);
            let ctx = context(part, read(part, &share, plan), state);
            in_morsels(self.threads, &rows, plan.cap(), |rows| {
                run_step_bounded(&ctx, &plan.bgp, &planned, rows, plan.cap())
            })
        };
        self.forward(query, step, plan, result, truncated)
    }
}

/// `step` over `rows`, cut into morsels run on the worker's `threads` threads when they
/// are many (`PARALLEL_MIN_ROWS`, as the single store's exploration splits its rows): the
/// morsels' rows in order, at most `cap` of them, and whether some stopped at the cap. A
/// process with one worker on many cores thus runs a heavy step on all of them.
fn in_morsels(
    threads: usize,
    rows: &Table,
    cap: usize,
    step: impl Fn(&Table) -> Result<(Table, bool), QueryError> + Sync,
) -> Result<(Table, bool), QueryError> {
    use rayon::prelude::*;
    if threads <= 1 || rows.rows < PARALLEL_MIN_ROWS {
        return step(rows);
    }
    let morsel = (rows.rows / (threads * 8)).max(PARALLEL_MIN_ROWS / 8);
    let starts: Vec<usize> = (0..rows.rows).step_by(morsel).collect();
    let parts = starts
        .into_par_iter()
        .map(|start| step(&rows.slice(start, (start + morsel).min(rows.rows))))
        .collect::<Result<Vec<(Table, bool)>, QueryError>>()?;
    let stopped = parts.iter().any(|(_, truncated)| *truncated);
    let table = Table::concat(parts.into_iter().map(|(table, _)| table).collect());
    if table.rows > cap {
        return Ok((table.slice(0, cap), true));
    }
    Ok((table, stopped))
}

/// The graph `plan` reads on `part`: the partition's own, or `share`, its share of a merge.
fn read<'a>(part: &'a Store, share: &'a Option<Arc<GraphIndex>>, plan: &Plan) -> &'a GraphIndex {
    share
        .as_deref()
        .unwrap_or_else(|| graph_index(part, plan.graph))
}

/// A step's context on a worker: its partition, the graph read, one thread, no device.
fn context<'a>(part: &'a Store, graph: &'a GraphIndex, state: &'a QueryState) -> ExecContext<'a> {
    ExecContext {
        store: part,
        graph,
        threads: 1,
        state,
        device: None,
    }
}

/// The message that takes a worker's error to the coordinator.
fn failed(query: u64, plan: &Arc<Plan>, error: Failure) -> Message {
    Message {
        query,
        step: plan.finish() as u32,
        to: plan.coordinator,
        from: 0,
        plan: Arc::clone(plan),
        plan_copy: PlanCopy::Sent,
        run: None,
        payload: Payload::Rows(Err(error)),
        exchanged: Exchanged::default(),
        weight: None,
        truncated: false,
        trace: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::intersections::fetch_pieces;
    use super::*;
    use crate::message::PIECE_BYTES;
    use quiver_sparql::step::StepKind;

    fn message(query: u64, plan: Plan, payload: Payload) -> Message {
        Message {
            query,
            step: 0,
            to: 0,
            from: 0,
            plan: Arc::new(plan),
            plan_copy: PlanCopy::Sent,
            run: None,
            payload,
            exchanged: Exchanged::default(),
            truncated: false,
            weight: None,
            trace: Vec::new(),
        }
    }

    /// The values a worker asks of an owner go in pieces within bounds, every value once,
    /// in order.
    #[test]
    fn a_fetch_of_many_values_goes_in_pieces() {
        let asks = vec![(1, (0..200_000).collect::<Vec<Id>>()), (2, vec![5, 6])];
        let pieces = fetch_pieces(asks.clone());
        assert!(pieces.len() > 3, "{} pieces", pieces.len());
        assert!(pieces
            .iter()
            .all(|(_, values)| values.len() * std::mem::size_of::<Id>() <= PIECE_BYTES));
        for (to, values) in asks {
            let sent: Vec<Id> = pieces
                .iter()
                .filter(|(owner, _)| *owner == to)
                .flat_map(|(_, piece)| piece.iter().copied())
                .collect();
            assert_eq!(sent, values);
        }
    }

    /// A large step split into morsels over threads gives the rows of one run over all,
    /// in order, and a cap still bounds them.
    #[test]
    fn morsels_give_the_rows_of_one_run() {
        let rows = 10_000;
        let table = Table {
            vars: vec![0],
            columns: vec![(0..rows as Id).collect()],
            rows,
        };
        // A step keeping the even values, each twice.
        let step = |rows: &Table| -> Result<(Table, bool), QueryError> {
            let kept: Vec<Id> = rows.columns[0]
                .iter()
                .filter(|&&v| v % 2 == 0)
                .flat_map(|&v| [v, v])
                .collect();
            let count = kept.len();
            Ok((
                Table {
                    vars: vec![0],
                    columns: vec![kept],
                    rows: count,
                },
                false,
            ))
        };
        let (whole, _) = step(&table).unwrap();
        for threads in [1, 2, 7] {
            let (split, truncated) = in_morsels(threads, &table, usize::MAX, step).unwrap();
            assert_eq!(split, whole, "{threads} threads");
            assert!(!truncated);
            let (capped, truncated) = in_morsels(threads, &table, 100, step).unwrap();
            if threads > 1 {
                assert_eq!(capped, whole.slice(0, 100));
                assert!(truncated);
            }
        }
    }

    /// A fetch of lists of megabytes is answered in pieces within bounds, each list
    /// whole, in order, the pieces numbered.
    #[test]
    fn a_fetch_of_large_lists_is_answered_in_pieces() {
        use oxrdf::{GraphName, NamedNode, Quad};
        use quiver_store::Direction;
        let iri = |s: String| NamedNode::new(s).unwrap();
        let p = iri("http://ex/p".into());
        // Three hubs of 100,000 neighbours each (400 KB a list).
        let quads: Vec<Quad> = (0..3)
            .flat_map(|h| {
                let hub = iri(format!("http://ex/hub{h}"));
                let p = p.clone();
                (0..100_000).map(move |n| {
                    let to = iri(format!("http://ex/n{n}"));
                    Quad::new(hub.clone(), p.clone(), to, GraphName::DefaultGraph)
                })
            })
            .collect();
        let (store, _) = quiver_loader::load_quads(quads, None).unwrap();
        let predicate = store.predicate_id("http://ex/p").unwrap();
        let hubs: Vec<Id> = (0..3)
            .map(|h| store.iri_id(&format!("http://ex/hub{h}")).unwrap())
            .collect();
        let pattern = |subject, object| quiver_sparql::bgp::Pattern {
            subject,
            predicate: Pred::Const(predicate),
            object,
            text: String::new(),
        };
        // The walk ?a p ?x, its partner ?b p ?x: the lists fetched are ?b's.
        let plan = Plan {
            bgp: Bgp {
                patterns: vec![
                    pattern(Node::Var(0), Node::Var(2)),
                    pattern(Node::Var(1), Node::Var(2)),
                ],
                equalities: Vec::new(),
            },
            ..Plan::empty()
        };
        let mut run = Step::new(0, StepKind::Walk(Direction::Out), 1.0);
        run.partner = Some((1, Direction::Out));
        let mut worker = Worker::new(store.clone(), 0, 2, MemoryPool::new(None), Arc::default());
        let fetch = Payload::Fetch {
            batch: 5,
            from: 1,
            values: hubs.clone(),
        };
        let (answers, ..) = worker.handle(Message {
            run: Some(run),
            ..message(1, plan, fetch)
        });
        assert!(answers.len() >= 3, "{} pieces", answers.len());
        let mut lists = Vec::new();
        for (at, answer) in answers.iter().enumerate() {
            assert_eq!(answer.to, 1);
            let Payload::Lists {
                batch,
                lists: piece,
                piece: place,
            } = &answer.payload
            else {
                panic!("{:?}", answer.payload);
            };
            assert_eq!((place.at as usize, place.of as usize), (at, answers.len()));
            assert_eq!(*batch, 5);
            let ids: usize = piece.iter().map(|(_, l)| l.len() + 1).sum();
            assert!(ids * 4 <= PIECE_BYTES || piece.len() == 1);
            lists.extend(piece.iter().cloned());
        }
        let values: Vec<Id> = lists.iter().map(|(v, _)| *v).collect();
        assert_eq!(values, hubs);
        for (hub, list) in &lists {
            assert_eq!(
                list.as_slice(),
                store.graph().get(*hub, predicate, Direction::Out)
            );
        }
    }

    #[test]
    fn a_cancellation_of_a_query_never_seen_leaves_the_pools_limit() {
        let pool = MemoryPool::new(None);
        let mut worker = Worker::new(Store::default(), 0, 1, Arc::clone(&pool), Arc::default());
        let limited = Plan {
            max_memory: Some(1 << 20),
            ..Plan::empty()
        };
        // A query's first message here (a fetch of no lists) sets the limit its plan carries.
        let fetch = Payload::Fetch {
            batch: 0,
            from: 0,
            values: Vec::new(),
        };
        worker.handle(message(1, limited, fetch));
        assert_eq!(pool.limit(), Some(1 << 20));
        // Its cancellation, or another query's this worker never saw, carries no plan.
        worker.handle(message(2, Plan::empty(), Payload::Cancel));
        assert_eq!(pool.limit(), Some(1 << 20));
        // And the queries over are forgotten, states and all.
        worker.handle(message(0, Plan::empty(), Payload::Forget(vec![1, 2])));
        assert!(worker.states.kept.is_empty());
    }
}
