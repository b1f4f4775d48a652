//! Property paths walked a frontier at a time: every start of a walk advances together, one
//! request of edges per link of the path and per level of a closure. This is how paths run
//! over a partitioned store, where each request is a round of messages to the vertices'
//! owners; a graph in memory uses the vertex-by-vertex walker instead.
//!
//! The semantics are the walker's: a sequence and an alternative are bags, `*`, `+` and
//! `?` sets of ends per start (breadth-first over pairs of a start and a vertex reached).

use quiver_model::Id;
use quiver_store::Direction;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::context::ExecContext;
use crate::error::QueryError;
use crate::exec::edges::EdgeSource;
use crate::memory::ID_BYTES;
use crate::operator::Path;

/// Matches found from a list of starts: (position of the start, end), one per match.
type Matches = Vec<(u32, Id)>;

/// Bytes per match held (the pair, and its share of a visited set).
const MATCH_BYTES: usize = 2 * ID_BYTES + 8;

pub(super) struct FrontierWalker<'a> {
    pub source: &'a dyn EdgeSource,
    pub ctx: &'a ExecContext<'a>,
}

/// The distinct vertices of `matches`' ends, and each match's position among them.
fn distinct_ends(matches: &Matches) -> (Vec<Id>, Vec<u32>) {
    let mut position: FxHashMap<Id, u32> = FxHashMap::default();
    let mut vertices = Vec::new();
    let slots = matches
        .iter()
        .map(|&(_, end)| {
            *position.entry(end).or_insert_with(|| {
                vertices.push(end);
                vertices.len() as u32 - 1
            })
        })
        .collect();
    (vertices, slots)
}

/// `matches` grouped by start position: offsets into the ends (a compressed row list).
fn by_start(matches: Matches, starts: usize) -> (Vec<usize>, Vec<Id>) {
    let mut offsets = vec![0usize; starts + 1];
    for &(start, _) in &matches {
        offsets[start as usize + 1] += 1;
    }
    for i in 0..starts {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut ends = vec![0; matches.len()];
    for (start, end) in matches {
        ends[next[start as usize]] = end;
        next[start as usize] += 1;
    }
    (offsets, ends)
}

impl FrontierWalker<'_> {
    /// Every match of `path` from each of `starts` (distinct), walking in `direction`.
    pub fn reach(
        &self,
        path: &Path,
        starts: &[Id],
        direction: Direction,
    ) -> Result<Matches, QueryError> {
        self.ctx.check()?;
        if starts.is_empty() {
            return Ok(Vec::new());
        }
        Ok(match path {
            Path::Link(None) => Vec::new(),
            Path::Link(Some(p)) => {
                let edges = self.source.edges(starts, Some(*p), direction)?;
                edges.start.into_iter().zip(edges.end).collect()
            }
            Path::Negated(excluded) => {
                let edges = self.source.edges(starts, None, direction)?;
                (0..edges.len())
                    .filter(|&i| excluded.binary_search(&edges.predicate[i]).is_err())
                    .map(|i| (edges.start[i], edges.end[i]))
                    .collect()
            }
            Path::Reverse(p) => self.reach(p, starts, direction.reverse())?,
            Path::Sequence(a, b) => {
                let (first, second) = match direction {
                    Direction::Out => (a, b),
                    Direction::In => (b, a),
                };
                let middle = self.reach(first, starts, direction)?;
                self.then(second, middle, direction)?
            }
            Path::Alternative(a, b) => {
                let mut matches = self.reach(a, starts, direction)?;
                matches.extend(self.reach(b, starts, direction)?);
                matches
            }
            Path::ZeroOrOne(p) => {
                let mut matches: Matches = (0..starts.len() as u32)
                    .map(|i| (i, starts[i as usize]))
                    .collect();
                matches.extend(self.reach(p, starts, direction)?);
                matches.sort_unstable();
                matches.dedup();
                matches
            }
            Path::ZeroOrMore(p) => self.closure(p, starts, direction, true)?,
            Path::OneOrMore(p) => self.closure(p, starts, direction, false)?,
        })
    }

    /// Each of `matches` continued by a match of `path` from its end (a bag: one result
    /// per pair of matches).
    fn then(
        &self,
        path: &Path,
        matches: Matches,
        direction: Direction,
    ) -> Result<Matches, QueryError> {
        let (vertices, slots) = distinct_ends(&matches);
        let (offsets, ends) = by_start(self.reach(path, &vertices, direction)?, vertices.len());
        let mut memory = self.ctx.reservation();
        let mut out = Vec::new();
        for (i, (&(start, _), &slot)) in matches.iter().zip(&slots).enumerate() {
            if i % 4096 == 4095 {
                self.ctx.check()?;
                memory.try_resize(out.len() * MATCH_BYTES)?;
            }
            let slot = slot as usize;
            out.extend(
                ends[offsets[slot]..offsets[slot + 1]]
                    .iter()
                    .map(|&e| (start, e)),
            );
        }
        memory.try_resize(out.len() * MATCH_BYTES)?;
        Ok(out)
    }

    /// Breadth-first search over `path` from every start together: each vertex reached
    /// once per start (with the start itself when `reflexive`), as the spec's ALP function.
    fn closure(
        &self,
        path: &Path,
        starts: &[Id],
        direction: Direction,
        reflexive: bool,
    ) -> Result<Matches, QueryError> {
        let mut frontier: Matches = if reflexive {
            (0..starts.len() as u32)
                .map(|i| (i, starts[i as usize]))
                .collect()
        } else {
            self.reach(path, starts, direction)?
        };
        let mut visited: FxHashSet<(u32, Id)> = FxHashSet::default();
        frontier.retain(|&found| visited.insert(found));
        let mut memory = self.ctx.reservation();
        let mut out = frontier.clone();
        while !frontier.is_empty() {
            memory.try_resize((visited.len() + out.len() + frontier.len()) * MATCH_BYTES)?;
            let (vertices, slots) = distinct_ends(&frontier);
            let (offsets, ends) = by_start(self.reach(path, &vertices, direction)?, vertices.len());
            let mut next = Vec::new();
            for (&(start, _), &slot) in frontier.iter().zip(&slots) {
                let slot = slot as usize;
                for &end in &ends[offsets[slot]..offsets[slot + 1]] {
                    if visited.insert((start, end)) {
                        next.push((start, end));
                    }
                }
            }
            out.extend_from_slice(&next);
            frontier = next;
        }
        Ok(out)
    }

    /// The (start, end) columns of every match from each of `starts` (skipping vertices
    /// the graph lacks: between variables they match nothing); with `same`, only the
    /// starts, once per match that ends where it started.
    pub fn pairs(
        &self,
        path: &Path,
        starts: &[Id],
        direction: Direction,
        same: bool,
    ) -> Result<(Vec<Id>, Vec<Id>), QueryError> {
        let mut starts = starts.to_vec();
        starts.sort_unstable();
        starts.dedup();
        // A walk that takes at least one edge leaves only vertices of the graph.
        if path.nullable() {
            let found = self.source.in_graph(&starts)?;
            let mut i = 0;
            starts.retain(|_| {
                i += 1;
                found[i - 1]
            });
        }
        let mut matches = self.reach(path, &starts, direction)?;
        matches.sort_unstable();
        let mut from = Vec::new();
        let mut to = Vec::new();
        for (start, end) in matches {
            let start = starts[start as usize];
            if same {
                if end == start {
                    from.push(start);
                }
            } else {
                from.push(start);
                to.push(end);
            }
        }
        Ok((from, to))
    }
}
