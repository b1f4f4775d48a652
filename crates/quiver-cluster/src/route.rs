//! Where each step of a plan runs over a partitioned store.
//!
//! A partition holds whole the OUT record of each vertex it owns, and its IN record except
//! for `rdf:type`, whose IN side (a class's instances) every partition holds for the
//! instances it owns. So:
//! - a walk out of a vertex, and any check (both ends bound, turned into a walk out of the
//!   subject), runs at the owner of the subject;
//! - a walk into a vertex over a constant predicate other than `rdf:type`, or over a
//!   variable predicate when the vertex is no class of the graph, runs at the owner of that
//!   vertex;
//! - a walk into a class over `rdf:type` or a variable predicate runs on every partition,
//!   each over its share of the class's IN record (the shares are disjoint);
//! - a predicate index and a scan run on every partition, each over its own vertices;
//! - the objects of `rdf:type` (the classes) are listed by every partition that owns one of
//!   a class's instances, so they are taken once, from the union of the partitions' lists.
//!
//! An intersection (a walk fused with a partner pattern) reads two lists, at two sources
//! that different partitions may own. Where both lists are held whole by their sources'
//! owners ([`whole_at_owner`]), the executor over processes keeps it fused: the rows go to
//! the owners of the side with more distinct values and the other side's lists, fetched
//! once per distinct value, come to them ([`orient`]); the walk's fan-out never moves.
//! Otherwise (a class's instances, split over the partitions), and always for the
//! in-process executor, it runs as the walk, then a check of the partner pattern.
//!
//! Both executors also take from here what a partition reads besides its own graphs: its
//! share of a merge of `FROM` graphs, and its counts of a count read from the index.

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node, Pattern, Pred};
use quiver_sparql::context::{ExecContext, QueryState};
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::index_aggregate::partition_counts;
use quiver_sparql::operator::index_aggregate::{Counts, Graphs, IndexAggregate};
use quiver_sparql::partitions::PartitionedBgp;
use quiver_sparql::step::{Step, StepKind};
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::partition::owner;
use quiver_store::{Direction, GraphIndex, Store};

/// The most rows (or list ids) a message may carry to be handled in place
/// (`in_place.rs`), and a walk's rows to be answered from learnt records (`learnt/`): about
/// a light query's fan-out (Wukong moves the query, rather than fetching records, past
/// ~300).
pub(crate) const IN_PLACE_ROWS: u64 = 256;

/// Where a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// At the owner of this end's value: a constant's owner for every row, else each row's
    /// own.
    Owner(Node),
    /// On every partition, each over its own share, with every row.
    Everywhere,
    /// On no partition: the rows take every class of the graph (the union of the
    /// partitions' objects of `rdf:type`).
    Classes,
}

/// The plan with each intersection split into its walk and a check of the partner pattern.
pub fn split_intersections(steps: &[Step]) -> Vec<Step> {
    let mut split = Vec::with_capacity(steps.len());
    for step in steps {
        split.push(Step {
            partner: None,
            ..*step
        });
        if let Some((partner, direction)) = step.partner {
            split.push(Step::new(partner, StepKind::Walk(direction), step.estimate));
        }
    }
    split
}

/// Whether the list of `pattern` walked in `direction` from its source is held whole by
/// the owner of that source: an OUT record, or an IN record over a constant predicate
/// other than `rdf:type` (whose IN side each partition holds for its own instances).
pub fn whole_at_owner(pattern: &Pattern, direction: Direction, rdf_type: Option<PredId>) -> bool {
    match (direction, pattern.predicate) {
        (Direction::Out, Pred::Const(_)) => true,
        (Direction::In, Pred::Const(p)) => Some(p) != rdf_type,
        _ => false,
    }
}

/// The plan with each intersection split into its walk and a check of the partner pattern,
/// except those whose two lists are both held whole at their sources' owners (for an
/// executor that fetches partner lists, [`orient`]).
pub fn split_foreign_intersections(
    bgp: &Bgp,
    steps: &[Step],
    rdf_type: Option<PredId>,
) -> Vec<Step> {
    let mut split = Vec::with_capacity(steps.len());
    for step in steps {
        match (step.kind, step.partner) {
            (StepKind::Walk(direction), Some((partner, partner_direction)))
                if whole_at_owner(&bgp.patterns[step.pattern], direction, rdf_type)
                    && whole_at_owner(&bgp.patterns[partner], partner_direction, rdf_type) =>
            {
                split.push(*step)
            }
            _ => split.extend(split_intersections(std::slice::from_ref(step))),
        }
    }
    split
}

/// The node a walk of `pattern` in `direction` starts from.
pub fn source(pattern: &Pattern, direction: Direction) -> Node {
    match direction {
        Direction::Out => pattern.subject,
        Direction::In => pattern.object,
    }
}

/// Distinct bound values of `node` over `rows` (a constant: one).
pub fn distinct_values(node: Node, rows: &Table) -> Vec<Id> {
    let mut values: Vec<Id> = match node {
        Node::Const(c) => vec![c],
        Node::Var(v) => rows.column(v).map(<[Id]>::to_vec).unwrap_or_default(),
        Node::Absent => Vec::new(),
    };
    values.sort_unstable();
    values.dedup();
    values.retain(|&v| v != UNBOUND);
    values
}

/// A kept intersection (`split_foreign_intersections`) turned so that its walk is the side
/// whose source has more distinct values in `rows` (the rows go to those owners) and its
/// partner the side with fewer (whose lists are fetched, once per value): an intersection
/// is symmetric, so either side can be walked.
pub fn orient(bgp: &Bgp, step: &Step, rows: &Table) -> Step {
    let (StepKind::Walk(direction), Some((partner, partner_direction))) = (step.kind, step.partner)
    else {
        return *step;
    };
    let walked = distinct_values(source(&bgp.patterns[step.pattern], direction), rows).len();
    let fetched = distinct_values(source(&bgp.patterns[partner], partner_direction), rows).len();
    if fetched <= walked {
        return *step;
    }
    Step {
        pattern: partner,
        kind: StepKind::Walk(partner_direction),
        estimate: step.estimate,
        partner: Some((step.pattern, direction)),
    }
}

/// Where `step` of `bgp` runs over `rows` (which of its pattern's nodes they bind), and
/// the step to run there (a check becomes a walk out of the subject). `classes` (sorted)
/// are the graph's objects of `rdf:type`: a walk into a vertex over a variable predicate
/// runs at the vertex's owner alone when no row's vertex is one of them, since only a
/// class has its IN record shared among the partitions.
pub fn place(
    bgp: &Bgp,
    step: &Step,
    rows: &Table,
    rdf_type: Option<PredId>,
    classes: &[Id],
) -> (Placement, Step) {
    let bound = |node: Node| match node {
        Node::Var(v) => rows.column(v).is_some(),
        Node::Const(_) | Node::Absent => true,
    };
    let pattern = &bgp.patterns[step.pattern];
    let is_type = matches!(pattern.predicate, Pred::Const(p) if Some(p) == rdf_type);
    match step.kind {
        StepKind::Scan => (Placement::Everywhere, *step),
        StepKind::Index(Direction::Out) if is_type => (Placement::Classes, *step),
        StepKind::Index(_) => (Placement::Everywhere, *step),
        StepKind::Walk(direction) => {
            let target = match direction {
                Direction::Out => pattern.object,
                Direction::In => pattern.subject,
            };
            if bound(target) || direction == Direction::Out {
                let walk_out = Step {
                    kind: StepKind::Walk(Direction::Out),
                    ..*step
                };
                return (Placement::Owner(pattern.subject), walk_out);
            }
            match pattern.predicate {
                Pred::Const(_) if !is_type => (Placement::Owner(pattern.object), *step),
                Pred::Var(_) if !any_class(pattern.object, rows, classes) => {
                    (Placement::Owner(pattern.object), *step)
                }
                _ => (Placement::Everywhere, *step),
            }
        }
    }
}

/// Whether `node`'s value is one of `classes` (sorted) in any of `rows`.
fn any_class(node: Node, rows: &Table, classes: &[Id]) -> bool {
    let is_class = |id: &Id| classes.binary_search(id).is_ok();
    match node {
        Node::Const(c) => is_class(&c),
        Node::Var(v) => rows
            .column(v)
            .is_none_or(|column| column.iter().any(is_class)),
        Node::Absent => true,
    }
}

/// The one worker of `count` that owns `node`'s value in every row of `rows`, if there is
/// one: rows that a step gave from its own partition's vertices (a class's instances, say)
/// and that the next step reads from those same vertices all stay where they are, and go
/// there whole, neither cut nor copied ([`by_owner`]). `None` for no rows, or a row
/// without a value there.
pub fn sole_owner(rows: &Table, node: Node, count: u32) -> Option<u32> {
    if rows.rows == 0 {
        return None;
    }
    match node {
        Node::Const(c) => Some(owner(c, count)),
        Node::Var(v) => {
            let column = rows.column(v)?;
            let at = owner(*column.first()?, count);
            column
                .iter()
                .all(|&value| value != UNBOUND && owner(value, count) == at)
                .then_some(at)
        }
        Node::Absent => None,
    }
}

/// `rows` cut into `count` tables by the owner of `node`'s value in each row (a row
/// without a value there has no match: it goes to the first, which drops it).
pub fn by_owner(rows: &Table, node: Node, count: u32) -> Vec<Table> {
    let column = match node {
        Node::Var(v) => rows.column(v),
        _ => None,
    };
    let mut selections: Vec<Vec<u32>> = vec![Vec::new(); count as usize];
    for row in 0..rows.rows {
        let value = match (node, column) {
            (Node::Const(c), _) => c,
            (_, Some(column)) => column[row],
            _ => UNBOUND,
        };
        let at = if value == UNBOUND {
            0
        } else {
            owner(value, count)
        };
        selections[at as usize].push(row as u32);
    }
    selections.iter().map(|s| rows.gather(s)).collect()
}

/// The objects of `rdf:type` of a graph: the union of its partitions' lists, sorted.
pub fn classes(graphs: &[&GraphIndex], rdf_type: Option<PredId>) -> Vec<Id> {
    let Some(rdf_type) = rdf_type else {
        return Vec::new();
    };
    let mut classes: Vec<Id> = graphs
        .iter()
        .flat_map(|graph| graph.predicate_objects(rdf_type).iter().copied())
        .collect();
    classes.sort_unstable();
    classes.dedup();
    classes
}

/// An index step over the objects of `rdf:type` (`classes`, sorted): every row takes
/// every class when the object is free, else keeps the rows whose object is one.
pub fn with_classes(bgp: &Bgp, step: &Step, rows: &Table, classes: &[Id]) -> Table {
    debug_assert_eq!(step.kind, StepKind::Index(Direction::Out));
    let object = bgp.patterns[step.pattern].object;
    match object {
        Node::Var(v) if rows.column(v).is_none() => {
            let selection: Vec<u32> = (0..rows.rows as u32)
                .flat_map(|row| std::iter::repeat_n(row, classes.len()))
                .collect();
            let mut table = rows.gather(&selection);
            table.vars.push(v);
            table.columns.push(
                (0..rows.rows)
                    .flat_map(|_| classes.iter().copied())
                    .collect(),
            );
            table
        }
        _ => {
            let known = |row: usize| match object {
                Node::Const(c) => c,
                Node::Var(v) => rows.column(v).map_or(UNBOUND, |column| column[row]),
                Node::Absent => UNBOUND,
            };
            let selection: Vec<u32> = (0..rows.rows)
                .filter(|&row| classes.binary_search(&known(row)).is_ok())
                .map(|row| row as u32)
                .collect();
            rows.gather(&selection)
        }
    }
}

/// What a request answers before any step, if anything: an unsatisfiable pattern's empty
/// table (its input's columns and the pattern's).
pub fn settled(request: &PartitionedBgp<'_>) -> Option<Result<Table, QueryError>> {
    if !request.bgp.is_unsatisfiable() {
        return None;
    }
    let mut vars = request.input.vars.clone();
    for v in request.bgp.vars() {
        if !vars.contains(&v) {
            vars.push(v);
        }
    }
    Some(Ok(Table::empty(vars)))
}

/// The graph `graph` of `part`: its own index, or (the merge of `FROM` graphs) its share
/// of the merge of `merged`, built here.
pub fn partition_graph<'a>(
    part: &'a Store,
    graph: GraphRef,
    merged: &[Id],
) -> std::borrow::Cow<'a, GraphIndex> {
    match graph {
        GraphRef::Merged => {
            let names: Vec<Option<Id>> = merged.iter().map(|&name| Some(name)).collect();
            std::borrow::Cow::Owned(part.merged_share(&names))
        }
        _ => std::borrow::Cow::Borrowed(graph_index(part, graph)),
    }
}

/// The one graph a count read from the index reads (counts of `GRAPH ?g` do not run over
/// partitions).
pub fn aggregate_graph(aggregate: &IndexAggregate) -> Result<GraphRef, QueryError> {
    match aggregate.graphs {
        Graphs::One(graph) => Ok(graph),
        Graphs::Each { .. } => Err(QueryError::Unsupported(
            "counts of GRAPH ?g read from the index over partitions".into(),
        )),
    }
}

/// `aggregate` counted on `part`, over its share of the graph (of the merge of `merged`).
pub fn count_on(
    part: &Store,
    aggregate: &IndexAggregate,
    merged: &[Id],
    state: &QueryState,
) -> Result<Counts, QueryError> {
    let share = partition_graph(part, aggregate_graph(aggregate)?, merged);
    let ctx = ExecContext {
        store: part,
        graph: &share,
        threads: 1,
        state,
        device: None,
    };
    partition_counts(part, &share, aggregate, &ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table has a sole owner exactly where cutting it by owner leaves every row in one
    /// part, bound: it then travels whole.
    #[test]
    fn a_sole_owner_is_where_every_row_would_go() {
        let workers = 3;
        let (mine, theirs): (Vec<Id>, Vec<Id>) = (0..200).partition(|&v| owner(v, workers) == 1);
        let table = |column: Vec<Id>| Table {
            vars: vec![0],
            rows: column.len(),
            columns: vec![column],
        };
        let cases = [
            (table(mine.clone()), Some(1)),
            (table(vec![mine[0]]), Some(1)),
            (table(vec![mine[0], theirs[0]]), None),
            (table(vec![mine[0], UNBOUND]), None),
            (table(vec![UNBOUND]), None),
            (table(Vec::new()), None),
        ];
        for (rows, expected) in cases {
            assert_eq!(
                sole_owner(&rows, Node::Var(0), workers),
                expected,
                "{rows:?}"
            );
            let parts = by_owner(&rows, Node::Var(0), workers);
            let whole = parts
                .iter()
                .position(|part| part.rows == rows.rows && rows.rows > 0);
            let bound = !rows.columns[0].contains(&UNBOUND);
            assert_eq!(expected, whole.filter(|_| bound).map(|at| at as u32));
        }
        assert_eq!(
            sole_owner(&table(theirs), Node::Const(mine[0]), workers),
            Some(1)
        );
        assert_eq!(sole_owner(&table(mine), Node::Var(1), workers), None);
    }
}
