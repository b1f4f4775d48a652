//! Exploration steps on an accelerator (Wukong+G): the interface between the exploration
//! executor and a device that runs BGP steps over whole columns.
//!
//! The executor (`exec/bgp/device.rs`) decides which steps go to the device — walks and
//! checks with a constant predicate, and intersecting walks, once a table is large — and
//! describes them here in terms of the table's columns; a device implementation (the
//! `quiver-gpu` crate) keeps the graph index in its memory, runs the steps with the row
//! table kept on the device between them, and returns the final columns. Its rows must be
//! exactly the CPU executor's, in the same order.

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Store};

use crate::error::QueryError;
use crate::memory::Reservation;
use crate::table::Table;

/// Where a step reads one end of its pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceInput {
    Const(Id),
    /// A column of the device's table: the input table's columns first, then one per
    /// binding step, in step order.
    Column(usize),
}

/// What a step does with the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTarget {
    /// Binds a new column to every neighbour (expand).
    Bind,
    /// Keeps the rows whose neighbours include this value (check).
    Check(DeviceInput),
}

/// One exploration step for a device: walk from `source` over `predicate` in `direction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceStep {
    pub source: DeviceInput,
    pub predicate: PredId,
    pub direction: Direction,
    pub target: DeviceTarget,
    /// With a partner, the bound column is the intersection of this walk's neighbours and
    /// those of the partner's source over its predicate and direction (target: `Bind`).
    pub partner: Option<(DeviceInput, PredId, Direction)>,
}

/// What a device returns: the final table's columns (the input's, then one per binding
/// step) and what each step and transfer took.
#[derive(Debug, Clone, Default)]
pub struct DeviceRun {
    pub columns: Vec<Vec<Id>>,
    pub rows: usize,
    /// Rows after each step and its time in microseconds.
    pub steps: Vec<(usize, f64)>,
    pub upload_micros: f64,
    pub upload_bytes: usize,
    pub download_micros: f64,
    pub download_bytes: usize,
    /// Parts of the index the run had to copy to the device first (predicate segments of
    /// a store larger than the device's memory).
    pub index_bytes: usize,
    pub index_micros: f64,
}

/// What a device run may use of its query: its checks and its memory budget.
pub struct DeviceQuery<'q, 'a> {
    /// The query's checks (deadline, cancellation, recorded errors); called between
    /// kernels.
    pub check: &'q dyn Fn() -> Result<(), QueryError>,
    /// Charged with the device's tables as they grow, as the CPU executor charges its own.
    pub memory: &'q mut Reservation<'a>,
}

/// A device that runs exploration steps.
pub trait BgpDevice: Send + Sync + std::fmt::Debug {
    /// The device, in words (EXPLAIN).
    fn name(&self) -> String;

    /// Runs the device has carried out so far (for a server's status).
    fn runs(&self) -> u64;

    /// The estimated work of a step (list entries read; see `exec/bgp/device.rs`) from
    /// which it and the steps after it go to the device.
    fn min_work(&self) -> usize;

    /// Whether the device holds `graph` of `store` (else its steps run on the CPU).
    fn serves(&self, store: &Store, graph: &GraphIndex) -> bool;

    /// Runs `steps` from `table`, whose columns become the device table's first columns;
    /// `None` when the device declines them (the lists they walk do not fit its memory),
    /// and the CPU runs them.
    fn run(
        &self,
        store: &Store,
        graph: &GraphIndex,
        table: &Table,
        steps: &[DeviceStep],
        query: DeviceQuery<'_, '_>,
    ) -> Result<Option<DeviceRun>, QueryError>;
}
