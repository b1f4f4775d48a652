//! Process memory figures for summaries (Linux `/proc`; `None` elsewhere).

/// Peak resident set size of this process, in bytes.
pub fn peak_rss() -> Option<u64> {
    status_field("VmHWM:")
}

/// Current resident set size of this process, in bytes.
pub fn resident_bytes() -> Option<u64> {
    status_field("VmRSS:")
}

fn status_field(name: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(name))?;
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
