//! The mutable graph index: inserts and deletes while readers keep running, no rebuild.
//!
//! A [`MutableGraph`] is an immutable compact base (a [`GraphIndex`], possibly the one of a
//! loaded [`Store`]) plus a concurrent delta ([`delta`]): for every changed key
//! (vertex, predicate, direction) its complete new neighbour list. Lookups consult the
//! delta first (a bit filter makes that free for untouched vertices), then the base.
//! A write computes the key's new list from the visible one and publishes it atomically,
//! so a reader sees either the old or the new list of a key, never a half-applied change.
//! Writers are serialised by a mutex; readers take no lock but a shard's read lock for the
//! instant of a delta probe.
//!
//! [`MutableGraph::compact`] folds the delta into a new base ([`compact`]): it freezes the
//! delta (new writes go to a fresh one, and reads look at fresh, frozen, base in that
//! order), merges base and frozen delta into a new [`GraphIndex`] without holding any lock,
//! then swaps in the new base. Readers pin a version with a [`Reader`] (an `Arc` of the
//! state, like an RCU read-side section); a reader sees every write until a compaction
//! swaps the state, after which [`MutableGraph::refresh`] moves it to the new version.
//!
//! Triple updates ([`MutableGraph::insert`], [`delete`](MutableGraph::delete),
//! [`delete_key`](MutableGraph::delete_key), [`apply`](MutableGraph::apply)) keep both
//! directions in step; [`replace_list`](MutableGraph::replace_list) writes one key only,
//! for key/value use. Each key is updated atomically; the two directions of one triple are
//! two keys, published one after the other, so there is no snapshot across keys: the
//! key/value workloads use it, while the store takes updates as versions ([`crate::changes`]).

mod compact;
mod delta;
mod list;

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Instant;

use quiver_model::{Id, PredId};
use rustc_hash::FxBuildHasher;

use self::delta::Delta;
pub use self::list::List;
use crate::graph::{Direction, GraphIndex, Key};
use crate::store::Store;

/// The immutable base of a mutable graph.
#[derive(Debug, Clone)]
pub enum Base {
    /// The default graph of a store.
    Store(Arc<Store>),
    /// A graph index of its own (what compaction produces).
    Graph(Arc<GraphIndex>),
}

impl Base {
    #[inline(always)]
    pub fn graph(&self) -> &GraphIndex {
        match self {
            Base::Store(store) => store.graph(),
            Base::Graph(graph) => graph,
        }
    }
}

impl From<Arc<Store>> for Base {
    fn from(store: Arc<Store>) -> Self {
        Base::Store(store)
    }
}

impl From<Arc<GraphIndex>> for Base {
    fn from(graph: Arc<GraphIndex>) -> Self {
        Base::Graph(graph)
    }
}

impl From<GraphIndex> for Base {
    fn from(graph: GraphIndex) -> Self {
        Base::Graph(Arc::new(graph))
    }
}

/// The neighbours of a key: borrowed from the base, or a list of the delta.
#[derive(Debug, Clone)]
pub enum Neighbors<'a> {
    Base(&'a [Id]),
    Delta(List),
}

impl Deref for Neighbors<'_> {
    type Target = [Id];

    fn deref(&self) -> &[Id] {
        match self {
            Neighbors::Base(list) => list,
            Neighbors::Delta(list) => list,
        }
    }
}

/// One change of a batch ([`MutableGraph::apply`]).
#[derive(Debug, Clone)]
pub enum Change {
    Insert(Id, PredId, Id),
    Delete(Id, PredId, Id),
    /// Replaces one key's list (sorted), without touching the reverse direction.
    Replace(Key, List),
}

/// What a compaction did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactStats {
    /// Keys of the delta folded into the base.
    pub keys: usize,
    /// Triples of the new base.
    pub triples: u64,
    /// Version after the compaction.
    pub epoch: u64,
    pub seconds: f64,
}

/// One version: a base, maybe a delta being compacted, and the live delta.
#[derive(Debug)]
struct State {
    base: Base,
    frozen: Option<Arc<Delta>>,
    delta: Arc<Delta>,
    epoch: u64,
}

impl std::fmt::Debug for Delta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delta").field("keys", &self.len()).finish()
    }
}

impl State {
    #[inline]
    fn get(&self, key: &Key) -> Neighbors<'_> {
        match self.delta_get(key) {
            Some(list) => Neighbors::Delta(list),
            None => Neighbors::Base(self.base.graph().get_key(*key)),
        }
    }

    /// The list of `key` in the live or frozen delta, if any.
    #[inline]
    fn delta_get(&self, key: &Key) -> Option<List> {
        self.delta
            .get(key)
            .or_else(|| self.frozen.as_ref().and_then(|frozen| frozen.get(key)))
    }

    #[inline(always)]
    fn with<R>(&self, key: &Key, f: impl FnOnce(&[Id]) -> R) -> R {
        match self.delta.with(key, f) {
            Ok(result) => result,
            Err(f) => self.below_live(key, f),
        }
    }

    /// [`State::with`] without the live delta.
    #[inline(always)]
    fn below_live<R>(&self, key: &Key, f: impl FnOnce(&[Id]) -> R) -> R {
        let f = match &self.frozen {
            Some(frozen) => match frozen.with(key, f) {
                Ok(result) => return result,
                Err(f) => f,
            },
            None => f,
        };
        f(self.base.graph().get_key(*key))
    }
}

/// Vertices a delta's bit filter should cover for `graph` (none for sparse graphs).
fn filter_vertices(graph: &GraphIndex) -> usize {
    let slots = |direction| graph.adjacency(direction).offsets.len().saturating_sub(1);
    if graph.out.vertices.is_none() {
        slots(Direction::Out).max(slots(Direction::In))
    } else {
        0
    }
}

/// A pinned version of a [`MutableGraph`] for lookups.
#[derive(Debug, Clone)]
pub struct Reader {
    state: Arc<State>,
}

impl Reader {
    /// Neighbours of `key`, sorted ascending (as written, for [`Change::Replace`] lists).
    #[inline]
    pub fn get(&self, key: Key) -> Neighbors<'_> {
        self.state.get(&key)
    }

    /// `f` of the neighbours of `key`, without taking a reference count on a delta list:
    /// `f` runs under a delta shard's read lock, so it must be short and must not write to
    /// the graph.
    #[inline(always)]
    pub fn with<R>(&self, key: Key, f: impl FnOnce(&[Id]) -> R) -> R {
        self.state.with(&key, f)
    }

    /// Batched lookups: `out[i] = get(keys[i])`, through [`GraphIndex::pipeline`]. Keys
    /// found in the delta skip the base.
    pub fn get_many<'a>(&'a self, keys: &[Key], out: &mut Vec<Neighbors<'a>>) {
        out.clear();
        out.reserve(keys.len());
        let state = &*self.state;
        state.base.graph().pipeline(keys, |key, record| {
            out.push(match state.delta_get(key) {
                Some(list) => Neighbors::Delta(list),
                None => Neighbors::Base(record.get(key.predicate)),
            })
        });
    }

    /// `f` of the neighbours of each key of a batch, in order, as [`Reader::with`] (so `f`
    /// may run under a delta shard's read lock), with the base's loads overlapped by
    /// [`GraphIndex::pipeline`]. While there is no delta, the keys go straight to the base:
    /// the batch then sees the version of the instant it checked.
    #[inline]
    pub fn with_many(&self, keys: &[Key], mut f: impl FnMut(&[Id])) {
        let state = &*self.state;
        let graph = state.base.graph();
        if state.frozen.is_none() && state.delta.len() == 0 {
            graph.pipeline(keys, |key, record| f(record.get(key.predicate)));
        } else {
            graph.pipeline(keys, |key, record| {
                let f = match state.delta.with(key, &mut f) {
                    Ok(()) => return,
                    Err(f) => f,
                };
                let f = match &state.frozen {
                    Some(frozen) => match frozen.with(key, f) {
                        Ok(()) => return,
                        Err(f) => f,
                    },
                    None => f,
                };
                f(record.get(key.predicate))
            });
        }
    }

    /// Whether the triple (`subject`, `predicate`, `object`) is in the graph.
    pub fn contains(&self, subject: Id, predicate: PredId, object: Id) -> bool {
        let key = Key {
            vertex: subject,
            predicate,
            direction: Direction::Out,
        };
        self.get(key).binary_search(&object).is_ok()
    }

    /// The version this reader sees.
    pub fn epoch(&self) -> u64 {
        self.state.epoch
    }

    /// The base of this version (without the delta).
    pub fn base(&self) -> &GraphIndex {
        self.state.base.graph()
    }
}

/// A graph index that accepts updates while it is read. See the module documentation.
#[derive(Debug)]
pub struct MutableGraph {
    state: RwLock<Arc<State>>,
    epoch: AtomicU64,
    /// Serialises writers and the state swaps of compaction; holds the current state, so
    /// a writer needs no other lock to see it.
    writer: Mutex<Arc<State>>,
    /// Serialises compactions.
    compacting: Mutex<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn add(state: &State, key: Key, neighbour: Id) -> bool {
    let current = state.get(&key);
    match current.binary_search(&neighbour) {
        Ok(_) => false,
        Err(at) => {
            let mut list = Vec::with_capacity(current.len() + 1);
            list.extend_from_slice(&current[..at]);
            list.push(neighbour);
            list.extend_from_slice(&current[at..]);
            state.delta.put(key, list.into());
            true
        }
    }
}

fn remove(state: &State, key: Key, neighbour: Id) -> bool {
    let current = state.get(&key);
    match current.binary_search(&neighbour) {
        Err(_) => false,
        Ok(at) => {
            let mut list = Vec::with_capacity(current.len() - 1);
            list.extend_from_slice(&current[..at]);
            list.extend_from_slice(&current[at + 1..]);
            state.delta.put(key, list.into());
            true
        }
    }
}

/// The changes of one key in a batch.
#[derive(Default)]
struct KeyEdit {
    reset: Option<List>,
    /// (neighbour, insert?) in batch order.
    ops: Vec<(Id, bool)>,
}

/// `current` with the last operation on each neighbour applied.
fn edited(current: &[Id], mut ops: Vec<(Id, bool)>) -> Vec<Id> {
    ops.reverse(); // the stable sort then keeps each neighbour's last operation first
    ops.sort_by_key(|&(id, _)| id);
    ops.dedup_by_key(|&mut (id, _)| id);
    let mut list = Vec::with_capacity(current.len() + ops.len());
    let mut old = current.iter().copied().peekable();
    for (id, insert) in ops {
        while let Some(&x) = old.peek() {
            if x >= id {
                break;
            }
            list.push(x);
            old.next();
        }
        if old.peek() == Some(&id) {
            old.next();
        }
        if insert {
            list.push(id);
        }
    }
    list.extend(old);
    list
}

impl MutableGraph {
    /// A mutable graph over `base` (a store's default graph, or a graph index).
    pub fn new(base: impl Into<Base>) -> Self {
        let base = base.into();
        let delta = Delta::new(filter_vertices(base.graph()));
        let state = Arc::new(State {
            base,
            frozen: None,
            delta: Arc::new(delta),
            epoch: 0,
        });
        MutableGraph {
            state: RwLock::new(state.clone()),
            epoch: AtomicU64::new(0),
            writer: Mutex::new(state),
            compacting: Mutex::new(()),
        }
    }

    fn current(&self) -> Arc<State> {
        self.state
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Installs `state`; `writer` is the held writer lock.
    fn install(&self, writer: &mut Arc<State>, state: State) {
        let epoch = state.epoch;
        let state = Arc::new(state);
        *writer = state.clone();
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = state;
        self.epoch.store(epoch, Ordering::Release);
    }

    /// A reader pinned to the current version.
    pub fn reader(&self) -> Reader {
        Reader {
            state: self.current(),
        }
    }

    /// Moves `reader` to the current version if a compaction replaced its own; returns
    /// whether it moved. One atomic load when nothing changed.
    pub fn refresh(&self, reader: &mut Reader) -> bool {
        if self.epoch.load(Ordering::Acquire) == reader.state.epoch {
            return false;
        }
        reader.state = self.current();
        true
    }

    /// The current version number (incremented twice by every compaction).
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Neighbours of `key` as an owned list (a copy when they come from the base; use a
    /// [`Reader`] to borrow them instead).
    pub fn get(&self, key: Key) -> List {
        match self.current().get(&key) {
            Neighbors::Base(list) => list.into(),
            Neighbors::Delta(list) => list,
        }
    }

    /// Whether the triple is in the graph.
    pub fn contains(&self, subject: Id, predicate: PredId, object: Id) -> bool {
        self.reader().contains(subject, predicate, object)
    }

    /// Takes the writer lock; the guard derefs to the current state.
    fn write(&self) -> MutexGuard<'_, Arc<State>> {
        lock(&self.writer)
    }

    /// Adds the triple; returns whether it was new.
    pub fn insert(&self, subject: Id, predicate: PredId, object: Id) -> bool {
        let state = self.write();
        let out = add(&state, Key::out(subject, predicate), object);
        let inn = add(&state, Key::inn(object, predicate), subject);
        out || inn
    }

    /// Removes the triple; returns whether it was there.
    pub fn delete(&self, subject: Id, predicate: PredId, object: Id) -> bool {
        let state = self.write();
        let out = remove(&state, Key::out(subject, predicate), object);
        let inn = remove(&state, Key::inn(object, predicate), subject);
        out || inn
    }

    /// Removes every triple of `key` (both directions); returns how many.
    pub fn delete_key(&self, key: Key) -> usize {
        let state = self.write();
        let list: List = match state.get(&key) {
            Neighbors::Base(list) => list.into(),
            Neighbors::Delta(list) => list,
        };
        if list.is_empty() {
            return 0;
        }
        state.delta.put(key, List::from([]));
        for &neighbour in list.iter() {
            let reverse = Key {
                vertex: neighbour,
                predicate: key.predicate,
                direction: key.direction.reverse(),
            };
            remove(&state, reverse, key.vertex);
        }
        list.len()
    }

    /// Replaces the list of `key` alone (not the reverse direction): the key/value use of
    /// the index. Lists read by triple updates must be sorted. Returns whether the key had
    /// neighbours before.
    pub fn replace_list(&self, key: Key, list: List) -> bool {
        let state = self.write();
        match state.delta.put(key, list) {
            Some(previous) => !previous.is_empty(),
            None => state.below_live(&key, |list| !list.is_empty()),
        }
    }

    /// Applies a batch, writing each changed key once (in batch order per key; the last
    /// change of a triple wins). Returns the number of keys written.
    pub fn apply(&self, changes: &[Change]) -> usize {
        let mut edits: HashMap<Key, KeyEdit, FxBuildHasher> = HashMap::default();
        for change in changes {
            match *change {
                Change::Insert(s, p, o) | Change::Delete(s, p, o) => {
                    let insert = matches!(change, Change::Insert(..));
                    edits
                        .entry(Key::out(s, p))
                        .or_default()
                        .ops
                        .push((o, insert));
                    edits
                        .entry(Key::inn(o, p))
                        .or_default()
                        .ops
                        .push((s, insert));
                }
                Change::Replace(key, ref list) => {
                    let edit = edits.entry(key).or_default();
                    edit.reset = Some(list.clone());
                    edit.ops.clear();
                }
            }
        }
        let state = self.write();
        let written = edits.len();
        for (key, edit) in edits {
            let list = match edit.reset {
                Some(reset) if edit.ops.is_empty() => reset,
                Some(reset) => edited(&reset, edit.ops).into(),
                None => edited(&state.get(&key), edit.ops).into(),
            };
            state.delta.put(key, list);
        }
        written
    }

    /// Keys in the delta (live and, during a compaction, frozen).
    pub fn delta_len(&self) -> usize {
        let state = self.current();
        state.delta.len() + state.frozen.as_ref().map_or(0, |f| f.len())
    }

    /// The current base, without the delta.
    pub fn base(&self) -> Base {
        self.current().base.clone()
    }

    /// Folds the delta into a new base. Readers and writers keep running meanwhile; only
    /// the two state swaps take the writer lock. Returns `None` when the delta was empty.
    pub fn compact(&self) -> Option<CompactStats> {
        let _compacting = lock(&self.compacting);
        let started = Instant::now();
        let (base, frozen) = {
            let mut writer = self.write();
            let current = Arc::clone(&writer);
            if current.delta.len() == 0 {
                return None;
            }
            let fresh = Delta::new(filter_vertices(current.base.graph()));
            self.install(
                &mut writer,
                State {
                    base: current.base.clone(),
                    frozen: Some(current.delta.clone()),
                    delta: Arc::new(fresh),
                    epoch: current.epoch + 1,
                },
            );
            (current.base.clone(), current.delta.clone())
        };
        let entries = frozen.sorted_entries();
        let graph = compact::merge(base.graph(), &entries);
        let (keys, triples) = (entries.len(), graph.triples());
        drop(entries);
        let mut writer = self.write();
        let current = Arc::clone(&writer);
        // A delta nobody wrote to yet is replaced by one whose filter fits the new base.
        let delta = if current.delta.len() == 0 {
            Arc::new(Delta::new(filter_vertices(&graph)))
        } else {
            current.delta.clone()
        };
        let epoch = current.epoch + 1;
        self.install(
            &mut writer,
            State {
                base: Base::Graph(Arc::new(graph)),
                frozen: None,
                delta,
                epoch,
            },
        );
        Some(CompactStats {
            keys,
            triples,
            epoch,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// Runs [`compact`](Self::compact) on a thread of its own.
    pub fn compact_in_background(
        self: &Arc<Self>,
    ) -> std::thread::JoinHandle<Option<CompactStats>> {
        let graph = Arc::clone(self);
        std::thread::spawn(move || graph.compact())
    }
}

impl Key {
    /// The OUT key of `subject` over `predicate`.
    pub fn out(subject: Id, predicate: PredId) -> Self {
        Key {
            vertex: subject,
            predicate,
            direction: Direction::Out,
        }
    }

    /// The IN key of `object` over `predicate`.
    pub fn inn(object: Id, predicate: PredId) -> Self {
        Key {
            vertex: object,
            predicate,
            direction: Direction::In,
        }
    }
}
