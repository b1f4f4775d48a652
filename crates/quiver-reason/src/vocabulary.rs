//! The RDF, RDFS and OWL terms the rules read, as the term ids of one dictionary.
//!
//! A term the dictionary lacks cannot occur in the data, so the rules that need it are
//! simply inactive: a store without `owl:inverseOf` never pays for inverse properties.

use quiver_model::term::{encode_iri, TAG_SIMPLE};
use quiver_model::{Dictionary, Id};

const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
const OWL: &str = "http://www.w3.org/2002/07/owl#";

/// What the reasoner needs of a dictionary: the ids of IRIs, and which ids are literals
/// (a literal is never the subject of a derived triple, as RDF wants).
pub trait Terms: Sync {
    fn iri(&self, iri: &str) -> Option<Id>;
    fn is_literal(&self, id: Id) -> bool;
}

/// [`Terms`] over a store's dictionary. Its sorted part orders terms by their encoding,
/// whose first byte is the kind, so the literals of that part are one range of ids;
/// terms appended by updates are decoded.
pub struct DictionaryTerms<'a> {
    dictionary: &'a Dictionary,
    /// First base id of a literal, and the end of the base part (triple terms, tagged
    /// after literals, count as literals here: neither can be a subject).
    literals: std::ops::Range<u64>,
}

impl<'a> DictionaryTerms<'a> {
    pub fn new(dictionary: &'a Dictionary) -> Self {
        Self {
            dictionary,
            literals: dictionary.rank(&[TAG_SIMPLE])..dictionary.base_len(),
        }
    }
}

impl Terms for DictionaryTerms<'_> {
    fn iri(&self, iri: &str) -> Option<Id> {
        let mut bytes = Vec::with_capacity(iri.len() + 1);
        encode_iri(iri, &mut bytes);
        self.dictionary.lookup(&bytes)
    }

    fn is_literal(&self, id: Id) -> bool {
        let id = id as u64;
        if id < self.literals.end {
            return id >= self.literals.start;
        }
        self.dictionary
            .term(id as Id)
            .is_some_and(|bytes| bytes.first().is_some_and(|&tag| tag >= TAG_SIMPLE))
    }
}

/// The vocabulary's ids in one dictionary (`None`: absent there).
#[derive(Debug, Clone, Default)]
pub struct Vocabulary {
    pub rdf_type: Option<Id>,
    pub rdf_first: Option<Id>,
    pub rdf_rest: Option<Id>,
    pub rdf_nil: Option<Id>,
    pub sub_class_of: Option<Id>,
    pub sub_property_of: Option<Id>,
    pub domain: Option<Id>,
    pub range: Option<Id>,
    pub equivalent_class: Option<Id>,
    pub equivalent_property: Option<Id>,
    pub inverse_of: Option<Id>,
    pub symmetric_property: Option<Id>,
    pub transitive_property: Option<Id>,
    pub intersection_of: Option<Id>,
    pub union_of: Option<Id>,
    pub on_property: Option<Id>,
    pub some_values_from: Option<Id>,
    pub all_values_from: Option<Id>,
    pub has_value: Option<Id>,
    pub thing: Option<Id>,
    pub same_as: Option<Id>,
    pub functional_property: Option<Id>,
    pub inverse_functional_property: Option<Id>,
    /// Declarations: `rdfs:Class`, `owl:Class`, `rdf:Property`, `owl:ObjectProperty`,
    /// `owl:DatatypeProperty`.
    pub rdfs_class: Option<Id>,
    pub owl_class: Option<Id>,
    pub rdf_property: Option<Id>,
    pub object_property: Option<Id>,
    pub datatype_property: Option<Id>,
}

impl Vocabulary {
    pub fn resolve(terms: &impl Terms) -> Self {
        let rdf = |name: &str| terms.iri(&format!("{RDF}{name}"));
        let rdfs = |name: &str| terms.iri(&format!("{RDFS}{name}"));
        let owl = |name: &str| terms.iri(&format!("{OWL}{name}"));
        Self {
            rdf_type: rdf("type"),
            rdf_first: rdf("first"),
            rdf_rest: rdf("rest"),
            rdf_nil: rdf("nil"),
            sub_class_of: rdfs("subClassOf"),
            sub_property_of: rdfs("subPropertyOf"),
            domain: rdfs("domain"),
            range: rdfs("range"),
            equivalent_class: owl("equivalentClass"),
            equivalent_property: owl("equivalentProperty"),
            inverse_of: owl("inverseOf"),
            symmetric_property: owl("SymmetricProperty"),
            transitive_property: owl("TransitiveProperty"),
            intersection_of: owl("intersectionOf"),
            union_of: owl("unionOf"),
            on_property: owl("onProperty"),
            some_values_from: owl("someValuesFrom"),
            all_values_from: owl("allValuesFrom"),
            has_value: owl("hasValue"),
            thing: owl("Thing"),
            same_as: owl("sameAs"),
            functional_property: owl("FunctionalProperty"),
            inverse_functional_property: owl("InverseFunctionalProperty"),
            rdfs_class: rdfs("Class"),
            owl_class: owl("Class"),
            rdf_property: rdf("Property"),
            object_property: owl("ObjectProperty"),
            datatype_property: owl("DatatypeProperty"),
        }
    }

    /// Every id of the vocabulary the rules read (those in the dictionary).
    pub fn ids(&self) -> rustc_hash::FxHashSet<Id> {
        [
            self.rdf_type,
            self.rdf_first,
            self.rdf_rest,
            self.rdf_nil,
            self.sub_class_of,
            self.sub_property_of,
            self.domain,
            self.range,
            self.equivalent_class,
            self.equivalent_property,
            self.inverse_of,
            self.symmetric_property,
            self.transitive_property,
            self.intersection_of,
            self.union_of,
            self.on_property,
            self.some_values_from,
            self.all_values_from,
            self.has_value,
            self.thing,
            self.same_as,
            self.functional_property,
            self.inverse_functional_property,
            self.rdfs_class,
            self.owl_class,
            self.rdf_property,
            self.object_property,
            self.datatype_property,
        ]
        .into_iter()
        .flatten()
        .collect()
    }
}
