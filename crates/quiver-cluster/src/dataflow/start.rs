//! A cluster's start: the partitions opened (in this process, or this process's share of
//! a cluster of processes), timely's workers started on them, and the first questions
//! asked of the other processes (do they serve the same load; the terms of graph names and
//! classes).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{mpsc, Arc, Mutex};

use quiver_model::{Id, PredId};
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::memory::MemoryPool;
use quiver_sparql::size_free::SizeFreePlans;
use quiver_store::{GraphIndex, Store};

use super::resolver::ClusterResolver;
use crate::dictionary::Ask;
use crate::direct::Lines;
use crate::fetch::ProcessLists;
use crate::heartbeat::Heartbeat;
use crate::in_place::LocalParts;
use crate::kept_replicas::Keeping;
use crate::learnt::LearntRecords;
use crate::replicas::{Replicas, Replication, SharedReplicas};
use crate::route::classes;

use super::{threads_per_worker, ClusterConfig, Coordinator, Request, TimelyPartitions, Totals};

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
            None,
        )
    }

    /// This process's share of the partitioned store in `dir` (`quiver partition`), in a
    /// cluster of processes that find each other at `config.addresses` (timely's TCP
    /// connections; every process must be started). The store must be cut into as many
    /// partitions as the cluster has workers: a cluster of another size refuses to start.
    /// Every process answers [`quiver_sparql::partitions::BgpPartitions::explore`],
    /// coordinating the queries asked of it; the cluster runs until process 0's partitions
    /// are dropped (the others may wait for that: [`Self::wait`]).
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
        // What this process kept of the replicas at its last start, read now: before the
        // processes agree on reading their copies, each must know it can.
        let keeping = Arc::new(Keeping::of_process(
            dir,
            (first as u32, config.workers as u32, total as u32),
            &replication,
            rdf_type,
        ));
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
            Some(keeping),
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
        keeping: Option<Arc<Keeping>>,
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
        let keeps = keeping.clone();
        let guards = timely::execute::execute_from(
            builders,
            others,
            timely::WorkerConfig::default(),
            move |worker| {
                let part = parts[worker.index() - first].clone();
                // Whether every process reads the replicas it kept instead of exchanging.
                let place = (
                    worker.index() - first,
                    firsts.contains(&(worker.index() as u32)),
                );
                let kept = keeps
                    .as_deref()
                    .is_some_and(|keeping| keeping.agree_on(worker, place, &table));
                // A first worker that gathers them writes a copy for the next start before
                // it publishes them, when its process's copy is not of these partitions.
                let keep = keeps.clone().map(|keeping| {
                    let replication = replicating.clone();
                    Box::new(move |replicas: &Replicas| {
                        keeping.keep(replicas, &replication, rdf_type)
                    }) as crate::replicas::BeforePublish
                });
                crate::replicas::build(
                    worker,
                    &part,
                    rdf_type,
                    &firsts,
                    (Arc::clone(&table), keep),
                    (&replicating, kept),
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
            keeping: keeping.clone(),
        };
        // The first questions to the other processes: one that stops before answering
        // (killed as the cluster starts) ends this process's workers with it.
        let asked = partitions
            .check_loads()
            .and_then(|()| partitions.learn_names());
        if let Err(error) = asked {
            return Err(if error == super::WORKERS_STOPPED {
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
        partitions.coordinator.set_started();
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
}
