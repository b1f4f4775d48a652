//! Memory figures of this process and the machine (Linux `/proc`; `None` elsewhere).

/// Peak resident set size of this process, in bytes.
pub fn peak_rss() -> Option<u64> {
    status_field("VmHWM:")
}

/// Current resident set size of this process, in bytes.
pub fn resident_bytes() -> Option<u64> {
    status_field("VmRSS:")
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
