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
    /// Under an ORDER BY of one of the counts and a LIMIT, the groups that can be among
    /// the rows kept ([`CountCut`]); `None`: every group.
    #[serde(default)]
    pub cut: Option<CountCut>,
    /// Under a LIMIT over the groups in no order, at least this many groups are asked of
    /// each partition (any of them answer): set at run time, over partitions, where each
    /// group a partition finds is whole there or no count is read ([`Self::first_groups`]).
    #[serde(default)]
    pub first: Option<usize>,
}

/// The groups of an ORDER BY whose first key is one of the counts, under a LIMIT of `k`
/// rows (with its OFFSET): only a group whose count is no further in that order than the
/// `k`-th largest (or smallest) count can be among the first `k` rows, whatever the later
/// keys say, so the others are dropped before their counts become terms (and, over
/// partitions that each hold whole groups, before they leave the partition). Every group
/// tied with the `k`-th count is kept; the top-k above still orders and cuts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CountCut {
    /// The aggregate the order starts with (its place in [`IndexAggregate::aggregates`]).
    pub aggregate: usize,
    pub descending: bool,
    pub k: usize,
}

impl CountCut {
    /// The groups of `counts` the cut keeps, in their order: all of them when there are at
    /// most `k`.
    pub fn apply(&self, counts: Counts) -> Counts {
        let (keys, columns) = counts;
        let Some(column) = columns.get(self.aggregate) else {
            return (keys, columns);
        };
        if column.len() <= self.k {
            return (keys, columns);
        }
        let keep: Vec<usize> = match self.k.checked_sub(1) {
            None => Vec::new(),
            Some(last) => {
                let mut sorted = column.clone();
                let (_, &mut threshold, _) = if self.descending {
                    sorted.select_nth_unstable_by(last, |a, b| b.cmp(a))
                } else {
                    sorted.select_nth_unstable(last)
                };
                (0..column.len())
                    .filter(|&row| {
                        if self.descending {
                            column[row] >= threshold
                        } else {
                            column[row] <= threshold
                        }
                    })
                    .collect()
            }
        };
        let keys = if keys.is_empty() {
            keys
        } else {
            pick(&keys, &keep)
        };
        let columns = columns.iter().map(|column| pick(column, &keep)).collect();
        (keys, columns)
    }
}

/// The values at `rows`, in their order.
fn pick<T: Copy>(values: &[T], rows: &[usize]) -> Vec<T> {
    rows.iter().map(|&row| values[row]).collect()
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

    /// Whether each group's counts are whole on one partition of a store, each partition
    /// counting over its own records: a group keyed by a subject is counted from the
    /// subject's OUT record, and one keyed by an object (of a constant predicate other than
    /// `rdf:type`, whose class records every partition holds a share of) from the object's
    /// IN record; with a constant subject, every group from that subject's OUT record.
    /// A [`CountCut`] can then run on each partition.
    pub fn groups_whole_per_partition(&self, rdf_type: Option<PredId>) -> bool {
        let constant_subject = matches!(self.pattern.subject, Node::Const(_));
        match self.key {
            Some((_, Position::Subject)) => !matches!(self.pattern.object, Node::Const(_)),
            Some((_, Position::Object)) => {
                constant_subject
                    || matches!(self.pattern.predicate, Pred::Const(p) if Some(p) != rdf_type)
            }
            Some((_, Position::Predicate)) => constant_subject,
            Some((_, Position::Graph)) | None => false,
        }
    }

    /// Whether a partition may send only its first `limit` groups under a LIMIT in no
    /// order: each of its groups is whole there ([`Self::groups_whole_per_partition`]), or
    /// only the keys are read (a partition's first keys are distinct, so the union of
    /// every partition's holds at least `limit` keys, or all there are).
    pub fn first_groups(&self, rdf_type: Option<PredId>) -> bool {
        self.cut.is_none()
            && self.key.is_some()
            && (self.aggregates.is_empty() || self.groups_whole_per_partition(rdf_type))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut of `counts` (one key per count, keys 0, 1, …) as its kept keys.
    fn kept(counts: &[u64], descending: bool, k: usize) -> Vec<Id> {
        let keys = (0..counts.len() as Id).collect();
        let cut = CountCut {
            aggregate: 0,
            descending,
            k,
        };
        let (keys, columns) = cut.apply((keys, vec![counts.to_vec()]));
        assert_eq!(columns[0].len(), keys.len());
        keys
    }

    #[test]
    fn a_cut_keeps_the_groups_as_far_as_the_kth_count_and_every_tie() {
        let counts = [5, 1, 9, 5, 2, 5, 7];
        // Descending: 9, 7, 5, 5, 5, … — the third count is 5, and all three fives stay.
        assert_eq!(kept(&counts, true, 3), vec![0, 2, 3, 5, 6]);
        assert_eq!(kept(&counts, true, 1), vec![2]);
        // Ascending: 1, 2, 5, … — every five ties with the third.
        assert_eq!(kept(&counts, false, 3), vec![0, 1, 3, 4, 5]);
        assert_eq!(kept(&counts, false, 2), vec![1, 4]);
        // At most k groups: all of them; a LIMIT 0: none.
        assert_eq!(kept(&counts, true, 7), (0..7).collect::<Vec<Id>>());
        assert_eq!(kept(&counts, true, 0), Vec::<Id>::new());
    }

    #[test]
    fn a_cut_keeps_every_aggregate_of_its_groups() {
        let cut = CountCut {
            aggregate: 1,
            descending: true,
            k: 1,
        };
        let (keys, columns) = cut.apply((vec![10, 20, 30], vec![vec![1, 2, 3], vec![7, 9, 8]]));
        assert_eq!(keys, vec![20]);
        assert_eq!(columns, vec![vec![2], vec![9]]);
    }
}
