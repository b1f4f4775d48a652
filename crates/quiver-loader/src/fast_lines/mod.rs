//! The fast path for N-Triples and N-Quads blocks: lines parsed straight into a chunk.
//!
//! Why: profiling `quiver load` of LUBM showed oxttl spending about 40% of the load in
//! oxiri validating every IRI occurrence, and most of the rest lexing into owned `oxrdf`
//! terms (a `String` each) that the chunk re-encodes at once. This parser reads the common
//! line shapes — `<iri>`, `_:label` (ASCII), `"literal"` with `\` escapes, `@lang`,
//! `^^<datatype>`, an optional graph name, a `.` and an optional comment — into the
//! dictionary encoding (`quiver_model::term`) in a scratch buffer, and validates a term
//! only when the chunk does not hold it yet, with the checks oxttl makes (oxiri for IRIs,
//! oxilangtag for language tags, no `rdf:langString` datatype). Terms are canonicalised as
//! oxttl's terms encode: escapes decoded, language tags lowercased, `xsd:string` literals
//! simple; so a store is byte for byte the one the oxttl path builds.
//!
//! Nothing else is guessed. A line the fast path does not recognise (other spacing, a
//! non-ASCII blank node label, a carriage return inside the line, …) is parsed by oxttl
//! alone: an N-Triples statement never spans lines, so a line that oxttl parses without
//! error means the same alone as in its block. When oxttl reports an error on such a line,
//! or the block is not UTF-8, [`parse_block`] gives up and the caller parses the whole
//! block with oxttl again, so error messages, their locations and lenient recovery stay
//! exactly oxttl's.

use memchr::{memchr, memchr2};
use oxrdfio::RdfParser;
use quiver_model::term::{TAG_BLANK, TAG_IRI, TAG_LANG, TAG_SIMPLE, TAG_TYPED};

use crate::chunk::{Chunk, DEFAULT_GRAPH};
use crate::source::Format;

const XSD_STRING: &[u8] = b"http://www.w3.org/2001/XMLSchema#string";
const RDF_LANG_STRING: &[u8] = b"http://www.w3.org/1999/02/22-rdf-syntax-ns#langString";
const RDF_DIR_LANG_STRING: &[u8] = b"http://www.w3.org/1999/02/22-rdf-syntax-ns#dirLangString";

/// Parses a block of whole lines of `format` (N-Triples or N-Quads) into `chunk`, returning
/// the numbers of statements and newlines, or `None` when the block must be parsed by oxttl instead (it
/// holds a line oxttl rejects, or is not UTF-8); `chunk` is then to be thrown away.
pub(crate) fn parse_block(
    bytes: &[u8],
    format: Format,
    blank_prefix: Option<&str>,
    chunk: &mut Chunk,
) -> Option<Parsed> {
    std::str::from_utf8(bytes).ok()?;
    parse_lines(bytes, format, blank_prefix, chunk)
}

/// [`parse_block`] of text known to be UTF-8.
pub(crate) fn parse_lines(
    bytes: &[u8],
    format: Format,
    blank_prefix: Option<&str>,
    chunk: &mut Chunk,
) -> Option<Parsed> {
    let mut parser = LineParser {
        terms: Default::default(),
        recent: Default::default(),
        value: Vec::new(),
        with_graph: format == Format::NQuads,
        blank_prefix: blank_prefix.map_or(&[][..], str::as_bytes),
    };
    let mut statements = 0u64;
    let mut newlines = 0u64;
    let mut start = 0;
    while start < bytes.len() {
        let end = match memchr(b'\n', &bytes[start..]) {
            Some(i) => {
                newlines += 1;
                start + i
            }
            None => bytes.len(),
        };
        let line = &bytes[start..end];
        start = end + 1;
        match parser.parse_line(line) {
            Some(Line::Empty) => {}
            Some(Line::Statement(terms)) => {
                parser.intern(terms, chunk)?;
                statements += 1;
            }
            None => statements += parse_line_with_oxttl(line, format, blank_prefix, chunk)?,
        }
    }
    Some(Parsed {
        statements,
        newlines,
    })
}

/// What [`parse_block`] read.
pub(crate) struct Parsed {
    pub statements: u64,
    pub newlines: u64,
}

/// Parses one line with oxttl (as the loader's oxttl path does); `None` on any error.
fn parse_line_with_oxttl(
    line: &[u8],
    format: Format,
    blank_prefix: Option<&str>,
    chunk: &mut Chunk,
) -> Option<u64> {
    let mut statements = 0;
    for quad in RdfParser::from_format(format.rdf_format()).for_slice(line) {
        chunk.add_quad(quad.ok()?, blank_prefix).ok()?;
        statements += 1;
    }
    Some(statements)
}

/// What a line holds.
enum Line {
    /// Whitespace or a comment.
    Empty,
    /// A statement of this many terms (3, or 4 with a graph name) in `LineParser::terms`.
    Statement(usize),
}

/// The kind of an encoded term, saying what to validate on its first occurrence.
#[derive(Clone, Copy, Default)]
enum Kind {
    /// Valid by construction (blank node labels, simple literals).
    #[default]
    Valid,
    Iri,
    /// A language-tagged literal whose tag has this many bytes.
    Lang(usize),
    /// A typed literal whose datatype IRI has this many bytes.
    Typed(usize),
}

struct LineParser<'p> {
    /// The encodings of the line's subject, predicate, object and graph name.
    terms: [(Vec<u8>, Kind); 4],
    /// Terms met recently and their ids, looked at before the chunk's table: the previous
    /// subject (statements come grouped by subject) and a few predicates by slot.
    recent: [(Vec<u8>, u32); 1 + PREDICATE_SLOTS],
    /// A literal's decoded value.
    value: Vec<u8>,
    with_graph: bool,
    blank_prefix: &'p [u8],
}

impl LineParser<'_> {
    /// Reads a line into `terms`; `None` when the fast path does not handle it.
    fn parse_line(&mut self, line: &[u8]) -> Option<Line> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if memchr(b'\r', line).is_some() {
            // A carriage return is a line jump to oxttl: leave such lines to it.
            return None;
        }
        let mut i = skip_spaces(line, 0);
        match line.get(i) {
            None | Some(b'#') => return Some(Line::Empty),
            _ => {}
        }
        let [subject, predicate, object, graph] = &mut self.terms;
        i = match line[i] {
            b'<' => iri(line, i, &mut subject.0)?,
            b'_' => blank(line, i, self.blank_prefix, &mut subject.0)?,
            _ => return None,
        };
        subject.1 = kind_of(&subject.0);
        i = skip_spaces(line, i);
        if line.get(i) != Some(&b'<') {
            return None;
        }
        i = iri(line, i, &mut predicate.0)?;
        predicate.1 = Kind::Iri;
        i = skip_spaces(line, i);
        i = match *line.get(i)? {
            b'<' => {
                object.1 = Kind::Iri;
                iri(line, i, &mut object.0)?
            }
            b'_' => {
                object.1 = Kind::Valid;
                blank(line, i, self.blank_prefix, &mut object.0)?
            }
            b'"' => {
                let (end, kind) = literal(line, i, &mut self.value, &mut object.0)?;
                object.1 = kind;
                end
            }
            _ => return None,
        };
        i = skip_spaces(line, i);
        let mut count = 3;
        if self.with_graph {
            match line.get(i) {
                Some(b'<') => {
                    i = iri(line, i, &mut graph.0)?;
                    graph.1 = Kind::Iri;
                    count = 4;
                }
                Some(b'_') => {
                    i = blank(line, i, self.blank_prefix, &mut graph.0)?;
                    graph.1 = Kind::Valid;
                    count = 4;
                }
                _ => {}
            }
            i = skip_spaces(line, i);
        }
        if line.get(i) != Some(&b'.') {
            return None;
        }
        i = skip_spaces(line, i + 1);
        match line.get(i) {
            None | Some(b'#') => Some(Line::Statement(count)),
            _ => None,
        }
    }

    /// Interns the line's terms and adds the statement; `None` when a term that is new to
    /// the chunk fails validation (then oxttl reports the error).
    fn intern(&mut self, count: usize, chunk: &mut Chunk) -> Option<()> {
        let mut ids = [DEFAULT_GRAPH; 4];
        // The hash of each term not found, kept for its insertion.
        let mut hashes = [None; 4];
        let mut missing = false;
        let slots = [0, 1 + predicate_slot(&self.terms[1].0)];
        for (position, ((id, hash), (bytes, kind))) in ids
            .iter_mut()
            .zip(&mut hashes)
            .zip(&self.terms[..count])
            .enumerate()
        {
            if let Some(&slot) = slots.get(position) {
                let (recent, recent_id) = &self.recent[slot];
                if recent == bytes {
                    *id = *recent_id;
                    continue;
                }
            }
            match chunk.find(bytes) {
                Ok(found) => *id = found,
                Err(unknown) => {
                    if !valid(bytes, *kind) {
                        return None;
                    }
                    *hash = Some(unknown);
                    missing = true;
                }
            }
        }
        if missing {
            // Interned only once every term is known valid, so a line that fails adds no
            // term to the chunk (two new terms of a line may also be equal).
            for ((id, hash), (bytes, _)) in ids.iter_mut().zip(hashes).zip(&self.terms[..count]) {
                if let Some(hash) = hash {
                    *id = match chunk.find_hashed(bytes, hash) {
                        Ok(found) => found,
                        Err(hash) => chunk.insert_new(bytes, hash),
                    };
                }
            }
        }
        chunk.quads.push(ids);
        for (position, slot) in slots.into_iter().enumerate() {
            let (recent, recent_id) = &mut self.recent[slot];
            if *recent != self.terms[position].0 {
                recent.clear();
                recent.extend_from_slice(&self.terms[position].0);
                *recent_id = ids[position];
            }
        }
        Some(())
    }
}

/// Slots of the recent predicates.
const PREDICATE_SLOTS: usize = 16;

fn predicate_slot(encoded: &[u8]) -> usize {
    let last = encoded.last().copied().unwrap_or_default();
    (encoded.len() ^ usize::from(last).wrapping_mul(7)) % PREDICATE_SLOTS
}

fn kind_of(encoded: &[u8]) -> Kind {
    if encoded[0] == TAG_IRI {
        Kind::Iri
    } else {
        Kind::Valid
    }
}

/// Whether a term new to the chunk passes the checks oxttl makes.
fn valid(bytes: &[u8], kind: Kind) -> bool {
    // The block is UTF-8 and decoded escapes are characters, so the text is UTF-8.
    fn text(bytes: &[u8]) -> Option<&str> {
        std::str::from_utf8(bytes).ok()
    }
    match kind {
        Kind::Valid => true,
        Kind::Iri => {
            quiver_model::plain_iri::is_plain_iri(&bytes[1..])
                || text(&bytes[1..]).is_some_and(|iri| oxiri::Iri::parse(iri).is_ok())
        }
        Kind::Lang(length) => text(&bytes[1..1 + length])
            .is_some_and(|tag| oxilangtag::LanguageTag::parse(tag).is_ok()),
        Kind::Typed(length) => {
            let datatype = &bytes[1..1 + length];
            datatype != RDF_LANG_STRING
                && datatype != RDF_DIR_LANG_STRING
                && text(datatype).is_some_and(|iri| oxiri::Iri::parse(iri).is_ok())
        }
    }
}

fn skip_spaces(line: &[u8], mut i: usize) -> usize {
    while matches!(line.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// Reads the IRI at `line[start] == b'<'` into `out` (tag and IRI), returning the position
/// after its `>`.
fn iri(line: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    out.clear();
    out.push(TAG_IRI);
    iri_text(line, start, out)
}

/// Appends the text of the IRI at `line[start] == b'<'` to `out`.
fn iri_text(line: &[u8], start: usize, out: &mut Vec<u8>) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let end = i + memchr2(b'>', b'\\', &line[i..])?;
        out.extend_from_slice(&line[i..end]);
        if line[end] == b'>' {
            return Some(end + 1);
        }
        // Only `\u` and `\U` escapes are allowed in IRIs.
        i = unicode_escape(line, end, out)?;
    }
}

/// Reads the blank node at `line[start] == b'_'` into `out` (tag, document prefix, label).
fn blank(line: &[u8], start: usize, prefix: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    if line.get(start + 1) != Some(&b':') {
        return None;
    }
    let label_start = start + 2;
    let mut i = label_start;
    while let Some(&c) = line.get(i) {
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.') {
            i += 1;
        } else if c >= 0x80 {
            // Labels may hold non-ASCII name characters: oxttl decides.
            return None;
        } else {
            break;
        }
    }
    let label = &line[label_start..i];
    // The first character must not be `-` or `.`, the last not `.` (a label's trailing
    // dots end the statement: leave that to oxttl).
    match (label.first(), label.last()) {
        (Some(first), Some(last)) if !matches!(first, b'-' | b'.') && *last != b'.' => {}
        _ => return None,
    }
    out.clear();
    out.push(TAG_BLANK);
    out.extend_from_slice(prefix);
    out.extend_from_slice(label);
    Some(i)
}

/// Reads the literal at `line[start] == b'"'` with its language tag or datatype into `out`,
/// using `value` for the decoded value; returns the position after it and its kind.
fn literal(
    line: &[u8],
    start: usize,
    value: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Option<(usize, Kind)> {
    value.clear();
    let mut i = start + 1;
    loop {
        let end = i + memchr2(b'"', b'\\', &line[i..])?;
        value.extend_from_slice(&line[i..end]);
        if line[end] == b'"' {
            i = end + 1;
            break;
        }
        i = match line.get(end + 1)? {
            b'u' | b'U' => unicode_escape(line, end, value)?,
            &c => {
                value.push(match c {
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b'f' => 0x0C,
                    b'"' | b'\'' | b'\\' => c,
                    _ => return None,
                });
                end + 2
            }
        };
    }
    out.clear();
    match line.get(i) {
        Some(b'@') => {
            let tag_start = i + 1;
            let mut end = tag_start;
            while line
                .get(end)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'-')
            {
                end += 1;
            }
            let tag = &line[tag_start..end];
            if !is_simple_language_tag(tag) {
                return None;
            }
            out.push(TAG_LANG);
            out.extend(tag.iter().map(u8::to_ascii_lowercase));
            out.push(0);
            out.extend_from_slice(value);
            Some((end, Kind::Lang(tag.len())))
        }
        Some(b'^') => {
            if line.get(i + 1) != Some(&b'^') || line.get(i + 2) != Some(&b'<') {
                return None;
            }
            out.push(TAG_TYPED);
            let end = iri_text(line, i + 2, out)?;
            let datatype = &out[1..];
            if datatype == XSD_STRING {
                out.clear();
                out.push(TAG_SIMPLE);
                out.extend_from_slice(value);
                return Some((end, Kind::Valid));
            }
            if memchr(0, datatype).is_some() {
                // The NUL separates the datatype from the value in the encoding.
                return None;
            }
            let length = datatype.len();
            out.push(0);
            out.extend_from_slice(value);
            Some((end, Kind::Typed(length)))
        }
        _ => {
            out.push(TAG_SIMPLE);
            out.extend_from_slice(value);
            Some((i, Kind::Valid))
        }
    }
}

/// `[a-zA-Z]+ ('-' [a-zA-Z0-9]+)*`, the language tags oxttl's lexer reads as one token
/// (anything else, such as a base direction, is left to oxttl).
fn is_simple_language_tag(tag: &[u8]) -> bool {
    let mut parts = tag.split(|&c| c == b'-');
    let first = parts.next().unwrap_or_default();
    !first.is_empty()
        && first.iter().all(u8::is_ascii_alphabetic)
        && parts.all(|part| !part.is_empty())
}

/// Decodes the `\u` (4 hex digits) or `\U` (8) escape at `line[at] == b'\\'` into `out`,
/// returning the position after it.
fn unicode_escape(line: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    let digits = match line.get(at + 1)? {
        b'u' => 4,
        b'U' => 8,
        _ => return None,
    };
    let hex = line.get(at + 2..at + 2 + digits)?;
    let mut code = 0u32;
    for &c in hex {
        code = code * 16 + char::from(c).to_digit(16)?;
    }
    let c = char::from_u32(code)?;
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    Some(at + 2 + digits)
}

#[cfg(test)]
mod tests;
