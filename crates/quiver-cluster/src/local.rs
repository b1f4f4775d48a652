//! A partitioned store's partitions in one process: each step runs on the partitions
//! [`crate::route`] names, and its rows move between them in memory. Traced, each
//! partition's run of a step is recorded as its worker's (nothing is serialized, so
//! nothing is counted as moved).

use quiver_model::Id;
use quiver_sparql::bgp::Node;
use quiver_sparql::context::{ExecContext, QueryState};
use quiver_sparql::degree::DegreeAsk;
use quiver_sparql::error::QueryError;
use quiver_sparql::exec::bgp::explore::run_step;
use quiver_sparql::operator::index_aggregate::{Counts, IndexAggregate};
use quiver_sparql::partitions::{
    BgpPartitions, Explored, PartitionTrace, PartitionedBgp, WorkerRole, WorkerStep,
};
use quiver_sparql::planner::Spread;
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

    /// Runs step `s`, `step`, on every partition with the rows it is given there; returns
    /// their rows together, and adds what each partition did to `work` when traced.
    fn run_each(
        &self,
        request: &PartitionedBgp<'_>,
        graphs: &[&GraphIndex],
        (s, step): (usize, &Step),
        rows: Vec<Table>,
        work: &mut Vec<WorkerStep>,
    ) -> Result<Table, QueryError> {
        let parts: Vec<(Table, Option<WorkerStep>)> = self
            .parts
            .par_iter()
            .zip(graphs.par_iter())
            .zip(rows.into_par_iter())
            .enumerate()
            .map(|(worker, ((part, graph), rows))| {
                let started = request.trace.then(std::time::Instant::now);
                let ctx = ExecContext {
                    store: part,
                    graph,
                    threads: 1,
                    state: request.state,
                    device: None,
                };
                let out = run_step(&ctx, request.bgp, step, &rows)?;
                let record = started.map(|started| WorkerStep {
                    rows_out: out.rows as u64,
                    micros: started.elapsed().as_secs_f64() * 1e6,
                    ..WorkerStep::new(s as u32, worker as u32, WorkerRole::Ran, rows.rows as u64)
                });
                Ok((out, record))
            })
            .collect::<Result<_, QueryError>>()?;
        let (parts, records): (Vec<Table>, Vec<Option<WorkerStep>>) = parts.into_iter().unzip();
        // A partition given no rows did nothing.
        let records = records.into_iter().flatten().filter(|r| r.rows_in > 0);
        WorkerStep::add_all(work, records);
        Ok(Table::concat(parts))
    }
}

impl BgpPartitions for LocalPartitions {
    fn name(&self) -> String {
        format!("{} partitions in this process", self.parts.len())
    }

    /// Type checks and walks run at their owners here: no partition holds the others'
    /// memberships or edges.
    fn spread(&self) -> Spread {
        Spread {
            partitions: self.count(),
            types_everywhere: false,
            replicated: Vec::new(),
        }
    }

    fn degrees(&self, asks: &[DegreeAsk]) -> Result<Option<Vec<u64>>, QueryError> {
        let count = self.count();
        let sizes = asks
            .iter()
            .map(|ask| {
                ask.count(&self.parts[quiver_store::partition::owner(ask.vertex, count) as usize])
            })
            .collect();
        Ok(Some(sizes))
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

    fn explore(&self, mut request: PartitionedBgp<'_>) -> Result<Explored, QueryError> {
        let bgp = request.bgp;
        if let Some(answer) = settled(&request) {
            return answer.map(Explored::from);
        }
        let owned: Vec<std::borrow::Cow<'_, GraphIndex>> = self
            .parts
            .iter()
            .map(|part| partition_graph(part, request.graph, request.merged))
            .collect();
        let graphs: Vec<&GraphIndex> = owned.iter().map(|g| g.as_ref()).collect();
        let rdf_type = self.parts.first().and_then(Store::rdf_type);
        let mut rows = std::mem::take(&mut request.input);
        let steps = split_intersections(request.steps);
        let mut work = Vec::new();
        let classes = classes(&graphs, rdf_type);
        for (s, step) in steps.iter().enumerate() {
            request.state.check()?;
            let (placement, step) = place(bgp, step, &rows, rdf_type, &classes);
            rows = match placement {
                Placement::Owner(node) => {
                    let cut = by_owner(&rows, node, self.count());
                    self.run_each(&request, &graphs, (s, &step), cut, &mut work)?
                }
                Placement::Everywhere => {
                    let copies = vec![rows.clone(); self.parts.len()];
                    self.run_each(&request, &graphs, (s, &step), copies, &mut work)?
                }
                Placement::Classes => with_classes(bgp, &step, &rows, &classes),
            };
        }
        // Each FILTER (NOT) EXISTS of one edge at the owners of its vertex.
        for check in &request.checks {
            let cut = by_owner(&rows, Node::Var(check.var), self.count());
            rows = Table::concat(
                cut.into_iter()
                    .zip(&graphs)
                    .map(|(rows, graph)| check.keep(graph, rows))
                    .collect(),
            );
        }
        let trace = request.trace.then(|| PartitionTrace {
            executor: self.name(),
            steps,
            work,
            counted_by: None,
            cut_to: None,
            narrowed: None,
            filtered: Vec::new(),
            checked: request.checks.clone(),
        });
        Ok(Explored {
            rows,
            trace,
            counts: None,
        })
    }
}
