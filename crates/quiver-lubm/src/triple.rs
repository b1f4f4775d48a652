//! Structured LUBM triples: what the generator emits, before any text is made.
//!
//! Every LUBM term is determined by a handful of small integers (university, department,
//! class, index), so the generator hands out these compact values and lets each consumer
//! decide: the N-Triples writer formats them, a store can intern them directly.

use crate::vocab::{Class, Property};

/// A department: `http://www.Department{department}.University{university}.edu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Dept {
    pub university: u32,
    pub department: u32,
}

/// An IRI-named resource of the LUBM world.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Entity {
    /// `http://www.University{u}.edu`
    University(u32),
    /// `http://www.Department{d}.University{u}.edu`
    Department(Dept),
    /// `{department}/{Class}{index}`: faculty, students, courses, research groups.
    Member(Dept, Class, u32),
    /// `{department}/{AuthorClass}{author}/Publication{index}`.
    Publication {
        dept: Dept,
        author_class: Class,
        author: u32,
        index: u32,
    },
}

/// The object of a LUBM triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Object {
    Entity(Entity),
    /// A class IRI (object of `rdf:type`).
    Class(Class),
    /// The literal `"{Class}{index}"` (names of everything, e.g. `"Course12"`).
    Name(Class, u32),
    /// The literal `"{Class}{index}@Department{d}.University{u}.edu"`.
    Email(Dept, Class, u32),
    /// The literal `"xxx-xxx-xxxx"`.
    Telephone,
    /// The literal `"Research{index}"`.
    Research(u32),
}

/// One generated triple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Triple {
    pub subject: Entity,
    pub predicate: Property,
    pub object: Object,
}

/// Receives the triples of a university, in generation order.
pub trait TripleSink {
    fn triple(&mut self, triple: Triple);
}

impl TripleSink for Vec<Triple> {
    fn triple(&mut self, triple: Triple) {
        self.push(triple);
    }
}

/// Counts triples without keeping them.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingSink {
    pub triples: u64,
}

impl TripleSink for CountingSink {
    fn triple(&mut self, _triple: Triple) {
        self.triples += 1;
    }
}
