//! Encoding one chunk of input: terms interned locally, statements as local ids.
//!
//! Every parser thread encodes its own chunk without sharing anything: distinct terms go to
//! a byte arena (no allocation per term) indexed by a hash table, statements become
//! `[s, p, o, g]` local ids. The merge step later maps local ids to global ones.
//!
//! Sealing a complete chunk sorts its terms, renumbers its statements by the terms' ranks
//! and front-codes the terms as the store's dictionary does. The parsed input is held whole
//! until the merge, and the raw term text was the largest part of it (203 of 467 MiB for
//! LUBM-100, against 29 MiB front-coded); sorted, each chunk is also a ready run for the
//! merge, which needs no per-chunk table from local ids to ranks.

use std::borrow::Cow;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use oxrdf::{GraphNameRef, Quad, TermRef};
use quiver_model::dictionary::SortedRun;
use quiver_model::term::{drop_flat, triple_nesting, MAX_TRIPLE_NESTING};
use quiver_model::{encode_term, DictionaryBuilder};

/// Local id meaning "the default graph".
pub const DEFAULT_GRAPH: u32 = u32::MAX;

/// The encoded content of one chunk.
#[derive(Debug, Default)]
pub struct Chunk {
    /// Distinct encoded terms, concatenated (until sealed).
    pub(crate) arena: Vec<u8>,
    /// `(start, length)` of each local term in `arena` (until sealed).
    pub(crate) spans: Vec<(u64, u32)>,
    /// Once sealed: the distinct terms, ascending and front-coded; a local id is a rank.
    sorted: Option<Box<SortedRun>>,
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

    /// The encoded bytes of local term `id` of a chunk being built (not sealed).
    #[inline]
    pub(crate) fn open_term(&self, id: u32) -> &[u8] {
        let (start, length) = self.spans[id as usize];
        &self.arena[start as usize..start as usize + length as usize]
    }

    /// The encoded bytes of local term `id` (decoded from its bucket once sealed: walk
    /// every term with [`Chunk::for_each_term`]).
    pub fn term(&self, id: u32) -> Cow<'_, [u8]> {
        match &self.sorted {
            Some(terms) => Cow::Owned(terms.term(u64::from(id)).expect("a local id of the chunk")),
            None => Cow::Borrowed(self.open_term(id)),
        }
    }

    /// How many distinct terms the chunk holds (0 once they are released).
    pub fn term_count(&self) -> usize {
        match &self.sorted {
            Some(terms) => terms.len() as usize,
            None => self.spans.len(),
        }
    }

    /// Calls `f` with every local id and its term, in id order.
    pub fn for_each_term(&self, mut f: impl FnMut(u32, &[u8])) {
        match &self.sorted {
            Some(terms) => terms.for_each(|id, term| f(id as u32, term)),
            None => (0..self.spans.len() as u32).for_each(|id| f(id, self.open_term(id))),
        }
    }

    /// A sealed chunk's terms, ascending (local id `i` is the `i`-th), for a merge to
    /// drain; `None` if the chunk is not sealed.
    pub(crate) fn sorted_run(&mut self) -> Option<&mut SortedRun> {
        self.sorted.as_deref_mut()
    }

    /// Frees the terms, keeping the statements (a cluster's load, once it has sent them to
    /// their owners).
    pub fn release_terms(&mut self) {
        self.arena = Vec::new();
        self.spans = Vec::new();
        self.sorted = None;
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
        debug_assert!(self.sorted.is_none(), "a sealed chunk takes no more terms");
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

    /// Adds a term without looking it up, for a caller that knows it is new to the chunk
    /// (the LUBM generator, which remembers its terms by value): no hash of its text. A
    /// term added twice this way gets two local ids, which sealing folds into one. The
    /// term cannot be found by [`Chunk::find`].
    pub(crate) fn add_new(&mut self, bytes: &[u8]) -> u32 {
        debug_assert!(self.sorted.is_none(), "a sealed chunk takes no more terms");
        let id = self.spans.len() as u32;
        self.spans
            .push((self.arena.len() as u64, bytes.len() as u32));
        self.arena.extend_from_slice(bytes);
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

    /// Completes the chunk: its terms sorted and front-coded, its statements renumbered by
    /// the terms' ranks (a term added twice by [`Chunk::add_new`] gets one), the hash
    /// table and the raw text freed. Sealing twice does nothing; nothing can be added
    /// after.
    pub fn seal(&mut self) {
        self.table = HashTable::new();
        self.scratch = Vec::new();
        if self.sorted.is_some() {
            return;
        }
        let mut order: Vec<u32> = (0..self.spans.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| self.open_term(a).cmp(self.open_term(b)));
        let mut rank = vec![0u32; order.len()];
        let mut terms = DictionaryBuilder::new();
        let mut previous: Option<&[u8]> = None;
        let mut next_rank = 0u32;
        for &local in &order {
            let term = self.open_term(local);
            if previous != Some(term) {
                terms.push(term);
                next_rank += 1;
                previous = Some(term);
            }
            rank[local as usize] = next_rank - 1;
        }
        drop(order);
        self.arena = Vec::new();
        self.spans = Vec::new();
        let renumber = |id: u32| {
            if id == DEFAULT_GRAPH {
                id
            } else {
                rank[id as usize]
            }
        };
        for quad in &mut self.quads {
            *quad = quad.map(renumber);
        }
        self.sorted = Some(Box::new(terms.finish_run()));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealing_sorts_the_terms_and_renumbers_the_statements() {
        let mut chunk = Chunk::new();
        let words = ["<z>", "<b>", "\"x\"", "<a>", "<g>", "<m>"];
        let statements = [
            [0, 1, 2, 4],
            [3, 1, 0, u32::MAX],
            [5, 1, 3, 4],
            [0, 1, 2, 4],
        ];
        for [s, p, o, g] in statements {
            let quad = [s, p, o].map(|i| chunk.intern(words[i as usize].as_bytes()));
            let graph = match g {
                u32::MAX => DEFAULT_GRAPH,
                g => chunk.intern(words[g as usize].as_bytes()),
            };
            chunk.quads.push([quad[0], quad[1], quad[2], graph]);
        }
        let text = |chunk: &Chunk, id: u32| match id {
            DEFAULT_GRAPH => "default".to_owned(),
            id => String::from_utf8(chunk.term(id).into_owned()).unwrap(),
        };
        let expected: Vec<Vec<String>> = chunk
            .quads
            .iter()
            .map(|q| q.iter().map(|&id| text(&chunk, id)).collect())
            .collect();
        chunk.seal();
        chunk.seal();
        assert_eq!(chunk.term_count(), words.len());
        let after: Vec<Vec<String>> = chunk
            .quads
            .iter()
            .map(|q| q.iter().map(|&id| text(&chunk, id)).collect())
            .collect();
        assert_eq!(after, expected);
        let mut walked = Vec::new();
        chunk.for_each_term(|id, term| walked.push((id, term.to_vec())));
        let mut sorted: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
        sorted.sort();
        assert_eq!(
            walked,
            sorted
                .into_iter()
                .enumerate()
                .map(|(i, t)| (i as u32, t))
                .collect::<Vec<_>>()
        );
        chunk.release_terms();
        assert_eq!(chunk.term_count(), 0);
        assert_eq!(chunk.quads.len(), statements.len());
    }

    #[test]
    fn a_term_added_twice_unindexed_is_one_term_once_sealed() {
        let mut chunk = Chunk::new();
        let b = chunk.intern(b"<b>");
        let a1 = chunk.add_new(b"<a>");
        let c = chunk.add_new(b"<c>");
        let a2 = chunk.add_new(b"<a>");
        let b2 = chunk.add_new(b"<b>");
        chunk.quads.push([a1, b, c, DEFAULT_GRAPH]);
        chunk.quads.push([a2, b2, a1, c]);
        chunk.seal();
        assert_eq!(chunk.term_count(), 3);
        let text = |id: u32| String::from_utf8(chunk.term(id).into_owned()).unwrap();
        let quads: Vec<Vec<String>> = chunk
            .quads
            .iter()
            .map(|q| q[..3].iter().map(|&id| text(id)).collect())
            .collect();
        assert_eq!(quads, [["<a>", "<b>", "<c>"], ["<a>", "<b>", "<a>"]]);
        assert_eq!(chunk.quads[0][..3], [0, 1, 2]);
        assert_eq!(chunk.quads[1], [0, 1, 0, 2]);
    }
}
