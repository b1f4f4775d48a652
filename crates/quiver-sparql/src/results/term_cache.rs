//! A column's cache of the bytes the streaming writers wrote per id: a term repeated down a
//! column (a class, a department) is decoded and escaped once.
//!
//! Direct-mapped by a hash of the id, each slot's bytes kept in one buffer of the cache's
//! own, so that filling a slot copies the term's bytes and allocates nothing. (A vector per
//! slot cost one allocation per distinct term: a column of scattered ids, say q1's 2,528
//! graduate students, allocated once per row.) The buffer is emptied, with every slot,
//! when a term would take it past its bound: at worst the cache starts afresh.
//!
//! A cache has as many slots as the rows it serves may fill (64 to 1,024): the writer of a
//! few thousand rows cut into chunks, one cache per chunk's writer and column, then neither
//! sets up nor touches more memory than its rows need.

use quiver_model::Id;

use crate::table::UNBOUND;

/// The fewest and the most slots of a cache (powers of two).
const MIN_SLOTS: usize = 64;
const MAX_SLOTS: usize = 1024;
/// Bytes of text per slot that the cache's buffer holds before it starts afresh.
const BYTES_PER_SLOT: usize = 128;
/// Terms longer than this are not cached (one would take the room of many).
const LONGEST: usize = 1024;

/// The bytes written for the ids of one column, by a hash of the id.
pub(super) struct TermCache {
    /// Each slot's id ([`UNBOUND`]: empty) and the range of its bytes in `text`.
    slots: Vec<(Id, u32, u32)>,
    /// The bytes of the slots' terms, one after the other.
    text: Vec<u8>,
    /// The hash's shift: 64 less the bits of a slot's number.
    shift: u32,
}

impl TermCache {
    /// A cache for a column of `rows` rows (set up at its first use).
    pub(super) fn new(rows: usize) -> Self {
        // Capped before it is rounded up: no count of rows overflows the rounding.
        let slots = rows.min(MAX_SLOTS).next_power_of_two().max(MIN_SLOTS);
        Self {
            slots: Vec::new(),
            text: Vec::new(),
            shift: 64 - slots.trailing_zeros(),
        }
    }

    fn slot(&self, id: Id) -> usize {
        ((id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The bytes cached for `id`, if its slot holds it.
    #[inline]
    pub(super) fn get(&self, id: Id) -> Option<&[u8]> {
        let &(cached, start, end) = self.slots.get(self.slot(id))?;
        (cached == id).then(|| &self.text[start as usize..end as usize])
    }

    /// Caches `bytes` as what `id` (bound) is written as, in place of what its slot held.
    pub(super) fn put(&mut self, id: Id, bytes: &[u8]) {
        if bytes.len() > LONGEST {
            // Not cached; nor is what the slot held for the id before.
            let slot = self.slot(id);
            if let Some(held) = self.slots.get_mut(slot).filter(|held| held.0 == id) {
                held.0 = UNBOUND;
            }
            return;
        }
        let slots = 1usize << (64 - self.shift);
        if self.slots.is_empty() {
            self.slots = vec![(UNBOUND, 0, 0); slots];
            self.text.reserve(slots * BYTES_PER_SLOT / 4);
        }
        if self.text.len() + bytes.len() > slots * BYTES_PER_SLOT {
            self.text.clear();
            self.slots.fill((UNBOUND, 0, 0));
        }
        let start = self.text.len();
        self.text.extend_from_slice(bytes);
        let slot = self.slot(id);
        // Below `slots * BYTES_PER_SLOT` (at most 128 KiB): the bounds fit a u32.
        self.slots[slot] = (id, start as u32, self.text.len() as u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a cache answers is always the bytes last put for that id, or nothing, whatever
    /// the ids collide on and however often the buffer starts afresh.
    #[test]
    fn answers_only_what_was_put_last_for_the_id() {
        for rows in [0, 1, 100, 5_000, usize::MAX] {
            let mut cache = TermCache::new(rows);
            let mut last: std::collections::HashMap<Id, Vec<u8>> = Default::default();
            let mut found = 0;
            for k in 0..20_000u32 {
                // Half the ids from a few that come back often, half scattered.
                let id = if k % 2 == 0 {
                    (k % 97) as Id
                } else {
                    (k.wrapping_mul(2_654_435_761) % 3_000) as Id
                };
                let bytes: Vec<u8> = std::iter::repeat_n(k as u8, (k % 300) as usize).collect();
                if let Some(cached) = cache.get(id) {
                    assert_eq!(Some(&cached.to_vec()), last.get(&id), "id {id}");
                    found += 1;
                }
                cache.put(id, &bytes);
                assert_eq!(cache.get(id), Some(&bytes[..]), "id {id} just put");
                last.insert(id, bytes);
            }
            assert!(found > 0, "{rows} rows: the cache never answered");
        }
        // Too long to cache: nothing answered for it, not even what was put for it before.
        let mut cache = TermCache::new(10);
        cache.put(7, &[2; 10]);
        cache.put(7, &[1; LONGEST + 1]);
        assert_eq!(cache.get(7), None);
    }
}
