//! A sorted run of distinct terms: the dictionary's front-coded layout (buckets of
//! [`BUCKET`] terms, each bucket's first term whole, the others as the length of the
//! prefix shared with the previous term and the rest) kept in plain vectors.
//!
//! A bulk load seals each parsed chunk into one run and merges the runs into the store's
//! dictionary (on every core, `parallel_merge.rs`; a cluster's owner merges what it is sent
//! with [`merge_runs`]). A merge reads every run once, in order, giving the pages it has
//! read back to the system ([`RunDrain`]), so the runs shrink while the dictionary grows and
//! the two never peak together (with long literals, such as BSBM's reviews, they are each
//! as large as the store's dictionary).

use super::{BucketReader, DictionaryBuilder, BUCKET};

/// Distinct terms in ascending order, front-coded; a term's rank is its index.
#[derive(Debug, Default)]
pub struct SortedRun {
    pub(super) data: Vec<u8>,
    /// Offset in `data` of each bucket.
    pub(super) buckets: Vec<u64>,
    pub(super) len: u64,
}

/// Bytes read between two releases of their pages.
const RELEASE_BYTES: usize = 1 << 20;

impl DictionaryBuilder {
    /// The terms pushed, as a run (see [`SortedRun`]) rather than a dictionary.
    pub fn finish_run(mut self) -> SortedRun {
        self.data.shrink_to_fit();
        self.buckets.shrink_to_fit();
        SortedRun {
            data: self.data,
            buckets: self.buckets,
            len: self.len,
        }
    }
}

impl SortedRun {
    /// A copy of the sorted part of `dictionary` as a run: a term's rank is its id. A load on
    /// top of a store merges its terms so, without sorting them again.
    pub fn of_dictionary(dictionary: &super::Dictionary) -> SortedRun {
        let (data, buckets, len) = dictionary.parts();
        SortedRun {
            data: data.to_vec(),
            buckets: buckets.to_vec(),
            len,
        }
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held.
    pub fn data_bytes(&self) -> usize {
        self.data.len() + self.buckets.len() * 8
    }

    /// The term of rank `rank`, decoded from its bucket.
    pub fn term(&self, rank: u64) -> Option<Vec<u8>> {
        let bucket = *self.buckets.get((rank / BUCKET as u64) as usize)?;
        let mut reader = BucketReader::new(&self.data, bucket);
        let mut out = Vec::new();
        if !reader.advance((rank % BUCKET as u64) as usize + 1, &mut out) {
            return None;
        }
        (rank < self.len).then_some(out)
    }

    /// Every term in rank order: `f(rank, term)`.
    pub fn for_each(&self, mut f: impl FnMut(u64, &[u8])) {
        let mut reader = RunReader::default();
        let mut rank = 0;
        while let Some(term) = reader.next(self) {
            f(rank, term);
            rank += 1;
        }
    }

    /// Reads the run once, in order, giving back the pages read as it goes: afterwards
    /// the run's terms are unspecified, and only its length is kept.
    pub fn drain(&mut self) -> RunDrain<'_> {
        RunDrain {
            run: self,
            reader: RunReader::default(),
            released: 0,
        }
    }
}

/// A reading of a [`SortedRun`] in rank order that releases what it has read.
pub struct RunDrain<'a> {
    run: &'a mut SortedRun,
    reader: RunReader,
    released: usize,
}

impl RunDrain<'_> {
    /// The next term, or `None` after the last.
    pub fn next_term(&mut self) -> Option<&[u8]> {
        // Whole buckets behind the reader are not read again.
        let behind = self.reader.position;
        if behind - self.released >= RELEASE_BYTES {
            crate::memory::release_pages(&mut self.run.data[self.released..behind]);
            self.released = behind;
        }
        self.reader.next(self.run)
    }
}

/// A reading of distinct terms in ascending order, one of the inputs of a k-way merge.
pub(super) trait TermSource {
    /// The next term, or `None` after the last.
    fn next_term(&mut self) -> Option<&[u8]>;
}

impl TermSource for RunDrain<'_> {
    fn next_term(&mut self) -> Option<&[u8]> {
        RunDrain::next_term(self)
    }
}

/// Visits every term of `runs` in ascending order, ties in run order, as `visit(term, run,
/// rank)`, `term` given only at the first occurrence of each distinct term (`None` where
/// an earlier run held it too): one k-way merge, each run drained as it is read (see
/// [`SortedRun::drain`]). The first error `visit` returns stops the walk.
pub fn merge_runs<E>(
    runs: &mut [&mut SortedRun],
    visit: impl FnMut(Option<&[u8]>, usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    let mut drains: Vec<RunDrain<'_>> = runs.iter_mut().map(|run| run.drain()).collect();
    merge_sources(&mut drains, visit)
}

/// [`merge_runs`] over any sources: `visit(term, source, rank)`.
pub(super) fn merge_sources<E>(
    sources: &mut [impl TermSource],
    mut visit: impl FnMut(Option<&[u8]>, usize, u64) -> Result<(), E>,
) -> Result<(), E> {
    /// The smallest term not yet visited of one source; the heap's top is the least.
    #[derive(PartialEq, Eq)]
    struct Head {
        term: Vec<u8>,
        source: usize,
        rank: u64,
    }
    impl Ord for Head {
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            other
                .term
                .cmp(&self.term)
                .then_with(|| other.source.cmp(&self.source))
        }
    }
    impl PartialOrd for Head {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    let mut heap = std::collections::BinaryHeap::with_capacity(sources.len());
    for (source, reader) in sources.iter_mut().enumerate() {
        if let Some(term) = reader.next_term() {
            heap.push(Head {
                term: term.to_vec(),
                source,
                rank: 0,
            });
        }
    }
    let mut previous: Option<Vec<u8>> = None;
    while let Some(mut head) = heap.peek_mut() {
        let repeated = previous.as_deref() == Some(&head.term[..]);
        if !repeated {
            let last = previous.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(&head.term);
        }
        visit(
            (!repeated).then_some(&head.term[..]),
            head.source,
            head.rank,
        )?;
        match sources[head.source].next_term() {
            Some(term) => {
                head.term.clear();
                head.term.extend_from_slice(term);
                head.rank += 1;
            }
            None => {
                std::collections::binary_heap::PeekMut::pop(head);
            }
        }
    }
    Ok(())
}

/// The state of a sequential reading: the next rank, where its bytes start, the last term.
#[derive(Default)]
pub(super) struct RunReader {
    pub(super) next: u64,
    pub(super) position: usize,
    pub(super) current: Vec<u8>,
}

impl RunReader {
    fn next<'r>(&'r mut self, run: &SortedRun) -> Option<&'r [u8]> {
        self.next_in(&run.data, run.len)
    }

    /// The next term of front-coded `data`, whose buckets start at the multiples of
    /// [`BUCKET`] among ranks; `None` at rank `end` (and after, or where `data` does not
    /// decode). `position` counts from the start of `data`, which may begin inside a
    /// bucket: `current` then holds the term before the next one.
    pub(super) fn next_in<'r>(&'r mut self, data: &[u8], end: u64) -> Option<&'r [u8]> {
        if self.next >= end {
            return None;
        }
        let mut reader = BucketReader {
            data,
            position: self.position,
            first: self.next.is_multiple_of(BUCKET as u64),
        };
        if !reader.next_into(&mut self.current) {
            self.next = end;
            return None;
        }
        self.position = reader.position;
        self.next += 1;
        Some(&self.current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(n: usize) -> Vec<Vec<u8>> {
        let mut terms: Vec<Vec<u8>> = (0..n)
            .map(|i| format!("http://example.org/{}/{i}", i % 7).into_bytes())
            .collect();
        terms.sort();
        terms
    }

    #[test]
    fn a_run_reads_back_by_rank_in_order_and_drained() {
        let terms = terms(100_000);
        let mut builder = DictionaryBuilder::new();
        terms.iter().for_each(|t| {
            builder.push(t);
        });
        let mut run = builder.finish_run();
        assert_eq!(run.len(), terms.len() as u64);
        for rank in [0, 1, 15, 16, 17, 99_999] {
            assert_eq!(run.term(rank).as_ref(), Some(&terms[rank as usize]));
        }
        assert_eq!(run.term(100_000), None);
        let mut seen = Vec::new();
        run.for_each(|rank, term| seen.push((rank, term.to_vec())));
        assert!(seen
            .iter()
            .enumerate()
            .all(|(i, (r, t))| *r == i as u64 && *t == terms[i]));
        let mut drain = run.drain();
        let mut drained = 0;
        while let Some(term) = drain.next_term() {
            assert_eq!(term, &terms[drained][..]);
            drained += 1;
        }
        assert_eq!(drained, terms.len());
    }

    #[test]
    fn runs_merge_in_term_order_with_ties_in_run_order() {
        let all = terms(3_000);
        let mut runs: Vec<SortedRun> = (0..3)
            .map(|r| {
                let mut builder = DictionaryBuilder::new();
                // Run r holds every term whose index is not r modulo 3, so each term is
                // in two runs.
                all.iter()
                    .enumerate()
                    .filter(|(i, _)| i % 3 != r)
                    .for_each(|(_, t)| {
                        builder.push(t);
                    });
                builder.finish_run()
            })
            .collect();
        let mut seen: Vec<(Vec<u8>, usize, u64)> = Vec::new();
        let mut given = Vec::new();
        let mut refs: Vec<&mut SortedRun> = runs.iter_mut().collect();
        merge_runs::<()>(&mut refs, |term, run, rank| {
            given.push(term.is_some());
            let term = term.map_or_else(|| seen.last().unwrap().0.clone(), <[u8]>::to_vec);
            seen.push((term, run, rank));
            Ok(())
        })
        .unwrap();
        // Each term is given at its first occurrence only (every term is in two runs).
        assert!(given.iter().enumerate().all(|(i, &g)| g == (i % 2 == 0)));
        let mut expected = Vec::new();
        let mut ranks = [0u64; 3];
        for (i, term) in all.iter().enumerate() {
            for (run, rank) in ranks.iter_mut().enumerate() {
                if i % 3 != run {
                    expected.push((term.clone(), run, *rank));
                    *rank += 1;
                }
            }
        }
        assert_eq!(seen, expected);
        // An error stops the walk.
        let mut builder = DictionaryBuilder::new();
        all.iter().for_each(|t| {
            builder.push(t);
        });
        let mut run = builder.finish_run();
        let mut visits = 0;
        let stopped = merge_runs(&mut [&mut run], |_, _, _| {
            visits += 1;
            if visits == 5 {
                Err("stop")
            } else {
                Ok(())
            }
        });
        assert_eq!((stopped, visits), (Err("stop"), 5));
    }

    #[test]
    fn an_empty_run_yields_nothing() {
        let mut run = DictionaryBuilder::new().finish_run();
        assert!(run.is_empty());
        assert_eq!(run.term(0), None);
        assert!(run.drain().next_term().is_none());
    }
}
