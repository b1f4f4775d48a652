//! One term in each tabular results syntax, written from its parts as bytes: the parts of
//! a dictionary encoding or of a computed term ([`Raw`]), then TSV (Turtle's short forms
//! for numbers and booleans), CSV (quoted where the text needs it), SPARQL JSON and XML,
//! each escaped as its writer in `sparesults` escapes it. The row writer's columns
//! (`row_writer.rs`) call [`write_term`] for each term they do not find in their caches.

use oxrdf::vocab::xsd;
use oxrdf::TermRef;
use quiver_model::term::{
    decode_term, DecodedTerm, TAG_BLANK, TAG_DIRECTIONAL, TAG_IRI, TAG_LANG, TAG_SIMPLE,
    TAG_TRIPLE, TAG_TYPED,
};

/// A tabular results syntax the writers of this module produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Xml,
    Tsv,
    Csv,
}

/// A term's parts as the bytes of its UTF-8 text: written as they are, never checked or
/// decoded into `&str` (the dictionary's terms were encoded from strings).
#[derive(Debug, Clone, Copy)]
pub(super) enum Raw<'a> {
    Blank(&'a [u8]),
    Iri(&'a [u8]),
    Literal {
        value: &'a [u8],
        language: Option<&'a [u8]>,
        /// `None` for `xsd:string` and language-tagged literals.
        datatype: Option<&'a [u8]>,
        /// `ltr` or `rtl` for a directional language-tagged literal (RDF 1.2).
        direction: Option<&'a [u8]>,
    },
    /// A triple term (RDF 1.2): the dictionary encodings of its three terms.
    Triple {
        subject: &'a [u8],
        predicate: &'a [u8],
        object: &'a [u8],
    },
}

pub(super) const EMPTY_LITERAL: Raw<'static> = Raw::Literal {
    value: b"",
    language: None,
    datatype: None,
    direction: None,
};

/// The parts of a dictionary encoding (`quiver_model::term`: a tag byte, then the text,
/// a NUL after a language tag or datatype).
pub(super) fn raw_of_encoding(bytes: &[u8]) -> Option<Raw<'_>> {
    let (&tag, rest) = bytes.split_first()?;
    let split = || {
        let nul = rest.iter().position(|&b| b == 0)?;
        Some((&rest[..nul], &rest[nul + 1..]))
    };
    Some(match tag {
        TAG_BLANK => Raw::Blank(rest),
        TAG_IRI => Raw::Iri(rest),
        TAG_SIMPLE => Raw::Literal {
            value: rest,
            language: None,
            datatype: None,
            direction: None,
        },
        TAG_LANG => {
            let (language, value) = split()?;
            Raw::Literal {
                value,
                language: Some(language),
                datatype: None,
                direction: None,
            }
        }
        TAG_DIRECTIONAL => {
            // `en--ltr`: the language, then the direction after the last `--`.
            let (tag, value) = split()?;
            let (language, direction) = tag.split_at(tag.len().checked_sub(5)?);
            Raw::Literal {
                value,
                language: Some(language),
                datatype: None,
                direction: Some(direction.strip_prefix(b"--")?),
            }
        }
        TAG_TYPED => {
            let (datatype, value) = split()?;
            Raw::Literal {
                value,
                language: None,
                datatype: Some(datatype),
                direction: None,
            }
        }
        TAG_TRIPLE => match decode_term(bytes).ok()? {
            DecodedTerm::Triple {
                subject,
                predicate,
                object,
            } => Raw::Triple {
                subject,
                predicate,
                object,
            },
            _ => return None,
        },
        _ => return None,
    })
}

/// The parts of a term the query computed (a triple term: an empty literal, see
/// `Column::write`).
pub(super) fn raw_of_term(term: TermRef<'_>) -> Raw<'_> {
    match term {
        TermRef::NamedNode(n) => Raw::Iri(n.as_str().as_bytes()),
        TermRef::BlankNode(b) => Raw::Blank(b.as_str().as_bytes()),
        TermRef::Literal(l) => Raw::Literal {
            value: l.value().as_bytes(),
            language: l.language().map(str::as_bytes),
            datatype: (l.language().is_none() && l.datatype() != xsd::STRING)
                .then(|| l.datatype().as_str().as_bytes()),
            direction: l.direction().map(|d| match d {
                oxrdf::BaseDirection::Ltr => b"ltr".as_slice(),
                oxrdf::BaseDirection::Rtl => b"rtl".as_slice(),
            }),
        },
        TermRef::Triple(_) => EMPTY_LITERAL,
    }
}

/// Writes the three terms of a triple term, each through `write`, `between` them.
fn triple_parts(
    parts: [&[u8]; 3],
    out: &mut Vec<u8>,
    mut before: impl FnMut(usize, &mut Vec<u8>),
    write: impl Fn(Raw<'_>, &mut Vec<u8>),
) {
    for (i, part) in parts.into_iter().enumerate() {
        before(i, out);
        write(raw_of_encoding(part).unwrap_or(EMPTY_LITERAL), out);
    }
}

pub(super) fn write_term(term: Raw<'_>, syntax: Syntax, out: &mut Vec<u8>) {
    match syntax {
        Syntax::Json => json_term(term, out),
        Syntax::Xml => xml_term(term, out),
        Syntax::Tsv => tsv_term(term, out),
        Syntax::Csv => csv_term(term, out),
    }
}

// ---------------------------------------------------------------------------------------
// TSV: terms in Turtle syntax, numbers and booleans bare when their form allows.
// ---------------------------------------------------------------------------------------

fn tsv_term(term: Raw<'_>, out: &mut Vec<u8>) {
    match term {
        Raw::Iri(iri) => {
            out.push(b'<');
            out.extend_from_slice(iri);
            out.push(b'>');
        }
        Raw::Blank(label) => {
            out.extend_from_slice(b"_:");
            out.extend_from_slice(label);
        }
        Raw::Literal {
            value,
            language: Some(language),
            direction,
            ..
        } => {
            tsv_quoted(value, out);
            out.push(b'@');
            out.extend_from_slice(language);
            if let Some(direction) = direction {
                out.extend_from_slice(b"--");
                out.extend_from_slice(direction);
            }
        }
        Raw::Triple {
            subject,
            predicate,
            object,
        } => {
            out.extend_from_slice(b"<<(");
            let space = |_, out: &mut Vec<u8>| out.push(b' ');
            triple_parts([subject, predicate, object], out, space, tsv_term);
            out.extend_from_slice(b" )>>");
        }
        Raw::Literal {
            value,
            datatype: None,
            ..
        } => tsv_quoted(value, out),
        Raw::Literal {
            value,
            datatype: Some(datatype),
            ..
        } => {
            let bare = match datatype {
                b"http://www.w3.org/2001/XMLSchema#boolean" => matches!(value, b"true" | b"false"),
                b"http://www.w3.org/2001/XMLSchema#integer" => is_turtle_integer(value),
                b"http://www.w3.org/2001/XMLSchema#decimal" => is_turtle_decimal(value),
                b"http://www.w3.org/2001/XMLSchema#double" => is_turtle_double(value),
                _ => false,
            };
            if bare {
                out.extend_from_slice(value);
            } else {
                tsv_quoted(value, out);
                out.extend_from_slice(b"^^<");
                out.extend_from_slice(datatype);
                out.push(b'>');
            }
        }
    }
}

fn tsv_quoted(value: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    escape_into(value, out, |b| match b {
        b'\t' => Some(b"\\t"),
        b'\n' => Some(b"\\n"),
        b'\r' => Some(b"\\r"),
        b'"' => Some(b"\\\""),
        b'\\' => Some(b"\\\\"),
        _ => None,
    });
    out.push(b'"');
}

/// Appends `text` with each byte `escape` names replaced by its escape, the runs of bytes
/// between them copied whole.
#[inline]
fn escape_into(text: &[u8], out: &mut Vec<u8>, escape: impl Fn(u8) -> Option<&'static [u8]>) {
    let mut from = 0;
    for (i, &b) in text.iter().enumerate() {
        let Some(escaped) = escape(b) else { continue };
        out.extend_from_slice(&text[from..i]);
        out.extend_from_slice(escaped);
        from = i + 1;
    }
    out.extend_from_slice(&text[from..]);
}

/// Strips one leading sign.
fn unsigned(value: &[u8]) -> &[u8] {
    value
        .strip_prefix(b"+")
        .or_else(|| value.strip_prefix(b"-"))
        .unwrap_or(value)
}

fn digits(value: &[u8]) -> usize {
    value.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// `[+-]? [0-9]+`
fn is_turtle_integer(value: &[u8]) -> bool {
    let value = unsigned(value);
    !value.is_empty() && digits(value) == value.len()
}

/// `[+-]? [0-9]* '.' [0-9]+`
fn is_turtle_decimal(value: &[u8]) -> bool {
    let value = unsigned(value);
    let value = &value[digits(value)..];
    match value.strip_prefix(b".") {
        Some(rest) => !rest.is_empty() && digits(rest) == rest.len(),
        None => false,
    }
}

/// `[+-]? ([0-9]+ '.' [0-9]* EXPONENT | '.' [0-9]+ EXPONENT | [0-9]+ EXPONENT)`
fn is_turtle_double(value: &[u8]) -> bool {
    let value = unsigned(value);
    let before = digits(value);
    let mut value = &value[before..];
    let mut after = 0;
    if let Some(rest) = value.strip_prefix(b".") {
        after = digits(rest);
        value = &rest[after..];
    }
    let Some(exponent) = value
        .strip_prefix(b"e")
        .or_else(|| value.strip_prefix(b"E"))
    else {
        return false;
    };
    let exponent = unsigned(exponent);
    (before > 0 || after > 0) && !exponent.is_empty() && digits(exponent) == exponent.len()
}

// ---------------------------------------------------------------------------------------
// CSV: values as RFC 4180 fields.
// ---------------------------------------------------------------------------------------

fn csv_term(term: Raw<'_>, out: &mut Vec<u8>) {
    match term {
        Raw::Iri(iri) => csv_field(iri, out),
        Raw::Literal { value, .. } => csv_field(value, out),
        Raw::Triple {
            subject,
            predicate,
            object,
        } => {
            // As `sparesults` writes it: the three terms' fields, space separated.
            let space = |i, out: &mut Vec<u8>| {
                if i > 0 {
                    out.push(b' ')
                }
            };
            triple_parts([subject, predicate, object], out, space, csv_term);
        }
        Raw::Blank(label) => {
            if needs_csv_quotes(label) {
                out.extend_from_slice(b"\"_:");
                csv_quoted_body(label, out);
                out.push(b'"');
            } else {
                out.extend_from_slice(b"_:");
                out.extend_from_slice(label);
            }
        }
    }
}

/// `text` as one field, quoted when it holds a separator, a quote or a line end.
pub(super) fn csv_field(text: &[u8], out: &mut Vec<u8>) {
    if needs_csv_quotes(text) {
        out.push(b'"');
        csv_quoted_body(text, out);
        out.push(b'"');
    } else {
        out.extend_from_slice(text);
    }
}

fn needs_csv_quotes(text: &[u8]) -> bool {
    text.iter()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
}

fn csv_quoted_body(text: &[u8], out: &mut Vec<u8>) {
    for (i, part) in text.split(|&b| b == b'"').enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\"\"");
        }
        out.extend_from_slice(part);
    }
}

// ---------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------

fn json_term(term: Raw<'_>, out: &mut Vec<u8>) {
    match term {
        Raw::Iri(iri) => {
            out.extend_from_slice(b"{\"type\":\"uri\",\"value\":");
            json_string(iri, out);
        }
        Raw::Blank(label) => {
            out.extend_from_slice(b"{\"type\":\"bnode\",\"value\":");
            json_string(label, out);
        }
        Raw::Literal {
            value,
            language,
            datatype,
            direction,
        } => {
            out.extend_from_slice(b"{\"type\":\"literal\",\"value\":");
            json_string(value, out);
            if let Some(language) = language {
                out.extend_from_slice(b",\"xml:lang\":");
                json_string(language, out);
                if let Some(direction) = direction {
                    out.extend_from_slice(b",\"its:dir\":");
                    json_string(direction, out);
                }
            } else if let Some(datatype) = datatype {
                out.extend_from_slice(b",\"datatype\":");
                json_string(datatype, out);
            }
        }
        Raw::Triple {
            subject,
            predicate,
            object,
        } => {
            out.extend_from_slice(b"{\"type\":\"triple\",\"value\":{");
            let key = |i, out: &mut Vec<u8>| {
                out.extend_from_slice(
                    [&b"\"subject\":"[..], b",\"predicate\":", b",\"object\":"][i],
                )
            };
            triple_parts([subject, predicate, object], out, key, json_term);
            out.push(b'}');
        }
    }
    out.push(b'}');
}

/// A JSON string as `json-event-parser` writes it: `"` and `\` escaped, control
/// characters as `\b \f \n \r \t` or `\u00XX`, everything else as is.
pub(super) fn json_string(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text;
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b >= 0x20 && b != b'"' && b != b'\\' {
            continue;
        }
        out.extend_from_slice(&bytes[from..i]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0C => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

// ---------------------------------------------------------------------------------------
// XML
// ---------------------------------------------------------------------------------------

fn xml_term(term: Raw<'_>, out: &mut Vec<u8>) {
    match term {
        Raw::Iri(iri) => {
            out.extend_from_slice(b"<uri>");
            xml_escape(iri, out);
            out.extend_from_slice(b"</uri>");
        }
        Raw::Blank(label) => {
            out.extend_from_slice(b"<bnode>");
            xml_escape(label, out);
            out.extend_from_slice(b"</bnode>");
        }
        Raw::Triple {
            subject,
            predicate,
            object,
        } => {
            out.extend_from_slice(b"<triple>");
            let tag = |i, out: &mut Vec<u8>| {
                out.extend_from_slice(
                    [
                        &b"<subject>"[..],
                        b"</subject><predicate>",
                        b"</predicate><object>",
                    ][i],
                )
            };
            triple_parts([subject, predicate, object], out, tag, xml_term);
            out.extend_from_slice(b"</object></triple>");
        }
        Raw::Literal {
            value,
            language,
            datatype,
            direction,
        } => {
            out.extend_from_slice(b"<literal");
            if let Some(language) = language {
                out.extend_from_slice(b" xml:lang=\"");
                xml_escape(language, out);
                out.push(b'"');
                if let Some(direction) = direction {
                    // As `sparesults` writes it: the ITS namespace on the element.
                    out.extend_from_slice(b" its:dir=\"");
                    xml_escape(direction, out);
                    out.extend_from_slice(
                        b"\" xmlns:its=\"http://www.w3.org/2005/11/its\" its:version=\"2.0\"",
                    );
                }
            } else if let Some(datatype) = datatype {
                out.extend_from_slice(b" datatype=\"");
                xml_escape(datatype, out);
                out.push(b'"');
            }
            out.push(b'>');
            // Leading and trailing white space as character references, so that readers
            // trimming text keep it (as `sparesults` writes it).
            let bound = |b: &u8| matches!(b, b'\t' | b'\n' | b'\r' | b' ');
            let start = value.iter().take_while(|b| bound(b)).count();
            let end = value.len() - value[start..].iter().rev().take_while(|b| bound(b)).count();
            let trimmed = &value[start..end];
            xml_whitespace(&value[..start], out);
            xml_escape(trimmed, out);
            xml_whitespace(&value[end..], out);
            out.extend_from_slice(b"</literal>");
        }
    }
}

fn xml_whitespace(text: &[u8], out: &mut Vec<u8>) {
    for &b in text {
        out.extend_from_slice(match b {
            b'\t' => b"&#9;",
            b'\n' => b"&#10;",
            b'\r' => b"&#13;",
            _ => b"&#32;",
        });
    }
}

/// `<`, `>`, `&`, `'` and `"` as entities (quick-xml's `escape`).
pub(super) fn xml_escape(text: &[u8], out: &mut Vec<u8>) {
    escape_into(text, out, |b| match b {
        b'<' => Some(b"&lt;"),
        b'>' => Some(b"&gt;"),
        b'&' => Some(b"&amp;"),
        b'\'' => Some(b"&apos;"),
        b'"' => Some(b"&quot;"),
        _ => None,
    });
}
