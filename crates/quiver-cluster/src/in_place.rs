//! Light queries in place (Wukong's in-place execution): the thread that asks a query runs
//! the steps whose rows stay on this process's partitions itself, with no message, no
//! handoff to the coordinator's thread and no round of timely's progress. A query that
//! starts at a constant this process owns, and whose rows stay here, is answered in the
//! time of its steps.
//!
//! The moment rows would leave the process, or grow past a light query's size, what is in
//! flight is handed on as it stands: the messages already routed, with their shares of the
//! query's weight ([`crate::message::WEIGHT`]), so that nothing is run twice and whoever
//! takes them ends the query by its weights. Light rows for another process go there over
//! a connection of their own ([`crate::direct`]), where they run in place again; the rest
//! go to the dataflow, so heavy steps still run on the workers, in parallel.

use std::sync::{Arc, Mutex};

use quiver_model::Id;
use quiver_sparql::context::QueryState;
use quiver_sparql::error::QueryError;
use quiver_sparql::memory::MemoryPool;
use quiver_store::Store;
use rustc_hash::FxHashSet;

use crate::fetch::ProcessLists;
use crate::learnt::{LearntRecords, PlanStep, RecordsRead};
use crate::message::{hand_on, Message, Payload, Wanted};
use crate::replicas::SharedReplicas;
use crate::route::IN_PLACE_ROWS;
use crate::worker::Worker;

/// The most messages handled in place before the rest go to the dataflow: a light
/// query's steps, several times over.
const MESSAGES: usize = 64;

/// Sets of workers kept for the asking threads (queries asked at once, at most).
const KEPT: usize = 8;

/// This process's partitions, for the asking threads, and the workers that ran on them
/// (kept for what they learnt: the partner lists they fetched, as the dataflow's do).
pub(crate) struct LocalParts {
    /// The first worker of this process (its partitions are `first..first + parts.len()`).
    first: u32,
    parts: Vec<Store>,
    /// Workers in the whole cluster.
    workers: u32,
    idle: Mutex<Vec<Vec<Option<Worker>>>>,
    pool: Arc<MemoryPool>,
    replicas: SharedReplicas,
    learnt: Arc<LearntRecords>,
    lists: Arc<ProcessLists>,
}

/// How a query's run in place ended, and the messages handled here on the way.
pub(crate) enum InPlace {
    /// Every message reached the end here, or enough rows for the plan's LIMIT did
    /// ([`Enough::Stopped`]): the finished messages, for the coordinator's bookkeeping
    /// ([`crate::dataflow`]'s `Arrival`).
    Done(Vec<Message>, usize, Enough),
    /// The messages for the dataflow (the finished ones among them), weights intact.
    HandOff(Vec<Message>, usize),
}

impl InPlace {
    /// The run, counting `handled` messages handled before it.
    pub(crate) fn handled_before(self, handled: usize) -> Self {
        match self {
            InPlace::Done(finished, ran, enough) => InPlace::Done(finished, ran + handled, enough),
            InPlace::HandOff(messages, ran) => InPlace::HandOff(messages, ran + handled),
        }
    }
}

/// What the finished messages of a run in place brought, toward its plan's [`Wanted`].
#[derive(Default)]
struct Found {
    rows: u64,
    keys: FxHashSet<Id>,
}

impl Found {
    /// Adds what finished `message` brought; whether the run has what it wants.
    fn meets(&mut self, message: &Message, wanted: Wanted) -> bool {
        match (wanted, &message.payload) {
            (Wanted::Rows(rows), payload) => {
                self.rows += payload.rows();
                self.rows >= rows
            }
            (Wanted::Keys(keys), Payload::Rows(Ok(table))) => {
                if let Some(column) = table.columns.first() {
                    self.keys.extend(column.iter().copied());
                }
                self.keys.len() as u64 >= keys
            }
            (Wanted::Keys(_), _) => false,
        }
    }
}

/// What a run in place does with a message for another process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Aside {
    /// Sets it aside and goes on with this process's messages: where the messages set
    /// aside go on at once ([`crate::direct`]: the asker runs this process's share while
    /// the others run theirs), or under a LIMIT that any rows meet (the other processes
    /// may never hear of the query).
    Always,
    /// Hands everything on at once, unless under such a LIMIT: the dataflow's workers of
    /// every process then start together.
    UnderLimit,
}

/// Whether a run in place handled every message of its query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enough {
    /// Every message reached its end.
    All,
    /// The rows found reached the plan's LIMIT ([`crate::message::Plan::wanted`]) first:
    /// the messages left (another process's among them) were dropped, unrun, and more
    /// rows may exist.
    Stopped,
}

impl LocalParts {
    pub(crate) fn new(
        first: u32,
        parts: Vec<Store>,
        workers: u32,
        replicas: SharedReplicas,
        learnt: Arc<LearntRecords>,
        lists: Arc<ProcessLists>,
    ) -> Self {
        Self {
            first,
            parts,
            workers,
            idle: Mutex::default(),
            pool: MemoryPool::new(None),
            replicas,
            learnt,
            lists,
        }
    }

    /// The partner lists this process's workers read and fetched ([`crate::fetch`]).
    pub(crate) fn lists(&self) -> &ProcessLists {
        &self.lists
    }

    /// The records of other processes this process learnt ([`crate::learnt`]).
    pub(crate) fn learnt(&self) -> &LearntRecords {
        &self.learnt
    }

    /// The worker index of `to` among this process's partitions, if it is one.
    fn local(&self, to: u32) -> Option<usize> {
        let at = to.checked_sub(self.first)? as usize;
        (at < self.parts.len()).then_some(at)
    }

    /// Whether worker `to` is one of this process's.
    pub(crate) fn holds(&self, to: u32) -> bool {
        self.local(to).is_some()
    }

    /// The worker that owns `vertex`'s records.
    pub(crate) fn owner(&self, vertex: Id) -> u32 {
        quiver_store::partition::owner(vertex, self.workers)
    }

    /// Worker `to`'s partition, if it is one of this process's.
    pub(crate) fn part(&self, to: u32) -> Option<&Store> {
        self.local(to).map(|at| &self.parts[at])
    }

    /// The process that serves worker `to` (every process serves as many workers).
    pub(crate) fn process_of(&self, to: u32) -> usize {
        (to / self.parts.len().max(1) as u32) as usize
    }

    /// A query's state for a run asked by another process ([`crate::direct`]): its
    /// deadline from the time the plan says is left, its memory drawn from the pool of
    /// the runs in place.
    pub(crate) fn state_for(&self, plan: &crate::message::Plan) -> QueryState {
        let deadline = plan
            .time_left
            .map(|(left, seconds)| (std::time::Instant::now() + left, seconds));
        QueryState::new(deadline, None, self.pool.budget(), None)
    }

    /// Runs `messages` (a query's, routed and weighed) here while every one that is not
    /// finished carries few rows; those for another process are handed on unrun, as
    /// `aside` says.
    pub(crate) fn run(
        &self,
        messages: Vec<Message>,
        state: &QueryState,
        aside: Aside,
    ) -> Result<InPlace, QueryError> {
        self.run_reading(messages, state, aside, None)
    }

    /// [`Self::run`], taking into `read` the records the walks read here, for another
    /// process that asked the run ([`crate::learnt`]).
    pub(crate) fn run_reading(
        &self,
        messages: Vec<Message>,
        state: &QueryState,
        aside: Aside,
        read: Option<&mut RecordsRead>,
    ) -> Result<InPlace, QueryError> {
        let query = messages.first().map(|m| m.query);
        // Workers of this thread, each built on the first message its partition handles.
        let mut workers = self
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_else(|| (0..self.parts.len()).map(|_| None).collect());
        let ran = self.run_with(&mut workers, messages, state, aside, read);
        // Rows a handed-off query left waiting for lists wait no more.
        for worker in workers.iter_mut().flatten() {
            if let Some(query) = query {
                worker.forget(query);
            }
        }
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEPT {
            idle.push(workers);
        }
        ran
    }

    fn run_with(
        &self,
        workers: &mut [Option<Worker>],
        mut messages: Vec<Message>,
        state: &QueryState,
        aside_mode: Aside,
        mut read: Option<&mut RecordsRead>,
    ) -> Result<InPlace, QueryError> {
        let mut finished = Vec::new();
        let mut handled = 0;
        // Under a LIMIT that any rows meet, this process's partitions run first, the
        // messages for another process set aside: once the rows found here meet it, the
        // other processes never hear of the query (`SELECT * { ?s ?p ?o } LIMIT 10` is
        // answered without a round trip). Otherwise those messages are handed on with the
        // rest, their weights intact, so nothing runs twice.
        let wanted = messages.first().and_then(|m| m.plan.wanted());
        let (mut aside, mut found) = (Vec::new(), Found::default());
        // Fetches and their answers first: rows waiting for lists in a worker of this
        // thread must not be left there by a handoff (the dataflow's worker would drop the
        // answers). They all go to this process's partitions (see `leaves`).
        let next = |messages: &mut Vec<Message>| match messages
            .iter()
            .position(|m| !matches!(m.payload, Payload::Rows(_)))
        {
            Some(at) => Some(messages.swap_remove(at)),
            None => messages.pop(),
        };
        while let Some(message) = next(&mut messages) {
            if message.is_finished() {
                let met = wanted.is_some_and(|wanted| found.meets(&message, wanted));
                finished.push(message);
                if met {
                    return Ok(InPlace::Done(finished, handled, Enough::Stopped));
                }
                continue;
            }
            let rows = matches!(message.payload, Payload::Rows(_));
            let set_aside = aside_mode == Aside::Always || wanted.is_some();
            if set_aside && rows && self.local(message.to).is_none() {
                aside.push(message);
                continue;
            }
            let here = self.local(message.to).filter(|_| {
                !rows
                    || (handled < MESSAGES
                        && message.payload.rows() <= IN_PLACE_ROWS
                        && (set_aside || messages.iter().all(|m| self.local(m.to).is_some())))
            });
            let Some(at) = here else {
                messages.push(message);
                return Ok(hand_off(messages, aside, finished, handled));
            };
            state.check()?;
            handled += 1;
            let worker = workers[at].get_or_insert_with(|| {
                Worker::new(
                    self.parts[at].clone(),
                    self.first + at as u32,
                    self.workers,
                    Arc::clone(&self.pool),
                    Arc::clone(&self.replicas),
                )
                .with_learnt(Arc::clone(&self.learnt))
                .with_lists(Arc::clone(&self.lists))
            });
            if let (Some(read), Payload::Rows(Ok(rows))) = (read.as_deref_mut(), &message.payload) {
                let plan = &message.plan;
                let step = message
                    .run
                    .or_else(|| plan.steps.get(message.step as usize).copied());
                if let Some(step) = step {
                    let step = PlanStep {
                        bgp: &plan.bgp,
                        step: &step,
                        graph: plan.graph,
                        rdf_type: plan.rdf_type,
                        classes: &plan.classes,
                    };
                    read.take(&self.parts[at], step, rows);
                }
            }
            // Kept to be handed on instead if its step asks lists of another process:
            // the answers would come back to the dataflow's worker, which does not hold
            // the rows waiting for them. Only the rows of a kept intersection ask lists.
            let fetches = rows && message.run.is_some_and(|run| run.partner.is_some());
            let kept = fetches.then(|| message.clone());
            let from = message.to;
            let (mut next, carried, record) = worker.handle(message);
            let leaves = |next: &[Message]| {
                next.iter()
                    .any(|m| !matches!(m.payload, Payload::Rows(_)) && self.local(m.to).is_none())
            };
            if let Some(kept) = kept.filter(|_| leaves(&next)) {
                messages.push(kept);
                return Ok(hand_off(messages, aside, finished, handled));
            }
            hand_on(&mut next, from, carried, record, |to| !self.holds(to));
            messages.append(&mut next);
        }
        if !aside.is_empty() {
            return Ok(hand_off(Vec::new(), aside, finished, handled));
        }
        Ok(InPlace::Done(finished, handled, Enough::All))
    }
}

/// A run in place handed to the dataflow as it stands: the messages in flight, those set
/// aside for other processes and the finished ones, weights intact.
fn hand_off(
    mut messages: Vec<Message>,
    aside: Vec<Message>,
    finished: Vec<Message>,
    handled: usize,
) -> InPlace {
    messages.extend(aside);
    messages.extend(finished);
    InPlace::HandOff(messages, handled)
}
