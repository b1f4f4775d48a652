//! Query memory: one pool per process, one budget per query, one reservation per
//! operator.
//!
//! Only what grows with rows is counted (tables, selection vectors, hash tables, sort keys,
//! group states, visited sets), as bytes. A [`MemoryPool`] is the memory every query of a
//! process may hold together (a server's `--max-memory`); a [`MemoryBudget`] is one
//! query's part of it, shared by the query's worker threads; a [`Reservation`] is an
//! operator's part of that: it grows and shrinks as the operator's buffers do and gives
//! its bytes back when dropped, so a query's counter returns to zero when it ends, whether
//! it succeeded or failed, and the pool's to what the other queries hold.
//!
//! The model is DataFusion's `MemoryPool` / `MemoryReservation`; Quiver's operators never
//! spill, so a refusal ends the query with [`QueryError::MemoryLimit`].
//!
//! **Fairness.** A query alone may use the whole pool. With `n` queries in flight, a query
//! holding more than its share (the limit divided by `n`) may grow only while the pool is
//! less than three quarters full: the last quarter is kept for the queries within their
//! share, so a light query beside heavy ones still gets its memory, and the query refused
//! is the one that takes the most. No query waits for memory; a refusal is immediate.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::QueryError;

/// Bytes of one term id in a table or a vector of ids.
pub const ID_BYTES: usize = std::mem::size_of::<quiver_model::Id>();

/// Bytes of the text a term holds (IRI, blank node label, literal value, language tag and
/// datatype IRI of a typed literal), without formatting it: what a computed or decoded
/// term is charged beside its fixed size.
pub(crate) fn term_text_bytes(term: &oxrdf::Term) -> usize {
    use oxrdf::{NamedOrBlankNode, Term};
    match term {
        Term::NamedNode(n) => n.as_str().len(),
        Term::BlankNode(b) => b.as_str().len(),
        Term::Literal(l) => {
            let typed = l.language().is_none() && l.datatype() != oxrdf::vocab::xsd::STRING;
            l.value().len()
                + l.language().map_or(0, str::len)
                + if typed {
                    l.datatype().as_str().len()
                } else {
                    0
                }
        }
        Term::Triple(t) => {
            let subject = match &t.subject {
                NamedOrBlankNode::NamedNode(n) => n.as_str().len(),
                NamedOrBlankNode::BlankNode(b) => b.as_str().len(),
            };
            subject + t.predicate.as_str().len() + term_text_bytes(&t.object)
        }
    }
}

/// No limit, in [`MemoryPool::limit`]'s atomic.
const UNLIMITED: usize = usize::MAX;

/// The memory every query of a process holds together, against an optional limit.
#[derive(Debug)]
pub struct MemoryPool {
    limit: AtomicUsize,
    used: AtomicUsize,
    peak: AtomicUsize,
    /// Queries holding a budget of this pool now.
    queries: AtomicUsize,
    /// Growths refused so far.
    refused: AtomicU64,
}

impl MemoryPool {
    pub fn new(limit: Option<usize>) -> Arc<Self> {
        Arc::new(Self {
            limit: AtomicUsize::new(limit.unwrap_or(UNLIMITED)),
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            queries: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        })
    }

    /// The budget of one more query in this pool; the query counts as in flight until
    /// the budget is dropped.
    pub fn budget(self: &Arc<Self>) -> Arc<MemoryBudget> {
        self.queries.fetch_add(1, Ordering::Relaxed);
        Arc::new(MemoryBudget {
            pool: Arc::clone(self),
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            refused: AtomicBool::new(false),
        })
    }

    pub fn limit(&self) -> Option<usize> {
        match self.limit.load(Ordering::Relaxed) {
            UNLIMITED => None,
            limit => Some(limit),
        }
    }

    /// Sets the limit (a cluster worker's pool takes the one its coordinator's plans
    /// carry).
    pub fn set_limit(&self, limit: Option<usize>) {
        self.limit
            .store(limit.unwrap_or(UNLIMITED), Ordering::Relaxed);
    }

    /// Bytes the queries hold now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Queries holding a budget now.
    pub fn queries(&self) -> usize {
        self.queries.load(Ordering::Relaxed)
    }

    /// Growths refused so far (each ended a query).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Takes `bytes` for a query that would then hold `query_after`, under the fairness
    /// rule of the module docs.
    fn try_take(&self, bytes: usize, query_after: usize) -> Result<(), QueryError> {
        let previous = self.used.fetch_add(bytes, Ordering::Relaxed);
        let now = previous.saturating_add(bytes);
        if let Some(limit) = self.limit() {
            let share = limit / self.queries().max(1);
            let ceiling = if query_after <= share {
                limit
            } else {
                limit - limit / 4
            };
            if now > ceiling {
                self.used.fetch_sub(bytes, Ordering::Relaxed);
                return Err(QueryError::MemoryLimit { limit });
            }
        }
        self.peak.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// The bytes one query's operators hold, part of a [`MemoryPool`].
#[derive(Debug)]
pub struct MemoryBudget {
    pool: Arc<MemoryPool>,
    used: AtomicUsize,
    peak: AtomicUsize,
    /// Set when a growth was refused: the query's other threads stop at their next check
    /// ([`crate::context::QueryState::check`]) instead of running on.
    refused: AtomicBool,
}

impl MemoryBudget {
    /// The budget of a query alone in a pool of `limit` bytes (one query at a time: a
    /// command-line query, a test). Without a limit, the pool is one per thread, shared by
    /// the thread's queries: a pool without a limit refuses nothing, so sharing it changes
    /// nothing, and a light query makes one allocation fewer.
    pub fn new(limit: Option<usize>) -> Arc<Self> {
        thread_local! {
            static UNLIMITED: Arc<MemoryPool> = MemoryPool::new(None);
        }
        match limit {
            Some(_) => MemoryPool::new(limit).budget(),
            None => UNLIMITED
                .try_with(MemoryPool::budget)
                .unwrap_or_else(|_| MemoryPool::new(None).budget()),
        }
    }

    /// Bytes reserved now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes reserved at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// The pool's limit.
    pub fn limit(&self) -> Option<usize> {
        self.pool.limit()
    }

    pub fn pool(&self) -> &Arc<MemoryPool> {
        &self.pool
    }

    /// The error of a growth refused so far, if any (the query must stop).
    pub fn refusal(&self) -> Option<QueryError> {
        self.refused
            .load(Ordering::Relaxed)
            .then(|| QueryError::MemoryLimit {
                limit: self.limit().unwrap_or(usize::MAX),
            })
    }

    /// An empty reservation against this budget.
    pub fn reservation(&self) -> Reservation<'_> {
        Reservation {
            budget: self,
            bytes: 0,
        }
    }

    /// `bytes` held apart from any operator, until the [`Charge`] is dropped: what waits
    /// outside the query's operators for a while (a cluster worker's messages held back
    /// by flow control), which may outlive the operator that made it. A refusal stops the
    /// query, as [`Reservation::try_grow`]'s does.
    pub fn charge(self: &Arc<Self>, bytes: usize) -> Result<Charge, QueryError> {
        if bytes > 0 {
            self.try_take(bytes, false)?;
        }
        Ok(Charge {
            budget: Arc::clone(self),
            bytes,
        })
    }

    /// Takes `bytes`; a refusal stops the query unless it was `optional`.
    fn try_take(&self, bytes: usize, optional: bool) -> Result<(), QueryError> {
        let previous = self.used.fetch_add(bytes, Ordering::Relaxed);
        let now = previous.saturating_add(bytes);
        if let Err(error) = self.pool.try_take(bytes, now) {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            if !optional {
                self.refused.store(true, Ordering::Relaxed);
                self.pool.refused.fetch_add(1, Ordering::Relaxed);
            }
            return Err(error);
        }
        self.peak.fetch_max(now, Ordering::Relaxed);
        Ok(())
    }

    fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
        self.pool.give_back(bytes);
    }
}

impl Drop for MemoryBudget {
    fn drop(&mut self) {
        // Reservations borrow the budget, so none is left; what they held is back.
        self.pool.queries.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One operator's share of a [`MemoryBudget`], freed on drop. Holding nothing costs
/// nothing: the shared counter is only touched when the size changes.
#[derive(Debug)]
pub struct Reservation<'b> {
    budget: &'b MemoryBudget,
    bytes: usize,
}

impl Reservation<'_> {
    /// Bytes held.
    pub fn size(&self) -> usize {
        self.bytes
    }

    /// Holds `bytes` more, or fails with [`QueryError::MemoryLimit`] (holding nothing more);
    /// the failure stops the whole query, on every thread.
    pub fn try_grow(&mut self, bytes: usize) -> Result<(), QueryError> {
        if bytes == 0 {
            return Ok(());
        }
        self.budget.try_take(bytes, false)?;
        self.bytes += bytes;
        Ok(())
    }

    /// Holds `bytes` more if the pool allows, for memory the operator can do without (a
    /// faster structure beside one it has): whether it does. A refusal stops nothing.
    pub fn try_grow_optional(&mut self, bytes: usize) -> bool {
        if bytes == 0 {
            return true;
        }
        let granted = self.budget.try_take(bytes, true).is_ok();
        if granted {
            self.bytes += bytes;
        }
        granted
    }

    /// Holds exactly `bytes`: grows (which may fail) or shrinks.
    pub fn try_resize(&mut self, bytes: usize) -> Result<(), QueryError> {
        if bytes > self.bytes {
            self.try_grow(bytes - self.bytes)
        } else {
            self.shrink(self.bytes - bytes);
            Ok(())
        }
    }

    /// Gives back `bytes` (at most what is held).
    pub fn shrink(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        if bytes == 0 {
            return;
        }
        self.budget.give_back(bytes);
        self.bytes -= bytes;
    }

    /// Gives back everything.
    pub fn free(&mut self) {
        self.shrink(self.bytes);
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.free();
    }
}

/// Bytes a query holds outside its operators ([`MemoryBudget::charge`]), given back on
/// drop. It keeps its budget (and so the query's place in the pool) alive until then.
#[derive(Debug)]
pub struct Charge {
    budget: Arc<MemoryBudget>,
    bytes: usize,
}

impl Charge {
    /// Bytes held.
    pub fn size(&self) -> usize {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.budget.give_back(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_fail_past_the_limit_and_free_on_drop() {
        let budget = MemoryBudget::new(Some(100));
        let mut a = budget.reservation();
        a.try_grow(60).unwrap();
        let mut b = budget.reservation();
        let error = b.try_grow(50).unwrap_err();
        assert!(matches!(error, QueryError::MemoryLimit { limit: 100 }));
        assert!(error.to_string().contains("100 bytes"), "{error}");
        assert_eq!(budget.used(), 60);
        b.try_grow(40).unwrap();
        a.try_resize(10).unwrap();
        assert_eq!(budget.used(), 50);
        drop(a);
        drop(b);
        assert_eq!(budget.used(), 0);
        assert_eq!(budget.peak(), 100);
    }

    #[test]
    fn charges_count_with_the_reservations_and_outlive_the_query_in_the_pool() {
        let pool = MemoryPool::new(Some(100));
        let budget = pool.budget();
        let mut reservation = budget.reservation();
        reservation.try_grow(30).unwrap();
        let held = budget.charge(50).unwrap();
        assert_eq!((held.size(), budget.used(), pool.used()), (50, 80, 80));
        // Past the limit with the reservation: refused, and the query told to stop.
        assert!(matches!(
            budget.charge(30),
            Err(QueryError::MemoryLimit { limit: 100 })
        ));
        assert!(budget.refusal().is_some());
        assert_eq!(pool.used(), 80);
        drop(reservation);
        drop(budget);
        // The charge keeps the query in the pool until it goes.
        assert_eq!((pool.used(), pool.queries()), (50, 1));
        drop(held);
        assert_eq!((pool.used(), pool.queries()), (0, 0));
    }

    #[test]
    fn queries_share_one_pool() {
        let pool = MemoryPool::new(Some(1000));
        let heavy = pool.budget();
        let mut big = heavy.reservation();
        // Alone, a query may take the whole pool.
        big.try_grow(900).unwrap();
        let light = pool.budget();
        assert_eq!(pool.queries(), 2);
        assert_eq!(pool.used(), 900);
        // Past its share (500) while the pool is over three quarters: refused.
        assert!(matches!(
            big.try_grow(10),
            Err(QueryError::MemoryLimit { limit: 1000 })
        ));
        // The refused query is told to stop; the other is not.
        assert!(heavy.refusal().is_some());
        assert!(light.refusal().is_none());
        // Within its share, the light query takes the last quarter.
        let mut small = light.reservation();
        // Memory it could do without, refused, stops nothing.
        assert!(!small.try_grow_optional(200));
        assert!(light.refusal().is_none());
        small.try_grow(100).unwrap();
        assert_eq!(pool.used(), 1000);
        assert!(small.try_grow(1).is_err());
        assert!(light.refusal().is_some());
        assert_eq!(pool.refused(), 2);
        big.shrink(800);
        // Past its share again, but the pool is under three quarters.
        big.try_grow(500).unwrap();
        assert_eq!((heavy.used(), light.used(), pool.used()), (600, 100, 700));
        drop(big);
        drop(small);
        assert_eq!(pool.used(), 0);
        assert_eq!(pool.peak(), 1000);
        drop(heavy);
        drop(light);
        assert_eq!(pool.queries(), 0);
    }
}
