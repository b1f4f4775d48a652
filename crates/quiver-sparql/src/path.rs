//! Property path patterns (SPARQL 1.1 §9.3 and §18.4).
//!
//! A path is compiled once with its predicates resolved to predicate ids, then evaluated by
//! walking the graph index from start vertices: forward from a subject over OUT lists, or
//! backward from an object over IN lists, so a constant end is always the side a walk
//! starts from. Sequence and alternative keep bag semantics (a sequence counts each
//! intermediate vertex, an alternative both branches); `*`, `+` and `?` are sets of
//! vertices per start, found by a breadth-first search with a visited set (the spec's ALP
//! function), so cycles terminate.
//!
//! Zero-length matches follow the spec's case split. Between two variables they pair every
//! vertex of the active graph with itself; at a constant end they also hold for a term the
//! graph lacks. A vertex with no edges can only ever reach itself, so from such a start
//! the result is that vertex repeated as often as the spec's algebra derives it
//! ([`Path::zero_length_count`]); from a vertex of the graph everything reached is in the
//! graph and the walk alone is exact.
//!
//! Walks check the query's limits every few thousand vertices, inside a single closure
//! too (one walk over a dense graph can visit all of it), and charge their visited sets,
//! frontiers and output to its memory budget.

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Store};
use rayon::prelude::*;
use rustc_hash::FxHashSet;
use spargebra::algebra::PropertyPathExpression;

use crate::bgp::add_vars;
use crate::context::{ExecContext, CHECK_STRIDE};
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::table::{Table, VarId};

/// A property path with its predicates resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// One edge; `None` for a predicate the store does not have (never matches).
    Link(Option<PredId>),
    Reverse(Box<Path>),
    Sequence(Box<Path>, Box<Path>),
    Alternative(Box<Path>, Box<Path>),
    ZeroOrMore(Box<Path>),
    OneOrMore(Box<Path>),
    ZeroOrOne(Box<Path>),
    /// Any predicate but these (forward members only: spargebra splits off the inverse
    /// ones as `Reverse(NegatedPropertySet)`). Predicates the store lacks are left out.
    Negated(Vec<PredId>),
}

/// One end of a path pattern as compiled: a variable (blank nodes of the pattern are
/// hidden variables) or a term, given an id when the query runs since a term the store
/// lacks still matches itself over a zero-length path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathTerm {
    Var(VarId),
    Term(oxrdf::Term),
}

impl PathTerm {
    pub fn var(&self) -> Option<VarId> {
        match self {
            PathTerm::Var(v) => Some(*v),
            PathTerm::Term(_) => None,
        }
    }
}

/// A compiled property path pattern: `subject path object` on one graph.
#[derive(Debug, Clone)]
pub struct PathPattern {
    pub subject: PathTerm,
    pub path: Path,
    pub object: PathTerm,
    pub graph: GraphRef,
    /// The pattern as written, for EXPLAIN.
    pub text: String,
}

impl PathPattern {
    /// The variables of the ends (bound in every solution).
    pub fn vars(&self) -> Vec<VarId> {
        let mut vars: Vec<VarId> = self.subject.var().into_iter().collect();
        add_vars(&mut vars, self.object.var());
        vars
    }
}

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
    pub fn compile(expression: &PropertyPathExpression, store: &Store) -> Path {
        let boxed = |e: &PropertyPathExpression| Box::new(Path::compile(e, store));
        match expression {
            PropertyPathExpression::NamedNode(p) => Path::Link(store.predicate_id(p.as_str())),
            PropertyPathExpression::Reverse(p) => Path::Reverse(boxed(p)),
            PropertyPathExpression::Sequence(a, b) => Path::Sequence(boxed(a), boxed(b)),
            PropertyPathExpression::Alternative(a, b) => Path::Alternative(boxed(a), boxed(b)),
            PropertyPathExpression::ZeroOrMore(p) => Path::ZeroOrMore(boxed(p)),
            PropertyPathExpression::OneOrMore(p) => Path::OneOrMore(boxed(p)),
            PropertyPathExpression::ZeroOrOne(p) => Path::ZeroOrOne(boxed(p)),
            PropertyPathExpression::NegatedPropertySet(set) => {
                let mut ids: Vec<PredId> = set
                    .iter()
                    .filter_map(|p| store.predicate_id(p.as_str()))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                Path::Negated(ids)
            }
        }
    }

    /// Whether the path can match a zero-length path.
    fn nullable(&self) -> bool {
        match self {
            Path::Link(_) | Path::Negated(_) => false,
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) => true,
            Path::Reverse(p) | Path::OneOrMore(p) => p.nullable(),
            Path::Sequence(a, b) => a.nullable() && b.nullable(),
            Path::Alternative(a, b) => a.nullable() || b.nullable(),
        }
    }

    /// How many times the spec's algebra matches `(t, t)` for a term `t` that is no vertex
    /// of the active graph, given which ends are that constant (the others are variables).
    /// Between two variables zero-length paths only pair graph vertices, so this is 0 when
    /// neither end is constant; a sequence's middle is a fresh variable.
    pub fn zero_length_count(&self, subject_const: bool, object_const: bool) -> usize {
        match self {
            Path::Link(_) | Path::Negated(_) => 0,
            Path::Reverse(p) => p.zero_length_count(object_const, subject_const),
            Path::Sequence(a, b) => {
                a.zero_length_count(subject_const, false) * b.zero_length_count(false, object_const)
            }
            Path::Alternative(a, b) => {
                a.zero_length_count(subject_const, object_const)
                    + b.zero_length_count(subject_const, object_const)
            }
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) => usize::from(subject_const || object_const),
            // ALP from the constant end: the term is in the result if one step of the inner
            // path (towards a variable) reaches it.
            Path::OneOrMore(p) => usize::from(if subject_const {
                p.zero_length_count(true, false) > 0
            } else {
                object_const && p.zero_length_count(false, true) > 0
            }),
        }
    }

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
