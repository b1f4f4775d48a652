//! Small, hot data replicated on every process, so that steps reading it run where the
//! rows are (Wukong's replication of small data): the `rdf:type` memberships
//! ([`crate::types`]) and the edges of the small predicates.
//!
//! A partition holds the records of the vertices it owns, so a step of a small predicate
//! such as LUBM's `?x ub:subOrganizationOf ?y` (32 K triples of 13.4 M at LUBM-100) ran at
//! the owner of each row's `?x`: a hop for every light query whose rows reach it from
//! another process. A predicate holding at most [`SMALL`]th of the default graph's triples
//! is replicated, smallest first, while the replicated predicates hold at most
//! [`ALL_SMALL`]th of the triples together and, with the memberships, fit the layout's
//! replication budget ([`choose`]). Each is held twice, as `(subject, object)` and
//! `(object, subject)` pairs in [`PairTable`]s (24 to 32 bytes per triple with 32-bit ids).
//! A walk of such a predicate from a bound end, or a check of both ends, is then answered
//! before the rows are routed (`message::route`), and never a step of its own.
//!
//! Everything is exchanged once, when the cluster starts, through a small dataflow of its
//! own: every worker sends its partition's share (the memberships of the instances it
//! owns, the edges out of the subjects it owns) to the first worker of every process, a
//! few batches ahead of what each has taken in ([`IN_FLIGHT_PER_PROCESS`]), and each
//! builds the tables once every worker has sent all (timely's frontier) and publishes
//! them for its process. Until then, and on a process without them, the steps run at
//! their owners as before: each worker decides from its own process's tables, so the
//! processes never need to agree. At a cluster's next start, every process reads the
//! copy it kept of them instead, when all hold one of the partitions as they are
//! ([`crate::kept_replicas`]).

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
use crate::types::PairTable;

/// A predicate holding at most this fraction (1 / `SMALL`) of the default graph's triples
/// may be replicated.
pub const SMALL: u64 = 64;

/// The replicated predicates hold at most this fraction (1 / `ALL_SMALL`) of the triples
/// together: many small predicates must not add up to a copy of the graph.
pub const ALL_SMALL: u64 = 8;

/// The bytes a replicated edge takes at most: two pairs and two bucket offsets.
const EDGE_BYTES: u64 = 2 * (std::mem::size_of::<(Id, Id)>() as u64 + 8);

/// A walk answered where the rows are gives at most this many rows, or no more than it was
/// given: past it, the rows go to the walk's owners as before, where it runs in parallel
/// and the steps after it find the rows at the owners (a walk that multiplied the rows
/// here would send every one of them on, where the owners would have sent on only what
/// they were given). Below it, a light query saves a hop between processes, which costs
/// more than moving a few thousand rows.
const GROWTH: usize = 4096;

/// Pairs sent in one message.
const BATCH: usize = 1 << 16;

/// Batches a worker may have sent to each process beyond those every first worker has
/// taken in. Timely has no flow control of its own: a worker that sends its whole share at
/// once serialises it into its network buffers faster than they drain, and they grow to
/// hold it all, and keep buffers of that size for good. The window is counted over all
/// the processes (each batch waits for the frontier, a round of timely's progress across
/// the cluster), and a worker sends each chunk of its share to every process in turn, so
/// that each process has about this many batches of it on their way. It was 4 batches
/// over all the processes: with 16 processes, a worker's LUBM-1000 memberships took 88
/// rounds of progress, and 16 processes on 2 cores took about a minute to start.
const IN_FLIGHT_PER_PROCESS: u64 = 4;

/// What a cluster replicates: decided alike on every process, from the same statistics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Replication {
    /// The `rdf:type` memberships.
    pub types: bool,
    /// The edges of these predicates (never `rdf:type`), in the default graph.
    pub predicates: Vec<PredId>,
}

impl Replication {
    /// Nothing replicated.
    pub const NONE: Replication = Replication {
        types: false,
        predicates: Vec::new(),
    };

    /// Whether anything is.
    pub fn any(&self) -> bool {
        self.types || !self.predicates.is_empty()
    }
}

/// What to replicate, given each predicate's triples in the default graph (by predicate
/// id; `u64::MAX` where unknown), under `budget` bytes: the memberships if they fit
/// ([`crate::types::fits`]), then the small predicates (see the module doc) in the budget
/// they leave.
pub fn choose(triples: &[u64], rdf_type: Option<PredId>, budget: u64) -> Replication {
    let type_triples = rdf_type.map_or(0, |p| triples.get(p as usize).copied().unwrap_or(0));
    let types = rdf_type.is_some() && crate::types::fits(type_triples, budget);
    let mut left = match types {
        true => budget.saturating_sub(crate::types::bytes_at_most(type_triples)),
        false => budget,
    };
    if triples.contains(&u64::MAX) {
        return Replication {
            types,
            predicates: Vec::new(),
        };
    }
    let total: u64 = triples.iter().sum();
    let mut small: Vec<(u64, PredId)> = triples
        .iter()
        .enumerate()
        .map(|(p, &count)| (count, p as PredId))
        .filter(|&(count, p)| count > 0 && count <= total / SMALL && Some(p) != rdf_type)
        .collect();
    small.sort_unstable();
    let mut together = 0u64;
    let mut predicates = Vec::new();
    for (count, p) in small {
        let bytes = count.saturating_mul(EDGE_BYTES);
        if together + count > total / ALL_SMALL || bytes > left {
            break;
        }
        together += count;
        left -= bytes;
        predicates.push(p);
    }
    predicates.sort_unstable();
    Replication { types, predicates }
}

/// One replicated predicate's edges, both ways.
#[derive(Debug)]
pub struct Edges {
    pub predicate: PredId,
    /// `(subject, object)` pairs.
    pub out: PairTable,
    /// `(object, subject)` pairs.
    pub inward: PairTable,
}

/// A process's replicated data, published by its first worker once complete.
#[derive(Debug, Default)]
pub struct Replicas {
    pub types: Option<PairTable>,
    /// By predicate id.
    pub edges: Vec<Edges>,
}

impl Replicas {
    /// The bytes they take.
    pub fn bytes(&self) -> usize {
        self.types.as_ref().map_or(0, PairTable::bytes)
            + self
                .edges
                .iter()
                .map(|e| e.out.bytes() + e.inward.bytes())
                .sum::<usize>()
    }

    /// The edges of `predicate`, if replicated.
    fn edges(&self, predicate: PredId) -> Option<&Edges> {
        self.edges
            .binary_search_by_key(&predicate, |e| e.predicate)
            .ok()
            .map(|i| &self.edges[i])
    }
}

/// A process's replicas, once exchanged.
pub(crate) type SharedReplicas = Arc<OnceLock<Replicas>>;

/// What a first worker does with its process's replicas, gathered, before it publishes
/// them (keeps a copy: [`crate::kept_replicas`]).
pub(crate) type BeforePublish = Box<dyn FnOnce(&Replicas)>;

/// How a step was answered from the replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// A check: rows kept or dropped.
    Checked,
    /// A walk out of `rdf:type`: each row once per class of its instance.
    Typed,
    /// A walk of a replicated predicate: each row once per neighbour.
    Walked,
}

/// Step `step` of `bgp` over `rows` answered from the replicas, where the rows are (see
/// [`crate::types::answer`] for `rdf:type`, [`walk`] for the replicated predicates).
/// `None`: the step reads nothing replicated, or another graph than the default.
pub(crate) fn answer(
    replicas: &Replicas,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rdf_type: Option<PredId>,
    rows: &Table,
) -> Option<(Table, Answered)> {
    if let Some(types) = &replicas.types {
        if let Some((rows, expanded)) =
            crate::types::answer(types, bgp, step, graph, rdf_type, rows)
        {
            return Some((
                rows,
                match expanded {
                    true => Answered::Typed,
                    false => Answered::Checked,
                },
            ));
        }
    }
    walk(replicas, bgp, step, graph, rows)
}

/// A walk (not an intersection) of a replicated predicate over the default graph, from an
/// end that is a constant or bound in `rows`: where the other end is too, the rows where
/// the edge is (a check); where it is a variable `rows` lacks, each row once per neighbour,
/// the neighbour as a new last column (as the step run at the owner gives them). A row
/// whose end is unbound matches nothing. `None` too when the walk would give more rows than
/// [`GROWTH`] allows.
fn walk(
    replicas: &Replicas,
    bgp: &Bgp,
    step: &Step,
    graph: GraphRef,
    rows: &Table,
) -> Option<(Table, Answered)> {
    let StepKind::Walk(direction) = step.kind else {
        return None;
    };
    let pattern = &bgp.patterns[step.pattern];
    let (Pred::Const(predicate), GraphRef::Default, None) =
        (pattern.predicate, graph, step.partner)
    else {
        return None;
    };
    let edges = replicas.edges(predicate)?;
    let (from, to, table) = match direction {
        Direction::Out => (pattern.subject, pattern.object, &edges.out),
        Direction::In => (pattern.object, pattern.subject, &edges.inward),
    };
    if let Some(kept) = crate::types::rows_with_pair(table, rows, from, to) {
        return Some((kept, Answered::Checked));
    }
    let (from, Node::Var(to)) = (crate::types::values_of(rows, from)?, to) else {
        return None;
    };
    let most = rows.rows.max(GROWTH);
    let mut selection: Vec<u32> = Vec::new();
    let mut reached: Vec<Id> = Vec::new();
    for row in 0..rows.rows {
        table.prefetch_ahead(&from, row, rows.rows);
        let a = from(row);
        if a == UNBOUND {
            continue;
        }
        for b in table.seconds(a) {
            selection.push(row as u32);
            reached.push(b);
        }
        if reached.len() > most {
            return None;
        }
    }
    let mut walked = rows.gather(&selection);
    walked.vars.push(to);
    walked.columns.push(reached);
    Some((walked, Answered::Walked))
}

/// The pairs of table `table` (0: the memberships `(instance, class)`; `k + 1`: the `k`th
/// replicated predicate's `(subject, object)`) that `part`, partition `index` of
/// `partitions`, owns: its share of each class's instances, the edges out of its subjects.
fn owned_pairs(
    part: &Store,
    (index, partitions): (u32, u32),
    rdf_type: Option<PredId>,
    table: usize,
    replication: &Replication,
) -> Vec<(Id, Id)> {
    let graph = part.graph();
    let mut pairs = Vec::new();
    match table.checked_sub(1) {
        None => {
            let Some(rdf_type) = rdf_type else {
                return pairs;
            };
            for &class in graph.predicate_objects(rdf_type) {
                pairs.extend(
                    graph
                        .get(class, rdf_type, Direction::In)
                        .iter()
                        .map(|&instance| (instance, class)),
                );
            }
        }
        Some(k) => {
            let predicate = replication.predicates[k];
            for &subject in graph.predicate_subjects(predicate) {
                if quiver_store::partition::owner(subject, partitions) != index {
                    continue;
                }
                pairs.extend(
                    graph
                        .get(subject, predicate, Direction::Out)
                        .iter()
                        .map(|&object| (subject, object)),
                );
            }
        }
    }
    pairs
}

/// One message of the exchange: pairs of a table for the first worker of a process.
type Batch = (u32, u32, Vec<(Id, Id)>);

/// What the gathering operator sends on: nothing (its output's frontier is what the
/// senders wait on).
type Nothing = timely::container::CapacityContainerBuilder<Vec<()>>;

/// Builds the exchange on a worker: it sends its partition's pairs of what `replication`
/// names to every process's first worker (`firsts`); a first worker publishes its
/// process's replicas in `replicas` once every worker has sent all, after `before`. With
/// `kept`, every process has its replicas already (read from the copy it kept,
/// [`crate::kept_replicas`]): nothing is sent.
pub(crate) fn build(
    worker: &mut timely::worker::Worker,
    part: &Store,
    rdf_type: Option<PredId>,
    firsts: &[u32],
    (replicas, mut before): (SharedReplicas, Option<BeforePublish>),
    (replication, kept): (&Replication, bool),
) {
    let wanted = replication.any();
    let mut input: InputHandleVec<u64, Batch> = InputHandleVec::new();
    let publishes = wanted && firsts.contains(&(worker.index() as u32));
    let tables = 1 + replication.predicates.len();
    let mut gathered: Vec<Vec<(Id, Id)>> = vec![Vec::new(); tables];
    let probe = ProbeHandle::new();
    let publish = replication.clone();
    worker.dataflow::<u64, _, _>(|scope| {
        scope
            .input_from(&mut input)
            .unary_frontier::<Nothing, _, _, _>(
                // Each batch a message of its own (512 KiB): gathered, the memberships
                // left every process's network buffers at the size of its whole share
                // for good (LUBM-100 on 2 processes: 2 × 16 MiB mapped, 18 MiB
                // resident).
                ExchangeCore::<OneEach<Batch>, _>::new_core(|batch: &Batch| u64::from(batch.0)),
                "Replicas",
                move |_, _| {
                    move |(input, frontier), _output| {
                        input.for_each(|_, batches| {
                            for (_, table, pairs) in batches.drain(..) {
                                if let Some(into) = gathered.get_mut(table as usize) {
                                    into.extend(pairs);
                                }
                            }
                        });
                        if publishes && frontier.frontier().is_empty() && replicas.get().is_none() {
                            let mut tables = std::mem::take(&mut gathered).into_iter();
                            let types = tables.next().unwrap_or_default();
                            let edges = publish
                                .predicates
                                .iter()
                                .zip(tables)
                                .map(|(&predicate, pairs)| {
                                    let inward = pairs.iter().map(|&(s, o)| (o, s)).collect();
                                    Edges {
                                        predicate,
                                        out: PairTable::new(pairs),
                                        inward: PairTable::new(inward),
                                    }
                                })
                                .collect();
                            let gathered = Replicas {
                                types: publish.types.then(|| PairTable::new(types)),
                                edges,
                            };
                            if let Some(before) = before.take() {
                                before(&gathered);
                            }
                            let _ = replicas.set(gathered);
                            // Gathering the pairs grew lists by doubling, and sorting
                            // them, on the heap: the blocks it freed go back (LUBM-100 on
                            // 2 processes: ~40 MiB a serving process kept for nothing).
                            quiver_model::memory::trim_heap();
                        }
                    }
                },
            )
            .probe_with(&probe);
    });
    if wanted && !kept {
        let at = (worker.index() as u32, worker.peers() as u32);
        let mut k = 0u64;
        for table in 0..tables {
            if table == 0 && !replication.types {
                continue;
            }
            let pairs = owned_pairs(part, at, rdf_type, table, replication);
            let batches = pairs
                .chunks(BATCH)
                .flat_map(|chunk| firsts.iter().map(move |&to| (to, chunk)));
            // Batch k at time k: once the probe passes k − in_flight, every first worker
            // has taken in the batches sent before it.
            let in_flight = IN_FLIGHT_PER_PROCESS * firsts.len().max(1) as u64;
            for (to, chunk) in batches {
                input.send((to, table as u32, chunk.to_vec()));
                input.advance_to(k + 1);
                while k >= in_flight && probe.less_equal(&(k - in_flight)) {
                    worker.step();
                }
                k += 1;
            }
        }
    }
    // Closed at once: the frontier passes once every worker's pairs have arrived.
    drop(input);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Predicates by size: 2 is `rdf:type`. The small ones are taken smallest first, within
    /// a sixty-fourth each, an eighth together, and the budget.
    #[test]
    fn the_smallest_predicates_are_chosen_within_the_bounds() {
        // 6,400 triples: a predicate of at most 100 is small, 800 together.
        let mut triples = vec![5000, 90, 600, 100, 80, 101, 0, 29];
        triples.push(6400 - triples.iter().sum::<u64>());
        let chosen = choose(&triples, Some(2), 1 << 30);
        assert!(chosen.types);
        assert_eq!(chosen.predicates, vec![1, 3, 4, 7]);
        // A budget for the types and the two smallest only.
        let budget = crate::types::bytes_at_most(600) + (29 + 80) * EDGE_BYTES;
        let chosen = choose(&triples, Some(2), budget);
        assert_eq!((chosen.types, chosen.predicates), (true, vec![4, 7]));
        // No budget: nothing; unknown sizes: the types only, if they fit.
        assert_eq!(choose(&triples, Some(2), 0), Replication::NONE);
        triples[0] = u64::MAX;
        assert!(choose(&triples, Some(2), 1 << 30).predicates.is_empty());
        // Many small predicates stop at an eighth together.
        let many = vec![50u64; 128];
        assert_eq!(choose(&many, None, 1 << 30).predicates.len(), 16);
    }
}
