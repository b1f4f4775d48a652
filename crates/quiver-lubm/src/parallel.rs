//! Generates many universities on several threads and delivers them in index order.
//!
//! Each worker takes the next university index, turns it into a value (a text buffer, a
//! batch of encoded triples…) and hands it to the consumer, which runs on the calling
//! thread and sees universities in ascending order. At most `window` universities are
//! generated ahead of the consumer, so memory stays bounded however many are requested.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

/// Run `produce(university)` for every university in `range` on `threads` threads and
/// `consume` the results in order. The first error from `consume` stops all workers and is
/// returned.
pub fn for_each_university_ordered<T, E, P, C>(
    range: std::ops::Range<u32>,
    threads: usize,
    produce: P,
    mut consume: C,
) -> Result<(), E>
where
    T: Send,
    P: Fn(u32) -> T + Sync,
    C: FnMut(u32, T) -> Result<(), E>,
{
    let threads = threads.max(1);
    let window = (threads as u32) * 2;
    let next = AtomicU32::new(range.start);
    let stop = AtomicBool::new(false);
    // Results waiting for their turn, and the index the consumer expects next.
    let state = Mutex::new((BTreeMap::<u32, T>::new(), range.start));
    let ready = Condvar::new(); // a result arrived
    let room = Condvar::new(); // the consumer advanced

    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| loop {
                let university = next.fetch_add(1, Ordering::Relaxed);
                if university >= range.end || stop.load(Ordering::Relaxed) {
                    return;
                }
                {
                    let mut guard = state.lock().unwrap();
                    while university >= guard.1 + window && !stop.load(Ordering::Relaxed) {
                        guard = room.wait(guard).unwrap();
                    }
                }
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let value = produce(university);
                state.lock().unwrap().0.insert(university, value);
                ready.notify_all();
            });
        }

        let mut result = Ok(());
        for university in range.clone() {
            let value = {
                let mut guard = state.lock().unwrap();
                loop {
                    if let Some(value) = guard.0.remove(&university) {
                        guard.1 = university + 1;
                        break value;
                    }
                    guard = ready.wait(guard).unwrap();
                }
            };
            room.notify_all();
            if let Err(error) = consume(university, value) {
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
        let mut seen = Vec::new();
        let result: Result<(), ()> = for_each_university_ordered(
            3..40,
            4,
            |u| u * 2,
            |u, v| {
                assert_eq!(v, u * 2);
                seen.push(u);
                Ok(())
            },
        );
        assert!(result.is_ok());
        assert_eq!(seen, (3..40).collect::<Vec<_>>());

        let mut count = 0;
        let result = for_each_university_ordered(
            0..1000,
            3,
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
