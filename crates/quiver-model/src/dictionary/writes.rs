//! What a store that takes writes adds to its dictionary: the filter of absent terms,
//! built in the background ([`Dictionary::prepare_for_writes`]), and the lookup of a
//! request's terms in one batch ([`Dictionary::lookup_batch`]).

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::{Dictionary, PARALLEL_LOOKUPS};
use crate::id::Id;
use crate::term_filter::TermFilter;

impl Dictionary {
    /// Builds the filter of absent terms (see [`crate::term_filter`]) in a thread of its
    /// own, once per sorted part; lookups use it as soon as it is ready. For stores that
    /// take writes, whose lookups are mostly of new terms.
    pub fn prepare_for_writes(&self) {
        if self.filter.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let dictionary = self.clone();
        let built = std::thread::Builder::new()
            .name("quiver-term-filter".into())
            .spawn(move || {
                let _ = dictionary.filter.filter.set(dictionary.build_filter());
            });
        if built.is_err() {
            // No thread to spare: lookups keep binary-searching.
            self.filter.started.store(false, Ordering::Release);
        }
    }

    /// The filter of the sorted part's terms, hashed as the appended terms' index hashes.
    fn build_filter(&self) -> TermFilter {
        let mut filter = TermFilter::with_capacity(self.len);
        self.for_each_sorted(|_, term| filter.insert(self.appended.ids.hash(term)));
        filter
    }

    /// Bytes of the filter of absent terms, once built.
    pub fn filter_bytes(&self) -> Option<usize> {
        self.filter.filter.get().map(TermFilter::bytes)
    }

    /// The ids of `count` terms (`term(i)` the encoding of term `i`), in parallel for many:
    /// [`Dictionary::lookup`] of each, each term hashed once for the filter and the
    /// appended terms' index, whose shards are locked once per thread rather than once
    /// per term.
    pub fn lookup_batch<'t>(
        &self,
        count: usize,
        term: impl Fn(usize) -> &'t [u8] + Sync,
    ) -> Vec<Option<Id>> {
        let ids = &self.appended.ids;
        let filter = self.filter.filter.get();
        // A piece of the batch: hashes first, then the searches, each filter block
        // fetched a few terms ahead so that their cache misses overlap.
        let piece = |range: std::ops::Range<usize>| -> Vec<(Option<Id>, u64)> {
            let hashes: Vec<u64> = range.clone().map(|i| ids.hash(term(i))).collect();
            let mut out = Vec::with_capacity(hashes.len());
            for (k, (i, &hash)) in range.zip(&hashes).enumerate() {
                if let (Some(filter), Some(&ahead)) = (filter, hashes.get(k + 8)) {
                    filter.prefetch(ahead);
                }
                out.push((self.lookup_sorted_hashed(term(i), hash), hash));
            }
            out
        };
        let found: Vec<(Option<Id>, u64)> = if count < PARALLEL_LOOKUPS {
            piece(0..count)
        } else {
            let step = PARALLEL_LOOKUPS / 4;
            (0..count.div_ceil(step))
                .into_par_iter()
                .flat_map_iter(|n| piece(n * step..((n + 1) * step).min(count)))
                .collect()
        };
        let mut result: Vec<Option<Id>> = found.iter().map(|&(id, _)| id).collect();
        if self.appended.terms.is_empty() {
            return result;
        }
        let missing: Vec<usize> = (0..count).filter(|&i| result[i].is_none()).collect();
        let hashes: Vec<u64> = missing.iter().map(|&i| found[i].1).collect();
        let mut appended = vec![None; missing.len()];
        let look = |offset: usize, hashes: &[u64], out: &mut [Option<Id>]| {
            let holds =
                |k: usize, id: Id| self.appended_term(id as u64) == Some(term(missing[offset + k]));
            ids.get_many(hashes, holds, out);
        };
        if missing.len() < PARALLEL_LOOKUPS {
            look(0, &hashes, &mut appended);
        } else {
            let piece = PARALLEL_LOOKUPS / 4;
            hashes
                .par_chunks(piece)
                .zip(appended.par_chunks_mut(piece))
                .enumerate()
                .for_each(|(n, (hashes, out))| look(n * piece, hashes, out));
        }
        for (&i, position) in missing.iter().zip(appended) {
            result[i] = position.and_then(|p| self.global(p as u64));
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Lookups one by one and in batches, before and after the filter is built, find
        /// every term, sorted or appended, and nothing else.
        #[test]
        fn lookups_through_the_filter_and_in_batches_find_exactly_the_terms(
            terms in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..6), 0..300),
            appended in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 6..9), 0..40),
            probes in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..9), 0..100),
        ) {
            let mut dictionary = Dictionary::from_sorted(&terms);
            let appended: Vec<Vec<u8>> = appended.into_iter().collect();
            let (single, batch) = appended.split_at(appended.len() / 2);
            for term in single {
                dictionary.append(term).unwrap();
            }
            dictionary.append_absent_batch(&batch.iter().map(|t| Arc::from(&t[..])).collect::<Vec<_>>()).unwrap();
            let expected = |term: &[u8]| -> Option<Id> {
                let sorted = terms.iter().position(|t| t == term);
                let appended = appended.iter().position(|t| t == term);
                sorted.or(appended.map(|i| i + terms.len())).map(|i| i as Id)
            };
            let mut asked: Vec<Vec<u8>> = terms.iter().cloned().collect();
            asked.extend(appended.iter().cloned());
            asked.extend(probes);
            for with_filter in [false, true] {
                if with_filter {
                    let filter = dictionary.build_filter();
                    prop_assert!(dictionary.filter.filter.set(filter).is_ok());
                    prop_assert!(dictionary.filter_bytes().is_some());
                }
                let wanted: Vec<Option<Id>> = asked.iter().map(|t| expected(t)).collect();
                let one_by_one: Vec<Option<Id>> = asked.iter().map(|t| dictionary.lookup(t)).collect();
                prop_assert_eq!(&one_by_one, &wanted);
                let batch = dictionary.lookup_batch(asked.len(), |i| &asked[i]);
                prop_assert_eq!(&batch, &wanted);
            }
        }
    }

    #[test]
    fn a_large_batch_is_looked_up_in_parallel_like_a_small_one() {
        let terms: Vec<Vec<u8>> = (0..30_000u32)
            .map(|i| format!("t{i:06}").into_bytes())
            .collect();
        let mut dictionary = Dictionary::from_sorted(terms.iter().step_by(2));
        let odd: Vec<Arc<[u8]>> = terms
            .iter()
            .skip(1)
            .step_by(4)
            .map(|t| Arc::from(&t[..]))
            .collect();
        dictionary.append_absent_batch(&odd).unwrap();
        dictionary.prepare_for_writes();
        while dictionary.filter_bytes().is_none() {
            std::thread::yield_now();
        }
        let found = dictionary.lookup_batch(terms.len(), |i| &terms[i]);
        for (i, id) in found.iter().enumerate() {
            let expected = match i % 4 {
                0 | 2 => Some((i / 2) as Id),
                1 => Some((15_000 + i / 4) as Id),
                _ => None,
            };
            assert_eq!(*id, expected, "term {i}");
        }
    }
}
