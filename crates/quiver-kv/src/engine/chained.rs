//! Chained hashing, plain and with Wiscer's VIP reordering.
//!
//! The layout follows Wiscer's chained table: an array of bucket heads (entry indices) and
//! an array of entries `{key, value, next}`, so a lookup costs a miss on the bucket head
//! and one per entry walked. The table doubles when the load factor passes 1, between
//! batches ([`Engine::maintain`]), as Wiscer rehashes between batches.
//!
//! The VIP variant ([`ChainedVip`]) keeps popular keys at the head of their chain: one fetch
//! in [`SAMPLE`] counts a hit on the entry found, and an entry whose count passes its
//! predecessor's swaps places with it (contents, not links). Counts belong to an epoch of
//! [`EPOCH`] fetches; a count from an older epoch reads as zero, so when popularity shifts
//! the newly hot keys overtake the formerly hot ones within an epoch.

use super::{hash, prefetch, Engine, Value};

const NIL: u32 = u32::MAX;

/// One fetch in `SAMPLE` updates the VIP counts.
pub const SAMPLE: u64 = 16;
/// Fetches per VIP epoch.
pub const EPOCH: u64 = 1 << 20;

#[derive(Debug, Clone, Default)]
struct Entry<V> {
    key: u64,
    next: u32,
    hits: u16,
    epoch: u16,
    value: V,
}

/// A chained hash table; `VIP` turns on popularity reordering.
#[derive(Debug, Clone)]
pub struct ChainedTable<V, const VIP: bool> {
    buckets: Vec<u32>,
    entries: Vec<Entry<V>>,
    /// Head of the list of free entries (linked through `next`).
    free: u32,
    len: usize,
    bits: u32,
    tick: u64,
    epoch: u16,
}

/// Plain chained hashing.
pub type Chained<V> = ChainedTable<V, false>;
/// Chained hashing with VIP reordering.
pub type ChainedVip<V> = ChainedTable<V, true>;

impl<V: Value, const VIP: bool> ChainedTable<V, VIP> {
    /// A table sized for `capacity` keys at load factor 1.
    pub fn new(capacity: usize) -> Self {
        let bits = capacity.max(16).next_power_of_two().trailing_zeros();
        ChainedTable {
            buckets: vec![NIL; 1 << bits],
            entries: Vec::with_capacity(capacity),
            free: NIL,
            len: 0,
            bits,
            tick: 0,
            epoch: 0,
        }
    }

    #[inline]
    fn bucket(&self, key: u64) -> usize {
        (hash(key) >> (64 - self.bits)) as usize
    }

    fn find(&self, key: u64) -> (u32, u32) {
        let (mut previous, mut at) = (NIL, self.buckets[self.bucket(key)]);
        while at != NIL {
            let entry = &self.entries[at as usize];
            if entry.key == key {
                return (previous, at);
            }
            previous = at;
            at = entry.next;
        }
        (previous, NIL)
    }

    /// Doubles the bucket array, keeping each chain's order (the VIP order survives).
    fn grow(&mut self) {
        self.bits += 1;
        let mut buckets = vec![NIL; 1 << self.bits];
        let mut tails = vec![NIL; 1 << self.bits];
        for head in std::mem::take(&mut self.buckets) {
            let mut at = head;
            while at != NIL {
                let next = self.entries[at as usize].next;
                let bucket = (hash(self.entries[at as usize].key) >> (64 - self.bits)) as usize;
                self.entries[at as usize].next = NIL;
                match tails[bucket] {
                    NIL => buckets[bucket] = at,
                    tail => self.entries[tail as usize].next = at,
                }
                tails[bucket] = at;
                at = next;
            }
        }
        self.buckets = buckets;
    }

    /// Counts a sampled hit on `at` and moves it before `previous` if it is now hotter.
    #[cold]
    fn record_hit(&mut self, previous: u32, at: u32) {
        if self.tick.is_multiple_of(EPOCH) {
            self.epoch = self.epoch.wrapping_add(1);
        }
        let epoch = self.epoch;
        let count = |entry: &Entry<V>| if entry.epoch == epoch { entry.hits } else { 0 };
        let entry = &mut self.entries[at as usize];
        entry.hits = count(entry).saturating_add(1);
        entry.epoch = epoch;
        if previous == NIL || entry.hits <= count(&self.entries[previous as usize]) {
            return;
        }
        let (low, high) = (at.min(previous) as usize, at.max(previous) as usize);
        let (head, tail) = self.entries.split_at_mut(high);
        let (a, b) = (&mut head[low], &mut tail[0]);
        std::mem::swap(&mut a.key, &mut b.key);
        std::mem::swap(&mut a.value, &mut b.value);
        std::mem::swap(&mut a.hits, &mut b.hits);
        std::mem::swap(&mut a.epoch, &mut b.epoch);
    }
}

impl<V: Value, const VIP: bool> Engine<V> for ChainedTable<V, VIP> {
    fn name(&self) -> &'static str {
        if VIP {
            "chained-vip"
        } else {
            "chained"
        }
    }

    fn insert(&mut self, key: u64, value: V) {
        let (_, at) = self.find(key);
        if at != NIL {
            self.entries[at as usize].value = value;
            return;
        }
        let bucket = self.bucket(key);
        let entry = Entry {
            key,
            next: self.buckets[bucket],
            hits: 0,
            epoch: self.epoch.wrapping_sub(1),
            value,
        };
        let at = if self.free != NIL {
            let at = self.free;
            self.free = self.entries[at as usize].next;
            self.entries[at as usize] = entry;
            at
        } else {
            self.entries.push(entry);
            (self.entries.len() - 1) as u32
        };
        self.buckets[bucket] = at;
        self.len += 1;
        if self.len > 2 * self.buckets.len() {
            self.grow();
        }
    }

    fn delete(&mut self, key: u64) -> bool {
        let (previous, at) = self.find(key);
        if at == NIL {
            return false;
        }
        let next = self.entries[at as usize].next;
        match previous {
            NIL => {
                let bucket = self.bucket(key);
                self.buckets[bucket] = next;
            }
            previous => self.entries[previous as usize].next = next,
        }
        let entry = &mut self.entries[at as usize];
        entry.value = V::default();
        entry.next = self.free;
        self.free = at;
        self.len -= 1;
        true
    }

    #[inline]
    fn fetch(&mut self, key: u64) -> Option<u64> {
        let (mut previous, mut at) = (NIL, self.buckets[self.bucket(key)]);
        while at != NIL {
            let entry = &self.entries[at as usize];
            if entry.key == key {
                let digest = entry.value.digest();
                if VIP {
                    self.tick += 1;
                    if self.tick.is_multiple_of(SAMPLE) {
                        self.record_hit(previous, at);
                    }
                }
                return Some(digest);
            }
            previous = at;
            at = entry.next;
        }
        None
    }

    /// Two-stage prefetch pipeline (Mega-KV style): the bucket head of key `i + 2W`, then
    /// the first entry of key `i + W`, while key `i` is resolved.
    fn fetch_batch(&mut self, keys: &[u64], out: &mut Vec<Option<u64>>) {
        const WINDOW: usize = 16;
        out.clear();
        let stage_one = |table: &Self, key: u64| prefetch(&table.buckets[table.bucket(key)]);
        let stage_two = |table: &Self, key: u64| {
            let head = table.buckets[table.bucket(key)];
            if let Some(entry) = table.entries.get(head as usize) {
                prefetch(entry);
            }
        };
        for &key in keys.iter().take(2 * WINDOW) {
            stage_one(self, key);
        }
        for &key in keys.iter().take(WINDOW) {
            stage_two(self, key);
        }
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + 2 * WINDOW) {
                stage_one(self, ahead);
            }
            if let Some(&ahead) = keys.get(i + WINDOW) {
                stage_two(self, ahead);
            }
            let digest = self.fetch(key);
            out.push(digest);
        }
    }

    fn get(&mut self, key: u64) -> Option<V> {
        let (_, at) = self.find(key);
        (at != NIL).then(|| self.entries[at as usize].value.clone())
    }

    fn len(&self) -> usize {
        self.len
    }

    fn maintain(&mut self) {
        while self.len > self.buckets.len() {
            self.grow();
        }
    }

    fn notes(&self) -> Option<String> {
        Some(format!(
            "{} buckets for {} keys",
            self.buckets.len(),
            self.len
        ))
    }
}
