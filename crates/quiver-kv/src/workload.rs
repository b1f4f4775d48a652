//! Workload descriptions: Wiscer's `key=value` files and the seven built-in workloads.
//!
//! A file has one `key=value` per line; blank lines and lines starting with `#` are
//! ignored; keys match case-insensitively (Wiscer's own files write `keyorder`). Required:
//! `zipf`, `initialSize`, `operationCount`, `fetchProportion`, `insertProportion`,
//! `deleteProportion`. Optional: `updateProportion` (0), `distShiftFreq` (no shifts),
//! `distShiftPrct` (0, a percentage), `keyPattern` (`random`|`sequential`), `keyOrder`
//! (`random`|`sorted`), `storageEngine` (an engine name, Wiscer's `chained`/`ChainedHashing`
//! and `chainedAdaptive`/`VIPHashing`, or `all`) and `outputFile` (per-batch throughput as
//! CSV). Unknown, repeated or missing keys, malformed or negative values and proportions
//! that do not sum to 1 are errors naming the key.

use std::path::{Path, PathBuf};

use crate::engine::EngineKind;

/// How keys are made from their insertion index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyPattern {
    /// A multiplicative hash of the index (distinct, scattered 64-bit keys).
    Random,
    /// The index itself.
    Sequential,
}

/// The initial popularity order of the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    /// A random permutation.
    Random,
    /// The last inserted key is the most popular ("latest").
    Sorted,
}

/// One workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub name: String,
    /// Zipf exponent of key popularity (0: uniform).
    pub zipf: f64,
    pub initial_size: u64,
    pub operation_count: u64,
    pub fetch: f64,
    pub insert: f64,
    pub delete: f64,
    pub update: f64,
    /// Operations between popularity shifts.
    pub dist_shift_freq: Option<u64>,
    /// Share of the probability mass (percent) whose keys leave the hot set at a shift.
    pub dist_shift_prct: f64,
    pub key_pattern: KeyPattern,
    pub key_order: KeyOrder,
    pub engines: Option<Vec<EngineKind>>,
    pub output_file: Option<PathBuf>,
}

/// A malformed or inconsistent workload.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    #[error("line {line}: expected key=value, found '{text}'")]
    Syntax { line: usize, text: String },
    #[error("line {line}: unknown key '{key}' (known: {})", KEYS.join(", "))]
    UnknownKey { line: usize, key: String },
    #[error("line {line}: {key} is given twice")]
    Repeated { line: usize, key: &'static str },
    #[error("line {line}: {key}: '{value}' is not {expected}")]
    BadValue {
        line: usize,
        key: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("line {line}: {key} must not be negative (found {value})")]
    Negative {
        line: usize,
        key: &'static str,
        value: String,
    },
    #[error("missing key {key}")]
    Missing { key: &'static str },
    #[error(
        "fetchProportion + insertProportion + deleteProportion + updateProportion = {sum}, not 1"
    )]
    Proportions { sum: f64 },
    #[error("{key}: {message}")]
    Invalid { key: &'static str, message: String },
    #[error(
        "unknown workload '{name}': neither a file nor a built-in workload ({})",
        BUILTIN.join(", ")
    )]
    UnknownName { name: String },
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

/// Every key a workload file may use, spelt canonically.
pub const KEYS: [&str; 13] = [
    "zipf",
    "initialSize",
    "operationCount",
    "fetchProportion",
    "insertProportion",
    "deleteProportion",
    "updateProportion",
    "distShiftFreq",
    "distShiftPrct",
    "keyPattern",
    "keyOrder",
    "storageEngine",
    "outputFile",
];

const REQUIRED: [&str; 6] = [
    "zipf",
    "initialSize",
    "operationCount",
    "fetchProportion",
    "insertProportion",
    "deleteProportion",
];

/// The built-in workloads, in the order `--all` runs them.
pub const BUILTIN: [&str; 7] = [
    "static-uniform",
    "static-low-skew",
    "static-medium-skew",
    "churn-medium",
    "churn-high",
    "steady-state",
    "read-mostly",
];

/// The text of a built-in workload: 2^20 keys, 20 M operations each.
fn builtin_text(name: &str) -> Option<&'static str> {
    Some(match name {
        "static-uniform" => "zipf=0\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\n",
        "static-low-skew" => "zipf=1\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\n",
        "static-medium-skew" => "zipf=1.5\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\n",
        // Wiscer's churn workloads shift 20% of the mass; the high rate is 5x the medium one.
        "churn-medium" => "zipf=1\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\ndistShiftFreq=5000000\ndistShiftPrct=20\n",
        "churn-high" => "zipf=1\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\ndistShiftFreq=1000000\ndistShiftPrct=20\n",
        "steady-state" => "zipf=1\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=0.95\ninsertProportion=0.025\ndeleteProportion=0.025\n",
        "read-mostly" => "zipf=1\ninitialSize=1048576\noperationCount=20000000\nfetchProportion=0.98\ninsertProportion=0.02\ndeleteProportion=0\n",
        _ => return None,
    })
}

/// A built-in workload by name.
pub fn builtin(name: &str) -> Option<Workload> {
    let text = builtin_text(name)?;
    parse(name, text).ok()
}

/// A built-in workload by name, or else the workload file at `name`.
pub fn load(name: &str) -> Result<Workload, WorkloadError> {
    if let Some(workload) = builtin(name) {
        return Ok(workload);
    }
    let path = Path::new(name);
    if !path.is_file() {
        return Err(WorkloadError::UnknownName {
            name: name.to_owned(),
        });
    }
    let text = std::fs::read_to_string(path).map_err(|error| WorkloadError::Io {
        path: name.to_owned(),
        message: error.to_string(),
    })?;
    let stem = path
        .file_name()
        .map_or_else(|| name.to_owned(), |s| s.to_string_lossy().into_owned());
    parse(&stem, &text)
}

fn parse_count(line: usize, key: &'static str, value: &str) -> Result<u64, WorkloadError> {
    if value.starts_with('-') {
        return Err(WorkloadError::Negative {
            line,
            key,
            value: value.to_owned(),
        });
    }
    value.parse().map_err(|_| WorkloadError::BadValue {
        line,
        key,
        value: value.to_owned(),
        expected: "a whole number",
    })
}

fn parse_real(line: usize, key: &'static str, value: &str) -> Result<f64, WorkloadError> {
    let number: f64 = value
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| WorkloadError::BadValue {
            line,
            key,
            value: value.to_owned(),
            expected: "a finite number",
        })?;
    if number < 0.0 {
        return Err(WorkloadError::Negative {
            line,
            key,
            value: value.to_owned(),
        });
    }
    Ok(number)
}

/// Parses a workload file's text; `name` names the workload in reports.
pub fn parse(name: &str, text: &str) -> Result<Workload, WorkloadError> {
    let mut seen: [Option<(usize, String)>; KEYS.len()] = Default::default();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((key, value)) = trimmed.split_once('=') else {
            return Err(WorkloadError::Syntax {
                line,
                text: trimmed.to_owned(),
            });
        };
        let key = key.trim();
        let Some(slot) = KEYS.iter().position(|k| k.eq_ignore_ascii_case(key)) else {
            return Err(WorkloadError::UnknownKey {
                line,
                key: key.to_owned(),
            });
        };
        if seen[slot].is_some() {
            return Err(WorkloadError::Repeated {
                line,
                key: KEYS[slot],
            });
        }
        seen[slot] = Some((line, value.trim().to_owned()));
    }
    for key in REQUIRED {
        if seen[KEYS.iter().position(|k| *k == key).unwrap_or(0)].is_none() {
            return Err(WorkloadError::Missing { key });
        }
    }
    let get = |key: &str| {
        KEYS.iter()
            .position(|k| *k == key)
            .and_then(|slot| seen[slot].as_ref())
            .map(|(line, value)| (*line, value.as_str()))
    };
    let count = |key: &'static str| get(key).map(|(l, v)| parse_count(l, key, v)).transpose();
    let real = |key: &'static str| get(key).map(|(l, v)| parse_real(l, key, v)).transpose();

    let zipf = real("zipf")?.unwrap_or(0.0);
    let initial_size = count("initialSize")?.unwrap_or(0);
    let operation_count = count("operationCount")?.unwrap_or(0);
    let fetch = real("fetchProportion")?.unwrap_or(0.0);
    let insert = real("insertProportion")?.unwrap_or(0.0);
    let delete = real("deleteProportion")?.unwrap_or(0.0);
    let update = real("updateProportion")?.unwrap_or(0.0);
    let dist_shift_freq = count("distShiftFreq")?;
    let dist_shift_prct = real("distShiftPrct")?.unwrap_or(0.0);

    let sum = fetch + insert + delete + update;
    if (sum - 1.0).abs() > 1e-6 {
        return Err(WorkloadError::Proportions { sum });
    }
    if dist_shift_freq == Some(0) {
        return Err(WorkloadError::Invalid {
            key: "distShiftFreq",
            message: "must be at least 1 (operations between shifts)".into(),
        });
    }
    if dist_shift_prct > 100.0 {
        return Err(WorkloadError::Invalid {
            key: "distShiftPrct",
            message: format!("{dist_shift_prct} is above 100 (a percentage)"),
        });
    }
    if initial_size == 0 && insert == 0.0 && operation_count > 0 {
        return Err(WorkloadError::Invalid {
            key: "initialSize",
            message: "is 0 and nothing is inserted, so there is nothing to operate on".into(),
        });
    }
    let choice = |key: &'static str, options: &[&str], expected| match get(key) {
        None => Ok(None),
        Some((line, value)) => options
            .iter()
            .position(|o| o.eq_ignore_ascii_case(value))
            .map(Some)
            .ok_or_else(|| WorkloadError::BadValue {
                line,
                key,
                value: value.to_owned(),
                expected,
            }),
    };
    let key_pattern = match choice(
        "keyPattern",
        &["random", "sequential"],
        "random or sequential",
    )? {
        Some(1) => KeyPattern::Sequential,
        _ => KeyPattern::Random,
    };
    let key_order = match choice("keyOrder", &["random", "sorted"], "random or sorted")? {
        Some(1) => KeyOrder::Sorted,
        _ => KeyOrder::Random,
    };
    let engines = match get("storageEngine") {
        None => None,
        Some((line, value)) => {
            Some(
                EngineKind::parse_list(value).ok_or_else(|| WorkloadError::BadValue {
                    line,
                    key: "storageEngine",
                    value: value.to_owned(),
                    expected:
                        "an engine (quiver, quiver-vip, chained, chained-vip, hashbrown, all)",
                })?,
            )
        }
    };
    let output_file = match get("outputFile") {
        Some((line, "")) => {
            return Err(WorkloadError::BadValue {
                line,
                key: "outputFile",
                value: String::new(),
                expected: "a file name",
            })
        }
        Some((_, value)) => Some(PathBuf::from(value)),
        None => None,
    };
    Ok(Workload {
        name: name.to_owned(),
        zipf,
        initial_size,
        operation_count,
        fetch,
        insert,
        delete,
        update,
        dist_shift_freq,
        dist_shift_prct,
        key_pattern,
        key_order,
        engines,
        output_file,
    })
}
