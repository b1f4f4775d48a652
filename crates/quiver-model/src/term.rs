//! The byte encoding of RDF terms used by the dictionary.
//!
//! A term is one tag byte followed by its text:
//!
//! | tag | term | bytes after the tag |
//! |---|---|---|
//! | 1 | blank node | label |
//! | 2 | IRI | IRI |
//! | 3 | simple literal (`xsd:string`) | value |
//! | 4 | language-tagged literal | language, NUL, value |
//! | 5 | typed literal | datatype IRI, NUL, value |
//! | 6 | directional language-tagged literal (RDF 1.2) | language, `--ltr` or `--rtl`, NUL, value |
//! | 7 | triple term (RDF 1.2) | subject's length (u32 LE), subject, predicate's length, predicate, object |
//!
//! Sorting encodings bytewise groups terms as SPARQL orders kinds (blank nodes, then IRIs,
//! then literals, then triple terms), so sorted dictionary ids respect that order.
//! Datatype IRIs and language tags cannot contain NUL, so the first NUL separates them
//! from the value. A triple term nests the encodings of its three terms (the object may
//! be a triple term again), so it is one dictionary entry like any other term, and its
//! parts are read back without the dictionary.

use oxrdf::vocab::xsd;
use oxrdf::{
    BaseDirection, BlankNode, BlankNodeRef, LiteralRef, NamedNode, NamedNodeRef, NamedOrBlankNode,
    Term, TermRef, Triple, TripleRef,
};

pub const TAG_BLANK: u8 = 1;
pub const TAG_IRI: u8 = 2;
pub const TAG_SIMPLE: u8 = 3;
pub const TAG_LANG: u8 = 4;
pub const TAG_TYPED: u8 = 5;
pub const TAG_DIRECTIONAL: u8 = 6;
pub const TAG_TRIPLE: u8 = 7;

/// Appends the encoding of `term` to `out`.
pub fn encode_term(term: TermRef<'_>, out: &mut Vec<u8>) {
    match term {
        TermRef::NamedNode(node) => encode_iri(node.as_str(), out),
        TermRef::BlankNode(node) => {
            out.push(TAG_BLANK);
            out.extend_from_slice(node.as_str().as_bytes());
        }
        TermRef::Literal(literal) => {
            if let (Some(language), Some(direction)) = (literal.language(), literal.direction()) {
                out.push(TAG_DIRECTIONAL);
                out.extend_from_slice(language.as_bytes());
                out.extend_from_slice(direction_suffix(direction).as_bytes());
                out.push(0);
            } else if let Some(language) = literal.language() {
                out.push(TAG_LANG);
                out.extend_from_slice(language.as_bytes());
                out.push(0);
            } else if literal.datatype() != xsd::STRING {
                out.push(TAG_TYPED);
                out.extend_from_slice(literal.datatype().as_str().as_bytes());
                out.push(0);
            } else {
                out.push(TAG_SIMPLE);
            }
            out.extend_from_slice(literal.value().as_bytes());
        }
        TermRef::Triple(triple) => encode_triple(triple.as_ref(), out),
    }
}

/// Appends the encoding of the triple term `triple` to `out`.
pub fn encode_triple(triple: TripleRef<'_>, out: &mut Vec<u8>) {
    out.push(TAG_TRIPLE);
    encode_part(out, |out| encode_term(triple.subject.into(), out));
    encode_part(out, |out| encode_iri(triple.predicate.as_str(), out));
    encode_term(triple.object, out);
}

/// Appends the encoding of a triple term from the encodings of its three terms.
pub fn encode_triple_parts(subject: &[u8], predicate: &[u8], object: &[u8], out: &mut Vec<u8>) {
    out.push(TAG_TRIPLE);
    encode_part(out, |out| out.extend_from_slice(subject));
    encode_part(out, |out| out.extend_from_slice(predicate));
    out.extend_from_slice(object);
}

/// Writes a length-prefixed part: the length is filled in once `write` is done.
fn encode_part(out: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    write(out);
    let length = u32::try_from(out.len() - at - 4).unwrap_or(u32::MAX);
    out[at..at + 4].copy_from_slice(&length.to_le_bytes());
}

fn direction_suffix(direction: BaseDirection) -> &'static str {
    match direction {
        BaseDirection::Ltr => "--ltr",
        BaseDirection::Rtl => "--rtl",
    }
}

/// Appends the encoding of the IRI `iri` to `out`.
pub fn encode_iri(iri: &str, out: &mut Vec<u8>) {
    out.push(TAG_IRI);
    out.extend_from_slice(iri.as_bytes());
}

/// Appends the encoding of a simple literal to `out`.
pub fn encode_simple_literal(value: &str, out: &mut Vec<u8>) {
    out.push(TAG_SIMPLE);
    out.extend_from_slice(value.as_bytes());
}

/// A term decoded from its encoding, borrowing the dictionary's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodedTerm<'a> {
    Blank(&'a str),
    Iri(&'a str),
    Literal {
        value: &'a str,
        language: Option<&'a str>,
        /// `None` for simple and language-tagged literals.
        datatype: Option<&'a str>,
        /// The base direction of a directional language-tagged literal (RDF 1.2).
        direction: Option<BaseDirection>,
    },
    /// A triple term (RDF 1.2): the encodings of its subject, predicate and object.
    Triple {
        subject: &'a [u8],
        predicate: &'a [u8],
        object: &'a [u8],
    },
}

/// Errors decoding a stored term (only possible with corrupt data).
#[derive(Debug, thiserror::Error)]
#[error("invalid term encoding: {0}")]
pub struct TermDecodeError(&'static str);

/// How deeply triple terms may nest (a triple term whose object is a triple term, …): far
/// beyond any real data, and what keeps decoding a hostile term within the stack.
pub const MAX_TRIPLE_NESTING: usize = 64;

/// How many triple terms nest at `term` (the object of one is the next), counted without
/// recursion: what writers check against [`MAX_TRIPLE_NESTING`] before anything recurses
/// into a term.
pub fn triple_nesting(mut term: TermRef<'_>) -> usize {
    let mut depth = 0;
    while let TermRef::Triple(triple) = term {
        depth += 1;
        term = triple.object.as_ref();
    }
    depth
}

/// Drops `term` without recursing into it: a triple term nested a million deep (what a
/// parser builds from hostile text, with no recursion of its own) is taken apart one
/// level at a time, where the default drop would recurse once per level and overflow
/// the stack.
pub fn drop_flat(term: Term) {
    let mut next = term;
    while let Term::Triple(mut triple) = next {
        let placeholder = Term::from(NamedNode::new_unchecked(""));
        next = std::mem::replace(&mut triple.object, placeholder);
    }
}

/// Decodes an encoding produced by [`encode_term`].
pub fn decode_term(bytes: &[u8]) -> Result<DecodedTerm<'_>, TermDecodeError> {
    decode_nested(bytes, 0)
}

fn decode_nested(bytes: &[u8], depth: usize) -> Result<DecodedTerm<'_>, TermDecodeError> {
    let (&tag, rest) = bytes.split_first().ok_or(TermDecodeError("empty"))?;
    let text = |b| std::str::from_utf8(b).map_err(|_| TermDecodeError("not UTF-8"));
    let split = |b: &'static str| {
        let nul = rest
            .iter()
            .position(|&c| c == 0)
            .ok_or(TermDecodeError(b))?;
        Ok::<_, TermDecodeError>((text(&rest[..nul])?, text(&rest[nul + 1..])?))
    };
    Ok(match tag {
        TAG_BLANK => DecodedTerm::Blank(text(rest)?),
        TAG_IRI => DecodedTerm::Iri(text(rest)?),
        TAG_SIMPLE => DecodedTerm::Literal {
            value: text(rest)?,
            language: None,
            datatype: None,
            direction: None,
        },
        TAG_LANG => {
            let (language, value) = split("language tag without value")?;
            DecodedTerm::Literal {
                value,
                language: Some(language),
                datatype: None,
                direction: None,
            }
        }
        TAG_DIRECTIONAL => {
            let (tag, value) = split("language tag without value")?;
            let (language, direction) = match tag.rsplit_once("--") {
                Some((language, "ltr")) => (language, BaseDirection::Ltr),
                Some((language, "rtl")) => (language, BaseDirection::Rtl),
                _ => return Err(TermDecodeError("base direction neither ltr nor rtl")),
            };
            DecodedTerm::Literal {
                value,
                language: Some(language),
                datatype: None,
                direction: Some(direction),
            }
        }
        TAG_TYPED => {
            let (datatype, value) = split("datatype without value")?;
            DecodedTerm::Literal {
                value,
                language: None,
                datatype: Some(datatype),
                direction: None,
            }
        }
        TAG_TRIPLE => {
            let (subject, rest) = take_part(rest)?;
            let (predicate, object) = take_part(rest)?;
            // The parts must decode too (checked once, when the term is stored or
            // read from a file), and be of the kinds their places allow.
            if depth >= MAX_TRIPLE_NESTING {
                return Err(TermDecodeError("triple terms nested too deeply"));
            }
            if !matches!(
                decode_term(subject)?,
                DecodedTerm::Iri(_) | DecodedTerm::Blank(_)
            ) {
                return Err(TermDecodeError(
                    "triple term subject neither IRI nor blank node",
                ));
            }
            if !matches!(decode_term(predicate)?, DecodedTerm::Iri(_)) {
                return Err(TermDecodeError("triple term predicate not an IRI"));
            }
            decode_nested(object, depth + 1)?;
            DecodedTerm::Triple {
                subject,
                predicate,
                object,
            }
        }
        _ => return Err(TermDecodeError("unknown tag")),
    })
}

/// Splits a length-prefixed part off `bytes`.
fn take_part(bytes: &[u8]) -> Result<(&[u8], &[u8]), TermDecodeError> {
    let (length, rest) = bytes
        .split_first_chunk::<4>()
        .ok_or(TermDecodeError("truncated triple term"))?;
    let length = u32::from_le_bytes(*length) as usize;
    if rest.len() < length {
        return Err(TermDecodeError("truncated triple term"));
    }
    Ok(rest.split_at(length))
}

impl<'a> DecodedTerm<'a> {
    /// The term borrowed from the decoded bytes, no allocation; `None` for a triple term,
    /// which [`DecodedTerm::to_term`] builds.
    pub fn as_term_ref(&self) -> Option<TermRef<'a>> {
        Some(match *self {
            DecodedTerm::Blank(label) => BlankNodeRef::new_unchecked(label).into(),
            DecodedTerm::Iri(iri) => NamedNodeRef::new_unchecked(iri).into(),
            DecodedTerm::Literal {
                value,
                language: Some(language),
                direction: Some(direction),
                ..
            } => LiteralRef::new_directional_language_tagged_literal_unchecked(
                value, language, direction,
            )
            .into(),
            DecodedTerm::Literal {
                value,
                language: Some(language),
                ..
            } => LiteralRef::new_language_tagged_literal_unchecked(value, language).into(),
            DecodedTerm::Literal {
                value,
                datatype: Some(datatype),
                ..
            } => LiteralRef::new_typed_literal(value, NamedNodeRef::new_unchecked(datatype)).into(),
            DecodedTerm::Literal { value, .. } => LiteralRef::new_simple_literal(value).into(),
            DecodedTerm::Triple { .. } => return None,
        })
    }

    /// The owned `oxrdf` term.
    pub fn to_term(&self) -> Term {
        match *self {
            DecodedTerm::Triple {
                subject,
                predicate,
                object,
            } => {
                // The parts decoded when this term did (`decode_term` checks them).
                let part = |bytes| decode_term(bytes).map(|t| t.to_term());
                match (part(subject), part(predicate), part(object)) {
                    (Ok(Term::NamedNode(s)), Ok(Term::NamedNode(p)), Ok(o)) => {
                        Triple::new(s, p, o).into()
                    }
                    (Ok(Term::BlankNode(s)), Ok(Term::NamedNode(p)), Ok(o)) => {
                        Triple::new(s, p, o).into()
                    }
                    _ => unreachable!("the parts of a decoded triple term decode"),
                }
            }
            _ => match self.as_term_ref() {
                Some(term) => term.into_owned(),
                None => unreachable!("only triple terms have no borrowed form"),
            },
        }
    }

    /// The owned term as a subject, when it can be one.
    pub fn to_subject(&self) -> Option<NamedOrBlankNode> {
        match *self {
            DecodedTerm::Blank(label) => Some(BlankNode::new_unchecked(label).into()),
            DecodedTerm::Iri(iri) => Some(NamedNode::new_unchecked(iri).into()),
            DecodedTerm::Literal { .. } | DecodedTerm::Triple { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxrdf::Literal;

    #[test]
    fn round_trips_every_kind() {
        let terms: Vec<Term> = vec![
            NamedNode::new_unchecked("http://example.org/é").into(),
            BlankNode::new_unchecked("b0").into(),
            Literal::new_simple_literal("plain \u{0} with nul").into(),
            Literal::new_language_tagged_literal_unchecked("chat", "fr").into(),
            Literal::new_typed_literal("42", xsd::INTEGER).into(),
            Literal::new_typed_literal("x", xsd::STRING).into(),
            Literal::new_directional_language_tagged_literal_unchecked(
                "שלום",
                "he",
                BaseDirection::Rtl,
            )
            .into(),
            Triple::new(
                BlankNode::new_unchecked("b1"),
                NamedNode::new_unchecked("http://p"),
                Triple::new(
                    NamedNode::new_unchecked("http://s"),
                    NamedNode::new_unchecked("http://q"),
                    Literal::new_language_tagged_literal_unchecked("x", "en"),
                ),
            )
            .into(),
        ];
        for term in terms {
            let mut bytes = Vec::new();
            encode_term(term.as_ref(), &mut bytes);
            assert_eq!(decode_term(&bytes).unwrap().to_term(), term);
        }
    }

    #[test]
    fn kinds_sort_blank_iri_literal() {
        let encode = |t: Term| {
            let mut b = Vec::new();
            encode_term(t.as_ref(), &mut b);
            b
        };
        let blank = encode(BlankNode::new_unchecked("zzz").into());
        let iri = encode(NamedNode::new_unchecked("http://a").into());
        let literal = encode(Literal::new_simple_literal("a").into());
        assert!(blank < iri && iri < literal);
        let triple = encode(
            Triple::new(
                NamedNode::new_unchecked("http://a"),
                NamedNode::new_unchecked("http://a"),
                NamedNode::new_unchecked("http://a"),
            )
            .into(),
        );
        assert!(literal < triple);
        assert!(decode_term(&triple[..10]).is_err());
        assert!(decode_term(&[9, 1]).is_err());
        assert!(decode_term(&[TAG_LANG, b'e', b'n']).is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let iri = |s: &str| NamedNode::new_unchecked(s);
        let mut term: Term = iri("http://o").into();
        for _ in 0..=MAX_TRIPLE_NESTING {
            term = Triple::new(iri("http://s"), iri("http://p"), term).into();
        }
        let mut bytes = Vec::new();
        encode_term(term.as_ref(), &mut bytes);
        assert!(decode_term(&bytes).is_err());
        let Term::Triple(inner) = term else {
            unreachable!()
        };
        bytes.clear();
        encode_term(inner.object.as_ref(), &mut bytes);
        assert_eq!(decode_term(&bytes).unwrap().to_term(), inner.object);
    }
}
