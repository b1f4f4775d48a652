//! Property path patterns evaluated by walking the graph from start vertices: forward
//! from a subject over OUT lists, or backward from an object over IN lists, so a constant
//! end is always the side a walk starts from. Sequence and alternative keep bag semantics
//! (a sequence counts each intermediate vertex, an alternative both branches); `*`, `+`
//! and `?` are sets of vertices per start, found by a breadth-first search with a visited
//! set (the spec's ALP function), so cycles terminate. From a vertex of the graph
//! everything reached is in the graph and the walk alone is exact.
//!
//! A path joined to rows already found walks only from the values they bind.
//!
//! Over one graph in memory the walks go vertex by vertex (`walker`); over a partitioned
//! store a frontier at a time (`frontier`), each step one request to the partitions. Both
//! check the query's limits as they go (one walk over a dense graph can visit all of it)
//! and charge their visited sets, frontiers and output to its memory budget.

mod frontier;
mod walker;

use std::time::Instant;

use quiver_model::Id;
use quiver_store::Direction;

use super::edges::{EdgeSource, GraphEdges, PartitionedEdges};
use super::Evaluator;
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::operator::{Path, PathPattern, PathTerm};
use crate::table::{Table, VarId, UNBOUND};
use frontier::FrontierWalker;
use walker::Walker;

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
    fn candidates(
        &self,
        source: &dyn EdgeSource,
        direction: Direction,
    ) -> Result<Option<Vec<Id>>, QueryError> {
        Ok(match self {
            Path::Link(None) => Some(Vec::new()),
            Path::Link(Some(p)) => Some(source.predicate_ends(*p, direction)?),
            Path::Reverse(p) => return p.candidates(source, direction.reverse()),
            Path::Sequence(a, b) => {
                let first = if direction == Direction::Out { a } else { b };
                if first.nullable() {
                    None
                } else {
                    return first.candidates(source, direction);
                }
            }
            Path::Alternative(a, b) => {
                let Some(mut union) = a.candidates(source, direction)? else {
                    return Ok(None);
                };
                let Some(other) = b.candidates(source, direction)? else {
                    return Ok(None);
                };
                union.extend(other);
                union.sort_unstable();
                union.dedup();
                Some(union)
            }
            Path::OneOrMore(p) => return p.candidates(source, direction),
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) | Path::Negated(_) => None,
        })
    }
}

/// How the walks of one evaluation run.
enum Walks<'a> {
    /// Vertex by vertex over a graph in memory.
    Local(Walker<'a>, GraphEdges<'a>),
    /// A frontier at a time over an edge source (the partitions of a store).
    Frontier(FrontierWalker<'a>),
}

impl Walks<'_> {
    fn source(&self) -> &dyn EdgeSource {
        match self {
            Walks::Local(_, edges) => edges,
            Walks::Frontier(walker) => walker.source,
        }
    }

    fn in_graph(&self, vertex: Id) -> Result<bool, QueryError> {
        match self {
            Walks::Local(walker, _) => Ok(walker.in_graph(vertex)),
            Walks::Frontier(walker) => Ok(walker.source.in_graph(&[vertex])?[0]),
        }
    }

    /// The ends of every match of `path` from `start`, a vertex of the graph.
    fn reach(&self, path: &Path, start: Id, direction: Direction) -> Result<Vec<Id>, QueryError> {
        match self {
            Walks::Local(walker, _) => {
                let mut ends = Vec::new();
                walker.reach(path, start, direction, &mut ends)?;
                Ok(ends)
            }
            Walks::Frontier(walker) => Ok(walker
                .reach(path, &[start], direction)?
                .into_iter()
                .map(|(_, end)| end)
                .collect()),
        }
    }

    /// The (start, end) columns of the matches from each of `starts` (see the walkers).
    fn pairs(
        &self,
        path: &Path,
        starts: &[Id],
        direction: Direction,
        same: bool,
    ) -> Result<(Vec<Id>, Vec<Id>), QueryError> {
        match self {
            Walks::Local(walker, _) => walker::pairs(walker, path, starts, direction, same),
            Walks::Frontier(walker) => walker.pairs(path, starts, direction, same),
        }
    }
}

/// Evaluates `subject path object` with `walks`. `seeds`: a variable end and the distinct
/// values the rows before the path bind it to; walks then start only from those.
fn evaluate(
    subject: End,
    path: &Path,
    object: End,
    seeds: Option<(VarId, Vec<Id>)>,
    walks: &Walks<'_>,
    profile: &mut PathProfile,
) -> Result<Table, QueryError> {
    // A term that is no vertex of the graph: only zero-length matches.
    let from_constant =
        |start: Id, direction: Direction, other: Option<Id>| -> Result<Vec<Id>, QueryError> {
            if walks.in_graph(start)? {
                walks.reach(path, start, direction)
            } else if other.is_none_or(|o| o == start) {
                let count = path.zero_length_count(
                    direction == Direction::Out || other.is_some(),
                    direction == Direction::In || other.is_some(),
                );
                Ok(vec![start; count])
            } else {
                Ok(Vec::new())
            }
        };
    let source = walks.source();
    profile.starts = 1;
    let table = match (subject, object) {
        (End::Const(s), End::Const(o)) => {
            profile.start = "from the subject".into();
            let ends = from_constant(s, Direction::Out, Some(o))?;
            let mut table = Table::empty(Vec::new());
            table.rows = ends.iter().filter(|&&e| e == o).count();
            table
        }
        (End::Const(s), End::Var(o)) => {
            profile.start = "from the subject".into();
            one_column(o, from_constant(s, Direction::Out, None)?)
        }
        (End::Var(s), End::Const(o)) => {
            profile.start = "from the object".into();
            one_column(s, from_constant(o, Direction::In, None)?)
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
                        source.vertices()?
                    } else {
                        match path.candidates(source, Direction::Out)? {
                            Some(starts) => starts,
                            None => source.vertices()?,
                        }
                    };
                    (starts, Direction::Out)
                }
                None => {
                    let forward = path.candidates(source, Direction::Out)?;
                    let backward = path.candidates(source, Direction::In)?;
                    let (starts, direction) = match (forward, backward) {
                        (Some(f), Some(b)) if b.len() < f.len() => (b, Direction::In),
                        (Some(f), _) => (f, Direction::Out),
                        (None, Some(b)) => (b, Direction::In),
                        (None, None) => {
                            profile.start = "from every vertex".into();
                            (source.vertices()?, Direction::Out)
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
            let (from, to) = walks.pairs(path, &starts, direction, s == o)?;
            if s == o {
                one_column(s, from)
            } else {
                let (subjects, objects) = match direction {
                    Direction::Out => (from, to),
                    Direction::In => (to, from),
                };
                Table {
                    vars: vec![s, o],
                    rows: subjects.len(),
                    columns: vec![subjects, objects],
                }
            }
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
        // On a cluster's coordinator, constant ends other owners hold are asked of them
        // first: interned unasked, a stored term would get a query-local id, which no
        // edge names.
        self.learn_held_elsewhere(|visit| {
            for end in [&pattern.subject, &pattern.object] {
                if let PathTerm::Term(term) = end {
                    visit(term);
                }
            }
            Ok(())
        })?;
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
        let partitioned = self.partitions.as_ref().map(|partitions| PartitionedEdges {
            partitions: partitions.as_ref(),
            store: self.store,
            graph: pattern.graph,
            merged: &self.dataset.merged_names,
            state: self.state,
        });
        let walks = match &partitioned {
            Some(source) => Walks::Frontier(FrontierWalker {
                source,
                ctx: &context,
            }),
            None => Walks::Local(
                Walker {
                    graph: context.graph,
                    ctx: &context,
                },
                GraphEdges(context.graph),
            ),
        };
        let table = evaluate(subject, &pattern.path, object, seeds, &walks, &mut profile)?;
        profile.micros = started.elapsed().as_secs_f64() * 1e6;
        self.path_profiles.borrow_mut().push(profile);
        Ok(table)
    }
}
