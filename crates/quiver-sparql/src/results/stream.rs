//! Solutions written straight from the result's id columns, the bytes of each term escaped
//! directly into one large buffer: SPARQL JSON, XML, TSV and CSV.
//!
//! `sparesults` takes one `(variable, term)` iterator per row and builds a vector of events
//! (JSON, XML) or a string per row: allocations and indirections that cost more than
//! decoding the term. Here the rows go through a row writer (`row_writer.rs`), each of whose
//! columns keeps a dictionary cursor (ascending ids continue from the previous position)
//! and a small direct-mapped cache of the bytes it wrote per id, so a term repeated down a
//! column (a class, a department) is decoded and escaped once; a column whose ids rarely
//! repeat stops caching. This module adds the header, the closing and the choice between
//! one thread and chunks on several (`chunks.rs`). The output is the same, byte for
//! byte, as `sparesults`' (JSON, XML, TSV) and [`super::csv::CsvSolutionsWriter`]'s (CSV):
//! `tests/results_stream.rs` checks it on random terms of every kind.

use std::io::{self, Write};

use super::chunks::{self, ChunkWriter, PARALLEL_ROWS};
use super::row_writer::RowWriter;
use super::term_syntax::{csv_field, json_string, xml_escape, Syntax};
use crate::engine::Solutions;

/// Bytes gathered before one `write_all` to the sink.
const FLUSH_BYTES: usize = 1 << 18;
/// Results of fewer rows are written without caches (filling one costs more than it saves).
const MIN_CACHED_ROWS: usize = 256;
/// The fewest rows of a chunk of a large result cut in two chunks per thread (below, one
/// chunk per thread). On 2 cores, LUBM-1000's q7 (44,190 rows) wrote as fast in chunks of
/// 2,762 rows as of 11,048.
const MIN_CHUNK_ROWS: usize = 2_048;
/// A result of fewer rows than [`PARALLEL_ROWS`] is written by several threads when about
/// this many of its cells are estimated to seek in the dictionary ([`seeking_cells`]):
/// each is a miss of the processor's caches (60–170 ns on one thread), which threads
/// overlap. On 2 cores, LUBM-1000's q1 (2,528 rows of students, departments and
/// universities scattered over the dictionary, about 5,000 seeking cells) is written in
/// about 0.65 of the time on both, as TSV or JSON. Cells that decode from the bucket
/// their column's cursor holds or that repeat are cheap, and a result of such cells loses
/// more to the chunks' cold caches than the threads save: q8 (8,569 rows, about 600
/// seeking cells) wrote TSV in 44 ns a row on one thread against 55 split on the pool.
const PARALLEL_SEEKING_CELLS: usize = 2_048;
/// The fewest rows of a chunk of such a result.
const MIN_SCATTERED_CHUNK_ROWS: usize = 256;
/// The rows of a result whose scatter is sampled (its first rows).
const SCATTER_SAMPLE_ROWS: usize = 512;
/// The shift taking a multiplicative hash to a slot of the table of buckets met (twice the
/// sample's slots).
const MET_SHIFT: u32 = 64 - (2 * SCATTER_SAMPLE_ROWS).trailing_zeros();
/// The most rows of one thread's chunk of a large result.
const CHUNK_ROWS: usize = 16_384;

/// The rows of each chunk when `solutions` are written by `threads` threads, or `None`
/// when one thread writes them: for a large result, as many chunks for every thread
/// ([`large_chunk_rows`]); for a smaller result of scattered cells, one chunk per thread
/// (the calling thread writes one: see `chunks.rs`) of at least
/// [`MIN_SCATTERED_CHUNK_ROWS`]. Whoever decodes a result's rows on several threads the
/// way its writers would (`bench lubm`) cuts it the same way.
pub fn parallel_chunk_rows(solutions: &Solutions<'_>, threads: usize) -> Option<usize> {
    let rows = solutions.len();
    if threads < 2 {
        None
    } else if rows >= PARALLEL_ROWS {
        Some(large_chunk_rows(rows, threads))
    } else if rows >= 2 * MIN_SCATTERED_CHUNK_ROWS
        && seeking_cells(solutions) >= PARALLEL_SEEKING_CELLS
    {
        Some(one_chunk_each(rows, threads))
    } else {
        None
    }
}

/// The rows of each chunk of a result of `rows` rows (at least [`PARALLEL_ROWS`]) written by
/// `threads` threads: two chunks for every thread, or one where two would be under
/// [`MIN_CHUNK_ROWS`] rows, so that no thread waits for another's extra chunk; at most
/// [`CHUNK_ROWS`] (a larger result is written in several batches of two chunks per
/// thread). Chunks of at least 4,096 rows, about two per thread, gave LUBM-2560's q7
/// (112,559 rows) 28 chunks on 16 threads: twelve threads wrote two, four wrote one and
/// waited.
fn large_chunk_rows(rows: usize, threads: usize) -> usize {
    let two_each = rows.div_ceil(threads * 2);
    if two_each >= MIN_CHUNK_ROWS {
        two_each.min(CHUNK_ROWS)
    } else {
        one_chunk_each(rows, threads)
    }
}

/// The rows of each of one chunk per thread, of at least [`MIN_SCATTERED_CHUNK_ROWS`].
fn one_chunk_each(rows: usize, threads: usize) -> usize {
    rows.div_ceil(threads).max(MIN_SCATTERED_CHUNK_ROWS)
}

/// The cells of `solutions` estimated to seek in the dictionary, from its first
/// [`SCATTER_SAMPLE_ROWS`] rows: per column, the distinct dictionary buckets its sampled ids
/// fall in (a cell of a bucket met before is a hit of the column's cache or a step of its
/// cursor), scaled to all the rows. A few microseconds at most.
fn seeking_cells(solutions: &Solutions<'_>) -> usize {
    let rows = solutions.len();
    let sample = rows.min(SCATTER_SAMPLE_ROWS);
    if sample == 0 {
        return 0;
    }
    let terms = solutions.store().terms();
    let bucket = quiver_model::dictionary::BUCKET as u64;
    // The buckets met, in a direct-mapped table of twice the sample (a bucket evicted by
    // another and met again counts twice: an estimate, cheaper than sorting the sample).
    let mut met = [u64::MAX; 2 * SCATTER_SAMPLE_ROWS];
    let mut seeking = 0;
    for column in 0..solutions.variables.len() {
        met.fill(u64::MAX);
        for &id in &solutions.column_ids(column)[..sample] {
            let id = id as u64;
            if id < terms {
                let at = id / bucket;
                let slot = &mut met[(at.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> MET_SHIFT) as usize];
                if *slot != at {
                    *slot = at;
                    seeking += 1;
                }
            }
        }
    }
    seeking * rows / sample
}

/// Writes `solutions` in `syntax` to `writer`, in large writes. A large result is cut into
/// chunks of rows written on the worker pool's threads at once, each into its own buffer,
/// and the buffers are written in order: the output is the same as one thread's (see
/// [`chunks::write_in_parallel`]).
pub fn write_solutions<W: Write>(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    writer: W,
) -> io::Result<W> {
    write_solutions_in_chunks(solutions, syntax, chunks::Copied(writer)).map(|copied| copied.0)
}

/// Writes `solutions` in `syntax` to `writer` as [`write_solutions`] does, but hands a large
/// result's chunks to the writer whole, buffer and all ([`ChunkWriter::take_chunk`]),
/// rather than copying their bytes on the calling thread: the server's response body.
pub fn write_solutions_in_chunks<W: ChunkWriter>(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    mut writer: W,
) -> io::Result<W> {
    let variables: Vec<&str> = solutions.variables.iter().map(|v| v.as_str()).collect();
    let mut out = small_buffer(solutions.len(), variables.len());
    header(syntax, &variables, &mut out);
    let openings = openings(syntax, &variables);
    let threads = rayon::current_num_threads();
    if let Some(chunk_rows) = parallel_chunk_rows(solutions, threads) {
        writer.write_all(&out)?;
        let sink = &mut chunks::Handed(&mut writer);
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
    let Some(chunk_rows) = parallel_chunk_rows(solutions, threads) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every thread gets as many chunks of a large result (two, or one where two would be
    /// short), each of at most [`CHUNK_ROWS`] rows, and the chunks cover the rows.
    #[test]
    fn every_thread_gets_as_many_chunks_of_a_large_result() {
        for threads in [2, 3, 4, 8, 16, 64] {
            for rows in [PARALLEL_ROWS, 44_190, 112_559, 500_000, 2_765_067] {
                let chunk = large_chunk_rows(rows, threads);
                let chunks = rows.div_ceil(chunk);
                assert!(chunk <= CHUNK_ROWS, "{rows} rows on {threads} threads");
                if rows <= threads * 2 * CHUNK_ROWS {
                    let each = if rows.div_ceil(threads * 2) >= MIN_CHUNK_ROWS {
                        2
                    } else {
                        1
                    };
                    assert_eq!(
                        chunks,
                        threads * each,
                        "{rows} rows on {threads} threads: chunks of {chunk}"
                    );
                } else {
                    assert_eq!(chunk, CHUNK_ROWS, "{rows} rows on {threads} threads");
                }
            }
        }
        // LUBM-2560's q7 on 16 threads: 32 chunks, where a floor of 4,096 rows made 28.
        assert_eq!(112_559usize.div_ceil(large_chunk_rows(112_559, 16)), 32);
    }
}
