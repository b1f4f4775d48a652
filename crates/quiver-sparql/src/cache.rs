//! A cache of prepared queries keyed by their text and the options that change a plan
//! (base IRI, user plan, the protocol's dataset), for one store version at a time.
//!
//! Parsing and planning a light query costs more than running it (tens of µs against a
//! few), and servers and consoles see the same texts again and again. A prepared query is
//! bound to the store version it was resolved against (its constants became that
//! version's ids; [`PreparedQuery::execute`] refuses another version), so the cache holds
//! the queries of one version: the first lookup on a new version empties it. Each entry
//! also remembers what its last execution cost, so a caller can run a query known to be
//! cheap inline instead of handing it to another thread. At most `capacity` entries are
//! kept; the least recently used one makes room.
//!
//! A full cache admits only texts it has seen before. Servers see streams of texts that
//! differ in a constant and seldom come again (a page per resource, the LUBM emulator's
//! mix): admitting each would evict a plan still in use for one that is not. So the cache
//! remembers the hashes of recent texts it turned away in a small table (a doorkeeper, as
//! in TinyLFU); a text that comes back while remembered is admitted. Entries make room
//! one at a time, not by the hundred: on the emulator's mix over HTTP, plans dropped a
//! quarter of the cache at once cost several times what one dropped at each admission
//! does, whose memory the allocator hands straight to the next query.

use std::hash::{BuildHasher, Hash, Hasher};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lru::LruCache;
use quiver_store::Store;

use crate::engine::{prepare, PrepareOptions, PreparedQuery};
use crate::error::QueryError;

/// A prepared query in the cache, with the cost of its executions.
#[derive(Debug)]
pub struct CachedQuery {
    pub query: PreparedQuery,
    /// Microseconds of the fastest execution with its serialization (`u64::MAX`: not run
    /// yet). The fastest, not the last: the same query on the same version does the same
    /// work, and a run slowed by a busy machine would make a light query look heavy.
    best_micros: AtomicU64,
    /// Bytes of the last result (`u64::MAX`: not run yet).
    last_bytes: AtomicU64,
}

impl CachedQuery {
    /// Records what one execution (with its serialization) cost.
    pub fn record_cost(&self, micros: f64, bytes: usize) {
        self.best_micros.fetch_min(micros as u64, Ordering::Relaxed);
        self.last_bytes.store(bytes as u64, Ordering::Relaxed);
    }

    /// Whether it has run (its cost is known).
    pub fn has_run(&self) -> bool {
        self.best_micros.load(Ordering::Relaxed) != u64::MAX
    }

    /// Whether an execution took at most `micros` µs and the last wrote at most `bytes`
    /// bytes.
    pub fn was_cheaper_than(&self, micros: u64, bytes: u64) -> bool {
        self.best_micros.load(Ordering::Relaxed) <= micros
            && self.last_bytes.load(Ordering::Relaxed) <= bytes
    }
}

/// What decides an entry besides the store version.
#[derive(Debug, PartialEq, Eq, Hash)]
struct Key {
    text: String,
    base_iri: Option<String>,
    plan: Option<String>,
    /// The dataset's debug form (it has no `Hash`).
    dataset: Option<String>,
    partitioned: bool,
    /// The store's view (asserted or entailed default graph).
    view: quiver_store::View,
}

impl Key {
    fn new(text: &str, options: &PrepareOptions, view: quiver_store::View) -> Self {
        Self {
            view,
            text: text.to_owned(),
            base_iri: options.base_iri.clone(),
            plan: options.plan.clone(),
            dataset: options.dataset.as_ref().map(|d| format!("{d:?}")),
            partitioned: options.partitioned(),
        }
    }

    fn matches(&self, text: &str, options: &PrepareOptions, view: quiver_store::View) -> bool {
        self.text == text
            && self.view == view
            && self.partitioned == options.partitioned()
            && self.base_iri == options.base_iri
            && self.plan == options.plan
            && match (&self.dataset, &options.dataset) {
                (None, None) => true,
                (Some(ours), Some(theirs)) => *ours == format!("{theirs:?}"),
                _ => false,
            }
    }
}

struct Entry {
    key: Key,
    query: Arc<CachedQuery>,
}

struct State {
    version: Option<u64>,
    /// By the hash of the key, in order of use (a colliding key replaces the entry).
    entries: LruCache<u64, Entry>,
    /// Hashes of texts turned away by a full cache, each in the slot its low bits name (a
    /// later one overwrites it): [`DOORKEEPER_SLOTS_PER_ENTRY`] slots per entry.
    turned_away: Vec<u64>,
    hits: u64,
    misses: u64,
}

/// Slots of the doorkeeper per entry of the cache: a text turned away is admitted when it
/// comes back before about this many times the cache's capacity of other texts were.
const DOORKEEPER_SLOTS_PER_ENTRY: usize = 4;

impl State {
    fn new(capacity: usize) -> Self {
        Self {
            version: None,
            entries: LruCache::new(NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN)),
            turned_away: Vec::new(),
            hits: 0,
            misses: 0,
        }
    }

    /// Whether a full cache admits the key of `hash`: yes when it was turned away recently
    /// (and then forgotten), otherwise no, and it is remembered.
    fn admits(&mut self, hash: u64) -> bool {
        if self.turned_away.is_empty() {
            let slots = (self.entries.cap().get() * DOORKEEPER_SLOTS_PER_ENTRY).next_power_of_two();
            self.turned_away = vec![0; slots];
        }
        let slot = hash as usize & (self.turned_away.len() - 1);
        // 0 marks an empty slot: a hash of 0 is taken as 1.
        let mark = hash.max(1);
        if self.turned_away[slot] == mark {
            self.turned_away[slot] = 0;
            true
        } else {
            self.turned_away[slot] = mark;
            false
        }
    }
}

/// Prepared queries of the latest store version seen, by text and options.
pub struct QueryCache {
    capacity: usize,
    /// Seeded per cache; a text's hash is taken once per request (foldhash: SipHash over
    /// each text, twice on a miss, was 0.8 % of a server's time on the LUBM mix).
    hasher: foldhash::quality::RandomState,
    state: Mutex<State>,
}

impl std::fmt::Debug for QueryCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryCache")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl QueryCache {
    /// A cache of at most `capacity` prepared queries (0 disables it).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            hasher: Default::default(),
            state: Mutex::new(State::new(capacity)),
        }
    }

    fn hash(&self, text: &str, options: &PrepareOptions, view: quiver_store::View) -> u64 {
        let mut hasher = self.hasher.build_hasher();
        text.hash(&mut hasher);
        view.hash(&mut hasher);
        options.base_iri.hash(&mut hasher);
        options.plan.hash(&mut hasher);
        options.dataset.is_some().hash(&mut hasher);
        options.partitioned().hash(&mut hasher);
        hasher.finish()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves nothing half-done worth refusing over.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached query for `text` and `options` on `store`'s version, if any.
    pub fn get(
        &self,
        store: &Store,
        text: &str,
        options: &PrepareOptions,
    ) -> Option<Arc<CachedQuery>> {
        if self.capacity == 0 {
            return None;
        }
        self.lookup(self.hash(text, options, store.view()), store, text, options)
    }

    /// [`QueryCache::get`] for the text's `hash`.
    fn lookup(
        &self,
        hash: u64,
        store: &Store,
        text: &str,
        options: &PrepareOptions,
    ) -> Option<Arc<CachedQuery>> {
        let mut state = self.lock();
        if state.version != Some(store.version()) {
            return None;
        }
        match state.entries.get(&hash) {
            Some(entry) if entry.key.matches(text, options, store.view()) => {
                let query = entry.query.clone();
                state.hits += 1;
                Some(query)
            }
            _ => None,
        }
    }

    /// The cached query, or `text` prepared on `store` and cached (errors are not cached;
    /// a full cache caches only a text it turned away recently, see the module's doc); the
    /// flag says whether it came from the cache.
    pub fn prepare(
        &self,
        store: &Store,
        text: &str,
        options: &PrepareOptions,
    ) -> Result<(Arc<CachedQuery>, bool), QueryError> {
        let prepared = || -> Result<Arc<CachedQuery>, QueryError> {
            Ok(Arc::new(CachedQuery {
                query: prepare(store, text, options)?,
                best_micros: AtomicU64::new(u64::MAX),
                last_bytes: AtomicU64::new(u64::MAX),
            }))
        };
        if self.capacity == 0 {
            return Ok((prepared()?, false));
        }
        let hash = self.hash(text, options, store.view());
        if let Some(query) = self.lookup(hash, store, text, options) {
            return Ok((query, true));
        }
        let query = prepared()?;
        let mut state = self.lock();
        state.misses += 1;
        // Entries that go are dropped once the lock is let go: dropping many prepared
        // queries (a whole version's) takes long enough that other lookups would wait.
        let mut stale = None;
        if state.version != Some(store.version()) {
            // A newer version makes every entry useless; an older one (a request that
            // read its snapshot before an update) is not worth keeping.
            if state.version.is_some_and(|v| v > store.version()) {
                return Ok((query, false));
            }
            let empty = LruCache::new(state.entries.cap());
            stale = Some(std::mem::replace(&mut state.entries, empty));
            state.version = Some(store.version());
        }
        let full = state.entries.len() == state.entries.cap().get();
        if full && !state.entries.contains(&hash) && !state.admits(hash) {
            return Ok((query, false));
        }
        // The least recently used entry makes room, one at a time: its plan's memory goes
        // back to the allocator's per-thread caches and serves the next queries, where
        // many plans dropped at once overflowed them into its shared free lists.
        let entry = Entry {
            key: Key::new(text, options, store.view()),
            query: query.clone(),
        };
        let evicted = state.entries.push(hash, entry);
        drop(state);
        drop((stale, evicted));
        Ok((query, false))
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// (hits, misses) since the cache was made.
    pub fn counts(&self) -> (u64, u64) {
        let state = self.lock();
        (state.hits, state.misses)
    }
}
