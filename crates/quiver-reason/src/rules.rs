//! The instance rules: what one new fact derives, given every fact known.
//!
//! Semi-naive evaluation calls [`fire`] once per fact of the last round's delta; each
//! rule has that fact as one body atom and looks the others up in all facts (the delta
//! included), so every derivation is found in the round after its last premise appears.
//! The rules (OWL 2 RL names; the RDFS profile uses the first five):
//! - `cax-sco` (rdfs9): `x a C`, `C ⊑ D` ⇒ `x a D` (over the closed superclasses);
//! - `prp-spo1`, `prp-eqp`, `prp-inv`, `prp-symp` (rdfs7 for the first): a triple of `p`
//!   ⇒ the triples of every property it implies, in either direction;
//! - `prp-dom`, `prp-rng` (rdfs2, rdfs3): `x p y` ⇒ `x a D`, `y a R`;
//! - `prp-trp`: `x p y`, `y p z` ⇒ `x p z` for a transitive `p`, from either side;
//! - `cls-int1`: `x a Cᵢ` for every member of an intersection ⇒ `x a C`;
//! - `cls-svf1`, `cls-svf2`: `x p y`, `y a D` ⇒ `x a ∃p.D`, from either side;
//! - `cls-hv1`, `cls-hv2`: `x a ∃p.{v}` ⇒ `x p v`, and back;
//! - `cls-avf`: `x a ∀p.D`, `x p y` ⇒ `y a D`, from either side;
//! - `prp-fp`, `prp-ifp`: `x p y₁`, `x p y₂` ⇒ `y₁ owl:sameAs y₂` for a functional `p`,
//!   and `x₁ p y`, `x₂ p y` ⇒ `x₁ owl:sameAs x₂` for an inverse-functional one (literals
//!   are not made equal). The equality rules themselves are `equality.rs`'s.
//!
//! (`cls-int2` and `cls-uni` are inclusions the schema closes.) A derived triple whose
//! subject would be a literal is dropped, as RDF has none.

use quiver_model::Id;

use crate::facts::Facts;
use crate::schema::Schema;
use crate::vocabulary::Terms;

/// Where derived facts go: candidates, deduplicated and checked against the known facts
/// by the caller.
pub(crate) struct Out<'a, T: Terms> {
    pub facts: Vec<[Id; 3]>,
    pub terms: &'a T,
}

impl<T: Terms> Out<'_, T> {
    fn push(&mut self, fact: [Id; 3]) {
        if !self.terms.is_literal(fact[0]) {
            self.facts.push(fact);
        }
    }
}

/// Pushes into `out` what `fact` derives with the facts of `known`.
pub(crate) fn fire<T: Terms>(
    fact: [Id; 3],
    schema: &Schema,
    known: &dyn Facts,
    out: &mut Out<'_, T>,
) {
    let [s, p, o] = fact;
    match schema.rdf_type {
        Some(rdf_type) if p == rdf_type => fire_type(s, o, rdf_type, schema, known, out),
        _ => fire_property(s, p, o, schema, known, out),
    }
}

/// `x a class`.
fn fire_type<T: Terms>(
    x: Id,
    class: Id,
    rdf_type: Id,
    schema: &Schema,
    known: &dyn Facts,
    out: &mut Out<'_, T>,
) {
    for &d in schema.supers.get(&class).into_iter().flatten() {
        out.push([x, rdf_type, d]);
    }
    for &(p, v) in schema.value_by_class.get(&class).into_iter().flatten() {
        out.push([x, p, v]);
    }
    for &(p, filler) in schema.all_by_class.get(&class).into_iter().flatten() {
        known.for_objects(x, p, &mut |y| out.push([y, rdf_type, filler]));
    }
    for &(p, restriction) in schema.some_by_filler.get(&class).into_iter().flatten() {
        known.for_subjects(p, x, &mut |w| out.push([w, rdf_type, restriction]));
    }
    for &i in schema
        .intersections_by_member
        .get(&class)
        .into_iter()
        .flatten()
    {
        let intersection = &schema.intersections[i];
        if intersection
            .members
            .iter()
            .all(|&m| m == class || known.contains(&[x, rdf_type, m]))
        {
            out.push([x, rdf_type, intersection.class]);
        }
    }
}

/// `x p y` for a property other than `rdf:type`.
fn fire_property<T: Terms>(
    x: Id,
    p: Id,
    y: Id,
    schema: &Schema,
    known: &dyn Facts,
    out: &mut Out<'_, T>,
) {
    for &(q, flipped) in schema.implied.get(&p).into_iter().flatten() {
        out.push(if flipped { [y, q, x] } else { [x, q, y] });
    }
    if let Some(rdf_type) = schema.rdf_type {
        for &d in schema.domains.get(&p).into_iter().flatten() {
            out.push([x, rdf_type, d]);
        }
        for &r in schema.ranges.get(&p).into_iter().flatten() {
            out.push([y, rdf_type, r]);
        }
        for &(filler, restriction) in schema.some_by_property.get(&p).into_iter().flatten() {
            if filler.is_none_or(|d| known.contains(&[y, rdf_type, d])) {
                out.push([x, rdf_type, restriction]);
            }
        }
        for &(v, restriction) in schema.value_by_property.get(&p).into_iter().flatten() {
            if v == y {
                out.push([x, rdf_type, restriction]);
            }
        }
        for &(restriction, filler) in schema.all_by_property.get(&p).into_iter().flatten() {
            if known.contains(&[x, rdf_type, restriction]) {
                out.push([y, rdf_type, filler]);
            }
        }
    }
    if schema.transitive.contains(&p) {
        known.for_objects(y, p, &mut |z| out.push([x, p, z]));
        known.for_subjects(p, x, &mut |w| out.push([w, p, y]));
    }
    if let Some(same_as) = schema.same_as {
        let is_literal = |id: Id| out.terms.is_literal(id);
        if schema.functional.contains(&p) && !is_literal(y) {
            let mut equal = Vec::new();
            known.for_objects(x, p, &mut |z| {
                if z != y && !is_literal(z) {
                    equal.push(z);
                }
            });
            for z in equal {
                out.push([y, same_as, z]);
            }
        }
        if schema.inverse_functional.contains(&p) {
            let mut equal = Vec::new();
            known.for_subjects(p, y, &mut |w| {
                if w != x {
                    equal.push(w);
                }
            });
            for w in equal {
                out.push([x, same_as, w]);
            }
        }
    }
}
