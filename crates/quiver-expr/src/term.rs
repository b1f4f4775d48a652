//! Functions on RDF terms (§17.4.2): tests (`isIRI`…, and SPARQL 1.2's `hasLANG`,
//! `hasLANGDIR`), accessors (`STR`, `LANG`, `LANGDIR`, `DATATYPE`) and constructors (`IRI`,
//! `BNODE`, `STRDT`, `STRLANG`, `STRLANGDIR`, `UUID`, `STRUUID`).
//!
//! The SPARQL 1.2 functions follow the test suite's `lang-basedir` cases: `LANG` and `LANGDIR`
//! return `""` for literals without a tag or a direction and raise an error on other terms, while
//! `hasLANG` and `hasLANGDIR` are false for every term without one, IRIs included. The triple-term
//! functions are in `triple`.

use crate::context::EvalContext;
use crate::string::simple_literal;
use crate::value::{self, Value};
use oxiri::Iri;
use oxrdf::vocab::rdf;
use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, Term};
use std::fmt::Write;

/// isIRI / isURI.
pub(crate) fn is_iri(a: &Term) -> Term {
    value::boolean(matches!(a, Term::NamedNode(_)))
}

/// isBLANK.
pub(crate) fn is_blank(a: &Term) -> Term {
    value::boolean(matches!(a, Term::BlankNode(_)))
}

/// isLITERAL.
pub(crate) fn is_literal(a: &Term) -> Term {
    value::boolean(matches!(a, Term::Literal(_)))
}

/// STR: the lexical form of a literal or the string of an IRI; an error on blank nodes.
pub(crate) fn str(a: &Term) -> Option<Term> {
    match a {
        Term::NamedNode(n) => Some(value::string(n.as_str())),
        Term::Literal(l) => Some(value::string(l.value())),
        _ => None,
    }
}

/// LANG: the language tag of a literal, `""` when it has none.
pub(crate) fn lang(a: &Term) -> Option<Term> {
    match a {
        Term::Literal(l) => Some(value::string(l.language().unwrap_or(""))),
        _ => None,
    }
}

/// LANGDIR: the base direction of a literal (`"ltr"` or `"rtl"`), `""` when it has none.
pub(crate) fn langdir(a: &Term) -> Option<Term> {
    match a {
        Term::Literal(l) => Some(value::string(match l.direction() {
            Some(BaseDirection::Ltr) => "ltr",
            Some(BaseDirection::Rtl) => "rtl",
            None => "",
        })),
        _ => None,
    }
}

/// hasLANG: whether the term is a literal with a language tag (with or without a direction).
pub(crate) fn has_lang(a: &Term) -> Term {
    value::boolean(matches!(a, Term::Literal(l) if l.language().is_some()))
}

/// hasLANGDIR: whether the term is a literal with a base direction.
pub(crate) fn has_langdir(a: &Term) -> Term {
    value::boolean(matches!(a, Term::Literal(l) if l.direction().is_some()))
}

/// DATATYPE: the datatype IRI of a literal (`rdf:langString` for language-tagged strings,
/// `rdf:dirLangString` for those with a base direction).
pub(crate) fn datatype(a: &Term) -> Option<Term> {
    match a {
        Term::Literal(l) => Some(l.datatype().into_owned().into()),
        _ => None,
    }
}

/// IRI / URI: an IRI is returned as is; a simple literal is resolved against the base IRI (or
/// must be an absolute IRI when there is none).
pub(crate) fn iri(context: &EvalContext, a: &Term) -> Option<Term> {
    let value = match Value::of(a) {
        Value::NamedNode(n) => return Some(n.clone().into()),
        Value::String(s) => s,
        _ => return None,
    };
    let iri = match &context.base_iri {
        Some(base) => base.resolve(value).ok()?.into_inner(),
        None => Iri::parse(value.to_owned()).ok()?.into_inner(),
    };
    Some(NamedNode::new_unchecked(iri).into())
}

/// BNODE(): a fresh blank node; BNODE(str): the same blank node for the same simple literal
/// within `scope` (one solution), another one in every other scope.
pub(crate) fn bnode(context: &EvalContext, scope: u64, name: Option<&Term>) -> Option<Term> {
    let id = match name {
        Some(name) => context.bnode_label(scope, simple_literal(name)?),
        None => (u128::from(context.next_random()) << 64) | u128::from(context.next_random()),
    };
    Some(BlankNode::new_from_unique_id(id).into())
}

/// STRDT: a literal of the given datatype from a simple literal lexical form.
pub(crate) fn strdt(lexical: &Term, datatype: &Term) -> Option<Term> {
    let lexical = simple_literal(lexical)?;
    match datatype {
        // A language-tagged string cannot be built without a tag.
        Term::NamedNode(datatype)
            if datatype.as_ref() != rdf::LANG_STRING
                && datatype.as_ref() != rdf::DIR_LANG_STRING =>
        {
            Some(Literal::new_typed_literal(lexical, datatype.clone()).into())
        }
        _ => None,
    }
}

/// STRLANG: a language-tagged string from a simple literal and a valid (non-empty) tag.
pub(crate) fn strlang(lexical: &Term, language: &Term) -> Option<Term> {
    let lexical = simple_literal(lexical)?;
    let language = simple_literal(language)?;
    Some(
        Literal::new_language_tagged_literal(lexical, language)
            .ok()?
            .into(),
    )
}

/// STRLANGDIR: a directional language-tagged string from a simple literal, a valid (non-empty)
/// tag and a direction, `"ltr"` or `"rtl"` (lowercase only).
pub(crate) fn strlangdir(lexical: &Term, language: &Term, direction: &Term) -> Option<Term> {
    let lexical = simple_literal(lexical)?;
    let language = simple_literal(language)?;
    let direction = match simple_literal(direction)? {
        "ltr" => BaseDirection::Ltr,
        "rtl" => BaseDirection::Rtl,
        _ => return None,
    };
    Some(
        Literal::new_directional_language_tagged_literal(lexical, language, direction)
            .ok()?
            .into(),
    )
}

/// A random (version 4) UUID in its textual form.
fn uuid(context: &EvalContext) -> String {
    let mut bytes = [0_u8; 16];
    bytes[..8].copy_from_slice(&context.next_random().to_be_bytes());
    bytes[8..].copy_from_slice(&context.next_random().to_be_bytes());
    bytes[6] = (bytes[6] & 0x0F) | 0x40; // version 4
    bytes[8] = (bytes[8] & 0x3F) | 0x80; // RFC 4122 variant
    let mut result = String::with_capacity(36);
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            result.push('-');
        }
        let _ = write!(result, "{byte:02x}"); // writing to a String cannot fail
    }
    result
}

/// UUID(): a fresh `urn:uuid:` IRI.
pub(crate) fn uuid_iri(context: &EvalContext) -> Term {
    NamedNode::new_unchecked(format!("urn:uuid:{}", uuid(context))).into()
}

/// STRUUID(): a fresh UUID as a simple literal.
pub(crate) fn struuid(context: &EvalContext) -> Term {
    value::string(uuid(context))
}
