//! The memory budget of one query: what its operators may hold at once.
//!
//! Only what grows with rows is counted (tables, selection vectors, hash tables, sort keys,
//! group states, visited sets), as bytes, in one atomic counter that every worker thread of
//! the query shares. A [`Reservation`] is an operator's share of it: it grows and shrinks
//! as the operator's buffers do and gives its bytes back when dropped, so the counter
//! returns to zero when a query ends, whether it succeeded or failed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::error::QueryError;

/// Bytes of one term id in a table or a vector of ids.
pub const ID_BYTES: usize = std::mem::size_of::<quiver_model::Id>();

/// The bytes a query's operators hold, against an optional limit.
#[derive(Debug, Default)]
pub struct MemoryBudget {
    limit: Option<usize>,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl MemoryBudget {
    pub fn new(limit: Option<usize>) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// Bytes reserved now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes reserved at once so far.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> Option<usize> {
        self.limit
    }

    /// An empty reservation against this budget.
    pub fn reservation(&self) -> Reservation<'_> {
        Reservation {
            budget: self,
            bytes: 0,
        }
    }

    fn try_take(&self, bytes: usize) -> Result<(), QueryError> {
        let previous = self.used.fetch_add(bytes, Ordering::Relaxed);
        let now = previous.saturating_add(bytes);
        if let Some(limit) = self.limit {
            if now > limit {
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

    /// Holds `bytes` more, or fails with [`QueryError::MemoryLimit`] (holding nothing more).
    pub fn try_grow(&mut self, bytes: usize) -> Result<(), QueryError> {
        if bytes == 0 {
            return Ok(());
        }
        self.budget.try_take(bytes)?;
        self.bytes += bytes;
        Ok(())
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
}
