//! Group commit: committers queue their log records, one of them writes them all.
//!
//! A committer evaluates its transaction under the database's writer lock, queues the
//! record ([`Log::enqueue`], still under that lock, so the queue is in sequence order) and
//! releases the lock; the next writer may start at once, on the not yet durable version.
//! It then waits ([`Log::wait`]): if no other committer is writing, it becomes the leader,
//! takes every queued record, writes them with one `write` and (under
//! [`SyncMode::Always`]) one `fsync`, publishes the newest version, and wakes the others;
//! else it waits on a condition variable until a leader has dealt with its record.
//!
//! A failed write or `fsync` fails its whole group and every record queued behind it
//! (they were evaluated on versions that now never existed): the log is cut back, and the
//! database's [`Hooks::roll_back`] resets the writer's latest version to the published one.
//! A commit is acknowledged only after its record is written (and synced, by the mode);
//! it is visible to readers from the same moment.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};

use quiver_store::Store;

use crate::error::{DbError, SharedFailure};
use crate::wal::{self, LogFile};

/// When a commit is acknowledged relative to its log record reaching the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncMode {
    /// After `fsync` of the log (concurrent commits share one): nothing acknowledged is
    /// ever lost.
    #[default]
    Always,
    /// After the write to the log; a background `fsync` follows within about 10 ms (and
    /// `Database::sync` forces one).
    Batch,
    /// After the write to the log; synced only by `Database::sync` and when the database
    /// is closed (dropped): in between, the operating system writes the log when it likes.
    None,
}

/// What became of a queued record.
pub(crate) type Slot = Arc<OnceLock<Result<(), SharedFailure>>>;

struct Pending {
    sequence: u64,
    record: Vec<u8>,
    store: Arc<Store>,
    slot: Slot,
}

#[derive(Default)]
struct Queue {
    pending: Vec<Pending>,
    /// A leader is writing a group.
    leader: bool,
}

/// What the database does at the ends of a group.
pub(crate) trait Hooks {
    /// Makes `store` (the version after record `sequence`) the published version. Called
    /// with the log file locked, so a log rotation sees the log and the published version
    /// agree.
    fn publish(&self, store: Arc<Store>, sequence: u64);
    /// Runs `fail_queued` with the writer lock held, then resets the writer to the
    /// published version.
    fn roll_back(&self, fail_queued: &mut dyn FnMut());
}

/// Counters of the log, for reports and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Records written (one per commit that changed something).
    pub records: u64,
    /// Groups written (one write each).
    pub groups: u64,
    /// `fsync` calls on log files.
    pub fsyncs: u64,
    /// Bytes of the log files on disk.
    pub bytes: u64,
    /// Checkpoints completed.
    pub checkpoints: u64,
    /// Microseconds the completed checkpoints took, together.
    pub checkpoint_micros: u64,
}

/// The write-ahead log of a database: the file being appended to and the commit queue.
pub(crate) struct Log {
    file: Mutex<LogFile>,
    queue: Mutex<Queue>,
    cond: Condvar,
    mode: SyncMode,
    /// Records written but not yet synced (`SyncMode::Batch`).
    dirty: AtomicBool,
    records: AtomicU64,
    groups: AtomicU64,
    fsyncs: AtomicU64,
    bytes: AtomicU64,
    checkpoints: AtomicU64,
    checkpoint_micros: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Log {
    /// A log appending to `file`; `bytes` is the size of every log file on disk.
    pub(crate) fn new(file: LogFile, mode: SyncMode, bytes: u64) -> Self {
        Self {
            file: Mutex::new(file),
            queue: Mutex::new(Queue::default()),
            cond: Condvar::new(),
            mode,
            dirty: AtomicBool::new(false),
            records: AtomicU64::new(0),
            groups: AtomicU64::new(0),
            fsyncs: AtomicU64::new(0),
            bytes: AtomicU64::new(bytes),
            checkpoints: AtomicU64::new(0),
            checkpoint_micros: AtomicU64::new(0),
        }
    }

    pub(crate) fn stats(&self) -> LogStats {
        LogStats {
            records: self.records.load(Ordering::Relaxed),
            groups: self.groups.load(Ordering::Relaxed),
            fsyncs: self.fsyncs.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            checkpoints: self.checkpoints.load(Ordering::Relaxed),
            checkpoint_micros: self.checkpoint_micros.load(Ordering::Relaxed),
        }
    }

    /// Counts a completed checkpoint that took `micros`.
    pub(crate) fn checkpointed(&self, micros: u64) {
        self.checkpoints.fetch_add(1, Ordering::Relaxed);
        self.checkpoint_micros.fetch_add(micros, Ordering::Relaxed);
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Queues the record of commit `sequence`, whose version is `store`. Call with the
    /// writer lock held.
    pub(crate) fn enqueue(&self, sequence: u64, record: Vec<u8>, store: Arc<Store>) -> Slot {
        let slot = Slot::default();
        lock(&self.queue).pending.push(Pending {
            sequence,
            record,
            store,
            slot: Arc::clone(&slot),
        });
        slot
    }

    /// Waits until the record of `slot` is written (and synced, by the mode) or failed,
    /// leading a group when no one else is.
    pub(crate) fn wait(&self, slot: &Slot, hooks: &dyn Hooks) -> Result<(), DbError> {
        let mut queue = lock(&self.queue);
        loop {
            if let Some(result) = slot.get() {
                return result.clone().map_err(|f| f.to_error());
            }
            if !queue.leader && !queue.pending.is_empty() {
                queue.leader = true;
                let group = std::mem::take(&mut queue.pending);
                drop(queue);
                match self.write_group(&group, hooks) {
                    Ok(()) => {
                        queue = lock(&self.queue);
                        for pending in &group {
                            let _ = pending.slot.set(Ok(()));
                        }
                        queue.leader = false;
                    }
                    Err(error) => {
                        let failure = SharedFailure::from_error(&error);
                        hooks.roll_back(&mut || {
                            let mut queue = lock(&self.queue);
                            for pending in group.iter().chain(&queue.pending) {
                                let _ = pending.slot.set(Err(failure.clone()));
                            }
                            queue.pending.clear();
                            queue.leader = false;
                        });
                        queue = lock(&self.queue);
                    }
                }
                self.cond.notify_all();
                continue;
            }
            queue = self.cond.wait(queue).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn write_group(&self, group: &[Pending], hooks: &dyn Hooks) -> Result<(), DbError> {
        let Some(last) = group.last() else {
            return Ok(());
        };
        let mut bytes = Vec::with_capacity(group.iter().map(|p| p.record.len()).sum());
        for pending in group {
            bytes.extend_from_slice(&pending.record);
        }
        let mut file = lock(&self.file);
        let start = file.len();
        file.append(&bytes)?;
        match self.mode {
            SyncMode::Always => {
                self.fsyncs.fetch_add(1, Ordering::Relaxed);
                file.sync(Some(start))?;
            }
            SyncMode::Batch => self.dirty.store(true, Ordering::Release),
            SyncMode::None => {}
        }
        self.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.records
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        self.groups.fetch_add(1, Ordering::Relaxed);
        hooks.publish(Arc::clone(&last.store), last.sequence);
        Ok(())
    }

    /// Whether no record is queued or being written.
    pub(crate) fn is_idle(&self) -> bool {
        let queue = lock(&self.queue);
        queue.pending.is_empty() && !queue.leader
    }

    /// Waits until every record queued now is written or failed (their committers get
    /// the outcome).
    pub(crate) fn drain(&self, hooks: &dyn Hooks) {
        let mut queue = lock(&self.queue);
        loop {
            if let Some(last) = queue.pending.last() {
                let slot = Arc::clone(&last.slot);
                drop(queue);
                let _ = self.wait(&slot, hooks);
                queue = lock(&self.queue);
            } else if queue.leader {
                queue = self.cond.wait(queue).unwrap_or_else(|e| e.into_inner());
            } else {
                return;
            }
        }
    }

    /// Syncs records written since the last sync (`SyncMode::Batch`; with `force`, syncs
    /// in any mode).
    pub(crate) fn sync(&self, force: bool) -> Result<(), DbError> {
        if !self.dirty.swap(false, Ordering::AcqRel) && !force {
            return Ok(());
        }
        let mut file = lock(&self.file);
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        file.sync(None).inspect_err(|_| {
            // Try again next time: the records were acknowledged already.
            self.dirty.store(true, Ordering::Release);
        })
    }

    /// Starts a new log file for the records after the published version, which `read`
    /// returns (with its sequence number) while the log file is locked, so no group is
    /// half done. Returns what `read` gave and the generation of the previous file.
    pub(crate) fn rotate<R>(
        &self,
        dir: &Path,
        read: impl FnOnce() -> (R, u64),
    ) -> Result<(R, u64, u64), DbError> {
        let mut file = lock(&self.file);
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        file.sync(None)?;
        self.dirty.store(false, Ordering::Release);
        let (value, sequence) = read();
        let next = LogFile::create(dir, file.generation + 1, sequence + 1)?;
        self.bytes.fetch_add(next.len(), Ordering::Relaxed);
        let old = std::mem::replace(&mut *file, next);
        Ok((value, sequence, old.generation))
    }

    /// Removes the log files of generations up to `generation` (their records are in a
    /// snapshot).
    pub(crate) fn remove_up_to(&self, dir: &Path, generation: u64) -> Result<(), DbError> {
        let mut removed = false;
        for (g, path) in wal::list(dir)? {
            if g > generation {
                continue;
            }
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            std::fs::remove_file(&path).map_err(|e| DbError::io(&path, e))?;
            let _ = self
                .bytes
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                    Some(b.saturating_sub(size))
                });
            removed = true;
        }
        if removed {
            wal::sync_dir(dir)?;
        }
        Ok(())
    }
}

impl Drop for Log {
    /// A database closed in an orderly way loses nothing, whatever its mode.
    fn drop(&mut self) {
        if self.mode != SyncMode::Always || self.dirty.load(Ordering::Acquire) {
            let _ = self.sync(true);
        }
    }
}
