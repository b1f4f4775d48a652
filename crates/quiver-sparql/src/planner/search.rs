//! The planner's bounded search for a cheaper order of steps than greedy growth finds.
//!
//! Depth first from every start, trying at each point the possible steps cheapest first.
//! A step that cannot grow the rows and leads nowhere else is taken at once: a check (both
//! ends bound) or a leaf (what it binds no other pattern reads) of at most one neighbour
//! per row. Of the leaves that multiply rows, only the cheapest is tried at each point:
//! they enable nothing, so which comes first among them matters only by their factors. A
//! partial order whose total of rows already reaches the best whole order's is pruned, and
//! so is one that reaches the same set of patterns from the same start dearer than before.
//! The greedy order is the first bound, so the search returns it or a cheaper one. It
//! visits at most [`BUDGET`] partial orders, which bounds planning time on any pattern
//! count; the stars and chains of a few patterns that most queries are end well before.
//! Orders whose greedy total is below [`MIN_ROWS`] are not searched at all.

use std::collections::HashMap;

use super::{Estimator, Next, State, StepKind};
use crate::bgp::Bgp;
use crate::table::VarId;

/// Partial orders visited per plan, over all starts.
const BUDGET: usize = 1024;

/// Below this total of rows, the greedy order runs in less time than searching for a
/// better one would take (the search reads each constant's record again at every point):
/// the selective queries that most workloads are made of are not searched.
const MIN_ROWS: f64 = 10_000.0;

/// Replaces `best` with a cheaper order of `bgp`'s patterns from one of `starts`, if the
/// search finds one within its budget.
pub(crate) fn improve(estimator: &Estimator, bgp: &Bgp, starts: Vec<State>, best: &mut State) {
    if bgp.patterns.len() > 64 || bgp.patterns.len() < 3 || best.cost < MIN_ROWS {
        return;
    }
    let mut search = Search {
        estimator,
        bgp,
        budget: BUDGET,
        best,
        seen: HashMap::new(),
    };
    for (id, start) in starts.into_iter().enumerate() {
        // Where the start binds variables without finishing a pattern (a predicate index),
        // the patterns done do not tell what is bound: such starts are kept apart.
        let from_index = start
            .steps
            .last()
            .is_some_and(|s| matches!(s.kind, StepKind::Index(_)));
        search.explore(if from_index { id } else { usize::MAX }, start);
    }
}

struct Search<'a, 'b> {
    estimator: &'a Estimator<'a>,
    bgp: &'a Bgp,
    budget: usize,
    best: &'b mut State,
    /// The cheapest total seen so far per (start, patterns done); the start is
    /// `usize::MAX` for all that finish a pattern, as then the patterns done say what is
    /// bound.
    seen: HashMap<(usize, u64), f64>,
}

impl Search<'_, '_> {
    fn explore(&mut self, start: usize, state: State) {
        if self.budget == 0 || state.cost >= self.best.cost {
            return;
        }
        let key = (start, done_mask(&state.done));
        if self.seen.get(&key).is_some_and(|&cost| cost <= state.cost) {
            return;
        }
        self.seen.insert(key, state.cost);
        self.budget -= 1;
        let next = self.estimator.next_steps(self.bgp, &state);
        if next.is_empty() {
            // Done, or the rest is disconnected: greedy growth finishes it.
            let mut state = state;
            self.estimator.grow(self.bgp, &mut state);
            if state.cost < self.best.cost && state.done.iter().all(|d| *d) {
                *self.best = state;
            }
            return;
        }
        let leaves: Vec<bool> = next.iter().map(|n| self.is_leaf(&state, n)).collect();
        let forced = (0..next.len())
            .filter(|&i| next[i].check || (leaves[i] && next[i].rows <= state.rows))
            .min_by(|&a, &b| next[a].rows.total_cmp(&next[b].rows));
        let cheapest_leaf = (0..next.len())
            .filter(|&i| leaves[i])
            .min_by(|&a, &b| next[a].rows.total_cmp(&next[b].rows));
        let mut tried: Vec<usize> = match forced {
            Some(i) => vec![i],
            None => (0..next.len())
                .filter(|&i| !leaves[i] || Some(i) == cheapest_leaf)
                .collect(),
        };
        tried.sort_by(|&a, &b| next[a].rows.total_cmp(&next[b].rows));
        for step in tried.into_iter().map(|i| &next[i]) {
            let after = self.estimator.advance(self.bgp, &state, step);
            self.explore(start, after);
        }
    }

    /// Whether no other pattern left reads what `step` binds.
    fn is_leaf(&self, state: &State, step: &Next) -> bool {
        let pattern = &self.bgp.patterns[step.pattern];
        let fresh: Vec<VarId> = pattern
            .vars()
            .filter(|v| !state.bound.contains(v))
            .collect();
        self.bgp.patterns.iter().enumerate().all(|(i, other)| {
            i == step.pattern || state.done[i] || other.vars().all(|v| !fresh.contains(&v))
        })
    }
}

fn done_mask(done: &[bool]) -> u64 {
    done.iter()
        .enumerate()
        .filter(|(_, d)| **d)
        .fold(0, |mask, (i, _)| mask | 1 << i)
}
