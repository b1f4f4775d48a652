//! Statistics for the query planner, computed while the index is built and saved with it.

use quiver_model::Id;
use serde::{Deserialize, Serialize};

/// What the planner knows about one predicate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PredicateStats {
    /// Triples with this predicate.
    pub triples: u64,
    /// Distinct subjects.
    pub subjects: u64,
    /// Distinct objects.
    pub objects: u64,
    /// Largest number of objects of one subject.
    pub max_out_degree: u64,
    /// Largest number of subjects of one object.
    pub max_in_degree: u64,
}

impl PredicateStats {
    /// Average objects per subject.
    pub fn avg_out_degree(&self) -> f64 {
        self.triples as f64 / self.subjects.max(1) as f64
    }

    /// Average subjects per object.
    pub fn avg_in_degree(&self) -> f64 {
        self.triples as f64 / self.objects.max(1) as f64
    }

    /// Average neighbours per vertex walked in `direction` (out: objects per subject).
    pub fn avg_degree(&self, direction: crate::Direction) -> f64 {
        match direction {
            crate::Direction::Out => self.avg_out_degree(),
            crate::Direction::In => self.avg_in_degree(),
        }
    }

    /// Number of u64 words in the stored form.
    pub const WORDS: usize = 5;

    pub fn to_words(self) -> [u64; Self::WORDS] {
        [
            self.triples,
            self.subjects,
            self.objects,
            self.max_out_degree,
            self.max_in_degree,
        ]
    }

    pub fn from_words(words: &[u64]) -> Self {
        Self {
            triples: words[0],
            subjects: words[1],
            objects: words[2],
            max_out_degree: words[3],
            max_in_degree: words[4],
        }
    }
}

/// A class (object of `rdf:type`) and its number of instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassStats {
    pub class: Id,
    pub instances: u64,
}
