//! Decoding many ids in a row: a [`Cursor`] that continues from where it stopped in a
//! bucket (result columns are often sorted), and prefetches that overlap the cache misses
//! of ids spread over the dictionary.

use super::front_coding::BucketReader;
use super::{Dictionary, BUCKET, PREFETCH_DISTANCE};
use crate::id::Id;

impl Dictionary {
    /// A decoding cursor: fast for ids visited in ascending order (see [`Cursor`]).
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            dictionary: self,
            bucket: usize::MAX,
            next: 0,
            reader: BucketReader::new(&[], 0),
            current: Vec::new(),
            appended: None,
        }
    }

    /// Prefetches, for a loop decoding `ids` in order and now at `at`, the bucket offsets
    /// of the id [`PREFETCH_DISTANCE`] ahead and the bucket of the id half as far ahead:
    /// the cache misses of ids spread over the dictionary (distinct subjects) overlap.
    #[inline]
    pub fn prefetch_ahead(&self, ids: &[Id], at: usize) {
        if let Some(&id) = ids.get(at + PREFETCH_DISTANCE) {
            self.prefetch_offset(id);
        }
        if let Some(&id) = ids.get(at + PREFETCH_DISTANCE / 2) {
            self.prefetch_bucket(id);
        }
    }

    /// Hints the CPU to fetch the offset of `id`'s bucket: stage one of decoding many ids
    /// spread over the dictionary, a few ids ahead of [`Self::prefetch_bucket`].
    #[inline]
    pub fn prefetch_offset(&self, id: Id) {
        let Some(id) = self.local(id) else { return };
        if id < self.len {
            let bucket = id as usize / BUCKET;
            crate::prefetch::prefetch_read(self.buckets.as_ptr().wrapping_add(bucket));
        }
    }

    /// Hints the CPU to fetch the first bytes of `id`'s bucket (stage two: reads the offset
    /// that stage one brought into cache); the rest of the bucket follows sequentially.
    #[inline]
    pub fn prefetch_bucket(&self, id: Id) {
        let Some(id) = self.local(id) else { return };
        if id < self.len {
            let offset = self.buckets[id as usize / BUCKET] as usize;
            let start = self.data.as_ptr().wrapping_add(offset);
            crate::prefetch::prefetch_read(start);
            crate::prefetch::prefetch_read(start.wrapping_add(64));
        }
    }
}

/// Decodes terms remembering where it stopped: the next id of the same bucket continues
/// from there instead of decoding the bucket from its head. Result columns are often
/// sorted (neighbour lists are), which makes most decodes one step.
pub struct Cursor<'a> {
    dictionary: &'a Dictionary,
    bucket: usize,
    /// Index within the bucket of the next string `reader` yields.
    next: u64,
    reader: BucketReader<'a>,
    current: Vec<u8>,
    /// The term moved to when it is an appended one (borrowed, not copied to `current`).
    appended: Option<&'a [u8]>,
}

impl<'a> Cursor<'a> {
    /// The encoding of term `id`, or `None` if `id` is not in the dictionary.
    pub fn term(&mut self, id: Id) -> Option<&[u8]> {
        self.seek(id).then(|| self.last())
    }

    /// Moves to term `id`, whose encoding [`Cursor::last`] then gives; `false` (and
    /// [`Cursor::last`] empty) if `id` is not in the dictionary. What a caller decoding
    /// several columns at once uses: each column's cursor holds its term, with no copy.
    pub fn seek(&mut self, id: Id) -> bool {
        self.appended = None;
        let Some(id) = self.dictionary.local(id) else {
            self.bucket = usize::MAX;
            self.current.clear();
            return self.dictionary.foreign_term_into(id, &mut self.current);
        };
        if id >= self.dictionary.len {
            self.appended = self.dictionary.appended_term(id);
            return self.appended.is_some();
        }
        let bucket = (id / BUCKET as u64) as usize;
        let index = id % BUCKET as u64;
        if bucket != self.bucket || index + 1 < self.next {
            self.bucket = bucket;
            self.next = 0;
            self.reader = BucketReader::new(&self.dictionary.data, self.dictionary.buckets[bucket]);
            self.current.clear();
        }
        if index + 1 == self.next {
            return true;
        }
        if !self
            .reader
            .advance((index + 1 - self.next) as usize, &mut self.current)
        {
            self.bucket = usize::MAX;
            self.current.clear();
            return false;
        }
        self.next = index + 1;
        true
    }

    /// The encoding of the term the last [`Cursor::seek`] moved to; empty before the
    /// first and after one that failed.
    pub fn last(&self) -> &[u8] {
        self.appended.unwrap_or(&self.current)
    }
}
