//! Keeping an entailment current when asserted triples are added and removed, without
//! computing it again: the DRed algorithm (delete and rederive; Gupta, Mumick and
//! Subrahmanian, 1993), as RDFox and Jena's incremental reasoners use it.
//!
//! 1. **Overdelete.** Everything the removed triples derive, with the other premises
//!    read from the old entailment, is removed too, round after round (semi-naively);
//!    triples still asserted stay.
//! 2. **Rederive.** A removed triple that one rule still derives from what remains comes
//!    back ([`derivable`]: every rule of `rules.rs` read backwards, from its conclusion to
//!    its premises).
//! 3. **Insert.** The rederived and the newly asserted triples are fired forwards,
//!    semi-naively, over what remains and what was added.
//!
//! A change to the ontology itself (a subclass axiom, a restriction) changes the rules;
//! the caller computes the entailment again then ([`Ontology::is_schema`]). So it does
//! when a change touches equality (`equality.rs` reasons over representatives, which
//! DRed does not see): [`maintain`] answers `None` when a triple it would assert, retract,
//! overdelete or add is an `owl:sameAs` triple, one of a functional or inverse-functional
//! property, or names a term equal to another. Otherwise no equality rule applies to
//! those triples: the overdeletion is the one the equality rules would give, a triple it
//! rederives or adds follows by the other rules alone, and the entailment, closed under
//! equality before, stays so.

use quiver_model::Id;
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::facts::{FactSet, Facts};
use crate::materialise::fire_round;
use crate::schema::Schema;
use crate::vocabulary::{Terms, Vocabulary};
use crate::Profile;

/// An ontology compiled for the rules, forwards and backwards.
#[derive(Debug)]
pub struct Ontology {
    profile: Profile,
    vocabulary: Vocabulary,
    schema: Schema,
    inverse: Inverse,
    /// What [`Ontology::schema_properties`] and [`Ontology::schema_classes`] return,
    /// resolved once: [`Ontology::is_schema`] asks it of every changed triple.
    schema_properties: Vec<Id>,
    schema_classes: Vec<Id>,
}

/// The schema's tables indexed by what the rules conclude.
#[derive(Debug, Default)]
struct Inverse {
    /// Class → the classes below it.
    subs: FxHashMap<Id, Vec<Id>>,
    /// Class → the properties whose domain (range) it is.
    by_domain: FxHashMap<Id, Vec<Id>>,
    by_range: FxHashMap<Id, Vec<Id>>,
    /// Property `q` → the (property `p`, flipped) whose triples imply `q`'s.
    implied_by: FxHashMap<Id, Vec<(Id, bool)>>,
    /// Class → the intersections that define it (indexes into the schema's).
    intersections: FxHashMap<Id, Vec<usize>>,
    /// `someValuesFrom` restriction → (property, filler or `None` for `owl:Thing`).
    some_by_restriction: FxHashMap<Id, Vec<(Id, Option<Id>)>>,
    /// Filler → (property, `allValuesFrom` restriction).
    all_by_filler: FxHashMap<Id, Vec<(Id, Id)>>,
}

impl Inverse {
    fn of(schema: &Schema) -> Self {
        fn push<K: std::hash::Hash + Eq, V>(map: &mut FxHashMap<K, Vec<V>>, key: K, value: V) {
            map.entry(key).or_default().push(value);
        }
        let mut inverse = Inverse::default();
        for (&class, supers) in &schema.supers {
            for &d in supers {
                push(&mut inverse.subs, d, class);
            }
        }
        for (&p, classes) in &schema.domains {
            for &d in classes {
                push(&mut inverse.by_domain, d, p);
            }
        }
        for (&p, classes) in &schema.ranges {
            for &d in classes {
                push(&mut inverse.by_range, d, p);
            }
        }
        for (&p, implied) in &schema.implied {
            for &(q, flipped) in implied {
                push(&mut inverse.implied_by, q, (p, flipped));
            }
        }
        for (i, intersection) in schema.intersections.iter().enumerate() {
            push(&mut inverse.intersections, intersection.class, i);
        }
        for (&p, pairs) in &schema.some_by_property {
            for &(filler, restriction) in pairs {
                push(&mut inverse.some_by_restriction, restriction, (p, filler));
            }
        }
        for (&p, pairs) in &schema.all_by_property {
            for &(restriction, filler) in pairs {
                push(&mut inverse.all_by_filler, filler, (p, restriction));
            }
        }
        inverse
    }
}

impl Ontology {
    /// The ontology of `triples` (all of them, or at least every one of the properties
    /// [`Ontology::schema_properties`] names and every `rdf:type` to a class of
    /// [`Ontology::schema_classes`]).
    pub fn read(triples: &[[Id; 3]], terms: &impl Terms, profile: Profile) -> Self {
        let vocabulary = Vocabulary::resolve(terms);
        let schema = Schema::read(triples, &vocabulary, profile);
        let inverse = Inverse::of(&schema);
        let v = &vocabulary;
        let schema_properties = [
            v.sub_class_of,
            v.sub_property_of,
            v.domain,
            v.range,
            v.equivalent_class,
            v.equivalent_property,
            v.inverse_of,
            v.intersection_of,
            v.union_of,
            v.on_property,
            v.some_values_from,
            v.all_values_from,
            v.has_value,
            v.rdf_first,
            v.rdf_rest,
        ]
        .into_iter()
        .flatten()
        .collect();
        let schema_classes = [
            v.transitive_property,
            v.symmetric_property,
            v.functional_property,
            v.inverse_functional_property,
        ]
        .into_iter()
        .flatten()
        .collect();
        Self {
            profile,
            vocabulary,
            schema,
            inverse,
            schema_properties,
            schema_classes,
        }
    }

    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The properties whose triples make the ontology (term ids of those in the
    /// dictionary).
    pub fn schema_properties(&self) -> &[Id] {
        &self.schema_properties
    }

    /// The classes whose `rdf:type` triples make the ontology.
    pub fn schema_classes(&self) -> &[Id] {
        &self.schema_classes
    }

    /// Whether asserting or retracting `fact` changes the ontology.
    pub fn is_schema(&self, fact: &[Id; 3]) -> bool {
        let [_, p, o] = *fact;
        if Some(p) == self.vocabulary.rdf_type {
            return self.schema_classes().contains(&o);
        }
        self.schema_properties().contains(&p)
    }
}

/// What [`maintain`] changes in an entailment.
#[derive(Debug, Default)]
pub struct Maintained {
    /// Triples of the old entailment that no longer follow, sorted.
    pub removed: Vec<[Id; 3]>,
    /// Triples that follow now and did not before, sorted.
    pub added: Vec<[Id; 3]>,
}

/// Facts of a base, less those removed, plus those added.
struct Overlay<'a> {
    base: &'a dyn Facts,
    removed: &'a FxHashSet<[Id; 3]>,
    added: &'a FactSet,
}

impl Facts for Overlay<'_> {
    fn contains(&self, fact: &[Id; 3]) -> bool {
        self.added.contains(fact) || (!self.removed.contains(fact) && self.base.contains(fact))
    }

    fn for_objects(&self, subject: Id, property: Id, f: &mut dyn FnMut(Id)) {
        self.base.for_objects(subject, property, &mut |o| {
            let fact = [subject, property, o];
            if !self.removed.contains(&fact) && !self.added.contains(&fact) {
                f(o);
            }
        });
        self.added.for_objects(subject, property, f);
    }

    fn for_subjects(&self, property: Id, object: Id, f: &mut dyn FnMut(Id)) {
        self.base.for_subjects(property, object, &mut |s| {
            let fact = [s, property, object];
            if !self.removed.contains(&fact) && !self.added.contains(&fact) {
                f(s);
            }
        });
        self.added.for_subjects(property, object, f);
    }
}

/// Whether a change that asserts, retracts, overdeletes or adds one of these triples could
/// change which terms are equal, or touch the facts of a term equal to another.
struct EqualityGuard<'a> {
    same_as: Option<Id>,
    schema: &'a Schema,
    entailed: &'a dyn Facts,
}

impl EqualityGuard<'_> {
    fn touched_by<'f>(&self, facts: impl IntoParallelIterator<Item = &'f [Id; 3]>) -> bool {
        let Some(same_as) = self.same_as else {
            return false;
        };
        let merged = |t: Id| any_object(self.entailed, t, same_as, |u| u != t);
        facts.into_par_iter().any(|&[s, p, o]| {
            p == same_as
                || self.schema.functional.contains(&p)
                || self.schema.inverse_functional.contains(&p)
                || merged(s)
                || merged(p)
                || merged(o)
        })
    }
}

/// The changes to the entailment `entailed` (of the old asserted triples under
/// `ontology`) when the asserted triples `deleted` are retracted and `inserted` asserted
/// (none of them part of the ontology); `asserted` says whether a triple is asserted
/// after the change. `None` when the change touches equality: the caller computes the
/// entailment again.
pub fn maintain(
    ontology: &Ontology,
    terms: &impl Terms,
    entailed: &dyn Facts,
    deleted: &[[Id; 3]],
    inserted: &[[Id; 3]],
    asserted: &(dyn Fn(&[Id; 3]) -> bool + Sync),
) -> Option<Maintained> {
    let schema = &ontology.schema;
    // `owl:sameAs` as the dictionary after the change names it (the change may bring it).
    let guard = EqualityGuard {
        same_as: terms
            .iri("http://www.w3.org/2002/07/owl#sameAs")
            .filter(|_| ontology.profile == Profile::OwlRl),
        schema,
        entailed,
    };
    if guard.touched_by(deleted) || guard.touched_by(inserted) {
        return None;
    }
    // 1. Overdelete.
    let mut over: FxHashSet<[Id; 3]> = deleted
        .iter()
        .filter(|f| entailed.contains(f))
        .copied()
        .collect();
    let mut delta: Vec<[Id; 3]> = over.iter().copied().collect();
    while !delta.is_empty() {
        delta = fire_round(&delta, schema, entailed, terms)
            .into_par_iter()
            .filter(|f| !over.contains(f) && entailed.contains(f) && !asserted(f))
            .collect();
        over.extend(delta.iter().copied());
    }
    // What the overdeleted facts stand for under equality is not followed here.
    if guard.touched_by(&over) {
        return None;
    }
    // 2. Rederive what one rule still gives from what remains.
    let empty = FactSet::with_all_by_object(Vec::new());
    let remaining = Overlay {
        base: entailed,
        removed: &over,
        added: &empty,
    };
    let mut delta: Vec<[Id; 3]> = over
        .par_iter()
        .filter(|f| derivable(f, ontology, &remaining))
        .copied()
        .chain(
            inserted
                .par_iter()
                .filter(|f| !remaining.contains(f))
                .copied(),
        )
        .collect();
    delta.par_sort_unstable();
    delta.dedup();
    // 3. Insert, semi-naively.
    let mut added = FactSet::with_all_by_object(Vec::new());
    while !delta.is_empty() {
        added.extend(&delta);
        let known = Overlay {
            base: entailed,
            removed: &over,
            added: &added,
        };
        delta = fire_round(&delta, schema, &known, terms)
            .into_par_iter()
            .filter(|f| !known.contains(f))
            .collect();
    }
    let mut removed: Vec<[Id; 3]> = over.into_iter().filter(|f| !added.contains(f)).collect();
    removed.par_sort_unstable();
    let added: Vec<[Id; 3]> = added
        .into_vec()
        .into_par_iter()
        .filter(|f| !entailed.contains(f))
        .collect();
    if guard.touched_by(&added) {
        return None;
    }
    Some(Maintained { removed, added })
}

/// Whether one rule derives `fact` from `known`: the rules of `rules.rs` read from their
/// conclusion back to their premises.
fn derivable(fact: &[Id; 3], ontology: &Ontology, known: &dyn Facts) -> bool {
    let (schema, inverse) = (&ontology.schema, &ontology.inverse);
    let [s, p, o] = *fact;
    match schema.rdf_type {
        Some(rdf_type) if p == rdf_type => {
            let (x, class) = (s, o);
            let typed = |c: Id| known.contains(&[x, rdf_type, c]);
            // cax-sco, prp-dom, prp-rng, cls-int1, cls-svf1/2, cls-hv2, cls-avf.
            list(&inverse.subs, class).iter().any(|&c| typed(c))
                || list(&inverse.by_domain, class)
                    .iter()
                    .any(|&q| any_object(known, x, q, |_| true))
                || list(&inverse.by_range, class)
                    .iter()
                    .any(|&q| any_subject(known, q, x, |_| true))
                || inverse
                    .intersections
                    .get(&class)
                    .into_iter()
                    .flatten()
                    .any(|&i| schema.intersections[i].members.iter().all(|&m| typed(m)))
                || inverse
                    .some_by_restriction
                    .get(&class)
                    .into_iter()
                    .flatten()
                    .any(|&(q, filler)| {
                        any_object(known, x, q, |y| {
                            filler.is_none_or(|d| known.contains(&[y, rdf_type, d]))
                        })
                    })
                || schema
                    .value_by_class
                    .get(&class)
                    .into_iter()
                    .flatten()
                    .any(|&(q, v)| known.contains(&[x, q, v]))
                || inverse.all_by_filler.get(&class).into_iter().flatten().any(
                    |&(q, restriction)| {
                        any_subject(known, q, x, |w| known.contains(&[w, rdf_type, restriction]))
                    },
                )
        }
        rdf_type => {
            // prp-spo1, prp-eqp, prp-inv, prp-symp; cls-hv1; prp-trp.
            inverse
                .implied_by
                .get(&p)
                .into_iter()
                .flatten()
                .any(|&(q, flipped)| known.contains(&if flipped { [o, q, s] } else { [s, q, o] }))
                || rdf_type.is_some_and(|rdf_type| {
                    schema.value_by_property.get(&p).into_iter().flatten().any(
                        |&(v, restriction)| v == o && known.contains(&[s, rdf_type, restriction]),
                    )
                })
                || (schema.transitive.contains(&p)
                    && any_object(known, s, p, |z| known.contains(&[z, p, o])))
        }
    }
}

/// The ids `map` lists for `key` (none when absent).
fn list(map: &FxHashMap<Id, Vec<Id>>, key: Id) -> &[Id] {
    map.get(&key).map_or(&[], Vec::as_slice)
}

/// Whether some `o` of `subject property o` in `known` passes `test`.
fn any_object(known: &dyn Facts, subject: Id, property: Id, test: impl Fn(Id) -> bool) -> bool {
    let mut found = false;
    known.for_objects(subject, property, &mut |o| found = found || test(o));
    found
}

/// Whether some `s` of `s property object` in `known` passes `test`.
fn any_subject(known: &dyn Facts, property: Id, object: Id, test: impl Fn(Id) -> bool) -> bool {
    let mut found = false;
    known.for_subjects(property, object, &mut |s| found = found || test(s));
    found
}
