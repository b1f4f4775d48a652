//! Folding consecutive change sets into one with the same effect.
//!
//! Replaying a long log one commit at a time makes one store version per commit, each
//! patching the records the commit touches; most of that work is undone or redone by the
//! next commits. A [`ChangeFold`] keeps, for each quad, only its last operation, and for each
//! named graph whether it was dropped and whether it must exist at the end, so the whole
//! run of commits becomes one [`ChangeSet`] applied once.
//!
//! Applying the folded set to the store the first set was built against gives the same
//! store as applying the sets in order: a set drops graphs, then deletes, then inserts,
//! then creates graphs. So a quad's last delete or insert decides whether it is there (a
//! drop of its graph clears what came before, and the folded set drops that graph first),
//! and a graph must exist at the end when it was created, or had a quad inserted, after its
//! last drop.

use std::collections::{BTreeSet, HashMap};

use crate::changes::{ApplyError, ChangeSet, Quad};

/// Consecutive change sets being folded into one.
#[derive(Debug)]
pub struct ChangeFold {
    base_terms: u64,
    new_terms: Vec<std::sync::Arc<[u8]>>,
    dropped: BTreeSet<quiver_model::Id>,
    created: BTreeSet<quiver_model::Id>,
    /// Each quad's last operation: `true` for an insert.
    quads: HashMap<Quad, bool>,
    sets: usize,
}

impl ChangeFold {
    /// A fold of the change sets that follow a store whose `terms()` is `base_terms`.
    pub fn new(base_terms: u64) -> Self {
        Self {
            base_terms,
            new_terms: Vec::new(),
            dropped: BTreeSet::new(),
            created: BTreeSet::new(),
            quads: HashMap::new(),
            sets: 0,
        }
    }

    /// Adds the next change set. It must have been built against the store the sets folded
    /// so far lead to: its new terms follow theirs, and its ids are below its own end.
    pub fn push(&mut self, set: &ChangeSet) -> Result<(), ApplyError> {
        let terms = self.terms();
        if set.base_terms != terms {
            return Err(ApplyError::WrongBase {
                expected: set.base_terms,
                found: terms,
            });
        }
        let end = set.base_terms + set.new_terms.len() as u64;
        let known = |id: quiver_model::Id| {
            if (id as u64) < end {
                Ok(())
            } else {
                Err(ApplyError::UnknownId(id))
            }
        };
        for quad in set.deletes.iter().chain(&set.inserts) {
            for id in [quad.subject, quad.predicate, quad.object] {
                known(id)?;
            }
            if let Some(graph) = quad.graph {
                known(graph)?;
            }
        }
        for &graph in set.dropped_graphs.iter().chain(&set.created_graphs) {
            known(graph)?;
        }
        self.new_terms.extend(set.new_terms.iter().cloned());
        for &graph in &set.dropped_graphs {
            self.dropped.insert(graph);
            self.created.remove(&graph);
            self.quads.retain(|quad, _| quad.graph != Some(graph));
        }
        for quad in &set.deletes {
            self.quads.insert(*quad, false);
        }
        for quad in &set.inserts {
            self.quads.insert(*quad, true);
            // An insert makes its graph exist, and a later delete of the quad leaves it
            // (empty): the graph must exist at the end even when the fold cancels the
            // insert, unless a later set drops it.
            if let Some(graph) = quad.graph {
                self.created.insert(graph);
            }
        }
        self.created.extend(set.created_graphs.iter().copied());
        self.sets += 1;
        Ok(())
    }

    /// `terms()` of the store the sets folded so far lead to.
    pub fn terms(&self) -> u64 {
        self.base_terms + self.new_terms.len() as u64
    }

    /// Change sets folded so far.
    pub fn sets(&self) -> usize {
        self.sets
    }

    /// Distinct quads the folded sets touch (what the fold holds in memory).
    pub fn quads(&self) -> usize {
        self.quads.len()
    }

    /// The folded change set, against the store the first set was built against.
    pub fn finish(self) -> ChangeSet {
        let mut deletes = Vec::new();
        let mut inserts = Vec::new();
        for (quad, insert) in self.quads {
            if insert {
                inserts.push(quad);
            } else {
                deletes.push(quad);
            }
        }
        deletes.sort_unstable();
        inserts.sort_unstable();
        let mut set = ChangeSet::default();
        set.base_terms = self.base_terms;
        set.new_terms = self.new_terms;
        set.dropped_graphs = self.dropped.into_iter().collect();
        set.deletes = deletes;
        set.inserts = inserts;
        set.created_graphs = self.created.into_iter().collect();
        set.reindex();
        set
    }
}
