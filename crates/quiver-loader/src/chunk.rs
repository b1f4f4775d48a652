//! Encoding one chunk of input: terms interned locally, statements as local ids.
//!
//! Every parser thread encodes its own chunk without sharing anything: distinct terms go to
//! a byte arena (no allocation per term) indexed by a hash table, statements become
//! `[s, p, o, g]` local ids. The merge step later maps local ids to global ones.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use oxrdf::{GraphNameRef, Quad, TermRef};
use quiver_model::encode_term;
use quiver_model::term::{drop_flat, triple_nesting, MAX_TRIPLE_NESTING};

/// Local id meaning "the default graph".
pub const DEFAULT_GRAPH: u32 = u32::MAX;

/// The encoded content of one chunk.
#[derive(Debug, Default)]
pub struct Chunk {
    /// Distinct encoded terms, concatenated.
    pub arena: Vec<u8>,
    /// `(start, length)` of each local term in `arena`.
    pub spans: Vec<(u64, u32)>,
    /// Statements as local term ids `[subject, predicate, object, graph]`.
    pub quads: Vec<[u32; 4]>,
    table: HashTable<u32>,
    /// Seeded per chunk: the terms may be a client's (an `INSERT DATA` over HTTP), chosen
    /// to collide under a fixed hash.
    hasher: foldhash::fast::RandomState,
    scratch: Vec<u8>,
}

impl Chunk {
    pub fn new() -> Self {
        Self::default()
    }

    /// The encoded bytes of local term `id`.
    #[inline]
    pub fn term(&self, id: u32) -> &[u8] {
        let (start, length) = self.spans[id as usize];
        &self.arena[start as usize..start as usize + length as usize]
    }

    /// Interns an encoded term, returning its local id.
    pub fn intern(&mut self, bytes: &[u8]) -> u32 {
        match self.find(bytes) {
            Ok(id) => id,
            Err(hash) => self.insert_new(bytes, hash),
        }
    }

    /// The local id of an encoded term, or (when the chunk does not hold it yet) the hash
    /// to insert it with: the fast N-Triples path validates a term only on its first
    /// occurrence in the chunk.
    #[inline]
    pub fn find(&self, bytes: &[u8]) -> Result<u32, u64> {
        self.find_hashed(bytes, self.hasher.hash_one(bytes))
    }

    /// [`Chunk::find`] of a term whose hash an earlier `find` returned.
    #[inline]
    pub fn find_hashed(&self, bytes: &[u8], hash: u64) -> Result<u32, u64> {
        let (arena, spans) = (&self.arena, &self.spans);
        let slice = |id: u32| {
            let (start, length) = spans[id as usize];
            &arena[start as usize..start as usize + length as usize]
        };
        match self.table.find(hash, |&id| slice(id) == bytes) {
            Some(&id) => Ok(id),
            None => Err(hash),
        }
    }

    /// Adds a term that [`Chunk::find`] did not find, with the hash it returned.
    pub fn insert_new(&mut self, bytes: &[u8], hash: u64) -> u32 {
        let id = self.spans.len() as u32;
        self.spans
            .push((self.arena.len() as u64, bytes.len() as u32));
        self.arena.extend_from_slice(bytes);
        let (arena, spans, hasher) = (&self.arena, &self.spans, &self.hasher);
        self.table.insert_unique(hash, id, |&id| {
            let (start, length) = spans[id as usize];
            hasher.hash_one(&arena[start as usize..start as usize + length as usize])
        });
        id
    }

    fn intern_term(&mut self, term: TermRef<'_>) -> u32 {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        encode_term(term, &mut scratch);
        let id = self.intern(&scratch);
        self.scratch = scratch;
        id
    }

    /// Adds a parsed quad. `blank_prefix` scopes blank node labels to their document. A
    /// triple term nested deeper than a store holds is refused before anything recurses
    /// into it, and taken apart without recursion.
    pub fn add_quad(&mut self, quad: Quad, blank_prefix: Option<&str>) -> Result<(), TooDeep> {
        if triple_nesting(quad.object.as_ref()) > MAX_TRIPLE_NESTING {
            drop_flat(quad.object);
            return Err(TooDeep);
        }
        let quad = quad.as_ref();
        let subject = self.intern_scoped(quad.subject.into(), blank_prefix);
        let predicate = self.intern_term(quad.predicate.into());
        let object = self.intern_scoped(quad.object, blank_prefix);
        let graph = match quad.graph_name {
            GraphNameRef::DefaultGraph => DEFAULT_GRAPH,
            GraphNameRef::NamedNode(node) => self.intern_term(node.into()),
            GraphNameRef::BlankNode(node) => self.intern_scoped(node.into(), blank_prefix),
        };
        self.quads.push([subject, predicate, object, graph]);
        Ok(())
    }

    fn intern_scoped(&mut self, term: TermRef<'_>, blank_prefix: Option<&str>) -> u32 {
        match (term, blank_prefix) {
            (TermRef::BlankNode(node), Some(prefix)) => {
                let label = format!("{prefix}{}", node.as_str());
                self.intern_term(oxrdf::BlankNodeRef::new_unchecked(&label).into())
            }
            (TermRef::Triple(triple), Some(prefix)) => {
                let scoped = scope_triple(triple, prefix);
                self.intern_term(oxrdf::TermRef::Triple(&scoped))
            }
            _ => self.intern_term(term),
        }
    }

    /// Adds a statement of already encoded terms, in the default graph.
    pub fn add_encoded(&mut self, subject: &[u8], predicate: &[u8], object: &[u8]) {
        let quad = [
            self.intern(subject),
            self.intern(predicate),
            self.intern(object),
            DEFAULT_GRAPH,
        ];
        self.quads.push(quad);
    }

    /// Frees the hash table once the chunk is complete.
    pub fn seal(&mut self) {
        self.table = HashTable::new();
        self.scratch = Vec::new();
    }
}

/// A triple term with its blank nodes (at any depth) scoped to their document.
fn scope_triple(triple: &oxrdf::Triple, prefix: &str) -> oxrdf::Triple {
    let blank = |label: &str| oxrdf::BlankNode::new_unchecked(format!("{prefix}{label}"));
    let subject = match &triple.subject {
        oxrdf::NamedOrBlankNode::BlankNode(node) => blank(node.as_str()).into(),
        subject => subject.clone(),
    };
    let object = match &triple.object {
        oxrdf::Term::BlankNode(node) => blank(node.as_str()).into(),
        oxrdf::Term::Triple(inner) => scope_triple(inner, prefix).into(),
        object => object.clone(),
    };
    oxrdf::Triple::new(subject, triple.predicate.clone(), object)
}

/// A statement whose triple terms nest more than [`MAX_TRIPLE_NESTING`] deep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep;

impl std::fmt::Display for TooDeep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "triple terms nested more than {MAX_TRIPLE_NESTING} deep")
    }
}
