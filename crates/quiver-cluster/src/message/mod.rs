//! The messages of the exploration dataflow ([`crate::dataflow`]) and what they carry: a
//! pattern's plan with the query's limits, rows (or a worker's typed error), the fetch of
//! partner lists and its answer, a cancellation; each message's share of its query's
//! weight, by which the coordinator knows a query is finished; and where rows go next
//! ([`route`]). A message's plan crosses to another process only where the receiver does
//! not hold it yet ([`crate::plans`]), which its wire form ([`Wire`]) leaves out.

use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::Bgp;
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::error::QueryError;
use quiver_sparql::operator::index_aggregate::IndexAggregate;
use quiver_sparql::partitions::{EdgeCheck, Exchanged, ExtremeValues, PassingIds, WorkerStep};
use quiver_sparql::step::Step;
use quiver_sparql::table::{Table, VarId};
use quiver_sparql::top_rows::TopRows;
use serde::{Deserialize, Serialize};

mod routing;

pub(crate) use routing::{route, to_owners, Filter};

/// What every worker needs of one pattern's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Plan {
    pub bgp: Bgp,
    /// The plan with the intersections it cannot keep split
    /// (`route::split_foreign_intersections`).
    pub steps: Vec<Step>,
    pub graph: GraphRef,
    /// The graph's classes, for a step over the objects of `rdf:type`.
    pub classes: Vec<Id>,
    pub rdf_type: Option<PredId>,
    /// The only columns the coordinator reads (`PartitionedBgp::keep`): rows past the last
    /// step leave their worker with these alone.
    pub keep: Option<Vec<VarId>>,
    /// Rows past the last step leave their worker counted by these columns
    /// (`PartitionedBgp::count_by`): each key found once, with its count
    /// (`crate::counted::count_rows`), or uncounted where that would not shrink them
    /// ([`crate::counted::count_if_smaller`]).
    pub count_by: Option<Vec<VarId>>,
    /// The counts of `count_by` are not read (`PartitionedBgp::distinct_only`): each key
    /// leaves once, uncounted, where that makes the rows fewer
    /// ([`crate::counted::distinct_if_smaller`]).
    pub distinct_only: bool,
    /// Before they are counted, the values of these counted columns (read only by MIN or
    /// MAX) are narrowed to each group's extremes (`PartitionedBgp::extremes`,
    /// [`ExtremeValues::narrow`]).
    pub extremes: Option<ExtremeValues>,
    /// Rows past the last step leave their worker cut to the first in an order
    /// (`PartitionedBgp::top`, [`TopRows::cut`]): a top-k's `k` per message.
    pub top: Option<TopRows>,
    /// A FILTER above the pattern passes only these ids of some of its columns
    /// (`PartitionedBgp::passes`): rows that cannot pass are dropped wherever they are
    /// routed from, as soon as they hold the column.
    pub passes: Vec<PassingIds>,
    /// Past the last step, the rows go to the owners of each check's vertex in turn, which
    /// drop those that fail it (`PartitionedBgp::checks`): check `c` is step
    /// `steps.len() + c`.
    pub checks: Vec<EdgeCheck>,
    /// The `FROM` graphs whose merge `graph` is, if it is one.
    pub merged: Vec<Id>,
    /// A count read from the index instead of steps: one hop, on every worker, whose rows
    /// are its counts (`counts_table`).
    pub aggregate: Option<IndexAggregate>,
    /// The most rows a step emits on a worker for one message (a LIMIT's bound; `u64::MAX`
    /// without one). A step that stops there marks its rows truncated.
    pub cap: u64,
    /// Under `cap`, the rows past the last step that answer the caller as they come, when
    /// fewer (`PartitionedBgp::answers`).
    pub answers: Option<u64>,
    /// The query's time left when it was asked, and its limit in seconds.
    pub time_left: Option<(Duration, f64)>,
    /// The query's memory budget, which each worker applies to its own steps.
    pub max_memory: Option<usize>,
    /// Each worker records what it did, and the records travel on with the rows to the
    /// coordinator (EXPLAIN; `PartitionedBgp::trace`).
    pub trace: bool,
    /// The worker that coordinates the query (the first of the process it was asked on),
    /// where its finished rows and errors go.
    pub coordinator: u32,
}

impl Plan {
    /// What a run may stop at, found anywhere (a LIMIT in no order): a LIMIT's bound of
    /// rows, where the rows past the last step are the answer as they are (not counted,
    /// made distinct, cut to an order or narrowed), so that any of them will do; or of
    /// keys, for a count read from the index whose partitions each send their first
    /// groups (`IndexAggregate::first`: each group whole where it is found, or only its
    /// key read), which the coordinator merges by key.
    pub(crate) fn wanted(&self) -> Option<Wanted> {
        if let Some(aggregate) = &self.aggregate {
            let first = aggregate.first.filter(|_| aggregate.key.is_some())?;
            return Some(Wanted::Keys(first as u64));
        }
        let as_they_are = self.count_by.is_none()
            && !self.distinct_only
            && self.extremes.is_none()
            && self.top.is_none();
        let rows = self
            .answers
            .map_or(self.cap, |answers| answers.min(self.cap));
        (self.cap != u64::MAX && as_they_are).then_some(Wanted::Rows(rows))
    }

    /// An empty plan, nothing to run: what a cancellation or a forgetting travels with,
    /// and what stands in for a plan left behind until its receiver restores it.
    pub fn empty() -> Self {
        Self {
            bgp: Bgp::default(),
            steps: Vec::new(),
            graph: GraphRef::Default,
            classes: Vec::new(),
            rdf_type: None,
            keep: None,
            count_by: None,
            distinct_only: false,
            extremes: None,
            top: None,
            passes: Vec::new(),
            checks: Vec::new(),
            merged: Vec::new(),
            aggregate: None,
            cap: u64::MAX,
            answers: None,
            time_left: None,
            max_memory: None,
            trace: false,
            coordinator: 0,
        }
    }

    /// The step number of rows that are finished (for the coordinator).
    pub fn finish(&self) -> usize {
        self.steps.len() + self.checks.len() + usize::from(self.aggregate.is_some())
    }

    /// The ticks the plan's messages may take: one hop per step, and two more (the fetch
    /// and its answer) per kept intersection.
    pub fn ticks(&self) -> usize {
        let fetches = self.steps.iter().filter(|s| s.partner.is_some()).count();
        self.finish() + 2 * fetches
    }

    /// Whether partner lists fetched for this plan may be kept for later ones: those of a
    /// graph, not of a merge's shares (which differ with the graphs merged).
    pub fn keeps_lists(&self) -> bool {
        self.graph != GraphRef::Merged
    }

    /// The plan's cap as a number of rows.
    pub fn cap(&self) -> usize {
        usize::try_from(self.cap).unwrap_or(usize::MAX)
    }
}

/// A worker's error, as it travels to the coordinator.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Failure {
    Timeout(f64),
    Cancelled,
    MemoryLimit(usize),
    Other(String),
}

impl From<QueryError> for Failure {
    fn from(error: QueryError) -> Self {
        match error {
            QueryError::Timeout(seconds) => Failure::Timeout(seconds),
            QueryError::Cancelled => Failure::Cancelled,
            QueryError::MemoryLimit { limit } => Failure::MemoryLimit(limit),
            other => Failure::Other(other.to_string()),
        }
    }
}

impl From<Failure> for QueryError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Timeout(seconds) => QueryError::Timeout(seconds),
            Failure::Cancelled => QueryError::Cancelled,
            Failure::MemoryLimit(limit) => QueryError::MemoryLimit { limit },
            Failure::Other(error) => QueryError::Unsupported(format!("on a worker: {error}")),
        }
    }
}

/// What a message carries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Payload {
    /// Rows to run from the message's step, or the error a worker met.
    Rows(Result<Table, Failure>),
    /// The partner lists of these source values, asked by worker `from` for its batch
    /// `batch`.
    Fetch {
        batch: u64,
        from: u32,
        #[serde(with = "quiver_model::wire::block")]
        values: Vec<Id>,
    },
    /// The answer to a fetch: each value's list, in numbered pieces (a list is never
    /// cut).
    Lists {
        batch: u64,
        lists: Vec<(Id, Vec<Id>)>,
        piece: crate::pieces::Piece,
    },
    /// The query was given up: drop its messages.
    Cancel,
    /// These queries are over: drop what is kept of them (their plans, their states).
    Forget(Vec<u64>),
    /// The sender took in this many of the receiver's messages: its window widens by as
    /// many ([`crate::window`]).
    Credit(u32),
}

impl Payload {
    /// The rows or ids it moves.
    pub(crate) fn rows(&self) -> u64 {
        match self {
            Payload::Rows(rows) => rows.as_ref().map_or(0, |rows| rows.rows as u64),
            Payload::Fetch { values, .. } => values.len() as u64,
            Payload::Lists { lists, .. } => lists.iter().map(|(_, l)| l.len() as u64).sum(),
            Payload::Cancel | Payload::Forget(_) | Payload::Credit(_) => 0,
        }
    }
}

/// What a run may stop at ([`Plan::wanted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// This many rows.
    Rows(u64),
    /// This many distinct values of the rows' first column (the groups' keys).
    Keys(u64),
}

/// Whether a message's plan goes with it to another process ([`crate::plans`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum PlanCopy {
    /// A copy goes with it (within a process, the plan is shared, never copied).
    #[default]
    Sent,
    /// The receiver holds the plan: none goes, and the receiver restores its own.
    Held,
}

/// A message of a query on its way to worker `to` from worker `from`, at step `step` (the
/// plan's `finish`: finished, for the coordinator).
#[derive(Debug, Clone)]
pub(crate) struct Message {
    pub query: u64,
    pub step: u32,
    pub to: u32,
    /// The worker that sent it (set as it is sent: [`crate::plans::Plans::stamp`]).
    pub from: u32,
    pub plan: Arc<Plan>,
    pub plan_copy: PlanCopy,
    /// A kept intersection's step as oriented by the router (`route::orient`).
    pub run: Option<Step>,
    pub payload: Payload,
    /// What the hops before this message moved between workers and handed to it (each
    /// hop hands its count to its first message, so the counts reach the coordinator).
    pub exchanged: Exchanged,
    /// Some step before stopped at the plan's cap: rows may be missing.
    pub truncated: bool,
    /// The message's share of its query's weight ([`WEIGHT`]), or none where a share
    /// became too small to split.
    pub weight: Option<u64>,
    /// Under a traced plan, what the workers of the hops before did (handed on like
    /// `exchanged`); empty otherwise.
    pub trace: Vec<WorkerStep>,
}

/// A message as it crosses between processes (timely's exchange serializes it): the plan
/// only where it goes with it.
#[derive(Serialize)]
struct WireRef<'a> {
    query: u64,
    step: u32,
    to: u32,
    from: u32,
    plan: Option<&'a Plan>,
    run: &'a Option<Step>,
    payload: &'a Payload,
    exchanged: &'a Exchanged,
    truncated: bool,
    weight: Option<u64>,
    trace: &'a [WorkerStep],
}

/// [`WireRef`] as it is read (the same fields in the same order).
#[derive(Deserialize)]
struct Wire {
    query: u64,
    step: u32,
    to: u32,
    from: u32,
    plan: Option<Plan>,
    run: Option<Step>,
    payload: Payload,
    exchanged: Exchanged,
    truncated: bool,
    weight: Option<u64>,
    trace: Vec<WorkerStep>,
}

impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        WireRef {
            query: self.query,
            step: self.step,
            to: self.to,
            from: self.from,
            plan: (self.plan_copy == PlanCopy::Sent).then_some(&*self.plan),
            run: &self.run,
            payload: &self.payload,
            exchanged: &self.exchanged,
            truncated: self.truncated,
            weight: self.weight,
            trace: &self.trace,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Message {
    /// A message whose plan stayed behind comes with an empty one in its place, until the
    /// receiver restores its own ([`crate::plans::Plans::receive`]).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let wire = Wire::deserialize(deserializer)?;
        let (plan, plan_copy) = match wire.plan {
            Some(plan) => (plan, PlanCopy::Sent),
            None => (Plan::empty(), PlanCopy::Held),
        };
        Ok(Message {
            query: wire.query,
            step: wire.step,
            to: wire.to,
            from: wire.from,
            plan: Arc::new(plan),
            plan_copy,
            run: wire.run,
            payload: wire.payload,
            exchanged: wire.exchanged,
            truncated: wire.truncated,
            weight: wire.weight,
            trace: wire.trace,
        })
    }
}

impl Message {
    /// A copy of everything but its payload (which is left a cancellation), for the
    /// pieces of its rows ([`in_pieces`]); what it carries from earlier hops stays with
    /// the first piece, handed on later.
    fn clone_header(&self) -> Message {
        Message {
            query: self.query,
            step: self.step,
            to: self.to,
            from: self.from,
            plan: Arc::clone(&self.plan),
            plan_copy: self.plan_copy,
            run: self.run,
            payload: Payload::Cancel,
            exchanged: Exchanged::default(),
            truncated: self.truncated,
            weight: None,
            trace: Vec::new(),
        }
    }

    /// Whether its rows (or error) are past the plan's last step, for the coordinator.
    pub(crate) fn is_finished(&self) -> bool {
        self.step as usize >= self.plan.finish() && matches!(self.payload, Payload::Rows(_))
    }
}

/// The weight a query starts with. Each message holds a share; a worker that handles a
/// message hands its share on to the messages it sends, split among them (the answers to
/// a fetch bring theirs back to the waiting rows). Once the shares of the messages that
/// reached the coordinator add up to it, no message of the query is on its way anywhere:
/// the query is finished without waiting for timely's progress to pass its last time
/// (weight-throwing termination detection). A share too small to split leaves its query
/// to the progress tracking.
pub(crate) const WEIGHT: u64 = 1 << 63;

/// What a handled message hands on to the messages it sends: what the hops before
/// exchanged, its weight, and under a traced plan, the hops' records.
#[derive(Debug, Clone, Default)]
pub(crate) struct Carried {
    pub exchanged: Exchanged,
    pub weight: Option<u64>,
    pub trace: Vec<WorkerStep>,
}

impl Carried {
    /// Adds what `other` carries (the answers to a worker's fetches, met again).
    pub fn add(&mut self, other: Carried) {
        self.exchanged += other.exchanged;
        self.weight = match (self.weight, other.weight) {
            (Some(a), Some(b)) => a.checked_add(b),
            _ => None,
        };
        WorkerStep::add_all(&mut self.trace, other.trace);
    }
}

/// Shares `weight` among `messages` (none where it is unknown or too small for each to
/// have some).
fn share(messages: &mut [Message], weight: Option<u64>) {
    let count = messages.len() as u64;
    let Some(weight) = weight.filter(|&w| count > 0 && w >= count) else {
        for message in messages {
            message.weight = None;
        }
        return;
    };
    let each = weight / count;
    for message in messages.iter_mut() {
        message.weight = Some(each);
    }
    if let Some(first) = messages.first_mut() {
        first.weight = Some(each + weight % count);
    }
}

/// The most bytes of rows one message carries to another process; larger rows go in
/// pieces. Timely serializes what one worker sends another into a byte slab (1 MiB at
/// first) that doubles its buffers whenever a message does not fit and never gives them
/// back: q1's rows and the terms of q2's million rows on LUBM-1000, one message each, left
/// process 0 holding 96 MiB of buffers for good. Pieces this size, gathered at most [`crate::buffers::CONTAINER_BYTES`]
/// to a container, keep the slabs at their first buffer.
pub(crate) const PIECE_BYTES: usize = 256 << 10;

/// About the bytes of a plan on the wire (its patterns, steps and limits), as a message's
/// size counts it.
const PLAN_BYTES: usize = 1 << 10;

impl crate::buffers::Weighed for Message {
    /// About the bytes it takes on the wire: its ids, and its plan where one goes with it
    /// (a plan is a few hundred bytes; headers are left out).
    fn wire_bytes(&self) -> usize {
        const ID: usize = std::mem::size_of::<Id>();
        let ids = match &self.payload {
            Payload::Rows(Ok(rows)) => rows.rows * rows.columns.len(),
            Payload::Rows(Err(_)) | Payload::Cancel | Payload::Credit(_) => 0,
            Payload::Fetch { values, .. } => values.len(),
            Payload::Lists { lists, .. } => lists.iter().map(|(_, list)| list.len() + 1).sum(),
            Payload::Forget(queries) => 2 * queries.len(),
        };
        let plan = match self.plan_copy {
            PlanCopy::Sent => PLAN_BYTES,
            PlanCopy::Held => 0,
        };
        ids * ID + plan
    }
}

/// `messages` with the rows of each that goes to another process (`remote(to)`) cut into
/// pieces of at most [`PIECE_BYTES`], in order. Every step handles its rows one at a time
/// (a row's successors do not depend on the other rows of its message), so pieces are
/// handled as the whole would be.
fn in_pieces(messages: &mut Vec<Message>, remote: impl Fn(u32) -> bool) {
    use crate::buffers::Weighed;
    let large = |m: &Message| m.wire_bytes() > PIECE_BYTES && remote(m.to);
    if !messages.iter().any(large) {
        return;
    }
    let mut pieces = Vec::with_capacity(messages.len());
    for mut message in messages.drain(..) {
        if !large(&message) {
            pieces.push(message);
            continue;
        }
        let Payload::Rows(Ok(rows)) = &mut message.payload else {
            pieces.push(message);
            continue;
        };
        let rows = std::mem::take(rows);
        let width = rows.columns.len() * std::mem::size_of::<Id>();
        let each = ((PIECE_BYTES - PLAN_BYTES) / width).max(1);
        for start in (0..rows.rows).step_by(each) {
            let mut piece = message.clone_header();
            piece.payload = Payload::Rows(Ok(rows.slice(start, (start + each).min(rows.rows))));
            pieces.push(piece);
        }
    }
    *messages = pieces;
}

/// `messages`, sent by worker `from`, handed what they move to other workers on top of
/// what `carried` says the hops before exchanged (a message of rows always has at least one
/// successor: empty rows travel on too), and `carried`'s weight, shared among them. Under
/// a traced plan, `record` (what `from` did to send them) joins the hops' records, with
/// what the messages move. Rows for another process (`remote(to)`) are cut into pieces
/// first.
pub(crate) fn hand_on(
    messages: &mut Vec<Message>,
    from: u32,
    carried: Carried,
    record: Option<WorkerStep>,
    remote: impl Fn(u32) -> bool,
) {
    in_pieces(messages, remote);
    share(messages, carried.weight);
    let mut sent = Exchanged::default();
    for message in messages.iter().filter(|m| m.to != from) {
        sent.messages += 1;
        sent.rows += message.payload.rows();
        sent.bytes += bincode::serialized_size(message).unwrap_or(0);
    }
    let mut exchanged = carried.exchanged;
    exchanged += sent;
    let mut trace = carried.trace;
    if let Some(record) = record {
        WorkerStep::add_all(&mut trace, [WorkerStep { sent, ..record }]);
    }
    if let Some(first) = messages.first_mut() {
        first.exchanged = exchanged;
        first.trace = trace;
    }
}

/// A time left of `deadline`, from now (zero when past).
pub(crate) fn time_left(deadline: Option<(Instant, f64)>) -> Option<(Duration, f64)> {
    deadline.map(|(at, seconds)| (at.saturating_duration_since(Instant::now()), seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message() -> Message {
        Message {
            query: 0,
            step: 0,
            to: 0,
            from: 0,
            plan: Arc::new(Plan::empty()),
            plan_copy: PlanCopy::Sent,
            run: None,
            payload: Payload::Cancel,
            exchanged: Exchanged::default(),
            truncated: false,
            weight: None,
            trace: Vec::new(),
        }
    }

    fn rows_to(to: u32, rows: usize, width: usize) -> Message {
        let columns: Vec<Vec<Id>> = (0..width)
            .map(|c| (0..rows).map(|r| (r * width + c) as Id).collect())
            .collect();
        Message {
            to,
            payload: Payload::Rows(Ok(Table {
                vars: (0..width).collect(),
                columns,
                rows,
            })),
            ..message()
        }
    }

    #[test]
    fn rows_for_another_process_go_in_pieces_that_add_up_to_them() {
        use crate::buffers::Weighed;
        // 200,000 rows of 3 columns (2.4 MB) to worker 1 of another process, the same to
        // worker 0 of this one, and a few rows to worker 1.
        let big = rows_to(1, 200_000, 3);
        let whole = match &big.payload {
            Payload::Rows(Ok(rows)) => rows.clone(),
            _ => unreachable!(),
        };
        let mut messages = vec![big, rows_to(0, 200_000, 3), rows_to(1, 10, 3)];
        let carried = Carried {
            exchanged: Exchanged::default(),
            weight: Some(WEIGHT),
            trace: Vec::new(),
        };
        hand_on(&mut messages, 0, carried, None, |to| to == 1);
        let pieces: Vec<&Message> = messages.iter().filter(|m| m.to == 1).collect();
        assert!(pieces.len() > 8, "{} pieces", pieces.len());
        assert!(pieces.iter().all(|m| m.wire_bytes() <= PIECE_BYTES));
        let tables: Vec<Table> = pieces[..pieces.len() - 1]
            .iter()
            .map(|m| match &m.payload {
                Payload::Rows(Ok(rows)) => rows.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            Table::concat(tables),
            whole,
            "the pieces, in order, are the rows"
        );
        // Rows that stay in the process travel whole; the small message too.
        let local: Vec<&Message> = messages.iter().filter(|m| m.to == 0).collect();
        assert_eq!(local.len(), 1);
        assert_eq!(local[0].payload.rows(), 200_000);
        assert_eq!(messages.last().unwrap().payload.rows(), 10);
        // The query's weight is shared among all of them, whole.
        let weights: u64 = messages.iter().map(|m| m.weight.unwrap()).sum();
        assert_eq!(weights, WEIGHT);
        // What they move counts every piece.
        let sent = messages[0].exchanged;
        assert_eq!(sent.messages, pieces.len() as u64);
        assert_eq!(sent.rows, 200_010);
    }

    #[test]
    fn a_weight_is_shared_whole_and_never_as_zero() {
        for (weight, count) in [(WEIGHT, 1), (WEIGHT, 3), (7, 7), (10, 4), (1 << 20, 1000)] {
            let mut messages = vec![message(); count];
            share(&mut messages, Some(weight));
            let shares: Vec<u64> = messages.iter().map(|m| m.weight.unwrap()).collect();
            assert_eq!(shares.iter().sum::<u64>(), weight, "{weight} over {count}");
            assert!(shares.iter().all(|&w| w > 0), "{shares:?}");
        }
        // Too small to give each a share, or unknown: none has one.
        for weight in [Some(3), None] {
            let mut messages = vec![message(); 4];
            share(&mut messages, weight);
            assert!(messages.iter().all(|m| m.weight.is_none()));
        }
    }
}
