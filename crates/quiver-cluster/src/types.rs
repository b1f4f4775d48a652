//! `rdf:type` membership replicated on every process, so that a type check runs where the
//! rows are (Wukong's replication of small, hot data; [`crate::replicas`] exchanges it).
//!
//! A partition holds the types of the vertices it owns, so a check such as LUBM's
//! `?x rdf:type ub:GraduateStudent`, with `?x` bound, ran at the owner of each `?x`: a hop
//! for every light query whose rows span the processes, and on heavy ones, rows moved only
//! to be dropped. When the cluster's type memberships fit a budget ([`BUDGET`]), every
//! process holds all of them, as `(instance, class)` pairs in a [`PairTable`]: 12 to 16
//! bytes per `rdf:type` triple of the default graph (more with 64-bit ids). Such a check is
//! then a filter applied where the rows are, before they are routed (`message::route`),
//! and never a step of its own; so is a walk out of `rdf:type` from a bound instance
//! (`?x a ?c`, `?x` bound: the classes of each row's instance).

use quiver_model::prefetch::prefetch_read;
use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pred};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::Direction;

/// The most memory a process gives to the replicated memberships by default (a layout may
/// record another budget: `quiver partition --replication-budget`): past it, checks run at
/// their owners. LUBM-1000's 20 M type triples take 240 to 320 MB.
pub const BUDGET: u64 = 1 << 30;

/// Rows ahead of the one looked up whose bucket offsets are prefetched; their pairs are
/// prefetched at half that distance, once the offsets are in cache (as the graph index's
/// lookups of a column are): a table of many pairs is far larger than the caches, and a
/// column's lookups, each two dependent cache misses, then overlap instead of following
/// one another (LUBM-1000's q7 on 2 processes checks 510 K courses' types this way).
const PREFETCH_DISTANCE: usize = 32;

/// Pairs of ids, sorted, with a bucket index over the first ids so that a lookup reads two
/// neighbouring offsets and the few pairs between them (a binary search over all the pairs
/// made q7 on 2 processes slower than moving its rows to their owners): every
/// `(instance, class)` pair of `rdf:type` in the default graph, or a replicated predicate's
/// edges one way ([`crate::replicas`]).
#[derive(Debug, Default)]
pub struct PairTable {
    pairs: Vec<(Id, Id)>,
    /// `starts[b]`: the first pair whose instance is in bucket `b` (`instance >> shift`).
    starts: Vec<u32>,
    shift: u32,
}

impl PairTable {
    pub(crate) fn new(mut pairs: Vec<(Id, Id)>) -> Self {
        // By a radix sort on all cores: a process's memberships are tens of millions of
        // pairs on a large store (LUBM-1000: 23 M), sorted as the cluster starts.
        quiver_store::sort_pairs(&mut pairs);
        pairs.dedup();
        Self::from_sorted(pairs)
    }

    /// The table of `pairs`, sorted and without duplicates already (as [`Self::pairs`]
    /// gives them): kept replicas read back ([`crate::kept_replicas`]). `None` when they
    /// are not.
    pub(crate) fn of_sorted(pairs: Vec<(Id, Id)>) -> Option<Self> {
        pairs
            .windows(2)
            .all(|w| w[0] < w[1])
            .then(|| Self::from_sorted(pairs))
    }

    fn from_sorted(mut pairs: Vec<(Id, Id)>) -> Self {
        pairs.shrink_to_fit();
        // About one bucket per pair: 4 bytes per pair beside its 8.
        let largest = pairs.last().map_or(0, |&(instance, _)| u64::from(instance));
        let buckets = (pairs.len() as u64).next_power_of_two().max(1);
        let mut shift = 0;
        while (largest >> shift) >= buckets {
            shift += 1;
        }
        let count = ((largest >> shift) + 2) as usize;
        let mut starts = vec![0u32; count];
        let mut next = 0usize;
        for (bucket, start) in starts.iter_mut().enumerate() {
            while next < pairs.len() && (u64::from(pairs[next].0) >> shift) < bucket as u64 {
                next += 1;
            }
            *start = next as u32;
        }
        Self {
            pairs,
            starts,
            shift,
        }
    }

    /// The bucket that holds `first`'s pairs.
    #[inline(always)]
    fn bucket(&self, first: Id) -> usize {
        (u64::from(first) >> self.shift) as usize
    }

    /// Hints the CPU to fetch what the lookups of `first` at row `row + PREFETCH_DISTANCE`
    /// of `rows` rows read first (its bucket's offsets), and those of the row at half that
    /// distance read next (its bucket's pairs): called at each row of a loop over a
    /// column, it keeps the misses of the lookups ahead in flight.
    #[inline(always)]
    pub(crate) fn prefetch_ahead(&self, first: &dyn Fn(usize) -> Id, row: usize, rows: usize) {
        if row + PREFETCH_DISTANCE < rows {
            // `get` reads nothing: it only finds the entry's place, for the hint.
            if let Some(entry) = self.starts.get(self.bucket(first(row + PREFETCH_DISTANCE))) {
                prefetch_read(entry);
            }
        }
        if row + PREFETCH_DISTANCE / 2 < rows {
            if let Some(&start) = self
                .starts
                .get(self.bucket(first(row + PREFETCH_DISTANCE / 2)))
            {
                prefetch_read(self.pairs.as_ptr().wrapping_add(start as usize));
            }
        }
    }

    /// Whether `(first, second)` is a pair: whether `first` is an instance of class
    /// `second`, or has an edge to it.
    pub fn contains(&self, first: Id, second: Id) -> bool {
        let bucket = self.bucket(first);
        let (Some(&start), Some(&end)) = (self.starts.get(bucket), self.starts.get(bucket + 1))
        else {
            return false;
        };
        self.pairs[start as usize..end as usize]
            .binary_search(&(first, second))
            .is_ok()
    }

    /// The second ids of the pairs of `first` (the classes of an instance, an edge's
    /// neighbours), in order.
    pub fn seconds(&self, first: Id) -> impl Iterator<Item = Id> + '_ {
        let bucket = self.bucket(first);
        let pairs = match (self.starts.get(bucket), self.starts.get(bucket + 1)) {
            (Some(&start), Some(&end)) => &self.pairs[start as usize..end as usize],
            _ => &[],
        };
        // Sorted: the pairs of `first` are together in its bucket (one of a vertex with
        // many neighbours may hold thousands).
        let from = pairs.partition_point(|&(x, _)| x < first);
        pairs[from..]
            .iter()
            .take_while(move |&&(x, _)| x == first)
            .map(|&(_, second)| second)
    }

    /// The pairs, sorted.
    pub fn pairs(&self) -> &[(Id, Id)] {
        &self.pairs
    }

    /// The bytes it takes.
    pub fn bytes(&self) -> usize {
        self.pairs.len() * std::mem::size_of::<(Id, Id)>() + self.starts.len() * 4
    }
}

/// Whether memberships of `triples` `rdf:type` triples fit `budget` bytes (their pairs
/// and at most two bucket offsets each); a budget of 0 replicates nothing.
pub(crate) fn fits(triples: u64, budget: u64) -> bool {
    budget > 0 && bytes_at_most(triples) <= budget
}

/// The most bytes the memberships of `triples` `rdf:type` triples take.
pub(crate) fn bytes_at_most(triples: u64) -> u64 {
    triples.saturating_mul(std::mem::size_of::<(Id, Id)>() as u64 + 8)
}

/// Step `step` of `bgp` over `rows` answered from the replicated memberships, where the
/// rows are: a check of `rdf:type` with both ends bound keeps the rows where it holds
/// ([`check`]), and a walk out of `rdf:type` from a bound instance to a class variable
/// gives each row once per class of its instance ([`expand`]). `None`: the step is
/// neither, or reads another graph than the default. The bool tells whether the step
/// expanded.
pub(crate) fn answer(
    table: &PairTable,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
    rows: &Table,
) -> Option<(Table, bool)> {
    if let Some(kept) = check(table, bgp, step, graph, rdf_type, rows) {
        return Some((kept, false));
    }
    expand(table, bgp, step, graph, rdf_type, rows).map(|rows| (rows, true))
}

/// The rows of a walk out of `rdf:type` (step `step` of `bgp`) from the bound instances of
/// `rows` to an unbound class variable: each row once per class of its instance, the class
/// as a new last column (as the step run at the instance's owner gives them). `None` where
/// the step is not such a walk.
fn expand(
    table: &PairTable,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
    rows: &Table,
) -> Option<Table> {
    let pattern = type_walk(bgp, step, graph, rdf_type)?;
    if step.kind != StepKind::Walk(Direction::Out) {
        return None;
    }
    let (Node::Var(instance), Node::Var(class)) = (pattern.subject, pattern.object) else {
        return None;
    };
    if instance == class || rows.column(class).is_some() {
        return None;
    }
    let instances = rows.column(instance)?;
    let mut selection: Vec<u32> = Vec::new();
    let mut classes: Vec<Id> = Vec::new();
    let instance_of = |row: usize| instances[row];
    for (row, &x) in instances.iter().enumerate() {
        table.prefetch_ahead(&instance_of, row, instances.len());
        if x == UNBOUND {
            continue;
        }
        for c in table.seconds(x) {
            selection.push(row as u32);
            classes.push(c);
        }
    }
    let mut expanded = rows.gather(&selection);
    expanded.vars.push(class);
    expanded.columns.push(classes);
    Some(expanded)
}

/// The pattern of step `step` of `bgp` when the step is a walk of `rdf:type` (in either
/// direction, not an intersection) over the default graph, whose memberships the table
/// holds.
fn type_walk<'b>(
    bgp: &'b Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
) -> Option<&'b quiver_sparql::bgp::Pattern> {
    let pattern = &bgp.patterns[step.pattern];
    let typed = matches!(pattern.predicate, Pred::Const(p) if Some(p) == rdf_type);
    (typed
        && graph == GraphRef::Default
        && step.partner.is_none()
        && matches!(step.kind, StepKind::Walk(_)))
    .then_some(pattern)
}

/// `rows` kept where step `step` of `bgp`, a check of `rdf:type` with both ends bound,
/// holds (`None`: the step is not such a check, or reads another graph than the default).
fn check(
    table: &PairTable,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
    rows: &Table,
) -> Option<Table> {
    let pattern = type_walk(bgp, step, graph, rdf_type)?;
    rows_with_pair(table, rows, pattern.subject, pattern.object)
}

/// The value of `node` in each row of `rows`: a constant's, or its column's (`None`: a
/// variable `rows` lacks).
pub(crate) fn values_of(rows: &Table, node: Node) -> Option<Box<dyn Fn(usize) -> Id + '_>> {
    match node {
        Node::Const(c) => Some(Box::new(move |_| c)),
        Node::Var(v) => rows.column(v).map(|column| {
            let column: &[Id] = column;
            Box::new(move |row: usize| column[row]) as Box<dyn Fn(usize) -> Id>
        }),
        Node::Absent => None,
    }
}

/// The rows of `rows` whose values of `first` and `second` are a pair of `table` (`None`:
/// `rows` lacks one of them). A row leaving either unbound has no pair.
pub(crate) fn rows_with_pair(
    table: &PairTable,
    rows: &Table,
    first: Node,
    second: Node,
) -> Option<Table> {
    let (first, second) = (values_of(rows, first)?, values_of(rows, second)?);
    let kept: Vec<u32> = (0..rows.rows)
        .filter(|&row| {
            table.prefetch_ahead(&first, row, rows.rows);
            let (a, b) = (first(row), second(row));
            a != UNBOUND && b != UNBOUND && table.contains(a, b)
        })
        .map(|row| row as u32)
        .collect();
    Some(rows.gather(&kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Membership agrees with a set of the pairs, for ids on both sides of every bucket's
    /// bounds, sparse and dense instances, and an empty table.
    #[test]
    fn membership_agrees_with_a_set_of_the_pairs() {
        assert!(!PairTable::new(Vec::new()).contains(0, 0));
        let mut seed = 7u64;
        let mut next = |bound: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % bound) as Id
        };
        for (instances, spread) in [(10u64, 1_000_000u64), (5000, 6000), (3, 4)] {
            let pairs: Vec<(Id, Id)> = (0..instances * 2)
                .map(|_| (next(spread), next(5)))
                .collect();
            let set: HashSet<(Id, Id)> = pairs.iter().copied().collect();
            let table = PairTable::new(pairs);
            assert_eq!(table.pairs().len(), set.len());
            for _ in 0..20_000 {
                let (x, c) = (next(spread + 10), next(6));
                assert_eq!(table.contains(x, c), set.contains(&(x, c)), "{x} {c}");
            }
            for &(x, c) in &set {
                assert!(table.contains(x, c));
            }
        }
    }

    /// A column checked row by row (its lookups ahead prefetched) keeps the rows a set of
    /// the pairs keeps, and a walk out of `rdf:type` gives each instance's classes, for
    /// columns shorter and longer than the prefetch distance, with unbound values.
    #[test]
    fn checks_and_walks_of_a_column_agree_with_a_set_of_the_pairs() {
        let pairs: Vec<(Id, Id)> = (0..3000 as Id).map(|i| (i * 7 % 5003, i % 4)).collect();
        let set: HashSet<(Id, Id)> = pairs.iter().copied().collect();
        let table = PairTable::new(pairs);
        let (instance, class) = (0, 1);
        for rows in [0, 1, 15, 16, 17, 31, 32, 33, 1000] {
            let value = |row: usize, bound: usize| match row % 11 {
                10 => UNBOUND,
                _ => ((row * 2654435761) % bound) as Id,
            };
            let instances: Vec<Id> = (0..rows).map(|row| value(row, 5100)).collect();
            let classes: Vec<Id> = (0..rows).map(|row| value(row / 3, 5)).collect();
            let both = Table {
                vars: vec![instance, class],
                columns: vec![instances.clone(), classes.clone()],
                rows,
            };
            let kept =
                rows_with_pair(&table, &both, Node::Var(instance), Node::Var(class)).unwrap();
            let expected: Vec<(Id, Id)> = instances
                .iter()
                .zip(&classes)
                .map(|(&x, &c)| (x, c))
                .filter(|pair| set.contains(pair))
                .collect();
            assert_eq!(pairs_of(&kept), expected, "{rows} rows checked");

            let one = Table {
                vars: vec![instance],
                columns: vec![instances.clone()],
                rows,
            };
            let mut walked = Vec::new();
            for &x in &instances {
                let mut of: Vec<Id> = set
                    .iter()
                    .filter(|&&(y, _)| y == x && x != UNBOUND)
                    .map(|&(_, c)| c)
                    .collect();
                of.sort_unstable();
                walked.extend(of.into_iter().map(|c| (x, c)));
            }
            let bgp = Bgp {
                patterns: vec![quiver_sparql::bgp::Pattern {
                    subject: Node::Var(instance),
                    predicate: Pred::Const(9),
                    object: Node::Var(class),
                    text: String::new(),
                }],
                equalities: Vec::new(),
            };
            let step = Step {
                pattern: 0,
                kind: StepKind::Walk(Direction::Out),
                estimate: 0.0,
                partner: None,
            };
            let expanded = expand(&table, &bgp, &step, GraphRef::Default, Some(9), &one).unwrap();
            assert_eq!(pairs_of(&expanded), walked, "{rows} rows walked");
        }
    }

    /// A two-column table's rows as pairs.
    fn pairs_of(table: &Table) -> Vec<(Id, Id)> {
        let (first, second) = (&table.columns[0], &table.columns[1]);
        first.iter().copied().zip(second.iter().copied()).collect()
    }
}
