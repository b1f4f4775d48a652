//! Basic graph patterns over a store cut into partitions (scale-out): the interface
//! between the evaluator and an executor that runs a BGP's steps where its vertices live.
//!
//! The query is planned and its other operators run on one store (the coordinator's,
//! whose dictionary and predicate ids every partition shares); each basic graph pattern
//! is handed, with its plan and its input rows, to a [`BgpPartitions`], which runs the
//! steps on the partitions (`quiver-cluster`) through [`crate::exec::bgp::explore::run_step`]
//! and returns every row. Rows may come back in any order: a BGP's rows are a bag. Property
//! paths and DESCRIBE ask for edges the same way (`crate::exec::edges`), and counts read
//! from the index are counted by each partition and added up by the caller.

use crate::bgp::Bgp;
use crate::context::QueryState;
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::operator::index_aggregate::{Counts, IndexAggregate};
use crate::step::Step;
use crate::table::Table;

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
}

/// What moved between the partitions' workers: messages, the rows they carried and their
/// bytes as serialized between processes. Rows that stay with a worker are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Exchanged {
    pub messages: u64,
    pub rows: u64,
    pub bytes: u64,
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

    /// Every row of the pattern over the partitions (any order), before the pattern's
    /// equalities of repeated variables, which the caller applies.
    fn explore(&self, request: PartitionedBgp<'_>) -> Result<Table, QueryError>;

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
