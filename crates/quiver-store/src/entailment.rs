//! The entailed layer of a store: its default graph closed under a reasoning profile,
//! kept apart from the asserted graph so that each query chooses which it reads.
//!
//! A store loaded with reasoning holds two indexes of its default graph: the asserted one
//! (what was loaded) and the entailed one (asserted and derived triples), with the class
//! catalog and planner statistics of each. Both share the dictionary, the predicate id
//! space (built over asserted and derived triples, so a predicate that only derivations
//! use, such as the inverse of a loaded one, has an id in both) and the named graphs,
//! which reasoning leaves alone. [`Store::entailed`] gives the entailed view: a cheap
//! clone whose default graph, classes and statistics are the entailed layer's, so that
//! the planner, the executors and EXPLAIN see one ordinary store whichever is asked for.
//! A prepared query is bound to the view it was prepared on ([`Store::view`]).
//!
//! Indexing the closure whole rather than only the derived triples costs the asserted
//! triples twice, and buys queries over the entailment that run exactly as fast as over
//! the asserted graph (one list per key, no merge of two layers at every step).

use std::sync::Arc;

use quiver_model::{Column, Id};
use quiver_reason::{materialise, DictionaryTerms, Materialised, Profile, Report, Round};

use crate::class_predicate::ClassPredicate;
use crate::graph::GraphIndex;
use crate::stats::PredicateStats;
use crate::store::{EncodedGraphs, Store};

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

impl Layer {
    /// The default graph and catalog `store` reads.
    pub(crate) fn of(store: &Store) -> Self {
        Self {
            default_graph: store.default_graph.clone(),
            predicate_stats: store.predicate_stats.clone(),
            classes: store.classes.clone(),
            class_instances: store.class_instances.clone(),
            class_predicate: store.class_predicate.clone(),
            stat_classes: store.stat_classes.clone(),
            stat_predicates: store.stat_predicates,
        }
    }

    /// `store` reading this layer's default graph and catalog.
    pub(crate) fn install(&self, store: &mut Store) {
        store.default_graph = self.default_graph.clone();
        store.predicate_stats = self.predicate_stats.clone();
        store.classes = self.classes.clone();
        store.class_instances = self.class_instances.clone();
        store.class_predicate = self.class_predicate.clone();
        store.stat_classes = self.stat_classes.clone();
        store.stat_predicates = self.stat_predicates;
    }
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

impl Store {
    /// The entailed layer, if the store was loaded or reasoned with a profile.
    pub fn entailment(&self) -> Option<&Entailment> {
        self.entailment.as_deref()
    }

    /// Which default graph this version reads.
    pub fn view(&self) -> View {
        self.view
    }

    /// The entailed view of this version (itself if it is one), or `None` for a store
    /// without reasoning.
    pub fn entailed(&self) -> Option<Store> {
        self.with_view(View::Entailed)
    }

    /// The asserted view of this version (itself if it is one).
    pub fn asserted(&self) -> Store {
        self.with_view(View::Asserted)
            .expect("every store has its asserted view")
    }

    /// The view `view` of this version: `None` when it is `Entailed` and the store has no
    /// entailed layer.
    pub fn with_view(&self, view: View) -> Option<Store> {
        if view == self.view {
            return Some(self.clone());
        }
        let entailment = self.entailment.as_ref()?;
        let layer = match view {
            View::Asserted => &entailment.asserted,
            View::Entailed => &entailment.entailed,
        };
        let mut store = self.clone();
        store.view = view;
        layer.install(&mut store);
        Some(store)
    }

    /// Sets (or drops) the entailed layer of an asserted view; the asserted layer is
    /// taken from the store.
    pub(crate) fn set_entailment(
        &mut self,
        profile: Profile,
        derived: u64,
        entailed: Option<Layer>,
    ) {
        debug_assert_eq!(self.view, View::Asserted);
        self.entailment = entailed.map(|entailed| {
            Arc::new(Entailment {
                profile,
                derived,
                entailed,
                asserted: Layer::of(self),
                ontology: std::sync::OnceLock::new(),
            })
        });
    }
}

/// The properties of the triples reasoning derives besides the data's own.
const DERIVED_PROPERTIES: [&str; 3] = [
    crate::store::RDF_TYPE,
    "http://www.w3.org/2000/01/rdf-schema#subClassOf",
    "http://www.w3.org/2000/01/rdf-schema#subPropertyOf",
];

const SAME_AS: &str = "http://www.w3.org/2002/07/owl#sameAs";
/// The classes whose properties derive `owl:sameAs`.
const EQUALITY_CLASSES: [&str; 2] = [
    "http://www.w3.org/2002/07/owl#FunctionalProperty",
    "http://www.w3.org/2002/07/owl#InverseFunctionalProperty",
];

impl Store {
    /// This store with its default graph closed under `profile`: a new version with an
    /// entailed layer (replacing any it had), its asserted graphs unchanged. `progress`
    /// hears of each round of the materialisation.
    pub fn reasoned(&self, profile: Profile, progress: &mut dyn FnMut(&Round)) -> (Store, Report) {
        let asserted = self.asserted();
        let mut input = EncodedGraphs::default();
        asserted.default_graph.for_each_triple(|s, p, o| {
            input.default_graph.push([s, asserted.predicate_term(p), o]);
        });
        for (name, graph) in &asserted.named_graphs {
            let mut triples = Vec::new();
            graph.for_each_triple(|s, p, o| triples.push([s, asserted.predicate_term(p), o]));
            input.named_graphs.push((*name, triples));
        }
        // The properties of derived triples must be in the dictionary even where no
        // asserted triple uses them (a domain alone derives types; declared classes are
        // their own subclasses).
        let mut dictionary = asserted.dictionary.clone();
        let encoded = |iri: &str| {
            let mut term = Vec::new();
            quiver_model::term::encode_iri(iri, &mut term);
            term
        };
        // Functional and inverse-functional properties derive `owl:sameAs`.
        let equalities = profile == Profile::OwlRl
            && EQUALITY_CLASSES
                .iter()
                .any(|iri| dictionary.lookup(&encoded(iri)).is_some());
        let same_as = equalities.then_some(SAME_AS);
        for iri in DERIVED_PROPERTIES.into_iter().chain(same_as) {
            let term = encoded(iri);
            if dictionary.lookup(&term).is_none() && dictionary.append(&term).is_err() {
                // No id left for it: what it would name is not derived, the rest is.
            }
        }
        let Materialised { derived, report } = materialise(
            &input.default_graph,
            &DictionaryTerms::new(&dictionary),
            profile,
            progress,
        );
        let store = Store::build_entailed(
            dictionary,
            input,
            asserted.info.clone(),
            Some((profile, derived)),
        );
        (store, report)
    }

    /// This store without its entailed layer (a new version).
    pub fn without_entailment(&self) -> Store {
        let mut store = self.asserted();
        store.entailment = None;
        store.version = crate::store::next_version();
        store
    }
}
