//! The database: published versions, serialised writers, the log and checkpoints.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use quiver_snapshot::SnapshotError;
use quiver_sparql::update::execute_update;
use quiver_sparql::ExecOptions;
use quiver_store::{ChangeSet, Store, StoreError};

use crate::checkpoint::{self, CheckpointReport};
use crate::commit::{Hooks, Log, LogStats, SyncMode};
use crate::error::DbError;
use crate::load::FileLoader;
use crate::recover::{recover, OpenReport};
use crate::wal;

use quiver_text::{BuildReport, TextIndex};

/// The log size beyond which a commit starts a checkpoint in the background.
pub const DEFAULT_CHECKPOINT_BYTES: u64 = 256 << 20;

/// How often the background thread syncs the log under [`SyncMode::Batch`].
pub const BATCH_SYNC_INTERVAL: Duration = Duration::from_millis(10);

/// How to open a database.
#[derive(Debug, Clone)]
pub struct DbOptions {
    pub sync: SyncMode,
    /// Create an empty store when the directory holds none.
    pub create: bool,
    /// Start a checkpoint in the background once the log files exceed this many bytes
    /// (`u64::MAX`: never).
    pub checkpoint_bytes: u64,
    /// Open for reading only: the log is replayed but nothing on disk changes (a damaged
    /// tail is skipped, not cut), and writes fail with [`DbError::ReadOnly`]. For tools
    /// that query a store another process may be writing.
    pub read_only: bool,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            sync: SyncMode::default(),
            create: false,
            checkpoint_bytes: DEFAULT_CHECKPOINT_BYTES,
            read_only: false,
        }
    }
}

/// What a committed update did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UpdateReport {
    /// Quads the change sets asked to insert and to delete (before de-duplication against
    /// the store).
    pub inserted: u64,
    pub deleted: u64,
    /// Triples in the store after the commit.
    pub triples: u64,
    /// The commit's log sequence number (0 when it changed nothing or the database is in
    /// memory only).
    pub sequence: u64,
}

/// The published version and the sequence number of the commit that made it.
struct Published {
    store: Arc<Store>,
    sequence: u64,
}

/// The writers' view: the newest version, perhaps not yet durable.
struct Writer {
    latest: Arc<Store>,
    next_sequence: u64,
    /// Why no more writes are taken, if so.
    poisoned: Option<String>,
}

pub(crate) struct Inner {
    dir: Option<PathBuf>,
    options: DbOptions,
    current: RwLock<Published>,
    writer: Mutex<Writer>,
    log: Option<Log>,
    /// One checkpoint (or replacement) at a time.
    checkpoint: Mutex<()>,
    checkpoint_running: AtomicBool,
    open_report: OpenReport,
    /// The lock that makes this the store's only writer, held while the database is open
    /// (`None`: read-only, in memory, or closed). Released by [`Database`]'s `drop`
    /// explicitly, not by closing the file: a child process forked meanwhile (by any
    /// thread, before its `exec`) holds a copy of the descriptor, and with it the lock.
    write_lock: Mutex<Option<std::fs::File>>,
    /// Set when the [`Database`] is dropped: a checkpoint asked for on another thread
    /// after that does nothing (the lock is free; another process may write the store).
    closed: AtomicBool,
    /// Transactions committed since the database was opened, and the microseconds they
    /// took together (from the request to durable and published).
    commits: AtomicU64,
    commit_micros: AtomicU64,
    /// The store's full-text index, if it has one: every published version carries it,
    /// and it indexes the literals each commit appends before the commit is published.
    text: RwLock<Option<Arc<TextIndex>>>,
}

/// The file whose lock marks the one process writing a store.
pub const LOCK_FILE_NAME: &str = "write.lock";

/// Takes the store's write lock: one process at a time may write a store, since two would
/// append to one log with sequence numbers of their own. The lock is an advisory file lock,
/// released by the kernel when the process ends, however it ends.
fn lock_for_writing(dir: &Path) -> Result<std::fs::File, DbError> {
    let path = dir.join(LOCK_FILE_NAME);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| DbError::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(DbError::io(
            &path,
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "the store is open for writing by another process (a writable server, a \
                 console or an update); stop it first (reading the store needs no lock)",
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(DbError::io(&path, e)),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// A store that takes updates. See the crate documentation.
pub struct Database {
    inner: Arc<Inner>,
    /// The automatic checkpoint last started in the background: dropping the database
    /// waits for it, so that the store's lock is free once `drop` returns.
    background: Mutex<Option<JoinHandle<Result<CheckpointReport, DbError>>>>,
}

impl Drop for Database {
    fn drop(&mut self) {
        let background = self
            .background
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(handle) = background {
            let _ = handle.join();
        }
        // Wait for a checkpoint that another thread runs, then let none start.
        let inner = &self.inner;
        let _checkpoint = lock(&inner.checkpoint);
        inner.closed.store(true, Ordering::Release);
        if let Some(file) = lock(&inner.write_lock).take() {
            // Unlocking releases the lock for every copy of the descriptor.
            let _ = file.unlock();
        }
    }
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("dir", &self.inner.dir)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Inner {
    fn check_writable(&self) -> Result<(), DbError> {
        match &self.dir {
            Some(dir) if self.options.read_only => Err(DbError::ReadOnly(format!(
                "{}: the database was opened read-only",
                dir.display()
            ))),
            _ => Ok(()),
        }
    }
}

impl Inner {
    /// The writer lock, taken with no commit queued or being written: the latest version
    /// is then the published one, and the log ends with it.
    fn idle_writer(&self) -> MutexGuard<'_, Writer> {
        loop {
            let writer = lock(&self.writer);
            match &self.log {
                Some(log) if !log.is_idle() => {
                    drop(writer);
                    log.drain(self);
                }
                _ => break writer,
            }
        }
    }

    fn current_store(&self) -> Arc<Store> {
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        Arc::clone(&current.store)
    }

    fn text(&self) -> Option<Arc<TextIndex>> {
        self.text.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `store` with the text index brought up to it and attached (a failure to index is
    /// kept by the index, whose searches then say so: the commit itself is durable).
    fn with_text(&self, store: Arc<Store>) -> Arc<Store> {
        let Some(text) = self.text() else {
            return store;
        };
        let _ = text.catch_up(&store);
        match store.text_index() {
            Some(_) => store,
            None => Arc::new(store.with_text_index(Some(text as _))),
        }
    }
}

impl Hooks for Inner {
    fn publish(&self, store: Arc<Store>, sequence: u64) {
        let store = self.with_text(store);
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if sequence > current.sequence {
            let old = std::mem::replace(&mut *current, Published { store, sequence });
            // The previous version is freed (if no reader holds it) after the lock.
            drop(current);
            drop(old);
        }
    }

    fn roll_back(&self, fail_queued: &mut dyn FnMut()) {
        let mut writer = lock(&self.writer);
        fail_queued();
        let current = self.current.read().unwrap_or_else(|e| e.into_inner());
        writer.latest = Arc::clone(&current.store);
        writer.next_sequence = current.sequence + 1;
    }
}

impl Database {
    /// Opens the store in `dir`: its snapshot plus the log records after it (see
    /// [`Database::open_report`] for what recovery found).
    pub fn open(dir: &Path, options: DbOptions) -> Result<Self, DbError> {
        refuse_partitioned(dir, None)?;
        let store = match Store::open(dir) {
            Ok((store, _)) => {
                refuse_partitioned(dir, Some(&store))?;
                store
            }
            Err(StoreError::Snapshot(SnapshotError::NoStore { .. }))
                if options.create && !options.read_only =>
            {
                std::fs::create_dir_all(dir).map_err(|e| DbError::io(dir, e))?;
                // Built, not `Store::default()`: an empty store with its (empty) arrays
                // in place, as a reopened one has them.
                let store = Store::build(
                    quiver_model::Dictionary::from_sorted(std::iter::empty::<&[u8]>()),
                    quiver_store::EncodedGraphs::default(),
                    quiver_store::LoadInfo::default(),
                );
                store.save(dir)?;
                store
            }
            Err(e) => return Err(e.into()),
        };
        let write_lock = if options.read_only {
            None
        } else {
            Some(lock_for_writing(dir)?)
        };
        let recovered = recover(dir, store, options.read_only)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let text =
            TextIndex::open(dir, &recovered.store, threads, options.read_only)?.map(Arc::new);
        let store = match &text {
            Some(text) => recovered.store.with_text_index(Some(Arc::clone(text) as _)),
            None => recovered.store,
        };
        let store = Arc::new(store);
        let log = recovered
            .file
            .map(|file| Log::new(file, options.sync, recovered.bytes));
        let inner = Arc::new(Inner {
            dir: Some(dir.to_path_buf()),
            current: RwLock::new(Published {
                store: Arc::clone(&store),
                sequence: recovered.last_sequence,
            }),
            writer: Mutex::new(Writer {
                latest: store,
                next_sequence: recovered.last_sequence + 1,
                poisoned: None,
            }),
            log,
            checkpoint: Mutex::new(()),
            checkpoint_running: AtomicBool::new(false),
            open_report: recovered.report,
            options,
            write_lock: Mutex::new(write_lock),
            closed: AtomicBool::new(false),
            commits: AtomicU64::new(0),
            commit_micros: AtomicU64::new(0),
            text: RwLock::new(text),
        });
        if inner.options.sync == SyncMode::Batch && inner.log.is_some() {
            let weak = Arc::downgrade(&inner);
            std::thread::Builder::new()
                .name("quiver-wal-sync".into())
                .spawn(move || loop {
                    std::thread::sleep(BATCH_SYNC_INTERVAL);
                    let Some(inner) = weak.upgrade() else { return };
                    if inner.closed.load(Ordering::Acquire) {
                        return;
                    }
                    if let Some(log) = &inner.log {
                        let _ = log.sync(false);
                    }
                })
                .map_err(|e| DbError::io(dir, e))?;
        }
        Ok(Self {
            inner,
            background: Mutex::default(),
        })
    }

    /// A database of `store` in memory only: updates are not written anywhere.
    pub fn in_memory(store: Store) -> Self {
        let store = Arc::new(store);
        Self {
            inner: Arc::new(Inner {
                dir: None,
                options: DbOptions::default(),
                current: RwLock::new(Published {
                    store: Arc::clone(&store),
                    sequence: 0,
                }),
                writer: Mutex::new(Writer {
                    latest: store,
                    next_sequence: 1,
                    poisoned: None,
                }),
                log: None,
                checkpoint: Mutex::new(()),
                checkpoint_running: AtomicBool::new(false),
                open_report: OpenReport::default(),
                write_lock: Mutex::new(None),
                closed: AtomicBool::new(false),
                commits: AtomicU64::new(0),
                commit_micros: AtomicU64::new(0),
                text: RwLock::new(None),
            }),
            background: Mutex::default(),
        }
    }

    /// The directory of the store, if it has one.
    pub fn dir(&self) -> Option<&Path> {
        self.inner.dir.as_deref()
    }

    /// What recovery found when the database was opened (torn log tails cut off).
    pub fn open_report(&self) -> &OpenReport {
        &self.inner.open_report
    }

    /// The current committed version. Never blocked by writers; the version stays as it
    /// is for as long as it is held.
    pub fn snapshot(&self) -> Arc<Store> {
        let current = self.inner.current.read().unwrap_or_else(|e| e.into_inner());
        Arc::clone(&current.store)
    }

    /// The sequence number of the last committed transaction.
    pub fn sequence(&self) -> u64 {
        let current = self.inner.current.read().unwrap_or_else(|e| e.into_inner());
        current.sequence
    }

    /// Runs a SPARQL Update request as one transaction: every operation or none.
    pub fn update(
        &self,
        sparql: &str,
        base_iri: Option<&str>,
        options: &ExecOptions,
    ) -> Result<UpdateReport, DbError> {
        if let Some(data) = quiver_loader::parse_insert_data(sparql) {
            return self.insert_data(&data, options);
        }
        let update = quiver_sparql::update::parse_update(sparql, base_iri)?;
        self.update_parsed(&update, options)
    }

    /// [`Database::update`] of an `INSERT DATA` that the fast reader took
    /// ([`quiver_loader::parse_insert_data`]).
    pub fn insert_data(
        &self,
        data: &quiver_loader::InsertData,
        options: &ExecOptions,
    ) -> Result<UpdateReport, DbError> {
        self.commit_with(|base| {
            let outcome = quiver_sparql::execute_insert_encoded(
                base,
                data.term_count(),
                |id| data.term(id),
                data.quads(),
                quiver_loader::DEFAULT_GRAPH,
                options,
            )?;
            Ok(Transaction {
                changes: outcome.changes,
                store: Some(outcome.store),
                inserted: outcome.inserted,
                deleted: outcome.deleted,
            })
        })
    }

    /// [`Database::update`] of a parsed request.
    pub fn update_parsed(
        &self,
        update: &spargebra::Update,
        options: &ExecOptions,
    ) -> Result<UpdateReport, DbError> {
        self.commit_with(|base| {
            let outcome = execute_update(base, update, options, &FileLoader)?;
            Ok(Transaction {
                changes: outcome.changes,
                store: Some(outcome.store),
                inserted: outcome.inserted,
                deleted: outcome.deleted,
            })
        })
    }

    /// Commits the change sets `changes` computes from the latest version, as one
    /// transaction (writers are serialised; `changes` runs under the writer lock). The
    /// latest version may include commits still being written to the log: should one of
    /// them fail, this one fails with it. Returns once the commit is durable (by the sync
    /// mode) and published.
    pub fn commit_changes(
        &self,
        changes: impl FnOnce(&Store) -> Result<Vec<ChangeSet>, DbError>,
    ) -> Result<UpdateReport, DbError> {
        self.commit_with(|base| {
            let changes = changes(base)?;
            Ok(Transaction {
                inserted: changes.iter().map(|c| c.inserts.len() as u64).sum(),
                deleted: changes.iter().map(|c| c.deletes.len() as u64).sum(),
                changes,
                store: None,
            })
        })
    }

    /// Transactions committed since the database was opened, and the time they took
    /// together, each from its request to durable and published (for metrics).
    pub fn commit_stats(&self) -> (u64, Duration) {
        let inner = &self.inner;
        (
            inner.commits.load(Ordering::Relaxed),
            Duration::from_micros(inner.commit_micros.load(Ordering::Relaxed)),
        )
    }

    fn commit_with(
        &self,
        transaction: impl FnOnce(&Store) -> Result<Transaction, DbError>,
    ) -> Result<UpdateReport, DbError> {
        let started = Instant::now();
        let committed = self.commit_untimed(transaction);
        if committed.is_ok() {
            let inner = &self.inner;
            inner.commits.fetch_add(1, Ordering::Relaxed);
            let micros = started.elapsed().as_micros() as u64;
            inner.commit_micros.fetch_add(micros, Ordering::Relaxed);
        }
        committed
    }

    fn commit_untimed(
        &self,
        transaction: impl FnOnce(&Store) -> Result<Transaction, DbError>,
    ) -> Result<UpdateReport, DbError> {
        let inner = &*self.inner;
        inner.check_writable()?;
        let mut writer = lock(&inner.writer);
        if let Some(reason) = &writer.poisoned {
            return Err(DbError::ReadOnly(reason.clone()));
        }
        let base = Arc::clone(&writer.latest);
        // Writes look up mostly new terms: the dictionary's filter answers them (built
        // once per sorted part, in the background).
        base.dictionary().prepare_for_writes();
        let transaction = transaction(&base)?;
        let mut report = UpdateReport {
            inserted: transaction.inserted,
            deleted: transaction.deleted,
            ..UpdateReport::default()
        };
        if transaction.changes.iter().all(ChangeSet::is_empty) {
            report.triples = base.triples();
            return Ok(report);
        }
        let store = match transaction.store {
            Some(store) => store,
            None => {
                let mut store = (*base).clone();
                for set in &transaction.changes {
                    store = store.apply(set)?;
                }
                store
            }
        };
        report.triples = store.triples();
        let store = Arc::new(store);
        let sequence = writer.next_sequence;
        let Some(log) = &inner.log else {
            writer.latest = Arc::clone(&store);
            writer.next_sequence += 1;
            inner.publish(store, sequence);
            return Ok(report);
        };
        let record =
            wal::encode_record(sequence, &transaction.changes).map_err(DbError::TooLarge)?;
        let slot = log.enqueue(sequence, record, Arc::clone(&store));
        writer.latest = store;
        writer.next_sequence += 1;
        drop(writer);
        log.wait(&slot, inner)?;
        report.sequence = sequence;
        if log.bytes() > inner.options.checkpoint_bytes
            && !inner.checkpoint_running.swap(true, Ordering::AcqRel)
        {
            let background = Arc::clone(&self.inner);
            let spawned = std::thread::Builder::new()
                .name("quiver-checkpoint".into())
                .spawn(move || {
                    let result = checkpoint(&background);
                    background
                        .checkpoint_running
                        .store(false, Ordering::Release);
                    result
                });
            match spawned {
                Ok(handle) => {
                    let finished = lock(&self.background).replace(handle);
                    if let Some(finished) = finished {
                        // It ended before this one began (`checkpoint_running`).
                        let _ = finished.join();
                    }
                }
                Err(_) => inner.checkpoint_running.store(false, Ordering::Release),
            }
        }
        Ok(report)
    }

    /// Makes every acknowledged commit durable now (for [`SyncMode::Batch`] and
    /// [`SyncMode::None`]).
    pub fn sync(&self) -> Result<(), DbError> {
        match &self.inner.log {
            Some(log) => log.sync(true),
            None => Ok(()),
        }
    }

    /// Bytes of the write-ahead log files on disk.
    pub fn wal_bytes(&self) -> u64 {
        self.inner.log.as_ref().map_or(0, Log::bytes)
    }

    /// Counters of the log: records, groups, `fsync` calls, bytes.
    pub fn log_stats(&self) -> LogStats {
        self.inner.log.as_ref().map(Log::stats).unwrap_or_default()
    }

    /// Saves the current version as a new snapshot generation and removes the log records
    /// it contains. Readers and writers go on meanwhile (see the `checkpoint` module).
    pub fn checkpoint(&self) -> Result<CheckpointReport, DbError> {
        checkpoint(&self.inner)
    }

    /// Writes the current committed version as a new store at `target` (a directory that
    /// must not exist), while readers and writers go on: the copy opens as this database
    /// did at [`BackupReport::sequence`] (see the `backup` module).
    pub fn backup(&self, target: &Path) -> Result<crate::BackupReport, DbError> {
        let (store, sequence) = {
            let current = self.inner.current.read().unwrap_or_else(|e| e.into_inner());
            (Arc::clone(&current.store), current.sequence)
        };
        // The text index's saved part goes along: opening the copy indexes the literals
        // committed after it, as opening the store does.
        let text = self.inner.text();
        crate::backup::write(target, store, sequence, |dir| match &text {
            Some(text) => Ok(text.copy_saved(dir)?),
            None => Ok(0),
        })
    }

    /// Builds the full-text index of the current version (in the store's directory, or in
    /// memory for a database in memory), replacing any index it had; from then on every
    /// commit keeps it current. Writers wait meanwhile; readers go on.
    pub fn build_text_index(&self, threads: usize) -> Result<BuildReport, DbError> {
        let inner = &*self.inner;
        if inner.dir.is_some() {
            inner.check_writable()?;
        }
        let _checkpoint = lock(&inner.checkpoint);
        let mut writer = inner.idle_writer();
        // The saved part holds every literal of the latest version: those the log holds
        // must be durable first, or a crash could give their ids to other terms.
        if let Some(log) = &inner.log {
            log.sync(true)?;
        }
        let base = Arc::clone(&writer.latest);
        let (index, report) = TextIndex::build(inner.dir.as_deref(), &base, threads)?;
        let index = Arc::new(index);
        let store = Arc::new(base.with_text_index(Some(Arc::clone(&index) as _)));
        *inner.text.write().unwrap_or_else(|e| e.into_inner()) = Some(index);
        let mut current = inner.current.write().unwrap_or_else(|e| e.into_inner());
        current.store = Arc::clone(&store);
        writer.latest = store;
        Ok(report)
    }

    /// The full-text index, if the store has one.
    pub fn text_index(&self) -> Option<Arc<TextIndex>> {
        self.inner.text()
    }

    /// [`Database::checkpoint`] on a thread of its own.
    pub fn checkpoint_in_background(&self) -> JoinHandle<Result<CheckpointReport, DbError>> {
        let inner = Arc::clone(&self.inner);
        std::thread::spawn(move || checkpoint(&inner))
    }

    /// Replaces the store by what `build` makes of the latest version (a bulk load merged
    /// into it), saved as a new snapshot; the log restarts after it. Writers wait
    /// meanwhile; readers go on with the version they have.
    pub fn replace(
        &self,
        build: impl FnOnce(&Store) -> Result<Store, DbError>,
    ) -> Result<CheckpointReport, DbError> {
        let inner = &*self.inner;
        inner.check_writable()?;
        let _checkpoint = lock(&inner.checkpoint);
        let mut writer = inner.idle_writer();
        if let Some(reason) = &writer.poisoned {
            return Err(DbError::ReadOnly(reason.clone()));
        }
        let base = Arc::clone(&writer.latest);
        let store = build(&base)?;
        // A new dictionary: the text index (if any) is built again for it.
        let store = Arc::unwrap_or_clone(inner.with_text(Arc::new(store)));
        let sequence = writer.next_sequence;
        let mut report = CheckpointReport {
            sequence,
            ..CheckpointReport::default()
        };
        if let (Some(dir), Some(log)) = (&inner.dir, &inner.log) {
            report.snapshot_bytes = checkpoint::save(dir, &store, sequence)?;
            // The snapshot on disk is the new store from here on, whatever fails next.
            let store = Arc::new(store);
            inner.publish(Arc::clone(&store), sequence);
            writer.latest = Arc::clone(&store);
            writer.next_sequence = sequence + 1;
            // The old log files end before `sequence`; records continue in a new file.
            let rotated = log
                .rotate(dir, || ((), sequence))
                .and_then(|(_, _, old)| log.remove_up_to(dir, old));
            if let Err(error) = rotated {
                writer.poisoned = Some(format!(
                    "the store was replaced but its log could not be restarted ({error}); reopen the database"
                ));
                return Err(error);
            }
            report.wal_bytes = log.bytes();
        } else {
            let store = Arc::new(store);
            inner.publish(Arc::clone(&store), sequence);
            writer.latest = store;
        }
        writer.next_sequence = sequence + 1;
        Ok(report)
    }
}

/// What a transaction computed: its change sets and, from SPARQL Update, the version they
/// make (else they are applied to the base).
struct Transaction {
    changes: Vec<ChangeSet>,
    store: Option<Store>,
    inserted: u64,
    deleted: u64,
}

/// A checkpoint of `inner` (nothing to do in memory); one at a time.
fn checkpoint(inner: &Inner) -> Result<CheckpointReport, DbError> {
    inner.check_writable()?;
    let _checkpoint = lock(&inner.checkpoint);
    if inner.closed.load(Ordering::Acquire) {
        return Err(DbError::ReadOnly(
            "the database was closed before the checkpoint began".into(),
        ));
    }
    let (Some(dir), Some(log)) = (&inner.dir, &inner.log) else {
        return Ok(CheckpointReport::default());
    };
    let mut saved = None;
    let report = checkpoint::run(dir, log, || {
        let current = inner.current.read().unwrap_or_else(|e| e.into_inner());
        saved = Some(Arc::clone(&current.store));
        (Arc::clone(&current.store), current.sequence)
    })?;
    // The literals of the saved version can no longer be lost: they join the text index's
    // saved part (a failure is kept by the index, whose searches then say so).
    if let (Some(text), Some(saved)) = (inner.text(), saved) {
        let _ = text.fold(&saved, &inner.current_store());
    }
    Ok(report)
}

/// Refuses a partitioned store's directory (its layout file) and, given the store opened
/// from `dir`, a partition of one: a partitioned store answers only as a whole cluster;
/// opened as one store, it would give a part of every answer.
pub fn refuse_partitioned(dir: &Path, store: Option<&Store>) -> Result<(), DbError> {
    let refuse = |message: String| {
        Err(StoreError::Invalid {
            dir: dir.display().to_string(),
            message,
        }
        .into())
    };
    if let Some(layout) = quiver_store::partition::read_layout(dir)? {
        return refuse(format!(
            "holds a store cut into {} partitions (`partition-0` …), which only a cluster of processes opens, one partition each; it cannot be opened as one store",
            layout.partitions
        ));
    }
    match store.and_then(Store::partition_info) {
        Some(info) => refuse(format!(
            "is partition {} of {} of a partitioned store, which only a cluster of processes opens; opened alone it would answer with a part of the data",
            info.index, info.count
        )),
        None => Ok(()),
    }
}
