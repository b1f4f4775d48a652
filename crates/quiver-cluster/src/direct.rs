//! Light hops between processes without the dataflow: the rows of a light query that
//! leave the asking process go straight to the process that holds what they read, over a
//! connection of their own, where a thread runs them in place ([`crate::in_place`]) and
//! answers with the rows that came out: finished ones, and those for yet another process.
//! A light query that crosses processes thus costs one round trip per hop, as in
//! Wukong's in-place execution, and never waits behind another query's step on a worker.
//!
//! Why beside timely, which carries everything else: a hop through the dataflow wakes, on
//! each way, the connection's send thread, then the receiving worker through the receive
//! thread, and runs the dataflow's operators before and after the step. Measured on 2
//! processes of a 2-core machine: a light query that crosses to the other process and back
//! takes about 130 µs through the dataflow, against 30 µs for a request and its answer on
//! one connection, each side blocked in its read (`bench/wake-latency.rs`). The connections
//! are TCP, or Unix sockets between processes of one machine ([`crate::line`]). Only light
//! work goes this way, bounded as a run in place is (few rows per message, few messages,
//! [`ROUNDS`] round trips): the messages are timely's own (their weights, exchange counts
//! and traces handed on alike), a request is a plan and its messages (or the record sizes
//! the planner wants of their owners, [`Lines::degrees`]), an answer the messages that came
//! out, each bincode framed by its length. Whatever is not light, finds no idle connection,
//! or meets any failure of a connection goes to the dataflow as it stands, which finishes
//! it; a connection's failure loses nothing, since the asker keeps what it sent until the
//! answer came.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use quiver_sparql::context::QueryState;
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::error::QueryError;
use serde::{Deserialize, Serialize};

use crate::in_place::{Aside, Enough, InPlace, LocalParts};
use crate::learnt::RecordsRead;
use crate::line::Line;
use crate::message::{Failure, Message, Payload, Plan, PlanCopy};
use crate::route::IN_PLACE_ROWS;

/// Connections each process keeps to ask each other process: the light queries it can
/// send at once to one process (one more finds none idle and goes to the dataflow). Each
/// is served by a thread of the other process, parked in its read while idle.
pub(crate) const LINES: usize = 4;

/// Round trips one run takes over the connections at most before the rest goes to the
/// dataflow: a light query's hops.
const ROUNDS: usize = 4;

/// The largest request or answer read (a light query's few rows are far below it): a
/// length past it is a broken connection, not a buffer to allocate.
const MOST_BYTES: usize = 64 << 20;

/// How long an asker waits in its read before it checks its query's deadline, cancel flag
/// and the other processes' heartbeat.
const PATIENCE: Duration = Duration::from_millis(5);

/// A request, as it is written: one query's plan and its messages (which travel without
/// it), or the sizes of records the planner wants.
#[derive(Serialize)]
enum RequestRef<'a> {
    Run {
        plan: &'a Plan,
        messages: &'a [Message],
    },
    Degrees(&'a [DegreeAsk]),
}

/// A request, as it is read (the same variants in the same order).
#[derive(Deserialize)]
enum Request {
    Run {
        plan: Box<Plan>,
        messages: Vec<Message>,
    },
    Degrees(Vec<DegreeAsk>),
}

/// An answer: to a run, or the sizes asked, in order.
#[derive(Serialize, Deserialize)]
enum Reply {
    Ran(Answer),
    Degrees(Vec<u64>),
}

/// What a run asked by another process came to: the messages that came out of it
/// (finished ones, those for another process, and any it did not run) without their plan,
/// the messages it handled, whether the rows it found met the plan's LIMIT, the query's
/// failure there (its deadline passed, its memory budget ran out), and the records its
/// walks read there, for the asker to keep ([`crate::learnt`]).
#[derive(Serialize, Deserialize)]
struct Answer {
    messages: Vec<Message>,
    handled: u64,
    stopped: bool,
    failed: Option<Failure>,
    read: RecordsRead,
}

/// This process's connections to ask the others, idle ones by process.
pub(crate) struct Lines {
    process: usize,
    idle: Vec<Mutex<Vec<Line>>>,
    /// Requests answered over the connections so far, and of them over Unix sockets.
    trips: AtomicU64,
    unix_trips: AtomicU64,
    /// How long a request takes from its sending to its answer, in nanoseconds: a moving
    /// average over the last few (0: none asked yet).
    round_trip: AtomicU64,
}

impl Lines {
    /// `asks[p]`: the connections on which this process (`process`) asks process `p`.
    /// An asker's read waits [`PATIENCE`] at a time (a connection that cannot is not
    /// used).
    pub(crate) fn new(process: usize, asks: Vec<Vec<Line>>) -> Self {
        let patient = |lines: Vec<Line>| {
            lines
                .into_iter()
                .filter(|line| line.set_read_timeout(Some(PATIENCE)).is_ok())
                .collect()
        };
        Self {
            process,
            idle: asks.into_iter().map(patient).map(Mutex::new).collect(),
            trips: AtomicU64::new(0),
            unix_trips: AtomicU64::new(0),
            round_trip: AtomicU64::new(0),
        }
    }

    /// How long a request over the connections takes, averaged over the last few, if one
    /// was answered: what a question of record sizes costs.
    pub(crate) fn round_trip(&self) -> Option<Duration> {
        match self.round_trip.load(Ordering::Relaxed) {
            0 => None,
            nanos => Some(Duration::from_nanos(nanos)),
        }
    }

    /// Takes in the time of a round of requests, sent at `sent`, all answered.
    fn timed(&self, sent: std::time::Instant) {
        let took = sent.elapsed().as_nanos().clamp(1, u128::from(u64::MAX)) as u64;
        // Askers racing may lose one another's sample: an average all the same.
        let average = match self.round_trip.load(Ordering::Relaxed) {
            0 => took,
            before => (before / 8 * 7 + took / 8).max(1),
        };
        self.round_trip.store(average, Ordering::Relaxed);
    }

    /// Requests answered over the connections so far, and of them over Unix sockets (to
    /// processes of this machine, [`crate::line`]).
    pub(crate) fn trips(&self) -> (u64, u64) {
        (
            self.trips.load(Ordering::Relaxed),
            self.unix_trips.load(Ordering::Relaxed),
        )
    }

    /// Counts a request answered on `line`.
    fn answered(&self, line: &Line) {
        self.trips.fetch_add(1, Ordering::Relaxed);
        if line.is_local() {
            self.unix_trips.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Goes on with what a run in place left (`messages`, finished ones among them, all of
    /// `plan`) while it stays light: each round asks every other process for the messages
    /// that go there, runs this process's share in place meanwhile, and takes what came
    /// out for the next round. Ends as a run in place does: done, or handed on to the
    /// dataflow as it stands, weights intact. `silent` tells why another process counts as
    /// gone.
    pub(crate) fn run(
        &self,
        messages: Vec<Message>,
        plan: &Arc<Plan>,
        local: &LocalParts,
        state: &QueryState,
        silent: &dyn Fn() -> Option<String>,
    ) -> Result<InPlace, QueryError> {
        let (mut finished, mut pending): (Vec<Message>, Vec<Message>) =
            messages.into_iter().partition(Message::is_finished);
        let mut handled = 0;
        for _ in 0..ROUNDS {
            if pending.is_empty() {
                return Ok(InPlace::Done(finished, handled, Enough::All));
            }
            let light = pending.iter().all(|m| {
                matches!(m.payload, Payload::Rows(_)) && m.payload.rows() <= IN_PLACE_ROWS
            });
            if !light {
                break;
            }
            let mut by_process: BTreeMap<usize, Vec<Message>> = BTreeMap::new();
            for message in pending.drain(..) {
                by_process
                    .entry(local.process_of(message.to))
                    .or_default()
                    .push(message);
            }
            let here = by_process.remove(&self.process).unwrap_or_default();
            // A connection to every process asked, or all goes to the dataflow.
            let lines: Vec<Line> = by_process
                .keys()
                .map_while(|&process| self.take(process))
                .collect();
            if lines.len() < by_process.len() {
                for (line, &process) in lines.into_iter().zip(by_process.keys()) {
                    self.give_back(process, line);
                }
                pending.extend(here);
                pending.extend(by_process.into_values().flatten());
                break;
            }
            let mut refused = false;
            let mut sent = Vec::with_capacity(lines.len());
            let sending = std::time::Instant::now();
            for ((process, mut batch), mut line) in by_process.into_iter().zip(lines) {
                match send(&mut line, plan, &mut batch) {
                    Ok(()) => sent.push((process, batch, line)),
                    // A broken connection is dropped; its rows go to the dataflow.
                    Err(_) => {
                        refused = true;
                        pending.extend(batch);
                    }
                }
            }
            // This process's share runs while the others run theirs.
            let ran_here = match here.is_empty() {
                true => Ok(None),
                false => local.run(here, state, Aside::Always).map(Some),
            };
            let (mut stopped, mut failure) = (false, None);
            for (process, batch, mut line) in sent {
                let answer = match receive(&mut line, &mut query_checks(state, silent)) {
                    Ok(Reply::Ran(answer)) => answer,
                    Err(Waited::Query(error)) => return Err(error),
                    Ok(Reply::Degrees(_)) | Err(Waited::Broken) => {
                        refused = true;
                        pending.extend(batch);
                        continue;
                    }
                };
                self.answered(&line);
                self.give_back(process, line);
                local.learnt().learn(answer.read);
                if let Some(failed) = answer.failed {
                    failure.get_or_insert(failed);
                    continue;
                }
                handled += answer.handled as usize;
                stopped |= answer.stopped;
                let mut messages = answer.messages;
                for message in &mut messages {
                    restore(message, plan);
                }
                refused |= sort_out(messages, process, local, (&mut finished, &mut pending));
            }
            if !refused {
                self.timed(sending);
            }
            match ran_here? {
                Some(InPlace::Done(done, ran, enough)) => {
                    handled += ran;
                    finished.extend(done);
                    stopped |= enough == Enough::Stopped;
                }
                Some(InPlace::HandOff(left, ran)) => {
                    handled += ran;
                    refused |= sort_out(left, self.process, local, (&mut finished, &mut pending));
                }
                None => {}
            }
            if let Some(failure) = failure {
                // The query's own error where it has one (its deadline passed here too).
                state.check()?;
                return Err(failure.into());
            }
            if stopped {
                return Ok(InPlace::Done(finished, handled, Enough::Stopped));
            }
            if refused {
                break;
            }
        }
        pending.append(&mut finished);
        Ok(InPlace::HandOff(pending, handled))
    }

    /// The sizes of the records `asks` names, asked of their owners at once (those this
    /// process holds read here), in order; `None` where a connection is not idle or failed
    /// (ask through the dataflow then). `silent` tells why another process counts as gone.
    pub(crate) fn degrees(
        &self,
        asks: &[DegreeAsk],
        local: &LocalParts,
        silent: &dyn Fn() -> Option<String>,
    ) -> Result<Option<Vec<u64>>, QueryError> {
        let started = std::time::Instant::now();
        let mut sizes = vec![0; asks.len()];
        let mut by_process: BTreeMap<usize, (Vec<usize>, Vec<DegreeAsk>)> = BTreeMap::new();
        for (position, ask) in asks.iter().enumerate() {
            let owner = local.owner(ask.vertex);
            match local.part(owner) {
                Some(part) => sizes[position] = ask.count(part),
                None => {
                    let (positions, asked) = by_process.entry(local.process_of(owner)).or_default();
                    positions.push(position);
                    asked.push(*ask);
                }
            }
        }
        let mut lines = Vec::with_capacity(by_process.len());
        for &process in by_process.keys() {
            match self.take(process) {
                Some(line) => lines.push((process, line)),
                None => {
                    for (process, line) in lines {
                        self.give_back(process, line);
                    }
                    return Ok(None);
                }
            }
        }
        let mut failed = false;
        let mut sent = Vec::with_capacity(lines.len());
        for ((process, mut line), (positions, asked)) in lines.into_iter().zip(by_process.values())
        {
            let request = bincode::serialize(&RequestRef::Degrees(asked));
            let written = request
                .map_err(std::io::Error::other)
                .and_then(|bytes| write_frame(&mut line, &bytes));
            match written {
                Ok(()) => sent.push((process, line, positions)),
                Err(_) => failed = true,
            }
        }
        let mut check = || match silent() {
            Some(why) => Err(Waited::Query(QueryError::Cluster(why))),
            None => Ok(()),
        };
        for (process, mut line, positions) in sent {
            match receive(&mut line, &mut check) {
                Ok(Reply::Degrees(found)) if found.len() == positions.len() => {
                    self.answered(&line);
                    self.give_back(process, line);
                    for (&position, size) in positions.iter().zip(found) {
                        sizes[position] = size;
                    }
                }
                Err(Waited::Query(error)) => return Err(error),
                Ok(_) | Err(Waited::Broken) => failed = true,
            }
        }
        if !failed && !by_process.is_empty() {
            self.timed(started);
        }
        Ok((!failed).then_some(sizes))
    }

    fn take(&self, process: usize) -> Option<Line> {
        self.idle
            .get(process)?
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
    }

    fn give_back(&self, process: usize, line: Line) {
        if let Some(idle) = self.idle.get(process) {
            idle.lock().unwrap_or_else(|e| e.into_inner()).push(line);
        }
    }
}

/// Sorts what came out of a run in place on `process` into the finished messages and those
/// still to go; whether one of these was left unrun there (too heavy to run in place),
/// which sends the rest to the dataflow.
fn sort_out(
    messages: Vec<Message>,
    process: usize,
    local: &LocalParts,
    (finished, pending): (&mut Vec<Message>, &mut Vec<Message>),
) -> bool {
    let mut refused = false;
    for message in messages {
        if message.is_finished() {
            finished.push(message);
        } else {
            refused |= local.process_of(message.to) == process;
            pending.push(message);
        }
    }
    refused
}

/// A message as the process that reads it has it: with the plan of its query, shared.
fn restore(message: &mut Message, plan: &Arc<Plan>) {
    message.plan = Arc::clone(plan);
    message.plan_copy = PlanCopy::Sent;
}

/// Writes one request: the plan once, the messages without it (they keep it here).
fn send(line: &mut Line, plan: &Plan, batch: &mut [Message]) -> std::io::Result<()> {
    for message in batch.iter_mut() {
        message.plan_copy = PlanCopy::Held;
    }
    let bytes = bincode::serialize(&RequestRef::Run {
        plan,
        messages: batch,
    });
    for message in batch.iter_mut() {
        message.plan_copy = PlanCopy::Sent;
    }
    write_frame(line, &bytes.map_err(std::io::Error::other)?)
}

fn write_frame(line: &mut Line, bytes: &[u8]) -> std::io::Result<()> {
    let length = u32::try_from(bytes.len())
        .ok()
        .filter(|&length| length as usize <= MOST_BYTES)
        .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidData, "a request too large"))?;
    let mut frame = Vec::with_capacity(4 + bytes.len());
    frame.extend_from_slice(&length.to_le_bytes());
    frame.extend_from_slice(bytes);
    line.write_all(&frame)
}

/// Why an asker stopped waiting for an answer.
enum Waited {
    /// The query's deadline passed, it was cancelled, or another process went silent.
    Query(QueryError),
    /// The connection failed (closed, or a malformed answer): it is dropped.
    Broken,
}

/// What an asker checks while it waits for an answer: its query's deadline and cancel
/// flag, and whether another process went silent.
fn query_checks<'a>(
    state: &'a QueryState,
    silent: &'a dyn Fn() -> Option<String>,
) -> impl FnMut() -> Result<(), Waited> + 'a {
    move || {
        state.check().map_err(Waited::Query)?;
        match silent() {
            Some(why) => Err(Waited::Query(QueryError::Cluster(why))),
            None => Ok(()),
        }
    }
}

/// Reads one answer, calling `check` each time it waited [`PATIENCE`] (the connection's
/// read timeout).
fn receive(
    line: &mut Line,
    check: &mut dyn FnMut() -> Result<(), Waited>,
) -> Result<Reply, Waited> {
    let bytes = read_frame(line, check)?;
    bincode::deserialize(&bytes).map_err(|_| Waited::Broken)
}

/// Reads one request or answer: its length, then its bytes.
fn read_frame(
    line: &mut Line,
    check: &mut dyn FnMut() -> Result<(), Waited>,
) -> Result<Vec<u8>, Waited> {
    let mut length = [0u8; 4];
    read_all(line, &mut length, check)?;
    let length = u32::from_le_bytes(length) as usize;
    if length > MOST_BYTES {
        return Err(Waited::Broken);
    }
    let mut bytes = vec![0u8; length];
    read_all(line, &mut bytes, check)?;
    Ok(bytes)
}

/// Fills `buffer` from `line`, calling `check` each time a read times out.
fn read_all(
    line: &mut Line,
    buffer: &mut [u8],
    check: &mut dyn FnMut() -> Result<(), Waited>,
) -> Result<(), Waited> {
    let mut filled = 0;
    while filled < buffer.len() {
        match line.read(&mut buffer[filled..]) {
            Ok(0) => return Err(Waited::Broken),
            Ok(read) => filled += read,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => check()?,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(Waited::Broken),
        }
    }
    Ok(())
}

/// Serves the requests another process asks on `line` until it closes: each runs in place
/// on this process's partitions, and its answer goes back on the same connection.
pub(crate) fn serve(mut line: Line, local: Arc<LocalParts>) {
    // No read timeout here: a read waits for the next request.
    while let Ok(bytes) = read_frame(&mut line, &mut || Ok(())) {
        let reply = match bincode::deserialize::<Request>(&bytes) {
            Ok(Request::Run { plan, messages }) => Reply::Ran(answer(*plan, messages, &local)),
            Ok(Request::Degrees(asks)) => Reply::Degrees(
                asks.iter()
                    .map(|ask| {
                        local
                            .part(local.owner(ask.vertex))
                            .map_or(0, |part| ask.count(part))
                    })
                    .collect(),
            ),
            Err(_) => return,
        };
        let written = bincode::serialize(&reply)
            .map_err(std::io::Error::other)
            .and_then(|bytes| write_frame(&mut line, &bytes));
        if written.is_err() {
            return;
        }
    }
}

/// Runs a request's messages in place here: what came out, without their plan.
fn answer(plan: Plan, mut messages: Vec<Message>, local: &LocalParts) -> Answer {
    let state = local.state_for(&plan);
    let plan = Arc::new(plan);
    for message in &mut messages {
        restore(message, &plan);
    }
    let mut read = RecordsRead::default();
    let ran = local.run_reading(messages, &state, Aside::Always, Some(&mut read));
    let (mut messages, handled, stopped, failed) = match ran {
        Ok(InPlace::Done(finished, handled, enough)) => {
            (finished, handled, enough == Enough::Stopped, None)
        }
        Ok(InPlace::HandOff(messages, handled)) => (messages, handled, false, None),
        Err(error) => (Vec::new(), 0, false, Some(Failure::from(error))),
    };
    for message in &mut messages {
        message.plan_copy = PlanCopy::Held;
    }
    Answer {
        messages,
        handled: handled as u64,
        stopped,
        failed,
        read,
    }
}
