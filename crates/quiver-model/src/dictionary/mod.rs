//! The term dictionary: encoded terms ↔ dense ids, front-coded.
//!
//! Terms are stored sorted, in buckets of [`BUCKET`] strings: the first string of a bucket
//! in full, every following one as (length of the prefix shared with its predecessor,
//! suffix). Sorted IRIs share long prefixes (`http://www.Department3.University7.edu/…`), so
//! this keeps a term in a dozen bytes instead of a heap allocation each. An id is a position
//! in sorted order: `id → term` decodes at most one bucket, `term → id` binary-searches the
//! bucket heads (its first levels over a packed copy of some of them, `fences.rs`) and scans
//! one bucket. Written by hand because it is the store's core
//! structure and must map zero-copy from a snapshot ([`Column`]).
//! The buckets are written and read in `front_coding.rs`.
//!
//! Terms added by updates after the dictionary was built cannot take their rank among the
//! sorted terms without renumbering every id in the graph index, so they are appended
//! ([`Dictionary::append`]): ids `base_len()..len()`, in order of arrival, kept in a
//! persistent vector that a new store version shares with the old one, and found through
//! one hash index that all versions share ([`crate::appended_index`]). Only base ids sort
//! like their terms.
//!
//! A query's constants are looked up each time it is prepared, and each binary search
//! still touches a few cache lines spread over the whole dictionary: [`Dictionary::lookup_remembered`]
//! answers from each thread's last few hundred terms found in the sorted part (named by a
//! number clones share, so every version of a store shares them).
//!
//! A store that takes writes looks up mostly absent terms: [`Dictionary::prepare_for_writes`]
//! builds a filter over the sorted part ([`crate::term_filter`]) that answers most of them
//! without a search, and [`Dictionary::lookup_batch`] looks up a request's terms together.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use crate::column::Column;
use crate::id::Id;
use crate::term_filter::TermFilter;

/// Strings per front-coding bucket.
pub const BUCKET: usize = 16;

/// Ids ahead of the one being decoded whose bucket offsets [`Dictionary::prefetch_ahead`]
/// fetches (and whose buckets, at half the distance).
pub const PREFETCH_DISTANCE: usize = 16;

/// A sorted, front-coded set of encoded terms with dense ids, plus terms appended since.
/// Cloning shares everything (a new store version's dictionary).
#[derive(Debug, Default, Clone)]
pub struct Dictionary {
    /// The encoded buckets.
    data: Column<u8>,
    /// Byte offset of each bucket in `data`.
    buckets: Column<u64>,
    /// Terms in the sorted, front-coded part.
    len: u64,
    appended: Appended,
    remembered: Remembered,
    filter: Arc<FilterSlot>,
    /// Bucket heads packed for the first levels of a search (shared by clones, like the
    /// sorted part).
    fences: Arc<OnceLock<Fences>>,
    /// Set when this dictionary is one owner's share of a cluster's ([`share`]).
    share: Option<Arc<share::Share>>,
}

/// The filter of the sorted part, once built (shared by clones, like the sorted part).
#[derive(Debug, Default)]
struct FilterSlot {
    filter: OnceLock<TermFilter>,
    started: AtomicBool,
}

/// Batches of at least this many terms are looked up in parallel.
const PARALLEL_LOOKUPS: usize = 8192;

mod appended;
mod decoding;
mod fences;
mod front_coding;
mod parallel_merge;
mod remembered;
mod run;
mod share;
mod writes;

use fences::Fences;
use front_coding::{common_prefix, read_varint, BucketReader};
use remembered::Remembered;

use appended::Appended;
pub use decoding::Cursor;

pub use front_coding::DictionaryBuilder;
pub use parallel_merge::merge_into_dictionary;
pub use run::{merge_runs, RunDrain, SortedRun};
pub use share::{record_misses, term_owner, Resolver};

impl Dictionary {
    /// The dictionary of `len` terms front-coded in `data`, whose buckets start at `buckets`.
    fn assembled(data: Column<u8>, buckets: Column<u64>, len: u64) -> Dictionary {
        Dictionary {
            data,
            buckets,
            len,
            appended: Appended::default(),
            remembered: Remembered::default(),
            filter: Arc::default(),
            fences: Arc::default(),
            share: None,
        }
    }

    /// A dictionary of `terms`, which must be sorted and distinct.
    pub fn from_sorted<T: AsRef<[u8]>>(terms: impl IntoIterator<Item = T>) -> Self {
        let mut builder = DictionaryBuilder::new();
        for term in terms {
            builder.push(term.as_ref());
        }
        builder.finish()
    }

    /// Reassembles a dictionary from its stored parts (as written by [`Dictionary::parts`]).
    /// Checks the bucket table (count, first offset, strictly increasing, inside `data`);
    /// the buckets' contents are checked by [`Dictionary::validate_buckets`], which a
    /// caller can run in parallel.
    pub fn from_parts(data: Column<u8>, buckets: Column<u64>, len: u64) -> Result<Self, String> {
        let expected_buckets = len.div_ceil(BUCKET as u64);
        if buckets.len() as u64 != expected_buckets {
            return Err(format!(
                "{} buckets for {len} terms, expected {expected_buckets}",
                buckets.len()
            ));
        }
        if buckets.first().is_some_and(|&first| first != 0) {
            return Err("the first bucket does not start at offset 0".into());
        }
        if let Some(i) = buckets.windows(2).position(|w| w[0] >= w[1]) {
            return Err(format!(
                "bucket offsets {i} and {} are not increasing",
                i + 1
            ));
        }
        if buckets
            .last()
            .is_some_and(|&last| last >= data.len() as u64)
        {
            return Err(format!(
                "the last bucket starts past the {} bytes of data",
                data.len()
            ));
        }
        if buckets.is_empty() && !data.is_empty() {
            return Err(format!("{} bytes of data but no terms", data.len()));
        }
        Ok(Self {
            data,
            buckets,
            len,
            appended: Appended::default(),
            remembered: Remembered::default(),
            filter: Arc::default(),
            fences: Arc::default(),
            share: None,
        })
    }

    /// Checks the buckets `range`: each decodes into its terms, which are valid term
    /// encodings in strictly increasing order (also across the next bucket's head), and
    /// ends exactly where the next bucket begins. Linear in the bytes checked.
    pub fn validate_buckets(&self, range: std::ops::Range<usize>) -> Result<(), String> {
        let mut current = Vec::new();
        let mut scratch = Vec::new();
        for bucket in range {
            let Some(&start) = self.buckets.get(bucket) else {
                return Err(format!("bucket {bucket} does not exist"));
            };
            let end = self
                .buckets
                .get(bucket + 1)
                .map_or(self.data.len(), |&next| next as usize);
            let data = &self.data[..end];
            let mut reader = BucketReader::new(data, start);
            let first = bucket as u64 * BUCKET as u64;
            let last = (first + BUCKET as u64).min(self.len);
            current.clear();
            for id in first..last {
                let Some((shared, suffix)) = reader.next_entry(current.len()) else {
                    return Err(format!("term {id} in bucket {bucket} is malformed"));
                };
                if id > first && !follows(&current, shared, suffix, &mut scratch) {
                    return Err(format!("term {id} is not greater than term {}", id - 1));
                }
                current.truncate(shared);
                current.extend_from_slice(suffix);
                if let Err(e) = crate::term::decode_term(&current) {
                    return Err(format!("term {id}: {e}"));
                }
            }
            if reader.position != end {
                return Err(format!(
                    "bucket {bucket} ends at byte {}, the next starts at {end}",
                    reader.position
                ));
            }
            if bucket + 1 < self.buckets.len() {
                let next = self
                    .head(bucket + 1)
                    .ok_or_else(|| format!("bucket {} has a malformed head", bucket + 1))?;
                if next <= current.as_slice() {
                    return Err(format!(
                        "bucket {} starts with a term not greater than term {}",
                        bucket + 1,
                        last - 1
                    ));
                }
            }
        }
        Ok(())
    }

    /// Number of front-coding buckets.
    pub fn bucket_count(&self) -> usize {
        self.buckets.len()
    }

    /// The stored parts of the sorted part: encoded bytes, bucket offsets, number of terms.
    pub fn parts(&self) -> (&Column<u8>, &Column<u64>, u64) {
        (&self.data, &self.buckets, self.len)
    }

    /// Number of terms, appended ones included: the bound below which every id is a
    /// term's. For a share of a cluster's dictionary, the bound of the cluster's ids
    /// ([`Dictionary::local_len`] counts the share's own terms).
    pub fn len(&self) -> u64 {
        match &self.share {
            Some(share) => share.id_bound,
            None => self.local_len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes used, heap or mapped.
    pub fn data_bytes(&self) -> usize {
        self.data.data_bytes()
            + self.buckets.data_bytes()
            + self.appended.terms.iter().map(|t| t.len()).sum::<usize>()
    }

    /// Writes the encoding of term `id` into `out` (cleared first). False if `id` is not a
    /// term of this dictionary.
    pub fn term_into(&self, id: Id, out: &mut Vec<u8>) -> bool {
        out.clear();
        let Some(id) = self.local(id) else {
            return self.foreign_term_into(id, out);
        };
        if id >= self.len {
            return match self.appended_term(id) {
                Some(term) => {
                    out.extend_from_slice(term);
                    true
                }
                None => false,
            };
        }
        let mut reader = BucketReader::new(&self.data, self.buckets[(id / BUCKET as u64) as usize]);
        if !reader.advance((id % BUCKET as u64) as usize + 1, out) {
            out.clear();
            return false;
        }
        true
    }

    /// The encoding of term `id`.
    pub fn term(&self, id: Id) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.term_into(id, &mut out).then_some(out)
    }

    /// [`Dictionary::lookup`], answered from the terms found recently when `term` is one
    /// of them: for the constants of queries, which come back again and again.
    pub fn lookup_remembered(&self, term: &[u8]) -> Option<Id> {
        let hash = self.remembered.hash(term);
        if let Some(id) = self.remembered.get(term, hash) {
            return Some(id);
        }
        match self.lookup_sorted(term) {
            Some(id) => {
                self.remembered.insert(term, hash, id);
                Some(id)
            }
            None => self.lookup_appended(term).or_else(|| self.foreign_id(term)),
        }
    }

    /// The id of the encoded term `term`, if present.
    pub fn lookup(&self, term: &[u8]) -> Option<Id> {
        self.lookup_sorted(term)
            .or_else(|| self.lookup_appended(term))
            .or_else(|| self.foreign_id(term))
    }

    fn lookup_sorted(&self, term: &[u8]) -> Option<Id> {
        match self.filter.filter.get() {
            Some(_) => self.lookup_sorted_hashed(term, self.appended.ids.hash(term)),
            None => self.search_sorted(term),
        }
    }

    /// [`Dictionary::lookup_sorted`] of a term whose hash (as the appended terms' index
    /// keys it) is `hash`: the filter first, once built.
    fn lookup_sorted_hashed(&self, term: &[u8], hash: u64) -> Option<Id> {
        if let Some(filter) = self.filter.filter.get() {
            if !filter.may_contain(hash) {
                return None;
            }
        }
        self.search_sorted(term)
    }

    /// The id of `term` in the sorted part, by binary search.
    fn search_sorted(&self, term: &[u8]) -> Option<Id> {
        // Last bucket whose head is <= term.
        let (mut low, mut high) = self.fences().narrow(self, term, true);
        while low < high {
            let mid = (low + high) / 2;
            if self.head(mid)? <= term {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        let bucket = low.checked_sub(1)?;
        match self.place_in_bucket(bucket, term) {
            (id, true) => self.global(id),
            (_, false) => None,
        }
    }

    /// The number of terms of the sorted part whose encoding is below `term`: the base id
    /// `term` has or would have (its rank among the sorted terms). Terms of one kind occupy
    /// one range of base ids, so the ranks of a kind's smallest encoding and of the next
    /// kind's give that range, and the ranks of a prefix and of its successor give the base
    /// ids of the terms starting with it. Logarithmic: bucket heads, then one bucket.
    pub fn rank(&self, term: &[u8]) -> u64 {
        // First bucket whose head is >= term: the answer lies in the bucket before it.
        let (mut low, mut high) = self.fences().narrow(self, term, false);
        while low < high {
            let mid = (low + high) / 2;
            match self.head(mid) {
                Some(head) if head < term => low = mid + 1,
                _ => high = mid,
            }
        }
        let Some(bucket) = low.checked_sub(1) else {
            return 0;
        };
        self.place_in_bucket(bucket, term).0
    }

    /// Where `term` falls in bucket `bucket` of the sorted part: the id of the bucket's
    /// first string not below `term` (the bucket's end when every string is below), and
    /// whether that string is `term`. A string that does not decode ends the scan there, as
    /// not equal.
    ///
    /// The strings are compared as they are stored, never rebuilt: each is its
    /// predecessor's first `shared` bytes and a suffix, and the scan keeps `matched`, the
    /// bytes the predecessor (below `term`) shares with `term`. A string that keeps more
    /// than `matched` of its predecessor repeats the byte where that one fell below `term`,
    /// so it is below too; any other starts with `term`'s first `shared` bytes, so only its
    /// suffix is compared, with the rest of `term`. A lookup of a query's constant scans a
    /// bucket this way without copying each string into a buffer and comparing it whole.
    fn place_in_bucket(&self, bucket: usize, term: &[u8]) -> (u64, bool) {
        let mut reader = BucketReader::new(&self.data, self.buckets[bucket]);
        let first = bucket as u64 * BUCKET as u64;
        let end = (first + BUCKET as u64).min(self.len);
        let mut matched = 0;
        let mut previous_len = 0;
        for id in first..end {
            let Some((shared, suffix)) = reader.next_entry(previous_len) else {
                return (id, false);
            };
            previous_len = shared + suffix.len();
            if shared > matched {
                continue;
            }
            let rest = &term[shared..];
            let common = common_prefix(suffix, rest);
            matched = shared + common;
            match (suffix.get(common), rest.get(common)) {
                (None, None) => return (id, true),
                (Some(_), None) => return (id, false),
                (Some(stored), Some(wanted)) if stored > wanted => return (id, false),
                _ => {}
            }
        }
        (end, false)
    }

    /// Every term in id order: `f(id, encoded_term)` (a share's own terms).
    pub fn for_each(&self, mut f: impl FnMut(u64, &[u8])) {
        if !self.for_each_sorted(&mut f) {
            return;
        }
        for (i, term) in self.appended.terms.iter().enumerate() {
            f(
                self.global(self.len + i as u64).map_or(u64::MAX, u64::from),
                term,
            );
        }
    }

    /// Every term of the sorted part in id order: `f(id, encoded_term)`; `false` if a
    /// bucket did not decode (the walk stops there).
    fn for_each_sorted(&self, mut f: impl FnMut(u64, &[u8])) -> bool {
        let mut current = Vec::new();
        for (bucket, &offset) in self.buckets.iter().enumerate() {
            let mut reader = BucketReader::new(&self.data, offset);
            let first = bucket as u64 * BUCKET as u64;
            for id in first..(first + BUCKET as u64).min(self.len) {
                if !reader.next_into(&mut current) {
                    return false;
                }
                f(self.global(id).map_or(u64::MAX, u64::from), &current);
            }
        }
        true
    }

    /// The sorted part's fences, built on the first search.
    fn fences(&self) -> &Fences {
        self.fences
            .get_or_init(|| Fences::build(self, fences::MAX_FENCES, fences::FENCE_BYTES))
    }

    fn head(&self, bucket: usize) -> Option<&[u8]> {
        let mut position = self.buckets[bucket] as usize;
        let length = read_varint(&self.data, &mut position)? as usize;
        self.data.get(position..position.checked_add(length)?)
    }
}

/// Whether the term stored as `shared` bytes of `previous` and then `suffix` is greater
/// than `previous`. A writer shares all the bytes the two terms have in common, so the
/// first byte of the suffix tells (none: the term is a prefix of the previous one, or
/// equal to it); only an entry that shares fewer is compared whole, in `scratch`.
fn follows(previous: &[u8], shared: usize, suffix: &[u8], scratch: &mut Vec<u8>) -> bool {
    match (suffix.first(), previous.get(shared)) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(&next), Some(&was)) if next != was => next > was,
        _ => {
            scratch.clear();
            scratch.extend_from_slice(&previous[..shared]);
            scratch.extend_from_slice(suffix);
            scratch.as_slice() > previous
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The order check of a stored entry agrees with comparing the terms whole, for
        /// any previous term, any count of shared bytes (the most a writer shares, or
        /// fewer, as a crafted file may) and any suffix.
        #[test]
        fn an_entry_follows_its_previous_term_as_the_whole_terms_compare(
            previous in proptest::collection::vec(0u8..4, 0..6),
            shared in 0usize..7,
            suffix in proptest::collection::vec(0u8..4, 0..4),
        ) {
            let shared = shared.min(previous.len());
            let mut term = previous[..shared].to_vec();
            term.extend_from_slice(&suffix);
            let mut scratch = Vec::new();
            prop_assert_eq!(follows(&previous, shared, &suffix, &mut scratch), term > previous);
        }
    }

    #[test]
    fn forked_versions_keep_their_own_appended_ids() {
        let base = Dictionary::from_sorted([b"http://x/0".to_vec(), b"http://x/1".to_vec()]);
        let (a, b, c) = (b"http://x/a", b"http://x/b", b"http://x/c");
        // Two forks of one base give the same terms other ids.
        let mut left = base.clone();
        let mut right = base.clone();
        assert_eq!(left.append(a).unwrap(), 2);
        assert_eq!(left.append(b).unwrap(), 3);
        assert_eq!(right.append(b).unwrap(), 2);
        assert_eq!(right.append(c).unwrap(), 3);
        assert_eq!(right.append(a).unwrap(), 4);
        // A fork of a fork, then a term appended again (a failed transaction's retry).
        let mut later = left.clone();
        assert_eq!(later.append(c).unwrap(), 4);
        assert_eq!(left.append(c).unwrap(), 4);
        for (dictionary, expected) in [
            (&base, [None, None, None]),
            (&left, [Some(2), Some(3), Some(4)]),
            (&right, [Some(4), Some(2), Some(3)]),
            (&later, [Some(2), Some(3), Some(4)]),
        ] {
            for (term, id) in [&a[..], &b[..], &c[..]].into_iter().zip(expected) {
                assert_eq!(dictionary.lookup(term), id);
                assert_eq!(dictionary.lookup_remembered(term), id);
                let mut next = dictionary.clone();
                assert_eq!(
                    next.append(term).unwrap(),
                    id.unwrap_or(dictionary.len() as Id)
                );
            }
        }
        // A batch of appended terms is found like single ones.
        let mut batch = right.clone();
        let terms: Vec<Arc<[u8]>> = (0..5000)
            .map(|i| format!("http://x/n{i}").as_bytes().into())
            .collect();
        let first = batch.append_absent_batch(&terms).unwrap();
        assert_eq!(first, 5);
        for (i, term) in terms.iter().enumerate() {
            assert_eq!(batch.lookup(term), Some(first + i as Id));
            assert_eq!(right.lookup(term), None);
        }
    }

    /// A share numbers its `p`-th term `p × count + index`: with index 2^31 - 1 of 2^31,
    /// its second term would be `u32::MAX`, the id reserved for "no term".
    #[test]
    #[cfg(not(feature = "wide-ids"))]
    fn appends_stop_before_the_reserved_largest_id() {
        use crate::id::IdsExhausted;
        let high = || {
            Dictionary::from_sorted(Vec::<Vec<u8>>::new()).into_share(
                (1 << 31) - 1,
                1 << 31,
                crate::MAX_TERMS,
            )
        };
        let mut one_by_one = high();
        assert_eq!(one_by_one.append(b"a"), Ok((1 << 31) - 1));
        assert_eq!(one_by_one.append(b"a"), Ok((1 << 31) - 1));
        assert_eq!(one_by_one.append(b"b"), Err(IdsExhausted));
        assert_eq!(one_by_one.lookup(b"b"), None);
        assert_eq!(one_by_one.local_len(), 1);
        // A batch that does not fit whole appends nothing.
        let mut batch = high();
        let terms: Vec<Arc<[u8]>> = vec![b"a".as_slice().into(), b"b".as_slice().into()];
        assert_eq!(batch.append_absent_batch(&terms), Err(IdsExhausted));
        assert_eq!(batch.local_len(), 0);
        assert_eq!(batch.lookup(b"a"), None);
        assert_eq!(batch.append_absent_batch(&terms[..1]), Ok((1 << 31) - 1));
    }

    #[test]
    fn a_thread_remembers_each_dictionarys_own_ids() {
        let first = Dictionary::from_sorted(&[b"a".to_vec(), b"b".to_vec()]);
        let second = Dictionary::from_sorted(&[b"b".to_vec(), b"c".to_vec()]);
        for _ in 0..3 {
            assert_eq!(first.lookup_remembered(b"b"), Some(1));
            assert_eq!(second.lookup_remembered(b"b"), Some(0));
            assert_eq!(second.clone().lookup_remembered(b"b"), Some(0));
        }
        // Found by another thread first, then by this one.
        let third = Dictionary::from_sorted(&[b"x".to_vec(), b"y".to_vec()]);
        std::thread::scope(|scope| {
            scope.spawn(|| assert_eq!(third.lookup_remembered(b"y"), Some(1)));
        });
        assert_eq!(third.lookup_remembered(b"y"), Some(1));
        assert_eq!(third.lookup_remembered(b"z"), None);
    }

    #[test]
    fn remembered_lookups_agree_with_plain_ones_in_every_version() {
        // More terms than a thread's slots, so that terms take over each other's slots.
        let terms: Vec<Vec<u8>> = (0..4 * remembered::LOCAL + 1000)
            .map(|i| format!("http://x/{i:06}").into_bytes())
            .collect();
        let old = Dictionary::from_sorted(&terms);
        let mut new = old.clone();
        let added = b"http://x/added".to_vec();
        let added_id = new.append(&added).unwrap();
        let absent = b"http://x/absent".to_vec();
        for round in 0..2 {
            for (i, term) in terms.iter().enumerate().rev() {
                for dictionary in [&old, &new] {
                    assert_eq!(dictionary.lookup_remembered(term), Some(i as Id), "{round}");
                }
            }
        }
        assert_eq!(new.lookup_remembered(&added), Some(added_id));
        assert_eq!(new.lookup_remembered(&added), Some(added_id));
        // Found by the new version, the appended term stays unknown to the old one.
        assert_eq!(old.lookup_remembered(&added), None);
        for dictionary in [&old, &new] {
            assert_eq!(dictionary.lookup_remembered(&absent), None);
        }
    }

    proptest! {
        #[test]
        fn lookups_agree_with_a_sorted_vector(mut terms in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..12), 0..200), probe in proptest::collection::vec(any::<u8>(), 0..12)) {
            terms.sort();
            terms.dedup();
            let dictionary = Dictionary::from_sorted(&terms);
            prop_assert_eq!(dictionary.len(), terms.len() as u64);
            for (id, term) in terms.iter().enumerate() {
                let stored = dictionary.term(id as Id);
                prop_assert_eq!(stored.as_ref(), Some(term));
                prop_assert_eq!(dictionary.lookup(term), Some(id as Id));
            }
            prop_assert_eq!(dictionary.lookup(&probe), terms.binary_search(&probe).ok().map(|i| i as Id));
            prop_assert_eq!(dictionary.term(terms.len() as Id), None);
            // The rank of a term is the number of sorted terms below it.
            let below = terms.partition_point(|t| t < &probe) as u64;
            prop_assert_eq!(dictionary.rank(&probe), below);
            for (id, term) in terms.iter().enumerate() {
                prop_assert_eq!(dictionary.rank(term), id as u64);
            }
            let mut seen = Vec::new();
            dictionary.for_each(|_, t| seen.push(t.to_vec()));
            prop_assert_eq!(&seen, &terms);
            // A cursor agrees with random-order lookups, forwards, backwards and repeated.
            let mut cursor = dictionary.cursor();
            let order: Vec<usize> = (0..terms.len()).chain((0..terms.len()).rev()).chain((0..terms.len()).step_by(3)).collect();
            for i in order {
                prop_assert_eq!(cursor.term(i as Id), Some(terms[i].as_slice()));
                prop_assert_eq!(cursor.term(i as Id), Some(terms[i].as_slice()));
            }
            prop_assert_eq!(cursor.term(terms.len() as Id), None);
        }

        /// Terms over three letters share long prefixes, as IRIs do, so a bucket's scan
        /// meets every case of front coding: strings that keep more of their predecessor
        /// than it shares with the probe, less, and as much; prefixes of the probe and
        /// strings the probe is a prefix of.
        #[test]
        fn bucket_scans_agree_with_a_sorted_vector_on_shared_prefixes(
            mut terms in proptest::collection::vec(proptest::collection::vec(b'a'..=b'c', 0..8), 0..300),
            probes in proptest::collection::vec(proptest::collection::vec(b'a'..=b'd', 0..9), 0..40),
            visits in proptest::collection::vec(0..300usize, 0..60),
        ) {
            terms.sort();
            terms.dedup();
            let dictionary = Dictionary::from_sorted(&terms);
            // Decoding puts each term together from the suffixes of the entries before it
            // in its bucket: every term alone, then a cursor going forward by steps of any
            // length, back, and in place.
            for (id, term) in terms.iter().enumerate() {
                prop_assert_eq!(dictionary.term(id as Id), Some(term.clone()), "term {}", id);
            }
            let mut cursor = dictionary.cursor();
            for visit in visits.into_iter().filter(|&v| v < terms.len()) {
                prop_assert_eq!(cursor.term(visit as Id), Some(terms[visit].as_slice()), "visit {}", visit);
            }
            // Each term, the term cut by one byte, and the term followed by each letter.
            let near = terms.iter().flat_map(|term| {
                let mut near = vec![term.clone(), term[..term.len().saturating_sub(1)].to_vec()];
                near.extend((b'a'..=b'd').map(|letter| [term.as_slice(), &[letter]].concat()));
                near
            });
            for probe in near.chain(probes) {
                prop_assert_eq!(
                    dictionary.lookup(&probe),
                    terms.binary_search(&probe).ok().map(|i| i as Id),
                    "lookup of {:?}", probe
                );
                prop_assert_eq!(
                    dictionary.rank(&probe),
                    terms.partition_point(|t| t < &probe) as u64,
                    "rank of {:?}", probe
                );
            }
        }
    }
}
