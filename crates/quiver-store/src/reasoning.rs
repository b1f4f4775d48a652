//! A store's views of its asserted and entailed default graphs (`entailment.rs` holds the
//! layers), and reasoning: a store closed under a profile as a new version, or a version
//! without its entailed layer.

use quiver_reason::{materialise, DictionaryTerms, Materialised, Profile, Report, Round};

use crate::entailment::View;
use crate::store::{EncodedGraphs, Store};

impl Store {
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
