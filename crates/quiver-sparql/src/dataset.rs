//! The RDF dataset a query reads: its default graph and the named graphs `GRAPH` may visit.
//!
//! Without a dataset clause a query reads the store's default graph and every named graph.
//! `FROM <g>` makes the default graph the named graph `g` (several `FROM`s: their merge,
//! built once when the query is prepared); `FROM NAMED <g>` limits `GRAPH` to the graphs
//! listed. Graphs are found by name among the store's named graphs; a name the store lacks
//! is an empty graph, not an error (as the SPARQL dataset semantics have it).

use std::sync::Arc;

use oxrdf::NamedNode;
use quiver_model::Id;
use quiver_store::{GraphIndex, Store};
use spargebra::algebra::QueryDataset;

/// Which graph a pattern reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum GraphRef {
    Default,
    /// A named graph, by the term id of its name.
    Named(quiver_model::Id),
    /// A named graph the store does not have: nothing matches.
    Missing,
    /// The merge of the query's `FROM` graphs (see [`DatasetScope`]).
    Merged,
}

/// What a query's patterns read.
#[derive(Debug, Clone)]
pub struct DatasetScope {
    /// The default graph of the query.
    pub default: GraphRef,
    /// The merge of several `FROM` graphs, when `default` is [`GraphRef::Merged`].
    pub merged: Option<Arc<GraphIndex>>,
    /// The names of the graphs merged (term ids, ascending), for executors that merge
    /// their own shares of them (the partitions of a store).
    pub merged_names: Vec<Id>,
    /// The named graphs `GRAPH` may visit (term ids of names the store has); `None`: all.
    pub named: Option<Vec<Id>>,
}

impl Default for DatasetScope {
    fn default() -> Self {
        Self {
            default: GraphRef::Default,
            merged: None,
            merged_names: Vec::new(),
            named: None,
        }
    }
}

impl DatasetScope {
    /// The scope of a dataset clause (`None`: the whole store).
    pub fn new(store: &Store, dataset: Option<&QueryDataset>) -> Self {
        let Some(dataset) = dataset else {
            return Self::default();
        };
        let existing = |names: &[NamedNode]| -> Vec<Id> {
            let mut ids: Vec<Id> = names
                .iter()
                .filter_map(|name| store.term_id(name.as_ref().into()))
                .filter(|&id| store.named_graph(id).is_some())
                .collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let defaults = existing(&dataset.default);
        let (default, merged) = match defaults.as_slice() {
            [] => (GraphRef::Missing, None),
            [one] => (GraphRef::Named(*one), None),
            many => {
                let names: Vec<Option<Id>> = many.iter().map(|&id| Some(id)).collect();
                (GraphRef::Merged, Some(Arc::new(store.merged_graph(&names))))
            }
        };
        let named = Some(dataset.named.as_deref().map(existing).unwrap_or_default());
        Self {
            default,
            merged_names: if merged.is_some() {
                defaults
            } else {
                Vec::new()
            },
            merged,
            named,
        }
    }

    /// The graph `GRAPH <name>` reads.
    pub fn named_graph(&self, store: &Store, name: Option<Id>) -> GraphRef {
        match name {
            Some(id)
                if store.named_graph(id).is_some()
                    && self.named.as_ref().is_none_or(|named| named.contains(&id)) =>
            {
                GraphRef::Named(id)
            }
            _ => GraphRef::Missing,
        }
    }

    /// The graphs `GRAPH ?g` visits, ascending by name id.
    pub fn named_graphs(&self, store: &Store) -> Vec<Id> {
        match &self.named {
            Some(named) => named.clone(),
            None => store.graph_names().collect(),
        }
    }

    /// The index a pattern on `graph` reads.
    pub fn index<'s>(&'s self, store: &'s Store, graph: GraphRef) -> &'s GraphIndex {
        match (graph, &self.merged) {
            (GraphRef::Merged, Some(merged)) => merged,
            _ => graph_index(store, graph),
        }
    }
}

/// The index a pattern on `graph` reads (an empty one for a missing graph). The merged
/// default graph of a dataset is held by its [`DatasetScope`], which callers ask instead.
pub fn graph_index(store: &Store, graph: GraphRef) -> &GraphIndex {
    static EMPTY: std::sync::OnceLock<GraphIndex> = std::sync::OnceLock::new();
    match graph {
        GraphRef::Default => store.graph(),
        GraphRef::Named(id) => store
            .named_graph(id)
            .unwrap_or_else(|| EMPTY.get_or_init(GraphIndex::default)),
        GraphRef::Missing | GraphRef::Merged => EMPTY.get_or_init(GraphIndex::default),
    }
}
