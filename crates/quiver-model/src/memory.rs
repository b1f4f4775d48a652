//! Giving memory back to the operating system while a large build runs.
//!
//! A bulk load passes through phases that each hold hundreds of megabytes per ten million
//! triples (parsed chunks, sorted runs, id triples, the index). Its peak is what bounds the
//! largest graph a machine can load, so each phase returns what it no longer needs instead
//! of leaving it to the allocator:
//!
//! - [`release_pages`] drops the pages of a buffer's consumed part (the id triples already
//!   laid out into records) while the rest is still being read, so the index grows as the
//!   input shrinks.
//! - [`trim_heap`] hands back the free pages the allocator keeps after a phase freed many
//!   mid-sized blocks (glibc keeps them for reuse, and the next phase's large arrays are
//!   mapped apart, so they would stay resident unused: a third of a load's peak, measured).

use bytemuck::Pod;

/// Gives the whole memory pages inside `values` back to the operating system. Their values
/// become unspecified (zero, for the heap's anonymous memory); the slice stays valid, and
/// touching it again maps fresh pages. Values sharing a page with memory outside the slice
/// are kept. Does nothing where the system offers no way to do it.
pub fn release_pages<T: Pod>(values: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        let page = page_size();
        let start = values.as_mut_ptr() as usize;
        let end = start + std::mem::size_of_val(values);
        let first = start.next_multiple_of(page);
        let last = end / page * page;
        if last > first {
            // SAFETY: `first..last` lies inside `values`, which this call borrows uniquely,
            // so no other reference observes the change. MADV_DONTNEED only replaces the
            // pages' contents (by zero pages for anonymous memory, by the file's bytes for a
            // file mapping), and every bit pattern is a valid `T` (`Pod`). The mapping
            // itself stays, so the slice and its owner remain valid.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}

/// Drops the resident whole pages inside `bytes`, which must lie in a read-only mapping of
/// a file that nobody writes (a snapshot's, see `Column::release_mapped_pages`): the next
/// read maps the file's same bytes again. Does nothing where the system offers no way to
/// do it.
pub(crate) fn release_file_pages(bytes: &[u8]) {
    #[cfg(target_os = "linux")]
    {
        let page = page_size();
        let start = bytes.as_ptr() as usize;
        let first = start.next_multiple_of(page);
        let last = (start + bytes.len()) / page * page;
        if last > first {
            // SAFETY: `first..last` lies inside `bytes`, part of a read-only file mapping
            // (the caller's contract, kept by `Column`'s only mapped constructor, over
            // `Mmap`). MADV_DONTNEED on a file mapping drops page table entries only: the
            // next read faults the file's bytes back, which snapshot files never change
            // (a new generation is a new file), so no value behind any reference changes.
            unsafe {
                libc::madvise(
                    first as *mut libc::c_void,
                    last - first,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// Returns the allocator's free pages to the operating system (glibc's `malloc_trim`);
/// nothing elsewhere. Costs a walk over the allocator's free lists: call it between the
/// phases of a large build, not per operation.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory glibc's allocator holds free; it is safe to
    // call at any time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(target_os = "linux")]
fn page_size() -> usize {
    // SAFETY: `sysconf` reads a system constant.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_values_read_back_as_zero_and_the_rest_is_kept() {
        let mut values: Vec<u64> = (1..=1 << 20).collect();
        let (consumed, rest) = values.split_at_mut(1 << 19);
        release_pages(consumed);
        assert!(rest
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i + (1 << 19) + 1) as u64));
        // The pages inside the consumed part read as zero; at most a page's worth at each
        // end (shared with memory outside the slice) keeps its values.
        #[cfg(target_os = "linux")]
        let zeros = consumed.iter().filter(|&&v| v == 0).count();
        #[cfg(target_os = "linux")]
        assert!(
            zeros >= consumed.len() - 2 * page_size() / 8,
            "{zeros} zeros"
        );
        // Writable again.
        consumed.iter_mut().for_each(|v| *v = 7);
        assert!(consumed.iter().all(|&v| v == 7));
        trim_heap();
    }
}
