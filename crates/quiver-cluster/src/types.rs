//! `rdf:type` membership replicated on every process, so that a type check runs where the
//! rows are (Wukong's replication of small, hot data).
//!
//! A partition holds the types of the vertices it owns, so a check such as LUBM's
//! `?x rdf:type ub:GraduateStudent`, with `?x` bound, ran at the owner of each `?x`: a hop
//! for every light query whose rows span the processes, and on heavy ones, rows moved only
//! to be dropped. When the cluster's type memberships fit a budget ([`BUDGET`]), every
//! process holds all of them, as `(instance, class)` pairs, sorted and indexed by
//! instance: 12 to 16 bytes per `rdf:type` triple of the default graph (more with 64-bit
//! ids). Such a check is then a filter applied where the rows are, before they are routed
//! (`message::route`), and never a step of its own; so is a walk out of `rdf:type` from a
//! bound instance (`?x a ?c`, `?x` bound: the classes of each row's instance).
//!
//! The table is exchanged once, when the cluster starts, through a small dataflow of its
//! own: every worker sends its partition's share (a class's instances that it owns) to the
//! first worker of every process, a few batches ahead of what they have taken in
//! ([`IN_FLIGHT`]), and each sorts them once every worker has sent all (timely's frontier)
//! and publishes the process's table. Until then, and on a process without one,
//! checks run at their owners as before: each worker decides from its own process's table,
//! so the processes never need to agree.

use std::sync::{Arc, OnceLock};

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pred};
use quiver_sparql::dataset::GraphRef;
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::{Direction, Store};
use timely::dataflow::channels::pact::ExchangeCore;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandleVec, ProbeHandle};

use crate::buffers::OneEach;

/// The most memory a process gives to the replicated memberships by default (a layout may
/// record another budget: `quiver partition --replication-budget`): past it, checks run at
/// their owners. LUBM-1000's 20 M type triples take 240 to 320 MB.
pub const BUDGET: u64 = 1 << 30;

/// Pairs sent in one message.
const BATCH: usize = 1 << 16;

/// Batches a worker may have sent beyond those every first worker has taken in. Timely has
/// no flow control of its own: a worker that sends its whole share at once serialises it
/// into its network buffers faster than they drain, and they grow to hold it all, and
/// keep buffers of that size for good.
const IN_FLIGHT: u64 = 4;

/// Every `(instance, class)` pair of `rdf:type` in the default graph, sorted, with a
/// bucket index over the instances' ids so that a check reads two neighbouring offsets and
/// the few pairs between them (a binary search over all the pairs made q7 on 2 processes
/// slower than moving its rows to their owners).
#[derive(Debug, Default)]
pub struct TypeTable {
    pairs: Vec<(Id, Id)>,
    /// `starts[b]`: the first pair whose instance is in bucket `b` (`instance >> shift`).
    starts: Vec<u32>,
    shift: u32,
}

/// A process's table, published by its first worker once complete.
pub(crate) type SharedTable = Arc<OnceLock<TypeTable>>;

impl TypeTable {
    fn new(mut pairs: Vec<(Id, Id)>) -> Self {
        pairs.sort_unstable();
        pairs.dedup();
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

    /// Whether `instance` is of class `class`.
    pub fn contains(&self, instance: Id, class: Id) -> bool {
        let bucket = (u64::from(instance) >> self.shift) as usize;
        let (Some(&start), Some(&end)) = (self.starts.get(bucket), self.starts.get(bucket + 1))
        else {
            return false;
        };
        self.pairs[start as usize..end as usize].contains(&(instance, class))
    }

    /// The classes of `instance`, in order.
    pub fn classes(&self, instance: Id) -> impl Iterator<Item = Id> + '_ {
        let bucket = (u64::from(instance) >> self.shift) as usize;
        let pairs = match (self.starts.get(bucket), self.starts.get(bucket + 1)) {
            (Some(&start), Some(&end)) => &self.pairs[start as usize..end as usize],
            _ => &[],
        };
        pairs
            .iter()
            .filter(move |&&(x, _)| x == instance)
            .map(|&(_, class)| class)
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
    budget > 0 && triples.saturating_mul(std::mem::size_of::<(Id, Id)>() as u64 + 8) <= budget
}

/// Step `step` of `bgp` over `rows` answered from the replicated memberships, where the
/// rows are: a check of `rdf:type` with both ends bound keeps the rows where it holds
/// ([`check`]), and a walk out of `rdf:type` from a bound instance to a class variable
/// gives each row once per class of its instance ([`expand`]). `None`: the step is
/// neither, or reads another graph than the default. The bool tells whether the step
/// expanded.
pub(crate) fn answer(
    table: &TypeTable,
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
    table: &TypeTable,
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
    for (row, &x) in instances.iter().enumerate() {
        if x == UNBOUND {
            continue;
        }
        for c in table.classes(x) {
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
    table: &TypeTable,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
    rows: &Table,
) -> Option<Table> {
    let pattern = type_walk(bgp, step, graph, rdf_type)?;
    let values = |node: Node| -> Option<Box<dyn Fn(usize) -> Id + '_>> {
        match node {
            Node::Const(c) => Some(Box::new(move |_| c)),
            Node::Var(v) => rows.column(v).map(|column| {
                let column: &[Id] = column;
                Box::new(move |row: usize| column[row]) as Box<dyn Fn(usize) -> Id>
            }),
            Node::Absent => None,
        }
    };
    let instance = values(pattern.subject)?;
    let class = values(pattern.object)?;
    let kept: Vec<u32> = (0..rows.rows)
        .filter(|&row| {
            let (x, c) = (instance(row), class(row));
            x != UNBOUND && c != UNBOUND && table.contains(x, c)
        })
        .map(|row| row as u32)
        .collect();
    Some(rows.gather(&kept))
}

/// The `(instance, class)` pairs whose instance `part` owns: its share of each class's
/// instances, in the default graph.
fn owned_pairs(part: &Store, rdf_type: PredId) -> Vec<(Id, Id)> {
    let graph = part.graph();
    let mut pairs = Vec::new();
    for &class in graph.predicate_objects(rdf_type) {
        pairs.extend(
            graph
                .get(class, rdf_type, Direction::In)
                .iter()
                .map(|&instance| (instance, class)),
        );
    }
    pairs
}

/// One message of the exchange: pairs for the first worker of a process.
type Batch = (u32, Vec<(Id, Id)>);

/// What the gathering operator sends on: nothing (its output's frontier is what the
/// senders wait on).
type Nothing = timely::container::CapacityContainerBuilder<Vec<()>>;

/// Builds the exchange on a worker: when `wanted`, it sends its partition's pairs to every
/// process's first worker (`firsts`); a first worker publishes its process's table in
/// `table` once every worker has sent all.
pub(crate) fn build(
    worker: &mut timely::worker::Worker,
    part: &Store,
    rdf_type: Option<PredId>,
    firsts: &[u32],
    table: SharedTable,
    wanted: bool,
) {
    let mut input: InputHandleVec<u64, Batch> = InputHandleVec::new();
    let publishes = wanted && firsts.contains(&(worker.index() as u32));
    let mut gathered: Vec<(Id, Id)> = Vec::new();
    let probe = ProbeHandle::new();
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary_frontier::<Nothing, _, _, _>(
                // Each batch a message of its own (512 KiB): gathered, the memberships
                // left every process's network buffers at the size of its whole share
                // for good (LUBM-100 on 2 processes: 2 × 16 MiB mapped, 18 MiB
                // resident).
                ExchangeCore::<OneEach<Batch>, _>::new_core(|batch: &Batch| u64::from(batch.0)),
                "Types",
                move |_, _| {
                    move |(input, frontier), _output| {
                        input.for_each(|_, batches| {
                            for (_, pairs) in batches.drain(..) {
                                gathered.extend(pairs);
                            }
                        });
                        if publishes && frontier.frontier().is_empty() && table.get().is_none() {
                            let _ = table.set(TypeTable::new(std::mem::take(&mut gathered)));
                            // Gathering the pairs grew a list by doubling, and
                            // sorting them, on the heap: the blocks it freed go back
                            // (LUBM-100 on 2 processes: ~40 MiB a serving process
                            // kept for nothing).
                            quiver_model::memory::trim_heap();
                        }
                    }
                },
            )
            .probe_with(&probe);
    });
    if let (true, Some(rdf_type)) = (wanted, rdf_type) {
        let pairs = owned_pairs(part, rdf_type);
        let batches = firsts
            .iter()
            .flat_map(|&to| pairs.chunks(BATCH).map(move |chunk| (to, chunk)));
        // Batch k at time k: once the probe passes k − IN_FLIGHT, every first worker has
        // taken in the batches sent before it.
        for (k, (to, chunk)) in (0u64..).zip(batches) {
            input.send((to, chunk.to_vec()));
            input.advance_to(k + 1);
            while k >= IN_FLIGHT && probe.less_equal(&(k - IN_FLIGHT)) {
                worker.step();
            }
        }
    }
    // Closed at once: the frontier passes once every worker's pairs have arrived.
    drop(input);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Membership agrees with a set of the pairs, for ids on both sides of every bucket's
    /// bounds, sparse and dense instances, and an empty table.
    #[test]
    fn membership_agrees_with_a_set_of_the_pairs() {
        assert!(!TypeTable::new(Vec::new()).contains(0, 0));
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
            let table = TypeTable::new(pairs);
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
}
