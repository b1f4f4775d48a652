//! The execution context: what every operator of a running query shares.
//!
//! [`QueryState`] is built once per execution from the options (deadline, cancel flag,
//! memory budget) and shared by reference with every operator and rayon worker; an
//! [`ExecContext`] adds the store, the graph an operator reads and the thread count.
//! Operators call [`ExecContext::check`] at their boundaries and every few thousand rows
//! of each loop ([`ExecContext::tick`]): a check is a load of the stop flag, a load of the
//! cancel flag and a clock compare, so the stride keeps it far below the cost of the rows.
//!
//! An error raised where it cannot be returned directly (inside an expression's EXISTS,
//! which the expression evaluator sees as a boolean) is recorded with
//! [`QueryState::fail`]: the next check anywhere returns it, so it stops the query
//! instead of turning into a wrong answer.

use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use quiver_store::{GraphIndex, Store};

use crate::device::BgpDevice;
use crate::error::QueryError;
use crate::memory::{MemoryBudget, Reservation};

/// Rows between two checks of a loop.
pub const CHECK_STRIDE: usize = 4096;

/// A test hook called on every check with the place of the check (the caller of
/// `check`/`tick`) and the number of checks so far; returning true cancels the query
/// there. It lets a test show that an operator's own loop checks, not only its entry.
#[derive(Clone)]
pub struct CheckHook(pub Arc<dyn Fn(&'static Location<'static>, u64) -> bool + Send + Sync>);

impl std::fmt::Debug for CheckHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CheckHook")
    }
}

/// The state of one execution shared by all its operators and threads.
#[derive(Debug)]
pub struct QueryState {
    deadline: Option<(Instant, f64)>,
    cancel: Option<Arc<AtomicBool>>,
    budget: Arc<MemoryBudget>,
    hook: Option<CheckHook>,
    checks: AtomicU64,
    /// Set once an error was recorded; `error` holds the first.
    stopped: AtomicBool,
    error: Mutex<Option<QueryError>>,
    /// Whether exploration steps read the clock for their times (see
    /// [`QueryState::step_started`]).
    step_times: bool,
}

impl QueryState {
    pub fn new(
        deadline: Option<(Instant, f64)>,
        cancel: Option<Arc<AtomicBool>>,
        budget: Arc<MemoryBudget>,
        hook: Option<CheckHook>,
    ) -> Self {
        Self {
            deadline,
            cancel,
            budget,
            hook,
            checks: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            error: Mutex::new(None),
            step_times: true,
        }
    }

    /// This state, with the exploration steps' times measured or not. Only a profile
    /// (EXPLAIN, a benchmark's report) shows them, and a light query's steps read the
    /// clock twice each: a few percent of its time where a clock read costs ~25 ns.
    pub fn with_step_times(mut self, measured: bool) -> Self {
        self.step_times = measured;
        self
    }

    /// The instant a step starts, where step times are measured; [`micros_since`] it
    /// gives the step's time.
    #[inline]
    pub fn step_started(&self) -> Option<Instant> {
        self.step_times.then(Instant::now)
    }

    /// Records `error` (the first one wins): every later check fails with it.
    pub fn fail(&self, error: QueryError) {
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(error);
        }
        self.stopped.store(true, Ordering::Release);
    }

    /// The recorded error, if any.
    pub fn error(&self) -> Option<QueryError> {
        if !self.stopped.load(Ordering::Acquire) {
            return None;
        }
        self.error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// When the query runs out of time, and its limit in seconds (for the error).
    pub fn deadline(&self) -> Option<(Instant, f64)> {
        self.deadline
    }

    pub fn budget(&self) -> &Arc<MemoryBudget> {
        &self.budget
    }

    /// Checks made so far (counted only while a test hook is set).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// Fails when the query was cancelled, ran out of time or recorded an error (what
    /// [`ExecContext::check`] asks).
    #[inline]
    #[track_caller]
    pub fn check(&self) -> Result<(), QueryError> {
        if let Some(hook) = &self.hook {
            let n = self.checks.fetch_add(1, Ordering::Relaxed) + 1;
            if (hook.0)(Location::caller(), n) {
                self.fail(QueryError::Cancelled);
            }
        }
        if self.stopped.load(Ordering::Relaxed) {
            return Err(self.error().unwrap_or(QueryError::Cancelled));
        }
        // A growth refused on another thread of the query.
        if let Some(error) = self.budget.refusal() {
            return Err(error);
        }
        if self
            .cancel
            .as_deref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Err(QueryError::Cancelled);
        }
        if let Some((deadline, seconds)) = self.deadline {
            if Instant::now() >= deadline {
                return Err(QueryError::Timeout(seconds));
            }
        }
        Ok(())
    }
}

/// Microseconds since `started` (from [`QueryState::step_started`]); 0 where step times
/// are not measured.
#[inline]
pub fn micros_since(started: Option<Instant>) -> f64 {
    started.map_or(0.0, |started| started.elapsed().as_secs_f64() * 1e6)
}

/// Everything a running operator needs besides its plan.
#[derive(Clone, Copy)]
pub struct ExecContext<'a> {
    pub store: &'a Store,
    /// The graph the operator reads.
    pub graph: &'a GraphIndex,
    pub threads: usize,
    pub state: &'a QueryState,
    /// The accelerator that runs heavy exploration steps, if any.
    pub device: Option<&'a dyn BgpDevice>,
}

impl<'a> ExecContext<'a> {
    /// Fails when the query was cancelled, ran out of time or recorded an error.
    #[inline]
    #[track_caller]
    pub fn check(&self) -> Result<(), QueryError> {
        self.state.check()
    }

    /// [`ExecContext::check`] once every [`CHECK_STRIDE`] iterations of a loop (`i` counts
    /// them).
    #[inline]
    #[track_caller]
    pub fn tick(&self, i: usize) -> Result<(), QueryError> {
        if i % CHECK_STRIDE == CHECK_STRIDE - 1 {
            self.state.check()
        } else {
            Ok(())
        }
    }

    /// An empty reservation against the query's memory budget.
    pub fn reservation(&self) -> Reservation<'a> {
        self.state.budget.reservation()
    }

    /// The same context reading another graph.
    pub fn on(&self, graph: &'a GraphIndex) -> ExecContext<'a> {
        ExecContext { graph, ..*self }
    }
}

/// Bytes of a table of `rows` rows and `columns` columns of ids.
pub fn table_bytes(rows: usize, columns: usize) -> usize {
    rows.saturating_mul(columns.max(1))
        .saturating_mul(crate::memory::ID_BYTES)
}

/// Fails when a table of `rows` rows cannot be addressed by the 32-bit row numbers of
/// selection vectors, or numbered by ids in a hidden row column.
pub fn ensure_addressable(rows: usize) -> Result<(), QueryError> {
    let max = (u32::MAX as usize).min(crate::table::UNBOUND as usize - 1);
    if rows > max {
        return Err(QueryError::Unsupported(format!(
            "an intermediate result of {rows} rows (the executor numbers at most {max})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_numbers_never_wrap() {
        assert!(ensure_addressable(1000).is_ok());
        let max = (u32::MAX as usize).min(crate::table::UNBOUND as usize - 1);
        assert!(ensure_addressable(max).is_ok());
        let error = ensure_addressable(max + 1).unwrap_err();
        assert!(
            error.to_string().contains(&(max + 1).to_string()),
            "{error}"
        );
    }

    #[test]
    fn a_recorded_error_stops_every_later_check() {
        let state = QueryState::new(None, None, MemoryBudget::new(None), None);
        assert!(state.check().is_ok());
        state.fail(QueryError::Timeout(1.0));
        state.fail(QueryError::Cancelled);
        assert!(matches!(state.check(), Err(QueryError::Timeout(_))));
        assert!(matches!(state.error(), Some(QueryError::Timeout(_))));
    }
}
