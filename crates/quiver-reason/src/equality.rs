//! `owl:sameAs` by representatives: each class of equal terms is reasoned over as one
//! term, its smallest id, and the closure is expanded to every member at the end.
//!
//! OWL 2 RL's equality rules (`eq-sym`, `eq-trans`, `eq-rep-s`, `eq-rep-p`, `eq-rep-o`)
//! copy every triple of a term to each term equal to it, so a class of `n` equal terms
//! multiplies the facts the other rules fire on by up to `n` (RDFox's "rewriting" papers
//! measure this). Instead the materialiser replaces each term by its class's
//! representative (the facts and the ontology alike), runs the other rules to their
//! fixpoint over the smaller graph, and starts again whenever they derive a new equality
//! (`prp-fp`, `prp-ifp`); [`Equality::expand`] then writes each fact of the
//! representatives' closure once per combination of members, and every pair of equal
//! terms as `owl:sameAs` both ways, each term with itself included. The reflexive
//! `x owl:sameAs x` of `eq-ref`, true of every term, is written only for the terms equal
//! to another: for the others it would add one triple per term and tell nothing.
//!
//! Not merged: literals (two literals are equal by value, not by this rule) and the RDF,
//! RDFS and OWL terms the rules read (an equality between `rdf:type` and some IRI would
//! rename the rules themselves); their `owl:sameAs` triples stay plain facts.

use quiver_model::Id;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

/// Classes of equal terms, as a union-find keyed by id (terms not in it are alone).
#[derive(Debug, Default)]
pub(crate) struct Equality {
    parent: FxHashMap<Id, Id>,
}

impl Equality {
    /// The representative of `id`'s class: its smallest member.
    pub fn representative(&self, id: Id) -> Id {
        let mut node = id;
        while let Some(&up) = self.parent.get(&node) {
            if up == node {
                break;
            }
            node = up;
        }
        node
    }

    /// Joins the classes of `a` and `b`; whether they were apart.
    pub fn join(&mut self, a: Id, b: Id) -> bool {
        let (ra, rb) = (self.representative(a), self.representative(b));
        if ra == rb {
            return false;
        }
        let (low, high) = (ra.min(rb), ra.max(rb));
        self.parent.insert(high, low);
        self.parent.entry(low).or_insert(low);
        // Paths stay short: point the two starting terms at the new root too.
        for id in [a, b] {
            if id != low {
                self.parent.insert(id, low);
            }
        }
        true
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// `fact` with each term replaced by its representative.
    pub fn rewrite(&self, [s, p, o]: [Id; 3]) -> [Id; 3] {
        [
            self.representative(s),
            self.representative(p),
            self.representative(o),
        ]
    }

    /// `facts` rewritten, sorted, without duplicates.
    pub fn rewrite_all(&self, facts: &[[Id; 3]]) -> Vec<[Id; 3]> {
        let mut out: Vec<[Id; 3]> = facts.par_iter().map(|&f| self.rewrite(f)).collect();
        out.par_sort_unstable();
        out.dedup();
        out
    }

    /// Each representative of a class of two or more terms → its members, ascending.
    fn members(&self) -> FxHashMap<Id, Vec<Id>> {
        let mut members: FxHashMap<Id, Vec<Id>> = FxHashMap::default();
        for &id in self.parent.keys() {
            members.entry(self.representative(id)).or_default().push(id);
        }
        members.retain(|_, list| list.len() > 1);
        for list in members.values_mut() {
            list.sort_unstable();
        }
        members
    }

    /// The closure of the original terms from `closed`, the representatives' closure:
    /// every fact once per combination of the members of its terms' classes, and the
    /// `owl:sameAs` pairs of every class (`same_as`), reflexive ones included; sorted,
    /// without duplicates.
    pub fn expand(&self, closed: &[[Id; 3]], same_as: Option<Id>) -> Vec<[Id; 3]> {
        let members = self.members();
        let mut out: Vec<[Id; 3]> = closed
            .par_iter()
            .flat_map_iter(|fact| {
                let class = |i: usize| -> &[Id] {
                    members
                        .get(&fact[i])
                        .map_or(std::slice::from_ref(&fact[i]), Vec::as_slice)
                };
                let mut facts = Vec::new();
                for &s in class(0) {
                    for &p in class(1) {
                        for &o in class(2) {
                            facts.push([s, p, o]);
                        }
                    }
                }
                facts
            })
            .collect();
        if let Some(same_as) = same_as {
            for list in members.values() {
                for &a in list {
                    for &b in list {
                        out.push([a, same_as, b]);
                    }
                }
            }
        }
        out.par_sort_unstable();
        out.dedup();
        out
    }
}

/// Which `owl:sameAs` facts join two classes: not literals, not the rules' vocabulary.
pub(crate) struct Mergeable<'a> {
    pub same_as: Id,
    pub vocabulary: &'a FxHashSet<Id>,
    pub is_literal: &'a (dyn Fn(Id) -> bool + Sync),
}

impl Mergeable<'_> {
    /// The equalities `facts` state between terms that may be merged.
    pub fn equalities<'f>(&'f self, facts: &'f [[Id; 3]]) -> impl Iterator<Item = (Id, Id)> + 'f {
        facts.iter().filter_map(move |&[s, p, o]| {
            (p == self.same_as && s != o && self.allowed(s) && self.allowed(o)).then_some((s, o))
        })
    }

    fn allowed(&self, id: Id) -> bool {
        !self.vocabulary.contains(&id) && !(self.is_literal)(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_join_to_their_smallest_member_and_expand_both_ways() {
        let mut equality = Equality::default();
        assert!(equality.join(7, 3));
        assert!(equality.join(9, 7));
        assert!(!equality.join(3, 9));
        assert_eq!(equality.representative(9), 3);
        assert_eq!(equality.rewrite([9, 1, 7]), [3, 1, 3]);
        // `3 p 5` stands for 3, 7 and 9; every pair of the class is equal, each term to
        // itself too, and a term alone (5) is not said equal to itself.
        let out = equality.expand(&[[3, 1, 5], [5, 1, 5]], Some(2));
        let subjects: Vec<Id> = out.iter().filter(|f| f[2] == 5).map(|f| f[0]).collect();
        assert_eq!(subjects, vec![3, 5, 7, 9]);
        let same: Vec<[Id; 3]> = out.iter().filter(|f| f[1] == 2).copied().collect();
        assert_eq!(same.len(), 9);
        assert!(same.iter().all(|f| f[0] != 5 && f[2] != 5));
    }
}
