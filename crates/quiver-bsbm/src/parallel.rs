//! Generates units on several threads and delivers them in order.
//!
//! Workers take the next unit index, turn it into a value (a text buffer, a compressed
//! chunk…) and hand it over; the consumer runs on the calling thread and sees units in
//! ascending order. At most `2 × threads` units are generated ahead of the consumer, so
//! memory stays bounded whatever the dataset's size.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

/// Run `produce(unit)` for every unit in `0..units` on `threads` threads and `consume` the
/// results in order. The first error from `consume` stops the workers and is returned.
pub fn for_each_unit_ordered<T, E, P, C>(
    units: usize,
    threads: usize,
    produce: P,
    mut consume: C,
) -> Result<(), E>
where
    T: Send,
    P: Fn(usize) -> T + Sync,
    C: FnMut(usize, T) -> Result<(), E>,
{
    let threads = threads.max(1);
    if threads == 1 {
        for unit in 0..units {
            consume(unit, produce(unit))?;
        }
        return Ok(());
    }
    let window = threads * 2;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // Results waiting for their turn, and the unit the consumer expects next.
    let state = Mutex::new((BTreeMap::<usize, T>::new(), 0usize));
    let ready = Condvar::new();
    let room = Condvar::new();

    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let unit = next.fetch_add(1, Ordering::Relaxed);
                if unit >= units || stop.load(Ordering::Relaxed) {
                    return;
                }
                {
                    let mut guard = state.lock().unwrap();
                    while unit >= guard.1 + window && !stop.load(Ordering::Relaxed) {
                        guard = room.wait(guard).unwrap();
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let value = produce(unit);
                state.lock().unwrap().0.insert(unit, value);
                ready.notify_all();
            });
        }

        let mut result = Ok(());
        for unit in 0..units {
            let value = {
                let mut guard = state.lock().unwrap();
                loop {
                    if let Some(value) = guard.0.remove(&unit) {
                        guard.1 = unit + 1;
                        break value;
                    }
                    guard = ready.wait(guard).unwrap();
                }
            };
            room.notify_all();
            if let Err(error) = consume(unit, value) {
                result = Err(error);
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        room.notify_all();
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_in_order_and_stops_on_error() {
        for threads in [1, 4] {
            let mut seen = Vec::new();
            let result: Result<(), ()> = for_each_unit_ordered(
                37,
                threads,
                |u| u * 2,
                |u, v| {
                    assert_eq!(v, u * 2);
                    seen.push(u);
                    Ok(())
                },
            );
            assert!(result.is_ok());
            assert_eq!(seen, (0..37).collect::<Vec<_>>());

            let mut count = 0;
            let result = for_each_unit_ordered(
                1_000,
                threads,
                |u| u,
                |u, _| {
                    count += 1;
                    if u == 10 {
                        Err("stop")
                    } else {
                        Ok(())
                    }
                },
            );
            assert_eq!(result, Err("stop"));
            assert_eq!(count, 11);
        }
    }
}
