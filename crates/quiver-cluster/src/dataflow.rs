//! Exploration over partitions on timely-dataflow: long-lived dataflows on every worker,
//! which receive plans and rows tagged with a query number and route them step by step.
//!
//! Each worker serves one partition. A message carries a query's plan, the step its rows
//! are at and the worker they go to; timely's exchange (by that worker) moves it there,
//! the worker runs the step on its partition ([`crate::worker`]) and sends the rows on, cut
//! by where the next step runs ([`crate::route`]), through the dataflow's loop: each hop
//! is one tick later. An intersection whose partner lists live at other workers takes two
//! more ticks: the fetch of those lists and its answer ([`crate::fetch`]). Rows past the
//! last step go to the query's coordinator, which collects them.
//!
//! **Every process coordinates.** The first worker of each process is the coordinator of
//! the queries asked of that process, and every worker builds one lane (an exploration
//! dataflow and a dictionary dataflow) per coordinator, fed by that coordinator's input
//! alone. So a query asked of any process is planned there, starts there and ends there,
//! and one coordinator's progress (below) never waits on another's input.
//!
//! A query ends by its messages' weights (`message::WEIGHT`: each message hands its share
//! on to those it sends): once the weights of the messages that reached the coordinator
//! add up to the weight it started with, it is answered, whatever other queries are in
//! flight. The coordinator does not advance its input for each query: messages at a time
//! the input still holds never move timely's frontier, so their hops send far fewer
//! progress updates between the processes (which cost a light query more than its rows).
//! Only a query that cannot end by weight (a share too small to split, or one still
//! running after 20 ms, `lanes::BACKSTOP`) moves the input past every tick it can take, and progress
//! tracking ends it. Long-lived dataflows, rather than one per query, keep a light query
//! at a few messages and no dataflow construction.
//!
//! The thread that runs a query ([`TimelyPartitions`] implements `BgpPartitions`) first
//! runs in place the steps whose rows stay on this process's partitions
//! ([`crate::in_place`]), and hands what leaves to its process's coordinator; it then
//! waits for the answer while checking the query's deadline and cancel flag, and has the
//! query cancelled on every worker when it gives up. The plan carries the query's time
//! left, memory budget and LIMIT bound to the workers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::Bgp;
use quiver_sparql::context::QueryState;
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::error::QueryError;
use quiver_sparql::memory::MemoryPool;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{
    BgpPartitions, Exchanged, Explored, FlowControl, HeldBytes, PartitionTrace, PartitionedBgp,
    WorkerRole, WorkerStep,
};
use quiver_sparql::planner::Spread;
use quiver_sparql::size_free::SizeFreePlans;
use quiver_sparql::table::Table;
use quiver_store::{GraphIndex, Store};
use timely::communication::WorkerGuards;

use crate::dictionary::{Ask, ClusterResolver};
use crate::direct::Lines;
use crate::fetch::ProcessLists;
use crate::heartbeat::Heartbeat;
use crate::in_place::{Aside, Enough, InPlace, LocalParts};
use crate::learnt::LearntRecords;
use crate::message::{
    counted_rows, hand_on, route, table_counts, time_left, uniform_counts, Carried, Failure,
    Filter, Message, Payload, Plan, WEIGHT,
};
use crate::replicas::{Replicas, Replication, SharedReplicas};
use crate::route::{aggregate_graph, classes, settled, split_foreign_intersections};
use crate::types::PairTable;

/// What reached the coordinator of one query: the rows (or errors) that finished it, what
/// its hops exchanged, whether a step stopped at the plan's cap, and the weight they bring.
#[derive(Default)]
pub(crate) struct Arrival {
    parts: Vec<Result<Table, Failure>>,
    exchanged: Exchanged,
    truncated: bool,
    weight: u64,
    /// A message came with no weight: the query ends when the probe passes its time.
    pub(crate) unweighed: bool,
    /// A worker failed the query (its memory budget there, an error): the coordinator
    /// stops it on the others.
    pub(crate) failed: bool,
    /// Under a traced plan, what the workers did.
    trace: Vec<WorkerStep>,
}

impl Arrival {
    /// Takes in a finished message: its rows (or error), what it carries and its weight.
    pub(crate) fn take(&mut self, message: Message) {
        let Payload::Rows(rows) = message.payload else {
            return;
        };
        self.failed |= rows.is_err();
        self.parts.push(rows);
        self.exchanged += message.exchanged;
        self.truncated |= message.truncated;
        WorkerStep::add_all(&mut self.trace, message.trace);
        match message.weight {
            Some(weight) => self.weight += weight,
            None => self.unweighed = true,
        }
    }

    /// The answer of the pattern's run, and what its hops exchanged.
    pub(crate) fn answer(self) -> (Answer, Exchanged) {
        let answer = self
            .parts
            .into_iter()
            .collect::<Result<Vec<Table>, Failure>>()
            .map(|parts| {
                let parts = uniform_counts(parts);
                (Table::concat(parts), self.truncated, self.trace)
            });
        (answer, self.exchanged)
    }

    /// Whether every message of the query has arrived, by their weights.
    pub(crate) fn complete(&self) -> bool {
        !self.unweighed && self.weight == WEIGHT
    }
}

/// What the runs so far exchanged, and how many ended only when the probe passed their
/// last time, their weights not all back.
#[derive(Debug, Default)]
pub(crate) struct Totals {
    pub(crate) exchanged: Exchanged,
    pub(crate) by_progress: u64,
    /// Runs answered in place by the asking thread, runs it handed to the dataflow, and
    /// the messages it handled.
    in_place: u64,
    handed_off: u64,
    steps_in_place: u64,
    /// Runs answered with hops over the light queries' connections ([`crate::direct`]).
    direct: u64,
}

/// What reached the coordinator, by query.
pub(crate) type Arrived = HashMap<u64, Arrival>;

/// What a pattern's run answers: its rows, whether a step stopped at the plan's cap, and
/// under a traced plan, what the workers did.
pub(crate) type Answer = Result<(Table, bool, Vec<WorkerStep>), Failure>;

/// Where the answer of a pattern's run goes.
pub(crate) type Reply = mpsc::Sender<Answer>;

/// What the coordinator is asked.
pub(crate) enum Request {
    /// A pattern's run, under the query number the asker chose: its messages, routed and
    /// weighed (the first ones, or those left by a run in place).
    Run {
        query: u64,
        messages: Vec<Message>,
        reply: Reply,
    },
    /// The asker gave the query up: every worker drops its messages.
    Cancel(u64),
    /// A question to the owners of a partitioned dictionary ([`crate::dictionary`]).
    Dictionary { ask: Ask, reply: TermsReply },
}

/// Where the answer of a dictionary question goes: `(id, encoding)` found.
pub(crate) type TermsReply = mpsc::Sender<Vec<(Id, Vec<u8>)>>;

/// The partitions of a store served by the workers of timely-dataflow, one partition per
/// worker.
pub struct TimelyPartitions {
    requests: Arc<Mutex<Option<mpsc::Sender<Request>>>>,
    /// This process's first partition, where its queries are planned: a clone of the store
    /// its worker serves, so that what its dictionary learns of other owners' terms (a
    /// partitioned dictionary) is learnt once for both.
    coordinator_store: Option<Store>,
    guards: Mutex<Option<WorkerGuards<()>>>,
    /// Every partition's graphs' classes, by graph (known where the partitions were cut).
    classes: HashMap<GraphRef, Vec<Id>>,
    rdf_type: Option<PredId>,
    workers: u32,
    /// What the runs so far exchanged and how they ended (counted by the coordinator's
    /// worker).
    totals: Arc<Mutex<Totals>>,
    /// This process's coordinator (its first worker's thread), woken for each request.
    coordinator: Arc<Coordinator>,
    /// This process's first worker: its coordinator.
    first: u32,
    /// The number of the next query asked.
    queries: AtomicU64,
    /// This process's partitions, where the asking thread runs what stays here (and the
    /// threads answering other processes' light hops what they ask).
    local: Arc<LocalParts>,
    /// This process's replicas (`rdf:type` memberships, small predicates), once exchanged
    /// ([`crate::replicas`]).
    replicas: SharedReplicas,
    /// What is replicated (what fits the budget).
    replication: Replication,
    /// Set when a run did not come back (a worker or process stopped, or the query gave
    /// up waiting): the workers may never end, so they are not waited for.
    broken: std::sync::atomic::AtomicBool,
    /// The plans of queries this process's workers hold ([`crate::plans`]).
    plans: Arc<AtomicUsize>,
    /// The record sizes the planner asked of the owners so far.
    sizes: Mutex<KeptSizes>,
    /// The query templates whose plan a foreign record's size cannot change.
    size_free: SizeFreePlans,
    /// What this process hears of the others ([`crate::heartbeat`]; none in one process).
    heartbeat: Option<Heartbeat>,
    /// The connections on which this process asks the others light queries' hops
    /// ([`crate::direct`]; none in one process), and whether they are used.
    lines: Option<Lines>,
    direct: std::sync::atomic::AtomicBool,
}

/// Record sizes asked of their owners, kept for the planning of later queries: the
/// partitions do not change while the cluster runs. Sizes over a merge of `FROM` graphs
/// are not kept (the ask does not name the graphs merged).
#[derive(Default)]
struct KeptSizes {
    sizes: HashMap<DegreeAsk, u64>,
    /// Records asked of the owners, in all.
    asked: u64,
}

/// Record sizes kept at most; past it, the kept ones are dropped and kept anew.
const SIZES_KEPT: usize = 1 << 16;

impl KeptSizes {
    fn get(&self, ask: &DegreeAsk) -> Option<u64> {
        self.sizes.get(ask).copied()
    }

    /// Keeps the sizes `found` of the records `asked`.
    fn add(&mut self, asked: &[DegreeAsk], found: &[u64]) {
        self.asked += asked.len() as u64;
        if self.sizes.len() + asked.len() > SIZES_KEPT {
            self.sizes.clear();
        }
        for (ask, &size) in asked.iter().zip(found) {
            if ask.graph != GraphRef::Merged {
                self.sizes.insert(*ask, size);
            }
        }
    }
}

impl std::fmt::Debug for TimelyPartitions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimelyPartitions")
            .field("workers", &self.workers)
            .finish_non_exhaustive()
    }
}

/// What the asking threads ran in place: runs answered there, runs handed to the dataflow
/// (after their first steps, or none), and the messages (steps, fetches) handled there or,
/// asked by the asking threads, on other processes; runs answered with hops to other
/// processes over the light queries' connections, and the round trips these took
/// ([`crate::direct`]), of them over Unix sockets to processes of this machine; the steps
/// answered from records learnt from other processes, and the ids of those kept
/// ([`crate::learnt`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InPlaceRuns {
    pub answered: u64,
    pub handed_off: u64,
    pub messages: u64,
    pub direct: u64,
    pub trips: u64,
    pub unix_trips: u64,
    pub recalled: u64,
    pub learnt_ids: u64,
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
    /// This process's listening socket, bound at its address by whoever started the
    /// cluster (`None`: the process binds its address itself); see `connect`.
    pub listener: Option<Arc<std::net::TcpListener>>,
}

impl TimelyPartitions {
    /// `store` cut into `workers` partitions, each served by a worker thread of this
    /// process; its `rdf:type` memberships and small predicates replicated as
    /// [`crate::replicas::choose`] decides under the default budget
    /// ([`crate::types::BUDGET`]).
    pub fn in_process(store: &Store, workers: u32) -> Result<Self, String> {
        let triples: Vec<u64> = (0..store.predicate_count())
            .map(|p| store.predicate_stats(p as PredId).triples)
            .collect();
        let replication = crate::replicas::choose(&triples, store.rdf_type(), crate::types::BUDGET);
        Self::in_process_with(store, workers, replication)
    }

    /// [`Self::in_process`], replicating what `replication` names.
    pub fn in_process_with(
        store: &Store,
        workers: u32,
        replication: Replication,
    ) -> Result<Self, String> {
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
        let communication = crate::connect::in_process(workers as usize)?;
        Self::start(
            parts,
            0,
            communication,
            graphs_classes,
            rdf_type,
            workers,
            replication,
            threads_per_worker(workers as usize),
        )
    }

    /// This process's share of the partitioned store in `dir` (`quiver partition`), in a
    /// cluster of processes that find each other at `config.addresses` (timely's TCP
    /// connections; every process must be started). The store must be cut into as many
    /// partitions as the cluster has workers: a cluster of another size refuses to start.
    /// Every process answers [`BgpPartitions::explore`], coordinating the queries asked of
    /// it; the cluster runs until process 0's partitions are dropped (the others may wait
    /// for that: [`Self::wait`]).
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
        let first = config.process * config.workers;
        // A grown load killed after it committed this process's partitions: finished.
        let own: Vec<u32> = (first..first + config.workers)
            .map(|index| index as u32)
            .collect();
        quiver_store::partition_commit::recover_grown(dir, &own).map_err(|e| e.to_string())?;
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
        let parts = (first..first + config.workers)
            .map(|index| {
                open_partition(dir, index as u32, total as u32)
                    .map(|(part, _)| part)
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<Store>, String>>()?;
        let rdf_type = parts.first().and_then(Store::rdf_type);
        // Every process decides alike, from the same layout (without statistics, the size
        // is unknown: nothing is replicated).
        let triples: Vec<u64> = match &layout.statistics {
            Some(statistics) => statistics.predicates.iter().map(|p| p.triples).collect(),
            None => vec![u64::MAX; rdf_type.map_or(0, |p| p as usize + 1)],
        };
        let replication = crate::replicas::choose(
            &triples,
            rdf_type,
            layout.replication_budget.unwrap_or(crate::types::BUDGET),
        );
        let graphs_classes = layout
            .classes
            .into_iter()
            .map(|mut g| {
                // Sorted, for the binary searches of placement.
                g.classes.sort_unstable();
                g.classes.dedup();
                (
                    g.graph.map_or(GraphRef::Default, GraphRef::Named),
                    g.classes,
                )
            })
            .collect();
        // The processes given this machine's address share its cores.
        let host = |address: &String| address.rsplit_once(':').map(|(host, _)| host.to_owned());
        let own = host(&config.addresses[config.process]);
        let sharing = config.addresses.iter().filter(|a| host(a) == own).count();
        let threads = threads_per_worker(config.workers * sharing.max(1));
        let communication = crate::connect::cluster(config)?;
        Self::start(
            parts,
            first,
            communication,
            graphs_classes,
            rdf_type,
            total as u32,
            replication,
            threads,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        parts: Vec<Store>,
        first: usize,
        (builders, others, networked): crate::connect::Communication,
        classes: HashMap<GraphRef, Vec<Id>>,
        rdf_type: Option<PredId>,
        workers: u32,
        replication: Replication,
        threads: usize,
    ) -> Result<Self, String> {
        // The first worker of every process, where the replicated memberships gather.
        let per_process = parts.len().max(1) as u32;
        let firsts: Arc<Vec<u32>> = Arc::new((0..workers).step_by(per_process as usize).collect());
        let replicas: SharedReplicas = Arc::default();
        let (requests, receiver) = mpsc::channel::<Request>();
        let requests = Arc::new(Mutex::new(Some(requests)));
        let coordinator = Arc::new(Coordinator::default());
        let (heartbeat, lines) = match networked {
            Some((heartbeat, lines)) => (Some(heartbeat), Some(lines)),
            None => (None, None),
        };
        let coordinator_store = parts.first().cloned();
        if let Some(store) = &coordinator_store {
            if store.dictionary().share().is_some() {
                store
                    .dictionary()
                    .set_resolver(Some(Arc::new(ClusterResolver {
                        requests: Arc::downgrade(&requests),
                        coordinator: Arc::clone(&coordinator),
                        liveness: heartbeat.as_ref().map(Heartbeat::liveness),
                    })));
            }
        }
        // The partner lists this process's workers read and fetch, shared by all of them.
        let lists = Arc::new(ProcessLists::new(first as u32, parts.clone()));
        let local = Arc::new(LocalParts::new(
            first as u32,
            parts.clone(),
            workers,
            Arc::clone(&replicas),
            Arc::new(LearntRecords::new(parts.clone(), first as u32, workers)),
            Arc::clone(&lists),
        ));
        // Threads answering the other processes' light hops, each parked in its read.
        let lines = match lines {
            Some(lines) => {
                for line in lines.serves {
                    let local = Arc::clone(&local);
                    std::thread::Builder::new()
                        .name("quiver-direct".into())
                        .spawn(move || crate::direct::serve(line, local))
                        .map_err(|e| format!("cannot start a thread: {e}"))?;
                }
                Some(Lines::new(first / per_process as usize, lines.asks))
            }
            None => None,
        };
        let parts = Arc::new(parts);
        let receiver = Arc::new(Mutex::new(Some(receiver)));
        let totals = Arc::new(Mutex::new(Totals::default()));
        let shared = Arc::clone(&totals);
        let thread = Arc::clone(&coordinator);
        // One memory pool for the workers of this process, sized by the limit the
        // coordinator's plans carry.
        let pool = MemoryPool::new(None);
        let table = Arc::clone(&replicas);
        let replicated = replication.any();
        let replicating = replication.clone();
        let plans = Arc::new(AtomicUsize::new(0));
        let plans_held = Arc::clone(&plans);
        let guards = timely::execute::execute_from(
            builders,
            others,
            timely::WorkerConfig::default(),
            move |worker| {
                let part = parts[worker.index() - first].clone();
                crate::replicas::build(
                    worker,
                    &part,
                    rdf_type,
                    &firsts,
                    Arc::clone(&table),
                    &replicating,
                );
                crate::lanes::serve(
                    worker,
                    (per_process, threads),
                    part,
                    &receiver,
                    &shared,
                    &thread,
                    (Arc::clone(&pool), Arc::clone(&lists)),
                    (Arc::clone(&table), replicated),
                    &plans_held,
                );
            },
        )?;
        let partitions = Self {
            requests,
            coordinator_store,
            guards: Mutex::new(Some(guards)),
            classes,
            rdf_type,
            workers,
            totals,
            coordinator,
            first: first as u32,
            queries: AtomicU64::new(0),
            local,
            replicas,
            replication,
            broken: std::sync::atomic::AtomicBool::new(false),
            plans,
            sizes: Mutex::default(),
            size_free: SizeFreePlans::default(),
            heartbeat,
            lines,
            direct: std::sync::atomic::AtomicBool::new(true),
        };
        // The first questions to the other processes: one that stops before answering
        // (killed as the cluster starts) ends this process's workers with it.
        let asked = partitions
            .check_loads()
            .and_then(|()| partitions.learn_names());
        if let Err(error) = asked {
            return Err(if error == crate::dictionary::WORKERS_STOPPED {
                format!(
                    "a connection to another process of the cluster closed while the cluster \
                     started ({error})"
                )
            } else {
                error
            });
        }
        if partitions.replication.any() {
            partitions.await_replicas();
        }
        Ok(partitions)
    }

    /// Refuses a cluster whose processes serve partitions of different loads (each process
    /// reads its own layout and partitions, which may be another load's on another
    /// machine): every worker's partition must come from the coordinator's load.
    fn check_loads(&self) -> Result<(), String> {
        let Some(store) = &self.coordinator_store else {
            return Ok(());
        };
        let own = store
            .partition_info()
            .and_then(|info| info.load.clone())
            .unwrap_or_default();
        let mut loads = self.owners().ask(Ask::Loads)?;
        loads.sort();
        for (worker, load) in loads {
            if load != own.as_bytes() {
                return Err(format!(
                    "partition {worker} is from another load than partition {} ({} and {own:?}): \
                     the processes of this cluster serve different stores",
                    self.first,
                    String::from_utf8_lossy(&load)
                ));
            }
        }
        Ok(())
    }

    /// The way to ask the owners questions through the running cluster, from this process.
    fn owners(&self) -> ClusterResolver {
        ClusterResolver {
            requests: Arc::downgrade(&self.requests),
            coordinator: Arc::clone(&self.coordinator),
            liveness: self.heartbeat.as_ref().map(Heartbeat::liveness),
        }
    }

    /// This process's first partition, where the queries this process coordinates are
    /// planned. Plan on this store, not on one opened again: with a partitioned
    /// dictionary, it is the one that learns the other owners' terms.
    pub fn coordinator_store(&self) -> Option<Store> {
        self.coordinator_store.clone()
    }

    /// With a partitioned dictionary, the coordinator learns the terms of the graph names
    /// and classes it binds without asking the partitions, for good: they are not in the
    /// rows of every query that decodes them.
    fn learn_names(&self) -> Result<(), String> {
        let Some(store) = &self.coordinator_store else {
            return Ok(());
        };
        let classes = self.classes.values().flatten().copied();
        store
            .dictionary()
            .resolve_ids_for_good(store.graph_names().chain(classes))
    }

    /// Learns the terms of the ids in `table` that other owners hold (a partitioned
    /// dictionary), before anything decodes them.
    fn learn_terms(&self, table: &Table) -> Result<(), QueryError> {
        let Some(store) = &self.coordinator_store else {
            return Ok(());
        };
        if !store.dictionary().resolves() {
            return Ok(());
        }
        let ids = table
            .columns
            .iter()
            .flat_map(|column| column[..table.rows.min(column.len())].iter().copied());
        store
            .dictionary()
            .resolve_ids(ids)
            .map_err(|e| QueryError::Cluster(format!("its dictionary did not answer: {e}")))
    }

    /// The runs so far whose end was found by timely's progress rather than by their
    /// messages' weights (a share too small to split, or a message dropped: a cancelled
    /// query's).
    pub fn ended_by_progress(&self) -> u64 {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .by_progress
    }

    /// Waits (a minute at most) for this process's replicas, exchanged as the workers
    /// start, so that the first queries already check types where their rows are.
    fn await_replicas(&self) {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while self.replicas.get().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// This process's replicated `rdf:type` memberships, if the cluster replicates them and
    /// they have arrived.
    pub fn types(&self) -> Option<&PairTable> {
        self.replicas.get().and_then(|r| r.types.as_ref())
    }

    /// This process's replicas, if the cluster replicates anything and they have arrived.
    pub fn replicas(&self) -> Option<&Replicas> {
        self.replicas.get()
    }

    /// What the cluster replicates.
    pub fn replication(&self) -> &Replication {
        &self.replication
    }

    /// The plans of queries this process's workers hold: those in flight, and those of
    /// queries over that the coordinator has not yet told them to forget.
    pub fn plans_held(&self) -> usize {
        self.plans.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The record sizes the planner asked of the owners so far (each is asked once: the
    /// sizes are kept).
    pub fn record_sizes_asked(&self) -> u64 {
        self.sizes.lock().unwrap_or_else(|e| e.into_inner()).asked
    }

    /// What the asking threads ran in place so far ([`crate::in_place`]).
    pub fn in_place(&self) -> InPlaceRuns {
        let (trips, unix_trips) = self.lines.as_ref().map_or((0, 0), Lines::trips);
        let (recalled, learnt_ids) = self.local.learnt().counts();
        let totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        InPlaceRuns {
            answered: totals.in_place,
            handed_off: totals.handed_off,
            messages: totals.steps_in_place,
            direct: totals.direct,
            trips,
            unix_trips,
            recalled,
            learnt_ids: learnt_ids as u64,
        }
    }

    /// Whether this process learns the records other processes read for its light queries
    /// and walks them itself the next time ([`crate::learnt`], the default), or every such
    /// query crosses to them.
    pub fn set_learning(&self, on: bool) {
        self.local.learnt().set_on(on);
    }

    /// Whether a worker reads the partner lists an intersection needs from its process's
    /// other partitions itself ([`crate::fetch`], the default), or fetches them as it
    /// does from another process's: what a cluster of one-worker processes does, which
    /// tests of one process with several workers take this for.
    pub fn set_reading_in_process(&self, on: bool) {
        self.local.lists().set_reading(on);
    }

    /// Whether light queries' hops to other processes go over connections of their own
    /// ([`crate::direct`], the default) or, like every other hop, through the dataflow (to
    /// compare the two, or to test the dataflow's handling of light queries).
    pub fn set_direct_hops(&self, on: bool) {
        self.direct.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// The light queries' connections, if this process has them and uses them.
    fn lines(&self) -> Option<&Lines> {
        self.lines
            .as_ref()
            .filter(|_| self.direct.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// This process leaves its cluster: once dropped, it does not wait for its workers
    /// (which serve the other processes' queries until process 0 ends the cluster); its
    /// closed connections tell the other processes that it is gone.
    pub fn leave(&self) {
        self.broken
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a worker thread of this process ended while the cluster runs: a lost
    /// connection ends them (timely's communication fails every worker of the process),
    /// and the coordinator's, polling timely while idle (every 100 ms, `lanes::IDLE_POLL`),
    /// ends within that time. The cluster has then ended for this process.
    pub fn ended(&self) -> bool {
        let guards = self.guards.lock().unwrap_or_else(|e| e.into_inner());
        guards
            .as_ref()
            .is_some_and(|guards| guards.guards().iter().any(|g| g.is_finished()))
    }

    /// Why another process counts as gone while this one's workers run: its heartbeat
    /// went silent or its connection closed ([`crate::heartbeat`]). It may come back (a
    /// stopped process continued), and then the cluster answers again.
    pub fn silent(&self) -> Option<String> {
        self.heartbeat.as_ref()?.liveness().silent()
    }

    /// Waits for this process's workers to end: when the coordinator's requests end (it
    /// is dropped), or its process is gone. Once a connection to another process closed
    /// (the coordinator's process ended without stopping the cluster), an error says so.
    pub fn wait(self) -> Result<(), String> {
        let guards = self.guards.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(guards) = guards else {
            return Ok(());
        };
        if joined(guards) {
            return Ok(());
        }
        Err(
            "a connection to another process of the cluster closed before the cluster was \
             stopped"
                .into(),
        )
    }
}

/// Joins this process's worker threads; whether every one ended well. After a lost
/// connection, timely's threads fail one after the other (each panics), and so does its
/// guard of the network threads, dropped here: that is the process's end, not a fault of
/// it, so the panic is caught.
fn joined(guards: WorkerGuards<()>) -> bool {
    let workers = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| guards.join()));
    workers.is_ok_and(|workers| workers.iter().all(Result::is_ok))
}

/// The threads each of `workers` workers sharing this machine may run a large step on: its
/// share of the cores (at least one).
fn threads_per_worker(workers: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    (cores / workers.max(1)).max(1)
}

/// How long the coordinator right after answering a query (stepping its worker), and a
/// query waiting for its rows, poll before they park. Parking and waking a thread cost
/// about 25 µs on a small virtual machine, and a query crosses two such waits of ours (the
/// asker to the coordinator, and back): polling a little longer than a light query's round
/// trip keeps them out of its latency, at the price of this much CPU each time one goes
/// idle (measured: without either poll, the LUBM emulator on 2 processes answers 15% fewer
/// queries). Timely's workers keep their own, shorter polling: on a machine with fewer
/// cores than threads, workers that poll longer take the cores the network threads need
/// (measured slower on 2 cores).
pub(crate) const SPIN: Duration = Duration::from_micros(200);

/// The next value of `channel`: polled for [`SPIN`], then waited for at most `limit`.
fn wait_briefly<T>(
    channel: &mpsc::Receiver<T>,
    limit: Duration,
) -> Result<T, mpsc::RecvTimeoutError> {
    let start = std::time::Instant::now();
    loop {
        match channel.try_recv() {
            Ok(value) => return Ok(value),
            Err(mpsc::TryRecvError::Disconnected) => {
                return Err(mpsc::RecvTimeoutError::Disconnected)
            }
            Err(mpsc::TryRecvError::Empty) if start.elapsed() < SPIN => std::thread::yield_now(),
            Err(mpsc::TryRecvError::Empty) => break,
        }
    }
    channel.recv_timeout(limit)
}

/// The coordinator's worker, woken when a request arrives: timely's activation of its
/// exploring operator, which also ends the worker's polling (a plain unpark would wait
/// for the polling to time out).
#[derive(Default, Debug)]
pub(crate) struct Coordinator(Mutex<Option<timely::scheduling::SyncActivator>>);

impl Coordinator {
    pub(crate) fn set(&self, activator: timely::scheduling::SyncActivator) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(activator);
    }

    pub(crate) fn wake(&self) {
        if let Some(activator) = self.0.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            // An error: the worker has ended, and the request's channel says so.
            let _ = activator.activate();
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

    fn spread(&self) -> Spread {
        Spread {
            partitions: self.workers,
            types_everywhere: self.replication.types,
            replicated: self.replication.predicates.clone(),
        }
    }

    fn exchanged(&self) -> Exchanged {
        self.totals
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exchanged
    }

    fn held_bytes(&self) -> HeldBytes {
        HeldBytes {
            network_buffers: crate::buffers::network_buffer_bytes(),
            network_buffers_peak: crate::buffers::network_buffer_peak_bytes(),
            replicated: self.replicas.get().map_or(0, |r| r.bytes() as u64),
        }
    }

    fn flow_control(&self) -> FlowControl {
        crate::window::flow_control()
    }

    /// Why the cluster cannot answer now: a worker of this process ended, or another
    /// process is silent.
    fn unavailable(&self) -> Option<String> {
        if self.ended() {
            return Some(
                "a worker of this process stopped: a process of the cluster ended or its \
                 connection closed; restart the cluster"
                    .to_string(),
            );
        }
        self.silent()
    }

    fn explore(&self, mut request: PartitionedBgp<'_>) -> Result<Explored, QueryError> {
        if let Some(answer) = settled(&request) {
            return answer.map(Explored::from);
        }
        // A cluster known to have lost a process answers nothing, not even what this
        // process's partitions and the records it learnt could: its status says it cannot.
        if let Some(why) = self.unavailable() {
            return Err(QueryError::Cluster(why));
        }
        let steps = split_foreign_intersections(request.bgp, request.steps, self.rdf_type);
        // What the workers did, over every run.
        let mut work = Vec::new();
        // Under a LIMIT, each step on each worker stops at a bound of rows; when the rows
        // found fall short while some step stopped, the run is asked again with a bound
        // four times larger (as the single store's exploration does).
        let mut cap = request.limit.map_or(u64::MAX, |limit| limit.max(1) as u64);
        loop {
            let plan = Plan {
                bgp: request.bgp.clone(),
                steps: steps.clone(),
                graph: request.graph,
                classes: self.classes_of(request.graph, request.merged),
                rdf_type: self.rdf_type,
                keep: request.keep.clone(),
                // Counted on the workers only where no bound may cut the rows.
                count_by: request.count_by.clone().filter(|_| request.limit.is_none()),
                distinct_only: request.distinct_only,
                extremes: request
                    .extremes
                    .clone()
                    .filter(|_| request.limit.is_none() && request.count_by.is_some()),
                top: request.top.clone().filter(|_| request.limit.is_none()),
                passes: request.passes.clone(),
                checks: request.checks.clone(),
                merged: request.merged.to_vec(),
                aggregate: None,
                cap,
                answers: request.answers.map(|answers| answers as u64),
                time_left: time_left(request.state.deadline()),
                max_memory: request.state.budget().limit(),
                trace: request.trace,
                coordinator: self.first,
            };
            // The input is kept for another run only under a LIMIT.
            let input = match request.limit {
                Some(_) => request.input.clone(),
                None => std::mem::take(&mut request.input),
            };
            let count_by = plan.count_by.clone();
            let cut_to = plan.top.clone();
            let narrowed = plan.extremes.clone();
            let filtered = plan.passes.clone();
            let checked = plan.checks.clone();
            let (rows, truncated, trace) = self.ask(plan, input, request.state)?;
            let (rows, counts) = match &count_by {
                Some(keys) => {
                    let (rows, counts) = counted_rows(rows, keys);
                    (rows, Some(counts))
                }
                None => (rows, None),
            };
            WorkerStep::add_all(&mut work, trace);
            self.learn_terms(&rows)?;
            // Rows that answer as they come need only be as many as the caller's LIMIT.
            let enough = request
                .limit
                .is_none_or(|limit| rows.rows >= request.answers.map_or(limit, |a| a.min(limit)));
            if enough || !truncated || cap == u64::MAX {
                let trace = request.trace.then(|| PartitionTrace {
                    executor: self.name(),
                    steps,
                    work,
                    counted_by: count_by,
                    cut_to,
                    narrowed,
                    filtered,
                    checked,
                });
                return Ok(Explored {
                    rows,
                    trace,
                    counts,
                });
            }
            cap = cap.saturating_mul(4);
        }
    }

    fn degrees_cost(&self) -> Option<Duration> {
        self.lines()?.round_trip()
    }

    fn size_free_plans(&self) -> Option<&SizeFreePlans> {
        Some(&self.size_free)
    }

    fn known_degrees(&self, asks: &[DegreeAsk]) -> Vec<Option<u64>> {
        let kept = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
        let learnt = self.local.learnt();
        asks.iter()
            .map(|ask| kept.get(ask).or_else(|| learnt.degree(ask)))
            .collect()
    }

    fn degrees(&self, asks: &[DegreeAsk]) -> Result<Option<Vec<u64>>, QueryError> {
        let mut sizes = self.known_degrees(asks);
        let missing: Vec<DegreeAsk> = asks
            .iter()
            .zip(&sizes)
            .filter(|(_, size)| size.is_none())
            .map(|(ask, _)| *ask)
            .collect();
        if !missing.is_empty() {
            // Over the light queries' connections where they are idle: one round trip.
            let silent = || self.silent();
            let direct = match self.lines() {
                Some(lines) => lines.degrees(&missing, &self.local, &silent)?,
                None => None,
            };
            let found = match direct {
                Some(found) => found,
                None => self.degrees_through_dataflow(&missing)?,
            };
            let mut kept = self.sizes.lock().unwrap_or_else(|e| e.into_inner());
            kept.add(&missing, &found);
            let mut found = found.into_iter();
            for size in sizes.iter_mut().filter(|size| size.is_none()) {
                *size = found.next();
            }
        }
        Ok(Some(
            sizes.into_iter().map(Option::unwrap_or_default).collect(),
        ))
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
            count_by: None,
            distinct_only: false,
            extremes: None,
            top: None,
            passes: Vec::new(),
            checks: Vec::new(),
            merged: merged.to_vec(),
            aggregate: Some(aggregate.clone()),
            cap: u64::MAX,
            answers: None,
            time_left: time_left(state.deadline()),
            max_memory: state.budget().limit(),
            trace: false,
            coordinator: self.first,
        };
        let (table, ..) = self.ask(plan, Table::unit(), state)?;
        self.learn_terms(&table)?;
        Ok(vec![table_counts(
            &table,
            aggregate.key.is_some(),
            aggregate.aggregates.len(),
        )])
    }
}

impl TimelyPartitions {
    /// The sizes of the records `missing` names, asked of their owners through the
    /// dictionary's dataflow.
    fn degrees_through_dataflow(&self, missing: &[DegreeAsk]) -> Result<Vec<u64>, QueryError> {
        let answers = self
            .owners()
            .ask(Ask::Degrees(missing.to_vec()))
            .map_err(|e| QueryError::Cluster(format!("its owners did not answer: {e}")))?;
        let mut found = vec![0; missing.len()];
        for (position, size) in answers {
            let size = <[u8; 8]>::try_from(size.as_slice())
                .map_err(|_| QueryError::Cluster("a malformed record size".into()))?;
            if let Some(slot) = found.get_mut(position as usize) {
                *slot = u64::from_le_bytes(size);
            }
        }
        Ok(found)
    }

    /// Runs `plan` from `input` through the dataflow and waits for its rows (and whether a
    /// step stopped at the plan's cap, and what a traced plan's workers did), checking the
    /// query's deadline and cancel flag; a query given up is cancelled on every worker.
    fn ask(
        &self,
        plan: Plan,
        input: Table,
        state: &QueryState,
    ) -> Result<(Table, bool, Vec<WorkerStep>), QueryError> {
        let (reply, answer) = mpsc::channel();
        let query = self
            .queries
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // A sender of its own: the lock is not held while the query runs.
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let local = &self.local;
        let plan = Arc::new(plan);
        let start = plan.trace.then(|| WorkerStep {
            messages: 0,
            rows_out: input.rows as u64,
            ..WorkerStep::new(0, self.first, WorkerRole::Start, input.rows as u64)
        });
        let mut filtered = Vec::new();
        let mut messages = route(
            &plan,
            query,
            0,
            input,
            self.workers,
            false,
            Filter {
                replicas: self.replicas.get(),
                records: &mut filtered,
                terms: None,
                learnt: Some(self.local.learnt()),
            },
        );
        let carried = Carried {
            exchanged: Exchanged::default(),
            weight: Some(WEIGHT),
            trace: filtered
                .into_iter()
                .map(|record| WorkerStep {
                    worker: self.first,
                    ..record
                })
                .collect(),
        };
        hand_on(&mut messages, self.first, carried, start, |to| {
            !local.holds(to)
        });
        // What a run in place leaves for other processes goes there over the light
        // queries' connections while it stays light.
        let mut direct = false;
        let ran = match (local.run(messages, state, Aside::UnderLimit)?, self.lines()) {
            (InPlace::HandOff(messages, handled), Some(lines)) => {
                direct = true;
                let silent = || self.silent();
                lines
                    .run(messages, &plan, local, state, &silent)?
                    .handled_before(handled)
            }
            (ran, _) => ran,
        };
        let messages = match ran {
            InPlace::Done(finished, handled, enough) => {
                let mut arrival = Arrival::default();
                for message in finished {
                    arrival.take(message);
                }
                // Stopped at the LIMIT: more rows may exist, as when a step stops at it.
                arrival.truncated |= enough == Enough::Stopped;
                let (answer, exchanged) = arrival.answer();
                let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
                totals.exchanged += exchanged;
                match direct {
                    true => totals.direct += 1,
                    false => totals.in_place += 1,
                }
                totals.steps_in_place += handled as u64;
                return answer.map_err(QueryError::from);
            }
            InPlace::HandOff(messages, handled) => {
                let mut totals = self.totals.lock().unwrap_or_else(|e| e.into_inner());
                totals.handed_off += 1;
                totals.steps_in_place += handled as u64;
                messages
            }
        };
        let sent = requests.as_ref().map(|requests| {
            requests.send(Request::Run {
                query,
                messages,
                reply,
            })
        });
        let stopped = || {
            self.broken
                .store(true, std::sync::atomic::Ordering::Relaxed);
            QueryError::Cluster(
                "its workers have stopped: a process of the cluster ended or its connection \
                 closed; restart the cluster"
                    .into(),
            )
        };
        match sent {
            Some(Ok(())) => self.coordinator.wake(),
            Some(Err(_)) | None => return Err(stopped()),
        }
        let cancel = || {
            if let Some(requests) = requests.as_ref() {
                let _ = requests.send(Request::Cancel(query));
                self.coordinator.wake();
            }
        };
        loop {
            if let Some(silent) = self.silent() {
                // Every other worker drops the query's messages; the silent process's
                // drop them when it comes back.
                cancel();
                self.broken
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(QueryError::Cluster(silent));
            }
            if let Err(error) = state.check() {
                // Every worker drops the query's messages from now on, and each of its
                // steps checks the query's own deadline. A stopped peer may still keep
                // the run from ending: the workers are not waited for on drop.
                cancel();
                self.broken
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                return Err(error);
            }
            match wait_briefly(&answer, Duration::from_millis(5)) {
                Ok(Ok(answer)) => return Ok(answer),
                Ok(Err(failure)) => {
                    cancel();
                    // A worker's deadline is the query's: the query's own error says it.
                    state.check()?;
                    return Err(failure.into());
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
        let lost = self.unavailable().is_some();
        if let Some(guards) = self.guards.lock().unwrap_or_else(|e| e.into_inner()).take() {
            if lost || self.broken.load(std::sync::atomic::Ordering::Relaxed) {
                // A worker may wait forever on a stopped peer: leave the threads be (and
                // timely's guard of the network threads, which panics once one failed).
                std::mem::forget(guards);
            } else {
                // A connection lost while the workers drain fails them: the cluster is
                // being dropped, so that is no one's error.
                joined(guards);
            }
        }
    }
}
