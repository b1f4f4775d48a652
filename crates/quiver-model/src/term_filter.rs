//! A filter in front of the sorted dictionary: most terms it lacks are known absent
//! without a binary search.
//!
//! The write path looks up every term of a request, and in a bulk insert most of them
//! are new: each such lookup used to be a binary search over the bucket heads, a score of
//! cache misses spread over the whole dictionary, only to find nothing. A blocked Bloom
//! filter (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom
//! Filters", 2007; the split-block layout of Parquet's filters) answers "absent" for all
//! but about one in two hundred of them with one cache line: a key sets one bit in each of
//! the eight words of the 512-bit block its hash picks. Written by hand because it is
//! forty lines over a hash the dictionary already computes, and it must be built from the
//! front-coded buckets directly.
//!
//! It costs 12 bits per term of the sorted part (150 MB for a billion-triple store's
//! hundred million terms) and one pass over the dictionary to build, so it is only built
//! for stores that take writes ([`crate::Dictionary::prepare_for_writes`]), in the
//! background: lookups use it once it is ready and binary-search until then.

/// Bits of filter per term.
const BITS_PER_TERM: usize = 12;

/// Multipliers that spread a hash's low 32 bits over the eight words of a block (those of
/// Parquet's split-block Bloom filter).
const SALT: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// One cache line of the filter.
#[derive(Debug, Clone, Copy, Default)]
#[repr(align(64))]
struct Block([u64; 8]);

impl Block {
    /// The bit of each word that `hash` sets.
    #[inline(always)]
    fn mask(hash: u64) -> [u64; 8] {
        let low = hash as u32;
        SALT.map(|salt| 1u64 << (low.wrapping_mul(salt) >> 26))
    }
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct TermFilter {
    blocks: Box<[Block]>,
}

impl TermFilter {
    /// An empty filter sized for `terms` terms.
    pub(crate) fn with_capacity(terms: u64) -> Self {
        let blocks = (terms as usize * BITS_PER_TERM).div_ceil(512).max(1);
        Self {
            blocks: vec![Block::default(); blocks].into_boxed_slice(),
        }
    }

    #[inline(always)]
    fn block(&self, hash: u64) -> usize {
        ((u128::from(hash) * self.blocks.len() as u128) >> 64) as usize
    }

    /// Adds the term of hash `hash`.
    pub(crate) fn insert(&mut self, hash: u64) {
        let block = self.block(hash);
        let words = &mut self.blocks[block].0;
        for (word, bit) in words.iter_mut().zip(Block::mask(hash)) {
            *word |= bit;
        }
    }

    /// Whether the term of hash `hash` may have been added (`false`: it was not).
    #[inline]
    pub(crate) fn may_contain(&self, hash: u64) -> bool {
        let words = &self.blocks[self.block(hash)].0;
        words
            .iter()
            .zip(Block::mask(hash))
            .all(|(word, bit)| word & bit != 0)
    }

    /// Hints the CPU to fetch the block of `hash`, ahead of [`TermFilter::may_contain`].
    #[inline]
    pub(crate) fn prefetch(&self, hash: u64) {
        crate::prefetch::prefetch_read(&self.blocks[self.block(hash)]);
    }

    /// Bytes the filter holds.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(i: u64) -> u64 {
        use std::hash::BuildHasher;
        foldhash::quality::FixedState::with_seed(7).hash_one(i)
    }

    #[test]
    fn added_terms_are_always_found_and_others_rarely() {
        let terms = 100_000;
        let mut filter = TermFilter::with_capacity(terms);
        for i in 0..terms {
            filter.insert(hash(i));
        }
        assert!((0..terms).all(|i| filter.may_contain(hash(i))));
        let false_positives = (terms..2 * terms)
            .filter(|&i| filter.may_contain(hash(i)))
            .count();
        // About 0.5% at 12 bits per term; an empty filter would pass nothing, a broken
        // one (a single block, bits not spread) everything.
        assert!(false_positives < terms as usize / 50, "{false_positives}");
        assert!(TermFilter::with_capacity(0).bytes() == 64);
        assert!(!TermFilter::with_capacity(0).may_contain(hash(1)));
    }
}
