//! Basic graph patterns over a store cut into partitions (scale-out): the interface
//! between the evaluator and an executor that runs a BGP's steps where its vertices live.
//!
//! The query is planned and its other operators run on one store (the coordinator's,
//! whose dictionary and predicate ids every partition shares); each basic graph pattern
//! is handed, with its plan and its input rows, to a [`BgpPartitions`], which runs the
//! steps on the partitions (`quiver-cluster`) through [`crate::exec::bgp::explore::run_step`]
//! and returns every row. Rows may come back in any order: a BGP's rows are a bag. Property
//! paths and DESCRIBE ask for edges the same way (`crate::exec::edges`), and counts read
//! from the index are counted by each partition and added up by the caller. The planner
//! asks the sizes of the records the coordinator's partition lacks in one batch
//! ([`BgpPartitions::degrees`]).

use crate::bgp::Bgp;
use crate::context::QueryState;
use crate::dataset::GraphRef;
use crate::degree::DegreeAsk;
pub use crate::edge_checks::EdgeCheck;
use crate::error::QueryError;
pub use crate::extreme_values::ExtremeValues;
use crate::operator::index_aggregate::{Counts, IndexAggregate};
pub use crate::passing_ids::PassingIds;
use crate::step::Step;
use crate::table::Table;
pub use crate::top_rows::TopRows;

/// One basic graph pattern to run over the partitions.
pub struct PartitionedBgp<'a> {
    pub bgp: &'a Bgp,
    /// The plan (steps may be fused intersections; the executor splits what it must).
    pub steps: &'a [Step],
    /// The graph the pattern reads, resolved on each partition.
    pub graph: GraphRef,
    /// With [`GraphRef::Merged`], the names of the `FROM` graphs merged: each partition
    /// merges its own shares of them (the share of the merge).
    pub merged: &'a [quiver_model::Id],
    /// The rows the exploration starts from (one empty row, or a join's left rows).
    pub input: Table,
    /// The query's checks and memory budget, for the steps' contexts.
    pub state: &'a QueryState,
    /// The only columns the caller reads (`None`: all): the partitions may drop the others
    /// before the rows leave the workers, down to none (a count). Only set where the
    /// pattern has no equalities, which read their columns after the partitions.
    pub keep: Option<Vec<crate::table::VarId>>,
    /// The rows a LIMIT (or the result cap) asks of the pattern, if any: the partitions
    /// may stop each step at a bound of rows and return fewer rows than exist, at least
    /// these many when there are that many (any of them answer the LIMIT).
    pub limit: Option<usize>,
    /// Under `limit`, the rows that answer the caller as they come, when fewer: the rows
    /// pass everything the caller would drop them for (a FILTER or MINUS decided by the
    /// partitions' `checks`), while a round of the evaluator's `grow_until` asks each
    /// step for more than its LIMIT in case they do not. The partitions may return as few
    /// as these many, cut.
    pub answers: Option<usize>,
    /// Only the number of rows per distinct value of these columns is read (a GROUP BY
    /// whose keys and aggregates read these columns alone, or a DISTINCT): the partitions may count the rows by these keys
    /// where they are found and return each key they found with its count
    /// ([`Explored::counts`]) instead of the rows. Only set without `limit` and where the
    /// pattern has no equalities.
    pub count_by: Option<Vec<crate::table::VarId>>,
    /// Under `count_by`, only which keys were found is read, not how many rows each
    /// stands for (a DISTINCT; the row numbers an EXISTS pattern found): the partitions
    /// may send each key once, without its count, where that makes the rows fewer.
    pub distinct_only: bool,
    /// Only the first rows in an order are read (an ORDER BY of variables under a LIMIT,
    /// right above the pattern): the partitions may keep, of the rows each worker sends
    /// on, those [`TopRows::cut`] keeps. Only set without `limit` and `count_by` and
    /// where the pattern has no equalities.
    pub top: Option<TopRows>,
    /// Under `count_by`, these of its columns are read only by MIN or MAX: the partitions
    /// may replace their values by each group's least or greatest before counting
    /// ([`ExtremeValues::narrow`]). Only set with `count_by`.
    pub extremes: Option<ExtremeValues>,
    /// A FILTER right above the pattern holds only for these ids of some of its columns
    /// (where it is decided by ranges of the sorted dictionary's ids): the partitions may
    /// drop the rows it cannot pass where they find them ([`PassingIds::keep`]). The
    /// FILTER still runs over what they return.
    pub passes: Vec<PassingIds>,
    /// FILTER (NOT) EXISTS of one edge right above the pattern ([`EdgeCheck`]): the
    /// partitions must drop the rows that fail them, each checked at the owner of its
    /// vertex after the last step, before the rows leave the workers; the FILTER does not
    /// run them again. Under a LIMIT, the rows returned are counted after the checks.
    pub checks: Vec<EdgeCheck>,
    /// Record what each worker did at each step ([`PartitionTrace`], for EXPLAIN): the
    /// messages of a cluster's run then carry their records to the coordinator.
    pub trace: bool,
}

/// What a pattern's run over the partitions answers: its rows, and with
/// [`PartitionedBgp::trace`], what the workers did.
#[derive(Debug, Default)]
pub struct Explored {
    pub rows: Table,
    pub trace: Option<PartitionTrace>,
    /// Under [`PartitionedBgp::count_by`], where the partitions counted: `rows` holds the
    /// keys alone and each row stands for `counts[row]` rows (a key may come more than
    /// once, from several partitions).
    pub counts: Option<Vec<u64>>,
}

impl From<Table> for Explored {
    fn from(rows: Table) -> Self {
        Self {
            rows,
            trace: None,
            counts: None,
        }
    }
}

/// What the workers of a pattern's run did, for EXPLAIN.
#[derive(Debug, Clone, Default)]
pub struct PartitionTrace {
    /// The executor, in words ([`BgpPartitions::name`]).
    pub executor: String,
    /// The steps as the partitions ran them: an intersection whose lists they cannot
    /// keep together runs as a walk and a check, two steps.
    pub steps: Vec<Step>,
    /// What each worker did at each of those steps, summed over its messages (and over the
    /// runs a LIMIT repeated with a larger bound).
    pub work: Vec<WorkerStep>,
    /// The rows left each worker counted by these keys ([`PartitionedBgp::count_by`]).
    pub counted_by: Option<Vec<crate::table::VarId>>,
    /// The rows left each worker cut to a top-k's first rows ([`PartitionedBgp::top`]).
    pub cut_to: Option<TopRows>,
    /// The values read only by MIN or MAX were narrowed on each worker before it counted
    /// ([`PartitionedBgp::extremes`]).
    pub narrowed: Option<ExtremeValues>,
    /// The rows each worker found were filtered by these ranges of ids before they left
    /// it ([`PartitionedBgp::passes`]).
    pub filtered: Vec<PassingIds>,
    /// The rows were checked at the owners of their vertices by these checks
    /// ([`PartitionedBgp::checks`]): in [`PartitionTrace::work`], the steps after the last.
    pub checked: Vec<EdgeCheck>,
}

/// What a worker did in a step of a pattern's run over partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum WorkerRole {
    /// Sent the pattern's input rows to where its first step runs (the coordinator).
    Start,
    /// Ran the step on the rows that reached it: a walk, a check, an index read, or an
    /// intersection with the partner lists it holds or fetched.
    Ran,
    /// Ran the walk of an intersection it split at run time (cheaper than fetching the
    /// partner lists): its rows go on to be checked.
    Walked,
    /// Checked the rows of an intersection split at run time against the partner pattern
    /// at the partner's owner.
    Checked,
    /// Answered other workers' fetches of the partner lists it holds: rows in are the
    /// values asked, rows out the ids of their lists.
    Lent,
    /// Filtered the rows it sent on by a check it could answer where they were (the
    /// `rdf:type` memberships every process of a cluster holds): no hop of its own.
    Filtered,
    /// Gave each row the classes of its instance, a walk out of `rdf:type` answered where
    /// the rows were from the memberships every process of a cluster holds: no hop of its
    /// own.
    Typed,
    /// Walked a replicated predicate (a small one, which every process of a cluster
    /// holds) from each row where the rows were: no hop of its own.
    WalkedHere,
    /// Walked or checked, where the rows were, records of another process that it sent
    /// with an earlier light query's rows (a cluster's learnt records): no hop of its own.
    Recalled,
    /// Read the pattern's first rows in object order for a top-k above it
    /// (`ORDER BY ?o LIMIT k` over `?s p ?o`) and sent them on: the plan's steps did not
    /// run on its partition.
    Ordered,
}

impl WorkerRole {
    /// The role in EXPLAIN's words.
    pub fn name(self) -> &'static str {
        match self {
            WorkerRole::Start => "start",
            WorkerRole::Ran => "ran",
            WorkerRole::Walked => "walked",
            WorkerRole::Checked => "checked",
            WorkerRole::Lent => "lent lists",
            WorkerRole::Filtered => "filtered",
            WorkerRole::Typed => "typed here",
            WorkerRole::WalkedHere => "walked here",
            WorkerRole::Recalled => "recalled",
            WorkerRole::Ordered => "read in order",
        }
    }
}

/// One worker's work in one role at one step (of [`PartitionTrace::steps`]).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WorkerStep {
    pub step: u32,
    pub worker: u32,
    pub role: WorkerRole,
    /// Messages it handled.
    pub messages: u64,
    pub rows_in: u64,
    pub rows_out: u64,
    /// Time it spent on them.
    pub micros: f64,
    /// What it sent to other workers.
    pub sent: Exchanged,
}

impl WorkerStep {
    /// The record of one message `worker` took in at `step`, with `rows_in` rows (its rows
    /// out, time and what it sent are filled in once handled).
    pub fn new(step: u32, worker: u32, role: WorkerRole, rows_in: u64) -> Self {
        Self {
            step,
            worker,
            role,
            messages: 1,
            rows_in,
            rows_out: 0,
            micros: 0.0,
            sent: Exchanged::default(),
        }
    }

    /// Adds `records` to `work`, each to the record of its step, worker and role.
    pub fn add_all(work: &mut Vec<WorkerStep>, records: impl IntoIterator<Item = WorkerStep>) {
        for record in records {
            let same = |w: &&mut WorkerStep| {
                (w.step, w.worker, w.role) == (record.step, record.worker, record.role)
            };
            match work.iter_mut().find(same) {
                Some(into) => {
                    into.messages += record.messages;
                    into.rows_in += record.rows_in;
                    into.rows_out += record.rows_out;
                    into.micros += record.micros;
                    into.sent += record.sent;
                }
                None => work.push(record),
            }
        }
    }
}

/// What moved between the partitions' workers: messages, the rows they carried and their
/// bytes as serialized between processes. Rows that stay with a worker are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exchanged {
    pub messages: u64,
    pub rows: u64,
    pub bytes: u64,
}

/// Memory a process holds for its part in the partitions beside their data, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldBytes {
    /// Buffers of the network between the processes.
    pub network_buffers: u64,
    /// The most those buffers held at once since the process started.
    pub network_buffers_peak: u64,
    /// What is replicated on every process (a cluster's `rdf:type` memberships and small
    /// predicates' edges).
    pub replicated: u64,
}

/// What a cluster's flow control between processes did since this process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowControl {
    /// Messages held back until their receiver took in earlier ones.
    pub waited: u64,
    /// The most messages one worker had in flight to a worker of another process.
    pub most_in_flight: u64,
    /// The most it may have.
    pub window: u64,
}

impl std::ops::AddAssign for Exchanged {
    fn add_assign(&mut self, other: Self) {
        self.messages += other.messages;
        self.rows += other.rows;
        self.bytes += other.bytes;
    }
}

impl std::ops::Sub for Exchanged {
    type Output = Self;

    fn sub(self, earlier: Self) -> Self {
        Self {
            messages: self.messages - earlier.messages,
            rows: self.rows - earlier.rows,
            bytes: self.bytes - earlier.bytes,
        }
    }
}

/// An executor of basic graph patterns over partitions.
pub trait BgpPartitions: Send + Sync + std::fmt::Debug {
    /// The number of partitions, in words, for EXPLAIN.
    fn name(&self) -> String;

    /// Everything exchanged between workers by the runs so far (zero where nothing moves
    /// between processes or threads).
    fn exchanged(&self) -> Exchanged {
        Exchanged::default()
    }

    /// Memory this process holds for the partitions beside their data (none by default).
    fn held_bytes(&self) -> HeldBytes {
        HeldBytes::default()
    }

    /// What the flow control between processes did (nothing by default).
    fn flow_control(&self) -> FlowControl {
        FlowControl::default()
    }

    /// Why the partitions cannot answer any query now, if they cannot (a process of a
    /// cluster ended or its connection closed); `None` while they can.
    fn unavailable(&self) -> Option<String> {
        None
    }

    /// How the store's records spread over the partitions, for the planner's cost of
    /// the rows a plan moves between them.
    fn spread(&self) -> crate::planner::Spread;

    /// The sizes of records the coordinator's partition does not hold, for its planner:
    /// each ask's count, in order, from the partition that owns the vertex (asked in one
    /// batch while a query is prepared; see [`crate::degree`]). `None`: this executor does
    /// not answer them, and the planner estimates.
    fn degrees(&self, asks: &[DegreeAsk]) -> Result<Option<Vec<u64>>, QueryError> {
        let _ = asks;
        Ok(None)
    }

    /// How long a question of [`Self::degrees`] takes, as measured so far (`None`: not
    /// known). The planner weighs it against the two plannings that tell whether the
    /// question can change the plan.
    fn degrees_cost(&self) -> Option<std::time::Duration> {
        None
    }

    /// The sizes of the records `asks` names that this executor knows without asking
    /// anyone (kept from earlier questions), in order; `None` for the others. The planner
    /// takes them before deciding whether a question is worth its round trip.
    fn known_degrees(&self, asks: &[DegreeAsk]) -> Vec<Option<u64>> {
        vec![None; asks.len()]
    }

    /// Where this executor remembers the query templates whose plan the size of a record
    /// it would be asked cannot change ([`crate::size_free`]); `None`: it does not.
    fn size_free_plans(&self) -> Option<&crate::size_free::SizeFreePlans> {
        None
    }

    /// Every row of the pattern over the partitions (any order), before the pattern's
    /// equalities of repeated variables, which the caller applies; with
    /// [`PartitionedBgp::trace`], what the workers did.
    fn explore(&self, request: PartitionedBgp<'_>) -> Result<Explored, QueryError>;

    /// A count read from the index ([`IndexAggregate::adds_up`]), run by every partition
    /// over its own share of the graph (of the merge of `merged`, for a merged default
    /// graph): each partition's counts, which the caller adds up.
    fn aggregate(
        &self,
        aggregate: &IndexAggregate,
        merged: &[quiver_model::Id],
        state: &QueryState,
    ) -> Result<Vec<Counts>, QueryError>;
}
