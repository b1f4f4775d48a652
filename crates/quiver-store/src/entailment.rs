//! The entailed layer of a store: its default graph closed under a reasoning profile,
//! kept apart from the asserted graph so that each query chooses which it reads.
//!
//! A store loaded with reasoning holds two indexes of its default graph: the asserted one
//! (what was loaded) and the entailed one (asserted and derived triples), with the class
//! catalog and planner statistics of each. Both share the dictionary, the predicate id
//! space (built over asserted and derived triples, so a predicate that only derivations
//! use, such as the inverse of a loaded one, has an id in both) and the named graphs,
//! which reasoning leaves alone. `Store::entailed` (`reasoning.rs`) gives the entailed
//! view: a cheap clone whose default graph, classes and statistics are the entailed
//! layer's, so that the planner, the executors and EXPLAIN see one ordinary store
//! whichever is asked for. A prepared query is bound to the view it was prepared on
//! (`Store::view`).
//!
//! Indexing the closure whole rather than only the derived triples costs the asserted
//! triples twice, and buys queries over the entailment that run exactly as fast as over
//! the asserted graph (one list per key, no merge of two layers at every step).

use std::sync::Arc;

use quiver_model::{Column, Id};
use quiver_reason::Profile;

use crate::class_predicate::ClassPredicate;
use crate::graph::GraphIndex;
use crate::stats::PredicateStats;

/// Which of a store's default graphs a version reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum View {
    /// The triples loaded or written.
    #[default]
    Asserted,
    /// The asserted triples and what the store's reasoning profile derives from them.
    Entailed,
}

impl View {
    pub fn name(self) -> &'static str {
        match self {
            View::Asserted => "asserted",
            View::Entailed => "entailed",
        }
    }
}

/// One default graph with its catalog: what a view swaps in.
#[derive(Debug, Clone)]
pub(crate) struct Layer {
    pub default_graph: GraphIndex,
    pub predicate_stats: Vec<PredicateStats>,
    pub classes: Column<Id>,
    pub class_instances: Column<u64>,
    pub class_predicate: ClassPredicate,
    /// The classes and predicates `class_predicate` was computed for.
    pub stat_classes: Column<Id>,
    pub stat_predicates: usize,
}

/// The entailed default graph with its catalog, and the asserted one's, so that either
/// view can give the other.
#[derive(Debug)]
pub struct Entailment {
    pub(crate) profile: Profile,
    /// Triples derived that were not asserted.
    pub(crate) derived: u64,
    pub(crate) entailed: Layer,
    pub(crate) asserted: Layer,
    /// The ontology compiled for keeping the entailment current, read from the asserted
    /// triples when the first update needs it (`entailment_update.rs`).
    pub(crate) ontology: std::sync::OnceLock<Arc<quiver_reason::Ontology>>,
}

impl Entailment {
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// Triples derived that were not asserted.
    pub fn derived(&self) -> u64 {
        self.derived
    }

    /// Triples of the entailed default graph.
    pub fn triples(&self) -> u64 {
        self.entailed.default_graph.triples()
    }

    /// Bytes of the layer a store reading `view` does not read (its graph and catalog).
    pub(crate) fn other_layer_bytes(&self, view: View) -> usize {
        let layer = match view {
            View::Asserted => &self.entailed,
            View::Entailed => &self.asserted,
        };
        layer.default_graph.data_bytes()
            + layer.classes.data_bytes()
            + layer.class_instances.data_bytes()
            + layer.class_predicate.data_bytes()
    }
}
