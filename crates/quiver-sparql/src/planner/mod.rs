//! The cost-based planner: orders the patterns of a basic graph pattern into exploration
//! steps.
//!
//! A plan is a list of steps over patterns: `Walk(Out)` goes from a pattern's subject to
//! its object, `Walk(In)` from object to subject, `Index(dir)` lists every subject (In) or
//! object (Out) of a predicate, `Scan` enumerates every triple. Whether a walk expands
//! (binds its target) or checks (target already known) is decided by what is bound when
//! it runs. Candidate starts are every walk from a constant (exact sizes are read from the
//! index: a constant's neighbour list, a class's instances) and every predicate index;
//! from each, the plan grows greedily by the step that leaves the fewest expected rows
//! (checks first, as they only remove rows), and the start whose plan has the smallest
//! total of intermediate rows wins. With patterns in the dozens at most, this takes
//! microseconds.
//!
//! Greedy growth is myopic: a step that multiplies rows a little (a product's five types)
//! is taken before one that multiplies them more (its ten reviews), even where the second
//! is followed by a check that removes nine rows in ten and the first by nothing; then the
//! reviews are walked five times each. So where the greedy order's total is large, a
//! bounded search ([`search`]) looks for an order with a smaller one, depth first, cheapest
//! steps first, pruning every partial order already as dear as the best whole one.
//!
//! Over a cluster's partitions, a plan's cost also counts the rows it moves between them
//! ([`movement`]): of two orders that make the same rows, the one whose steps run where its
//! rows already are wins.
//!
//! A pattern of the same shape as one planned before on the same thread, whose constants
//! have about as many neighbours, replays the order chosen then, each step estimated
//! afresh (`reuse.rs`): the queries of a template cost one growth, not one per start.

mod movement;
mod reuse;
mod search;

use movement::At;
pub use movement::{Spread, ROW_MOVED};

use quiver_store::{Direction, GraphIndex, Store};

use crate::bgp::{Bgp, Node, Pattern, Pred};
use crate::table::VarId;

pub use crate::step::{Step, StepKind};

/// Where a bound variable's values come from, for class-aware estimates.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Domain {
    /// Instances of a class (bound from the class index).
    Class(quiver_model::ClassId),
    /// Subjects (`Out`) or objects (`In`) of a predicate.
    Of(quiver_model::PredId, Direction),
}

/// What the planner knows while it grows a plan.
#[derive(Clone)]
pub(crate) struct State {
    /// The variables bound, and what is known of their values (in place for eight: every
    /// state the search tries is a copy).
    bound: smallvec::SmallVec<[VarId; 8]>,
    domains: smallvec::SmallVec<[(VarId, Domain); 8]>,
    /// Per pattern, whether a step took it (in place for sixteen: every state the search
    /// tries is a copy).
    pub done: smallvec::SmallVec<[bool; 16]>,
    rows: f64,
    /// Where the rows are, over partitions.
    at: At,
    /// The total of the rows after each step, and of the rows moved between partitions
    /// (weighed by [`ROW_MOVED`]): what the planner minimises.
    pub cost: f64,
    pub steps: Vec<Step>,
}

impl State {
    fn is_bound(&self, node: Node) -> bool {
        match node {
            Node::Var(v) => self.bound.contains(&v),
            _ => true,
        }
    }

    fn domain(&self, node: Node) -> Option<Domain> {
        match node {
            Node::Var(v) => self.domains.iter().find(|(w, _)| *w == v).map(|(_, d)| *d),
            _ => None,
        }
    }

    fn set_domain(&mut self, node: Node, domain: Domain) {
        if let Node::Var(v) = node {
            if self.domain(node).is_none() {
                self.domains.push((v, domain));
            }
        }
    }

    fn bind(&mut self, pattern: &Pattern) {
        for var in pattern.vars() {
            if !self.bound.contains(&var) {
                self.bound.push(var);
            }
        }
    }

    /// Step `kind` of `pattern` taken, leaving `rows` rows after moving `moved` to reach
    /// where it runs, `at` after it.
    fn push(&mut self, pattern: usize, kind: StepKind, rows: f64, (moved, at): (f64, At)) {
        self.rows = rows.max(0.0);
        self.at = at;
        self.cost += self.rows + ROW_MOVED * moved;
        self.steps.push(Step::new(pattern, kind, self.rows));
    }
}

/// Plans `bgp` given variables already bound by `seed_rows` input rows (`bound`), on one
/// store.
pub fn plan(
    bgp: &Bgp,
    store: &Store,
    graph: &GraphIndex,
    bound: &[VarId],
    seed_rows: f64,
) -> Vec<Step> {
    plan_over(bgp, (store, &Spread::ONE), graph, bound, seed_rows)
}

/// [`plan`] with its cost: the rows it expects after each step, summed (before walks are
/// fused with their partners, so a walk whose rows an intersection would drop counts
/// them). Two plans of the same pattern, seeded differently, compare by it.
pub fn plan_costed(
    bgp: &Bgp,
    store: &Store,
    graph: &GraphIndex,
    bound: &[VarId],
    seed_rows: f64,
) -> (Vec<Step>, f64) {
    planned(bgp, (store, &Spread::ONE), graph, bound, seed_rows)
}

/// [`plan`] over a store spread as `spread` says (the rows its plan moves between
/// partitions counted in its cost), planned with `store`'s statistics.
pub fn plan_over(
    bgp: &Bgp,
    (store, spread): (&Store, &Spread),
    graph: &GraphIndex,
    bound: &[VarId],
    seed_rows: f64,
) -> Vec<Step> {
    planned(bgp, (store, spread), graph, bound, seed_rows).0
}

/// [`plan_over`] and the plan's cost (see [`plan_costed`]).
fn planned(
    bgp: &Bgp,
    (store, spread): (&Store, &Spread),
    graph: &GraphIndex,
    bound: &[VarId],
    seed_rows: f64,
) -> (Vec<Step>, f64) {
    let estimator = Estimator::new(store, graph, spread);
    let initial = State {
        bound: bound.iter().copied().collect(),
        domains: smallvec::SmallVec::new(),
        done: smallvec::smallvec![false; bgp.patterns.len()],
        rows: seed_rows,
        at: At::Coordinator,
        cost: 0.0,
        steps: Vec::new(),
    };
    if bgp.patterns.is_empty() {
        return (Vec::new(), 0.0);
    }
    // With seeds connected to the patterns, grow from them; else try every start.
    let connected = bgp
        .patterns
        .iter()
        .any(|p| initial.is_bound(p.subject) || initial.is_bound(p.object));
    let from_starts = !connected || bound.is_empty();
    let key = reuse::Key::new(&estimator, bgp, bound, seed_rows);
    let replayed = key
        .as_ref()
        .and_then(reuse::recall)
        .and_then(|order| estimator.replay(bgp, &initial, &order, from_starts));
    let best = match replayed {
        Some(state) => Some(state),
        None => {
            let best = search_order(&estimator, bgp, initial, from_starts);
            if let (Some(key), Some(best)) = (key, &best) {
                reuse::remember(key, best);
            }
            best
        }
    };
    let (steps, cost) = best.map(|b| (b.steps, b.cost)).unwrap_or_default();
    let steps = crate::fuse::fuse_intersections(bgp, store, graph, steps, bound);
    crate::degree::note_plan(&steps);
    (steps, cost)
}

/// The cheapest order found from `initial`: from every start (`from_starts`) or from the
/// seeds, grown greedily, then searched for a cheaper one.
fn search_order(
    estimator: &Estimator,
    bgp: &Bgp,
    initial: State,
    from_starts: bool,
) -> Option<State> {
    let candidates: Vec<State> = if from_starts {
        estimator.starts(bgp, &initial)
    } else {
        vec![initial]
    };
    let mut best: Option<State> = None;
    for state in &candidates {
        let mut state = state.clone();
        estimator.grow(bgp, &mut state);
        if best.as_ref().is_none_or(|b| state.cost < b.cost) {
            best = Some(state);
        }
    }
    if let Some(best) = &mut best {
        search::improve(estimator, bgp, candidates, best);
    }
    best
}

/// The steps that can come next ([`Estimator::next_steps`]).
pub(crate) type NextSteps = smallvec::SmallVec<[Next; 8]>;

/// A step that can come next, and the rows expected after it.
pub(crate) struct Next {
    pub pattern: usize,
    pub kind: StepKind,
    pub rows: f64,
    /// Both ends are bound: the step only removes rows.
    pub check: bool,
}

/// A constant's neighbour count over a predicate in a direction, as a planning read it
/// (in place for eight: a planning reads a few).
type Fanouts = smallvec::SmallVec<[(quiver_model::Id, Pred, Direction, f64); 8]>;

pub(crate) struct Estimator<'a> {
    store: &'a Store,
    graph: &'a GraphIndex,
    spread: &'a Spread,
    /// The constants' neighbour counts read so far: a planning asks each many times.
    fanouts: std::cell::RefCell<Fanouts>,
}

impl<'a> Estimator<'a> {
    fn new(store: &'a Store, graph: &'a GraphIndex, spread: &'a Spread) -> Self {
        Self {
            store,
            graph,
            spread,
            fanouts: Default::default(),
        }
    }
    /// Every way to start: walks from constants, predicate indexes, scans.
    fn starts(&self, bgp: &Bgp, initial: &State) -> Vec<State> {
        let mut starts = Vec::new();
        for (i, pattern) in bgp.patterns.iter().enumerate() {
            for (kind, rows) in self.start_options(pattern) {
                starts.push(self.start(initial, i, pattern, kind, rows));
            }
        }
        starts
    }

    /// The ways to start from `pattern`, each with its rows per row of the state it
    /// starts from.
    fn start_options(&self, pattern: &Pattern) -> smallvec::SmallVec<[(StepKind, f64); 2]> {
        let mut options = smallvec::SmallVec::new();
        if let Node::Const(s) = pattern.subject {
            options.push((
                StepKind::Walk(Direction::Out),
                self.const_fanout(s, pattern.predicate, Direction::Out),
            ));
        }
        if let Node::Const(o) = pattern.object {
            options.push((
                StepKind::Walk(Direction::In),
                self.const_fanout(o, pattern.predicate, Direction::In),
            ));
        }
        if options.is_empty() {
            if let Pred::Const(p) = pattern.predicate {
                let stats = self.store.predicate_stats(p);
                options.push((StepKind::Index(Direction::In), stats.subjects as f64));
                options.push((StepKind::Index(Direction::Out), stats.objects as f64));
            } else {
                options.push((StepKind::Scan, self.graph.triples() as f64));
            }
        }
        options
    }

    /// `base` with pattern `i` started by `kind`, `rows` rows per row of `base`.
    fn start(&self, base: &State, i: usize, pattern: &Pattern, kind: StepKind, rows: f64) -> State {
        let mut state = base.clone();
        let moved = self.moved(pattern, kind, base);
        state.push(i, kind, base.rows * rows, moved);
        self.record_domains(&mut state, pattern, kind);
        match kind {
            StepKind::Index(Direction::In) => {
                state.bound.extend(crate::bgp::node_var(pattern.subject))
            }
            StepKind::Index(Direction::Out) => {
                state.bound.extend(crate::bgp::node_var(pattern.object))
            }
            _ => {
                state.done[i] = true;
                state.bind(pattern);
            }
        }
        state
    }

    /// Adds the cheapest next step until every pattern is done.
    pub(crate) fn grow(&self, bgp: &Bgp, state: &mut State) {
        while let Some(next) = self.best_next(bgp, state) {
            self.take(bgp, state, &next);
        }
        if state.done.iter().any(|d| !d) {
            // Disconnected remainder: start again from its cheapest entry (a cross product).
            let remaining: Vec<usize> = (0..bgp.patterns.len())
                .filter(|&i| !state.done[i])
                .collect();
            let mut best: Option<State> = None;
            for start in self.starts(bgp, state) {
                if !remaining.contains(&start.steps.last().map_or(usize::MAX, |s| s.pattern)) {
                    continue;
                }
                let mut candidate = start;
                self.grow(bgp, &mut candidate);
                if best.as_ref().is_none_or(|b| candidate.cost < b.cost) {
                    best = Some(candidate);
                }
            }
            if let Some(best) = best {
                *state = best;
            }
        }
    }

    /// The rows `state`'s rows move for step `kind` of `pattern`, and where they are then.
    fn moved(&self, pattern: &Pattern, kind: StepKind, state: &State) -> (f64, At) {
        self.spread
            .step(self.store, pattern, kind, state.rows, state.at)
    }

    /// The step that leaves the fewest rows among patterns reachable from bound values
    /// (checks first; over partitions, with the rows each moves).
    fn best_next(&self, bgp: &Bgp, state: &State) -> Option<Next> {
        let mut best: Option<Next> = None;
        let cost = |next: &Next| {
            next.rows + ROW_MOVED * self.moved(&bgp.patterns[next.pattern], next.kind, state).0
        };
        for c in self.next_steps(bgp, state) {
            let better = match &best {
                None => true,
                Some(b) => (c.check && !b.check) || (c.check == b.check && cost(&c) < cost(b)),
            };
            if better {
                best = Some(c);
            }
        }
        best
    }

    /// Every step that can come next: a walk from each pattern with a bound end (in
    /// place for a handful: planned for every query, most with a few patterns).
    pub(crate) fn next_steps(&self, bgp: &Bgp, state: &State) -> NextSteps {
        let mut next = NextSteps::new();
        for (i, pattern) in bgp.patterns.iter().enumerate() {
            if state.done[i] {
                continue;
            }
            let s_bound = state.is_bound(pattern.subject);
            let o_bound = state.is_bound(pattern.object);
            let candidate = match (s_bound, o_bound) {
                (true, true) => {
                    let selectivity = self.check_selectivity(pattern, state);
                    Some((
                        i,
                        StepKind::Walk(Direction::Out),
                        state.rows * selectivity,
                        true,
                    ))
                }
                (true, false) => Some((
                    i,
                    StepKind::Walk(Direction::Out),
                    state.rows * self.fanout(pattern, Direction::Out, state),
                    false,
                )),
                (false, true) => Some((
                    i,
                    StepKind::Walk(Direction::In),
                    state.rows * self.fanout(pattern, Direction::In, state),
                    false,
                )),
                (false, false) => None,
            };
            if let Some((pattern, kind, rows, check)) = candidate {
                next.push(Next {
                    pattern,
                    kind,
                    rows,
                    check,
                });
            }
        }
        next
    }

    /// `state` after step `next`.
    pub(crate) fn advance(&self, bgp: &Bgp, state: &State, next: &Next) -> State {
        let mut state = state.clone();
        self.take(bgp, &mut state, next);
        state
    }

    /// Takes step `next` in `state`.
    fn take(&self, bgp: &Bgp, state: &mut State, next: &Next) {
        let moved = self.moved(&bgp.patterns[next.pattern], next.kind, state);
        state.push(next.pattern, next.kind, next.rows, moved);
        self.record_domains(state, &bgp.patterns[next.pattern], next.kind);
        state.done[next.pattern] = true;
        state.bind(&bgp.patterns[next.pattern]);
    }

    /// The class a constant names, when the pattern is `?x rdf:type <class>`.
    fn type_class(&self, pattern: &Pattern) -> Option<quiver_model::ClassId> {
        match (pattern.predicate, pattern.object) {
            (Pred::Const(p), Node::Const(class)) if Some(p) == self.store.rdf_type() => {
                self.store.class_of_term(class)
            }
            _ => None,
        }
    }

    /// Remembers where the variables a step binds come from.
    fn record_domains(&self, state: &mut State, pattern: &Pattern, kind: StepKind) {
        if let Some(class) = self.type_class(pattern) {
            state.set_domain(pattern.subject, Domain::Class(class));
            return;
        }
        let Pred::Const(p) = pattern.predicate else {
            return;
        };
        match kind {
            StepKind::Index(Direction::In) => {
                state.set_domain(pattern.subject, Domain::Of(p, Direction::Out))
            }
            StepKind::Index(Direction::Out) => {
                state.set_domain(pattern.object, Domain::Of(p, Direction::In))
            }
            _ => {
                state.set_domain(pattern.subject, Domain::Of(p, Direction::Out));
                state.set_domain(pattern.object, Domain::Of(p, Direction::In));
            }
        }
    }

    /// Exact number of neighbours of a constant ([`crate::degree::constant_degree`]).
    fn const_fanout(&self, vertex: quiver_model::Id, predicate: Pred, direction: Direction) -> f64 {
        let known = self.fanouts.borrow().iter().find_map(|&(v, p, d, size)| {
            (v == vertex && p == predicate && d == direction).then_some(size)
        });
        known.unwrap_or_else(|| {
            let size = crate::degree::constant_degree(
                self.store, self.graph, vertex, predicate, direction,
            );
            self.fanouts
                .borrow_mut()
                .push((vertex, predicate, direction, size));
            size
        })
    }

    /// Expected neighbours per bound vertex.
    fn fanout(&self, pattern: &Pattern, direction: Direction, state: &State) -> f64 {
        let source = match direction {
            Direction::Out => pattern.subject,
            Direction::In => pattern.object,
        };
        if let Node::Const(vertex) = source {
            return self.const_fanout(vertex, pattern.predicate, direction);
        }
        match pattern.predicate {
            Pred::Const(p) => {
                // The types of a vertex bound from a predicate: counted for that predicate's
                // subjects or objects, not averaged over every typed vertex.
                if direction == Direction::Out && Some(p) == self.store.rdf_type() {
                    if let Some(Domain::Of(q, side)) = state.domain(source) {
                        if let Some(types) = self.store.types_per_vertex(q, side) {
                            return types;
                        }
                    }
                }
                let average = self.store.predicate_stats(p).avg_degree(direction);
                // Instances of a class: only the fraction that has the predicate expands.
                if let Some(Domain::Class(class)) = state.domain(source) {
                    if let Some(count) = self.store.class_predicate_count(class, p, direction) {
                        let size = self.store.class_size(class).max(1) as f64;
                        return average * (count as f64 / size).min(1.0);
                    }
                }
                average
            }
            _ => 2.0 * self.graph.triples() as f64 / self.store.terms().max(1) as f64,
        }
    }

    /// Fraction of rows with both ends bound that have the edge.
    fn check_selectivity(&self, pattern: &Pattern, state: &State) -> f64 {
        let Pred::Const(p) = pattern.predicate else {
            return 0.5;
        };
        // `?x rdf:type C` where ?x came from a predicate: the share of that predicate's
        // subjects or objects that are instances of C.
        if let (Some(class), Some(domain)) =
            (self.type_class(pattern), state.domain(pattern.subject))
        {
            match domain {
                Domain::Of(q, side) => {
                    if let Some(count) = self.store.class_predicate_count(class, q, side) {
                        let stats = self.store.predicate_stats(q);
                        let distinct = match side {
                            Direction::Out => stats.subjects,
                            Direction::In => stats.objects,
                        };
                        return (count as f64 / distinct.max(1) as f64).clamp(0.0, 1.0);
                    }
                }
                Domain::Class(c) if c == class => return 1.0,
                Domain::Class(_) => {}
            }
        }
        let stats = self.store.predicate_stats(p);
        let fraction = match (pattern.subject, pattern.object) {
            (_, Node::Const(o)) => {
                self.const_fanout(o, pattern.predicate, Direction::In)
                    / stats.subjects.max(1) as f64
            }
            (Node::Const(s), _) => {
                self.const_fanout(s, pattern.predicate, Direction::Out)
                    / stats.objects.max(1) as f64
            }
            _ => stats.avg_out_degree() / stats.objects.max(1) as f64,
        };
        fraction.clamp(0.0, 1.0)
    }
}
