//! Recovery: the snapshot plus the log records after it.
//!
//! The snapshot records the last sequence number it contains (`LoadInfo::log_sequence`).
//! The log files are read in generation order; records up to that number are skipped (a
//! checkpoint was interrupted before deleting them), the following ones must be
//! consecutive; their change sets are folded into one (`ChangeFold`: each quad's last
//! operation, graphs dropped and created) and applied with `Store::apply` once per few
//! million quads instead of once per commit (new terms get the ids they had).
//! Reading stops at the first torn or damaged record, or at a gap in the sequence: the
//! file is cut there (truncated and synced), later files are removed, and the report says
//! what was discarded. A record that is whole but does not apply to the snapshot means the
//! log belongs to another store: that refuses to open, and nothing is cut.

use std::path::{Path, PathBuf};

use quiver_store::{ApplyError, ChangeFold, Store};

use crate::error::DbError;
use crate::wal::{self, LogFile};

/// Distinct quads a fold of records may hold before it is applied and a new fold begins
/// (about 40 bytes each).
const FOLD_QUADS: usize = 1 << 23;

/// Applies the records folded so far to `store` and starts a new fold after them.
fn apply_fold(store: &Store, fold: &mut ChangeFold, path: &Path) -> Result<Store, DbError> {
    let folded = std::mem::replace(fold, ChangeFold::new(fold.terms()));
    if folded.sets() == 0 {
        return Ok(store.clone());
    }
    let sets = folded.sets();
    store.apply(&folded.finish()).map_err(|e| {
        DbError::log(
            path,
            format!(
                "the last {sets} change sets do not apply to the snapshot ({e}): the log belongs to another version of the store; move the wal-*.log files away to open the snapshot alone"
            ),
        )
    })
}

fn does_not_apply(path: &Path, sequence: u64, error: ApplyError) -> DbError {
    DbError::log(
        path,
        format!(
            "record {sequence} does not apply to the snapshot ({error}): the log belongs to another version of the store; move the wal-*.log files away to open the snapshot alone"
        ),
    )
}

/// A part of the log that recovery discarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogCut {
    pub file: PathBuf,
    /// Where the file was cut (0: the file was removed).
    pub offset: u64,
    pub bytes_discarded: u64,
    pub reason: String,
}

/// What opening a database found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenReport {
    /// The sequence number the snapshot contains.
    pub snapshot_sequence: u64,
    /// Log records applied on top of it.
    pub replayed: u64,
    /// The last sequence number of the recovered version.
    pub last_sequence: u64,
    /// Torn or damaged log parts that were cut off.
    pub cuts: Vec<LogCut>,
}

impl OpenReport {
    /// One line per cut, for warnings.
    pub fn warnings(&self) -> Vec<String> {
        self.cuts
            .iter()
            .map(|cut| {
                format!(
                    "{}: {}; {} bytes of the log discarded{}",
                    cut.file.display(),
                    cut.reason,
                    cut.bytes_discarded,
                    if cut.offset == 0 {
                        " (file removed)".to_string()
                    } else {
                        format!(" from byte {}", cut.offset)
                    }
                )
            })
            .collect()
    }
}

/// The recovered state.
pub(crate) struct Recovered {
    pub store: Store,
    pub last_sequence: u64,
    /// The file to append to (none when read-only).
    pub file: Option<LogFile>,
    /// Bytes of the log files kept on disk.
    pub bytes: u64,
    pub report: OpenReport,
}

/// Replays the log of `dir` onto `store`, its snapshot. With `read_only`, nothing on disk
/// changes: damaged parts are skipped and reported, but not cut, and no file is opened for
/// appending.
pub(crate) fn recover(dir: &Path, mut store: Store, read_only: bool) -> Result<Recovered, DbError> {
    let remove = |path: &Path| -> Result<(), DbError> {
        if read_only {
            return Ok(());
        }
        std::fs::remove_file(path).map_err(|e| DbError::io(path, e))
    };
    let covered = store.info().log_sequence;
    let mut report = OpenReport {
        snapshot_sequence: covered,
        ..OpenReport::default()
    };
    let mut next = covered + 1;
    let files = wal::list(dir)?;
    let mut fold = ChangeFold::new(store.terms());
    let max_generation = files.last().map_or(0, |(g, _)| *g);
    // Set once a record could not be read: everything after it is discarded.
    let mut stopped = false;
    let mut bytes = 0;
    // The last file kept, the end of its whole records and the sequence after them.
    let mut last: Option<(u64, PathBuf, u64, u64)> = None;
    for (generation, path) in files {
        if stopped {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            remove(&path)?;
            report.cuts.push(LogCut {
                file: path,
                offset: 0,
                bytes_discarded: size,
                reason: "follows a damaged part of the log".into(),
            });
            continue;
        }
        let contents = wal::read(&path)?;
        let Some(first) = contents.first_sequence else {
            // A torn header: the file was being created.
            remove(&path)?;
            report.cuts.push(LogCut {
                file: path,
                offset: 0,
                bytes_discarded: contents.file_len,
                reason: contents.problem.unwrap_or_default(),
            });
            stopped = true;
            continue;
        };
        let mut cut: Option<(u64, String)> = contents
            .problem
            .clone()
            .map(|problem| (contents.good_end, problem));
        let mut file_next = first;
        if first > next {
            // Records are missing before this file: it and every later one are unusable.
            remove(&path)?;
            report.cuts.push(LogCut {
                file: path,
                offset: 0,
                bytes_discarded: contents.file_len,
                reason: format!("the log continues at sequence number {first}, {next} was due"),
            });
            stopped = true;
            continue;
        } else {
            for record in &contents.records {
                if record.sequence < next {
                    file_next = record.sequence + 1;
                    continue;
                }
                let sets = match crate::record::decode(&record.payload) {
                    Ok(sets) => sets,
                    Err(e) => {
                        cut = Some((record.offset, format!("record {}: {e}", record.sequence)));
                        break;
                    }
                };
                for set in &sets {
                    fold.push(set)
                        .map_err(|e| does_not_apply(&path, record.sequence, e))?;
                }
                if fold.quads() >= FOLD_QUADS {
                    store = apply_fold(&store, &mut fold, &path)?;
                }
                report.replayed += 1;
                next = record.sequence + 1;
                file_next = next;
            }
        }
        let kept = match cut {
            Some((offset, reason)) => {
                if !read_only {
                    wal::truncate(&path, offset)?;
                }
                report.cuts.push(LogCut {
                    file: path.clone(),
                    offset,
                    bytes_discarded: contents.file_len - offset,
                    reason,
                });
                stopped = true;
                offset
            }
            None => contents.file_len,
        };
        bytes += kept;
        last = Some((generation, path, kept, file_next));
    }
    let last_path = last.as_ref().map_or(dir, |(_, path, _, _)| path.as_path());
    store = apply_fold(&store, &mut fold, last_path)?;
    let file = match last {
        _ if read_only => None,
        Some((generation, path, end, file_next)) if file_next == next => {
            Some(LogFile::open_append(&path, generation, end)?)
        }
        _ => {
            let file = LogFile::create(dir, max_generation + 1, next)?;
            bytes += file.len();
            Some(file)
        }
    };
    if !report.cuts.is_empty() && !read_only {
        wal::sync_dir(dir)?;
    }
    report.last_sequence = next - 1;
    Ok(Recovered {
        store,
        last_sequence: next - 1,
        file,
        bytes,
        report,
    })
}
