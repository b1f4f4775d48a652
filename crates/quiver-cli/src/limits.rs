//! Command-line values that have a range, and the query limits `serve`, `query` and
//! `console` share.
//!
//! Every value is checked when it is parsed, so a bad one is a usage error (exit 2) that
//! names the flag and the accepted range, instead of a panic or a runaway resource later:
//! durations (`30`, `1.5s`, `250ms`), sizes (`512M`, `4G`, `1.5GiB`, `1000000`), thread
//! counts (at most [`THREADS_PER_CORE`] per available core) and row counts. A limit
//! (`--timeout`, `--max-results`, `--max-memory`) also accepts `0`, `none` or `off` for
//! "no limit", which is distinct from leaving the flag out (the subcommand's default).

use std::time::Duration;

use clap::Args;
use quiver_sparql::ExecOptions;

use crate::memory::usable_memory;

/// The longest duration accepted anywhere: a year, far beyond any sensible limit, and far
/// below what `Duration` can hold.
pub const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// Thread counts above this many per available core are refused.
pub const THREADS_PER_CORE: usize = 4;

/// `quiver serve`'s time limit when `--timeout` is not given.
pub const SERVE_TIMEOUT: Duration = Duration::from_secs(60);

/// `quiver serve`'s result cap when `--max-results` is not given: ten million rows (or
/// triples), about a gigabyte of SPARQL JSON, more than any interactive client reads.
pub const SERVE_MAX_RESULTS: usize = 10_000_000;

/// The part of physical memory one query may hold by default in `quiver serve`.
pub const SERVE_MEMORY_FRACTION: u64 = 4;

/// Sizes above this are refused (an exbibyte; `usize` holds it on 64-bit machines).
const MAX_BYTES: f64 = (1u64 << 60) as f64;

/// A limit given on the command line: a value, or explicitly none.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cap<T> {
    Unlimited,
    At(T),
}

impl<T> Cap<T> {
    pub fn into_option(self) -> Option<T> {
        match self {
            Cap::Unlimited => None,
            Cap::At(value) => Some(value),
        }
    }
}

fn is_unlimited(text: &str) -> bool {
    matches!(
        text.trim().to_ascii_lowercase().as_str(),
        "0" | "none" | "off"
    )
}

/// A positive duration: seconds, optionally with `s` or `ms` (`30`, `1.5s`, `250ms`).
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    parse_duration(text).and_then(|duration| {
        if duration.is_zero() {
            Err(duration_range(text))
        } else {
            Ok(duration)
        }
    })
}

/// A duration that may be zero (`--queue-timeout 0`: never wait).
pub fn parse_wait(text: &str) -> Result<Duration, String> {
    parse_duration(text)
}

/// The slow-query log's threshold: a bare number is milliseconds (`250`), else a
/// duration with its unit (`250ms`, `1.5s`); `0` logs every query.
pub fn parse_slow_query(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok(Duration::from_secs_f64(ms / 1e3)),
        Ok(_) => Err(format!("{text:?}: give milliseconds, 0 or more")),
        Err(_) => parse_duration(text),
    }
}

/// A time limit: a positive duration, or `0`/`none`/`off`.
pub fn parse_timeout(text: &str) -> Result<Cap<Duration>, String> {
    if is_unlimited(text) {
        return Ok(Cap::Unlimited);
    }
    parse_seconds(text)
        .map(Cap::At)
        .map_err(|e| format!("{e}, or 0/none for no limit"))
}

fn duration_range(text: &str) -> String {
    format!("must be a number of seconds above 0 and at most {MAX_SECONDS} (a year), optionally with `s` or `ms`, not `{text}`")
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    let (number, scale) = if let Some(ms) = trimmed.strip_suffix("ms") {
        (ms, 1e-3)
    } else {
        (trimmed.strip_suffix('s').unwrap_or(trimmed), 1.0)
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|value| value * scale)
        .filter(|seconds| seconds.is_finite() && (0.0..=MAX_SECONDS).contains(seconds))
        .map(Duration::from_secs_f64)
        .ok_or_else(|| duration_range(text))
}

/// A size in bytes: a number with an optional unit. `K`, `M`, `G`, `T` and `KiB` … `TiB`
/// are powers of 1024, `KB` … `TB` powers of 1000, `B` or nothing plain bytes; fractions
/// are allowed (`1.5GiB`).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let multiplier: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return Err(size_range(text)),
    };
    number
        .trim()
        .parse::<f64>()
        .ok()
        .map(|value| (value * multiplier).round())
        .filter(|bytes| bytes.is_finite() && *bytes >= 1.0 && *bytes <= MAX_BYTES)
        .map(|bytes| bytes as usize)
        .ok_or_else(|| size_range(text))
}

fn size_range(text: &str) -> String {
    format!("must be a size above 0 such as 512M, 4G, 1.5GiB or a number of bytes (K, M, G, T and KiB…TiB are powers of 1024, KB…TB of 1000), not `{text}`")
}

/// A memory limit: a size, or `0`/`none`/`off`.
pub fn parse_memory(text: &str) -> Result<Cap<usize>, String> {
    if is_unlimited(text) {
        return Ok(Cap::Unlimited);
    }
    parse_size(text)
        .map(Cap::At)
        .map_err(|e| format!("{e}, or 0/none for no limit"))
}

/// A row cap: a whole number above 0, or `0`/`none`/`off`.
pub fn parse_rows(text: &str) -> Result<Cap<usize>, String> {
    if is_unlimited(text) {
        return Ok(Cap::Unlimited);
    }
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .map(Cap::At)
        .ok_or_else(|| {
            format!("must be a whole number of rows above 0, or 0/none for no limit, not `{text}`")
        })
}

/// The cores this process may use.
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The largest thread count accepted: [`THREADS_PER_CORE`] per available core, at least 8.
pub fn max_threads() -> usize {
    (THREADS_PER_CORE * available_cores()).max(8)
}

/// A thread count from 1 to [`max_threads`].
pub fn parse_threads(text: &str) -> Result<u32, String> {
    let max = max_threads();
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .map(|n| n as u32)
        .ok_or_else(|| {
            format!(
                "must be a whole number from 1 to {max} ({THREADS_PER_CORE} per available core, {} here), not `{text}`",
                available_cores()
            )
        })
}

/// The flags that bound one query, shared by `serve`, `query` and `console`.
#[derive(Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Cancel a query after this many seconds (`250ms`, `1.5s`); `0` or `none` for no
    /// limit [default: 60 for serve, none otherwise]
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout, allow_hyphen_values = true)]
    pub timeout: Option<Cap<Duration>>,
    /// Refuse results with more rows (or triples) than this; `0` or `none` for no limit
    /// [default: 10000000 for serve, none otherwise]
    #[arg(long, value_name = "ROWS", value_parser = parse_rows, allow_hyphen_values = true)]
    pub max_results: Option<Cap<usize>>,
    /// The memory the operators of the queries in flight may hold together (`512M`, `4G`,
    /// `1.5GiB`, bytes; one pool, from which the query that takes the most is refused);
    /// `0` or `none` for no limit [default: a quarter of physical memory for serve, none
    /// otherwise]
    #[arg(long, value_name = "SIZE", value_parser = parse_memory, allow_hyphen_values = true)]
    pub max_memory: Option<Cap<usize>>,
}

/// The limits a query runs under (`None`: unlimited).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct QueryLimits {
    pub timeout: Option<Duration>,
    pub max_results: Option<usize>,
    pub max_memory: Option<usize>,
}

impl QueryLimits {
    /// `quiver serve`'s defaults: 60 s, ten million rows, a quarter of the memory this
    /// process may use (physical memory, or its container's limit when lower; none when
    /// neither can be read).
    pub fn serve_defaults() -> Self {
        Self {
            timeout: Some(SERVE_TIMEOUT),
            max_results: Some(SERVE_MAX_RESULTS),
            max_memory: usable_memory()
                .map(|bytes| (bytes / SERVE_MEMORY_FRACTION) as usize)
                .filter(|&bytes| bytes > 0),
        }
    }

    /// Copies the limits into execution options.
    pub fn apply(&self, options: &mut ExecOptions) {
        options.timeout = self.timeout;
        options.max_results = self.max_results;
        options.max_memory = self.max_memory;
    }
}

impl LimitArgs {
    /// The flags given, as another process's command line takes them (`quiver cluster`'s
    /// processes answering queries under the same limits as process 0).
    pub fn as_flags(&self) -> Vec<String> {
        fn cap<T>(cap: &Cap<T>, shown: impl Fn(&T) -> String) -> String {
            match cap {
                Cap::Unlimited => "none".to_owned(),
                Cap::At(value) => shown(value),
            }
        }
        let mut flags = Vec::new();
        if let Some(timeout) = &self.timeout {
            let seconds = cap(timeout, |t| format!("{}s", t.as_secs_f64()));
            flags.push(format!("--timeout={seconds}"));
        }
        if let Some(rows) = &self.max_results {
            flags.push(format!("--max-results={}", cap(rows, usize::to_string)));
        }
        if let Some(bytes) = &self.max_memory {
            flags.push(format!("--max-memory={}", cap(bytes, usize::to_string)));
        }
        flags
    }

    /// The limits: each flag given, else its value in `defaults`.
    pub fn resolve(&self, defaults: QueryLimits) -> QueryLimits {
        QueryLimits {
            timeout: self.timeout.map_or(defaults.timeout, Cap::into_option),
            max_results: self
                .max_results
                .map_or(defaults.max_results, Cap::into_option),
            max_memory: self
                .max_memory
                .map_or(defaults.max_memory, Cap::into_option),
        }
    }
}

/// A size for people: `512 MiB`, `1.5 GiB`, `300 B`.
pub fn human_size(bytes: usize) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{:.1} {}", value, UNITS[unit]).replace(".0 ", " ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_seconds_and_milliseconds_within_range() {
        assert_eq!(parse_seconds("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_seconds("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_seconds("250ms"), Ok(Duration::from_millis(250)));
        for bad in [
            "0", "-1", "nan", "inf", "1e300", "31536001", "", "ten", "5 min",
        ] {
            let error = parse_seconds(bad).unwrap_err();
            assert!(error.contains("at most 31536000"), "{bad}: {error}");
        }
        assert_eq!(parse_wait("0"), Ok(Duration::ZERO));
        assert_eq!(parse_timeout("none"), Ok(Cap::Unlimited));
        assert_eq!(parse_timeout("0"), Ok(Cap::Unlimited));
        assert_eq!(parse_timeout("2"), Ok(Cap::At(Duration::from_secs(2))));
        assert!(parse_timeout("-3")
            .unwrap_err()
            .contains("none for no limit"));
    }

    #[test]
    fn sizes_take_binary_and_decimal_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2 KB"), Ok(2000));
        assert_eq!(parse_size("3mb"), Ok(3_000_000));
        assert_eq!(parse_size("7b"), Ok(7));
        for bad in ["-1G", "0", "0.1", "4X", "G", "nan", "1e30", "2EiB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_memory("off"), Ok(Cap::Unlimited));
        assert_eq!(parse_memory("256M"), Ok(Cap::At(256 << 20)));
    }

    #[test]
    fn thread_counts_are_capped_by_the_cores() {
        let max = max_threads();
        assert!(max >= THREADS_PER_CORE * available_cores() && max >= 8);
        assert_eq!(parse_threads("1"), Ok(1));
        assert_eq!(parse_threads(&max.to_string()), Ok(max as u32));
        for bad in ["0", "-2", "x", &(max + 1).to_string(), "4096"] {
            let error = parse_threads(bad).unwrap_err();
            assert!(
                error.contains(&format!("from 1 to {max}")),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn flags_given_replace_the_defaults_and_none_removes_them() {
        let defaults = QueryLimits {
            timeout: Some(Duration::from_secs(60)),
            max_results: Some(10),
            max_memory: Some(1 << 30),
        };
        let args = LimitArgs {
            timeout: Some(Cap::Unlimited),
            max_results: None,
            max_memory: Some(Cap::At(1 << 20)),
        };
        assert_eq!(
            args.resolve(defaults),
            QueryLimits {
                timeout: None,
                max_results: Some(10),
                max_memory: Some(1 << 20),
            }
        );
        assert_eq!(LimitArgs::default().resolve(defaults), defaults);
        let mut options = ExecOptions::default();
        defaults.apply(&mut options);
        assert_eq!(options.max_memory, Some(1 << 30));
        assert_eq!(options.max_results, Some(10));
    }

    #[test]
    fn serve_defaults_take_a_quarter_of_the_memory() {
        let memory = usable_memory().expect("/proc/meminfo is readable on Linux");
        let defaults = QueryLimits::serve_defaults();
        assert_eq!(defaults.max_memory, Some((memory / 4) as usize));
        assert_eq!(defaults.timeout, Some(Duration::from_secs(60)));
        assert_eq!(human_size(512 << 20), "512 MiB");
        assert_eq!(human_size(3 << 29), "1.5 GiB");
        assert_eq!(human_size(100), "100 B");
    }
}
