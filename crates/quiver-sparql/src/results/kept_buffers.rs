//! Chunk buffers kept from one large result to the next.
//!
//! A large result is written in chunks of a megabyte or two each, on every thread
//! (`chunks.rs`). Buffers of that size are mappings of their own (the server fixes the
//! allocator's mmap threshold at 1 MiB so that what queries free leaves at once), so each
//! result's buffers were fresh pages that the kernel gives and zeroes on first touch: on
//! 2 cores, LUBM-1000's q2 as TSV over HTTP faulted in about 11 MB of them per query.
//! Buffers given back here are handed to the next large result instead, up to
//! [`kept_bound`] in all; what is kept is resident, outside any query's memory budget.

use std::sync::Mutex;

/// Bytes (capacities) of buffers kept per thread of the pool. A result holds two batches
/// of two chunks per thread, each chunk's buffer about a megabyte grown to the next power
/// of two: 8 MiB a thread keeps them all.
const KEPT_BYTES_PER_THREAD: usize = 8 << 20;
/// The fewest bytes kept, whatever the threads.
const MIN_KEPT_BYTES: usize = 32 << 20;

/// The most bytes (capacities) of buffers kept: 32 MiB on 2 threads, 128 MiB on 16.
pub(super) fn kept_bound() -> usize {
    (rayon::current_num_threads() * KEPT_BYTES_PER_THREAD).max(MIN_KEPT_BYTES)
}

struct Kept {
    buffers: Vec<Vec<u8>>,
    bytes: usize,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept {
    buffers: Vec::new(),
    bytes: 0,
});

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    // A thread that panicked holding the lock left the list whole (every change is one
    // push or pop with its count).
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An empty buffer: a kept one, with its room, or else a new one.
pub(super) fn take() -> Vec<u8> {
    let mut kept = kept();
    match kept.buffers.pop() {
        Some(buffer) => {
            kept.bytes -= buffer.capacity();
            buffer
        }
        None => Vec::new(),
    }
}

/// Keeps `buffers` for the next result, emptied, as far as [`kept_bound`] allows; frees
/// the others.
pub(super) fn give_back(buffers: impl IntoIterator<Item = Vec<u8>>) {
    let bound = kept_bound();
    let mut freed = Vec::new();
    {
        let mut kept = kept();
        for mut buffer in buffers {
            let bytes = buffer.capacity();
            if bytes == 0 {
                continue;
            }
            if kept.bytes + bytes <= bound {
                buffer.clear();
                kept.bytes += bytes;
                kept.buffers.push(buffer);
            } else {
                freed.push(buffer);
            }
        }
    }
    // Unmapped after the lock is released.
    drop(freed);
}

/// Bytes kept now.
#[cfg(test)]
pub(super) fn kept_bytes() -> usize {
    kept().bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Buffers given back come out again, emptied, with their room, and no more than
    /// [`kept_bound`] are ever kept. (The one test touching the list: other tests' results
    /// are too small to be written in chunks.)
    #[test]
    fn buffers_come_back_emptied_and_within_the_bound() {
        give_back((0..4).map(|_| Vec::<u8>::with_capacity(kept_bound() / 2)));
        assert!(kept_bytes() <= kept_bound());
        let mut first = take();
        assert!(first.is_empty());
        assert!(first.capacity() >= kept_bound() / 2);
        first.extend_from_slice(b"row\n");
        let pointer = first.as_ptr();
        give_back([first]);
        assert!(kept_bytes() <= kept_bound());
        let again = take();
        assert!(again.is_empty());
        assert_eq!(
            again.as_ptr(),
            pointer,
            "the buffer given back is taken again"
        );
        while take().capacity() > 0 {}
        assert_eq!(kept_bytes(), 0);
    }
}
