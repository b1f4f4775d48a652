//! Memory figures of this process and the machine (Linux `/proc`; `None` elsewhere).

/// Peak resident set size of this process, in bytes.
pub fn peak_rss() -> Option<u64> {
    status_field("VmHWM:")
}

/// Current resident set size of this process, in bytes.
pub fn resident_bytes() -> Option<u64> {
    status_field("VmRSS:")
}

/// Allocations from this size up are mapped on their own and unmapped when freed.
const MMAP_THRESHOLD: usize = 1 << 20;

/// Makes the allocator give freed memory back to the system at once, so that the
/// process's resident memory follows what its queries hold (their memory pool) instead of
/// what they held at their peak.
///
/// glibc's malloc raises its mmap threshold as large blocks are freed (up to 32 MiB), after
/// which tables of a few MiB come from its arenas, and what queries on many threads free
/// there stays resident: measured on a server of eight workers, eight heavy queries under
/// a 1 GiB pool peaked at 1.7 GiB resident with the dynamic threshold and at 1.0 GiB with
/// a fixed one. Setting the threshold fixes it (glibc's documented `mallopt`); other C
/// libraries are left as they are.
pub fn return_freed_memory_promptly() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only changes allocator parameters; glibc documents it as safe to
    // call at any time, from any thread, with these arguments.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = MMAP_THRESHOLD;
}

/// Physical memory in bytes (`MemTotal` of `/proc/meminfo`).
pub fn physical_memory() -> Option<u64> {
    kib_field("/proc/meminfo", "MemTotal:")
}

fn status_field(name: &str) -> Option<u64> {
    kib_field("/proc/self/status", name)
}

/// The value of the line `NAME N kB` of a `/proc` file, in bytes.
fn kib_field(path: &str, name: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// `bytes` as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}
