//! What the rules look facts up in: the [`Facts`] interface, and the sorted fact set the
//! materialiser keeps.
//!
//! The set is a sorted vector of `[subject, predicate, object]` (binary searches: a fact,
//! the objects of a subject and property), plus a vector sorted as `[property, object,
//! subject]` for only the properties whose subjects are looked up by object (transitive
//! properties, `someValuesFrom`). Sorted vectors rather than hash tables: 24 bytes per
//! fact with 8-byte ids and no load factor, built and merged by rayon's parallel sort,
//! and the rules' range lookups come for free.

use quiver_model::Id;
use rayon::prelude::*;
use rustc_hash::FxHashSet;

/// Facts the rules can look up.
pub trait Facts: Sync {
    fn contains(&self, fact: &[Id; 3]) -> bool;
    /// Calls `f` with each `o` of `subject property o`.
    fn for_objects(&self, subject: Id, property: Id, f: &mut dyn FnMut(Id));
    /// Calls `f` with each `s` of `s property object`. Materialisation asks it only of
    /// the properties its fact set indexes by object (transitive and `someValuesFrom`
    /// ones); keeping an entailment current asks it of any property.
    fn for_subjects(&self, property: Id, object: Id, f: &mut dyn FnMut(Id));
}

/// A set of facts in sorted vectors.
#[derive(Debug, Default)]
pub struct FactSet {
    spo: Vec<[Id; 3]>,
    /// `[p, o, s]` of the facts whose property is in `by_object`.
    pos: Vec<[Id; 3]>,
    /// `None`: every property.
    by_object: Option<FxHashSet<Id>>,
}

impl FactSet {
    /// The set of `facts` (any order, duplicates allowed); the subjects of the properties
    /// in `by_object` can be looked up by object.
    pub fn new(facts: Vec<[Id; 3]>, by_object: FxHashSet<Id>) -> Self {
        Self::build(facts, Some(by_object))
    }

    /// A set whose subjects can be looked up by object for every property.
    pub fn with_all_by_object(facts: Vec<[Id; 3]>) -> Self {
        Self::build(facts, None)
    }

    fn build(mut facts: Vec<[Id; 3]>, by_object: Option<FxHashSet<Id>>) -> Self {
        facts.par_sort_unstable();
        facts.dedup();
        let indexed = |p: &Id| by_object.as_ref().is_none_or(|set| set.contains(p));
        let mut pos: Vec<[Id; 3]> = facts
            .par_iter()
            .filter(|t| indexed(&t[1]))
            .map(|&[s, p, o]| [p, o, s])
            .collect();
        pos.par_sort_unstable();
        Self {
            spo: facts,
            pos,
            by_object,
        }
    }

    pub fn len(&self) -> usize {
        self.spo.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spo.is_empty()
    }

    pub fn as_slice(&self) -> &[[Id; 3]] {
        &self.spo
    }

    /// Adds `new` (sorted, without duplicates, none already in the set).
    pub fn extend(&mut self, new: &[[Id; 3]]) {
        merge_into(&mut self.spo, new.to_vec());
        let by_object = &self.by_object;
        let pos: Vec<[Id; 3]> = new
            .par_iter()
            .filter(|t| by_object.as_ref().is_none_or(|set| set.contains(&t[1])))
            .map(|&[s, p, o]| [p, o, s])
            .collect();
        if !pos.is_empty() {
            let mut pos = pos;
            pos.par_sort_unstable();
            merge_into(&mut self.pos, pos);
        }
    }

    pub fn into_vec(self) -> Vec<[Id; 3]> {
        self.spo
    }
}

/// Merges the sorted `new` into the sorted `into`.
fn merge_into(into: &mut Vec<[Id; 3]>, new: Vec<[Id; 3]>) {
    if new.is_empty() {
        return;
    }
    if into.last().is_none_or(|last| *last < new[0]) {
        into.extend(new);
        return;
    }
    // pdqsort on two sorted runs is close to a linear merge, and parallel.
    into.extend(new);
    into.par_sort_unstable();
}

/// The facts of the sorted `facts` whose first two ids are `a` and `b`.
fn range(facts: &[[Id; 3]], a: Id, b: Id) -> &[[Id; 3]] {
    let start = facts.partition_point(|t| (t[0], t[1]) < (a, b));
    let end = start + facts[start..].partition_point(|t| (t[0], t[1]) == (a, b));
    &facts[start..end]
}

impl Facts for FactSet {
    fn contains(&self, fact: &[Id; 3]) -> bool {
        self.spo.binary_search(fact).is_ok()
    }

    fn for_objects(&self, subject: Id, property: Id, f: &mut dyn FnMut(Id)) {
        for t in range(&self.spo, subject, property) {
            f(t[2]);
        }
    }

    fn for_subjects(&self, property: Id, object: Id, f: &mut dyn FnMut(Id)) {
        debug_assert!(self
            .by_object
            .as_ref()
            .is_none_or(|set| set.contains(&property)));
        for t in range(&self.pos, property, object) {
            f(t[2]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_see_extended_facts() {
        let by_object: FxHashSet<Id> = [5].into_iter().collect();
        let mut set = FactSet::new(vec![[3, 5, 7], [1, 5, 7], [1, 6, 2], [1, 5, 7]], by_object);
        assert_eq!(set.len(), 3);
        set.extend(&[[0, 5, 7], [1, 5, 9]]);
        let mut objects = Vec::new();
        set.for_objects(1, 5, &mut |o| objects.push(o));
        assert_eq!(objects, vec![7, 9]);
        let mut subjects = Vec::new();
        set.for_subjects(5, 7, &mut |s| subjects.push(s));
        assert_eq!(subjects, vec![0, 1, 3]);
        assert!(set.contains(&[1, 6, 2]) && !set.contains(&[1, 6, 3]));
    }
}
