//! Terms appended after the sorted, front-coded part (updates, a cluster's new terms):
//! each gets the next id, found again through a reverse index of hashes shared by every
//! version of the dictionary ([`AppendedIndex`]).

use std::sync::Arc;

use rayon::prelude::*;

use super::{Dictionary, PARALLEL_LOOKUPS};
use crate::appended_index::AppendedIndex;
use crate::id::{term_id, Id, IdsExhausted};

/// Terms appended after the sorted part: id `len + i` is `terms[i]`. The reverse index is
/// shared by every version (see [`AppendedIndex`]).
#[derive(Debug, Default, Clone)]
pub(super) struct Appended {
    pub(super) terms: imbl::Vector<Arc<[u8]>>,
    pub(super) ids: Arc<AppendedIndex>,
}

impl Dictionary {
    /// Appends a term that the dictionary lacks (checked: an existing term keeps its id);
    /// returns its id, the next after every existing one, or fails when no id is left.
    pub fn append(&mut self, term: &[u8]) -> Result<Id, IdsExhausted> {
        if let Some(id) = self.lookup(term) {
            return Ok(id);
        }
        self.append_new(term)
    }

    /// Appends terms known to be absent (the caller looked each up in this very version,
    /// and they are distinct), at once; returns the id of the first, or fails (appending
    /// nothing) when the ids left are too few for all of them.
    pub fn append_absent_batch(&mut self, terms: &[Arc<[u8]>]) -> Result<Id, IdsExhausted> {
        if terms.is_empty() {
            return self.global(self.local_len()).ok_or(IdsExhausted);
        }
        // Positions among this dictionary's own terms; the index keeps positions, which
        // are the ids but in a share of a cluster's dictionary.
        let first = term_id(self.local_len())?;
        // The whole batch must fit in the id space, not only its first term.
        let last = self.local_len() + terms.len() as u64 - 1;
        term_id(last)?;
        self.global(last).ok_or(IdsExhausted)?;
        let ids = &self.appended.ids;
        let hashes: Vec<u64> = if terms.len() < PARALLEL_LOOKUPS {
            terms.iter().map(|term| ids.hash(term)).collect()
        } else {
            terms.par_iter().map(|term| ids.hash(term)).collect()
        };
        self.appended.terms.extend(terms.iter().cloned());
        self.appended.ids.insert_batch(&hashes, first);
        // The first's id is below the last's, which was checked.
        self.global(u64::from(first)).ok_or(IdsExhausted)
    }

    fn append_new(&mut self, term: &[u8]) -> Result<Id, IdsExhausted> {
        let position = self.local_len();
        let id = self.global(position).ok_or(IdsExhausted)?;
        let position = term_id(position)?;
        self.appended.terms.push_back(term.into());
        self.appended.ids.insert(term, position);
        Ok(id)
    }

    /// The id of `term` among this version's appended terms.
    pub(super) fn lookup_appended(&self, term: &[u8]) -> Option<Id> {
        if self.appended.terms.is_empty() {
            return None;
        }
        let position = self.appended.ids.get(term, |position| {
            self.appended_term(position as u64) == Some(term)
        })?;
        self.global(position as u64)
    }

    /// Terms of the sorted, front-coded part (ids below this sort like their terms).
    pub fn base_len(&self) -> u64 {
        self.len
    }

    /// The appended terms, in id order from [`Dictionary::base_len`].
    pub fn appended(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.appended.terms.iter().map(|term| &term[..])
    }

    /// The encoding of appended term `id`, if it is one.
    pub(super) fn appended_term(&self, id: u64) -> Option<&[u8]> {
        let index = usize::try_from(id.checked_sub(self.len)?).ok()?;
        self.appended.terms.get(index).map(|term| &term[..])
    }
}
