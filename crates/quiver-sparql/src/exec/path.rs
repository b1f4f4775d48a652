//! Property path patterns evaluated by walking the graph index from start vertices:
//! forward from a subject over OUT lists, or backward from an object over IN lists, so a
//! constant end is always the side a walk starts from. Sequence and alternative keep bag
//! semantics (a sequence counts each intermediate vertex, an alternative both branches);
//! `*`, `+` and `?` are sets of vertices per start, found by a breadth-first search with a
//! visited set (the spec's ALP function), so cycles terminate. From a vertex of the graph
//! everything reached is in the graph and the walk alone is exact.
//!
//! A path joined to rows already found walks only from the values they bind.
//!
//! Walks check the query's limits every few thousand vertices, inside a single closure
//! too (one walk over a dense graph can visit all of it), and charge their visited sets,
//! frontiers and output to its memory budget.

use std::time::Instant;

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::Evaluator;
use crate::context::{ExecContext, CHECK_STRIDE};
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::{Path, PathPattern, PathTerm};
use crate::table::{Table, VarId, UNBOUND};

/// One end of a path pattern, resolved for an execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Var(VarId),
    /// A constant: a dictionary id or a query-local one.
    Const(Id),
}

/// Where the vertices of one evaluation came from, for EXPLAIN.
#[derive(Debug, Clone, Default)]
pub struct PathProfile {
    pub pattern: String,
    /// How the walks started (from a constant, seeded by a variable, from every vertex).
    pub start: String,
    pub starts: usize,
    pub rows: usize,
    pub micros: f64,
}

impl Path {
    /// The only vertices a walk in `direction` can start from with a non-empty result,
    /// sorted and distinct; `None` when that is every vertex.
    fn candidates(&self, graph: &GraphIndex, direction: Direction) -> Option<Vec<Id>> {
        match self {
            Path::Link(None) => Some(Vec::new()),
            Path::Link(Some(p)) => Some(match direction {
                Direction::Out => graph.predicate_subjects(*p).to_vec(),
                Direction::In => graph.predicate_objects(*p).to_vec(),
            }),
            Path::Reverse(p) => p.candidates(graph, direction.reverse()),
            Path::Sequence(a, b) => {
                let first = if direction == Direction::Out { a } else { b };
                if first.nullable() {
                    None
                } else {
                    first.candidates(graph, direction)
                }
            }
            Path::Alternative(a, b) => {
                let mut union = a.candidates(graph, direction)?;
                union.extend(b.candidates(graph, direction)?);
                union.sort_unstable();
                union.dedup();
                Some(union)
            }
            Path::OneOrMore(p) => p.candidates(graph, direction),
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) | Path::Negated(_) => None,
        }
    }
}

/// Walks one path over one graph.
struct Walker<'a> {
    graph: &'a GraphIndex,
    ctx: &'a ExecContext<'a>,
}

/// Bytes per vertex of a visited set (the id and the hash table's share).
const VISITED_BYTES: usize = ID_BYTES + 8;

impl Walker<'_> {
    fn in_graph(&self, vertex: Id) -> bool {
        !self.graph.edges(vertex, Direction::Out).is_empty()
            || !self.graph.edges(vertex, Direction::In).is_empty()
    }

    /// Appends the ends of every match of `path` from `from` (a vertex of the graph),
    /// walking in `direction`, one entry per match.
    fn reach(
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

    /// Every vertex of the graph (a subject or object of some triple), sorted.
    fn vertices(&self) -> Vec<Id> {
        let mut all = Vec::new();
        for p in 0..self.graph.predicates() as PredId {
            all.extend_from_slice(self.graph.predicate_subjects(p));
            all.extend_from_slice(self.graph.predicate_objects(p));
        }
        all.sort_unstable();
        all.dedup();
        all
    }
}

/// Evaluates `subject path object` over `graph`. `seeds`: a variable end and the distinct
/// values the rows before the path bind it to; walks then start only from those.
pub fn evaluate(
    subject: End,
    path: &Path,
    object: End,
    seeds: Option<(VarId, Vec<Id>)>,
    graph: &GraphIndex,
    ctx: &ExecContext<'_>,
    profile: &mut PathProfile,
) -> Result<Table, QueryError> {
    let walker = Walker { graph, ctx };
    let mut ends = Vec::new();
    // A term that is no vertex of the graph: only zero-length matches.
    let from_constant = |start: Id,
                         direction: Direction,
                         other: Option<Id>,
                         ends: &mut Vec<Id>|
     -> Result<(), QueryError> {
        if walker.in_graph(start) {
            walker.reach(path, start, direction, ends)?;
        } else if other.is_none_or(|o| o == start) {
            let count = path.zero_length_count(
                direction == Direction::Out || other.is_some(),
                direction == Direction::In || other.is_some(),
            );
            ends.extend(std::iter::repeat_n(start, count));
        }
        Ok(())
    };
    profile.starts = 1;
    let table = match (subject, object) {
        (End::Const(s), End::Const(o)) => {
            profile.start = "from the subject".into();
            from_constant(s, Direction::Out, Some(o), &mut ends)?;
            let mut table = Table::empty(Vec::new());
            table.rows = ends.iter().filter(|&&e| e == o).count();
            table
        }
        (End::Const(s), End::Var(o)) => {
            profile.start = "from the subject".into();
            from_constant(s, Direction::Out, None, &mut ends)?;
            one_column(o, ends)
        }
        (End::Var(s), End::Const(o)) => {
            profile.start = "from the object".into();
            from_constant(o, Direction::In, None, &mut ends)?;
            one_column(s, ends)
        }
        (End::Var(s), End::Var(o)) => {
            let (starts, direction) = match seeds {
                Some((var, values)) => {
                    profile.start = "seeded by the rows before it".into();
                    let direction = if var == s {
                        Direction::Out
                    } else {
                        Direction::In
                    };
                    (values, direction)
                }
                None if s == o => {
                    profile.start = "from every candidate vertex".into();
                    let starts = if path.nullable() {
                        walker.vertices()
                    } else {
                        path.candidates(graph, Direction::Out)
                            .unwrap_or_else(|| walker.vertices())
                    };
                    (starts, Direction::Out)
                }
                None => {
                    let forward = path.candidates(graph, Direction::Out);
                    let backward = path.candidates(graph, Direction::In);
                    let (starts, direction) = match (forward, backward) {
                        (Some(f), Some(b)) if b.len() < f.len() => (b, Direction::In),
                        (Some(f), _) => (f, Direction::Out),
                        (None, Some(b)) => (b, Direction::In),
                        (None, None) => {
                            profile.start = "from every vertex".into();
                            (walker.vertices(), Direction::Out)
                        }
                    };
                    if profile.start.is_empty() {
                        profile.start = match direction {
                            Direction::Out => "from candidate subjects".into(),
                            Direction::In => "from candidate objects".into(),
                        };
                    }
                    (starts, direction)
                }
            };
            profile.starts = starts.len();
            pairs(&walker, path, &starts, direction, (s, o), ctx)?
        }
    };
    profile.rows = table.rows;
    Ok(table)
}

fn one_column(var: VarId, values: Vec<Id>) -> Table {
    Table {
        vars: vec![var],
        rows: values.len(),
        columns: vec![values],
    }
}

/// Starts per parallel task; fewer than two tasks' worth stay on the calling thread.
const MORSEL: usize = 2048;

/// Walks from each of `starts` (skipping vertices the graph lacks: between variables they
/// match nothing) and pairs each start with each end; many starts are split across
/// `ctx.threads` workers.
fn pairs(
    walker: &Walker<'_>,
    path: &Path,
    starts: &[Id],
    direction: Direction,
    (subject, object): (VarId, VarId),
    ctx: &ExecContext<'_>,
) -> Result<Table, QueryError> {
    let same = subject == object;
    let walk = |part: &[Id]| walk_from(walker, path, part, direction, same, ctx);
    let (from, to) = if ctx.threads > 1 && starts.len() >= 2 * MORSEL {
        let run = || {
            starts
                .par_chunks(MORSEL)
                .map(walk)
                .collect::<Result<Vec<_>, QueryError>>()
        };
        let parts = if rayon::current_num_threads() == ctx.threads {
            run()?
        } else {
            rayon::ThreadPoolBuilder::new()
                .num_threads(ctx.threads)
                .build()
                .map_err(|e| QueryError::Unsupported(format!("cannot start worker threads: {e}")))?
                .install(run)?
        };
        let (mut from, mut to) = (Vec::new(), Vec::new());
        for (f, t) in parts {
            from.extend(f);
            to.extend(t);
        }
        (from, to)
    } else {
        walk(starts)?
    };
    if same {
        return Ok(one_column(subject, from));
    }
    let (subjects, objects) = match direction {
        Direction::Out => (from, to),
        Direction::In => (to, from),
    };
    Ok(Table {
        vars: vec![subject, object],
        rows: subjects.len(),
        columns: vec![subjects, objects],
    })
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
        if i % 1024 == 1023 {
            ctx.check()?;
            memory.try_resize((from.len() + to.len()) * ID_BYTES)?;
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
    memory.try_resize((from.len() + to.len()) * ID_BYTES)?;
    Ok((from, to))
}

impl Evaluator<'_> {
    /// A property path pattern; with `left`, seeded by its rows where they bind an end
    /// variable in every row (the end with fewer distinct values).
    pub(crate) fn path(
        &self,
        pattern: &PathPattern,
        left: Option<&Table>,
    ) -> Result<Table, QueryError> {
        if pattern.graph == GraphRef::Missing {
            return Ok(Table::empty(pattern.vars()));
        }
        let started = Instant::now();
        let resolve = |end: &PathTerm| match end {
            PathTerm::Var(v) => End::Var(*v),
            PathTerm::Term(term) => End::Const(self.intern(term)),
        };
        let (subject, object) = (resolve(&pattern.subject), resolve(&pattern.object));
        let seeds = match (subject, object, left) {
            (End::Var(s), End::Var(o), Some(left)) => [s, o]
                .into_iter()
                .filter_map(|var| {
                    let column = left.column(var)?;
                    if column.contains(&UNBOUND) {
                        return None;
                    }
                    let mut values = column.to_vec();
                    values.sort_unstable();
                    values.dedup();
                    Some((var, values))
                })
                .min_by_key(|(_, values)| values.len()),
            _ => None,
        };
        let context = self.context(pattern.graph);
        let mut profile = PathProfile {
            pattern: pattern.text.clone(),
            ..PathProfile::default()
        };
        let table = evaluate(
            subject,
            &pattern.path,
            object,
            seeds,
            context.graph,
            &context,
            &mut profile,
        )?;
        profile.micros = started.elapsed().as_secs_f64() * 1e6;
        self.path_profiles.borrow_mut().push(profile);
        Ok(table)
    }
}
