//! The front-coded buckets of the sorted part: written by [`DictionaryBuilder`] (a bucket's
//! first string in full, each next one as the length it shares with the one before and its
//! own suffix, lengths as varints) and read by [`BucketReader`].

use super::{Dictionary, BUCKET};

/// Builds a [`Dictionary`] from terms pushed in strictly increasing byte order.
#[derive(Debug, Default)]
pub struct DictionaryBuilder {
    pub(super) data: Vec<u8>,
    pub(super) buckets: Vec<u64>,
    pub(super) previous: Vec<u8>,
    pub(super) len: u64,
}

impl DictionaryBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the next term; returns its id. Terms must arrive strictly increasing.
    pub fn push(&mut self, term: &[u8]) -> u64 {
        debug_assert!(
            self.len == 0 || term > &self.previous[..],
            "terms out of order"
        );
        if self.len.is_multiple_of(BUCKET as u64) {
            self.buckets.push(self.data.len() as u64);
            write_varint(&mut self.data, term.len() as u64);
            self.data.extend_from_slice(term);
        } else {
            let shared = common_prefix(&self.previous, term);
            write_varint(&mut self.data, shared as u64);
            write_varint(&mut self.data, (term.len() - shared) as u64);
            self.data.extend_from_slice(&term[shared..]);
        }
        self.previous.clear();
        self.previous.extend_from_slice(term);
        self.len += 1;
        self.len - 1
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn finish(mut self) -> Dictionary {
        self.data.shrink_to_fit();
        self.buckets.shrink_to_fit();
        Dictionary::assembled(self.data.into(), self.buckets.into(), self.len)
    }
}

/// Sequential decoder of one bucket.
pub(super) struct BucketReader<'a> {
    pub(super) data: &'a [u8],
    pub(super) position: usize,
    pub(super) first: bool,
}

impl<'a> BucketReader<'a> {
    pub(super) fn new(data: &'a [u8], offset: u64) -> Self {
        Self {
            data,
            position: offset as usize,
            first: true,
        }
    }

    /// Replaces `current` (the previous string of the bucket, empty before its first) by
    /// the string `steps` entries on (`steps` at most [`BUCKET`]); `false`, with `current`
    /// unspecified, where the data does not decode.
    ///
    /// The entries in between are not written out: their shares and suffixes are read,
    /// then the last string is put together from the back, each byte copied once, from
    /// the suffix that last set it (or from `current`'s own prefix). Decoding a random id
    /// walks half a bucket on average, and copying every suffix on the way cost a quarter
    /// of the emulator's result decoding (LUBM-100).
    pub(super) fn advance(&mut self, steps: usize, current: &mut Vec<u8>) -> bool {
        debug_assert!(steps <= BUCKET);
        // Entry `j`'s shared prefix and where its suffix starts in `data`.
        let mut entries = [(0usize, 0usize); BUCKET];
        let mut length = current.len();
        for entry in entries.iter_mut().take(steps) {
            let Some((shared, suffix)) = self.next_entry(length) else {
                return false;
            };
            // `next_entry` leaves `position` at the suffix's end.
            *entry = (shared, self.position - suffix.len());
            length = shared + suffix.len();
        }
        // Bytes `0..need` of the last string are still to be written; entry `j` holds
        // bytes `shared..` of its own string, which the entries after it share up to
        // `need`, and `current` holds the rest.
        current.resize(length, 0);
        let mut need = length;
        // `need` never passes entry `j`'s length: at first it is the last string's, then
        // a share, which `next_entry` checked against the entry before it.
        for &(shared, start) in entries[..steps].iter().rev() {
            if need > shared {
                current[shared..need].copy_from_slice(&self.data[start..start + (need - shared)]);
                need = shared;
            }
            if need == 0 {
                break;
            }
        }
        true
    }

    /// Replaces `current` (the previous string of the bucket) by the next one.
    pub(super) fn next_into(&mut self, current: &mut Vec<u8>) -> bool {
        let Some((shared, suffix)) = self.next_entry(current.len()) else {
            return false;
        };
        current.truncate(shared);
        current.extend_from_slice(suffix);
        true
    }

    /// The next string as stored: the bytes it shares with the previous one (of
    /// `previous_len` bytes; 0 for the bucket's first) and its own suffix; `None` where
    /// the data does not decode.
    pub(super) fn next_entry(&mut self, previous_len: usize) -> Option<(usize, &'a [u8])> {
        let shared = if std::mem::replace(&mut self.first, false) {
            0
        } else {
            match read_varint(self.data, &mut self.position)? {
                shared if shared as usize <= previous_len => shared as usize,
                _ => return None,
            }
        };
        let length = usize::try_from(read_varint(self.data, &mut self.position)?).ok()?;
        let end = self.position.checked_add(length)?;
        let suffix = self.data.get(self.position..end)?;
        self.position = end;
        Some((shared, suffix))
    }
}

pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

pub(super) fn write_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(super) fn read_varint(data: &[u8], position: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*position)?;
        *position += 1;
        value |= u64::from(byte & 0x7F) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}
