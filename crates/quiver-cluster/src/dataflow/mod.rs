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

mod arrival;
mod queries;
mod resolver;
mod start;

pub(crate) use arrival::{Arrival, Arrived, Reply, Request, Totals};
pub(crate) use queries::SPIN;
pub(crate) use resolver::WORKERS_STOPPED;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use quiver_model::{Id, PredId};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::partitions::BgpPartitions;
use quiver_sparql::size_free::SizeFreePlans;
use quiver_store::Store;
use timely::communication::WorkerGuards;

use crate::direct::Lines;
use crate::heartbeat::Heartbeat;
use crate::in_place::LocalParts;
use crate::replicas::{Replicas, Replication, SharedReplicas};
use crate::types::PairTable;
use resolver::ClusterResolver;

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
    /// What this process kept of its replicas for the next start, and how they came
    /// ([`crate::kept_replicas`]; none in one process).
    keeping: Option<Arc<crate::kept_replicas::Keeping>>,
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

    /// Whether this process's replicas were read from the copy it kept at its last start,
    /// every process reading its own, rather than exchanged.
    pub fn replicas_read_from_kept(&self) -> bool {
        self.replicas.get().is_some()
            && self.keeping.as_ref().is_some_and(|keeping| {
                keeping
                    .agreement
                    .get()
                    .is_some_and(|agreement| agreement.kept_everywhere)
            })
    }

    /// This process's first partition (its first worker's index).
    pub fn first_partition(&self) -> u32 {
        self.first
    }

    /// How the writing of this process's copy of its replicas for the next start ended
    /// (written before they were published); `None` when no copy was written (it kept one
    /// of these partitions already, nothing is replicated, or the cluster runs in one
    /// process).
    pub fn kept_replicas_written(&self) -> Option<Result<(), String>> {
        self.keeping.as_ref()?.written.get().cloned()
    }

    /// This process's replicas, if the cluster replicates anything and they have arrived.
    pub fn replicas(&self) -> Option<&Replicas> {
        self.replicas.get()
    }

    /// The copies of replicas kept by a cluster of another shape on these partitions, which
    /// this process removed as it started (only the first process removes any).
    pub fn removed_stray_copies(&self) -> &[std::path::PathBuf] {
        self.keeping
            .as_ref()
            .map_or(&[], |keeping| &keeping.removed)
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

/// The coordinator's worker, woken when a request arrives: timely's activation of its
/// exploring operator, which also ends the worker's polling (a plain unpark would wait
/// for the polling to time out); and whether the cluster has started.
#[derive(Default, Debug)]
pub(crate) struct Coordinator {
    activator: Mutex<Option<timely::scheduling::SyncActivator>>,
    started: std::sync::atomic::AtomicBool,
}

impl Coordinator {
    pub(crate) fn set(&self, activator: timely::scheduling::SyncActivator) {
        *self.activator.lock().unwrap_or_else(|e| e.into_inner()) = Some(activator);
    }

    /// The cluster has started: its first questions were answered and its replicas
    /// arrived.
    pub(crate) fn set_started(&self) {
        self.started
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the cluster has started ([`Self::set_started`]).
    pub(crate) fn started(&self) -> bool {
        self.started.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(crate) fn wake(&self) {
        let activator = self.activator.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(activator) = activator.as_ref() {
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

impl Drop for TimelyPartitions {
    fn drop(&mut self) {
        // Ending the requests ends worker 0's loop, which closes its input: the dataflow
        // drains and every worker returns. The idle coordinator is parked in timely: woken,
        // it sees the requests end now, not after its poll's timeout (`lanes::IDLE_POLL`,
        // which every drop of a cluster waited for).
        let requests = self
            .requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(requests);
        self.coordinator.wake();
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
