//! Functions on strings (§17.4.3).
//!
//! Most take "string literals": simple literals, `xsd:string` literals (the same thing in RDF
//! 1.1) and language-tagged strings, with or without a base direction (RDF 1.2's
//! `rdf:dirLangString`), and keep the language tag and direction of their first argument in their
//! result. Two-argument functions (`CONTAINS`, `STRSTARTS`, `STRENDS`, `STRBEFORE`, `STRAFTER`)
//! require compatible arguments (§17.4.3.1.1): two simple literals, two language-tagged strings
//! with the same tag and the same direction (or both none), or a language-tagged string and a
//! simple literal. `CONCAT` keeps a tag and direction only when all its arguments share them.
//! Positions and lengths count Unicode code points, and `SUBSTR` is 1-based with XPath's rounding
//! rules.

use crate::value::{self, Value};
use oxrdf::{BaseDirection, Literal, Term};
use oxsdatatypes::Integer;

/// The language of a language-tagged string: its tag and, for an `rdf:dirLangString`, its base
/// direction.
#[derive(Clone, Copy)]
pub(crate) struct Language<'a> {
    pub(crate) tag: &'a str,
    pub(crate) direction: Option<BaseDirection>,
}

impl Language<'_> {
    /// The same tag (case-insensitively) and the same direction, or both without one.
    fn same_as(self, other: Language<'_>) -> bool {
        self.tag.eq_ignore_ascii_case(other.tag) && self.direction == other.direction
    }
}

/// A string literal: its value and language.
pub(crate) fn string_literal(term: &Term) -> Option<(&str, Option<Language<'_>>)> {
    match Value::of(term) {
        Value::String(s) => Some((s, None)),
        Value::LangString(s, tag, direction) => Some((s, Some(Language { tag, direction }))),
        _ => None,
    }
}

/// A simple literal (or `xsd:string`): its value.
pub(crate) fn simple_literal(term: &Term) -> Option<&str> {
    match Value::of(term) {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// A string literal with the given language (or a simple literal without).
pub(crate) fn with_language(value: impl Into<String>, language: Option<Language<'_>>) -> Term {
    match language {
        Some(Language {
            tag,
            direction: Some(direction),
        }) => {
            Literal::new_directional_language_tagged_literal_unchecked(value, tag, direction).into()
        }
        Some(Language {
            tag,
            direction: None,
        }) => Literal::new_language_tagged_literal_unchecked(value, tag).into(),
        None => value::string(value),
    }
}

/// Argument compatibility (§17.4.3.1.1); returns the two values and the first one's language.
fn compatible<'a>(a: &'a Term, b: &'a Term) -> Option<(&'a str, Option<Language<'a>>, &'a str)> {
    let (a, la) = string_literal(a)?;
    let (b, lb) = string_literal(b)?;
    match (la, lb) {
        (_, None) => Some((a, la, b)),
        (Some(la), Some(lb)) if la.same_as(lb) => Some((a, Some(la), b)),
        _ => None,
    }
}

/// STRLEN: the number of code points.
pub(crate) fn strlen(a: &Term) -> Option<Term> {
    let (s, _) = string_literal(a)?;
    Some(value::literal(Integer::from(
        i64::try_from(s.chars().count()).ok()?,
    )))
}

/// SUBSTR: the code points at 1-based positions `p` with
/// `round(start) <= p < round(start) + round(length)`.
pub(crate) fn substr(source: &Term, start: &Term, length: Option<&Term>) -> Option<Term> {
    let (s, language) = string_literal(source)?;
    let rounded =
        |t: &Term| -> Option<f64> { Some(Value::of(t).numeric()?.to_double().round().into()) };
    let start = rounded(start)?;
    let end = match length {
        Some(length) => start + rounded(length)?,
        None => f64::INFINITY,
    };
    let result: String = if start.is_nan() || end.is_nan() {
        String::new()
    } else {
        s.chars()
            .enumerate()
            .filter(|&(i, _)| {
                let position = (i + 1) as f64;
                position >= start && position < end
            })
            .map(|(_, c)| c)
            .collect()
    };
    Some(with_language(result, language))
}

/// UCASE.
pub(crate) fn ucase(a: &Term) -> Option<Term> {
    let (s, language) = string_literal(a)?;
    Some(with_language(s.to_uppercase(), language))
}

/// LCASE.
pub(crate) fn lcase(a: &Term) -> Option<Term> {
    let (s, language) = string_literal(a)?;
    Some(with_language(s.to_lowercase(), language))
}

/// ENCODE_FOR_URI: percent-encodes every UTF-8 byte but the unreserved characters.
pub(crate) fn encode_for_uri(a: &Term) -> Option<Term> {
    let (s, _) = string_literal(a)?;
    let mut result = String::with_capacity(s.len());
    for byte in s.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            result.push(char::from(byte));
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            result.push('%');
            result.push(char::from(HEX[usize::from(byte >> 4)]));
            result.push(char::from(HEX[usize::from(byte & 15)]));
        }
    }
    Some(value::string(result))
}

/// CONTAINS.
pub(crate) fn contains(a: &Term, b: &Term) -> Option<Term> {
    let (a, _, b) = compatible(a, b)?;
    Some(value::boolean(a.contains(b)))
}

/// STRSTARTS.
pub(crate) fn strstarts(a: &Term, b: &Term) -> Option<Term> {
    let (a, _, b) = compatible(a, b)?;
    Some(value::boolean(a.starts_with(b)))
}

/// STRENDS.
pub(crate) fn strends(a: &Term, b: &Term) -> Option<Term> {
    let (a, _, b) = compatible(a, b)?;
    Some(value::boolean(a.ends_with(b)))
}

/// STRBEFORE: the part before the first match, with the first argument's language tag; an
/// empty simple literal when there is no match.
pub(crate) fn strbefore(a: &Term, b: &Term) -> Option<Term> {
    let (a, language, b) = compatible(a, b)?;
    Some(match a.find(b) {
        Some(i) => with_language(&a[..i], language),
        None => value::string(""),
    })
}

/// STRAFTER: the part after the first match, with the first argument's language tag; an empty
/// simple literal when there is no match.
pub(crate) fn strafter(a: &Term, b: &Term) -> Option<Term> {
    let (a, language, b) = compatible(a, b)?;
    Some(match a.find(b) {
        Some(i) => with_language(&a[i + b.len()..], language),
        None => value::string(""),
    })
}

/// CONCAT: keeps a language tag and base direction shared by all arguments; `CONCAT()` is `""`.
pub(crate) fn concat(args: &[Term]) -> Option<Term> {
    let mut result = String::new();
    // None: no argument seen yet; Some(language): the language common to all arguments so far.
    let mut common: Option<Option<Language<'_>>> = None;
    for arg in args {
        let (s, language) = string_literal(arg)?;
        result.push_str(s);
        common = Some(match (common, language) {
            (None, language) => language,
            (Some(Some(previous)), Some(language)) if language.same_as(previous) => Some(previous),
            (Some(_), _) => None,
        });
    }
    Some(with_language(result, common.flatten()))
}

/// LANGMATCHES: RFC 4647 basic filtering of a language tag by a range (`*` matches any
/// non-empty tag).
pub(crate) fn langmatches(tag: &Term, range: &Term) -> Option<Term> {
    let tag = simple_literal(tag)?;
    let range = simple_literal(range)?;
    let matches = if range == "*" {
        !tag.is_empty()
    } else {
        let (tag, range) = (tag.as_bytes(), range.as_bytes());
        tag.len() >= range.len()
            && tag[..range.len()].eq_ignore_ascii_case(range)
            && (tag.len() == range.len() || tag[range.len()] == b'-')
    };
    Some(value::boolean(matches))
}
