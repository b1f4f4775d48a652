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
    let bytes = std::mem::size_of_val(values);
    // SAFETY: the pages lie inside `values`, which this call borrows uniquely, so no other
    // reference observes the change. MADV_DONTNEED only replaces the pages' contents (by
    // zero pages for anonymous memory, by the file's bytes for a file mapping), and every
    // bit pattern is a valid `T` (`Pod`). The mapping itself stays, so the slice and its
    // owner remain valid.
    unsafe { drop_whole_pages(values.as_mut_ptr().cast(), bytes) }
}

/// Drops the resident whole pages inside `bytes`, which must lie in a read-only mapping of
/// a file that nobody writes (a snapshot's, see `Column::release_mapped_pages`): the next
/// read maps the file's same bytes again. Does nothing where the system offers no way to
/// do it.
pub(crate) fn release_file_pages(bytes: &[u8]) {
    // SAFETY: `bytes` lies in a read-only file mapping (the caller's contract, kept by
    // `Column`, whose only mapped constructor takes a memmap2 `Mmap`). Such a mapping's
    // resident pages are the page cache's own (shared, or private but never written, so
    // never copied): MADV_DONTNEED only drops the page table entries, and the next read
    // faults the same page cache pages, or the file's bytes, back. What any reference
    // reads is unchanged.
    unsafe { drop_whole_pages(bytes.as_ptr(), bytes.len()) }
}

/// `MADV_DONTNEED` over the whole pages inside the `len` bytes at `start`; nothing where the
/// system lacks it.
///
/// # Safety
/// The bytes must lie in one live mapping, and replacing those pages' contents (by zeros for
/// anonymous memory, by the file's bytes for a file mapping) must change nothing another
/// reference may read.
unsafe fn drop_whole_pages(start: *const u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let page = page_size();
        let start = start as usize;
        let first = start.next_multiple_of(page);
        let last = (start + len) / page * page;
        if last > first {
            // SAFETY: `first..last` lies inside the caller's bytes, a live mapping; it vouches
            // that replacing its pages' contents is unobservable or intended. The mapping
            // itself stays.
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
    let _ = (start, len);
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
