//! A search of the store's full-text index, as compiled (`compile/text.rs`).

use crate::dataset::GraphRef;
use crate::table::VarId;

/// The namespace of Quiver's own predicates.
pub const QUIVER_NS: &str = "https://quiver-rdf.github.io/ns#";
/// `?literal quiver:matches "query"`: the literals whose words match the query.
pub const MATCHES: &str = "https://quiver-rdf.github.io/ns#matches";
/// `?literal quiver:score ?score`: a matched literal's relevance (BM25), as `xsd:double`.
pub const SCORE: &str = "https://quiver-rdf.github.io/ns#score";

/// What the index is asked.
#[derive(Debug, Clone, PartialEq)]
pub enum TextQuery {
    /// The literals matching a text query (words, prefixes, phrases, operators).
    Matches(String),
    /// The literals that may contain a needle, exactly or ignoring case: a superset, under
    /// the filter (`CONTAINS` or `REGEX`) that decides.
    Contains(String),
}

/// A compiled text search: the rows bind `var` to each literal found that the graph holds
/// (as the object of a triple), and `score` to its relevance.
#[derive(Debug, Clone)]
pub struct TextPattern {
    pub var: VarId,
    pub query: TextQuery,
    pub score: Option<VarId>,
    pub graph: GraphRef,
    /// Literals the index expects to find (for the join order).
    pub estimate: f64,
}

impl TextPattern {
    /// The variables of its rows.
    pub fn vars(&self) -> Vec<VarId> {
        std::iter::once(self.var).chain(self.score).collect()
    }
}
