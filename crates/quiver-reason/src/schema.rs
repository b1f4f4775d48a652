//! The ontology read from the triples, compiled for the instance rules.
//!
//! The schema rules (`scm-*` of OWL 2 RL: subclass and subproperty transitivity,
//! equivalence as two inclusions, an intersection below its members and a union above
//! them) are applied here once, so that the instance rules look up closed tables: the
//! superclasses of a class, every (property, direction) a triple of a property implies
//! through subproperties, equivalences, inverses and symmetry, and the class expressions
//! (intersections, `someValuesFrom`, `allValuesFrom`, `hasValue`) indexed by what
//! triggers them. The ontology is the asserted triples' (the usual choice of Jena's and
//! RDFox's materialisers): schema triples that only follow from instance rules are not
//! read back as schema.

use quiver_model::Id;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::vocabulary::Vocabulary;
use crate::Profile;

/// One intersection class `class ≡ members[0] ⊓ members[1] ⊓ …`.
#[derive(Debug)]
pub(crate) struct Intersection {
    pub class: Id,
    pub members: Vec<Id>,
}

#[derive(Debug, Default)]
pub(crate) struct Schema {
    pub rdf_type: Option<Id>,
    /// Class → its superclasses (transitive, without itself), for classes that have one.
    pub supers: FxHashMap<Id, Vec<Id>>,
    /// Property → the (property, flipped) pairs a triple of it implies, without itself.
    pub implied: FxHashMap<Id, Vec<(Id, bool)>>,
    pub domains: FxHashMap<Id, Vec<Id>>,
    pub ranges: FxHashMap<Id, Vec<Id>>,
    pub transitive: FxHashSet<Id>,
    /// `owl:sameAs`, when the dictionary has it (equalities are derived only then).
    pub same_as: Option<Id>,
    /// `owl:FunctionalProperty` and `owl:InverseFunctionalProperty` properties.
    pub functional: FxHashSet<Id>,
    pub inverse_functional: FxHashSet<Id>,
    /// `x p y`, `y a filler` ⇒ `x a restriction`: by `p`, (filler, restriction); a filler
    /// of `owl:Thing` is `None` (any `y`).
    pub some_by_property: FxHashMap<Id, Vec<(Option<Id>, Id)>>,
    /// The same by filler: (p, restriction).
    pub some_by_filler: FxHashMap<Id, Vec<(Id, Id)>>,
    /// `x a restriction` ⇒ `x p value`: by restriction, (p, value).
    pub value_by_class: FxHashMap<Id, Vec<(Id, Id)>>,
    /// `x p value` ⇒ `x a restriction`: by p, (value, restriction).
    pub value_by_property: FxHashMap<Id, Vec<(Id, Id)>>,
    /// `x a restriction`, `x p y` ⇒ `y a filler`: by restriction, (p, filler).
    pub all_by_class: FxHashMap<Id, Vec<(Id, Id)>>,
    /// The same by p: (restriction, filler).
    pub all_by_property: FxHashMap<Id, Vec<(Id, Id)>>,
    pub intersections: Vec<Intersection>,
    /// Class → the intersections it is a member of (indexes into `intersections`).
    pub intersections_by_member: FxHashMap<Id, Vec<usize>>,
    /// Properties whose subjects are looked up by object (transitive ones and those of
    /// `someValuesFrom` restrictions with a filler).
    pub looked_up_by_object: FxHashSet<Id>,
    /// The hierarchies as triples: `C rdfs:subClassOf D` for every class of an inclusion
    /// and each of its superclasses and itself (`scm-sco`, `scm-cls`, rdfs10/11), and
    /// likewise `rdfs:subPropertyOf` (`scm-spo`, `scm-op`, rdfs5/6).
    pub hierarchy: Vec<[Id; 3]>,
}

impl Schema {
    /// Reads the ontology from `triples` (any order, duplicates allowed).
    pub fn read(triples: &[[Id; 3]], vocabulary: &Vocabulary, profile: Profile) -> Self {
        let owl = profile == Profile::OwlRl;
        let is = |p: Id, term: Option<Id>| term == Some(p);
        let mut sub_class: Vec<(Id, Id)> = Vec::new();
        let mut sub_property: Vec<(Id, Id)> = Vec::new();
        let mut schema = Schema {
            rdf_type: vocabulary.rdf_type,
            same_as: vocabulary.same_as.filter(|_| owl),
            ..Schema::default()
        };
        let mut inverses: Vec<(Id, Id)> = Vec::new();
        let mut symmetric: Vec<Id> = Vec::new();
        // Restriction parts, joined below.
        let mut on_property: FxHashMap<Id, Id> = FxHashMap::default();
        let mut some: Vec<(Id, Id)> = Vec::new();
        let mut all: Vec<(Id, Id)> = Vec::new();
        let mut value: Vec<(Id, Id)> = Vec::new();
        let mut intersection_lists: Vec<(Id, Id)> = Vec::new();
        let mut union_lists: Vec<(Id, Id)> = Vec::new();
        let mut first: FxHashMap<Id, Id> = FxHashMap::default();
        let mut rest: FxHashMap<Id, Id> = FxHashMap::default();
        // Declared classes and properties: each is its own subclass (subproperty).
        let mut declared_classes: Vec<Id> = Vec::new();
        let mut declared_properties: Vec<Id> = Vec::new();
        let classes = [vocabulary.rdfs_class, vocabulary.owl_class];
        let properties = [
            vocabulary.rdf_property,
            vocabulary.object_property,
            vocabulary.datatype_property,
        ];

        for &[s, p, o] in triples {
            if is(p, vocabulary.sub_class_of) {
                sub_class.push((s, o));
            } else if is(p, vocabulary.sub_property_of) {
                sub_property.push((s, o));
            } else if is(p, vocabulary.domain) {
                schema.domains.entry(s).or_default().push(o);
            } else if is(p, vocabulary.range) {
                schema.ranges.entry(s).or_default().push(o);
            } else if is(p, vocabulary.rdf_type) && classes.contains(&Some(o)) {
                declared_classes.push(s);
            } else if is(p, vocabulary.rdf_type) && properties.contains(&Some(o)) {
                declared_properties.push(s);
            } else if !owl {
                continue;
            } else if is(p, vocabulary.equivalent_class) {
                sub_class.extend([(s, o), (o, s)]);
            } else if is(p, vocabulary.equivalent_property) {
                sub_property.extend([(s, o), (o, s)]);
            } else if is(p, vocabulary.inverse_of) {
                inverses.push((s, o));
            } else if is(p, vocabulary.rdf_type) {
                if is(o, vocabulary.transitive_property) {
                    schema.transitive.insert(s);
                } else if is(o, vocabulary.symmetric_property) {
                    symmetric.push(s);
                } else if is(o, vocabulary.functional_property) {
                    schema.functional.insert(s);
                } else if is(o, vocabulary.inverse_functional_property) {
                    schema.inverse_functional.insert(s);
                }
            } else if is(p, vocabulary.on_property) {
                on_property.insert(s, o);
            } else if is(p, vocabulary.some_values_from) {
                some.push((s, o));
            } else if is(p, vocabulary.all_values_from) {
                all.push((s, o));
            } else if is(p, vocabulary.has_value) {
                value.push((s, o));
            } else if is(p, vocabulary.intersection_of) {
                intersection_lists.push((s, o));
            } else if is(p, vocabulary.union_of) {
                union_lists.push((s, o));
            } else if is(p, vocabulary.rdf_first) {
                first.insert(s, o);
            } else if is(p, vocabulary.rdf_rest) {
                rest.insert(s, o);
            }
        }

        let list = |head: Id| -> Vec<Id> {
            let mut members = Vec::new();
            let mut node = head;
            let mut seen = FxHashSet::default();
            while Some(node) != vocabulary.rdf_nil && seen.insert(node) {
                match first.get(&node) {
                    Some(&member) => members.push(member),
                    None => break,
                }
                match rest.get(&node) {
                    Some(&next) => node = next,
                    None => break,
                }
            }
            members
        };
        for (class, head) in intersection_lists {
            let members = list(head);
            if members.is_empty() {
                continue;
            }
            sub_class.extend(members.iter().map(|&m| (class, m)));
            schema.intersections.push(Intersection { class, members });
        }
        for (class, head) in union_lists {
            sub_class.extend(list(head).into_iter().map(|m| (m, class)));
        }
        for (i, intersection) in schema.intersections.iter().enumerate() {
            for &member in &intersection.members {
                let entry = schema.intersections_by_member.entry(member).or_default();
                if !entry.contains(&i) {
                    entry.push(i);
                }
            }
        }
        for &(restriction, filler) in &some {
            let Some(&p) = on_property.get(&restriction) else {
                continue;
            };
            let filler = (Some(filler) != vocabulary.thing).then_some(filler);
            schema
                .some_by_property
                .entry(p)
                .or_default()
                .push((filler, restriction));
            if let Some(filler) = filler {
                schema
                    .some_by_filler
                    .entry(filler)
                    .or_default()
                    .push((p, restriction));
                schema.looked_up_by_object.insert(p);
            }
        }
        for &(restriction, filler) in &all {
            if let Some(&p) = on_property.get(&restriction) {
                schema
                    .all_by_class
                    .entry(restriction)
                    .or_default()
                    .push((p, filler));
                schema
                    .all_by_property
                    .entry(p)
                    .or_default()
                    .push((restriction, filler));
            }
        }
        for &(restriction, v) in &value {
            if let Some(&p) = on_property.get(&restriction) {
                schema
                    .value_by_class
                    .entry(restriction)
                    .or_default()
                    .push((p, v));
                schema
                    .value_by_property
                    .entry(p)
                    .or_default()
                    .push((v, restriction));
            }
        }
        schema
            .looked_up_by_object
            .extend(schema.transitive.iter().copied());
        schema
            .looked_up_by_object
            .extend(schema.inverse_functional.iter().copied());
        if schema.same_as.is_none() {
            // Without `owl:sameAs` in the dictionary no equality can be written.
            schema.functional.clear();
            schema.inverse_functional.clear();
        }

        let restrictions = Restrictions {
            on_property: &on_property,
            some: &some,
            all: &all,
            value: &value,
            thing: vocabulary.thing,
        };
        restrictions.add_inclusions(&mut sub_class, &sub_property);
        schema.supers = closure(&sub_class);
        schema.implied = implied_properties(&sub_property, &inverses, &symmetric);
        for (edges, declared, property) in [
            (&sub_class, &declared_classes, vocabulary.sub_class_of),
            (
                &sub_property,
                &declared_properties,
                vocabulary.sub_property_of,
            ),
        ] {
            let Some(property) = property else {
                continue;
            };
            let closed = closure(edges);
            let members: FxHashSet<Id> = edges
                .iter()
                .flat_map(|&(a, b)| [a, b])
                .chain(declared.iter().copied())
                .collect();
            for member in members {
                schema.hierarchy.push([member, property, member]);
                for &up in closed.get(&member).into_iter().flatten() {
                    schema.hierarchy.push([member, property, up]);
                }
            }
        }
        schema
    }

    /// Whether the ontology has no rule to apply.
    pub fn is_empty(&self) -> bool {
        self.hierarchy.is_empty()
            && self.supers.is_empty()
            && self.implied.is_empty()
            && self.domains.is_empty()
            && self.ranges.is_empty()
            && self.transitive.is_empty()
            && self.functional.is_empty()
            && self.inverse_functional.is_empty()
            && self.some_by_property.is_empty()
            && self.value_by_class.is_empty()
            && self.value_by_property.is_empty()
            && self.all_by_class.is_empty()
            && self.intersections.is_empty()
    }
}

/// The restrictions of an ontology, for the schema rules that include one in another.
struct Restrictions<'a> {
    on_property: &'a FxHashMap<Id, Id>,
    /// (restriction, filler) of `someValuesFrom`, `allValuesFrom`; (restriction, value)
    /// of `hasValue`.
    some: &'a [(Id, Id)],
    all: &'a [(Id, Id)],
    value: &'a [(Id, Id)],
    thing: Option<Id>,
}

impl Restrictions<'_> {
    /// Adds to `sub_class` the inclusions between restrictions that OWL 2 RL's schema
    /// rules give, until none is new (each may make another's premise true):
    /// - `scm-svf1`: `∃p.D₁ ⊑ ∃p.D₂` when `D₁ ⊑ D₂` (every class is below `owl:Thing`);
    /// - `scm-svf2`: `∃p₁.D ⊑ ∃p₂.D` when `p₁ ⊑ p₂`;
    /// - `scm-avf1`: `∀p.D₁ ⊑ ∀p.D₂` when `D₁ ⊑ D₂`;
    /// - `scm-avf2`: `∀p₂.D ⊑ ∀p₁.D` when `p₁ ⊑ p₂`;
    /// - `scm-hv`: `∃p₁.{v} ⊑ ∃p₂.{v}` when `p₁ ⊑ p₂`.
    fn add_inclusions(&self, sub_class: &mut Vec<(Id, Id)>, sub_property: &[(Id, Id)]) {
        let with_property = |pairs: &[(Id, Id)]| -> Vec<(Id, Id, Id)> {
            pairs
                .iter()
                .filter_map(|&(r, x)| Some((r, *self.on_property.get(&r)?, x)))
                .collect()
        };
        let (some, all, value) = (
            with_property(self.some),
            with_property(self.all),
            with_property(self.value),
        );
        if some.len() + all.len() + value.len() < 2 {
            return;
        }
        let properties = closure(sub_property);
        let below = |map: &FxHashMap<Id, Vec<Id>>, a: Id, b: Id| {
            a == b || map.get(&a).is_some_and(|up| up.binary_search(&b).is_ok())
        };
        let mut known: FxHashSet<(Id, Id)> = sub_class.iter().copied().collect();
        loop {
            let classes = closure(sub_class);
            let class_below = |a: Id, b: Id| Some(b) == self.thing || below(&classes, a, b);
            let mut new = Vec::new();
            // Quadratic in the restrictions, which ontologies have few of beside their data.
            for &(r1, p1, d1) in &some {
                for &(r2, p2, d2) in &some {
                    if r1 != r2
                        && ((p1 == p2 && class_below(d1, d2))
                            || (d1 == d2 && below(&properties, p1, p2)))
                    {
                        new.push((r1, r2));
                    }
                }
            }
            for &(r1, p1, d1) in &all {
                for &(r2, p2, d2) in &all {
                    if r1 != r2 && p1 == p2 && class_below(d1, d2) {
                        new.push((r1, r2));
                    }
                    if r1 != r2 && d1 == d2 && below(&properties, p1, p2) {
                        new.push((r2, r1));
                    }
                }
            }
            for &(r1, p1, v1) in &value {
                for &(r2, p2, v2) in &value {
                    if r1 != r2 && v1 == v2 && below(&properties, p1, p2) {
                        new.push((r1, r2));
                    }
                }
            }
            new.retain(|edge| known.insert(*edge));
            if new.is_empty() {
                return;
            }
            sub_class.extend(new);
        }
    }
}

/// The transitive closure of `edges` (a → b): for each source, everything reachable
/// from it, itself excluded.
fn closure(edges: &[(Id, Id)]) -> FxHashMap<Id, Vec<Id>> {
    let mut next: FxHashMap<Id, Vec<Id>> = FxHashMap::default();
    for &(a, b) in edges {
        if a != b {
            next.entry(a).or_default().push(b);
        }
    }
    next.keys()
        .map(|&start| {
            let mut seen = FxHashSet::default();
            let mut stack = vec![start];
            while let Some(node) = stack.pop() {
                for &b in next.get(&node).into_iter().flatten() {
                    if b != start && seen.insert(b) {
                        stack.push(b);
                    }
                }
            }
            let mut reached: Vec<Id> = seen.into_iter().collect();
            reached.sort_unstable();
            (start, reached)
        })
        .collect()
}

/// For every property, the (property, flipped) pairs that a triple of it implies:
/// superproperties keep the direction, an inverse or a symmetric property flips it.
fn implied_properties(
    sub_property: &[(Id, Id)],
    inverses: &[(Id, Id)],
    symmetric: &[Id],
) -> FxHashMap<Id, Vec<(Id, bool)>> {
    let mut next: FxHashMap<Id, Vec<(Id, bool)>> = FxHashMap::default();
    for &(a, b) in sub_property {
        next.entry(a).or_default().push((b, false));
    }
    for &(a, b) in inverses {
        next.entry(a).or_default().push((b, true));
        next.entry(b).or_default().push((a, true));
    }
    for &p in symmetric {
        next.entry(p).or_default().push((p, true));
    }
    next.keys()
        .map(|&start| {
            let mut seen = FxHashSet::default();
            let mut stack = vec![(start, false)];
            while let Some((node, flipped)) = stack.pop() {
                for &(b, flip) in next.get(&node).into_iter().flatten() {
                    let reached = (b, flipped != flip);
                    if reached != (start, false) && seen.insert(reached) {
                        stack.push(reached);
                    }
                }
            }
            let mut reached: Vec<(Id, bool)> = seen.into_iter().collect();
            reached.sort_unstable();
            (start, reached)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closures_follow_chains_and_flip_through_inverses() {
        let supers = closure(&[(1, 2), (2, 3), (3, 1), (4, 4)]);
        assert_eq!(supers[&1], vec![2, 3]);
        assert!(!supers.contains_key(&4));
        // p ⊑ q, q inverse r, r symmetric.
        let implied = implied_properties(&[(10, 11)], &[(11, 12)], &[12]);
        // x p y ⇒ x q y ⇒ y r x ⇒ x r y ⇒ y q x.
        assert_eq!(
            implied[&10],
            vec![(11, false), (11, true), (12, false), (12, true)]
        );
        assert_eq!(implied[&12], vec![(11, false), (11, true), (12, true)]);
    }
}
