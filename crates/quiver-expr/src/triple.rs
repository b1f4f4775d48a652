//! Functions on RDF 1.2 triple terms (SPARQL 1.2, "Functions on Triple Terms"): the constructor `TRIPLE`, the
//! accessors `SUBJECT`, `PREDICATE`, `OBJECT` and the test `isTRIPLE`.
//!
//! RDF 1.2 restricts triple terms as it restricts asserted triples: the subject is an IRI or a
//! blank node (not a literal, not another triple term) and the predicate an IRI; only the object
//! can be any term, a triple term included. `TRIPLE` raises an error when its arguments break
//! these rules, and the accessors raise an error on anything but a triple term. (`=` and ORDER BY
//! on triple terms are in `compare` and `order`.)

use crate::value;
use oxrdf::{NamedOrBlankNode, Term, Triple};

/// TRIPLE(s, p, o): the triple term `<<( s p o )>>`.
pub(crate) fn triple(subject: &Term, predicate: &Term, object: &Term) -> Option<Term> {
    let subject = match subject {
        Term::NamedNode(n) => NamedOrBlankNode::from(n.clone()),
        Term::BlankNode(b) => NamedOrBlankNode::from(b.clone()),
        Term::Literal(_) | Term::Triple(_) => return None,
    };
    let Term::NamedNode(predicate) = predicate else {
        return None;
    };
    Some(Triple::new(subject, predicate.clone(), object.clone()).into())
}

/// The triple of a triple term.
fn as_triple(term: &Term) -> Option<&Triple> {
    match term {
        Term::Triple(t) => Some(t),
        _ => None,
    }
}

/// SUBJECT(t).
pub(crate) fn subject(term: &Term) -> Option<Term> {
    Some(as_triple(term)?.subject.clone().into())
}

/// PREDICATE(t).
pub(crate) fn predicate(term: &Term) -> Option<Term> {
    Some(as_triple(term)?.predicate.clone().into())
}

/// OBJECT(t).
pub(crate) fn object(term: &Term) -> Option<Term> {
    Some(as_triple(term)?.object.clone())
}

/// isTRIPLE(t).
pub(crate) fn is_triple(term: &Term) -> Term {
    value::boolean(matches!(term, Term::Triple(_)))
}
