//! Exploration over partitions on timely-dataflow: one long-lived dataflow per worker,
//! which receives plans and rows tagged with a query number and routes them step by step.
//!
//! Each worker serves one partition. A message carries a query's plan, the step its rows
//! are at and the worker they go to; timely's exchange (by that worker) moves it there,
//! the worker runs the step on its partition ([`run_step`]) and sends the rows on, cut
//! by where the next step runs ([`crate::route`]), through the dataflow's loop: each hop
//! is one tick later. Rows past the last step go to worker 0, the coordinator, which
//! collects them. A query enters at one time and the coordinator advances its input past
//! every hop the plan can make, so once the probe passes that time every row has arrived:
//! timely's progress tracking is the query's termination detection. Queries asked at once
//! run together, each entering after the last one's hops. One long-lived
//! dataflow, rather than one per query, keeps a light query at a few messages and no
//! dataflow construction.
//!
//! Worker 0 takes requests from the thread that runs the query ([`TimelyPartitions`]
//! implements `BgpPartitions`), which waits for the answer while checking the query's
//! deadline and cancel flag. The workers' steps run without the query's memory budget.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node};
use quiver_sparql::context::{ExecContext, QueryState};
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::run_step;
use quiver_sparql::memory::MemoryBudget;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{BgpPartitions, Exchanged, PartitionedBgp};
use quiver_sparql::step::Step;
use quiver_sparql::table::{Table, VarId};
use quiver_store::{GraphIndex, Store};
use serde::{Deserialize, Serialize};
use timely::communication::WorkerGuards;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Concat, ConnectLoop, Feedback, Input, Probe};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use crate::route::{
    aggregate_graph, by_owner, classes, count_on, partition_graph, place, settled,
    split_intersections, with_classes, Placement,
};

/// What every worker needs of one pattern's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    bgp: Bgp,
    /// The plan with intersections split (`route::split_intersections`).
    steps: Vec<Step>,
    graph: GraphRef,
    /// The graph's classes, for a step over the objects of `rdf:type`.
    classes: Vec<Id>,
    rdf_type: Option<PredId>,
    /// The only columns the coordinator reads (`PartitionedBgp::keep`): rows past the last
    /// step leave their worker with these alone.
    keep: Option<Vec<VarId>>,
    /// The `FROM` graphs whose merge `graph` is, if it is one.
    merged: Vec<Id>,
    /// A count read from the index instead of steps: one hop, on every worker, whose rows
    /// are its counts (`counts_table`).
    aggregate: Option<IndexAggregate>,
}

impl Plan {
    /// The hops the plan's rows make before they are finished.
    fn hops(&self) -> usize {
        self.steps.len() + usize::from(self.aggregate.is_some())
    }
}

/// A partition's counts as rows: the keys, then each count as two 32-bit halves.
fn counts_table((keys, counts): Counts, keyed: bool) -> Table {
    let rows = counts.first().map_or(keys.len(), Vec::len);
    let mut columns = Vec::new();
    if keyed {
        columns.push(keys);
    }
    for column in counts {
        columns.push(column.iter().map(|&n| (n >> 32) as Id).collect());
        columns.push(column.iter().map(|&n| n as Id).collect());
    }
    Table {
        vars: (0..columns.len()).collect(),
        columns,
        rows,
    }
}

/// The counts of [`counts_table`]'s rows (of every partition, concatenated).
fn table_counts(table: &Table, keyed: bool, width: usize) -> Counts {
    let at = usize::from(keyed);
    let keys = if keyed {
        table.columns.first().cloned().unwrap_or_default()
    } else {
        Vec::new()
    };
    let counts = (0..width)
        .map(|a| {
            let (high, low) = (&table.columns[at + 2 * a], &table.columns[at + 2 * a + 1]);
            high.iter()
                .zip(low)
                .map(|(&h, &l)| (u64::from(h) << 32) | u64::from(l))
                .collect()
        })
        .collect();
    (keys, counts)
}

/// A worker's shares of the merges of `FROM` graphs it was asked for lately, by the
/// graphs' names (a store being read-only, a share stays valid).
#[derive(Default)]
struct Merges(RefCell<Vec<(Vec<Id>, Rc<GraphIndex>)>>);

/// Shares of merges a worker keeps.
const MERGES_KEPT: usize = 4;

impl Merges {
    fn share(&self, part: &Store, names: &[Id]) -> Rc<GraphIndex> {
        let mut kept = self.0.borrow_mut();
        if let Some((_, share)) = kept.iter().find(|(n, _)| n == names) {
            return Rc::clone(share);
        }
        let share = Rc::new(partition_graph(part, GraphRef::Merged, names).into_owned());
        if kept.len() == MERGES_KEPT {
            kept.remove(0);
        }
        kept.push((names.to_vec(), Rc::clone(&share)));
        share
    }
}

/// Rows of a query on their way: to worker `to`, to run from step `step` (the plan's
/// length: finished, for the coordinator), or the error a worker met.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Message {
    query: u64,
    step: u32,
    to: u32,
    plan: Arc<Plan>,
    rows: Result<Table, String>,
    /// What the hops before this message moved between workers and handed to it (each
    /// hop hands its count to its first message, so the counts reach the coordinator).
    exchanged: Exchanged,
}

/// The rows (or errors) that finished each query, and what its hops exchanged, on the
/// coordinator.
type Arrived = HashMap<u64, (Vec<Result<Table, String>>, Exchanged)>;

/// `messages`, sent by worker `from`, handed what they move to other workers on top of
/// `earlier` (a message always has at least one successor: empty rows travel on too).
fn account(messages: &mut [Message], from: u32, earlier: Exchanged) {
    let mut exchanged = earlier;
    for message in messages.iter().filter(|m| m.to != from) {
        exchanged.messages += 1;
        exchanged.rows += message.rows.as_ref().map_or(0, |rows| rows.rows as u64);
        exchanged.bytes += bincode::serialized_size(message).unwrap_or(0);
    }
    if let Some(first) = messages.first_mut() {
        first.exchanged = exchanged;
    }
}

/// Where the answer of a pattern's run goes.
type Reply = mpsc::Sender<Result<Table, String>>;

/// A pattern's run asked of the coordinator.
struct Request {
    plan: Arc<Plan>,
    input: Table,
    reply: Reply,
}

/// The messages that carry `rows`, at step `step` of `plan`, to where that step runs:
/// steps over the classes run here first, and rows past the last step go to worker 0 (with
/// the columns it reads only). Empty rows travel to one worker only, so that the end still
/// learns their columns. A count read from the index goes to every worker.
fn route(
    plan: &Arc<Plan>,
    query: u64,
    mut step: usize,
    mut rows: Table,
    workers: u32,
) -> Vec<Message> {
    let message = |step: usize, to: u32, rows: Table| Message {
        query,
        step: step as u32,
        to,
        plan: Arc::clone(plan),
        rows: Ok(rows),
        exchanged: Exchanged::default(),
    };
    if plan.aggregate.is_some() && step == 0 {
        return (0..workers)
            .map(|to| message(0, to, rows.clone()))
            .collect();
    }
    loop {
        let Some(planned) = plan.steps.get(step) else {
            let rows = match &plan.keep {
                Some(keep) => rows.into_reshape(keep),
                None => rows,
            };
            return vec![message(step, 0, rows)];
        };
        let bound = |node: Node| match node {
            Node::Var(v) => rows.column(v).is_some(),
            Node::Const(_) | Node::Absent => true,
        };
        match place(&plan.bgp, planned, bound, plan.rdf_type).0 {
            Placement::Classes => {
                rows = with_classes(&plan.bgp, planned, &rows, &plan.classes);
                step += 1;
            }
            Placement::Owner(node) => {
                let cut = by_owner(&rows, node, workers);
                let mut messages: Vec<Message> = cut
                    .into_iter()
                    .enumerate()
                    .filter(|(_, part)| part.rows > 0)
                    .map(|(to, part)| message(step, to as u32, part))
                    .collect();
                if messages.is_empty() {
                    messages.push(message(step, 0, rows));
                }
                return messages;
            }
            Placement::Everywhere if rows.rows == 0 => return vec![message(step, 0, rows)],
            Placement::Everywhere => {
                return (0..workers)
                    .map(|to| message(step, to, rows.clone()))
                    .collect();
            }
        }
    }
}

/// Runs the step `message` is at on `part` and routes its rows on.
fn advance(
    part: &Store,
    workers: u32,
    message: Message,
    state: &QueryState,
    merges: &Merges,
) -> Vec<Message> {
    let Message {
        query,
        step,
        plan,
        rows,
        ..
    } = message;
    let rows = rows.and_then(|rows| {
        if let Some(aggregate) = &plan.aggregate {
            return count_on(part, aggregate, &plan.merged, state)
                .map(|counts| counts_table(counts, aggregate.key.is_some()))
                .map_err(|e| e.to_string());
        }
        let planned = &plan.steps[step as usize];
        let bound = |node: Node| match node {
            Node::Var(v) => rows.column(v).is_some(),
            Node::Const(_) | Node::Absent => true,
        };
        let (_, planned) = place(&plan.bgp, planned, bound, plan.rdf_type);
        let share = (plan.graph == GraphRef::Merged).then(|| merges.share(part, &plan.merged));
        let ctx = ExecContext {
            store: part,
            graph: share
                .as_deref()
                .unwrap_or_else(|| graph_index(part, plan.graph)),
            threads: 1,
            state,
            device: None,
        };
        run_step(&ctx, &plan.bgp, &planned, &rows).map_err(|e| e.to_string())
    });
    match rows {
        Ok(rows) => route(&plan, query, step as usize + 1, rows, workers),
        Err(error) => vec![Message {
            query,
            step: plan.hops() as u32,
            to: 0,
            plan,
            rows: Err(error),
            exchanged: Exchanged::default(),
        }],
    }
}

/// The partitions of a store served by the workers of timely-dataflow, one partition per
/// worker.
pub struct TimelyPartitions {
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    guards: Mutex<Option<WorkerGuards<()>>>,
    /// Every partition's graphs' classes, by graph (known where the partitions were cut).
    classes: HashMap<GraphRef, Vec<Id>>,
    rdf_type: Option<PredId>,
    workers: u32,
    /// Everything the runs so far exchanged (counted by the coordinator's worker).
    exchanged: Arc<Mutex<Exchanged>>,
    /// The coordinator's worker thread, woken for each request.
    coordinator: Arc<Coordinator>,
    /// Set when a run did not come back (a worker or process stopped, or the query gave
    /// up waiting): the workers may never end, so they are not waited for.
    broken: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for TimelyPartitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimelyPartitions")
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

/// Where this process stands in a cluster of processes (timely's own configuration).
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// This process's number, from 0 (the coordinator).
    pub process: usize,
    /// `host:port` of every process, in process order.
    pub addresses: Vec<String>,
    /// Worker threads per process, one partition each.
    pub workers: usize,
}

impl TimelyPartitions {
    /// `store` cut into `workers` partitions, each served by a worker thread of this
    /// process.
    pub fn in_process(store: &Store, workers: u32) -> Result<Self, String> {
        let parts: Vec<Store> = (0..workers)
            .map(|index| store.partition(index, workers))
            .collect();
        let mut graphs_classes = HashMap::new();
        let rdf_type = store.rdf_type();
        let names: Vec<GraphRef> = std::iter::once(GraphRef::Default)
            .chain(store.graph_names().map(GraphRef::Named))
            .collect();
        for graph in names {
            let indexes: Vec<&GraphIndex> = parts.iter().map(|p| graph_index(p, graph)).collect();
            graphs_classes.insert(graph, classes(&indexes, rdf_type));
        }
        let config = timely::Config::process(workers as usize);
        Self::start(parts, 0, config, graphs_classes, rdf_type, workers)
    }

    /// This process's share of the partitioned store in `dir` (`quiver partition`), in a
    /// cluster of processes that find each other at `config.addresses` (timely's TCP
    /// connections; every process must be started). The store must be cut into as many
    /// partitions as the cluster has workers: a cluster of another size refuses to start.
    /// Process 0 answers [`BgpPartitions::explore`]; the others serve until it ends
    /// ([`Self::wait`]).
    pub fn cluster(dir: &std::path::Path, config: ClusterConfig) -> Result<Self, String> {
        use quiver_store::partition::{open_partition, read_layout};
        let processes = config.addresses.len();
        if config.process >= processes || config.workers == 0 {
            return Err(format!(
                "process {} of {processes} with {} workers",
                config.process, config.workers
            ));
        }
        let total = processes * config.workers;
        let layout = read_layout(dir)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{}: not a partitioned store", dir.display()))?;
        if layout.partitions as usize != total {
            return Err(format!(
                "{}: the store is cut into {} partitions, a cluster of {processes} processes × {} workers needs {total}",
                dir.display(),
                layout.partitions,
                config.workers
            ));
        }
        let first = config.process * config.workers;
        let parts = (first..first + config.workers)
            .map(|index| {
                open_partition(dir, index as u32, total as u32)
                    .map(|(part, _)| part)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<Store>, String>>()?;
        let rdf_type = parts.first().and_then(Store::rdf_type);
        let graphs_classes = layout
            .classes
            .into_iter()
            .map(|g| {
                (
                    g.graph.map_or(GraphRef::Default, GraphRef::Named),
                    g.classes,
                )
            })
            .collect();
        let communication = timely::CommunicationConfig::Cluster {
            threads: config.workers,
            process: config.process,
            addresses: config.addresses,
            report: false,
            zerocopy: false,
        };
        let config = timely::Config {
            communication,
            worker: timely::WorkerConfig::default(),
        };
        Self::start(parts, first, config, graphs_classes, rdf_type, total as u32)
    }

    fn start(
        parts: Vec<Store>,
        first: usize,
        config: timely::Config,
        classes: HashMap<GraphRef, Vec<Id>>,
        rdf_type: Option<PredId>,
        workers: u32,
    ) -> Result<Self, String> {
        let parts = Arc::new(parts);
        let (requests, receiver) = mpsc::channel::<Request>();
        let receiver = Arc::new(Mutex::new(Some(receiver)));
        let exchanged = Arc::new(Mutex::new(Exchanged::default()));
        let totals = Arc::clone(&exchanged);
        let coordinator = Arc::new(Coordinator::default());
        let thread = Arc::clone(&coordinator);
        let guards = timely::execute(config, move |worker| {
            let part = parts[worker.index() - first].clone();
            serve(worker, part, &receiver, &totals, &thread);
        })?;
        Ok(Self {
            requests: Mutex::new((first == 0).then_some(requests)),
            guards: Mutex::new(Some(guards)),
            classes,
            rdf_type,
            workers,
            exchanged,
            coordinator,
            broken: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Waits for this process's workers to end: when the coordinator's requests end (it
    /// is dropped), or its process is gone.
    pub fn wait(self) {
        let guards = self.guards.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(guards) = guards {
            drop(guards.join());
        }
    }
}

/// One worker: its dataflow, then (worker 0) the requests until they end, or (the others)
/// steps until the dataflow ends.
fn serve(
    worker: &mut timely::worker::Worker,
    part: Store,
    receiver: &Mutex<Option<mpsc::Receiver<Request>>>,
    totals: &Mutex<Exchanged>,
    coordinator: &Coordinator,
) {
    let index = worker.index();
    let workers = worker.peers() as u32;
    let arrived: Rc<RefCell<Arrived>> = Rc::default();
    let mut input: InputHandleVec<u64, Message> = InputHandleVec::new();
    let probe = ProbeHandle::new();
    let state = QueryState::new(None, None, MemoryBudget::new(None), None);
    let merges = Merges::default();
    let sink = Rc::clone(&arrived);
    worker.dataflow::<u64, _, _>(|scope| {
        let (handle, cycle) = scope.feedback(1);
        scope
            .input_from(&mut input)
            .concat(cycle)
            .unary(
                Exchange::new(|m: &Message| u64::from(m.to)),
                "Explore",
                move |_, _| {
                    move |input, output| {
                        input.for_each_stamp(|time, batches| {
                            let mut session = output.session(&time);
                            for batch in batches {
                                for message in batch.drain(..) {
                                    if message.step as usize >= message.plan.hops() {
                                        let mut arrived = sink.borrow_mut();
                                        let query = arrived.entry(message.query).or_default();
                                        query.0.push(message.rows);
                                        query.1 += message.exchanged;
                                        continue;
                                    }
                                    let earlier = message.exchanged;
                                    let mut next =
                                        advance(&part, workers, message, &state, &merges);
                                    account(&mut next, index as u32, earlier);
                                    session.give_iterator(next.into_iter());
                                }
                            }
                        });
                    }
                },
            )
            .probe_with(&probe)
            .connect_loop(handle);
    });
    let requests = if index == 0 {
        receiver.lock().unwrap_or_else(|e| e.into_inner()).take()
    } else {
        None
    };
    let Some(requests) = requests else {
        drop(input);
        while worker.step_or_park(None) {}
        return;
    };
    coordinator.set(std::thread::current());
    // Several queries run at once: each enters at the input's current time and moves the
    // input past every hop it can make, so the next enters later. A query is finished once
    // the probe passes its last time; the hops of queries entered later do not hold it
    // back, and every query's rows move as soon as they arrive.
    let mut time = 0u64;
    // (query, its last time, where its answer goes)
    let mut pending: Vec<(u64, u64, Reply)> = Vec::new();
    let mut queries = 0u64..;
    let mut open = true;
    let mut start = |request: Request, time: &mut u64, input: &mut InputHandleVec<u64, Message>| {
        let query = queries.next().unwrap_or_default();
        let mut messages = route(&request.plan, query, 0, request.input, workers);
        account(&mut messages, 0, Exchanged::default());
        for message in messages {
            input.send(message);
        }
        // Every hop is a tick: past the last step and the hop to the coordinator.
        let end = *time + request.plan.hops() as u64 + 2;
        *time = end;
        input.advance_to(end);
        (query, end, request.reply)
    };
    while open || !pending.is_empty() {
        if pending.is_empty() {
            // Idle: wait for a request (the asker wakes this thread).
            match requests.recv() {
                Ok(request) => pending.push(start(request, &mut time, &mut input)),
                Err(_) => break,
            }
        }
        loop {
            match requests.try_recv() {
                Ok(request) => pending.push(start(request, &mut time, &mut input)),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        // Parked between events rather than spinning: on a machine with fewer cores than
        // workers, a spinning coordinator would hold a core the other processes need.
        worker.step_or_park(Some(Duration::from_millis(1)));
        pending.retain(|(query, end, reply)| {
            if probe.less_than(end) {
                return true;
            }
            let (parts, exchanged) = arrived.borrow_mut().remove(query).unwrap_or_default();
            *totals.lock().unwrap_or_else(|e| e.into_inner()) += exchanged;
            let answer = parts
                .into_iter()
                .collect::<Result<Vec<Table>, String>>()
                .map(Table::concat);
            // The asker may have given up (a timeout): its answer is dropped.
            let _ = reply.send(answer);
            false
        });
    }
    drop(input);
    while worker.step_or_park(None) {}
}

/// The thread of the coordinator's worker, woken when a request arrives.
#[derive(Default)]
struct Coordinator(Mutex<Option<std::thread::Thread>>);

impl Coordinator {
    fn set(&self, thread: std::thread::Thread) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(thread);
    }

    fn wake(&self) {
        if let Some(thread) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            thread.unpark();
        }
    }
}

impl TimelyPartitions {
    /// The classes of `graph` (of the merge of `merged`: the union of theirs).
    fn classes_of(&self, graph: GraphRef, merged: &[Id]) -> Vec<Id> {
        if graph != GraphRef::Merged {
            return self.classes.get(&graph).cloned().unwrap_or_default();
        }
        let mut classes: Vec<Id> = merged
            .iter()
            .filter_map(|&name| self.classes.get(&GraphRef::Named(name)))
            .flatten()
            .copied()
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes
    }
}

impl BgpPartitions for TimelyPartitions {
    fn name(&self) -> String {
        format!("{} timely workers", self.workers)
    }

    fn exchanged(&self) -> Exchanged {
        *self.exchanged.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn explore(&self, request: PartitionedBgp<'_>) -> Result<Table, QueryError> {
        if let Some(answer) = settled(&request) {
            return answer;
        }
        let plan = Plan {
            bgp: request.bgp.clone(),
            steps: split_intersections(request.steps),
            graph: request.graph,
            classes: self.classes_of(request.graph, request.merged),
            rdf_type: self.rdf_type,
            keep: request.keep,
            merged: request.merged.to_vec(),
            aggregate: None,
        };
        self.ask(plan, request.input, request.state)
    }

    fn aggregate(
        &self,
        aggregate: &IndexAggregate,
        merged: &[Id],
        state: &QueryState,
    ) -> Result<Vec<Counts>, QueryError> {
        let graph = aggregate_graph(aggregate)?;
        let plan = Plan {
            bgp: Bgp {
                patterns: Vec::new(),
                equalities: Vec::new(),
            },
            steps: Vec::new(),
            graph,
            classes: Vec::new(),
            rdf_type: self.rdf_type,
            keep: None,
            merged: merged.to_vec(),
            aggregate: Some(aggregate.clone()),
        };
        let table = self.ask(plan, Table::unit(), state)?;
        Ok(vec![table_counts(
            &table,
            aggregate.key.is_some(),
            aggregate.aggregates.len(),
        )])
    }
}

impl TimelyPartitions {
    /// Runs `plan` from `input` through the dataflow and waits for its rows, checking the
    /// query's deadline and cancel flag.
    fn ask(&self, plan: Plan, input: Table, state: &QueryState) -> Result<Table, QueryError> {
        let (reply, answer) = mpsc::channel();
        let sent = self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|requests| {
                requests.send(Request {
                    plan: Arc::new(plan),
                    input,
                    reply,
                })
            });
        let stopped = || {
            self.broken
                .store(true, std::sync::atomic::Ordering::Relaxed);
            QueryError::Unsupported("the cluster's workers have stopped".into())
        };
        match sent {
            Some(Ok(())) => self.coordinator.wake(),
            Some(Err(_)) => return Err(stopped()),
            None => {
                return Err(QueryError::Unsupported(
                    "only process 0 of a cluster answers queries".into(),
                ))
            }
        }
        loop {
            if let Err(error) = state.check() {
                // The run goes on without this query; a stopped peer may keep it going.
                self.broken
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(error);
            }
            match answer.recv_timeout(Duration::from_millis(5)) {
                Ok(rows) => {
                    return rows.map_err(|e| QueryError::Unsupported(format!("on a worker: {e}")))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(stopped()),
            }
        }
    }
}

impl Drop for TimelyPartitions {
    fn drop(&mut self) {
        // Ending the requests ends worker 0's loop, which closes its input: the dataflow
        // drains and every worker returns.
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(requests);
        if let Some(guards) = self.guards.lock().unwrap_or_else(|e| e.into_inner()).take() {
            if self.broken.load(std::sync::atomic::Ordering::Relaxed) {
                // A worker may wait forever on a stopped peer: leave the threads be.
                std::mem::forget(guards);
            } else {
                drop(guards.join());
            }
        }
    }
}
