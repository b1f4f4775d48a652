//! Applying a [`ChangeSet`] to a store version, giving the next version.
//!
//! The store a reader holds never changes: [`Store::apply`] returns a new store that
//! shares the old one's unchanged arrays (columns are reference-counted) and takes the
//! change set's new terms into an appended segment of the dictionary, so every existing id
//! stays valid.

use std::collections::{BTreeMap, HashSet};

use quiver_model::term::decode_term;
use quiver_model::{DecodedTerm, Id};

use crate::changes::{ApplyError, ChangeSet};
use crate::store::{EncodedGraphs, Store};

impl Store {
    /// The store with `changes` applied; `self` is left as it was.
    pub fn apply(&self, changes: &ChangeSet) -> Result<Store, ApplyError> {
        if changes.base_terms != self.terms() {
            return Err(ApplyError::WrongBase {
                expected: changes.base_terms,
                found: self.terms(),
            });
        }
        let mut dictionary = self.dictionary.clone();
        for (index, term) in changes.new_terms.iter().enumerate() {
            if decode_term(term).is_err()
                || dictionary.append(term) as u64 != changes.base_terms + index as u64
            {
                return Err(ApplyError::BadTerm { index });
            }
        }
        let terms = dictionary.len();
        let resource = |id: Id| -> Result<Id, ApplyError> {
            if id as u64 >= terms {
                return Err(ApplyError::UnknownId(id));
            }
            let mut bytes = Vec::new();
            dictionary.term_into(id, &mut bytes);
            match decode_term(&bytes) {
                Ok(DecodedTerm::Literal { .. }) => Err(ApplyError::NotAResource(id)),
                Ok(_) => Ok(id),
                Err(_) => Err(ApplyError::UnknownId(id)),
            }
        };
        for quad in changes.inserts.iter().chain(&changes.deletes) {
            resource(quad.subject)?;
            resource(quad.predicate)?;
            if quad.object as u64 >= terms {
                return Err(ApplyError::UnknownId(quad.object));
            }
            if let Some(graph) = quad.graph {
                resource(graph)?;
            }
        }
        for &graph in changes.created_graphs.iter().chain(&changes.dropped_graphs) {
            resource(graph)?;
        }

        let mut graphs: BTreeMap<Option<Id>, HashSet<[Id; 3]>> = BTreeMap::new();
        let mut collect = |name: Option<Id>, index: &crate::GraphIndex| {
            let triples = graphs.entry(name).or_default();
            index.for_each_triple(|s, p, o| {
                triples.insert([s, self.predicate_term(p), o]);
            });
        };
        collect(None, &self.default_graph);
        for (name, index) in &self.named_graphs {
            collect(Some(*name), index);
        }
        for graph in &changes.dropped_graphs {
            graphs.remove(&Some(*graph));
        }
        for quad in &changes.deletes {
            if let Some(triples) = graphs.get_mut(&quad.graph) {
                triples.remove(&[quad.subject, quad.predicate, quad.object]);
            }
        }
        for quad in &changes.inserts {
            graphs.entry(quad.graph).or_default().insert([
                quad.subject,
                quad.predicate,
                quad.object,
            ]);
        }
        for graph in &changes.created_graphs {
            graphs.entry(Some(*graph)).or_default();
        }
        let mut input = EncodedGraphs::default();
        for (name, triples) in graphs {
            match name {
                None => input.default_graph = triples.into_iter().collect(),
                Some(name) => input
                    .named_graphs
                    .push((name, triples.into_iter().collect())),
            }
        }
        Ok(Store::build(dictionary, input, self.info.clone()))
    }
}
