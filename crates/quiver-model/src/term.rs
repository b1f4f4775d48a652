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
//!
//! Sorting encodings bytewise groups terms as SPARQL orders kinds (blank nodes, then IRIs,
//! then literals), so sorted dictionary ids respect that order. Datatype IRIs and language
//! tags cannot contain NUL, so the first NUL separates them from the value.

use oxrdf::vocab::xsd;
use oxrdf::{
    BlankNode, BlankNodeRef, Literal, LiteralRef, NamedNode, NamedNodeRef, NamedOrBlankNode, Term,
    TermRef,
};

pub const TAG_BLANK: u8 = 1;
pub const TAG_IRI: u8 = 2;
pub const TAG_SIMPLE: u8 = 3;
pub const TAG_LANG: u8 = 4;
pub const TAG_TYPED: u8 = 5;

/// Appends the encoding of `term` to `out`.
pub fn encode_term(term: TermRef<'_>, out: &mut Vec<u8>) {
    match term {
        TermRef::NamedNode(node) => encode_iri(node.as_str(), out),
        TermRef::BlankNode(node) => {
            out.push(TAG_BLANK);
            out.extend_from_slice(node.as_str().as_bytes());
        }
        TermRef::Literal(literal) => {
            if let Some(language) = literal.language() {
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
        #[allow(unreachable_patterns)]
        other => {
            // Quoted triples (RDF-star) are not stored; encode their text as an IRI-like
            // value so nothing is silently dropped.
            encode_iri(&other.to_string(), out)
        }
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
    },
}

/// Errors decoding a stored term (only possible with corrupt data).
#[derive(Debug, thiserror::Error)]
#[error("invalid term encoding: {0}")]
pub struct TermDecodeError(&'static str);

/// Decodes an encoding produced by [`encode_term`].
pub fn decode_term(bytes: &[u8]) -> Result<DecodedTerm<'_>, TermDecodeError> {
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
        },
        TAG_LANG => {
            let (language, value) = split("language tag without value")?;
            DecodedTerm::Literal {
                value,
                language: Some(language),
                datatype: None,
            }
        }
        TAG_TYPED => {
            let (datatype, value) = split("datatype without value")?;
            DecodedTerm::Literal {
                value,
                language: None,
                datatype: Some(datatype),
            }
        }
        _ => return Err(TermDecodeError("unknown tag")),
    })
}

impl<'a> DecodedTerm<'a> {
    /// The term borrowed from the decoded bytes: no allocation.
    pub fn as_term_ref(&self) -> TermRef<'a> {
        match *self {
            DecodedTerm::Blank(label) => BlankNodeRef::new_unchecked(label).into(),
            DecodedTerm::Iri(iri) => NamedNodeRef::new_unchecked(iri).into(),
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
        }
    }

    /// The owned `oxrdf` term.
    pub fn to_term(&self) -> Term {
        match *self {
            DecodedTerm::Blank(label) => BlankNode::new_unchecked(label).into(),
            DecodedTerm::Iri(iri) => NamedNode::new_unchecked(iri).into(),
            DecodedTerm::Literal {
                value,
                language: Some(language),
                ..
            } => Literal::new_language_tagged_literal_unchecked(value, language).into(),
            DecodedTerm::Literal {
                value,
                datatype: Some(datatype),
                ..
            } => Literal::new_typed_literal(value, NamedNode::new_unchecked(datatype)).into(),
            DecodedTerm::Literal { value, .. } => Literal::new_simple_literal(value).into(),
        }
    }

    /// The owned term as a subject, when it can be one.
    pub fn to_subject(&self) -> Option<NamedOrBlankNode> {
        match *self {
            DecodedTerm::Blank(label) => Some(BlankNode::new_unchecked(label).into()),
            DecodedTerm::Iri(iri) => Some(NamedNode::new_unchecked(iri).into()),
            DecodedTerm::Literal { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_kind() {
        let terms: Vec<Term> = vec![
            NamedNode::new_unchecked("http://example.org/é").into(),
            BlankNode::new_unchecked("b0").into(),
            Literal::new_simple_literal("plain \u{0} with nul").into(),
            Literal::new_language_tagged_literal_unchecked("chat", "fr").into(),
            Literal::new_typed_literal("42", xsd::INTEGER).into(),
            Literal::new_typed_literal("x", xsd::STRING).into(),
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
        assert!(decode_term(&[9, 1]).is_err());
        assert!(decode_term(&[TAG_LANG, b'e', b'n']).is_err());
    }
}
