//! Running an operator's work on the query's worker threads.
//!
//! Work that is linear in rows (grouping, sort keys, top-k) is cut into morsels of rows and
//! run on rayon (as the exploration executor does). Small inputs stay on the calling
//! thread.
//!
//! **Concurrent queries do not queue behind each other's parallel work.** Rayon's workers
//! take their own queued tasks before the ones injected from outside, so a query whose
//! parallel step arrives while another query's step holds every worker waits for that
//! step to end: a 60 ms query waited 1.1 s behind a 1.6 s one. So one query at a time
//! runs its parallel steps in the global pool; a step that finds the global pool taken
//! runs in a spare pool of the query's thread count, kept for the next such step, and the
//! operating system shares the cores between the two. Spare pools are few
//! ([`MAX_SPARE_POOLS`]); past them a step queues in the global pool as before.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rayon::ThreadPool;

use crate::context::ExecContext;
use crate::error::QueryError;

/// Rows below which an operator does not leave its thread.
const PARALLEL_ROWS: usize = 32 * 1024;

/// The morsel length for `rows` rows on `ctx.threads` threads ([`morsel_rows`]).
pub(crate) fn morsel(ctx: &ExecContext<'_>, rows: usize) -> usize {
    morsel_rows(rows, ctx.threads, min_parallel_rows())
}

/// The morsel length for `rows` rows on `threads` threads, operators going parallel from
/// `threshold` rows: as many morsels for every thread, up to four each, of at least a
/// quarter of the threshold (8,192 rows) where the rows allow, at most 256 Ki rows. A
/// morsel of at least 8,192 rows, about four per thread, left threads idle or a morsel
/// behind the others on many threads: 100,000 rows were 13 morsels for 16 threads, 200,000
/// were 25 (nine threads took two, seven one).
fn morsel_rows(rows: usize, threads: usize, threshold: usize) -> usize {
    if rows < threshold {
        // One thread, morsels only for the checks between them.
        return rows.clamp(1, threshold / 2);
    }
    let threads = threads.max(1);
    let each = (rows / (threads * (threshold / 4).max(1))).clamp(1, 4);
    rows.div_ceil(threads * each).min(256 * 1024)
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
/// half the rows from which operators go parallel (16 Ki elements), so that the test
/// setting of [`set_min_parallel_rows`] reaches it on small graphs too. An element costs
/// 10–40 ns (a seek into the partner's list, often a cache miss), so the work is at least
/// ~0.2 ms, against some 15 µs to wake the pool's threads. At 64 Ki, q1's second step at
/// LUBM-1000 (1,000 universities, 20,020 departments checked against the class's list,
/// 0.8 ms) ran on one thread: a tenth of the query's work, the part that did not scale.
pub(crate) fn min_parallel_work() -> usize {
    min_parallel_rows() / 2
}

/// Sets the number of rows from which operators cut their input into morsels (at least
/// 4), so that tests exercise the parallel paths on small graphs. It changes how work is
/// split, never an answer.
#[doc(hidden)]
pub fn set_min_parallel_rows(rows: usize) {
    MIN_PARALLEL_ROWS.store(rows.max(4), Ordering::Relaxed);
}

/// Runs `f` on the query's worker threads: in the global pool when no other query's step
/// runs there and it has the query's thread count, else in a spare pool (see the module's
/// documentation). Work already on a pool's thread stays in that pool.
pub(crate) fn on_workers<T: Send>(
    ctx: &ExecContext<'_>,
    f: impl FnOnce() -> Result<T, QueryError> + Send,
) -> Result<T, QueryError> {
    in_pool(ctx.threads, f)
}

/// [`on_workers`] for `threads` threads.
fn in_pool<T: Send>(
    threads: usize,
    f: impl FnOnce() -> Result<T, QueryError> + Send,
) -> Result<T, QueryError> {
    if threads <= 1 || rayon::current_thread_index().is_some() {
        return f();
    }
    let global_fits = rayon::current_num_threads() == threads;
    if global_fits {
        if let Some(_held) = GlobalPool::take() {
            return f();
        }
    }
    match SparePool::take(threads)? {
        Some(spare) => spare.pool.install(f),
        // Every spare pool is taken: queue in the global pool.
        None if global_fits => f(),
        None => fresh_pool(threads)?.install(f),
    }
}

fn fresh_pool(threads: usize) -> Result<ThreadPool, QueryError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("quiver-spare-{i}"))
        .build()
        .map_err(|e| QueryError::Unsupported(format!("cannot start worker threads: {e}")))
}

/// Whether a query's step runs in the global pool.
static GLOBAL_TAKEN: AtomicBool = AtomicBool::new(false);

/// The global pool held by one query's step; given back when dropped (also on a panic).
struct GlobalPool;

impl GlobalPool {
    fn take() -> Option<GlobalPool> {
        // Built only when taken: a guard built and dropped on a refusal would give the
        // pool back while another query's step holds it (`then_some` builds its value
        // either way), and that query's step would then share its workers with the next.
        let taken = GLOBAL_TAKEN
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        taken.then(|| GlobalPool)
    }
}

impl Drop for GlobalPool {
    fn drop(&mut self) {
        GLOBAL_TAKEN.store(false, Ordering::Release);
    }
}

/// Spare pools in existence at most: bounds the threads concurrent queries start.
pub(crate) const MAX_SPARE_POOLS: usize = 4;

/// Idle spare pools, each with its thread count.
type IdlePools = Vec<(usize, Arc<ThreadPool>)>;

/// Idle spare pools, and how many exist.
static SPARE: Mutex<(IdlePools, usize)> = Mutex::new((Vec::new(), 0));

/// A spare pool taken by one step; back among the idle ones when dropped.
struct SparePool {
    threads: usize,
    pool: Arc<ThreadPool>,
}

impl SparePool {
    /// An idle spare pool of `threads` threads, or a new one while there are fewer than
    /// [`MAX_SPARE_POOLS`]; `None` when all are taken.
    fn take(threads: usize) -> Result<Option<SparePool>, QueryError> {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        let (idle, count) = &mut *spare;
        if let Some(i) = idle.iter().position(|(t, _)| *t == threads) {
            let (_, pool) = idle.swap_remove(i);
            return Ok(Some(SparePool { threads, pool }));
        }
        if *count >= MAX_SPARE_POOLS {
            // An idle pool of another size makes way for this one.
            if idle.pop().is_none() {
                return Ok(None);
            }
            *count -= 1;
        }
        *count += 1;
        drop(spare);
        match fresh_pool(threads) {
            Ok(pool) => Ok(Some(SparePool {
                threads,
                pool: Arc::new(pool),
            })),
            Err(e) => {
                SPARE.lock().unwrap_or_else(|e| e.into_inner()).1 -= 1;
                Err(e)
            }
        }
    }
}

impl Drop for SparePool {
    fn drop(&mut self) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        spare.0.push((self.threads, Arc::clone(&self.pool)));
    }
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

/// `f` over the stretches of `values` of `size` each (the last one shorter), in order, on
/// the query's workers as [`map_morsels`] runs: `f` gets the stretch's number, its range of
/// positions in `values` and the stretch itself to write. Two passes over the same values
/// with the same `size` see the same stretches.
pub(crate) fn map_stretches_mut<V: Send, T: Send>(
    ctx: &ExecContext<'_>,
    values: &mut [V],
    size: usize,
    f: impl Fn(usize, std::ops::Range<usize>, &mut [V]) -> T + Sync,
) -> Result<Vec<T>, QueryError> {
    use rayon::prelude::*;
    let size = size.max(1);
    let rows = values.len();
    let run = |(index, stretch): (usize, &mut [V])| {
        ctx.check()?;
        let start = index * size;
        Ok(f(index, start..start + stretch.len(), stretch))
    };
    if rows <= size || ctx.threads <= 1 || rows < min_parallel_rows() {
        return values.chunks_mut(size).enumerate().map(run).collect();
    }
    on_workers(ctx, || {
        values.par_chunks_mut(size).enumerate().map(run).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    /// Every thread gets as many morsels (one to four), each of at most 256 Ki rows and, where
    /// the rows allow, at least a quarter of the threshold; below it, one thread's morsels.
    #[test]
    fn every_thread_gets_as_many_morsels() {
        let threshold = PARALLEL_ROWS;
        for threads in [2, 3, 4, 8, 16, 64] {
            for rows in [threshold, 40_000, 100_000, 200_000, 1_081_187, 2_765_067] {
                let size = morsel_rows(rows, threads, threshold);
                let morsels = rows.div_ceil(size);
                assert!(size <= 256 * 1024, "{rows} rows on {threads} threads");
                if size < 256 * 1024 {
                    assert!(
                        morsels % threads == 0 && morsels / threads <= 4,
                        "{rows} rows on {threads} threads: {morsels} morsels of {size}"
                    );
                }
                if rows >= threads * threshold / 4 {
                    assert!(size >= threshold / 4, "{rows} rows on {threads} threads");
                }
            }
        }
        assert_eq!(morsel_rows(100_000, 16, threshold), 6_250);
        assert_eq!(morsel_rows(1_000, 16, threshold), 1_000.min(threshold / 2));
    }
    use std::sync::mpsc;
    use std::time::Duration;

    /// Taking the global pool while a step holds it is refused, and the refusal leaves it
    /// held: only its holder gives it back.
    #[test]
    fn a_refused_take_leaves_the_global_pool_held() {
        // Other tests' steps may hold it a moment.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let held = loop {
            if let Some(held) = GlobalPool::take() {
                break held;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the global pool stayed taken"
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        for _ in 0..3 {
            assert!(GlobalPool::take().is_none(), "taken twice");
        }
        drop(held);
    }

    /// A query's parallel step completes while another query's step holds every worker of
    /// the global pool (before spare pools, it waited for that step to end).
    #[test]
    fn a_step_does_not_wait_for_another_querys_step_holding_the_pool() {
        let threads = rayon::current_num_threads().max(2);
        let (started, started_rx) = mpsc::channel::<()>();
        let (release, release_rx) = mpsc::channel::<()>();
        let release_rx = Mutex::new(release_rx);
        let holder = std::thread::spawn(move || {
            in_pool(threads, || {
                (0..threads).into_par_iter().for_each(|_| {
                    started.send(()).unwrap();
                    let _ = release_rx
                        .lock()
                        .unwrap()
                        .recv_timeout(Duration::from_secs(60));
                });
                Ok(())
            })
        });
        // Every worker of the holder's pool is busy (one waits on the lock, the others
        // are parked in their task).
        for _ in 0..threads {
            started_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the holding step started on every worker");
        }
        let (done, done_rx) = mpsc::channel();
        let other = std::thread::spawn(move || {
            let sum = in_pool(threads, || {
                Ok((0..1000usize).into_par_iter().sum::<usize>())
            });
            done.send(sum.unwrap()).unwrap();
        });
        let sum = done_rx.recv_timeout(Duration::from_secs(30));
        for _ in 0..threads {
            release.send(()).unwrap();
        }
        assert_eq!(
            sum.expect("the second step waited for the first to end"),
            499_500
        );
        holder.join().unwrap().unwrap();
        other.join().unwrap();
    }
}
