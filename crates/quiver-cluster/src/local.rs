//! A partitioned store's partitions in one process: each step runs on the partitions
//! [`crate::route`] names, and its rows move between them in memory.

use quiver_model::{Id, PredId};
use quiver_sparql::bgp::{Bgp, Node};
use quiver_sparql::context::ExecContext;
use quiver_sparql::dataset::{graph_index, GraphRef};
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::run_step;
use quiver_sparql::partitions::{BgpPartitions, PartitionedBgp};
use quiver_sparql::step::Step;
use quiver_sparql::table::{Table, UNBOUND};
use quiver_store::partition::owner;
use quiver_store::{Direction, GraphIndex, Store};
use rayon::prelude::*;

use crate::route::{place, split_intersections, Placement};

/// The partitions of one store, all in this process.
#[derive(Debug)]
pub struct LocalPartitions {
    parts: Vec<Store>,
}

impl LocalPartitions {
    /// `store` cut into `count` partitions.
    pub fn of(store: &Store, count: u32) -> Self {
        Self {
            parts: (0..count).map(|i| store.partition(i, count)).collect(),
        }
    }

    /// Partitions opened or cut elsewhere: partition `i` of `parts.len()` at place `i`.
    pub fn new(parts: Vec<Store>) -> Result<Self, String> {
        let count = parts.len() as u32;
        for (i, part) in parts.iter().enumerate() {
            match part.partition_info() {
                Some(info) if info.index == i as u32 && info.count == count => {}
                _ => {
                    return Err(format!(
                        "place {i} of {count} holds no partition {i} of {count}"
                    ))
                }
            }
        }
        Ok(Self { parts })
    }

    pub fn partitions(&self) -> &[Store] {
        &self.parts
    }

    fn count(&self) -> u32 {
        self.parts.len() as u32
    }

    /// Runs `step` on every partition with the rows it is given there; returns their
    /// rows together.
    fn run_each(
        &self,
        request: &PartitionedBgp<'_>,
        graphs: &[&GraphIndex],
        step: &Step,
        rows: Vec<Table>,
    ) -> Result<Table, QueryError> {
        let parts: Vec<Table> = self
            .parts
            .par_iter()
            .zip(graphs.par_iter())
            .zip(rows.into_par_iter())
            .map(|((part, graph), rows)| {
                let ctx = ExecContext {
                    store: part,
                    graph,
                    threads: 1,
                    state: request.state,
                    device: None,
                };
                run_step(&ctx, request.bgp, step, &rows)
            })
            .collect::<Result<_, _>>()?;
        Ok(Table::concat(parts))
    }

    /// The rows cut by the owner of `node`'s value in each row.
    fn by_owner(&self, rows: &Table, node: Node) -> Vec<Table> {
        let count = self.count();
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
            // A row without a value there has no match: any partition drops it.
            let at = if value == UNBOUND {
                0
            } else {
                owner(value, count)
            };
            selections[at as usize].push(row as u32);
        }
        selections.iter().map(|s| rows.gather(s)).collect()
    }
}

impl BgpPartitions for LocalPartitions {
    fn name(&self) -> String {
        format!("{} partitions in this process", self.parts.len())
    }

    fn explore(&self, request: PartitionedBgp<'_>) -> Result<Table, QueryError> {
        let bgp = request.bgp;
        if bgp.is_unsatisfiable() {
            let mut vars = request.input.vars.clone();
            for v in bgp.vars() {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
            return Ok(Table::empty(vars));
        }
        if request.graph == GraphRef::Merged {
            return Err(QueryError::Unsupported(
                "a dataset of several FROM graphs over a partitioned store".into(),
            ));
        }
        let graphs: Vec<&GraphIndex> = self
            .parts
            .iter()
            .map(|part| graph_index(part, request.graph))
            .collect();
        let rdf_type = self.parts.first().and_then(Store::rdf_type);
        let mut rows = request.input.clone();
        for step in split_intersections(request.steps) {
            request.state.check()?;
            let bound = |node: Node| match node {
                Node::Var(v) => rows.column(v).is_some(),
                Node::Const(_) | Node::Absent => true,
            };
            let (placement, step) = place(bgp, &step, bound, rdf_type);
            rows = match placement {
                Placement::Owner(node) => {
                    let cut = self.by_owner(&rows, node);
                    self.run_each(&request, &graphs, &step, cut)?
                }
                Placement::Everywhere => {
                    let copies = vec![rows.clone(); self.parts.len()];
                    self.run_each(&request, &graphs, &step, copies)?
                }
                Placement::Classes => with_classes(bgp, &step, &rows, &classes(&graphs, rdf_type)),
            };
        }
        Ok(rows)
    }
}

/// The objects of `rdf:type` of a graph: the union of its partitions' lists, sorted.
fn classes(graphs: &[&GraphIndex], rdf_type: Option<PredId>) -> Vec<Id> {
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

/// An index step over the objects of `rdf:type` (`classes`): every row takes every class
/// when the object is free, else keeps the rows whose object is one.
fn with_classes(bgp: &Bgp, step: &Step, rows: &Table, classes: &[Id]) -> Table {
    debug_assert!(matches!(
        step.kind,
        quiver_sparql::step::StepKind::Index(Direction::Out)
    ));
    let object = bgp.patterns[step.pattern].object;
    let known = |row: usize| match object {
        Node::Const(c) => Some(c),
        Node::Var(v) => rows.column(v).map(|column| column[row]),
        Node::Absent => Some(UNBOUND),
    };
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
            let selection: Vec<u32> = (0..rows.rows)
                .filter(|&row| known(row).is_some_and(|c| classes.binary_search(&c).is_ok()))
                .map(|row| row as u32)
                .collect();
            rows.gather(&selection)
        }
    }
}
