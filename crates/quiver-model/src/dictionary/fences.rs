//! Fences: a copy of every `step`-th bucket head, packed together, that narrows a binary
//! search over the sorted part's buckets before it touches their data.
//!
//! A term's lookup binary-searches the bucket heads ([`super::Dictionary::search_sorted`]),
//! and each probe reads a head where its bucket lies in the encoded data: a cache miss at
//! every probe below the first few, some fifteen misses per lookup on a few million terms.
//! On the emulator's light queries that search was the largest single cost of the whole
//! query path, as every constant of a template is looked up when a query is prepared and
//! most of its constants are new. The fences hold at most [`MAX_FENCES`] heads in a few
//! MiB, next to each other, so the first levels of the search stay in the caches; only the
//! last `log2(step)` probes read the data. Their size does not grow with the dictionary:
//! on LUBM-100 (206 K buckets) `step` is 4, on LUBM-10240 (21 M buckets) 512.
//!
//! Built once per sorted part, on its first search (shared by the clones that share that
//! part), from [`MAX_FENCES`] head reads.

use super::Dictionary;

/// At most this many heads are copied: a few MiB of IRIs.
pub(super) const MAX_FENCES: usize = 1 << 16;

/// Every `step`-th bucket head, packed.
#[derive(Debug, Default)]
pub(super) struct Fences {
    /// Buckets between two fences (a power of two); 0 when there are none.
    step: usize,
    /// The heads of buckets `0, step, 2·step, …`, one after the other.
    bytes: Vec<u8>,
    /// Where each fence ends in `bytes` (fence `i` spans `ends[i-1]..ends[i]`).
    ends: Vec<usize>,
}

impl Fences {
    /// At most `max` fences of `dictionary`'s sorted part ([`MAX_FENCES`] but in tests);
    /// none (every search reads the data) when a head cannot be read, which
    /// [`Dictionary::validate_buckets`] reports.
    pub(super) fn build(dictionary: &Dictionary, max: usize) -> Self {
        let buckets = dictionary.buckets.len();
        if buckets == 0 || max == 0 {
            return Self::default();
        }
        let step = buckets.div_ceil(max).next_power_of_two();
        let mut fences = Self {
            step,
            bytes: Vec::new(),
            ends: Vec::with_capacity(buckets.div_ceil(step)),
        };
        for bucket in (0..buckets).step_by(step) {
            let Some(head) = dictionary.head(bucket) else {
                return Self::default();
            };
            fences.bytes.extend_from_slice(head);
            fences.ends.push(fences.bytes.len());
        }
        fences.bytes.shrink_to_fit();
        fences
    }

    fn fence(&self, i: usize) -> &[u8] {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1],
        };
        &self.bytes[start..self.ends[i]]
    }

    /// The range of buckets `low..high` (of `buckets`) where the first head for which
    /// `before` is false lies, for a `before` true on a prefix of the heads: the search
    /// then continues over those buckets alone. Every bucket when there are no fences.
    pub(super) fn narrow(&self, buckets: usize, before: impl Fn(&[u8]) -> bool) -> (usize, usize) {
        if self.step == 0 {
            return (0, buckets);
        }
        // The first fence for which `before` is false.
        let (mut low, mut high) = (0usize, self.ends.len());
        while low < high {
            let mid = (low + high) / 2;
            if before(self.fence(mid)) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        // `before` holds at fence `low - 1`'s bucket and fails at fence `low`'s.
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
    /// from one bucket per fence to all buckets under one fence, for both searches' tests
    /// (a head at most the term, below the term) at every head and between them.
    #[test]
    fn a_fenced_range_holds_the_split() {
        let dictionary = Dictionary::from_sorted(terms(5_000));
        let buckets = dictionary.buckets.len();
        let heads: Vec<Vec<u8>> = (0..buckets)
            .map(|b| dictionary.head(b).unwrap().to_vec())
            .collect();
        for max in [1, 3, 7, 40, 313, MAX_FENCES] {
            let fences = Fences::build(&dictionary, max);
            assert!(fences.ends.len() <= max, "{max}");
            // Whole terms, and prefixes of them (below every term they start).
            let probes = (0..15_010u32).step_by(5).flat_map(|probe| {
                let term = format!("http://example.org/{probe:07}").into_bytes();
                (0..3).map(move |cut| term[..term.len() - cut * 2].to_vec())
            });
            for term in probes {
                for inclusive in [true, false] {
                    let before = |h: &[u8]| match inclusive {
                        true => h <= &term[..],
                        false => h < &term[..],
                    };
                    let split = heads.partition_point(|h| before(h));
                    let (low, high) = fences.narrow(buckets, before);
                    let text = String::from_utf8_lossy(&term);
                    assert!(
                        low <= split && split <= high,
                        "{max} {text}: {low}..{high} {split}"
                    );
                    assert!(high - low <= fences.step, "{max}: {low}..{high}");
                }
            }
        }
        assert_eq!(Fences::default().narrow(10, |_| true), (0, 10), "no fences");
    }

    /// Through fences several buckets apart, every term is found at its id, every absent
    /// one is not, and ranks agree with a scan: a fence range one bucket short would lose
    /// the terms of its edge buckets.
    #[test]
    fn fenced_searches_find_what_a_scan_finds() {
        let terms = terms(20_000);
        let dictionary = Dictionary::from_sorted(&terms);
        dictionary
            .fences
            .set(Fences::build(&dictionary, 50))
            .unwrap();
        assert_eq!(dictionary.fences.get().unwrap().step, 32, "1250 buckets");
        for probe in (0..60_003u32).step_by(7) {
            let term = format!("http://example.org/{probe:07}");
            let expected = (probe % 3 == 0 && probe < 60_000).then_some(u64::from(probe / 3));
            let found = dictionary.lookup(term.as_bytes()).map(u64::from);
            assert_eq!(found, expected, "{term}");
            let rank = terms.partition_point(|t| t.as_str() < term.as_str()) as u64;
            assert_eq!(dictionary.rank(term.as_bytes()), rank, "{term}");
        }
        for (id, term) in terms.iter().enumerate() {
            let found = dictionary.lookup(term.as_bytes()).map(u64::from);
            assert_eq!(found, Some(id as u64), "{term}");
        }
        assert_eq!(dictionary.rank(b""), 0);
        assert_eq!(dictionary.rank(b"\xff"), terms.len() as u64);
    }
}
