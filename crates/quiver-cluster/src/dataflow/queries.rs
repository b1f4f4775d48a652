//! A pattern's run on the cluster: [`BgpPartitions`] for [`TimelyPartitions`], the plan
//! built from the planner's request, run in place or handed to the coordinator, and
//! waited for under the query's deadline and cancel flag.

use std::sync::{mpsc, Arc};
use std::time::Duration;

use quiver_model::Id;
use quiver_sparql::context::QueryState;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::error::QueryError;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{
    BgpPartitions, Exchanged, Explored, FlowControl, HeldBytes, PartitionTrace, PartitionedBgp,
    WorkerRole, WorkerStep,
};
use quiver_sparql::planner::Spread;
use quiver_sparql::size_free::SizeFreePlans;
use quiver_sparql::table::Table;

use crate::counted::{counted_rows, table_counts};
use crate::dictionary::Ask;
use crate::in_place::{Aside, Enough, InPlace};
use crate::message::{hand_on, route, time_left, Carried, Filter, Plan, WEIGHT};
use crate::route::{aggregate_graph, settled, split_foreign_intersections};

use super::{Arrival, Request, TimelyPartitions};

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

impl TimelyPartitions {
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
            graph,
            rdf_type: self.rdf_type,
            merged: merged.to_vec(),
            aggregate: Some(aggregate.clone()),
            time_left: time_left(state.deadline()),
            max_memory: state.budget().limit(),
            coordinator: self.first,
            ..Plan::empty()
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
