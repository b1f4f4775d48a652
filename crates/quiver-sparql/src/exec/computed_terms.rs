//! Terms a query computes (BIND and SELECT expressions, through which aggregates' values
//! surface too) or receives (a SERVICE's answers) on a cluster's coordinator whose
//! dictionary is partitioned: such a term may name a stored term that another owner holds
//! and the coordinator has not seen. Interned as it is, it would get a query-local id and
//! miss the stored rows it should join with; so the terms of a column (or of an answer)
//! are first asked of the owners that may hold them, in one batch
//! (`Dictionary::held_elsewhere`, `Dictionary::resolve_terms`), never one request per row.
//! On a whole dictionary nothing is asked and nothing is visited.

use oxrdf::Term;
use rustc_hash::FxHashSet;

use super::Evaluator;
use crate::error::QueryError;

impl Evaluator<'_> {
    /// Asks the owners, in one batch, for the terms `visit` shows that they may hold, so
    /// that interning them then gives their stored ids. `visit` is called only on a
    /// partitioned dictionary (a column's expressions are evaluated twice there).
    pub(crate) fn learn_held_elsewhere(
        &self,
        visit: impl FnOnce(&mut dyn FnMut(&Term)) -> Result<(), QueryError>,
    ) -> Result<(), QueryError> {
        let dictionary = self.store.dictionary();
        if !dictionary.resolves() {
            return Ok(());
        }
        let mut asked: FxHashSet<Vec<u8>> = FxHashSet::default();
        // One encoding buffer: a term is copied only when it is asked.
        let mut bytes = Vec::new();
        visit(&mut |term: &Term| {
            if term.is_blank_node() {
                return;
            }
            bytes.clear();
            quiver_model::encode_term(term.as_ref(), &mut bytes);
            if !asked.contains(&bytes) && dictionary.held_elsewhere(&bytes) {
                asked.insert(bytes.clone());
            }
        })?;
        if asked.is_empty() {
            return Ok(());
        }
        let asked = asked.into_iter().collect();
        dictionary
            .resolve_terms(asked)
            .map(|_| ())
            .map_err(|e| QueryError::Cluster(format!("its dictionary did not answer: {e}")))
    }
}
