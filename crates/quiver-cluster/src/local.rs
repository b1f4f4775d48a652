//! A partitioned store's partitions in one process: each step runs on the partitions
//! [`crate::route`] names, and its rows move between them in memory.

use quiver_model::Id;
use quiver_sparql::context::{ExecContext, QueryState};
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::run_step;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{BgpPartitions, PartitionedBgp};
use quiver_sparql::step::Step;
use quiver_sparql::table::Table;
use quiver_store::{GraphIndex, Store};
use rayon::prelude::*;

use crate::route::{
    by_owner, classes, count_on, partition_graph, place, settled, split_intersections,
    with_classes, Placement,
};

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
}

impl BgpPartitions for LocalPartitions {
    fn name(&self) -> String {
        format!("{} partitions in this process", self.parts.len())
    }

    fn aggregate(
        &self,
        aggregate: &IndexAggregate,
        merged: &[Id],
        state: &QueryState,
    ) -> Result<Vec<Counts>, QueryError> {
        self.parts
            .par_iter()
            .map(|part| count_on(part, aggregate, merged, state))
            .collect()
    }

    fn explore(&self, mut request: PartitionedBgp<'_>) -> Result<Table, QueryError> {
        let bgp = request.bgp;
        if let Some(answer) = settled(&request) {
            return answer;
        }
        let owned: Vec<std::borrow::Cow<'_, GraphIndex>> = self
            .parts
            .iter()
            .map(|part| partition_graph(part, request.graph, request.merged))
            .collect();
        let graphs: Vec<&GraphIndex> = owned.iter().map(|g| g.as_ref()).collect();
        let rdf_type = self.parts.first().and_then(Store::rdf_type);
        let mut rows = std::mem::take(&mut request.input);
        for step in split_intersections(request.steps) {
            request.state.check()?;
            let (placement, step) = place(bgp, &step, &rows, rdf_type);
            rows = match placement {
                Placement::Owner(node) => {
                    let cut = by_owner(&rows, node, self.count());
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
