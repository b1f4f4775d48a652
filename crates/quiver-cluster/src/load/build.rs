//! The builders' part of a load: a partition built from its edges and its share of the
//! dictionary, saved (beside the old one when a cluster grows), and the layout made from
//! every partition's summary.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use quiver_model::Id;
use quiver_store::partition::{
    graph_classes, new_layout, partition_dir, GraphClasses, PartitionInfo, SplitEdges,
    PARTITION_HASH,
};
use quiver_store::partition_commit::next_partition_dir;
use quiver_store::partition_stats::StatisticsMerger;
use quiver_store::{Direction, LoadInfo, Store};
use rayon::prelude::*;

use super::{peak_rss, LoadedCluster, PartitionSummary};

use super::message::*;

/// A builder's edges by graph (`DEFAULT` for the default graph; predicate term ids until
/// the vocabulary is complete), vocabulary and id bound.
#[derive(Default)]
pub(super) struct Edges {
    graphs_edges: BTreeMap<Id, SplitEdges>,
    predicates: BTreeMap<Id, String>,
    graphs: BTreeSet<Id>,
    id_bound: Option<u64>,
    failure: Option<String>,
}

impl Edges {
    /// Adds an existing partition's edges, predicates and graph names (a cluster grown),
    /// with predicates as term ids like the new edges.
    pub(super) fn add_partition(&mut self, store: &Store) -> Result<(), String> {
        let iris = store
            .partition_info()
            .map(|info| info.predicates.clone())
            .unwrap_or_default();
        let count = store.predicate_count();
        if iris.len() != count {
            return Err("the partition does not name its predicates".into());
        }
        let terms: Vec<Id> = (0..count).map(|p| store.predicate_term(p as u32)).collect();
        self.predicates.extend(terms.iter().copied().zip(iris));
        let graphs = std::iter::once((DEFAULT, store.graph())).chain(
            store
                .graph_names()
                .filter_map(|name| Some((name, store.named_graph(name)?))),
        );
        for (name, index) in graphs {
            if name != DEFAULT {
                self.graphs.insert(name);
            }
            let (out, inn) = self.graphs_edges.entry(name).or_default();
            for (direction, list) in [(Direction::Out, out), (Direction::In, inn)] {
                index.for_each_vertex(direction, |vertex, record| {
                    for i in 0..record.len() {
                        let (predicate, neighbours) = record.entry(i);
                        let term = terms[predicate as usize];
                        list.extend(neighbours.iter().map(|&n| [vertex, term, n]));
                    }
                });
            }
        }
        Ok(())
    }

    pub(super) fn take(&mut self, message: LoadMessage) {
        match message {
            LoadMessage::Edges { out, inn, .. } => {
                for (side, edges) in [(0, out), (1, inn)] {
                    for [key, p, other, g] in edges {
                        let graph = self.graphs_edges.entry(g).or_default();
                        let list = if side == 0 {
                            &mut graph.0
                        } else {
                            &mut graph.1
                        };
                        if list.len() == list.capacity() {
                            grow(list);
                        }
                        list.push([key, p, other]);
                    }
                }
            }
            LoadMessage::Vocabulary {
                predicates,
                graphs,
                id_bound,
                ..
            } => {
                self.predicates.extend(predicates);
                self.graphs.extend(graphs);
                self.id_bound = self.id_bound.or(id_bound);
            }
            LoadMessage::Failed { message, .. } => {
                self.failure.get_or_insert(message);
            }
            _ => {}
        }
    }
}

/// Edges a list holds before it grows by the system's page maps alone (36 MiB, past
/// glibc's largest threshold for mapping an allocation apart, 32 MiB).
const MAPPED_EDGES: usize = 3 << 20;

/// Edges a list holds before it jumps to [`MAPPED_EDGES`].
const SMALL_EDGES: usize = 1 << 16;

/// Makes room in a full list of edges. Doubled on the heap, a list of tens of MiB is copied
/// to a new block at each step and leaves the old one free, which glibc keeps resident: on
/// LUBM-100 over four processes, ~50 MiB per process at the end of the exchange. Past
/// [`SMALL_EDGES`] it jumps to a mapped allocation, which grows in place (`mremap`) and
/// whose untouched capacity costs no memory.
fn grow(list: &mut Vec<[Id; 3]>) {
    let len = list.len();
    let target = match len {
        0 => 1024,
        n if n < SMALL_EDGES => 2 * n,
        n => (2 * n).max(MAPPED_EDGES),
    };
    list.reserve_exact(target - len);
}

/// Builds and saves partition `index`; its summary.
pub(super) fn build(
    index: u32,
    workers: u32,
    dir: &Path,
    mut edges: Edges,
    state: &Shared,
) -> Result<PartitionSummary, String> {
    if let Some(failure) = edges
        .failure
        .take()
        .or_else(|| state.borrow().failure.clone())
    {
        return Err(failure);
    }
    state.borrow_mut().mark("edges received");
    let existing = state.borrow_mut().existing.take();
    if let Some(existing) = &existing {
        edges.add_partition(existing)?;
    }
    let dictionary = state
        .borrow_mut()
        .dictionary
        .take()
        .ok_or("the partition's dictionary was not numbered")?;
    let id_bound = edges
        .id_bound
        .ok_or("the cluster's id bound did not arrive")?;
    let (ids, iris): (Vec<Id>, Vec<String>) = edges.predicates.into_iter().unzip();
    let mut graphs = edges.graphs_edges;
    // Predicate term ids to predicate ids, in place.
    let missing = std::sync::atomic::AtomicBool::new(false);
    for (out, inn) in graphs.values_mut() {
        out.par_iter_mut()
            .chain(inn.par_iter_mut())
            .for_each(|edge| match ids.binary_search(&edge[1]) {
                Ok(p) => edge[1] = p as Id,
                Err(_) => missing.store(true, std::sync::atomic::Ordering::Relaxed),
            });
    }
    if missing.into_inner() {
        return Err("an edge's predicate is not in the vocabulary".into());
    }
    let default_graph = graphs.remove(&DEFAULT).unwrap_or_default();
    for name in &edges.graphs {
        graphs.entry(*name).or_default();
    }
    if graphs.keys().any(|name| !edges.graphs.contains(name)) {
        return Err("an edge's graph is not in the vocabulary".into());
    }
    let (statements, mut sources) = {
        let state = state.borrow();
        (state.statements, state.sources.clone())
    };
    // The partition's load information counts every load; its summary, this one.
    let mut all_statements = statements;
    if let Some(existing) = &existing {
        all_statements += existing.info().statements;
        sources.splice(0..0, existing.info().sources.iter().cloned());
    }
    let info = LoadInfo {
        statements: all_statements,
        skipped: 0,
        seconds: 0.0,
        sources,
        log_sequence: 0,
        partition: Some(PartitionInfo {
            index,
            count: workers,
            hash: PARTITION_HASH.to_owned(),
            id_bound: Some(id_bound),
            predicates: iris,
            load: Some(format!("{:016x}", state.borrow().load)),
        }),
    };
    let named = graphs.into_iter().collect();
    // What the exchange freed goes back before the build's own peak.
    quiver_model::memory::trim_heap();
    let store = Store::loaded_partition(dictionary, ids, default_graph, named, info)?;
    // And what the build freed, before the partition is saved and served.
    quiver_model::memory::trim_heap();
    // A grown partition is saved beside the old one, which it replaces once every
    // partition is saved.
    let target = match existing {
        Some(_) => next_partition_dir(dir, index),
        None => partition_dir(dir, index),
    };
    let bytes = store.save(&target).map_err(|e| e.to_string())?;
    if existing.is_some() {
        let load = format!("{:016x}", state.borrow().load);
        quiver_store::partition_commit::mark_saved(&target, &load).map_err(|e| e.to_string())?;
    }
    let sent = state.borrow().sent;
    state.borrow_mut().rdf_type = store.rdf_type();
    state.borrow_mut().mark("built and saved");
    Ok(PartitionSummary {
        index,
        milestones: state.borrow().milestones.clone(),
        statements,
        triples: store.triples(),
        terms: store.dictionary().local_len(),
        bytes,
        sent,
        peak_rss: peak_rss(),
        cpu: quiver_model::phases::process_times(),
        classes: graph_classes(&store),
        statistics: store.planner_statistics(),
        rdf_type: store.rdf_type(),
        load: store.partition_info().and_then(|i| i.load.clone()),
    })
}

/// With every partition's summary: the cluster and its layout, to write.
pub(super) fn finish_layout(
    workers: u32,
    saved: BTreeMap<u32, Result<PartitionSummary, String>>,
) -> Result<LoadedCluster, String> {
    let mut partitions = Vec::new();
    for (_, summary) in saved {
        partitions.push(summary?);
    }
    if partitions.len() != workers as usize {
        return Err(format!(
            "{} of {workers} partitions were saved",
            partitions.len()
        ));
    }
    let mut layout = new_layout(workers);
    let mut statistics = StatisticsMerger::default();
    let mut classes: BTreeMap<Option<Id>, BTreeSet<Id>> = BTreeMap::new();
    for partition in &partitions {
        layout.triples += partition.triples;
        layout.terms += partition.terms;
        layout.partition_terms.push(partition.terms);
        statistics.add_statistics(&partition.statistics);
        for graph in &partition.classes {
            classes
                .entry(graph.graph)
                .or_default()
                .extend(graph.classes.iter().copied());
        }
    }
    let rdf_type = partitions.first().and_then(|p| p.rdf_type);
    layout.load = partitions.first().and_then(|p| p.load.clone());
    if partitions.iter().any(|p| p.load != layout.load) {
        return Err("the partitions disagree on which load they are".into());
    }
    layout.statistics = Some(statistics.finish(rdf_type));
    layout.classes = classes
        .into_iter()
        .map(|(graph, classes)| GraphClasses {
            graph,
            classes: classes.into_iter().collect(),
        })
        .collect();
    Ok(LoadedCluster {
        partitions,
        layout,
        seconds: 0.0,
    })
}
