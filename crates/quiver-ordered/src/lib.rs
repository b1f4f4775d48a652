//! Values made on several threads and handed to one consumer in index order, at most a
//! bounded number ahead of it: the generators' pipeline (LUBM universities, BSBM units),
//! where each index becomes a buffer of text or of encoded triples and the consumer writes
//! or gathers them in order.
//!
//! Written here rather than taken from rayon: an ordered `collect` holds every value and
//! hands none over before the last is made, and `par_bridge` gives up the order. Here the
//! consumer runs on the calling thread while the workers make the next values, and at most
//! `2 × threads` values wait for it, so memory stays bounded however many are asked for.
//!
//! A worker that panics does not leave the consumer waiting for its value: the consumer
//! stops, and the panic reaches the caller once the other workers have stopped.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// An index type of the ranges [`for_each_ordered`] takes.
pub trait Index: Copy + Send + Sync {
    fn to_usize(self) -> usize;
    /// Only called on values between two `to_usize` results of the same range.
    fn from_usize(value: usize) -> Self;
}

impl Index for usize {
    fn to_usize(self) -> usize {
        self
    }
    fn from_usize(value: usize) -> Self {
        value
    }
}

impl Index for u32 {
    fn to_usize(self) -> usize {
        self as usize
    }
    fn from_usize(value: usize) -> Self {
        value as u32
    }
}

/// Values made and not yet consumed, the index the consumer waits for, and whether a
/// worker panicked.
struct Waiting<T> {
    made: BTreeMap<usize, T>,
    expected: usize,
    failed: bool,
}

struct Shared<T> {
    state: Mutex<Waiting<T>>,
    /// A value was made, or a worker failed.
    ready: Condvar,
    /// The consumer took a value, or stopped.
    room: Condvar,
    stop: AtomicBool,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, Waiting<T>> {
        // No thread panics while it holds the lock: nothing is left half-changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Marks the run failed when a worker's thread unwinds, so that the consumer stops waiting
/// for the value it will never make.
struct PanicAlarm<'a, T>(&'a Shared<T>);

impl<T> Drop for PanicAlarm<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop.store(true, Ordering::Relaxed);
            self.0.lock().failed = true;
            self.0.ready.notify_all();
            self.0.room.notify_all();
        }
    }
}

/// Runs `produce(i)` for every `i` in `range` on `threads` threads and `consume(i, value)`
/// on the calling thread in ascending order of `i`. The first error of `consume` stops the
/// workers and is returned; a panic of `produce` stops the run and is raised again here.
pub fn for_each_ordered<I, T, E, P, C>(
    range: Range<I>,
    threads: usize,
    produce: P,
    mut consume: C,
) -> Result<(), E>
where
    I: Index,
    T: Send,
    P: Fn(I) -> T + Sync,
    C: FnMut(I, T) -> Result<(), E>,
{
    let (start, end) = (range.start.to_usize(), range.end.to_usize());
    if threads <= 1 {
        for i in start..end {
            let i = I::from_usize(i);
            consume(i, produce(i))?;
        }
        return Ok(());
    }
    let window = threads * 2;
    let next = AtomicUsize::new(start);
    let shared = Shared {
        state: Mutex::new(Waiting {
            made: BTreeMap::new(),
            expected: start,
            failed: false,
        }),
        ready: Condvar::new(),
        room: Condvar::new(),
        stop: AtomicBool::new(false),
    };
    let stopped = || shared.stop.load(Ordering::Relaxed);

    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let _alarm = PanicAlarm(&shared);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= end || stopped() {
                        return;
                    }
                    let mut state = shared.lock();
                    while i >= state.expected + window && !stopped() {
                        state = shared
                            .room
                            .wait(state)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                    drop(state);
                    if stopped() {
                        return;
                    }
                    let value = produce(I::from_usize(i));
                    shared.lock().made.insert(i, value);
                    shared.ready.notify_all();
                }
            });
        }

        let mut result = Ok(());
        for i in start..end {
            let value = {
                let mut state = shared.lock();
                loop {
                    if let Some(value) = state.made.remove(&i) {
                        state.expected = i + 1;
                        break Some(value);
                    }
                    if state.failed {
                        break None;
                    }
                    state = shared
                        .ready
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            };
            shared.room.notify_all();
            // `None`: a worker panicked; the scope raises its panic once all have stopped.
            let Some(value) = value else { break };
            if let Err(error) = consume(I::from_usize(i), value) {
                result = Err(error);
                break;
            }
        }
        shared.stop.store(true, Ordering::Relaxed);
        // Under the lock, so that no worker checks `stop` and then misses this wake-up.
        let state = shared.lock();
        shared.room.notify_all();
        drop(state);
        result
    })
}

#[cfg(test)]
mod tests;
