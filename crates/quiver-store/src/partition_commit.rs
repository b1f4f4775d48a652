//! Replacing the partitions of a grown cluster so that a process killed half-way leaves
//! the cluster either as it was or as the load made it, never a mix.
//!
//! A load into a loaded cluster saves each new partition beside the old one, as
//! `partition-i.next`. Once every partition of the load is saved (each process learns it
//! from the others' summaries), each process *commits* its partitions: it writes the new
//! layout into each of its `.next` directories ([`COMMITTED_FILE`], synced). Only then
//! does it put them in place ([`recover_grown`]: the old partition moves to
//! `partition-i.old`, the new one to `partition-i`), write the layout file, and remove the
//! commit records and the old partitions. [`recover_grown`] is also what a process runs
//! on its partitions before it opens or loads a cluster: whatever step a killed process
//! reached, it finishes a committed replacement, and leaves an uncommitted `.next` (a load
//! that never had every partition saved) to be ignored, and removed by the next load.
//!
//! Each process handles its own partitions only, so the processes of a cluster sharing a
//! directory never rename the same partition; the layout file they may all write is the
//! same. On several machines, a process killed after every partition was saved but before
//! it committed its own leaves its old partitions while the others replace theirs: the
//! cluster then refuses to start (its partitions are of two loads, which the coordinator
//! checks), and the load must be run again into a copy made before it.

use std::path::{Path, PathBuf};

use crate::partition::{partition_dir, read_layout, write_layout, PartitionLayout};
use crate::persist::StoreError;

/// The layout a grown partition was saved for, written into it once every partition of
/// its load is saved: its commit record.
pub const COMMITTED_FILE: &str = "committed-layout.json";

/// The load a grown partition was saved for ([`mark_saved`]).
pub const SAVED_FOR_FILE: &str = "saved-for-load";

/// Where a load into a loaded cluster saves partition `index` before it replaces the old.
pub fn next_partition_dir(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("partition-{index}.next"))
}

/// Where the old partition `index` waits while a grown one takes its place.
pub fn old_partition_dir(dir: &Path, index: u32) -> PathBuf {
    dir.join(format!("partition-{index}.old"))
}

/// Commits the grown partition `index` (saved in [`next_partition_dir`]) for `layout`:
/// from now on it replaces the old one, whatever happens to this process.
pub fn commit_grown(dir: &Path, index: u32, layout: &PartitionLayout) -> Result<(), StoreError> {
    let next = next_partition_dir(dir, index);
    let io = |e: std::io::Error| StoreError::Invalid {
        dir: next.display().to_string(),
        message: format!("writing {COMMITTED_FILE}: {e}"),
    };
    let text = serde_json::to_vec_pretty(layout).expect("the layout serializes");
    let temporary = next.join(format!("{COMMITTED_FILE}.tmp"));
    std::fs::write(&temporary, &text).map_err(io)?;
    std::fs::File::open(&temporary)
        .and_then(|file| file.sync_all())
        .map_err(io)?;
    std::fs::rename(&temporary, next.join(COMMITTED_FILE)).map_err(io)?;
    std::fs::File::open(&next)
        .and_then(|directory| directory.sync_all())
        .map_err(io)
}

/// Puts the committed grown partitions among `indexes` in place, writes the layout they
/// were committed for, and removes what the replacement leaves (see the module's
/// documentation). Returns whether a committed replacement was found. Idempotent: run
/// again after it was killed, it goes on where it stopped.
///
/// A grown partition is committed when it holds its commit record, or when the load it
/// was saved for ([`mark_saved`]) is the one some partition of the directory was
/// committed for, or the layout file's: every partition of a load is saved before any is
/// committed, so on a directory the processes share, one process's commit finishes the
/// replacement of another killed before its own.
pub fn recover_grown(dir: &Path, indexes: &[u32]) -> Result<bool, StoreError> {
    let io = |path: &Path, e: std::io::Error| StoreError::Invalid {
        dir: path.display().to_string(),
        message: format!("putting a grown partition in place: {e}"),
    };
    let committed = commit_record(dir)?;
    let target = match &committed {
        Some(layout) => layout.load.clone(),
        None => read_layout(dir)
            .ok()
            .flatten()
            .and_then(|layout| layout.load),
    };
    let mut found = committed.is_some();
    for &index in indexes {
        let (next, current, old) = (
            next_partition_dir(dir, index),
            partition_dir(dir, index),
            old_partition_dir(dir, index),
        );
        let saved_for = std::fs::read_to_string(next.join(SAVED_FOR_FILE)).ok();
        let in_force =
            next.join(COMMITTED_FILE).exists() || (saved_for.is_some() && saved_for == target);
        if in_force {
            found = true;
            if current.exists() {
                // An old partition left by a run that was killed before: the current one
                // is older still, or the same; either is replaced.
                let _ = std::fs::remove_dir_all(&old);
                std::fs::rename(&current, &old).map_err(|e| io(&current, e))?;
            }
            std::fs::rename(&next, &current).map_err(|e| io(&next, e))?;
        }
    }
    if let Some(layout) = &committed {
        if read_layout(dir).ok().flatten().as_ref() != Some(layout) {
            write_layout(dir, layout)?;
        }
    }
    if found {
        for &index in indexes {
            let current = partition_dir(dir, index);
            let _ = std::fs::remove_file(current.join(COMMITTED_FILE));
            let _ = std::fs::remove_file(current.join(SAVED_FOR_FILE));
            let _ = std::fs::remove_dir_all(old_partition_dir(dir, index));
        }
    } else {
        for &index in indexes {
            // What a finished replacement left when it was killed before removing it.
            if partition_dir(dir, index).exists() {
                let _ = std::fs::remove_dir_all(old_partition_dir(dir, index));
            }
        }
    }
    Ok(found)
}

/// Records, in a grown partition just saved (`next`), which load it was saved for.
pub fn mark_saved(next: &Path, load: &str) -> Result<(), StoreError> {
    std::fs::write(next.join(SAVED_FOR_FILE), load).map_err(|e| StoreError::Invalid {
        dir: next.display().to_string(),
        message: format!("writing {SAVED_FOR_FILE}: {e}"),
    })
}

/// The layout some partition of `dir` was committed for (in place or not yet).
fn commit_record(dir: &Path) -> Result<Option<PartitionLayout>, StoreError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    for entry in entries.flatten() {
        let record = entry.path().join(COMMITTED_FILE);
        let text = match std::fs::read(&record) {
            Ok(text) => text,
            Err(_) => continue,
        };
        let layout = serde_json::from_slice(&text).map_err(|e| StoreError::Invalid {
            dir: record.display().to_string(),
            message: format!("unreadable commit record: {e}"),
        })?;
        return Ok(Some(layout));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::{new_layout, LAYOUT_FILE};

    fn layout(load: &str) -> PartitionLayout {
        let mut layout = new_layout(2);
        layout.load = Some(load.to_owned());
        layout
    }

    /// A partition directory standing for a saved partition of `load` (a grown one, saved
    /// beside the old, marked with its load).
    fn partition(path: &Path, load: &str, grown: bool) {
        std::fs::create_dir_all(path).unwrap();
        std::fs::write(path.join("data"), load).unwrap();
        if grown {
            mark_saved(path, load).unwrap();
        }
    }

    fn load_of(path: &Path) -> String {
        std::fs::read_to_string(path.join("data")).unwrap()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("quiver-commit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Two partitions of load "a" grown by load "b", stopped at every step a killed
    /// process may reach, then recovered by the two processes that own them (one
    /// partition each, sharing the directory, in either order): all of "a" before the
    /// first commit, all of "b" from it on, and nothing behind.
    #[test]
    fn a_grown_cluster_killed_at_any_step_recovers_whole() {
        for (step, first) in (0..6).flat_map(|step| [(step, 0), (step, 1)]) {
            let dir = scratch(&format!("step{step}-{first}"));
            write_layout(&dir, &layout("a")).unwrap();
            for index in 0..2 {
                partition(&partition_dir(&dir, index), "a", false);
                partition(&next_partition_dir(&dir, index), "b", true);
            }
            // Step 1: partition 0 committed; 2: both; 3: partition 0 moved aside;
            // 4: partition 0 in place; 5: partition 1 in place too.
            if step >= 1 {
                commit_grown(&dir, 0, &layout("b")).unwrap();
            }
            if step >= 2 {
                commit_grown(&dir, 1, &layout("b")).unwrap();
            }
            if step >= 3 {
                std::fs::rename(partition_dir(&dir, 0), old_partition_dir(&dir, 0)).unwrap();
            }
            if step >= 4 {
                std::fs::rename(next_partition_dir(&dir, 0), partition_dir(&dir, 0)).unwrap();
            }
            if step >= 5 {
                std::fs::rename(partition_dir(&dir, 1), old_partition_dir(&dir, 1)).unwrap();
                std::fs::rename(next_partition_dir(&dir, 1), partition_dir(&dir, 1)).unwrap();
            }
            // Each process recovers its own partition.
            let found = recover_grown(&dir, &[first]).unwrap();
            let other = recover_grown(&dir, &[1 - first]).unwrap();
            let expected = if step == 0 { "a" } else { "b" };
            assert_eq!(found || other, step > 0, "step {step}");
            for index in 0..2 {
                let current = partition_dir(&dir, index);
                assert_eq!(
                    load_of(&current),
                    expected,
                    "step {step}, partition {index}"
                );
                assert!(!current.join(COMMITTED_FILE).exists(), "step {step}");
                assert!(!current.join(SAVED_FOR_FILE).exists(), "step {step}");
                assert!(!old_partition_dir(&dir, index).exists(), "step {step}");
            }
            // Recovering again finds nothing to do and changes nothing.
            assert!(!recover_grown(&dir, &[0, 1]).unwrap(), "step {step}");
            for index in 0..2 {
                assert_eq!(load_of(&partition_dir(&dir, index)), expected);
            }
            let written = read_layout(&dir).unwrap().unwrap();
            assert_eq!(written.load.as_deref(), Some(expected), "step {step}");
            assert!(dir.join(LAYOUT_FILE).exists());
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
