//! Building one operation's change set: terms interned against the current version, quads
//! collected under the request's limits, then de-duplicated and reduced to what changes.
//!
//! Every quad and new term added is charged to the request's memory budget and every few
//! thousand quads the request's deadline and cancel flag are checked, so an operation that
//! would build an enormous change set stops with the same errors a query does. When the
//! operation is complete, [`Builder::finish`] sorts and de-duplicates the quads, keeps the
//! deletes of quads the store holds and the inserts of quads it lacks (or deletes in the
//! same operation), and counts them.

use oxrdf::TermRef;
use quiver_model::term::{triple_nesting, MAX_TRIPLE_NESTING};
use quiver_model::Id;
use quiver_store::{ChangeSet, Quad, Store};

use crate::context::ExecContext;
use crate::error::QueryError;
use crate::memory::Reservation;

use super::Request;

/// Bytes a quad of a change set holds.
const QUAD_BYTES: usize = std::mem::size_of::<Quad>();

/// An operation's change set, ready to apply, and what it changes.
#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) changes: ChangeSet,
    pub(crate) inserted: u64,
    pub(crate) deleted: u64,
}

/// One operation's change set being built against `store`.
pub(crate) struct Builder<'a> {
    store: &'a Store,
    ctx: ExecContext<'a>,
    set: ChangeSet,
    memory: Reservation<'a>,
    /// Deletes to check against the store when finishing.
    deletes: Vec<Quad>,
    /// Deletes known to be in the store (read from it).
    held: Vec<Quad>,
    inserts: Vec<Quad>,
    /// Triples of the graphs dropped (what dropping deletes).
    dropped_triples: u64,
    added: usize,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(request: &'a Request<'_>, store: &'a Store) -> Self {
        let ctx = request.ctx(store);
        Self {
            store,
            ctx,
            set: ChangeSet::new(store),
            memory: ctx.reservation(),
            deletes: Vec::new(),
            held: Vec::new(),
            inserts: Vec::new(),
            dropped_triples: 0,
            added: 0,
        }
    }

    pub(crate) fn store(&self) -> &'a Store {
        self.store
    }

    pub(crate) fn ctx(&self) -> ExecContext<'a> {
        self.ctx
    }

    /// Charges `bytes` more to the request's memory budget.
    pub(crate) fn charge(&mut self, bytes: usize) -> Result<(), QueryError> {
        self.memory.try_grow(bytes)
    }

    /// The id of `term`, appended to the change set's new terms when the store lacks it.
    pub(crate) fn intern(&mut self, term: TermRef<'_>) -> Result<Id, QueryError> {
        if triple_nesting(term) > MAX_TRIPLE_NESTING {
            return Err(QueryError::Update(format!(
                "triple terms nested more than {MAX_TRIPLE_NESTING} deep"
            )));
        }
        let before = self.set.new_terms.len();
        let id = self.set.intern(self.store, term)?;
        if let Some(bytes) = self.set.new_terms.get(before) {
            // The encoded term, its copy as the interning map's key and the map's entry.
            let size = 2 * bytes.len() + 64;
            self.memory.try_grow(size)?;
        }
        Ok(id)
    }

    /// Charges the memory of `count` new terms of `bytes` encoded bytes in all, which
    /// [`Builder::intern_absent_charged`] then appends.
    pub(crate) fn charge_absent(&mut self, count: usize, bytes: usize) -> Result<(), QueryError> {
        self.memory.try_grow(2 * bytes + 64 * count)
    }

    /// Appends the encoded term `bytes`, which the caller found absent from the store and
    /// appends once, to the change set's new terms; its memory was charged already
    /// ([`Builder::charge_absent`]).
    pub(crate) fn intern_absent_charged(&mut self, bytes: &[u8]) -> Result<Id, QueryError> {
        Ok(self.set.intern_absent(self.store, bytes)?)
    }

    /// Charges the memory of `count` quads to come, which
    /// [`Builder::insert_charged`] then asks to insert.
    pub(crate) fn charge_inserts(&mut self, count: usize) -> Result<(), QueryError> {
        self.memory.try_grow(count * QUAD_BYTES)?;
        self.inserts.reserve(count);
        Ok(())
    }

    /// [`Builder::insert`] of a quad charged already ([`Builder::charge_inserts`]).
    pub(crate) fn insert_charged(&mut self, quad: Quad) -> Result<(), QueryError> {
        self.ctx.tick(self.added)?;
        self.added += 1;
        self.inserts.push(quad);
        Ok(())
    }

    /// The store's id of `term`, if it has it (what a delete can match).
    pub(crate) fn existing(&self, term: TermRef<'_>) -> Option<Id> {
        self.store.term_id(term)
    }

    /// Asks to delete `quad` (nothing happens if the store lacks it).
    pub(crate) fn delete(&mut self, quad: Quad) -> Result<(), QueryError> {
        self.count_quad()?;
        self.deletes.push(quad);
        Ok(())
    }

    /// Deletes `quad`, which the store holds.
    pub(crate) fn delete_held(&mut self, quad: Quad) -> Result<(), QueryError> {
        self.count_quad()?;
        self.held.push(quad);
        Ok(())
    }

    /// Asks to insert `quad` (nothing happens if the store holds it and it is not
    /// deleted by the same operation).
    pub(crate) fn insert(&mut self, quad: Quad) -> Result<(), QueryError> {
        self.count_quad()?;
        self.inserts.push(quad);
        Ok(())
    }

    /// Drops the named graph `name` with its quads.
    pub(crate) fn drop_graph(&mut self, name: Id) {
        if let Some(graph) = self.store.named_graph(name) {
            self.dropped_triples += graph.triples();
        }
        self.set.dropped_graphs.push(name);
    }

    /// Makes the named graph `name` exist (empty if new).
    pub(crate) fn create_graph(&mut self, name: Id) {
        self.set.created_graphs.push(name);
    }

    fn count_quad(&mut self) -> Result<(), QueryError> {
        self.ctx.tick(self.added)?;
        self.added += 1;
        self.memory.try_grow(QUAD_BYTES)
    }

    /// Whether the store holds `quad`.
    fn holds(&self, quad: &Quad) -> bool {
        let graph = match quad.graph {
            None => Some(self.store.graph()),
            Some(name) => self.store.named_graph(name),
        };
        let predicate = self.store.predicate_of_term(quad.predicate);
        match (graph, predicate) {
            (Some(graph), Some(predicate)) => graph.contains(quad.subject, predicate, quad.object),
            _ => false,
        }
    }

    /// The change set: quads sorted and de-duplicated, deletes of quads the store lacks
    /// and inserts of quads it keeps left out.
    pub(crate) fn finish(mut self) -> Result<Built, QueryError> {
        self.ctx.check()?;
        let mut deletes = std::mem::take(&mut self.deletes);
        let mut checked = 0;
        let mut failed = None;
        deletes.retain(|quad| {
            checked += 1;
            if failed.is_none() {
                if let Err(error) = self.ctx.tick(checked) {
                    failed = Some(error);
                }
            }
            failed.is_none() && self.holds(quad)
        });
        if let Some(error) = failed {
            return Err(error);
        }
        deletes.append(&mut self.held);
        deletes.sort_unstable();
        deletes.dedup();
        let mut inserts = std::mem::take(&mut self.inserts);
        inserts.sort_unstable();
        inserts.dedup();
        inserts.retain(|quad| {
            checked += 1;
            if failed.is_none() {
                if let Err(error) = self.ctx.tick(checked) {
                    failed = Some(error);
                }
            }
            failed.is_none() && (!self.holds(quad) || deletes.binary_search(quad).is_ok())
        });
        if let Some(error) = failed {
            return Err(error);
        }
        let deleted = deletes.len() as u64 + self.dropped_triples;
        let inserted = inserts.len() as u64;
        let mut changes = self.set;
        if inserts.is_empty() && changes.created_graphs.is_empty() {
            // Nothing refers to the new terms (templates' constants, when no solution
            // inserted anything): the dictionary does not grow.
            let unused = std::mem::replace(&mut changes, ChangeSet::new(self.store));
            changes.dropped_graphs = unused.dropped_graphs;
        }
        changes.deletes = deletes;
        changes.inserts = inserts;
        Ok(Built {
            changes,
            inserted,
            deleted,
        })
    }
}
