//! Running an operator's work on the query's worker threads.
//!
//! Work that is linear in rows (grouping, sort keys, top-k) is cut into morsels of rows and
//! run on rayon, in the global pool when it has the query's thread count, else in a pool of
//! that many threads (as the exploration executor does). Small inputs stay on the calling
//! thread.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::context::ExecContext;
use crate::error::QueryError;

/// Rows below which an operator does not leave its thread.
const PARALLEL_ROWS: usize = 32 * 1024;

/// The morsel length for `rows` rows on `ctx.threads` threads: a few morsels per thread,
/// at least a few thousand rows each.
pub(crate) fn morsel(ctx: &ExecContext<'_>, rows: usize) -> usize {
    let threshold = min_parallel_rows();
    if rows < threshold {
        // One thread, morsels only for the checks between them.
        return rows.clamp(1, threshold / 2);
    }
    (rows / (ctx.threads.max(1) * 4)).clamp(threshold / 4, 256 * 1024)
}

static MIN_PARALLEL_ROWS: AtomicUsize = AtomicUsize::new(PARALLEL_ROWS);

/// Whether `rows` rows are enough to go parallel.
pub(crate) fn parallel(rows: usize) -> bool {
    rows >= min_parallel_rows()
}

fn min_parallel_rows() -> usize {
    MIN_PARALLEL_ROWS.load(Ordering::Relaxed)
}

/// The work (list elements looked up) from which a step splits its few rows over threads:
/// twice the rows from which operators go parallel (64 Ki elements), so that the test
/// setting of [`set_min_parallel_rows`] reaches it on small graphs too.
pub(crate) fn min_parallel_work() -> usize {
    2 * min_parallel_rows()
}

/// Sets the number of rows from which operators cut their input into morsels (at least
/// 4), so that tests exercise the parallel paths on small graphs. It changes how work is
/// split, never an answer.
#[doc(hidden)]
pub fn set_min_parallel_rows(rows: usize) {
    MIN_PARALLEL_ROWS.store(rows.max(4), Ordering::Relaxed);
}

/// Runs `f` on the query's worker threads.
pub(crate) fn on_workers<T: Send>(
    ctx: &ExecContext<'_>,
    f: impl FnOnce() -> Result<T, QueryError> + Send,
) -> Result<T, QueryError> {
    if ctx.threads <= 1 || rayon::current_num_threads() == ctx.threads {
        return f();
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(ctx.threads)
        .build()
        .map_err(|e| QueryError::Unsupported(format!("cannot start worker threads: {e}")))?
        .install(f)
}

/// `f` over the morsels of `0..rows`, in order: on the calling thread for small inputs or a
/// single thread, else on the query's workers. Checks the query's limits before each
/// morsel.
pub(crate) fn map_morsels<T: Send>(
    ctx: &ExecContext<'_>,
    rows: usize,
    f: impl Fn(std::ops::Range<usize>) -> T + Sync,
) -> Result<Vec<T>, QueryError> {
    use rayon::prelude::*;
    let size = morsel(ctx, rows);
    let starts: Vec<usize> = (0..rows).step_by(size).collect();
    let run = |start: usize| {
        ctx.check()?;
        Ok(f(start..(start + size).min(rows)))
    };
    if starts.len() <= 1 || ctx.threads <= 1 || rows < min_parallel_rows() {
        return starts.into_iter().map(run).collect();
    }
    on_workers(ctx, || starts.into_par_iter().map(run).collect())
}
