//! Counts and distinct values of one triple pattern answered from the graph index, types
//! only: `COUNT(*)`, `COUNT(?v)`, `COUNT(DISTINCT ?v)`, `SELECT DISTINCT ?v` and GROUP BY
//! over one of the pattern's variables, read from neighbour-list lengths, the predicate
//! index, the statistics or a walk of the records instead of rows.
//!
//! The compiler builds one only for a pattern whose variables are distinct and whose
//! subject is not a literal; the executor needs nothing else of the query.

use quiver_model::{Id, PredId};

use crate::bgp::{Node, Pattern, Pred};
use crate::dataset::GraphRef;
use crate::table::VarId;

/// A position of the pattern, or the graph of `GRAPH ?g`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Position {
    Subject,
    Predicate,
    Object,
    /// The name of the graph a match is in (`GRAPH ?g`).
    Graph,
}

/// What one aggregate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Count {
    /// Matches: `COUNT(*)`, and `COUNT(?v)` of a variable every match binds.
    Matches,
    /// Distinct values at a position: `COUNT(DISTINCT ?v)`.
    Distinct(Position),
}

/// The graphs the pattern is matched in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Graphs {
    /// One graph (the query's default graph, or the graph of `GRAPH <g>`).
    One(GraphRef),
    /// `GRAPH ?var`: each named graph it may visit (term id of its name, the graph).
    Each {
        var: VarId,
        graphs: Vec<(Id, GraphRef)>,
    },
}

/// What an [`IndexAggregate`] found, before its counts become terms: the keys (term ids;
/// none without a key) and, per aggregate, one count per group.
pub type Counts = (Vec<Id>, Vec<Vec<u64>>);

/// Counts of one triple pattern grouped by at most one of its positions.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct IndexAggregate {
    pub pattern: Pattern,
    pub graphs: Graphs,
    /// The grouping position and its variable: one row per distinct value (as
    /// `SELECT DISTINCT ?v` when there are no aggregates); `None`: one row in all, even
    /// without matches.
    pub key: Option<(VarId, Position)>,
    /// The aggregates computed per row, each into its variable.
    pub aggregates: Vec<(VarId, Count)>,
}

impl IndexAggregate {
    /// Whether its counts over a store's partitions add up to the store's, each partition
    /// counting over its own records (`rdf_type`: the store's `rdf:type`):
    /// - counts of matches in one graph, each triple being counted by one partition;
    /// - without a key, the distinct subjects of a constant predicate, each counted where
    ///   its OUT record is (or, for an object's IN record, where that record is: one place
    ///   for a predicate other than `rdf:type`, the instance's owner for `rdf:type`), and the
    ///   distinct objects of a constant predicate other than `rdf:type`, counted where
    ///   their IN record is;
    /// - the distinct values of a key alone (their union).
    ///
    /// A subject key of a pattern with a constant object (`?s p <o>` by `?s`) does not add
    /// up: its values are read from the object's IN record and each one's matches from its
    /// own OUT record, which may be on another partition.
    pub fn adds_up(&self, rdf_type: Option<PredId>) -> bool {
        let predicate = match self.pattern.predicate {
            Pred::Const(p) => Some(p),
            _ => None,
        };
        let disjoint = |position: Position| match position {
            Position::Subject => predicate.is_some(),
            Position::Object => predicate.is_some_and(|p| Some(p) != rdf_type),
            Position::Predicate | Position::Graph => false,
        };
        let keyed_apart = matches!(self.key, Some((_, Position::Subject)))
            && matches!(self.pattern.object, Node::Const(_));
        matches!(self.graphs, Graphs::One(_))
            && !keyed_apart
            && self.aggregates.iter().all(|(_, count)| match *count {
                Count::Matches => true,
                Count::Distinct(position) => self.key.is_none() && disjoint(position),
            })
            && (self.key.is_some() || !self.aggregates.is_empty())
    }

    /// The output variables: the key's, then the aggregates'.
    pub fn vars(&self) -> Vec<VarId> {
        self.key
            .iter()
            .map(|(var, _)| *var)
            .chain(self.aggregates.iter().map(|(var, _)| *var))
            .collect()
    }
}
