//! Counts and distinct values of one triple pattern read from the graph index
//! ([`IndexAggregate`]), never materialising the pattern's rows.
//!
//! What each shape reads, with `s`, `p`, `o` constants and `?` variables:
//! - matches: `s p o` one membership test; `s p ?` and `? p o` a list length; `s ? o` a
//!   membership test per predicate of `s`; `s ? ?` and `? ? o` the lengths of one record;
//!   `? p ?` the predicate's triple count from the statistics (the store's default graph,
//!   exact after updates) or else the sum of its subjects' list lengths; `? ? ?` the
//!   graph's triple count;
//! - distinct values: a position that is the only variable has as many as matches; the
//!   subjects and objects of `? p ?` are the predicate index's list lengths, the predicates
//!   of `? ? ?` those with a non-empty list, its subjects and objects the vertices with a
//!   record; anything else walks the lists involved and counts their union;
//! - grouping by a position: its distinct values, then each value put in the pattern as a
//!   constant and counted as above (GROUP BY `?o` of `? p ?o`: one list length per object).
//!
//! With `GRAPH ?g` the graphs are counted one by one: matches add up, distinct values are
//! the union over the graphs.
//!
//! Under a LIMIT over the groups in no order (`SELECT DISTINCT ?s … LIMIT 10`), the first
//! groups found are counted, not every group: any of them answer.
//!
//! Over partitions, each partition counts its share and the coordinator adds them up; but
//! what the whole store's statistics tell (matches of `? p ?` and `? ? ?`, the distinct
//! subjects and objects of `? p ?`, the predicates of `? ? ?` with their counts, the
//! instances of each class) the coordinator answers from them ([`crate::statistics_counts`]), which
//! it holds merged from the partitions': no partition is asked, and the answer costs no
//! round trip between processes.

use std::time::Instant;

use quiver_model::{Id, PredId};
use quiver_store::{Direction, GraphIndex, Store};

use super::group::integers;
use super::Evaluator;
use crate::bgp::{Node, Pattern, Pred};
use crate::context::ExecContext;
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::index_aggregate::{Count, Counts, Graphs, IndexAggregate, Position};
use crate::table::Table;

/// A pattern's constants (`None`: a variable).
#[derive(Debug, Clone, Copy)]
struct Shape {
    s: Option<Id>,
    p: Option<PredId>,
    o: Option<Id>,
}

impl Shape {
    /// The shape of `pattern`; `None` when a constant is absent from the store (no match).
    fn of(pattern: &Pattern) -> Option<Shape> {
        let node = |node: Node| match node {
            Node::Var(_) => Some(None),
            Node::Const(id) => Some(Some(id)),
            Node::Absent => None,
        };
        Some(Shape {
            s: node(pattern.subject)?,
            p: match pattern.predicate {
                Pred::Var(_) => None,
                Pred::Const(p) => Some(p),
                Pred::Absent => return None,
            },
            o: node(pattern.object)?,
        })
    }

    /// The shape with `value` at `position` (a predicate id at `Predicate`).
    fn with(mut self, position: Position, value: Id) -> Shape {
        match position {
            Position::Subject => self.s = Some(value),
            Position::Predicate => self.p = Some(value as PredId),
            Position::Object => self.o = Some(value),
            Position::Graph => {}
        }
        self
    }

    /// Whether `position` is the shape's only variable.
    fn only_variable(&self, position: Position) -> bool {
        let vars = [
            (Position::Subject, self.s.is_none()),
            (Position::Predicate, self.p.is_none()),
            (Position::Object, self.o.is_none()),
        ];
        vars.iter().filter(|(_, var)| *var).count() == 1
            && vars.iter().any(|&(p, var)| p == position && var)
    }
}

/// One graph the pattern is matched in.
struct Source<'a> {
    /// The graph's name (`GRAPH ?g`), else unused.
    name: Id,
    index: &'a GraphIndex,
    /// The store whose statistics describe this graph (its default graph).
    stats: Option<&'a Store>,
}

impl Source<'_> {
    /// Matches of `shape`.
    fn matches(&self, shape: Shape) -> u64 {
        let g = self.index;
        match (shape.s, shape.p, shape.o) {
            (Some(s), Some(p), Some(o)) => u64::from(g.contains(s, p, o)),
            (Some(s), Some(p), None) => g.degree(s, p, Direction::Out) as u64,
            (None, Some(p), Some(o)) => g.degree(o, p, Direction::In) as u64,
            (Some(s), None, Some(o)) => g
                .edges(s, Direction::Out)
                .iter()
                .filter(|(_, objects)| objects.binary_search(&o).is_ok())
                .count() as u64,
            (Some(v), None, None) => record_edges(g, v, Direction::Out),
            (None, None, Some(v)) => record_edges(g, v, Direction::In),
            (None, Some(p), None) => match self.stats {
                Some(store) => store.predicate_stats(p).triples,
                None => g
                    .predicate_subjects(p)
                    .iter()
                    .map(|&s| g.degree(s, p, Direction::Out) as u64)
                    .sum(),
            },
            (None, None, None) => g.triples(),
        }
    }

    /// Distinct values at `position` (a variable of `shape`) over the matches.
    fn distinct(&self, shape: Shape, position: Position) -> u64 {
        if shape.only_variable(position) {
            return self.matches(shape);
        }
        let g = self.index;
        match (shape.s, shape.p, shape.o, position) {
            (None, Some(p), None, Position::Subject) => g.predicate_subjects(p).len() as u64,
            (None, Some(p), None, Position::Object) => g.predicate_objects(p).len() as u64,
            (None, None, None, Position::Predicate) => predicates_in_use(g).count() as u64,
            (None, None, None, Position::Subject) => vertices(g, Direction::Out),
            (None, None, None, Position::Object) => vertices(g, Direction::In),
            _ => self.values(shape, position, usize::MAX).len() as u64,
        }
    }

    /// The distinct values at `position` (a variable of `shape`), ascending; predicate ids
    /// at `Predicate`. All of them, or at least the first `limit` (all there are when
    /// fewer): a list of the index is cut, a union of lists is not.
    fn values(&self, shape: Shape, position: Position, limit: usize) -> Vec<Id> {
        let g = self.index;
        let first = |list: &[Id]| list[..list.len().min(limit)].to_vec();
        let side = |p: Option<PredId>, v: Option<Id>, direction: Direction| -> Vec<Id> {
            match (p, v) {
                (Some(p), Some(v)) => first(g.get(v, p, direction)),
                (Some(p), None) => match direction {
                    Direction::In => first(g.predicate_subjects(p)),
                    Direction::Out => first(g.predicate_objects(p)),
                },
                (None, Some(v)) => union(g.edges(v, direction).iter().map(|(_, list)| list)),
                (None, None) => {
                    let mut all = Vec::new();
                    g.for_each_vertex(direction.reverse(), |vertex, _| all.push(vertex));
                    all
                }
            }
        };
        match position {
            // Subjects: walked IN from the object, or the subjects index.
            Position::Subject => side(shape.p, shape.o, Direction::In),
            Position::Object => side(shape.p, shape.s, Direction::Out),
            Position::Predicate => match (shape.s, shape.o) {
                (Some(s), Some(o)) => g
                    .edges(s, Direction::Out)
                    .iter()
                    .filter(|(_, objects)| objects.binary_search(&o).is_ok())
                    .map(|(p, _)| p as Id)
                    .collect(),
                (Some(v), None) => record_predicates(g, v, Direction::Out),
                (None, Some(v)) => record_predicates(g, v, Direction::In),
                (None, None) => predicates_in_use(g).map(|p| p as Id).collect(),
            },
            Position::Graph => Vec::new(),
        }
    }
}

/// Edges of `vertex`'s record in `direction`.
fn record_edges(g: &GraphIndex, vertex: Id, direction: Direction) -> u64 {
    g.edges(vertex, direction)
        .iter()
        .map(|(_, list)| list.len() as u64)
        .sum()
}

/// Predicates with edges in `vertex`'s record, ascending.
fn record_predicates(g: &GraphIndex, vertex: Id, direction: Direction) -> Vec<Id> {
    g.edges(vertex, direction)
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(p, _)| p as Id)
        .collect()
}

/// Predicates with at least one triple in `g`.
fn predicates_in_use(g: &GraphIndex) -> impl Iterator<Item = PredId> + '_ {
    (0..g.predicates() as PredId).filter(|&p| !g.predicate_subjects(p).is_empty())
}

/// Vertices with edges in `direction`.
fn vertices(g: &GraphIndex, direction: Direction) -> u64 {
    let mut count = 0;
    g.for_each_vertex(direction, |_, _| count += 1);
    count
}

/// The sorted union of sorted lists.
fn union<'a>(lists: impl Iterator<Item = &'a [Id]>) -> Vec<Id> {
    let mut all: Vec<Id> = lists.flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Counts `aggregates` of `shape` over `sources`; `key` is the grouping position.
fn counts(
    shape: Shape,
    sources: &[&Source<'_>],
    key: Option<Position>,
    aggregates: &[Count],
    out: &mut [Vec<u64>],
) {
    for (count, column) in aggregates.iter().zip(out) {
        let n = match *count {
            Count::Matches => sources.iter().map(|s| s.matches(shape)).sum(),
            Count::Distinct(position) if Some(position) == key => 1,
            Count::Distinct(Position::Graph) => {
                sources.iter().filter(|s| s.matches(shape) > 0).count() as u64
            }
            Count::Distinct(position) => match sources {
                [one] => one.distinct(shape, position),
                many => union_values(shape, many, position, usize::MAX).len() as u64,
            },
        };
        column.push(n);
    }
}

/// The distinct values at `position` over every source.
fn union_values(
    shape: Shape,
    sources: &[&Source<'_>],
    position: Position,
    limit: usize,
) -> Vec<Id> {
    match sources {
        [one] => one.values(shape, position, limit),
        // Each source's first `limit` values are distinct: their union holds at least
        // `limit` values when there are that many.
        many => {
            let mut all: Vec<Id> = many
                .iter()
                .flat_map(|s| s.values(shape, position, limit))
                .collect();
            all.sort_unstable();
            all.dedup();
            all
        }
    }
}

/// The groups and counts of `op` over `sources`: every group, or (`limit`, a LIMIT over
/// groups in no order) the first `limit` groups found.
fn raw_counts(
    store: &Store,
    sources: &[Source<'_>],
    op: &IndexAggregate,
    ctx: &ExecContext<'_>,
    limit: usize,
) -> Result<Counts, QueryError> {
    let all: Vec<&Source<'_>> = sources.iter().collect();
    let aggregates: Vec<Count> = op.aggregates.iter().map(|(_, c)| *c).collect();
    let mut keys: Vec<Id> = Vec::new();
    let mut counts_out: Vec<Vec<u64>> = vec![Vec::new(); aggregates.len()];
    match (Shape::of(&op.pattern), op.key) {
        // A constant the store lacks: no groups, or one group of zeros.
        (None, Some(_)) => {}
        (None, None) => counts_out.iter_mut().for_each(|c| c.push(0)),
        (Some(shape), None) => counts(shape, &all, None, &aggregates, &mut counts_out),
        (Some(shape), Some((_, Position::Graph))) => {
            for (i, source) in sources.iter().enumerate() {
                ctx.tick(i)?;
                if source.matches(shape) > 0 {
                    keys.push(source.name);
                    counts(
                        shape,
                        &[source],
                        Some(Position::Graph),
                        &aggregates,
                        &mut counts_out,
                    );
                }
            }
        }
        (Some(shape), Some((_, position))) => {
            let mut values = union_values(shape, &all, position, limit);
            values.truncate(limit);
            let mut memory = ctx.reservation();
            memory.try_grow(values.len() * ID_BYTES * (2 + aggregates.len()))?;
            for (i, &value) in values.iter().enumerate() {
                ctx.tick(i)?;
                counts(
                    shape.with(position, value),
                    &all,
                    Some(position),
                    &aggregates,
                    &mut counts_out,
                );
                keys.push(match position {
                    Position::Predicate => store.predicate_term(value as PredId),
                    _ => value,
                });
            }
        }
    }
    Ok((keys, counts_out))
}

/// The counts of `op` (one graph, [`IndexAggregate::adds_up`]) over one partition of a
/// store, `index` being its share of the graph: what the partitions' executor runs on each.
pub fn partition_counts(
    part: &Store,
    index: &GraphIndex,
    op: &IndexAggregate,
    ctx: &ExecContext<'_>,
) -> Result<Counts, QueryError> {
    let Graphs::One(graph) = op.graphs else {
        return Err(QueryError::Unsupported(
            "counts of GRAPH ?g read from the index over partitions".into(),
        ));
    };
    let source = Source {
        name: 0,
        index,
        stats: (graph == GraphRef::Default).then_some(part),
    };
    let counts = raw_counts(part, &[source], op, ctx, op.first.unwrap_or(usize::MAX))?;
    Ok(match op.cut {
        Some(cut) if op.groups_whole_per_partition(part.rdf_type()) => cut.apply(counts),
        _ => counts,
    })
}

/// The store's counts from its partitions': matches added up per key, keys united.
fn merge(op: &IndexAggregate, parts: Vec<Counts>) -> Counts {
    let width = op.aggregates.len();
    if op.key.is_none() {
        let mut sums = vec![0u64; width];
        for (_, counts) in &parts {
            for (sum, column) in sums.iter_mut().zip(counts) {
                *sum += column.iter().sum::<u64>();
            }
        }
        return (Vec::new(), sums.into_iter().map(|n| vec![n]).collect());
    }
    // Every partition's rows, sorted by key: a key's rows are then adjacent and summed in
    // one pass (no map, no allocation per group).
    let mut rows: Vec<(Id, usize, usize)> = parts
        .iter()
        .enumerate()
        .flat_map(|(part, (keys, _))| {
            keys.iter()
                .enumerate()
                .map(move |(row, &key)| (key, part, row))
        })
        .collect();
    rows.sort_unstable();
    let mut keys: Vec<Id> = Vec::new();
    let mut columns: Vec<Vec<u64>> = vec![Vec::new(); width];
    for (key, part, row) in rows {
        if keys.last() != Some(&key) {
            keys.push(key);
            columns.iter_mut().for_each(|column| column.push(0));
        }
        for (column, counts) in columns.iter_mut().zip(&parts[part].1) {
            *column.last_mut().expect("a group was pushed") += counts[row];
        }
    }
    (keys, columns)
}

impl Evaluator<'_> {
    /// Runs an [`IndexAggregate`]: one row per group (or one in all without a key), the
    /// key's term and each count as an `xsd:integer`. Over partitions, each partition
    /// counts its share and the counts are added up here. Under a LIMIT asking `limit`
    /// rows of it (in no order: a cut by counts takes none), only the first groups found
    /// (over partitions, each partition's first groups, where
    /// [`IndexAggregate::first_groups`] allows).
    pub(crate) fn index_aggregate(
        &self,
        op: &IndexAggregate,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        let started = Instant::now();
        let ctx = self.ctx();
        let mut statistics = false;
        let (keys, counts_out) = match &self.partitions {
            Some(partitions) => match crate::statistics_counts::counts(self.store, op) {
                Some(counts) => {
                    statistics = true;
                    counts
                }
                None => {
                    // Under a LIMIT in no order, each partition sends its first groups.
                    let mut asked = std::borrow::Cow::Borrowed(op);
                    if let Some(limit) = limit.filter(|_| op.first_groups(self.store.rdf_type())) {
                        asked.to_mut().first = Some(limit);
                    }
                    let counts =
                        partitions.aggregate(&asked, &self.dataset.merged_names, self.state)?;
                    merge(op, counts)
                }
            },
            None => {
                let source = |name: Id, graph: GraphRef| Source {
                    name,
                    index: self.dataset.index(self.store, graph),
                    stats: (graph == GraphRef::Default).then_some(self.store),
                };
                let sources: Vec<Source<'_>> = match &op.graphs {
                    Graphs::One(graph) => vec![source(0, *graph)],
                    Graphs::Each { graphs, .. } => graphs
                        .iter()
                        .map(|&(name, graph)| source(name, graph))
                        .collect(),
                };
                let limit = limit.filter(|_| op.cut.is_none());
                raw_counts(self.store, &sources, op, &ctx, limit.unwrap_or(usize::MAX))?
            }
        };
        let groups = keys.len();
        let (keys, counts_out) = match op.cut {
            Some(cut) => cut.apply((keys, counts_out)),
            None => (keys, counts_out),
        };
        let table = self.index_aggregate_table(&ctx, op, keys, counts_out)?;
        let cut = match op.cut {
            Some(cut) => {
                let order = if cut.descending {
                    "largest"
                } else {
                    "smallest"
                };
                let where_cut = if self.partitions.is_some()
                    && op.groups_whole_per_partition(self.store.rdf_type())
                {
                    " (each partition sent only those of its own)"
                } else {
                    ""
                };
                format!(
                    ", cut from {groups} to the groups whose counts can be among the {} {order}{where_cut}",
                    cut.k
                )
            }
            None => String::new(),
        };
        let source = match statistics {
            true => "the whole store's statistics (no partition asked)",
            false => "the index",
        };
        self.notes.borrow_mut().push(format!(
            "index aggregate: {} read from {source} into {} row(s), no rows materialised{cut}, {:.1} µs",
            op.pattern,
            table.rows,
            started.elapsed().as_secs_f64() * 1e6
        ));
        Ok(table)
    }

    /// The output table: the key column, then the counts as `xsd:integer` terms.
    fn index_aggregate_table(
        &self,
        ctx: &ExecContext<'_>,
        op: &IndexAggregate,
        keys: Vec<Id>,
        counts: Vec<Vec<u64>>,
    ) -> Result<Table, QueryError> {
        let rows = counts.first().map_or(keys.len(), Vec::len);
        let mut columns = Vec::with_capacity(1 + counts.len());
        if op.key.is_some() {
            columns.push(keys);
        }
        for column in counts {
            columns.push(integers(self, column));
        }
        ctx.check()?;
        Ok(Table {
            vars: op.vars(),
            columns,
            rows,
        })
    }
}
