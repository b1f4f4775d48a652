//! Property paths walked vertex by vertex over a graph index in memory: forward from a
//! subject over OUT lists, or backward from an object over IN lists; many starts are split
//! across the query's threads.

use quiver_model::Id;
use quiver_store::{Direction, GraphIndex};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::context::{ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::Path;

/// Walks one path over one graph.
pub(super) struct Walker<'a> {
    pub graph: &'a GraphIndex,
    pub ctx: &'a ExecContext<'a>,
}

/// Bytes per vertex of a visited set (the id and the hash table's share).
const VISITED_BYTES: usize = ID_BYTES + 8;

impl Walker<'_> {
    pub fn in_graph(&self, vertex: Id) -> bool {
        !self.graph.edges(vertex, Direction::Out).is_empty()
            || !self.graph.edges(vertex, Direction::In).is_empty()
    }

    /// Appends the ends of every match of `path` from `from` (a vertex of the graph),
    /// walking in `direction`, one entry per match.
    pub fn reach(
        &self,
        path: &Path,
        from: Id,
        direction: Direction,
        out: &mut Vec<Id>,
    ) -> Result<(), QueryError> {
        match path {
            Path::Link(None) => {}
            Path::Link(Some(p)) => out.extend_from_slice(self.graph.get(from, *p, direction)),
            Path::Reverse(p) => self.reach(p, from, direction.reverse(), out)?,
            Path::Sequence(a, b) => {
                let (first, second) = match direction {
                    Direction::Out => (a, b),
                    Direction::In => (b, a),
                };
                let mut middle = Vec::new();
                self.reach(first, from, direction, &mut middle)?;
                for (i, vertex) in middle.into_iter().enumerate() {
                    self.ctx.tick(i)?;
                    self.reach(second, vertex, direction, out)?;
                }
            }
            Path::Alternative(a, b) => {
                self.reach(a, from, direction, out)?;
                self.reach(b, from, direction, out)?;
            }
            Path::ZeroOrMore(p) => self.closure(p, from, direction, true, out)?,
            Path::OneOrMore(p) => self.closure(p, from, direction, false, out)?,
            Path::ZeroOrOne(p) => {
                let mut ends = vec![from];
                self.reach(p, from, direction, &mut ends)?;
                ends.sort_unstable();
                ends.dedup();
                out.extend(ends);
            }
            Path::Negated(excluded) => {
                for (p, neighbours) in self.graph.edges(from, direction).iter() {
                    if excluded.binary_search(&p).is_err() {
                        out.extend_from_slice(neighbours);
                    }
                }
            }
        }
        Ok(())
    }

    /// Breadth-first search over `path`: every vertex reached once (with `from` itself when
    /// `reflexive`), as the spec's ALP function.
    fn closure(
        &self,
        path: &Path,
        from: Id,
        direction: Direction,
        reflexive: bool,
        out: &mut Vec<Id>,
    ) -> Result<(), QueryError> {
        let mut visited: FxHashSet<Id> = FxHashSet::default();
        let mut memory = self.ctx.reservation();
        let mut frontier = Vec::new();
        if reflexive {
            visited.insert(from);
            out.push(from);
            frontier.push(from);
        } else {
            self.reach(path, from, direction, &mut frontier)?;
            frontier.retain(|&v| visited.insert(v));
            out.extend_from_slice(&frontier);
        }
        let mut next = Vec::new();
        let mut expanded = 0usize;
        while !frontier.is_empty() {
            for &vertex in &frontier {
                expanded += 1;
                if expanded.is_multiple_of(CHECK_STRIDE) {
                    self.ctx.check()?;
                    memory.try_resize(
                        visited.len() * VISITED_BYTES
                            + (frontier.len() + next.len() + out.len()) * ID_BYTES,
                    )?;
                }
                let start = next.len();
                self.reach(path, vertex, direction, &mut next)?;
                let mut kept = start;
                for i in start..next.len() {
                    if visited.insert(next[i]) {
                        next[kept] = next[i];
                        kept += 1;
                    }
                }
                next.truncate(kept);
            }
            out.extend_from_slice(&next);
            std::mem::swap(&mut frontier, &mut next);
            next.clear();
        }
        Ok(())
    }
}

/// Bytes a walk's pairs may outgrow their charge by before it is charged again.
const CHARGE_STEP: usize = 1 << 20;

/// Starts per parallel task; fewer than two tasks' worth stay on the calling thread.
const MORSEL: usize = 2048;

/// The (start, end) columns of the walks from each of `starts` (skipping vertices the
/// graph lacks: between variables they match nothing); with `same`, only the starts, once
/// per match that ends where it started. Many starts are split across `ctx.threads`
/// workers.
pub(super) fn pairs(
    walker: &Walker<'_>,
    path: &Path,
    starts: &[Id],
    direction: Direction,
    same: bool,
) -> Result<(Vec<Id>, Vec<Id>), QueryError> {
    let ctx = walker.ctx;
    let walk = |part: &[Id]| walk_from(walker, path, part, direction, same, ctx);
    if ctx.threads > 1 && starts.len() >= 2 * MORSEL {
        let run = || {
            starts
                .par_chunks(MORSEL)
                .map(walk)
                .collect::<Result<Vec<_>, QueryError>>()
        };
        let parts = crate::exec::parallel::on_workers(ctx, run)?;
        let (mut from, mut to) = (Vec::new(), Vec::new());
        for (f, t) in parts {
            from.extend(f);
            to.extend(t);
        }
        Ok((from, to))
    } else {
        walk(starts)
    }
}

/// The (start, end) pairs from `starts`; with `same`, only the starts, once per match
/// that ends where it started.
fn walk_from(
    walker: &Walker<'_>,
    path: &Path,
    starts: &[Id],
    direction: Direction,
    same: bool,
    ctx: &ExecContext<'_>,
) -> Result<(Vec<Id>, Vec<Id>), QueryError> {
    let (mut from, mut to): (Vec<Id>, Vec<Id>) = (Vec::new(), Vec::new());
    let mut memory = ctx.reservation();
    let mut ends = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        // Checked every 1,024 starts, and charged as soon as the pairs outgrow what is
        // held by a step: one start may reach the whole graph.
        let held = (from.capacity() + to.capacity()) * ID_BYTES;
        if i % 1024 == 1023 || held > memory.size() + CHARGE_STEP {
            ctx.check()?;
            memory.try_resize(held)?;
        }
        if !walker.in_graph(start) {
            continue;
        }
        ends.clear();
        walker.reach(path, start, direction, &mut ends)?;
        if same {
            let count = ends.iter().filter(|&&e| e == start).count();
            from.extend(std::iter::repeat_n(start, count));
        } else {
            from.extend(std::iter::repeat_n(start, ends.len()));
            to.extend_from_slice(&ends);
        }
    }
    memory.try_resize((from.capacity() + to.capacity()) * ID_BYTES)?;
    Ok((from, to))
}
