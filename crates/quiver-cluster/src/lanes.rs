//! The lanes of the exploration: what every worker of a cluster builds and runs. A lane is
//! one coordinator's dataflows (the exploration's and the dictionary questions'), and every
//! worker builds one per coordinator, the first worker of each process. A coordinator's
//! worker then takes its process's requests: it feeds its lane's input, collects what
//! reached it and answers each query once its messages' weights are back
//! ([`crate::dataflow`] tells the whole story); every other worker steps its lanes until
//! they end.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::AtomicUsize;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use quiver_sparql::error::QueryError;
use quiver_sparql::memory::MemoryPool;
use quiver_sparql::partitions::Exchanged;
use quiver_store::Store;
use timely::dataflow::channels::pact::ExchangeCore;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::{Concat, ConnectLoop, Feedback, Input, Probe};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use crate::buffers::Bounded;
use crate::dataflow::{Arrival, Arrived, Coordinator, Reply, Request, Totals, SPIN};
use crate::dictionary::Asking;
use crate::fetch::ProcessLists;
use crate::message::{hand_on, Failure, Message, Payload, Plan, PlanCopy};
use crate::pieces::Tally;
use crate::plans::{Plans, FORGET_BATCH};
use crate::replicas::SharedReplicas;
use crate::window::{Offered, Window};
use crate::worker::Worker;

/// One coordinator's dataflows, as a worker built them: the exploration's (its input, fed
/// by the coordinator's worker only, what reached it, its probe, the plans of its queries)
/// and the dictionary questions'. Every worker builds one lane per coordinator, the same
/// lanes in the same order (timely's rule); each lane's frontier depends on its own
/// coordinator's input alone, so that one coordinator's backstop never waits for another.
struct Lane {
    input: InputHandleVec<u64, Message>,
    questions: InputHandleVec<u64, crate::dictionary::Question>,
    answers: crate::dictionary::Answers,
    arrived: Rc<RefCell<Arrived>>,
    probe: ProbeHandle<u64>,
    plans: Rc<RefCell<Plans>>,
    /// The exploring operator's address, by which the asker wakes the coordinator.
    address: Rc<RefCell<Vec<usize>>>,
    /// The exploring operator's windows to other processes' workers, which count what the
    /// coordinator feeds the input too.
    window: Rc<RefCell<Window>>,
}

/// What a worker's lanes share: its partition, its process's memory pool and replicated
/// memberships, the count of plans held, and its share of the cores.
struct Shared<'a> {
    part: &'a Store,
    per_process: u32,
    threads: usize,
    pool: &'a Arc<MemoryPool>,
    lists: &'a Arc<ProcessLists>,
    replicas: &'a SharedReplicas,
    plans_held: &'a Arc<AtomicUsize>,
}

/// Builds on `worker` the lane of the coordinator `coordinator` (a worker's index).
fn lane(worker: &mut timely::worker::Worker, coordinator: u32, shared: &Shared<'_>) -> Lane {
    let index = worker.index();
    let workers = worker.peers() as u32;
    let arrived: Rc<RefCell<Arrived>> = Rc::default();
    let mut input: InputHandleVec<u64, Message> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    let part = shared.part.clone();
    let load = part.partition_info().and_then(|info| info.load.clone());
    let (questions, answers) = crate::dictionary::build(worker, part.clone(), load, coordinator);
    let mut state = Worker::new(
        part,
        index as u32,
        workers,
        Arc::clone(shared.pool),
        Arc::clone(shared.replicas),
    )
    .with_threads(shared.threads)
    .with_lists(Arc::clone(shared.lists));
    let sink = Rc::clone(&arrived);
    let per_process = shared.per_process;
    let plans = Rc::new(RefCell::new(Plans::new(
        index as u32,
        per_process,
        Arc::clone(shared.plans_held),
    )));
    let known = Rc::clone(&plans);
    let address: Rc<RefCell<Vec<usize>>> = Rc::default();
    let noted = Rc::clone(&address);
    let window = Rc::new(RefCell::new(Window::new(index as u32, per_process)));
    let windowed = Rc::clone(&window);
    worker.dataflow::<u64, _, _>(|scope| {
        let (handle, cycle) = scope.feedback(1);
        scope
            .input_from(&mut input)
            .concat(cycle)
            .unary(
                ExchangeCore::<Bounded<Message>, _>::new_core(|m: &Message| u64::from(m.to)),
                "Explore",
                move |_, info| {
                    *noted.borrow_mut() = info.address.to_vec();
                    // A capability for each time at which messages wait for their window.
                    let mut held: BTreeMap<u64, Capability<u64>> = BTreeMap::new();
                    move |input, output| {
                        let mut window = windowed.borrow_mut();
                        // Container by container in the order they arrived, not `for_each_stamp`:
                        // that groups them by time with an unstable sort, which reordered the
                        // containers one worker sent another at one time (a fetch's answer then
                        // arrived with its last piece before the others, and the rows waiting for
                        // it were intersected without the lists still on their way: q1 lost rows on
                        // 4 × 4 workers). A fetch's answer and a plan left behind by later messages
                        // rely on that order.
                        input.for_each(|time, batch| {
                            // Every message of this dataflow travels under a capability;
                            // one that did not could not wait (no time to hold) and goes.
                            let at = time.least().copied();
                            let mut session = output.session(&time);
                            // What waits is charged to its query on `charged`, the worker
                            // that made it; a message refused comes back with the error.
                            let mut send =
                                |window: &mut Window,
                                 message: Message,
                                 charged: Option<&Worker>|
                                 -> Option<(Message, QueryError)> {
                                    match at {
                                        Some(at) => {
                                            let query = message.query;
                                            let budget = || charged?.budget_of(query);
                                            match window.offer(at, message, budget) {
                                                Offered::Go(message) => session.give(message),
                                                Offered::Held => {}
                                                Offered::Refused(message, error) => {
                                                    return Some((message, error));
                                                }
                                            }
                                        }
                                        None => {
                                            window.sent_anyway(&message);
                                            session.give(message);
                                        }
                                    }
                                    None
                                };
                            for mut message in batch.drain(..) {
                                if window.arrived(&message) {
                                    continue;
                                }
                                let mut known = known.borrow_mut();
                                if let Err(failure) = known.receive(&mut message) {
                                    // On the coordinator, a query whose plan it no
                                    // longer holds is over: nothing waits for this.
                                    if index as u32 != coordinator {
                                        let mut lost =
                                            failed_instead(message, failure, coordinator);
                                        known.stamp(&mut lost);
                                        send(&mut window, lost, None);
                                    }
                                    continue;
                                }
                                match &message.payload {
                                    Payload::Forget(queries) => {
                                        known.forget(queries);
                                        window.drop_queries(queries);
                                    }
                                    Payload::Cancel => window.drop_queries(&[message.query]),
                                    _ => {}
                                }
                                if message.is_finished() {
                                    let mut arrived = sink.borrow_mut();
                                    arrived.entry(message.query).or_default().take(message);
                                    continue;
                                }
                                let (mut next, carried, record) = state.handle(message);
                                for message in &mut next {
                                    known.stamp(message);
                                }
                                let process = index as u32 / per_process;
                                let remote = |to: u32| to / per_process != process;
                                hand_on(&mut next, index as u32, carried, record, remote);
                                for message in next {
                                    let refused = send(&mut window, message, Some(&state));
                                    // Past its query's budget: its failure goes in its
                                    // place (no rows, so never refused).
                                    if let Some((message, error)) = refused {
                                        known.withdraw(&message);
                                        let mut failure =
                                            failed_instead(message, error.into(), coordinator);
                                        known.stamp(&mut failure);
                                        send(&mut window, failure, None);
                                    }
                                }
                            }
                            for credit in window.credits() {
                                session.give(credit);
                            }
                            if let Some(at) = at.filter(|&at| window.holds(at)) {
                                if !held.contains_key(&at) {
                                    held.extend(time.retain_least(0).map(|cap| (at, cap)));
                                }
                            }
                        });
                        // Credits that arrived let waiting messages go (each under the
                        // capability kept for its time when it was held back).
                        for (at, message) in window.released() {
                            if let Some(cap) = held.get(&at) {
                                output.session(cap).give(message);
                            }
                        }
                        held.retain(|at, _| window.holds(*at));
                    }
                },
            )
            .probe_with(&probe)
            .connect_loop(handle);
    });
    Lane {
        input,
        questions,
        answers,
        arrived,
        probe,
        plans,
        address,
        window,
    }
}

/// One worker: a lane per coordinator (the first worker of each process), then (a
/// coordinator) its process's requests until they end, or (the others) steps until every
/// lane's dataflow ends. A coordinator other than process 0's also ends its requests once
/// process 0's lane has ended: the cluster stops with process 0.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    worker: &mut timely::worker::Worker,
    (per_process, threads): (u32, usize),
    part: Store,
    receiver: &Mutex<Option<mpsc::Receiver<Request>>>,
    totals: &Mutex<Totals>,
    coordinator: &Coordinator,
    (pool, lists): (Arc<MemoryPool>, Arc<ProcessLists>),
    (replicas, replicated): (SharedReplicas, bool),
    plans_held: &Arc<AtomicUsize>,
) {
    let index = worker.index();
    let workers = worker.peers() as u32;
    let process = index as u32 / per_process;
    let shared = Shared {
        part: &part,
        per_process,
        threads,
        pool: &pool,
        lists: &lists,
        replicas: &replicas,
        plans_held,
    };
    let lanes: Vec<Lane> = (0..workers.div_ceil(per_process))
        .map(|p| lane(worker, p * per_process, &shared))
        .collect();
    let requests = if (index as u32).is_multiple_of(per_process) {
        receiver.lock().unwrap_or_else(|e| e.into_inner()).take()
    } else {
        None
    };
    let Some(requests) = requests else {
        // No coordinator: every input closes here.
        drop(lanes);
        while worker.step_or_park(None) {}
        return;
    };
    // The first process's lane, watched by the other coordinators; the others' inputs
    // close here.
    let mut own = None;
    let mut first_lane: Option<ProbeHandle<u64>> = None;
    for (p, lane) in lanes.into_iter().enumerate() {
        if p as u32 == process {
            own = Some(lane);
        } else if p == 0 {
            first_lane = Some(lane.probe.clone());
        }
    }
    let Some(Lane {
        mut input,
        mut questions,
        answers,
        arrived,
        probe,
        plans,
        address,
        window,
    }) = own
    else {
        while worker.step_or_park(None) {}
        return;
    };
    coordinator.set(worker.sync_activator_for(address.take()));
    // Several queries run at once, each entering at the input's current time. A query is
    // finished when its messages' weights are all back; the input is not advanced for it,
    // so that its messages leave timely's global frontier where it is and its hops send
    // far fewer progress updates between the processes (which, on a light query, cost
    // more than its rows). Only a query that cannot end by weight (a share too small to
    // split, or one still running after [`BACKSTOP`]) moves the input past every hop it
    // can make: it is finished once the probe passes that time.
    let mut time = 0u64;
    let mut pending: Vec<Pending> = Vec::new();
    // Queries over, of which the workers are not told yet (their plans, their states).
    let mut over: Vec<u64> = Vec::new();
    // Dictionary questions on their way.
    let mut asked: Vec<Asking> = Vec::new();
    let mut next_question = 0u64;
    let mut open = true;
    // Whether the last round answered a query of this coordinator's (its asker may send
    // the next one at once).
    let mut answered = false;
    let mut take = |request: Request,
                    time: &mut u64,
                    (input, questions): (
        &mut InputHandleVec<u64, Message>,
        &mut InputHandleVec<u64, crate::dictionary::Question>,
    ),
                    pending: &mut Vec<Pending>,
                    asked: &mut Vec<Asking>| {
        match request {
            Request::Dictionary { ask, reply } => {
                // Past the input's time, which later pieces of earlier questions moved on.
                next_question = next_question.max(*questions.time()) + 1;
                let pieces = crate::dictionary::questions(next_question, workers, ask);
                if pieces.is_empty() {
                    let _ = reply.send(Vec::new());
                    return;
                }
                let mut asking = Asking::new(next_question, pieces, reply);
                for question in asking.next(0) {
                    questions.send(question);
                }
                asked.push(asking);
                // Each question a time of its own: advancing the input sends them on
                // (answers are taken as they arrive, not by the frontier).
                questions.advance_to(next_question);
            }
            Request::Run {
                query,
                messages,
                reply,
            } => {
                // Every hop is a tick: past the last step and the hop to the coordinator.
                let ticks = messages.first().map_or(0, |m| m.plan.ticks());
                let end = *time + ticks as u64 + 2;
                let mut plans = plans.borrow_mut();
                let mut window = window.borrow_mut();
                for mut message in messages {
                    plans.hold(query, &message.plan);
                    plans.stamp(&mut message);
                    window.sent_anyway(&message);
                    input.send(message);
                }
                input.flush();
                pending.push(Pending {
                    query,
                    end,
                    reply,
                    since: std::time::Instant::now(),
                    stopped: false,
                });
            }
            Request::Cancel(query) => cancel(query, workers, input, (&plans, &window)),
        }
    };
    while open || !pending.is_empty() || !asked.is_empty() {
        // Process 0's coordinator has ended: so does this one, once its queries are over.
        if first_lane.as_ref().is_some_and(ProbeHandle::done) {
            open = false;
        }
        // Idle once the replicas have arrived: until then, the worker steps
        // their exchange.
        let settled = !replicated || replicas.get().is_some();
        if pending.is_empty() && asked.is_empty() && settled {
            // Idle: right after answering, the asker's next request is polled for a
            // moment ([`SPIN`]), the worker stepping meanwhile; then the worker parks in
            // timely, woken by a request (the asker activates it), by any message of
            // another coordinator's query for this worker's partition, or after
            // [`IDLE_POLL`] (stepping notices a lost connection). It must not wait on the
            // requests alone: other processes' queries need this worker.
            let spin = if answered { SPIN } else { Duration::ZERO };
            let started = std::time::Instant::now();
            loop {
                match requests.try_recv() {
                    Ok(request) => {
                        take(
                            request,
                            &mut time,
                            (&mut input, &mut questions),
                            &mut pending,
                            &mut asked,
                        );
                        break;
                    }
                    Err(mpsc::TryRecvError::Empty) if started.elapsed() < spin => {
                        // Yielding: on a machine with fewer cores than threads, the
                        // asker and the other processes need the core more.
                        worker.step();
                        std::thread::yield_now();
                    }
                    Err(mpsc::TryRecvError::Empty) => {
                        worker.step_or_park(Some(IDLE_POLL));
                        break;
                    }
                    Err(mpsc::TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
        }
        loop {
            match requests.try_recv() {
                Ok(request) => take(
                    request,
                    &mut time,
                    (&mut input, &mut questions),
                    &mut pending,
                    &mut asked,
                ),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        // Timely polls briefly, then parks between events: on a machine with fewer cores
        // than workers, a spinning coordinator would hold a core the other processes need.
        // A request's activation ends either.
        worker.step_or_park(Some(Duration::from_millis(1)));
        // Each question's next pieces as the last ones are answered; a question answered
        // in full goes to its asker.
        let mut more = false;
        asked.retain_mut(|asking| {
            let mut answers = answers.borrow_mut();
            let came = answers
                .get(&asking.request)
                .map_or_else(Tally::default, |(came, _)| *came);
            for question in asking.next(came.lasts()) {
                questions.send(question);
                more = true;
            }
            if !asking.answered(&came) {
                return true;
            }
            let (_, found) = answers.remove(&asking.request).unwrap_or_default();
            let _ = asking.reply.send(found);
            false
        });
        if more {
            // Sent on as the input moves past their time (a flush leaves them in the
            // exchange's buffers).
            let next = *questions.time() + 1;
            questions.advance_to(next);
        }
        // A query a worker failed (its memory budget there, an error) and whose other
        // messages are still out is stopped on every worker at once: they would otherwise
        // run it to its end for an answer that is that error anyway.
        for p in pending.iter_mut().filter(|p| !p.stopped) {
            let failed = arrived
                .borrow()
                .get(&p.query)
                .is_some_and(|a| a.failed && !a.complete());
            if failed {
                p.stopped = true;
                cancel(p.query, workers, &mut input, (&plans, &window));
            }
        }
        // The backstop: the input moves past the last time of every query that cannot end
        // by weight (a stopped one's messages are dropped, their weights with them), and
        // progress tracking ends it.
        let behind = pending
            .iter()
            .filter(|p| {
                p.stopped
                    || p.since.elapsed() >= BACKSTOP
                    || arrived.borrow().get(&p.query).is_some_and(|a| a.unweighed)
            })
            .map(|p| p.end)
            .max();
        if let Some(end) = behind.filter(|&end| end > time) {
            time = end;
            input.advance_to(time);
        }
        let waiting = pending.len();
        pending.retain(
            |Pending {
                 query, end, reply, ..
             }| {
                // Finished when its messages' weights are all back, or else once the probe
                // passes its last time (only after the backstop moved the input past it).
                let weighed = arrived.borrow().get(query).is_some_and(Arrival::complete);
                if !weighed && (*end > time || probe.less_than(end)) {
                    return true;
                }
                over.push(*query);
                let arrival = arrived.borrow_mut().remove(query).unwrap_or_default();
                let (answer, exchanged) = arrival.answer();
                let mut totals = totals.lock().unwrap_or_else(|e| e.into_inner());
                totals.exchanged += exchanged;
                totals.by_progress += u64::from(!weighed);
                drop(totals);
                // The asker may have given up (a timeout): its answer is dropped.
                let _ = reply.send(answer);
                false
            },
        );
        answered = pending.len() < waiting;
        // Every message of these queries arrived: no worker needs their plans any more.
        if over.len() >= FORGET_BATCH {
            let mut plans = plans.borrow_mut();
            let mut window = window.borrow_mut();
            for mut message in broadcast(0, workers, || Payload::Forget(over.clone())) {
                plans.stamp(&mut message);
                window.sent_anyway(&message);
                input.send(message);
            }
            input.flush();
            over.clear();
        }
    }
    drop(input);
    drop(questions);
    while worker.step_or_park(None) {}
}

/// Tells every worker to drop `query` (given up by its asker, or failed on one of them).
fn cancel(
    query: u64,
    workers: u32,
    input: &mut InputHandleVec<u64, Message>,
    (plans, window): (&RefCell<Plans>, &RefCell<Window>),
) {
    let mut plans = plans.borrow_mut();
    let mut window = window.borrow_mut();
    for mut message in broadcast(query, workers, || Payload::Cancel) {
        plans.stamp(&mut message);
        window.sent_anyway(&message);
        input.send(message);
    }
    // Sent now: the input no longer moves on with each query.
    input.flush();
}

/// One message to every worker, each carrying `payload()` and no plan.
fn broadcast(query: u64, workers: u32, payload: impl Fn() -> Payload) -> Vec<Message> {
    let plan = Arc::new(Plan::empty());
    (0..workers)
        .map(|to| Message {
            query,
            step: 0,
            to,
            from: 0,
            plan: Arc::clone(&plan),
            plan_copy: PlanCopy::Sent,
            run: None,
            payload: payload(),
            exchanged: Exchanged::default(),
            truncated: false,
            weight: None,
            trace: Vec::new(),
        })
        .collect()
}

/// The message that tells the coordinator a worker could not run `message` (its plan not
/// at hand) or send it (holding it would take its query past its memory budget): past
/// every step, so finished whatever the plan, with the weight it carried.
fn failed_instead(message: Message, failure: Failure, coordinator: u32) -> Message {
    Message {
        step: u32::MAX,
        to: coordinator,
        run: None,
        payload: Payload::Rows(Err(failure)),
        ..message
    }
}

/// A query in flight at the coordinator: its number, the time the input must pass for
/// progress tracking to end it, where its answer goes, and since when it runs.
struct Pending {
    query: u64,
    end: u64,
    reply: Reply,
    since: std::time::Instant,
    /// Cancelled on the workers once one of them failed it.
    stopped: bool,
}

/// How long a query runs before the coordinator stops waiting for its weights alone and
/// moves the input on, so that progress tracking ends it too: a heavy query's few progress
/// rounds cost nothing beside it.
const BACKSTOP: Duration = Duration::from_millis(20);

/// How long the idle coordinator's worker parks at most before it steps again, whose
/// polling of the network fails (and ends this thread) when a connection to another
/// process closed: then `unavailable` says so, and the next query fails at once.
const IDLE_POLL: Duration = Duration::from_millis(100);
