//! Rows of one result written in a tabular syntax straight from its id columns: each
//! column decodes through its own dictionary cursor, prefetches the entries of the rows
//! ahead, and keeps a small cache of the bytes it wrote per id (`term_cache.rs`), so that a
//! term repeated down a column (a class, a department) is decoded and escaped once; a
//! column whose ids rarely repeat stops caching. One thread's writer (`stream.rs`) and each
//! place of a result written on several threads (`chunks.rs`) write through one.

use std::io;

use oxrdf::Term;
use quiver_model::term::encode_term;
use quiver_model::Id;

use super::term_cache::TermCache;
use super::term_syntax::{raw_of_encoding, raw_of_term, write_term, Syntax, EMPTY_LITERAL};
use crate::engine::Solutions;
use crate::table::UNBOUND;

/// Lookups after which a column that hit its cache less than one time in eight stops
/// caching (its ids rarely repeat, e.g. a column of distinct subjects).
const TRIAL: u32 = 4096;

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
