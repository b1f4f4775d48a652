//! Sorting the id triples a graph index is built from, and id pairs, by a parallel radix
//! sort.
//!
//! A bulk load sorts every triple twice, by (subject, predicate, object) and by (object,
//! predicate, subject) (`build.rs`). A comparison sort spends most of that time comparing
//! three ids at a time; a most-significant-digit radix sort reads each triple once per
//! distinguishing byte and stops as soon as a bucket is small. `rdst` does it in place on
//! all cores (its low-memory tuner: regions sort for large buckets), so the load's peak,
//! which the id triples set, does not grow. A cluster sorts the pairs it replicates on
//! every process as it starts ([`sort_pairs`]: LUBM-1000's 23 M `rdf:type` memberships),
//! where a comparison sort was 40 % of a 4-process cluster's processor time.

use bytemuck::TransparentWrapper;
use quiver_model::{Id, ID_BYTES};
use rdst::{RadixKey, RadixSort};

/// Below this many triples a graph is sorted by comparison on the calling thread: for a
/// small graph (most named graphs), the radix sort's counts and the pool cost more than the
/// work.
pub(crate) const PARALLEL_TRIPLES: usize = 1 << 14;

/// Sorts `triples` ascending by their three ids, the first most significant.
pub(crate) fn sort_triples(triples: &mut [[Id; 3]]) {
    if triples.len() < PARALLEL_TRIPLES {
        triples.sort_unstable();
    } else {
        ByIds::wrap_slice_mut(triples)
            .radix_sort_builder()
            .with_low_mem_tuner()
            .sort();
    }
}

/// Sorts `pairs` ascending, the first id most significant, as [`sort_triples`] does
/// triples.
pub fn sort_pairs(pairs: &mut [(Id, Id)]) {
    if pairs.len() < PARALLEL_TRIPLES {
        pairs.sort_unstable();
    } else {
        ByPair::wrap_slice_mut(pairs)
            .radix_sort_builder()
            .with_low_mem_tuner()
            .sort();
    }
}

/// A pair as `rdst` reads it: from the second id's lowest byte to the first id's highest.
#[derive(Clone, Copy, TransparentWrapper)]
#[repr(transparent)]
struct ByPair((Id, Id));

impl RadixKey for ByPair {
    const LEVELS: usize = 2 * ID_BYTES;

    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        let id = if level < ID_BYTES {
            self.0 .1
        } else {
            self.0 .0
        };
        (id >> (8 * (level % ID_BYTES))) as u8
    }
}

/// A triple as `rdst` reads it: its bytes from the least significant (the third id's
/// lowest) to the most significant (the first id's highest).
#[derive(Clone, Copy, TransparentWrapper)]
#[repr(transparent)]
struct ByIds([Id; 3]);

impl RadixKey for ByIds {
    const LEVELS: usize = 3 * ID_BYTES;

    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        let id = self.0[2 - level / ID_BYTES];
        (id >> (8 * (level % ID_BYTES))) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Triples whose ids spread over every byte, with many repeated subjects and objects,
    /// as a graph's are.
    fn triples(len: usize, seed: u64) -> Vec<[Id; 3]> {
        let mut state = seed | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        (0..len)
            .map(|_| {
                let wide = next();
                let narrow = (wide % 1000) as Id;
                [
                    wide as Id,
                    (next() % 20) as Id,
                    if wide % 3 == 0 {
                        narrow
                    } else {
                        (wide >> 20) as Id
                    },
                ]
            })
            .collect()
    }

    #[test]
    fn a_large_set_sorts_as_a_comparison_sort_does() {
        for len in [PARALLEL_TRIPLES, 200_000] {
            let mut radix = triples(len, len as u64);
            let mut reference = radix.clone();
            reference.sort_unstable();
            sort_triples(&mut radix);
            assert_eq!(radix, reference, "{len} triples");
        }
    }

    proptest! {
        #[test]
        fn any_pairs_sort_as_a_comparison_sort_does(
            mut radix in prop::collection::vec(any::<(Id, Id)>(), PARALLEL_TRIPLES..PARALLEL_TRIPLES + 3000),
        ) {
            let mut reference = radix.clone();
            reference.sort_unstable();
            sort_pairs(&mut radix);
            prop_assert_eq!(radix, reference);
        }

        #[test]
        fn any_triples_sort_as_a_comparison_sort_does(
            mut radix in prop::collection::vec(any::<[Id; 3]>(), PARALLEL_TRIPLES..PARALLEL_TRIPLES + 3000),
        ) {
            let mut reference = radix.clone();
            reference.sort_unstable();
            sort_triples(&mut radix);
            prop_assert_eq!(radix, reference);
        }
    }
}
