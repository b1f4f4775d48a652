//! The LUBM benchmark data generator, identical triple for triple to UBA 1.7.
//!
//! The Lehigh University Benchmark's generator (UBA) is a Java program that writes one
//! RDF/XML file per department. This crate re-implements its random draws exactly
//! ([`rng::JavaRandom`]) and emits structured triples ([`Triple`]) per university, so that
//! callers can format them ([`ntriples`]) or load them into a store without any text.
//! Universities are independent: `quiver-ordered` generates them on many threads while
//! delivering them in order (see the loader and `quiver gen`).
//!
//! ```
//! use quiver_lubm::{generate_university, CountingSink};
//! let mut sink = CountingSink::default();
//! generate_university(0, 0, &mut sink);
//! assert_eq!(sink.triples, 100_543); // LUBM-1 (distinct triples)
//! ```

pub mod expected;
pub mod generator;
pub mod ntriples;
pub mod rng;
pub mod triple;
pub mod vocab;

pub use generator::generate_university;
pub use triple::{CountingSink, Dept, Entity, Object, Triple, TripleSink};
pub use vocab::{Class, Property};

/// A run of UBA: universities `start .. start + universities` with one seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LubmConfig {
    pub universities: u32,
    pub start_index: u32,
    pub seed: i64,
}

impl LubmConfig {
    /// The standard benchmark dataset LUBM-`universities` (seed 0, start index 0).
    pub fn standard(universities: u32) -> Self {
        Self {
            universities,
            start_index: 0,
            seed: 0,
        }
    }

    /// The university indices of the run.
    pub fn range(&self) -> std::ops::Range<u32> {
        self.start_index..self.start_index.saturating_add(self.universities)
    }
}
