//! A cache prefetch hint, for the loops that look up many ids at random places in a large
//! structure (the dictionary, the graph index): issuing the next lookups' loads ahead of
//! time lets their cache misses overlap instead of following one another.

/// Hints the CPU to bring the cache line holding `pointer` into its caches.
#[inline(always)]
pub fn prefetch_read<T>(pointer: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(pointer as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = pointer;
}
