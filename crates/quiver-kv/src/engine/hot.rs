//! A popularity-aware hot table in front of an engine (Wiscer's "VIP" idea for any engine).
//!
//! Under a skewed workload a small share of the keys takes most fetches, but an index
//! scatters those keys over its whole memory: one hot key per cache line at best, behind a
//! chain of dependent loads. The hot table packs the values of the hottest keys densely
//! (four 16-byte slots per cache line), so a hit costs one probe of a line that the skew
//! itself keeps in L1 or L2, with no lock, no atomic and one counter as its bookkeeping.
//!
//! - **Layout.** A direct-mapped array of `2^bits` slots ([`DEFAULT_BITS`]: 2^16 slots,
//!   1 MiB for 8-byte values, half of a typical L2) of (key, value), indexed by the top bits
//!   of a multiplicative hash of the key. An empty slot holds a key that hashes to another
//!   slot, so a probe is one compare and there is no valid flag.
//! - **Admission by sampled counting.** Popularity is tracked beside the table, off the hit
//!   path: one probe in [`HIT_SAMPLE`] credits its slot's resident if it hits, and one miss
//!   in [`MISS_SAMPLE`] (that finds its key in the engine) votes for its key in its slot
//!   (Misra–Gries with one counter: a vote for another key cancels one). A vacant slot takes
//!   any key that misses; an occupied one goes to a candidate whose net votes exceed the
//!   resident's credited hits (both counted in the same unit), so a colder key sharing the
//!   slot cannot push a hotter one out. A hit counts only its probe (hits are probes minus
//!   misses), and the sampling rides on that count, so the bookkeeping is one increment and
//!   a test of its low bits, the rest in a function kept out of line.
//! - **Adaptation.** Every `2^bits` sampled events all counts halve, so when popularity
//!   shifts the formerly hot keys lose their credit within a few periods and the newly hot
//!   ones, which now miss, take their slots.
//! - **Tags.** A byte per slot (64 KiB for 2^16 slots) holds eight more bits of the
//!   resident key's hash (0: vacant). A single fetch reads the tag first and touches the
//!   slot array only on a tag match, so a miss is known after one access to a small array
//!   and the engine's lookup starts sooner.
//! - **Misses.** A miss still pays a mispredicted branch and the engine's own chain of
//!   dependent loads; so while misses are frequent (more than [`PREFETCH_ABOVE`] in 64
//!   probes over the last window) a fetch issues the engine's first load
//!   ([`Engine::prefetch`]) before the probe, and a miss finds it under way; when they are
//!   rare, the prefetches would be wasted and are left out.
//! - **Batches.** A batch probes the table without tags and without a branch per key (a
//!   hit or a miss is a select, the misses are gathered into a list), after loading the
//!   batch's slots in parallel while misses are frequent; the misses then go to the engine
//!   as one batch, whose prefetch pipeline overlaps them.
//! - **Bypass.** When fetches are spread too evenly for the table to pay (fewer than one
//!   hit in [`BYPASS_BELOW`] probes over a window of [`WINDOW`] probes), the next
//!   [`BYPASS_WINDOWS`] windows' worth of fetches go straight to the engine, a countdown the
//!   only bookkeeping, still voting (one in [`BYPASS_MISS_SAMPLE`]) so that a popularity
//!   that arises is learnt; then the table is measured again.
//! - **Consistency.** Writes go through to the engine, and an insert of a resident key
//!   updates the resident copy while a delete evacuates the slot, so a hit returns exactly
//!   what the engine holds; admission copies the value from the engine ([`Engine::get`]).

use super::{Engine, Value};

/// Slots of a hot table, as a power of two.
pub const DEFAULT_BITS: u32 = 16;
/// One probe in `HIT_SAMPLE` credits its slot's resident if it hit.
pub const HIT_SAMPLE: u64 = 16;
/// One miss in `MISS_SAMPLE` votes for its key.
pub const MISS_SAMPLE: u64 = 4;
/// Probes per measuring window of the hit rate.
pub const WINDOW: u64 = 1 << 12;
/// A window with fewer than one hit in `BYPASS_BELOW` probes starts a bypass ...
pub const BYPASS_BELOW: u64 = 8;
/// ... of this many windows' worth of fetches, after which the table is measured again.
pub const BYPASS_WINDOWS: u64 = 15;
/// A window with more than this many misses in 64 probes has fetches prefetch the
/// engine's first load before probing; below it, the prefetches would mostly be wasted.
pub const PREFETCH_ABOVE: u64 = 4;
/// While bypassed, one miss in `BYPASS_MISS_SAMPLE` votes: enough for the table to learn
/// a popularity that arises, at a sixteenth of the bookkeeping.
pub const BYPASS_MISS_SAMPLE: u64 = 64;
/// Votes a credited hit is worth: both then count fetches in units of `MISS_SAMPLE`.
const HIT_WEIGHT: u32 = (HIT_SAMPLE / MISS_SAMPLE) as u32;

#[derive(Debug, Clone)]
struct Slot<V> {
    key: u64,
    value: V,
}

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    /// Credited hits of the resident, times `HIT_WEIGHT`.
    hits: u32,
    /// Net votes of the candidate.
    votes: u32,
    candidate: u64,
}

/// `inner` with a hot table in front.
#[derive(Debug)]
pub struct Hot<E, V> {
    /// One byte per slot: [`tag`] of the resident key, 0 when the slot is vacant.
    tags: Box<[u8]>,
    table: Box<[Slot<V>]>,
    /// `64 - bits`: the shift that turns a hash into a slot.
    shift: u32,
    /// Probes of the table, and those that missed it; the hits are the difference, so a
    /// hit counts nothing but the probe.
    probes: u64,
    probe_misses: u64,
    /// Fetches that missed the table and found their key in the engine.
    misses: u64,
    /// Fetches sent to the engine without a probe, counted when each bypass starts.
    bypassed: u64,
    inner: E,
    stats: Box<[Stats]>,
    /// Sampled events since the counts last halved.
    events: u64,
    admissions: u64,
    bypasses: u64,
    /// `probes` and `probe_misses` when the current measuring window began.
    window: (u64, u64),
    /// Whether a fetch prefetches the engine's first load before probing (set per window
    /// from its miss rate).
    prefetch_misses: bool,
    /// Fetches still to go to the engine without a probe.
    bypass: u64,
    pending: Vec<u64>,
    positions: Vec<u32>,
    found: Vec<Option<u64>>,
}

impl<V: Value, E: Engine<V>> Hot<E, V> {
    /// A hot table of `2^DEFAULT_BITS` slots in front of `inner`.
    pub fn new(inner: E) -> Self {
        Self::with_bits(inner, DEFAULT_BITS)
    }

    /// A hot table of `2^bits` slots (`bits` clamped to 1..=24) in front of `inner`.
    pub fn with_bits(inner: E, bits: u32) -> Self {
        let bits = bits.clamp(1, 24);
        let shift = 64 - bits;
        let table = (0..1usize << bits)
            .map(|slot| Slot {
                key: vacant(shift, slot),
                value: V::default(),
            })
            .collect();
        Hot {
            tags: vec![0; 1 << bits].into_boxed_slice(),
            table,
            shift,
            probes: 0,
            probe_misses: 0,
            misses: 0,
            bypassed: 0,
            inner,
            stats: vec![Stats::default(); 1 << bits].into_boxed_slice(),
            events: 0,
            admissions: 0,
            bypasses: 0,
            window: (0, 0),
            prefetch_misses: true,
            bypass: 0,
            pending: Vec::new(),
            positions: Vec::new(),
            found: Vec::new(),
        }
    }

    /// The table slot of `key`.
    #[inline]
    pub fn slot_of(&self, key: u64) -> usize {
        slot(self.shift, key)
    }

    /// Keys resident in the hot table.
    pub fn resident(&self) -> usize {
        (0..self.table.len())
            .filter(|&slot| self.slot_of(self.table[slot].key) == slot)
            .count()
    }

    /// Whether fetches currently skip the table (its recent hit rate was too low).
    pub fn is_bypassed(&self) -> bool {
        self.bypass > 0
    }

    /// Whether `key` is resident in the hot table.
    pub fn is_resident(&self, key: u64) -> bool {
        self.table[self.slot_of(key)].key == key
    }

    /// The digest of `key`'s resident value, if resident. The tag decides most misses
    /// from the small tag array; only a tag match reads the slot. A hit costs the probe,
    /// one counter and a test of its low bits.
    #[inline(always)]
    fn probe(&mut self, key: u64) -> Option<u64> {
        let hash = hash(key);
        let slot = (hash >> self.shift) as usize;
        self.probes += 1;
        if self.probes.is_multiple_of(HIT_SAMPLE) {
            self.sample(slot, key);
        }
        if self.tags[slot] == tag(self.shift, hash) {
            let entry = &self.table[slot];
            if entry.key == key {
                return Some(entry.value.digest());
            }
        }
        self.probe_misses += 1;
        None
    }

    /// Every `HIT_SAMPLE`-th probe: credits the slot's resident if the probe hits it, and
    /// closes the measuring window when it is full.
    #[cold]
    #[inline(never)]
    fn sample(&mut self, slot: usize, key: u64) {
        if self.table[slot].key == key {
            self.credit(slot);
        }
        if self.probes - self.window.0 >= WINDOW {
            self.measure();
        }
    }

    /// Ends a measuring window: starts a bypass when its hits were too few to pay for its
    /// probes, and decides whether the next window's fetches prefetch for their misses.
    fn measure(&mut self) {
        let probes = self.probes - self.window.0;
        let misses = self.probe_misses - self.window.1;
        let hits = probes - misses;
        if hits * BYPASS_BELOW < probes {
            self.bypass = BYPASS_WINDOWS * WINDOW;
            self.bypassed += self.bypass;
            self.bypasses += 1;
        }
        self.prefetch_misses = misses * 64 > probes * PREFETCH_ABOVE;
        self.window = (self.probes, self.probe_misses);
    }

    /// A fetch of `key` missed the table and found it in the engine.
    #[inline(always)]
    fn missed(&mut self, key: u64) {
        self.misses += 1;
        // A vacant slot takes any key that misses; the others wait for a sampled vote.
        if self.misses.is_multiple_of(MISS_SAMPLE) || self.tags[self.slot_of(key)] == 0 {
            self.vote(key);
        }
    }

    fn credit(&mut self, slot: usize) {
        let stats = &mut self.stats[slot];
        stats.hits = stats.hits.saturating_add(HIT_WEIGHT);
        self.tick();
    }

    /// A sampled vote for `key`; admits it when it has earned its slot.
    #[cold]
    #[inline(never)]
    fn vote(&mut self, key: u64) {
        self.tick();
        let slot = self.slot_of(key);
        let vacant = self.slot_of(self.table[slot].key) != slot;
        let stats = &mut self.stats[slot];
        if stats.candidate == key {
            stats.votes = stats.votes.saturating_add(1);
        } else if stats.votes == 0 {
            stats.candidate = key;
            stats.votes = 1;
        } else {
            stats.votes -= 1;
            if !vacant {
                return;
            }
        }
        if !(vacant || (stats.votes >= 2 && stats.votes > stats.hits)) {
            return;
        }
        if let Some(value) = self.inner.get(key) {
            self.admissions += 1;
            self.tags[slot] = tag(self.shift, hash(key));
            self.table[slot] = Slot { key, value };
            let stats = &mut self.stats[slot];
            stats.hits = if stats.candidate == key {
                stats.votes
            } else {
                1
            };
            stats.votes = 0;
        }
    }

    /// Counts a sampled event; halves every count once per `2^bits` of them.
    fn tick(&mut self) {
        self.events += 1;
        if self.events >= self.stats.len() as u64 {
            self.events = 0;
            for stats in self.stats.iter_mut() {
                stats.hits /= 2;
                stats.votes /= 2;
            }
        }
    }

    /// Drops `key` from the table if it is resident.
    fn evict(&mut self, key: u64) {
        let slot = self.slot_of(key);
        if self.table[slot].key == key {
            self.tags[slot] = 0;
            self.table[slot] = Slot {
                key: vacant(self.shift, slot),
                value: V::default(),
            };
            self.stats[slot].hits = 0;
        }
    }

    /// A batch while bypassed: straight to the engine, voting for a sample of what it
    /// finds.
    fn fetch_batch_bypassed(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        let beyond = (keys.len() as u64).saturating_sub(self.bypass);
        self.bypassed += beyond;
        self.bypass -= keys.len() as u64 - beyond;
        self.inner.fetch_batch(keys, out);
        let sample = BYPASS_MISS_SAMPLE as usize;
        for (&key, digest) in keys.iter().zip(out.iter()).step_by(sample) {
            if digest.is_some() {
                self.vote(key);
            }
        }
    }
}

#[inline(always)]
fn hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

#[inline(always)]
fn slot(shift: u32, key: u64) -> usize {
    (hash(key) >> shift) as usize
}

/// The tag of a hash: the eight bits below the slot bits, never 0 (which marks a vacant
/// slot).
#[inline(always)]
fn tag(shift: u32, hash: u64) -> u8 {
    ((hash >> (shift - 8)) as u8).max(1)
}

/// A key that can never be found in `at` (it hashes elsewhere): marks the slot empty.
fn vacant(shift: u32, at: usize) -> u64 {
    (0..).find(|&k| slot(shift, k) != at).unwrap_or(0)
}

impl<V: Value, E: Engine<V>> Engine<V> for Hot<E, V> {
    fn name(&self) -> &'static str {
        match self.inner.name() {
            "quiver" => "quiver-vip",
            _ => "hot",
        }
    }

    fn insert(&mut self, key: u64, value: V) {
        let slot = self.slot_of(key);
        if self.table[slot].key == key {
            self.table[slot].value = value.clone();
        }
        self.inner.insert(key, value);
    }

    fn delete(&mut self, key: u64) -> bool {
        self.evict(key);
        self.inner.delete(key)
    }

    #[inline]
    fn fetch(&mut self, key: u64) -> Option<u64> {
        if self.bypass > 0 {
            // Counted down, and sampled by the countdown: nothing else on this path.
            self.bypass -= 1;
            let digest = self.inner.fetch(key);
            if self.bypass.is_multiple_of(BYPASS_MISS_SAMPLE) && digest.is_some() {
                self.vote(key);
            }
            return digest;
        }
        if self.prefetch_misses {
            self.inner.prefetch(key);
        }
        if let Some(digest) = self.probe(key) {
            return Some(digest);
        }
        let digest = self.inner.fetch(key)?;
        self.missed(key);
        Some(digest)
    }

    /// The whole batch probes the table first, without tags and without a branch per key
    /// (the slots of a skewed batch sit in L1 or L2, and a hit or a miss is a select, not
    /// a jump); the misses, gathered on the way, go to the engine as one batch, whose
    /// prefetch pipeline overlaps them.
    fn fetch_batch(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        if self.bypass > 0 {
            return self.fetch_batch_bypassed(keys, out);
        }
        out.clear();
        out.reserve(keys.len());
        let (mut pending, mut positions, mut found) = (
            std::mem::take(&mut self.pending),
            std::mem::take(&mut self.positions),
            std::mem::take(&mut self.found),
        );
        if pending.len() < keys.len() {
            pending.resize(keys.len(), 0);
            positions.resize(keys.len(), 0);
        }
        // Under a mild skew (misses frequent enough for the single fetches to prefetch)
        // the table is hot as a whole but not line by line: the batch's slots are loaded
        // in parallel first, so that the probes do not wait on L2 one by one.
        if self.prefetch_misses {
            for &key in keys {
                super::prefetch(&self.table[slot(self.shift, key)]);
            }
        }
        let mut missed = 0;
        for (i, &key) in keys.iter().enumerate() {
            let entry = &self.table[slot(self.shift, key)];
            let hit = entry.key == key;
            out.push(hit.then(|| entry.value.digest()));
            pending[missed] = key;
            positions[missed] = i as u32;
            missed += usize::from(!hit);
        }
        // The sampled credits: the probes whose running number is a multiple of the
        // sample, as for single fetches.
        let first = (HIT_SAMPLE - self.probes % HIT_SAMPLE) % HIT_SAMPLE;
        for i in (first as usize..keys.len()).step_by(HIT_SAMPLE as usize) {
            if out[i].is_some() {
                self.credit(self.slot_of(keys[i]));
            }
        }
        self.probes += keys.len() as u64;
        self.probe_misses += missed as u64;
        if self.probes - self.window.0 >= WINDOW {
            self.measure();
        }
        self.inner.fetch_batch(&pending[..missed], &mut found);
        for ((&key, &i), &digest) in pending.iter().zip(&positions).zip(&found) {
            out[i as usize] = digest;
            if digest.is_some() {
                self.missed(key);
            }
        }
        (self.pending, self.positions, self.found) = (pending, positions, found);
    }

    fn get(&mut self, key: u64) -> Option<V> {
        self.inner.get(key)
    }

    fn len(&self) -> usize {
        self.inner.len()
    }

    fn maintain(&mut self) {
        self.inner.maintain();
    }

    fn notes(&self) -> Option<String> {
        let hits = self.probes - self.probe_misses;
        let engine = self.misses + self.bypassed - self.bypass;
        let share = hits as f64 * 100.0 / (hits + engine).max(1) as f64;
        let inner = self
            .inner
            .notes()
            .map_or_else(String::new, |n| format!("; {n}"));
        Some(format!(
            "hot table served {share:.1}% of fetches, {} admissions, {} bypasses, {} of {} slots resident{inner}",
            self.admissions,
            self.bypasses,
            self.resident(),
            self.table.len()
        ))
    }
}
