//! Closing a writable store and opening it again at once, a thousand times, while other
//! threads start child processes. A child inherits a copy of every descriptor of its
//! parent until it runs `exec`, the write lock's among them; the lock must still be free
//! the moment `drop` returns, and commits, checkpoints and the log's batch syncs must
//! all be done with by then.

use crate::common;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use common::*;
use quiver_db::{Database, SyncMode};

const REOPENS: u64 = 1000;
/// A commit on every this many openings, and a checkpoint in the background on the next.
const COMMIT_EVERY: u64 = 50;

#[test]
fn a_store_reopens_right_after_it_is_closed_while_threads_spawn_children() {
    let dir = Scratch::new("reopen");
    drop(Database::open(dir.path(), options(SyncMode::Batch)).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let spawned = Arc::new(AtomicUsize::new(0));
    let spawners: Vec<_> = (0..2)
        .map(|_| {
            let stop = Arc::clone(&stop);
            let spawned = Arc::clone(&spawned);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let status = Command::new("true")
                        .stdout(Stdio::null())
                        .status()
                        .expect("`true` runs");
                    assert!(status.success());
                    spawned.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let mut commits = 0;
    for i in 0..REOPENS {
        let db = Database::open(dir.path(), options(SyncMode::Batch))
            .unwrap_or_else(|e| panic!("opening {i} after a close: {e}"));
        if i % COMMIT_EVERY == 0 {
            commit_tagged(&db, i, 3);
            commits += 1;
        } else if i % COMMIT_EVERY == 1 {
            // Dropped unjoined: the database waits for it or it does nothing.
            drop(db.checkpoint_in_background());
        }
        drop(db);
    }
    stop.store(true, Ordering::Relaxed);
    for spawner in spawners {
        spawner.join().unwrap();
    }
    assert!(
        spawned.load(Ordering::Relaxed) > 10,
        "the threads spawned only {} children",
        spawned.load(Ordering::Relaxed)
    );
    let db = Database::open(dir.path(), options(SyncMode::Batch)).unwrap();
    let counts = tag_counts(&db.snapshot());
    assert_eq!(counts.len(), commits, "{counts:?}");
    assert!(counts.values().all(|&n| n == 3), "{counts:?}");
}
