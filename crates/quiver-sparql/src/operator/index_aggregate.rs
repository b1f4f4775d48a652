//! Counts and distinct values of one triple pattern answered from the graph index, types
//! only: `COUNT(*)`, `COUNT(?v)`, `COUNT(DISTINCT ?v)`, `SELECT DISTINCT ?v` and GROUP BY
//! over one of the pattern's variables, read from neighbour-list lengths, the predicate
//! index, the statistics or a walk of the records instead of rows.
//!
//! The compiler builds one only for a pattern whose variables are distinct and whose
//! subject is not a literal; the executor needs nothing else of the query.

use quiver_model::Id;

use crate::bgp::Pattern;
use crate::dataset::GraphRef;
use crate::table::VarId;

/// A position of the pattern, or the graph of `GRAPH ?g`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Position {
    Subject,
    Predicate,
    Object,
    /// The name of the graph a match is in (`GRAPH ?g`).
    Graph,
}

/// What one aggregate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Matches: `COUNT(*)`, and `COUNT(?v)` of a variable every match binds.
    Matches,
    /// Distinct values at a position: `COUNT(DISTINCT ?v)`.
    Distinct(Position),
}

/// The graphs the pattern is matched in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Graphs {
    /// One graph (the query's default graph, or the graph of `GRAPH <g>`).
    One(GraphRef),
    /// `GRAPH ?var`: each named graph it may visit (term id of its name, the graph).
    Each {
        var: VarId,
        graphs: Vec<(Id, GraphRef)>,
    },
}

/// Counts of one triple pattern grouped by at most one of its positions.
#[derive(Debug, Clone)]
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
    /// The output variables: the key's, then the aggregates'.
    pub fn vars(&self) -> Vec<VarId> {
        self.key
            .iter()
            .map(|(var, _)| *var)
            .chain(self.aggregates.iter().map(|(var, _)| *var))
            .collect()
    }
}
