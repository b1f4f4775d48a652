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

use oxrdf::Term;
use quiver_model::term::encode_term;
use quiver_model::Id;

use super::chunks;
use super::term_cache::TermCache;
use super::term_syntax::{
    csv_field, json_string, raw_of_encoding, raw_of_term, write_term, xml_escape, EMPTY_LITERAL,
};
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
    let openings = openings(syntax, &variables);
    let Some(chunk_rows) = parallel_chunk_rows(rows, threads) else {
        // Written straight into the buffer returned: no second buffer, no copy.
        let mut out = small_buffer(rows, variables.len());
        header(syntax, &variables, &mut out);
        write_serially(solutions, syntax, &openings, &mut out, &mut |_| Ok(()))?;
        out.extend_from_slice(closing(syntax));
        return Ok(out);
    };
    let mut opening = Vec::new();
    header(syntax, &variables, &mut opening);
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
