//! Admission control and the book-keeping of in-flight queries.
//!
//! A query first takes a [`Ticket`] (refused with 503 once `threads + queue` requests are
//! admitted, or once shutdown has begun), then waits up to the queue timeout for one of
//! `threads` semaphore permits (503 when it waits too long). The queue is long and the wait
//! short: a burst of many clients sending light queries is served in turn within
//! milliseconds instead of being refused, while behind heavy queries a request learns soon
//! that it should retry, and the number of waiting requests (each a small future) stays
//! bounded by `queue`. The permit is held while the
//! query executes *and* while its result streams, since both occupy a blocking thread; a
//! client that stops reading is cut off by the send timeout, which frees the permit.
//!
//! A query the planner expects to be light may run on the request's own task instead
//! (no hand-off to a blocking thread, which costs more than such a query); a guess gone
//! wrong is stopped after a short limit and run again on a blocking thread
//! ([`crate::execute::run_inline`]), counted in [`Limits::moved_to_workers`].
//!
//! Every ticket registers its query's cancel flag, so that shutdown can cancel what is still
//! running after the grace period; dropping the ticket unregisters it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// Shared counters and the admission gate.
#[derive(Debug)]
pub struct Limits {
    permits: usize,
    capacity: usize,
    queue_timeout: Duration,
    semaphore: Arc<Semaphore>,
    admitted: AtomicUsize,
    shutting_down: AtomicBool,
    next_id: AtomicU64,
    cancels: Mutex<HashMap<u64, Arc<AtomicBool>>>,
    /// Queries answered with a success status.
    pub served: AtomicU64,
    /// Queries answered with an error status (bad query, timeout, cap, 406, …).
    pub failed: AtomicU64,
    /// Requests refused with 503 because the server was full.
    pub rejected: AtomicU64,
    /// Writes (updates, Graph Store writes) committed.
    pub committed: AtomicU64,
    /// Queries run on their connection's thread on the planner's estimate alone, stopped
    /// at the inline limit and run again on a blocking thread.
    pub moved_to_workers: AtomicU64,
}

/// The HTTP connection threads for `threads` (`--threads`): one per thread
/// ([`crate::connections`]). Light queries run on these threads, on the request's task,
/// so their count bounds the server's throughput on light queries (capped at 4 runtime
/// workers, a 16-core server answered the LUBM mix at 61 K queries/s from 16 keep-alive
/// clients, while the same store answered 968 K a second in process).
pub fn runtime_workers(threads: usize) -> usize {
    threads.max(1)
}

/// One admitted query: counts as in flight and owns the query's cancel flag until dropped.
#[derive(Debug)]
pub struct Ticket {
    limits: Arc<Limits>,
    id: u64,
    cancel: Arc<AtomicBool>,
}

impl Limits {
    pub fn new(permits: usize, queue: usize, queue_timeout: Duration) -> Self {
        let permits = permits.max(1);
        Self {
            permits,
            capacity: permits + queue,
            queue_timeout,
            semaphore: Arc::new(Semaphore::new(permits)),
            admitted: AtomicUsize::new(0),
            shutting_down: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            cancels: Mutex::new(HashMap::new()),
            served: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            committed: AtomicU64::new(0),
            moved_to_workers: AtomicU64::new(0),
        }
    }

    /// Admits a request or refuses it with 503.
    pub fn enter(self: &Arc<Self>) -> Result<Ticket, ApiError> {
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(ApiError::unavailable("the server is shutting down"));
        }
        let before = self.admitted.fetch_add(1, Ordering::AcqRel);
        if before >= self.capacity {
            self.admitted.fetch_sub(1, Ordering::AcqRel);
            self.rejected.fetch_add(1, Ordering::Relaxed);
            return Err(ApiError::unavailable(format!(
                "server busy: {} queries running and {} waiting; retry later",
                self.permits,
                self.capacity - self.permits
            )));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let cancel = Arc::new(AtomicBool::new(false));
        self.lock_cancels().insert(id, cancel.clone());
        Ok(Ticket {
            limits: self.clone(),
            id,
            cancel,
        })
    }

    /// Waits for a permit to execute, at most the queue timeout (then 503).
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, ApiError> {
        match tokio::time::timeout(self.queue_timeout, self.semaphore.clone().acquire_owned()).await
        {
            Ok(Ok(permit)) => Ok(permit),
            Ok(Err(_)) => Err(ApiError::unavailable("the server is shutting down")),
            Err(_) => {
                self.rejected.fetch_add(1, Ordering::Relaxed);
                Err(ApiError::unavailable(format!(
                    "server busy: waited {:.1} s for a free worker; retry later",
                    self.queue_timeout.as_secs_f64()
                )))
            }
        }
    }

    /// Requests admitted and not finished (running, queued or streaming).
    pub fn in_flight(&self) -> usize {
        self.admitted.load(Ordering::Acquire)
    }

    /// Requests admitted and waiting for a permit.
    pub fn queued(&self) -> usize {
        self.in_flight().saturating_sub(self.running())
    }

    /// Queries holding a permit (executing or streaming).
    pub fn running(&self) -> usize {
        self.permits - self.semaphore.available_permits()
    }

    /// From now on, new queries get 503.
    pub fn begin_shutdown(&self) {
        self.shutting_down.store(true, Ordering::Release);
    }

    /// Sets the cancel flag of every in-flight query; returns how many there were.
    pub fn cancel_all(&self) -> usize {
        let cancels = self.lock_cancels();
        for cancel in cancels.values() {
            cancel.store(true, Ordering::Release);
        }
        cancels.len()
    }

    fn lock_cancels(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<AtomicBool>>> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.cancels.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Ticket {
    /// The flag the engine and the serializer poll; set it to stop the query.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.limits.lock_cancels().remove(&self.id);
        self.limits.admitted.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Sets a cancel flag when dropped: held by the request's future and then by the response
/// body, so a client that disconnects (either is dropped) stops its query.
#[derive(Debug)]
pub struct CancelOnDrop(pub Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn admits_up_to_capacity_then_refuses() {
        let limits = Arc::new(Limits::new(1, 1, Duration::from_millis(50)));
        let first = limits.enter().unwrap();
        let second = limits.enter().unwrap();
        let third = limits.enter().unwrap_err();
        assert_eq!(third.status, axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(limits.in_flight(), 2);
        let permit = limits.acquire().await.unwrap();
        assert_eq!(limits.running(), 1);
        // The second waits for the permit and gives up after the queue timeout.
        assert!(limits.acquire().await.is_err());
        drop(permit);
        assert!(limits.acquire().await.is_ok());
        assert_eq!(limits.cancel_all(), 2);
        assert!(first.cancel_flag().load(Ordering::Acquire));
        drop((first, second));
        assert_eq!(limits.in_flight(), 0);
        limits.begin_shutdown();
        assert!(limits.enter().is_err());
    }

    /// 64 clients at once on 2 workers, each query holding its worker 2 ms: every one is
    /// admitted and served in turn, none refused, and the counters return to zero.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_waits_in_the_queue_instead_of_being_refused() {
        let limits = Arc::new(Limits::new(2, 128, Duration::from_millis(500)));
        let clients: Vec<_> = (0..64)
            .map(|_| {
                let limits = limits.clone();
                tokio::spawn(async move {
                    let ticket = limits.enter()?;
                    let permit = limits.acquire().await?;
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    drop((permit, ticket));
                    Ok::<(), ApiError>(())
                })
            })
            .collect();
        let mut refused = 0;
        for client in clients {
            if client.await.unwrap().is_err() {
                refused += 1;
            }
        }
        assert_eq!(refused, 0);
        assert_eq!(limits.rejected.load(Ordering::Relaxed), 0);
        assert_eq!(
            (limits.in_flight(), limits.running(), limits.queued()),
            (0, 0, 0)
        );
    }

    /// The queue stays bounded: beyond `threads + queue` requests, 503 at once, counted.
    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_counts_it() {
        let limits = Arc::new(Limits::new(1, 2, Duration::ZERO));
        let held: Vec<_> = (0..3).map(|_| limits.enter().unwrap()).collect();
        let permit = limits.acquire().await.unwrap();
        assert_eq!(limits.queued(), 2);
        assert!(limits.enter().is_err());
        // A zero wait still takes a free permit, and refuses when there is none.
        assert!(limits.acquire().await.is_err());
        assert_eq!(limits.rejected.load(Ordering::Relaxed), 2);
        drop(permit);
        assert!(limits.acquire().await.is_ok());
        drop(held);
        assert_eq!(limits.in_flight(), 0);
    }
}
