//! Solutions written straight from the result's id columns, the bytes of each term escaped
//! directly into one large buffer: SPARQL JSON, XML, TSV and CSV.
//!
//! `sparesults` takes one `(variable, term)` iterator per row and builds a vector of events
//! (JSON, XML) or a string per row: allocations and indirections that cost more than
//! decoding the term. Here each column keeps a dictionary cursor (ascending ids continue
//! from the previous position) and a small direct-mapped cache of the bytes it wrote per
//! id, so a term repeated down a column (a class, a department) is decoded and escaped
//! once; a column whose ids rarely repeat stops caching. The output is the same, byte for
//! byte, as `sparesults`' (JSON, XML, TSV) and [`super::csv::CsvSolutionsWriter`]'s (CSV):
//! `tests/results_stream.rs` checks it on random terms of every kind.

use std::io::{self, Write};

use oxrdf::vocab::xsd;
use oxrdf::TermRef;
use quiver_model::{decode_term, DecodedTerm, Id};

use crate::engine::Solutions;
use crate::table::UNBOUND;

/// A tabular results syntax the writers of this module produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Xml,
    Tsv,
    Csv,
}

/// Bytes gathered before one `write_all` to the sink.
const FLUSH_BYTES: usize = 1 << 18;
/// Cache slots per column (a power of two).
const SLOTS: usize = 1024;
/// Lookups after which a column that hit its cache less than one time in eight stops
/// caching (its ids rarely repeat, e.g. a column of distinct subjects).
const TRIAL: u32 = 4096;

/// Writes `solutions` in `syntax` to `writer`, in large writes.
pub fn write_solutions<W: Write>(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    mut writer: W,
) -> io::Result<W> {
    let variables: Vec<&str> = solutions.variables.iter().map(|v| v.as_str()).collect();
    let mut out = Vec::with_capacity(FLUSH_BYTES + (FLUSH_BYTES >> 2));
    header(syntax, &variables, &mut out);
    let dictionary = solutions.store().dictionary();
    let mut columns: Vec<Column<'_>> = (0..variables.len())
        .map(|c| Column {
            ids: solutions.column_ids(c),
            cursor: dictionary.cursor(),
            slots: Vec::new(),
            lookups: 0,
            hits: 0,
            caching: true,
        })
        .collect();
    for row in 0..solutions.len() {
        row_start(syntax, row, &mut out);
        let mut first = true;
        for (c, column) in columns.iter_mut().enumerate() {
            let id = column.ids[row];
            match syntax {
                Syntax::Tsv if c > 0 => out.push(b'\t'),
                Syntax::Csv if c > 0 => out.push(b','),
                _ => {}
            }
            if id == UNBOUND {
                continue;
            }
            match syntax {
                Syntax::Json => {
                    if !first {
                        out.push(b',');
                    }
                    json_string(variables[c], &mut out);
                    out.push(b':');
                }
                Syntax::Xml => {
                    out.extend_from_slice(b"<binding name=\"");
                    xml_escape(variables[c], &mut out);
                    out.extend_from_slice(b"\">");
                }
                _ => {}
            }
            first = false;
            column.write(solutions, id, syntax, &mut out);
            if syntax == Syntax::Xml {
                out.extend_from_slice(b"</binding>");
            }
        }
        out.extend_from_slice(match syntax {
            Syntax::Json => b"}",
            Syntax::Xml => b"</result>",
            Syntax::Tsv => b"\n",
            Syntax::Csv => b"\r\n",
        });
        if out.len() >= FLUSH_BYTES {
            writer.write_all(&out)?;
            out.clear();
        }
    }
    match syntax {
        Syntax::Json => out.extend_from_slice(b"]}}"),
        Syntax::Xml => out.extend_from_slice(b"</results></sparql>"),
        Syntax::Tsv | Syntax::Csv => {}
    }
    writer.write_all(&out)?;
    Ok(writer)
}

fn header(syntax: Syntax, variables: &[&str], out: &mut Vec<u8>) {
    match syntax {
        Syntax::Json => {
            out.extend_from_slice(b"{\"head\":{\"vars\":[");
            for (i, v) in variables.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_string(v, out);
            }
            out.extend_from_slice(b"]},\"results\":{\"bindings\":[");
        }
        Syntax::Xml => {
            out.extend_from_slice(
                b"<?xml version=\"1.0\"?><sparql xmlns=\"http://www.w3.org/2005/sparql-results#\"><head>",
            );
            for v in variables {
                out.extend_from_slice(b"<variable name=\"");
                xml_escape(v, out);
                out.extend_from_slice(b"\"/>");
            }
            out.extend_from_slice(b"</head><results>");
        }
        Syntax::Tsv => {
            for (i, v) in variables.iter().enumerate() {
                if i > 0 {
                    out.push(b'\t');
                }
                out.push(b'?');
                out.extend_from_slice(v.as_bytes());
            }
            out.push(b'\n');
        }
        Syntax::Csv => {
            for (i, v) in variables.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                csv_field(v, out);
            }
            out.extend_from_slice(b"\r\n");
        }
    }
}

fn row_start(syntax: Syntax, row: usize, out: &mut Vec<u8>) {
    match syntax {
        Syntax::Json if row > 0 => out.extend_from_slice(b",{"),
        Syntax::Json => out.push(b'{'),
        Syntax::Xml => out.extend_from_slice(b"<result>"),
        Syntax::Tsv | Syntax::Csv => {}
    }
}

/// One result column: its ids, its dictionary cursor and its cache of written terms.
struct Column<'a> {
    ids: &'a [Id],
    cursor: quiver_model::dictionary::Cursor<'a>,
    slots: Vec<(Id, Vec<u8>)>,
    lookups: u32,
    hits: u32,
    caching: bool,
}

impl Column<'_> {
    /// Appends the term `id` (bound) in `syntax`.
    fn write(
        &mut self,
        solutions: &Solutions<'_>,
        id: Id,
        syntax: Syntax,
        out: &mut Vec<u8>,
    ) {
        if let Some(term) = solutions.computed_term(id) {
            write_term(decoded_of(term.as_ref()), syntax, out);
            return;
        }
        if !self.caching {
            self.write_decoded(id, syntax, out);
            return;
        }
        if self.slots.is_empty() {
            self.slots = vec![(UNBOUND, Vec::new()); SLOTS];
        }
        let slot = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize >> 54;
        self.lookups += 1;
        if self.slots[slot].0 == id {
            self.hits += 1;
            out.extend_from_slice(&self.slots[slot].1);
            return;
        }
        let start = out.len();
        self.write_decoded(id, syntax, out);
        let (cached, bytes) = &mut self.slots[slot];
        *cached = id;
        bytes.clear();
        bytes.extend_from_slice(&out[start..]);
        if self.lookups == TRIAL && self.hits < TRIAL / 8 {
            self.caching = false;
            self.slots = Vec::new();
        }
    }

    fn write_decoded(&mut self, id: Id, syntax: Syntax, out: &mut Vec<u8>) {
        // A store's terms always decode (a reopened store is validated); should one not,
        // an empty literal keeps the document well formed.
        let term = self
            .cursor
            .term(id)
            .and_then(|bytes| decode_term(bytes).ok())
            .unwrap_or(DecodedTerm::Literal {
                value: "",
                language: None,
                datatype: None,
            });
        write_term(term, syntax, out);
    }
}

/// A borrowed term in the dictionary's decoded form (datatype `None` for `xsd:string`
/// and language-tagged literals).
fn decoded_of(term: TermRef<'_>) -> DecodedTerm<'_> {
    match term {
        TermRef::NamedNode(n) => DecodedTerm::Iri(n.as_str()),
        TermRef::BlankNode(b) => DecodedTerm::Blank(b.as_str()),
        TermRef::Literal(l) => DecodedTerm::Literal {
            value: l.value(),
            language: l.language(),
            datatype: (l.language().is_none() && l.datatype() != xsd::STRING)
                .then(|| l.datatype().as_str()),
        },
        #[allow(unreachable_patterns)]
        _ => DecodedTerm::Iri(""),
    }
}

fn write_term(term: DecodedTerm<'_>, syntax: Syntax, out: &mut Vec<u8>) {
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

fn tsv_term(term: DecodedTerm<'_>, out: &mut Vec<u8>) {
    match term {
        DecodedTerm::Iri(iri) => {
            out.push(b'<');
            out.extend_from_slice(iri.as_bytes());
            out.push(b'>');
        }
        DecodedTerm::Blank(label) => {
            out.extend_from_slice(b"_:");
            out.extend_from_slice(label.as_bytes());
        }
        DecodedTerm::Literal {
            value,
            language: Some(language),
            ..
        } => {
            tsv_quoted(value, out);
            out.push(b'@');
            out.extend_from_slice(language.as_bytes());
        }
        DecodedTerm::Literal {
            value,
            datatype: None,
            ..
        } => tsv_quoted(value, out),
        DecodedTerm::Literal {
            value,
            datatype: Some(datatype),
            ..
        } => {
            let bare = match datatype {
                "http://www.w3.org/2001/XMLSchema#boolean" => matches!(value, "true" | "false"),
                "http://www.w3.org/2001/XMLSchema#integer" => is_turtle_integer(value),
                "http://www.w3.org/2001/XMLSchema#decimal" => is_turtle_decimal(value),
                "http://www.w3.org/2001/XMLSchema#double" => is_turtle_double(value),
                _ => false,
            };
            if bare {
                out.extend_from_slice(value.as_bytes());
            } else {
                tsv_quoted(value, out);
                out.extend_from_slice(b"^^<");
                out.extend_from_slice(datatype.as_bytes());
                out.push(b'>');
            }
        }
    }
}

fn tsv_quoted(value: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = value.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(escaped);
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
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
fn is_turtle_integer(value: &str) -> bool {
    let value = unsigned(value.as_bytes());
    !value.is_empty() && digits(value) == value.len()
}

/// `[+-]? [0-9]* '.' [0-9]+`
fn is_turtle_decimal(value: &str) -> bool {
    let value = unsigned(value.as_bytes());
    let value = &value[digits(value)..];
    match value.strip_prefix(b".") {
        Some(rest) => !rest.is_empty() && digits(rest) == rest.len(),
        None => false,
    }
}

/// `[+-]? ([0-9]+ '.' [0-9]* EXPONENT | '.' [0-9]+ EXPONENT | [0-9]+ EXPONENT)`
fn is_turtle_double(value: &str) -> bool {
    let value = unsigned(value.as_bytes());
    let before = digits(value);
    let mut value = &value[before..];
    let mut after = 0;
    if let Some(rest) = value.strip_prefix(b".") {
        after = digits(rest);
        value = &rest[after..];
    }
    let Some(exponent) = value.strip_prefix(b"e").or_else(|| value.strip_prefix(b"E")) else {
        return false;
    };
    let exponent = unsigned(exponent);
    (before > 0 || after > 0) && !exponent.is_empty() && digits(exponent) == exponent.len()
}

// ---------------------------------------------------------------------------------------
// CSV: values as RFC 4180 fields.
// ---------------------------------------------------------------------------------------

fn csv_term(term: DecodedTerm<'_>, out: &mut Vec<u8>) {
    match term {
        DecodedTerm::Iri(iri) => csv_field(iri, out),
        DecodedTerm::Literal { value, .. } => csv_field(value, out),
        DecodedTerm::Blank(label) => {
            if label.contains([',', '"', '\r', '\n']) {
                out.extend_from_slice(b"\"_:");
                csv_quoted_body(label, out);
                out.push(b'"');
            } else {
                out.extend_from_slice(b"_:");
                out.extend_from_slice(label.as_bytes());
            }
        }
    }
}

/// `text` as one field, quoted when it holds a separator, a quote or a line end.
fn csv_field(text: &str, out: &mut Vec<u8>) {
    if text
        .bytes()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        out.push(b'"');
        csv_quoted_body(text, out);
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
}

fn csv_quoted_body(text: &str, out: &mut Vec<u8>) {
    for (i, part) in text.split('"').enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\"\"");
        }
        out.extend_from_slice(part.as_bytes());
    }
}

// ---------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------

fn json_term(term: DecodedTerm<'_>, out: &mut Vec<u8>) {
    match term {
        DecodedTerm::Iri(iri) => {
            out.extend_from_slice(b"{\"type\":\"uri\",\"value\":");
            json_string(iri, out);
        }
        DecodedTerm::Blank(label) => {
            out.extend_from_slice(b"{\"type\":\"bnode\",\"value\":");
            json_string(label, out);
        }
        DecodedTerm::Literal {
            value,
            language,
            datatype,
        } => {
            out.extend_from_slice(b"{\"type\":\"literal\",\"value\":");
            json_string(value, out);
            if let Some(language) = language {
                out.extend_from_slice(b",\"xml:lang\":");
                json_string(language, out);
            } else if let Some(datatype) = datatype {
                out.extend_from_slice(b",\"datatype\":");
                json_string(datatype, out);
            }
        }
    }
    out.push(b'}');
}

/// A JSON string as `json-event-parser` writes it: `"` and `\` escaped, control
/// characters as `\b \f \n \r \t` or `\u00XX`, everything else as is.
fn json_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
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

fn xml_term(term: DecodedTerm<'_>, out: &mut Vec<u8>) {
    match term {
        DecodedTerm::Iri(iri) => {
            out.extend_from_slice(b"<uri>");
            xml_escape(iri, out);
            out.extend_from_slice(b"</uri>");
        }
        DecodedTerm::Blank(label) => {
            out.extend_from_slice(b"<bnode>");
            xml_escape(label, out);
            out.extend_from_slice(b"</bnode>");
        }
        DecodedTerm::Literal {
            value,
            language,
            datatype,
        } => {
            out.extend_from_slice(b"<literal");
            if let Some(language) = language {
                out.extend_from_slice(b" xml:lang=\"");
                xml_escape(language, out);
                out.push(b'"');
            } else if let Some(datatype) = datatype {
                out.extend_from_slice(b" datatype=\"");
                xml_escape(datatype, out);
                out.push(b'"');
            }
            out.push(b'>');
            // Leading and trailing white space as character references, so that readers
            // trimming text keep it (as `sparesults` writes it).
            let bound = |c: char| matches!(c, '\t' | '\n' | '\r' | ' ');
            let trimmed = value.trim_matches(bound);
            let start = value.len() - value.trim_start_matches(bound).len();
            let end = start + trimmed.len();
            xml_whitespace(&value[..start], out);
            xml_escape(trimmed, out);
            xml_whitespace(&value[end..], out);
            out.extend_from_slice(b"</literal>");
        }
    }
}

fn xml_whitespace(text: &str, out: &mut Vec<u8>) {
    for b in text.bytes() {
        out.extend_from_slice(match b {
            b'\t' => b"&#9;",
            b'\n' => b"&#10;",
            b'\r' => b"&#13;",
            _ => b"&#32;",
        });
    }
}

/// `<`, `>`, `&`, `'` and `"` as entities (quick-xml's `escape`).
fn xml_escape(text: &str, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let entity: &[u8] = match b {
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'&' => b"&amp;",
            b'\'' => b"&apos;",
            b'"' => b"&quot;",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        out.extend_from_slice(entity);
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
}
