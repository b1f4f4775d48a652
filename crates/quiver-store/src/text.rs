//! The seam between a store and its full-text index.
//!
//! A text index (`quiver-text`, on tantivy) maps words to the string literals of a store's
//! dictionary. The store only carries it: every version of a store shares one index, which
//! the database keeps in step with updates by indexing each literal an update appends to
//! the dictionary. Ids are never reused, so a version reads the index consistently by
//! keeping only the ids below its own dictionary's length (`terms`): literals appended by
//! later versions are not its own. The query engine asks the index through this trait, so
//! neither it nor the store depends on the search library.

use quiver_model::Id;

/// A full-text index over the string literals (simple and language-tagged) of a store.
pub trait TextSearch: Send + Sync + std::fmt::Debug {
    /// The literals below id `terms` whose text matches `query` (words, `prefix*`,
    /// `"phrases"`, `AND`/`OR`/`NOT`, `+`/`-`, parentheses), each with its relevance score
    /// (BM25), in no particular order.
    fn search(&self, query: &str, terms: u64) -> Result<Vec<(Id, f32)>, String>;

    /// About how many literals match `query` (for the planner; no search is run).
    fn estimate(&self, query: &str) -> Result<u64, String>;

    /// The literals below id `terms` that may contain `needle` ignoring case, a superset of
    /// those that do (the caller checks each); `None` when the index cannot narrow the
    /// search for this needle (too short, or not ASCII).
    fn candidates(&self, needle: &str, terms: u64) -> Result<Option<Vec<Id>>, String>;

    /// About how many literals [`TextSearch::candidates`] would give (`None`: it would not
    /// narrow the search).
    fn estimate_candidates(&self, needle: &str) -> Option<u64>;
}
