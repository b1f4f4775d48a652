//! A popularity-aware hot table in front of an engine (Wiscer's "VIP" idea for any engine).
//!
//! A small direct-mapped table of 1024 (key, value) pairs (16 KiB for 8-byte values: it
//! stays in L1) holds the values of hot keys, so a hot fetch costs one probe of a line
//! already in cache instead of the engine's dependent lookups. An empty slot holds a key
//! that hashes to another slot, so a probe is one compare. Popularity is tracked beside the
//! table: each slot counts sampled hits of its resident and keeps a candidate key with a
//! majority-vote count (Misra–Gries with one counter); fetches that miss the table vote
//! (one in eight) for their key in its slot, and a candidate with a few net votes more than the
//! resident's hits replaces it. Every `16 × slots` fetches all counts halve, so when
//! popularity shifts the formerly hot keys lose their slots to the newly hot ones within a
//! few periods. Writes go through to the engine and update or drop the resident copy.

use super::{Engine, Value};

const BITS: u32 = 10;
/// Net votes a candidate needs before it is admitted: keys met once in a while (all of them
/// under a uniform distribution) never get in, so admissions stay rare.
const ADMIT: u32 = 4;
/// One hit in `HIT_SAMPLE` is counted (keeps the hit path to one cache line).
const HIT_SAMPLE: u64 = 8;
/// One miss in `VOTE_SAMPLE` votes: the vote's data-dependent branches mispredict, and a
/// mispredict stops the next fetches' cache misses from overlapping with this one's.
const VOTE_SAMPLE: u64 = 8;

#[derive(Debug, Clone, Copy, Default)]
struct Stats {
    /// Sampled hits of the resident, times `HIT_SAMPLE`.
    hits: u32,
    votes: u32,
    candidate: u64,
}

/// `inner` with a hot table in front.
#[derive(Debug)]
pub struct Hot<E, V> {
    inner: E,
    /// (key, value) per slot; an empty slot's key belongs to another slot.
    table: Vec<(u64, V)>,
    stats: Vec<Stats>,
    tick: u64,
    hits: u64,
    admissions: u64,
    misses: Vec<u64>,
    positions: Vec<usize>,
    found: Vec<Option<u64>>,
}

/// The table slot of `key`.
#[inline]
pub fn slot_of(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BITS)) as usize
}

/// A key that can never be found in `slot` (it hashes elsewhere): marks the slot empty.
fn vacant(slot: usize) -> u64 {
    (0..).find(|&k| slot_of(k) != slot).unwrap_or(0)
}

impl<V: Value, E: Engine<V>> Hot<E, V> {
    pub fn new(inner: E) -> Self {
        Hot {
            inner,
            table: (0..1 << BITS)
                .map(|slot| (vacant(slot), V::default()))
                .collect(),
            stats: vec![Stats::default(); 1 << BITS],
            tick: 0,
            hits: 0,
            admissions: 0,
            misses: Vec::new(),
            positions: Vec::new(),
            found: Vec::new(),
        }
    }

    /// Keys resident in the hot table.
    pub fn resident(&self) -> usize {
        (0..self.table.len())
            .filter(|&slot| slot_of(self.table[slot].0) == slot)
            .count()
    }

    /// Whether `key` is resident in the hot table.
    pub fn is_resident(&self, key: u64) -> bool {
        self.table[slot_of(key)].0 == key
    }

    #[inline]
    fn lookup(&mut self, key: u64) -> Option<u64> {
        let slot = slot_of(key);
        let (resident, value) = &self.table[slot];
        if *resident != key {
            return None;
        }
        let digest = value.digest();
        self.hits += 1;
        if self.tick.is_multiple_of(HIT_SAMPLE) {
            let stats = &mut self.stats[slot];
            stats.hits = stats.hits.saturating_add(HIT_SAMPLE as u32);
        }
        Some(digest)
    }

    /// A fetch of `key` missed the table but found it in the engine: vote for it.
    fn vote(&mut self, key: u64) {
        let slot = slot_of(key);
        let stats = &mut self.stats[slot];
        if stats.candidate == key {
            stats.votes += 1;
        } else if stats.votes == 0 {
            stats.candidate = key;
            stats.votes = 1;
        } else {
            stats.votes -= 1;
            return;
        }
        if stats.votes >= ADMIT && stats.votes > stats.hits {
            if let Some(value) = self.inner.get(key) {
                self.admissions += 1;
                self.table[slot] = (key, value);
                let stats = &mut self.stats[slot];
                stats.hits = stats.votes;
                stats.votes = 0;
            }
        }
    }

    /// Drops `key` from the table if it is resident.
    fn evict(&mut self, key: u64) {
        let slot = slot_of(key);
        if self.table[slot].0 == key {
            self.table[slot] = (vacant(slot), V::default());
            self.stats[slot].hits = 0;
        }
    }

    fn age(&mut self, fetches: u64) {
        let period = 16u64 << BITS;
        let before = self.tick / period;
        self.tick += fetches;
        if self.tick / period != before {
            for stats in &mut self.stats {
                stats.hits /= 2;
                stats.votes /= 2;
            }
        }
    }
}

impl<V: Value, E: Engine<V>> Engine<V> for Hot<E, V> {
    fn name(&self) -> &'static str {
        match self.inner.name() {
            "quiver" => "quiver-vip",
            _ => "hot",
        }
    }

    fn insert(&mut self, key: u64, value: V) {
        let slot = slot_of(key);
        if self.table[slot].0 == key {
            self.table[slot].1 = value.clone();
        }
        self.inner.insert(key, value);
    }

    fn delete(&mut self, key: u64) -> bool {
        self.evict(key);
        self.inner.delete(key)
    }

    #[inline]
    fn fetch(&mut self, key: u64) -> Option<u64> {
        self.age(1);
        if let Some(digest) = self.lookup(key) {
            return Some(digest);
        }
        let digest = self.inner.fetch(key)?;
        if self.tick.is_multiple_of(VOTE_SAMPLE) {
            self.vote(key);
        }
        Some(digest)
    }

    /// Hits are served from the table; the misses go to the engine as one batch.
    fn fetch_batch(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        self.age(keys.len() as u64);
        out.clear();
        let (mut misses, mut positions, mut found) = (
            std::mem::take(&mut self.misses),
            std::mem::take(&mut self.positions),
            std::mem::take(&mut self.found),
        );
        misses.clear();
        positions.clear();
        for (i, &key) in keys.iter().enumerate() {
            let digest = self.lookup(key);
            if digest.is_none() {
                misses.push(key);
                positions.push(i);
            }
            out.push(digest);
        }
        self.inner.fetch_batch(&misses, &mut found);
        for ((&key, &i), &digest) in misses.iter().zip(&positions).zip(&found) {
            out[i] = digest;
            if digest.is_some() && (self.tick + i as u64).is_multiple_of(VOTE_SAMPLE) {
                self.vote(key);
            }
        }
        (self.misses, self.positions, self.found) = (misses, positions, found);
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
        let share = self.hits as f64 * 100.0 / self.tick.max(1) as f64;
        let inner = self
            .inner
            .notes()
            .map_or_else(String::new, |n| format!("; {n}"));
        Some(format!(
            "hot table served {share:.1}% of fetches, {} admissions, {} keys resident{inner}",
            self.admissions,
            self.resident()
        ))
    }
}
