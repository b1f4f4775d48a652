//! An update to a store with reasoning: the asserted graphs take the change set as in
//! any store, and the entailed layer follows by DRed (`quiver_reason::maintain`), which
//! reads the old entailed graph through [`GraphFacts`] and returns the triples to remove
//! from it and to add; they are applied to the entailed graph as persistent patches, like
//! the asserted changes. Only a change to the ontology itself (a triple of a schema
//! property, or typing a property transitive, symmetric, functional or inverse
//! functional) or one that touches equality (`owl:sameAs`) makes the entailment be
//! computed again from the asserted triples.

use std::sync::Arc;

use quiver_model::{Id, PredId};
use quiver_reason::{maintain, DictionaryTerms, Facts, Ontology};

use crate::changes::{ApplyError, ChangeSet};
use crate::entailment::{Entailment, Layer};
use crate::graph::Direction;
use crate::graph_update::TripleChanges;
use crate::stats::PredicateStats;
use crate::store::Store;

/// The default graph of a store version as facts of term ids.
struct GraphFacts<'a> {
    store: &'a Store,
}

impl GraphFacts<'_> {
    fn list(&self, vertex: Id, property: Id, direction: Direction) -> &[Id] {
        match self.store.predicate_of_term(property) {
            Some(p) => self.store.default_graph.get(vertex, p, direction),
            None => &[],
        }
    }
}

impl Facts for GraphFacts<'_> {
    fn contains(&self, fact: &[Id; 3]) -> bool {
        self.list(fact[0], fact[1], Direction::Out)
            .binary_search(&fact[2])
            .is_ok()
    }

    fn for_objects(&self, subject: Id, property: Id, f: &mut dyn FnMut(Id)) {
        self.list(subject, property, Direction::Out)
            .iter()
            .for_each(|&o| f(o));
    }

    fn for_subjects(&self, property: Id, object: Id, f: &mut dyn FnMut(Id)) {
        self.list(object, property, Direction::In)
            .iter()
            .for_each(|&s| f(s));
    }
}

impl Entailment {
    /// The ontology of the asserted default graph of `asserted` (this layer's store),
    /// compiled once per entailment and kept by the versions that do not change it.
    fn ontology(&self, asserted: &Store) -> Arc<Ontology> {
        self.ontology
            .get_or_init(|| {
                let terms = DictionaryTerms::new(&asserted.dictionary);
                // Only the triples the ontology is made of: those of the schema
                // properties, and the typing of transitive and symmetric properties.
                let probe = Ontology::read(&[], &terms, self.profile);
                let graph = &asserted.default_graph;
                let mut triples = Vec::new();
                for &property in probe.schema_properties() {
                    let Some(p) = asserted.predicate_of_term(property) else {
                        continue;
                    };
                    for &s in graph.predicate_subjects(p) {
                        for &o in graph.get(s, p, Direction::Out) {
                            triples.push([s, property, o]);
                        }
                    }
                }
                let rdf_type = asserted.rdf_type();
                for &class in probe.schema_classes() {
                    if let Some(t) = rdf_type {
                        for &s in graph.get(class, t, Direction::In) {
                            triples.push([s, asserted.predicate_term(t), class]);
                        }
                    }
                }
                Arc::new(Ontology::read(&triples, &terms, self.profile))
            })
            .clone()
    }
}

impl Store {
    /// [`Store::apply`] for a store with an entailed layer.
    pub(crate) fn apply_entailed(&self, changes: &ChangeSet) -> Result<Store, ApplyError> {
        let old = self.asserted();
        let layer = old
            .entailment
            .clone()
            .expect("called for a store with reasoning");
        let mut next = old.without_entailment().apply(changes)?;
        let holds = |store: &Store, t: &[Id; 3]| GraphFacts { store }.contains(t);
        let default_graph = |quads: &[crate::Quad]| -> Vec<[Id; 3]> {
            let mut triples: Vec<[Id; 3]> = quads
                .iter()
                .filter(|q| q.graph.is_none())
                .map(|q| [q.subject, q.predicate, q.object])
                .collect();
            triples.sort_unstable();
            triples.dedup();
            triples
        };
        let inserted: Vec<[Id; 3]> = default_graph(&changes.inserts)
            .into_iter()
            .filter(|t| !holds(&old, t) && holds(&next, t))
            .collect();
        let deleted: Vec<[Id; 3]> = default_graph(&changes.deletes)
            .into_iter()
            .filter(|t| holds(&old, t) && !holds(&next, t))
            .collect();
        let ontology = layer.ontology(&old);
        // Which triples make an ontology, as the dictionary after the change names them:
        // the change may bring a term of the vocabulary the old one lacked.
        let vocabulary =
            Ontology::read(&[], &DictionaryTerms::new(&next.dictionary), layer.profile);
        if inserted
            .iter()
            .chain(&deleted)
            .any(|t| vocabulary.is_schema(t))
        {
            return Ok(next.reasoned(layer.profile, &mut |_| {}).0);
        }

        let entailed_view = old.entailed().expect("the store has an entailed layer");
        let Some(maintained) = ({
            let terms = DictionaryTerms::new(&next.dictionary);
            let asserted = |t: &[Id; 3]| holds(&next, t);
            maintain(
                &ontology,
                &terms,
                &GraphFacts {
                    store: &entailed_view,
                },
                &deleted,
                &inserted,
                &asserted,
            )
        }) else {
            // The change touches equality.
            return Ok(next.reasoned(layer.profile, &mut |_| {}).0);
        };
        // In predicate ids: a removed triple's predicate is in the old space, an added
        // one's may be new to the store.
        let to_ids = |store: &mut Store, triples: Vec<[Id; 3]>| -> Vec<[Id; 3]> {
            triples
                .into_iter()
                .map(|[s, p, o]| [s, store.predicate_or_append(p) as Id, o])
                .collect()
        };
        let triples = TripleChanges {
            deletes: to_ids(&mut next, maintained.removed),
            inserts: to_ids(&mut next, maintained.added),
        };
        let predicates = next.predicate_count();
        next.predicate_stats
            .resize(predicates, PredicateStats::default());

        let mut view = next.clone();
        layer.entailed.install(&mut view);
        view.predicate_stats
            .resize(predicates, PredicateStats::default());
        view.default_graph =
            view.default_graph
                .with_changes(&triples, predicates, &mut view.predicate_stats);
        let rdf_type = view.rdf_type();
        if rdf_type.is_none()
            || triples
                .deletes
                .iter()
                .chain(&triples.inserts)
                .any(|t| Some(t[1] as PredId) == rdf_type)
        {
            view.refresh_classes();
        }
        let derived = view.default_graph.triples() - next.default_graph.triples();
        next.entailment = Some(Arc::new(Entailment {
            profile: layer.profile,
            derived,
            entailed: Layer::of(&view),
            asserted: Layer::of(&next),
            ontology: Arc::clone(&ontology).into(),
        }));
        Ok(next)
    }
}
