//! A worker's side of an intersection whose partner lists live elsewhere: asking their
//! owners for them (in pieces, once per distinct value, or splitting the intersection where
//! that moves fewer rows), answering other workers' asks, and intersecting a batch of rows
//! once every owner answered ([`crate::fetch`]).

use std::sync::Arc;

use quiver_model::Id;
use quiver_sparql::bgp::{Node, Pred};
use quiver_sparql::context::QueryState;
use quiver_sparql::dataset::graph_index;
use quiver_sparql::exec::bgp::explore::{run_intersection, run_step_bounded};
use quiver_sparql::partitions::{Exchanged, WorkerRole};
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::Table;
use quiver_store::partition::owner;

use crate::fetch::{List, Waiting};
use crate::message::{to_owners, Carried, Failure, Message, Payload, Plan, PlanCopy, PIECE_BYTES};
use crate::pieces::{answer_pieces, cut, Piece};
use crate::route::{distinct_values, place, source, Placement};

use super::{context, failed, in_morsels, partner_of, read, Worker};

/// The runs over which [`Worker::cheaper_split`] weighs lists that its process will keep
/// against rows a split moves on every run. Kept lists serve every later batch and query
/// until the cache starts afresh, which lists of at most a quarter of it leave room for.
/// So a query asked once fetches at most this many times the ids its split would have
/// moved (a quarter of the cache at most), and a query asked again moves no list. LUBM's
/// q1 and q3 need it this high: a university's alumni list is about 5 to 21 times the ids
/// its departments' members move split, on LUBM-2560 to LUBM-10240 (their universities of
/// degree are the first 1,000 whatever the size, so the lists grow with it).
const KEPT_RUNS: f64 = 32.0;

impl Worker {
    /// One owner's answer to a fetch: its lists are kept, and once every owner answered,
    /// the batch's rows are intersected; what every fetch and answer exchanged goes on
    /// with them.
    pub(super) fn lists_arrived(
        &mut self,
        plan: &Plan,
        run: Option<Step>,
        (batch, piece): (u64, Piece),
        lists: Vec<(Id, Vec<Id>)>,
        carried: Carried,
        state: &QueryState,
    ) -> (Vec<Message>, Carried) {
        let lists: Vec<(Id, List)> = lists
            .into_iter()
            .map(|(value, list)| (value, List::from(list)))
            .collect();
        if let (true, Some((q, direction, _))) = (
            plan.keeps_lists(),
            run.as_ref().and_then(|r| partner_of(&plan.bgp, r)),
        ) {
            let keys = lists
                .iter()
                .map(|(value, list)| ((plan.graph, q, direction, *value), list));
            self.lists.keep(keys);
        }
        match self.stash.answer(batch, lists, carried, piece) {
            Some(mut waiting) => {
                let carried = std::mem::take(&mut waiting.carried);
                (self.intersect(waiting, state), carried)
            }
            None => (Vec::new(), Carried::default()),
        }
    }

    /// Asks the owners of the partner lists `waiting`'s rows need and that neither this
    /// worker's process holds nor it kept (those kept go with the rows); with none to
    /// ask, intersects at once.
    pub(super) fn fetch(&mut self, mut waiting: Waiting, state: &QueryState) -> Vec<Message> {
        let Some((q, direction, node)) = partner_of(&waiting.plan.bgp, &waiting.run) else {
            let error =
                Failure::Other("an intersection's partner has no constant predicate".into());
            return vec![failed(waiting.query, &waiting.plan, error)];
        };
        // A merge of graphs is read from this worker's own share of it only, so the
        // lists of the process's other partitions are fetched then, and none are kept.
        let in_process = waiting.plan.keeps_lists();
        let graph = waiting.plan.graph;
        let mut elsewhere: Vec<(u32, Id)> = distinct_values(node, &waiting.rows)
            .into_iter()
            .filter_map(|value| {
                let at = owner(value, self.workers);
                let here = at == self.index || (in_process && self.lists.reads(at).is_some());
                (!here).then_some((at, value))
            })
            .collect();
        if in_process && !elsewhere.is_empty() {
            let keys = elsewhere.iter().map(|&(_, v)| (graph, q, direction, v));
            let kept = self.lists.kept(keys);
            // Most are kept on a query's later runs: one allocation, never a rehash.
            waiting.lists.reserve(elsewhere.len());
            elsewhere = elsewhere
                .into_iter()
                .zip(kept)
                .filter_map(|((at, value), list)| match list {
                    Some(list) => {
                        waiting.lists.insert(value, list);
                        None
                    }
                    None => Some((at, value)),
                })
                .collect();
        }
        let mut asked: Vec<Vec<Id>> = vec![Vec::new(); self.workers as usize];
        for (at, value) in elsewhere {
            asked[at as usize].push(value);
        }
        let asks: Vec<(u32, Vec<Id>)> = asked
            .into_iter()
            .enumerate()
            .filter(|(_, values)| !values.is_empty())
            .map(|(to, values)| (to as u32, values))
            .collect();
        if asks.is_empty() {
            return self.intersect(waiting, state);
        }
        if self.cheaper_split(&waiting, &asks) {
            return self.split(waiting, state);
        }
        let asks = fetch_pieces(asks);
        waiting.answers = asks.len();
        let (query, step, run, plan) = (
            waiting.query,
            waiting.step,
            waiting.run,
            Arc::clone(&waiting.plan),
        );
        let batch = self.stash.park(waiting);
        asks.into_iter()
            .map(|(to, values)| Message {
                query,
                step,
                to,
                from: 0,
                plan: Arc::clone(&plan),
                plan_copy: PlanCopy::Sent,
                run: Some(run),
                payload: Payload::Fetch {
                    batch,
                    from: self.index,
                    values,
                },
                exchanged: Exchanged::default(),
                weight: None,
                truncated: false,
                trace: Vec::new(),
            })
            .collect()
    }

    /// Whether walking `waiting`'s rows whole and checking the partner where each target
    /// lives moves fewer ids than fetching the partner lists `asks` names. A walked row
    /// whose target another worker owns moves with all its columns; a list fetched moves
    /// its ids. The walk's fan-out is known here, and a remote list is taken to be as long
    /// as the partner lists this partition holds for the rows' other values, or with none
    /// here, as the predicate's average degree in this partition's statistics (each
    /// partition's share of a predicate's edges and of its sources are alike, so their
    /// ratio is the whole store's). A list fetched is kept for the process's later
    /// batches and queries, where a split moves its rows again on every run: lists that
    /// fit a quarter of the cache are weighed against the split's rows over
    /// [`KEPT_RUNS`] runs.
    fn cheaper_split(&mut self, waiting: &Waiting, asks: &[(u32, Vec<Id>)]) -> bool {
        let (Some((q, direction, node)), StepKind::Walk(walk_direction)) = (
            partner_of(&waiting.plan.bgp, &waiting.run),
            waiting.run.kind,
        ) else {
            return false;
        };
        let pattern = &waiting.plan.bgp.patterns[waiting.run.pattern];
        let Pred::Const(p) = pattern.predicate else {
            return false;
        };
        let share = self.share(&waiting.plan);
        let graph = read(&self.part, &share, &waiting.plan);
        let (mut held, mut held_entries) = (0usize, 0usize);
        for value in distinct_values(node, &waiting.rows) {
            if owner(value, self.workers) == self.index {
                held += 1;
                held_entries += graph.get(value, q, direction).len();
            }
        }
        let length = if held > 0 {
            held_entries as f64 / held as f64
        } else {
            self.part.predicate_stats(q).avg_degree(direction)
        };
        let remote: usize = asks.iter().map(|(_, values)| values.len()).sum();
        let fetched = remote as f64 * (length + 1.0);
        let walked: usize = match source(pattern, walk_direction) {
            Node::Var(v) => waiting.rows.column(v).map_or(0, |column| {
                column
                    .iter()
                    .map(|&a| graph.degree(a, p, walk_direction))
                    .sum()
            }),
            Node::Const(a) => waiting.rows.rows * graph.degree(a, p, walk_direction),
            Node::Absent => 0,
        };
        // The walked rows whose target another worker owns move to their check, each with
        // its columns and the walk's new one.
        let width = waiting.rows.columns.len() as f64 + 1.0;
        let moved = walked as f64 * width * f64::from(self.workers - 1) / f64::from(self.workers);
        let kept = fetched <= self.lists.capacity() as f64 / 4.0;
        let runs = if waiting.plan.keeps_lists() && kept {
            KEPT_RUNS
        } else {
            1.0
        };
        moved * runs < fetched
    }

    /// Runs `waiting`'s intersection as its walk here, then sends the rows to check the
    /// partner pattern where each target lives (at the same step, the check as `run`).
    fn split(&mut self, waiting: Waiting, state: &QueryState) -> Vec<Message> {
        let Waiting {
            query,
            step,
            run,
            plan,
            rows,
            truncated,
            ..
        } = waiting;
        let Some((partner, partner_direction)) = run.partner else {
            return vec![failed(query, &plan, Failure::Other("no partner".into()))];
        };
        let walk = Step {
            partner: None,
            ..run
        };
        let share = self.share(&plan);
        let ctx = context(&self.part, read(&self.part, &share, &plan), state);
        let (rows, cut) = match run_step_bounded(&ctx, &plan.bgp, &walk, &rows, plan.cap()) {
            Ok(walked) => walked,
            Err(error) => return vec![failed(query, &plan, error.into())],
        };
        self.produced += rows.rows as u64;
        self.role = Some(WorkerRole::Walked);
        let check = Step::new(partner, StepKind::Walk(partner_direction), run.estimate);
        let Placement::Owner(node) =
            place(&plan.bgp, &check, &rows, plan.rdf_type, &plan.classes).0
        else {
            return vec![failed(
                query,
                &plan,
                Failure::Other("a check runs at an owner".into()),
            )];
        };
        let message = |to: u32, rows: Table| Message {
            query,
            step,
            to,
            from: 0,
            plan: Arc::clone(&plan),
            plan_copy: PlanCopy::Sent,
            run: Some(check),
            payload: Payload::Rows(Ok(rows)),
            exchanged: Exchanged::default(),
            weight: None,
            truncated: truncated || cut,
            trace: Vec::new(),
        };
        to_owners(rows, node, self.workers, plan.coordinator, message)
    }

    /// Answers another worker's fetch with this partition's lists.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer_fetch(
        &mut self,
        query: u64,
        step: u32,
        plan: &Arc<Plan>,
        run: Option<Step>,
        batch: u64,
        from: u32,
        values: Vec<Id>,
    ) -> Vec<Message> {
        let share = self.share(plan);
        let graph = read(&self.part, &share, plan);
        let lists: Vec<(Id, Vec<Id>)> = match run.as_ref().and_then(|r| partner_of(&plan.bgp, r)) {
            Some((q, direction, _)) => values
                .into_iter()
                .map(|v| (v, graph.get(v, q, direction).to_vec()))
                .collect(),
            None => Vec::new(),
        };
        self.produced += lists.iter().map(|(_, list)| list.len() as u64).sum::<u64>();
        // In numbered pieces, as rows are cut (`message::PIECE_BYTES`); the asker counts
        // them.
        const ID: usize = std::mem::size_of::<Id>();
        let bytes = |(_, list): &(Id, Vec<Id>)| ID * (list.len() + 1) + 8;
        answer_pieces(lists, bytes, PIECE_BYTES)
            .map(|(lists, piece)| Message {
                query,
                step,
                to: from,
                from: 0,
                plan: Arc::clone(plan),
                plan_copy: PlanCopy::Sent,
                run,
                payload: Payload::Lists {
                    batch,
                    lists,
                    piece,
                },
                exchanged: Exchanged::default(),
                weight: None,
                truncated: false,
                trace: Vec::new(),
            })
            .collect()
    }

    /// Runs `waiting`'s intersection, every partner list at hand, and routes its rows on.
    fn intersect(&mut self, waiting: Waiting, state: &QueryState) -> Vec<Message> {
        let Waiting {
            query,
            step,
            run,
            plan,
            rows,
            truncated,
            lists,
            ..
        } = waiting;
        let Some((q, direction, _)) = partner_of(&plan.bgp, &run) else {
            return vec![failed(query, &plan, Failure::Other("no partner".into()))];
        };
        let share = self.share(&plan);
        let graph = read(&self.part, &share, &plan);
        let in_process = plan.keeps_lists();
        let (index, workers, process) = (self.index, self.workers, &*self.lists);
        // Every list is at hand: this partition's, fetched or found kept for these rows,
        // or else another of this process's partitions' (`fetch` read it in place).
        let partner_lists = |value: Id| -> &[Id] {
            let at = owner(value, workers);
            if at == index {
                return graph.get(value, q, direction);
            }
            if let Some(list) = lists.get(&value) {
                return list;
            }
            match process.part(at).filter(|_| in_process) {
                Some(part) => graph_index(part, plan.graph).get(value, q, direction),
                None => &[],
            }
        };
        let ctx = context(&self.part, graph, state);
        let result = in_morsels(self.threads, &rows, plan.cap(), |rows| {
            run_intersection(&ctx, &plan.bgp, &run, rows, plan.cap(), &partner_lists)
        });
        self.forward(query, step, &plan, result, truncated)
    }
}

/// Each owner's values to ask cut into pieces of at most [`PIECE_BYTES`] (as rows are),
/// each a fetch of its own that the owner answers apart (in numbered pieces): the waiting
/// rows wait for as many answers as there are pieces.
pub(super) fn fetch_pieces(asks: Vec<(u32, Vec<Id>)>) -> Vec<(u32, Vec<Id>)> {
    asks.into_iter()
        .flat_map(|(to, values)| {
            cut(values, |_| std::mem::size_of::<Id>(), PIECE_BYTES)
                .into_iter()
                .map(move |piece| (to, piece))
        })
        .collect()
}
