//! Quiver's reasoner: the closure of a graph's triples under RDFS or the OWL 2 RL rules
//! that matter in practice, computed as term ids, in parallel, semi-naively.
//!
//! It sees triples as `[subject, predicate, object]` term ids and a dictionary through
//! [`Terms`] (the ids of the vocabulary, which ids are literals), so it knows nothing of
//! stores or files: the loader hands it the triples it encoded, `quiver reason` those of
//! an open store, and the store builds the entailed graph from what it derives. The
//! ontology is read from the same triples (load it with the data), compiled once
//! (`schema.rs`), and the instance rules (`rules.rs`) run to a fixpoint
//! (`materialise.rs`) over sorted fact sets (`facts.rs`). Changes of the asserted
//! triples are carried into an entailment by DRed (`maintain.rs`).
//!
//! Supported: `rdfs:subClassOf`, `rdfs:subPropertyOf`, `rdfs:domain`, `rdfs:range` (both
//! profiles); `owl:equivalentClass`, `owl:equivalentProperty`, `owl:inverseOf`,
//! `owl:SymmetricProperty`, `owl:TransitiveProperty`, `owl:intersectionOf` (both ways),
//! `owl:unionOf` (as inclusions), and restrictions with `owl:someValuesFrom`,
//! `owl:allValuesFrom` and `owl:hasValue`, `owl:sameAs` with functional and
//! inverse-functional properties, reasoned over representatives (`equality.rs`) (OWL 2
//! RL); the class and property hierarchies are derived closed (every class and property
//! its own subclass or subproperty). Not derived: the axiomatic triples and resource
//! typing of RDFS (`x a rdfs:Resource`, `p a rdf:Property`) and `owl:Thing` typing,
//! domains and ranges at the schema level, keys, property chains, and the inconsistency
//! rules.

mod equality;
mod facts;
mod maintain;
mod materialise;
mod rules;
mod schema;
mod vocabulary;

use serde::{Deserialize, Serialize};

pub use facts::{FactSet, Facts};
pub use maintain::{maintain, Maintained, Ontology};
pub use materialise::materialise;
pub use vocabulary::{DictionaryTerms, Terms, Vocabulary};

/// Which rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Subclasses, subproperties, domains and ranges.
    Rdfs,
    /// RDFS and the OWL 2 RL rules listed in the crate's documentation.
    OwlRl,
}

impl Profile {
    /// The name users write (`rdfs`, `owl-rl`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::Rdfs => "rdfs",
            Profile::OwlRl => "owl-rl",
        }
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "rdfs" => Ok(Profile::Rdfs),
            "owl-rl" | "owlrl" | "owl2-rl" => Ok(Profile::OwlRl),
            _ => Err(format!(
                "unknown reasoning profile {text:?}: expected rdfs or owl-rl"
            )),
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One round of semi-naive evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// 0 for the round over the asserted facts.
    pub number: u32,
    /// Facts the rules fired on (the delta).
    pub fired: u64,
    /// New facts derived.
    pub derived: u64,
    pub seconds: f64,
}

/// What [`materialise`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub profile: Profile,
    /// Distinct asserted facts.
    pub asserted: u64,
    /// Facts derived that were not asserted.
    pub derived: u64,
    pub rounds: Vec<Round>,
    pub seconds: f64,
}

/// The result of [`materialise`].
#[derive(Debug)]
pub struct Materialised {
    /// The derived facts that were not asserted, sorted, without duplicates.
    pub derived: Vec<[quiver_model::Id; 3]>,
    pub report: Report,
}
