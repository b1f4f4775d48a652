//! Memory figures of this process and the machine (Linux `/proc` and the control group's
//! limit under `/sys/fs/cgroup`; `None` elsewhere).

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

/// The memory this process may use: physical memory, or less where its control group
/// (a container's `--memory`, a systemd `MemoryMax=`) sets a lower limit.
pub fn usable_memory() -> Option<u64> {
    match (physical_memory(), cgroup_memory_limit()) {
        (Some(physical), Some(limit)) => Some(physical.min(limit)),
        (physical, limit) => physical.or(limit),
    }
}

/// The memory limit of this process's control group, if it has one: cgroup v2's
/// `memory.max`, or v1's `memory.limit_in_bytes`, at the group's path from
/// `/proc/self/cgroup` or else at the root of the hierarchy (what a container sees).
pub fn cgroup_memory_limit() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mut files = Vec::new();
    for line in groups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let path = path.trim_end_matches('/');
        if id == "0" && controllers.is_empty() {
            files.push(format!("/sys/fs/cgroup{path}/memory.max"));
            files.push("/sys/fs/cgroup/memory.max".to_owned());
        } else if controllers.split(',').any(|c| c == "memory") {
            files.push(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"));
            files.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".to_owned());
        }
    }
    files
        .iter()
        .find_map(|file| std::fs::read_to_string(file).ok())
        .and_then(|text| parse_cgroup_limit(&text))
}

/// A cgroup memory limit file's value: `None` for no limit (`max`, or v1's huge number).
fn parse_cgroup_limit(text: &str) -> Option<u64> {
    let limit: u64 = text.trim().parse().ok()?;
    // cgroup v1 writes "no limit" as the largest page-aligned i64.
    (limit < 1 << 60).then_some(limit)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_limits_read_as_bytes_or_none() {
        assert_eq!(parse_cgroup_limit("1073741824\n"), Some(1 << 30));
        assert_eq!(parse_cgroup_limit("max\n"), None);
        assert_eq!(parse_cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(parse_cgroup_limit(""), None);
        let usable = usable_memory().expect("Linux reports its memory");
        assert!(usable <= physical_memory().unwrap());
        if let Some(limit) = cgroup_memory_limit() {
            assert_eq!(usable, limit.min(physical_memory().unwrap()));
        }
    }
}
