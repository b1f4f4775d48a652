//! What one exploration step reads and writes: the ends of its pattern over the table,
//! and its bound (the most rows it may emit, its memory, the query's checks).

use quiver_model::Id;
use quiver_store::adjacency::{Adjacency, View};

use super::partner_sets::PartnerSets;
use crate::bgp::Node;
use crate::context::{ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::table::{Table, VarId, UNBOUND};

/// Rows after which the remaining steps run in parallel. Low enough that a cyclic query
/// whose few thousand rows each intersect long lists (q1, q3) fans out; light queries,
/// whose tables stay in the tens or hundreds of rows, never pay for it.
pub const PARALLEL_MIN_ROWS: usize = 1024;

/// Rows from which a step prefetches the records of the vertices of the rows ahead
/// ([`Ahead`]), so that the cache misses of many scattered vertices overlap.
const PREFETCH_MIN_ROWS: usize = 32;
/// How far ahead: the offsets (a partition's rank blocks) this many rows ahead, a
/// partition's offsets at three quarters of the distance, the records at half.
const PREFETCH_DISTANCE: usize = 64;

/// The records a step will read from a column of vertices, prefetched ahead of the row
/// it reads (nothing for a constant or a free end, or a few rows).
pub(crate) struct Ahead<'t> {
    column: &'t [Id],
    view: View<'t>,
    /// A partition's adjacency, whose lookups read a rank block first: one stage more.
    ranked: bool,
    /// Rows ahead whose offsets are prefetched: [`PREFETCH_DISTANCE`], or half the rows
    /// of a shorter table (a morsel of a table cut over many threads), whose rows would
    /// otherwise all lie within the distance.
    distance: usize,
}

impl<'t> Ahead<'t> {
    pub(crate) fn of(end: End<'t>, adjacency: &'t Adjacency, rows: usize) -> Self {
        let column = match end {
            End::Column(column) if rows >= PREFETCH_MIN_ROWS => column,
            _ => &[],
        };
        let view = adjacency.view();
        Self {
            column,
            view,
            ranked: view.is_ranked(),
            distance: PREFETCH_DISTANCE.min(rows / 2),
        }
    }

    /// Prefetches for the rows ahead of `row`.
    #[inline(always)]
    pub(crate) fn fetch(&self, row: usize) {
        if let Some(&vertex) = self.column.get(row + self.distance) {
            self.view.prefetch_offset(vertex);
        }
        if self.ranked {
            if let Some(&vertex) = self.column.get(row + self.distance * 3 / 4) {
                self.view.prefetch_slot(vertex);
            }
        }
        if let Some(&vertex) = self.column.get(row + self.distance / 2) {
            self.view.prefetch_record(vertex);
        }
    }
}

/// Where a step reads or writes one end of its pattern.
#[derive(Clone, Copy)]
pub(crate) enum End<'t> {
    Const(Id),
    Column(&'t [Id]),
    /// An unbound variable: the step binds it.
    Free(VarId),
}

pub(crate) fn end<'t>(node: Node, table: &'t Table) -> End<'t> {
    match node {
        Node::Const(id) => End::Const(id),
        Node::Var(v) => table.column(v).map_or(End::Free(v), End::Column),
        Node::Absent => End::Const(UNBOUND),
    }
}

impl End<'_> {
    #[inline]
    pub(crate) fn value(&self, row: usize) -> Option<Id> {
        match self {
            End::Const(id) => Some(*id),
            End::Column(column) => Some(column[row]).filter(|&v| v != UNBOUND),
            End::Free(_) => None,
        }
    }
}

/// A step's context: the query's, the most rows it may emit, and its memory.
pub(crate) struct Bounded<'c, 'a> {
    pub ctx: &'c ExecContext<'a>,
    /// Rows the step may emit; it stops (and sets `truncated`) on reaching them.
    pub cap: usize,
    pub truncated: bool,
    pub memory: Reservation<'a>,
    /// Set by a step that split its rows over the query's threads.
    pub split: bool,
    /// The constant partner lists' bit sets a parallel run built for all its morsels.
    pub sets: Option<&'c PartnerSets>,
    /// Set when the step reads one morsel of a table already cut over the query's
    /// threads: it runs on the thread it was given, never splitting its rows again.
    pub in_morsel: bool,
}

impl<'c, 'a> Bounded<'c, 'a> {
    pub fn new(ctx: &'c ExecContext<'a>, cap: usize) -> Self {
        Self {
            ctx,
            cap,
            truncated: false,
            memory: ctx.reservation(),
            split: false,
            sets: None,
            in_morsel: false,
        }
    }

    /// Checks the query's limits and charges `bytes` of output; every stride of rows.
    #[inline(always)]
    #[track_caller]
    pub fn tick(&mut self, row: usize, bytes: impl FnOnce() -> usize) -> Result<(), QueryError> {
        if row % CHECK_STRIDE == CHECK_STRIDE - 1 {
            return self.check_and_charge(bytes());
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    #[track_caller]
    fn check_and_charge(&mut self, bytes: usize) -> Result<(), QueryError> {
        self.ctx.check()?;
        self.memory.try_resize(bytes)
    }

    /// Whether `emitted` rows fill the cap (then the step stops).
    #[inline(always)]
    pub fn full(&mut self, emitted: usize) -> bool {
        if emitted >= self.cap {
            self.truncated = true;
            return true;
        }
        false
    }
}
