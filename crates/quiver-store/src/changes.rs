//! Change sets: what one update operation does to a store, in term ids.
//!
//! A [`ChangeSet`] is the unit the write path deals in: SPARQL Update evaluation produces
//! one per operation, [`Store::apply`] turns a store version and a change set into the next
//! version (the old one stays valid for the readers that hold it), and the write-ahead log
//! records change sets as they are, so replaying a log onto the snapshot it continues
//! rebuilds the same versions with the same ids.
//!
//! Terms the store lacks are appended to the dictionary: a change set built against a
//! store with `n` terms gives its new terms the ids `n, n + 1, …` in the order they were
//! interned, and [`Store::apply`] refuses a change set built against another size.

use std::collections::HashMap;
use std::sync::Arc;

use oxrdf::TermRef;
use quiver_model::term::encode_term;
use quiver_model::{term_id, Id, IdsExhausted};
use serde::{Deserialize, Serialize};

use crate::store::Store;

/// A quad of term ids. `predicate` is the predicate's term id (not a predicate id, which a
/// new predicate would not have yet); `graph` is `None` for the default graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Quad {
    pub subject: Id,
    pub predicate: Id,
    pub object: Id,
    pub graph: Option<Id>,
}

/// The changes of one update operation, applied in this order: graphs dropped, quads
/// deleted, quads inserted, graphs created. Inserting into a named graph the store lacks
/// creates it; deleting a graph's last quad keeps the (empty) graph; creating a graph that
/// exists changes nothing.
#[derive(Debug, Clone, Default)]
pub struct ChangeSet {
    /// `terms()` of the store this change set was built against.
    pub base_terms: u64,
    /// Encoded new terms (`quiver_model::term` encoding): term `i` gets id `base_terms + i`.
    /// Shared: the dictionary of the version the set is applied to keeps these very
    /// allocations.
    pub new_terms: Vec<Arc<[u8]>>,
    /// Named graphs removed with all their quads.
    pub dropped_graphs: Vec<Id>,
    pub deletes: Vec<Quad>,
    pub inserts: Vec<Quad>,
    /// Named graphs that must exist afterwards (empty if new).
    pub created_graphs: Vec<Id>,
    /// Ids of the first `indexed` of `new_terms`, for interning (hashed with a
    /// per-process seed: the terms are the clients'). Filled when interning needs it, so
    /// that a batch appended with [`ChangeSet::intern_absent`], or read from the log,
    /// never pays for it.
    new_term_ids: HashMap<Arc<[u8]>, Id, foldhash::fast::RandomState>,
    indexed: usize,
    /// The [`Store::version`] whose dictionary every new term was looked up in (by
    /// [`ChangeSet::intern`]): applying to that version need not look them up again.
    interned_against: Option<u64>,
    /// How many of `new_terms`, from the first, were added by interning.
    interned: usize,
}

impl ChangeSet {
    /// An empty change set for `store`.
    pub fn new(store: &Store) -> Self {
        Self {
            base_terms: store.terms(),
            interned_against: Some(store.version()),
            ..Self::default()
        }
    }

    /// How many of the first new terms were found absent from `store` itself when they
    /// were interned (0 unless this change set was built against this very version).
    pub(crate) fn looked_up_in(&self, store: &Store) -> usize {
        if self.interned_against == Some(store.version()) {
            self.interned
        } else {
            0
        }
    }

    /// Whether applying it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.new_terms.is_empty()
            && self.dropped_graphs.is_empty()
            && self.deletes.is_empty()
            && self.inserts.is_empty()
            && self.created_graphs.is_empty()
    }

    /// The id of `term` in `store` or among this change set's new terms, if any.
    pub fn lookup(&self, store: &Store, term: TermRef<'_>) -> Option<Id> {
        let mut bytes = Vec::new();
        encode_term(term, &mut bytes);
        self.lookup_encoded(store, &bytes)
    }

    /// [`ChangeSet::lookup`] of an encoded term.
    pub fn lookup_encoded(&self, store: &Store, bytes: &[u8]) -> Option<Id> {
        store
            .dictionary()
            .lookup(bytes)
            .or_else(|| self.new_term_id(bytes))
    }

    /// The id of `bytes` among the new terms: the map, then the terms it does not cover
    /// yet.
    fn new_term_id(&self, bytes: &[u8]) -> Option<Id> {
        let indexed = self.indexed.min(self.new_terms.len());
        self.new_term_ids.get(bytes).copied().or_else(|| {
            let position = self.new_terms[indexed..]
                .iter()
                .position(|term| **term == *bytes)?;
            self.id_of(indexed + position).ok()
        })
    }

    /// The id of new term `position`, failing past the ids a store may assign.
    fn id_of(&self, position: usize) -> Result<Id, IdsExhausted> {
        term_id(self.base_terms + position as u64)
    }

    /// The id of `term`: the store's, or a new one appended to this change set (failing
    /// when no id is left).
    pub fn intern(&mut self, store: &Store, term: TermRef<'_>) -> Result<Id, IdsExhausted> {
        let mut bytes = Vec::new();
        encode_term(term, &mut bytes);
        self.intern_encoded(store, bytes)
    }

    /// [`ChangeSet::intern`] of an encoded term.
    pub fn intern_encoded(&mut self, store: &Store, bytes: Vec<u8>) -> Result<Id, IdsExhausted> {
        self.index_new_terms();
        if let Some(id) = self.lookup_encoded(store, &bytes) {
            return Ok(id);
        }
        let id = self.push_new(store, bytes.into())?;
        self.index_new_terms();
        Ok(id)
    }

    /// Extends the interning map over every new term.
    fn index_new_terms(&mut self) {
        if self.indexed > self.new_terms.len() {
            self.new_term_ids.clear();
            self.indexed = 0;
        }
        for position in self.indexed..self.new_terms.len() {
            // Terms past the ids left (put in `new_terms` directly) get none; applying
            // the change set refuses them.
            let Ok(id) = self.id_of(position) else {
                break;
            };
            self.new_term_ids
                .insert(Arc::clone(&self.new_terms[position]), id);
            self.indexed = position + 1;
        }
    }

    fn push_new(&mut self, store: &Store, bytes: Arc<[u8]>) -> Result<Id, IdsExhausted> {
        if self.interned_against != Some(store.version()) {
            self.interned_against = None;
        }
        let id = self.id_of(self.new_terms.len())?;
        if self.interned == self.new_terms.len() {
            self.interned += 1;
        }
        self.new_terms.push(bytes);
        Ok(id)
    }

    /// Appends `bytes` as a new term without looking it up: the caller found it absent
    /// from `store` and from this change set.
    pub fn intern_absent(&mut self, store: &Store, bytes: &[u8]) -> Result<Id, IdsExhausted> {
        debug_assert!(self.lookup_encoded(store, bytes).is_none());
        self.push_new(store, bytes.into())
    }

    /// Forgets the interning map, after `new_terms` was filled or changed directly (it is
    /// rebuilt when interning needs it).
    pub fn reindex(&mut self) {
        self.new_term_ids.clear();
        self.indexed = 0;
    }
}

/// Two change sets are equal when they make the same changes (the interning state aside).
impl PartialEq for ChangeSet {
    fn eq(&self, other: &Self) -> bool {
        self.base_terms == other.base_terms
            && self.new_terms == other.new_terms
            && self.dropped_graphs == other.dropped_graphs
            && self.deletes == other.deletes
            && self.inserts == other.inserts
            && self.created_graphs == other.created_graphs
    }
}

/// Why a change set cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ApplyError {
    #[error("the change set was built against a store of {expected} terms, this one has {found}")]
    WrongBase { expected: u64, found: u64 },
    #[error("new term {index} is malformed or already in the store")]
    BadTerm { index: usize },
    #[error("id {0} is not a term of the store")]
    UnknownId(Id),
    #[error("term {0} is a literal and cannot be a subject, predicate or graph name")]
    NotAResource(Id),
    #[error("{}", IdsExhausted)]
    IdsExhausted,
}
