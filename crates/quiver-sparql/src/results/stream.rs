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
use oxrdf::{Term, TermRef};
use quiver_model::term::{
    decode_term, encode_term, DecodedTerm, TAG_BLANK, TAG_DIRECTIONAL, TAG_IRI, TAG_LANG,
    TAG_SIMPLE, TAG_TRIPLE, TAG_TYPED,
};
use quiver_model::Id;

use super::chunks;
use super::term_cache::TermCache;
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
/// Results of fewer rows are written without caches (filling one costs more than it saves).
const MIN_CACHED_ROWS: usize = 256;
/// Lookups after which a column that hit its cache less than one time in eight stops
/// caching (its ids rarely repeat, e.g. a column of distinct subjects).
const TRIAL: u32 = 4096;
/// Results of at least this many rows are written by several threads. Below it, waking the
/// pool and warming each chunk's caches cost more than the threads save: on 2 cores,
/// LUBM-1000's q12 (3,101 rows) took 75 ns a row split into chunks against 31 on one
/// thread, while q7 (44,190 rows of scattered ids) gains from the split.
const PARALLEL_ROWS: usize = 32_768;
/// The fewest rows of one thread's chunk.
const MIN_CHUNK_ROWS: usize = 4_096;
/// The most rows of one thread's chunk of a large result.
const CHUNK_ROWS: usize = 16_384;

/// The rows of each chunk when a result of `rows` rows is written by `threads` threads, or
/// `None` when one thread writes it: about two chunks per thread, each of
/// [`MIN_CHUNK_ROWS`] to [`CHUNK_ROWS`] rows. Whoever decodes a result's rows on several
/// threads the way its writers would (`bench lubm`) cuts it the same way.
pub fn parallel_chunk_rows(rows: usize, threads: usize) -> Option<usize> {
    (rows >= PARALLEL_ROWS && threads > 1)
        .then(|| rows.div_ceil(threads * 2).clamp(MIN_CHUNK_ROWS, CHUNK_ROWS))
}

/// Writes `solutions` in `syntax` to `writer`, in large writes. A large result is cut into
/// chunks of rows written on the worker pool's threads at once, each into its own buffer,
/// and the buffers are written in order: the output is the same as one thread's (see
/// [`chunks::write_in_parallel`]).
pub fn write_solutions<W: Write>(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    mut writer: W,
) -> io::Result<W> {
    let variables: Vec<&str> = solutions.variables.iter().map(|v| v.as_str()).collect();
    let mut out = small_buffer(solutions.len(), variables.len());
    header(syntax, &variables, &mut out);
    let openings = openings(syntax, &variables);
    let rows = solutions.len();
    let threads = rayon::current_num_threads();
    if let Some(chunk_rows) = parallel_chunk_rows(rows, threads) {
        writer.write_all(&out)?;
        let sink = &mut chunks::Serial(&mut writer);
        chunks::write_in_parallel(solutions, syntax, &openings, threads, chunk_rows, 0, sink)?;
        out.clear();
    } else {
        write_serially(solutions, syntax, &openings, &mut out, &mut |out| {
            if out.len() >= FLUSH_BYTES {
                writer.write_all(out)?;
                out.clear();
            }
            Ok(())
        })?;
    }
    out.extend_from_slice(closing(syntax));
    writer.write_all(&out)?;
    Ok(writer)
}

/// The rows of `solutions` written by the calling thread into `out`, which `flush` may
/// empty as it fills.
fn write_serially(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    openings: &[Vec<u8>],
    out: &mut Vec<u8>,
    flush: &mut dyn FnMut(&mut Vec<u8>) -> io::Result<()>,
) -> io::Result<()> {
    let rows = solutions.len();
    // Fewer rows than this are written without caches (and without prefetching).
    let caching = rows >= MIN_CACHED_ROWS;
    RowWriter::new(solutions, openings.len(), caching, rows).write(
        solutions,
        syntax,
        openings,
        0..rows,
        out,
        flush,
    )
}

/// `solutions` in `syntax`, as one buffer in memory: the bytes [`write_solutions`] writes.
/// A large result's chunks are copied into the buffer by the pool, each into its own
/// place at once ([`chunks::Memory`]), rather than one after the other by the calling
/// thread.
pub fn solutions_to_vec(solutions: &Solutions<'_>, syntax: Syntax) -> io::Result<Vec<u8>> {
    let rows = solutions.len();
    let threads = rayon::current_num_threads();
    let variables: Vec<&str> = solutions.variables.iter().map(|v| v.as_str()).collect();
    let Some(chunk_rows) = parallel_chunk_rows(rows, threads) else {
        // Written into the buffer returned (through `write_solutions`, a buffer of its own
        // was copied into the caller's vector: an allocation and a copy more per query).
        let mut out = small_buffer(rows, variables.len());
        header(syntax, &variables, &mut out);
        let openings = openings(syntax, &variables);
        write_serially(solutions, syntax, &openings, &mut out, &mut |_| Ok(()))?;
        out.extend_from_slice(closing(syntax));
        return Ok(out);
    };
    let mut opening = Vec::new();
    header(syntax, &variables, &mut opening);
    let openings = openings(syntax, &variables);
    let mut memory = chunks::Memory::new(&opening);
    chunks::write_in_parallel(
        solutions,
        syntax,
        &openings,
        threads,
        chunk_rows,
        opening.len(),
        &mut memory,
    )?;
    Ok(memory.finish(closing(syntax)))
}

/// The first buffer of a result: sized for it, since a light query's few rows must not
/// pay for a large buffer.
fn small_buffer(rows: usize, columns: usize) -> Vec<u8> {
    let estimate = 256 + rows.saturating_mul(48 * columns.max(1));
    Vec::with_capacity(estimate.min(FLUSH_BYTES + (FLUSH_BYTES >> 2)))
}

/// What ends a result after its rows.
fn closing(syntax: Syntax) -> &'static [u8] {
    match syntax {
        Syntax::Json => b"]}}",
        Syntax::Xml => b"</results></sparql>",
        Syntax::Tsv | Syntax::Csv => b"",
    }
}

/// What opens each column's binding: `"name":` (JSON), `<binding name="name">` (XML).
fn openings(syntax: Syntax, variables: &[&str]) -> Vec<Vec<u8>> {
    variables
        .iter()
        .map(|v| {
            let mut opening = Vec::new();
            match syntax {
                Syntax::Json => {
                    json_string(v.as_bytes(), &mut opening);
                    opening.push(b':');
                }
                Syntax::Xml => {
                    opening.extend_from_slice(b"<binding name=\"");
                    xml_escape(v.as_bytes(), &mut opening);
                    opening.extend_from_slice(b"\">");
                }
                Syntax::Tsv | Syntax::Csv => {}
            }
            opening
        })
        .collect()
}

/// Writes rows of one result: each column decodes through its own cursor and cache, and
/// prefetches the dictionary entries of the ids a few rows ahead, so that the cache misses
/// of a column of scattered ids (distinct subjects) overlap. A writer kept from one chunk
/// of rows to the next keeps its caches warm (and a column that stopped caching stays
/// stopped), since a term's bytes depend only on its id and the syntax.
pub(super) struct RowWriter<'a> {
    columns: Vec<Column<'a>>,
    caching: bool,
}

impl<'a> RowWriter<'a> {
    /// A writer of `columns` columns of `solutions`, with caches when `caching`, sized for
    /// calls of at most `rows` rows each.
    pub(super) fn new(
        solutions: &'a Solutions<'_>,
        columns: usize,
        caching: bool,
        rows: usize,
    ) -> Self {
        let dictionary = solutions.store().dictionary();
        let columns = (0..columns)
            .map(|c| Column {
                ids: solutions.column_ids(c),
                cursor: dictionary.cursor(),
                cache: TermCache::new(rows),
                lookups: 0,
                hits: 0,
                caching,
            })
            .collect();
        Self { columns, caching }
    }

    /// Writes the rows `rows` into `out`, calling `flush` after each row (which may drain
    /// it); `solutions` and `syntax` must be those of every call.
    pub(super) fn write(
        &mut self,
        solutions: &Solutions<'_>,
        syntax: Syntax,
        openings: &[Vec<u8>],
        rows: std::ops::Range<usize>,
        out: &mut Vec<u8>,
        flush: &mut dyn FnMut(&mut Vec<u8>) -> io::Result<()>,
    ) -> io::Result<()> {
        let dictionary = solutions.store().dictionary();
        let columns = &mut self.columns;
        for row in rows.clone() {
            if self.caching {
                for column in columns.iter() {
                    dictionary.prefetch_ahead(column.ids, row);
                }
            }
            row_start(syntax, row, out);
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
                if syntax == Syntax::Json && !first {
                    out.push(b',');
                }
                out.extend_from_slice(&openings[c]);
                first = false;
                column.write(solutions, id, syntax, out);
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
            flush(out)?;
        }
        Ok(())
    }
}

fn header(syntax: Syntax, variables: &[&str], out: &mut Vec<u8>) {
    match syntax {
        Syntax::Json => {
            out.extend_from_slice(b"{\"head\":{\"vars\":[");
            for (i, v) in variables.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_string(v.as_bytes(), out);
            }
            out.extend_from_slice(b"]},\"results\":{\"bindings\":[");
        }
        Syntax::Xml => {
            out.extend_from_slice(
                b"<?xml version=\"1.0\"?><sparql xmlns=\"http://www.w3.org/2005/sparql-results#\"><head>",
            );
            for v in variables {
                out.extend_from_slice(b"<variable name=\"");
                xml_escape(v.as_bytes(), out);
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
                csv_field(v.as_bytes(), out);
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
///
/// Aligned to two cache lines (the pair the processor fetches together): a result written
/// on several threads has a writer per chunk, whose columns are allocated one after the
/// other, and a column's cursor and counts change at every row. Unaligned, the last column
/// of one writer and the first of the next could share a line that two threads write at
/// once (false sharing, as the chunks' buffers did: see `chunks.rs`).
#[repr(align(128))]
struct Column<'a> {
    ids: &'a [Id],
    cursor: quiver_model::dictionary::Cursor<'a>,
    cache: TermCache,
    lookups: u32,
    hits: u32,
    caching: bool,
}

impl Column<'_> {
    /// Appends the term `id` (bound) in `syntax`.
    fn write(&mut self, solutions: &Solutions<'_>, id: Id, syntax: Syntax, out: &mut Vec<u8>) {
        if let Some(term) = solutions.computed_term(id) {
            if let Term::Triple(_) = term {
                // A triple term has no parts borrowed from it: written from its encoding.
                let mut bytes = Vec::new();
                encode_term(term.as_ref(), &mut bytes);
                write_term(
                    raw_of_encoding(&bytes).unwrap_or(EMPTY_LITERAL),
                    syntax,
                    out,
                );
            } else {
                write_term(raw_of_term(term.as_ref()), syntax, out);
            }
            return;
        }
        if !self.caching {
            self.write_decoded(id, syntax, out);
            return;
        }
        self.lookups += 1;
        if let Some(bytes) = self.cache.get(id) {
            self.hits += 1;
            out.extend_from_slice(bytes);
            return;
        }
        let start = out.len();
        self.write_decoded(id, syntax, out);
        self.cache.put(id, &out[start..]);
        if self.lookups == TRIAL && self.hits < TRIAL / 8 {
            self.caching = false;
            self.cache = TermCache::new(0);
        }
    }

    fn write_decoded(&mut self, id: Id, syntax: Syntax, out: &mut Vec<u8>) {
        // A store's terms always decode (a reopened store is validated); should one not,
        // an empty literal keeps the document well formed.
        let term = self
            .cursor
            .term(id)
            .and_then(raw_of_encoding)
            .unwrap_or(EMPTY_LITERAL);
        write_term(term, syntax, out);
    }
}

/// A term's parts as the bytes of its UTF-8 text: written as they are, never checked or
/// decoded into `&str` (the dictionary's terms were encoded from strings).
#[derive(Debug, Clone, Copy)]
enum Raw<'a> {
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

const EMPTY_LITERAL: Raw<'static> = Raw::Literal {
    value: b"",
    language: None,
    datatype: None,
    direction: None,
};

/// The parts of a dictionary encoding (`quiver_model::term`: a tag byte, then the text,
/// a NUL after a language tag or datatype).
fn raw_of_encoding(bytes: &[u8]) -> Option<Raw<'_>> {
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
fn raw_of_term(term: TermRef<'_>) -> Raw<'_> {
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

fn write_term(term: Raw<'_>, syntax: Syntax, out: &mut Vec<u8>) {
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
    let bytes = value;
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
fn csv_field(text: &[u8], out: &mut Vec<u8>) {
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
fn json_string(text: &[u8], out: &mut Vec<u8>) {
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
fn xml_escape(text: &[u8], out: &mut Vec<u8>) {
    let bytes = text;
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
