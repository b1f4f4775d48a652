use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::*;

#[test]
fn values_come_in_order_on_any_number_of_threads() {
    for threads in [1, 2, 4, 7] {
        let mut seen = Vec::new();
        let result: Result<(), ()> = for_each_ordered(
            3u32..40,
            threads,
            |i| i * 2,
            |i, value| {
                assert_eq!(value, i * 2);
                seen.push(i);
                Ok(())
            },
        );
        assert!(result.is_ok());
        assert_eq!(seen, (3..40).collect::<Vec<_>>(), "{threads} threads");
    }
}

#[test]
fn the_consumers_first_error_stops_the_run() {
    for threads in [1, 3] {
        let mut count = 0;
        let result = for_each_ordered(
            0usize..1_000,
            threads,
            |i| i,
            |i, _| {
                count += 1;
                if i == 10 {
                    Err("stop")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(result, Err("stop"));
        assert_eq!(count, 11, "{threads} threads");
    }
}

/// However slow the consumer, no value is made more than `2 × threads` past the values it
/// has finished with (the one it is consuming counts as taken: it makes room).
#[test]
fn values_wait_at_most_two_per_thread_ahead_of_the_consumer() {
    let threads = 3;
    let consumed = AtomicUsize::new(0);
    let farthest = AtomicUsize::new(0);
    let result: Result<(), ()> = for_each_ordered(
        0usize..60,
        threads,
        |i| farthest.fetch_max(i - consumed.load(Ordering::SeqCst), Ordering::SeqCst),
        |_, _| {
            std::thread::sleep(Duration::from_micros(200));
            consumed.fetch_add(1, Ordering::SeqCst);
            Ok(())
        },
    );
    assert!(result.is_ok());
    let farthest = farthest.load(Ordering::SeqCst);
    assert!(farthest <= 2 * threads, "a value made {farthest} ahead");
}

/// A worker that panics ends the run with its panic, rather than leaving the consumer
/// waiting forever for the value it never made.
#[test]
fn a_producers_panic_reaches_the_caller_instead_of_a_hang() {
    let (done, outcome) = mpsc::channel();
    std::thread::spawn(move || {
        let result = std::panic::catch_unwind(|| {
            for_each_ordered(
                0usize..100,
                4,
                |i| {
                    if i == 17 {
                        panic!("unit 17 failed");
                    }
                    i
                },
                |_, _| Ok::<_, ()>(()),
            )
        });
        let _ = done.send(result.is_err());
    });
    let panicked = outcome
        .recv_timeout(Duration::from_secs(30))
        .expect("the run hung after a worker panicked");
    assert!(panicked, "the worker's panic was lost");
}
