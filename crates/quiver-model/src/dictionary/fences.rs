//! Fences: a copy of every `step`-th bucket head, packed together, that narrows a binary
//! search over the sorted part's buckets before it touches their data.
//!
//! A term's lookup binary-searches the bucket heads ([`super::Dictionary::search_sorted`]),
//! and each probe reads a head where its bucket lies in the encoded data: a cache miss at
//! every probe below the first few, some fifteen misses per lookup on a few million terms.
//! On the emulator's light queries that search was the largest single cost of the whole
//! query path, as every constant of a template is looked up when a query is prepared and
//! most of its constants are new. The fences hold at most [`MAX_FENCES`] heads, each cut
//! to its first [`FENCE_BYTES`] bytes, next to each other (at most 8 MiB, a few MiB for
//! IRIs), so the first levels of the search stay in the caches; only the last
//! `log2(step)` probes read the data. Their size does not grow with the dictionary: on
//! LUBM-100 (206 K buckets) `step` is 4, on LUBM-10240 (21 M buckets) 512.
//!
//! A cut fence decides a comparison unless the term starts with all of it; then the head
//! itself is read, as without fences (long literals sharing their first 128 bytes).
//!
//! Built once per sorted part, on its first search (shared by the clones that share that
//! part), from [`MAX_FENCES`] head reads.

use std::cmp::Ordering;

use super::Dictionary;

/// At most this many heads are copied.
pub(super) const MAX_FENCES: usize = 1 << 16;

/// The bytes of a head a fence keeps at most: an IRI whole, a long literal's start.
pub(super) const FENCE_BYTES: usize = 128;

/// Every `step`-th bucket head, packed.
#[derive(Debug, Default)]
pub(super) struct Fences {
    /// Buckets between two fences (a power of two); 0 when there are none.
    step: usize,
    /// The heads of buckets `0, step, 2·step, …`, each cut to its first `FENCE_BYTES`,
    /// one after the other.
    bytes: Vec<u8>,
    /// Per fence, where it ends in `bytes` (fence `i` spans from fence `i-1`'s end), and
    /// in the top bit [`CUT`] whether it is a head cut short: one load per probe, not two
    /// (the deep probes of a search read these from the last-level cache).
    bounds: Vec<u32>,
}

/// The bit of a bound that marks a fence cut short.
const CUT: u32 = 1 << 31;

impl Fences {
    /// At most `max` fences of `dictionary`'s sorted part, each at most `keep` bytes
    /// ([`MAX_FENCES`] and [`FENCE_BYTES`] but in tests); none (every search reads the
    /// data) when a head cannot be read, which [`Dictionary::validate_buckets`] reports.
    pub(super) fn build(dictionary: &Dictionary, max: usize, keep: usize) -> Self {
        let buckets = dictionary.buckets.len();
        if buckets == 0 || max == 0 {
            return Self::default();
        }
        let step = buckets.div_ceil(max).next_power_of_two();
        let count = buckets.div_ceil(step);
        let mut fences = Self {
            step,
            bytes: Vec::new(),
            bounds: Vec::with_capacity(count),
        };
        for bucket in (0..buckets).step_by(step) {
            let Some(head) = dictionary.head(bucket) else {
                return Self::default();
            };
            let kept = &head[..head.len().min(keep)];
            fences.bytes.extend_from_slice(kept);
            // At most MAX_FENCES × FENCE_BYTES (8 MiB) in all, far below the cut bit.
            let end = u32::try_from(fences.bytes.len())
                .ok()
                .filter(|&end| end < CUT);
            let Some(end) = end else {
                return Self::default();
            };
            let cut = if kept.len() < head.len() { CUT } else { 0 };
            fences.bounds.push(end | cut);
        }
        fences.bytes.shrink_to_fit();
        fences
    }

    /// Fence `i`'s bytes, and whether it is a head cut short.
    fn fence(&self, i: usize) -> (&[u8], bool) {
        let start = match i {
            0 => 0,
            _ => (self.bounds[i - 1] & !CUT) as usize,
        };
        let bound = self.bounds[i];
        (
            &self.bytes[start..(bound & !CUT) as usize],
            bound & CUT != 0,
        )
    }

    /// Hints the CPU to fetch what the next two levels of the search over `low..high`
    /// read, whichever way this level goes: the next probes' bytes (their bounds were
    /// fetched a level ago) and the bounds of the probes after them. Their loads then
    /// overlap this level's comparison instead of following it.
    #[inline]
    fn prefetch_ahead(&self, low: usize, mid: usize, high: usize) {
        for (low, high) in [(low, mid), (mid + 1, high)] {
            if low >= high {
                continue;
            }
            let next = (low + high) / 2;
            let start = match next {
                0 => 0,
                _ => (self.bounds[next - 1] & !CUT) as usize,
            };
            crate::prefetch::prefetch_read(self.bytes.as_ptr().wrapping_add(start));
            let bounds = self.bounds.as_ptr();
            crate::prefetch::prefetch_read(bounds.wrapping_add((low + next) / 2));
            crate::prefetch::prefetch_read(bounds.wrapping_add((next + 1 + high) / 2));
        }
    }

    /// The range of buckets `low..high` of `dictionary` where the first head past `term`
    /// lies (past: above it, or equal to it unless `equal_before`), the heads before it
    /// being at most `term`: the search then continues over those buckets alone. Every
    /// bucket when there are no fences.
    pub(super) fn narrow(
        &self,
        dictionary: &Dictionary,
        term: &[u8],
        equal_before: bool,
    ) -> (usize, usize) {
        let buckets = dictionary.buckets.len();
        if self.step == 0 {
            return (0, buckets);
        }
        let past = |order: Ordering| match order {
            Ordering::Less => false,
            Ordering::Equal => !equal_before,
            Ordering::Greater => true,
        };
        // The first fence past `term`.
        let (mut low, mut high) = (0usize, self.bounds.len());
        while low < high {
            let mid = (low + high) / 2;
            self.prefetch_ahead(low, mid, high);
            let (fence, cut) = self.fence(mid);
            // A cut fence orders its head as it orders `term`, unless `term` starts with
            // all of it: a head that goes on may be above or below `term`.
            let is_past = match cut && term.starts_with(fence) {
                false => past(fence.cmp(term)),
                true => dictionary
                    .head(mid * self.step)
                    .is_none_or(|head| past(head.cmp(term))),
            };
            if is_past {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        // Fence `low - 1`'s bucket is not past `term`; fence `low`'s is.
        let first = match low {
            0 => 0,
            _ => (low - 1) * self.step + 1,
        };
        (first, (low * self.step).min(buckets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(count: u32) -> Vec<String> {
        (0..count)
            .map(|i| format!("http://example.org/{:07}", i * 3))
            .collect()
    }

    /// The range a fence search gives holds the first head of every split: at every step
    /// from one bucket per fence to all buckets under one fence, with fences whole or cut
    /// (to fewer bytes than every term shares, or to part of the numbers), for both
    /// searches (the first head above the term, the first at or above it), at every head,
    /// between heads and at prefixes of them.
    #[test]
    fn a_fenced_range_holds_the_split() {
        let dictionary = Dictionary::from_sorted(terms(5_000));
        let buckets = dictionary.buckets.len();
        let heads: Vec<Vec<u8>> = (0..buckets)
            .map(|b| dictionary.head(b).unwrap().to_vec())
            .collect();
        for (max, keep) in [1, 3, 7, 40, 313, MAX_FENCES]
            .into_iter()
            .flat_map(|max| [4, 21, 23, FENCE_BYTES].map(|keep| (max, keep)))
        {
            let fences = Fences::build(&dictionary, max, keep);
            assert!(fences.bounds.len() <= max, "{max}");
            let cut = (0..fences.bounds.len()).any(|i| fences.fence(i).1);
            assert_eq!(cut, keep < 26, "{keep}");
            // Whole terms, and prefixes of them (below every term they start).
            let probes = (0..15_010u32).step_by(5).flat_map(|probe| {
                let term = format!("http://example.org/{probe:07}").into_bytes();
                (0..3).map(move |cut| term[..term.len() - cut * 2].to_vec())
            });
            for term in probes {
                for equal_before in [true, false] {
                    let split = match equal_before {
                        true => heads.partition_point(|h| h <= &term),
                        false => heads.partition_point(|h| h < &term),
                    };
                    let (low, high) = fences.narrow(&dictionary, &term, equal_before);
                    let text = String::from_utf8_lossy(&term);
                    assert!(
                        low <= split && split <= high,
                        "{max} {keep} {text}: {low}..{high} {split}"
                    );
                    assert!(high - low <= fences.step, "{max}: {low}..{high}");
                }
            }
        }
        let none = Fences::default().narrow(&dictionary, b"x", true);
        assert_eq!(none, (0, buckets), "no fences");
    }

    /// Through fences several buckets apart, whole or cut, every term is found at its id,
    /// every absent one is not, and ranks agree with a scan: a fence range one bucket
    /// short would lose the terms of its edge buckets.
    #[test]
    fn fenced_searches_find_what_a_scan_finds() {
        let terms = terms(20_000);
        for keep in [10, 22, FENCE_BYTES] {
            let dictionary = Dictionary::from_sorted(&terms);
            let fences = Fences::build(&dictionary, 50, keep);
            assert_eq!(fences.step, 32, "1250 buckets");
            dictionary.fences.set(fences).unwrap();
            for probe in (0..60_003u32).step_by(7) {
                let term = format!("http://example.org/{probe:07}");
                let expected = (probe % 3 == 0 && probe < 60_000).then_some(u64::from(probe / 3));
                let found = dictionary.lookup(term.as_bytes()).map(u64::from);
                assert_eq!(found, expected, "{keep} {term}");
                let rank = terms.partition_point(|t| t.as_str() < term.as_str()) as u64;
                assert_eq!(dictionary.rank(term.as_bytes()), rank, "{keep} {term}");
            }
            for (id, term) in terms.iter().enumerate() {
                let found = dictionary.lookup(term.as_bytes()).map(u64::from);
                assert_eq!(found, Some(id as u64), "{keep} {term}");
            }
            assert_eq!(dictionary.rank(b""), 0);
            assert_eq!(dictionary.rank(b"\xff"), terms.len() as u64);
        }
    }
}
