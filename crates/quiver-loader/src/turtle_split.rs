//! Parsing one large Turtle file on every core.
//!
//! The approach of oxttl's chunker (`TurtleParser::split_slice_for_parallel_parsing`): the
//! prefixes and base declared before the first statement are carried into every piece, and
//! a cut is accepted where a parser with them reads three statements after it. The cuts are
//! our own, stricter, because the chunker's can be wrong without any error (a cut after a
//! `.` inside a comment that holds statements): a cut lies after a line that ends with `.`
//! outside any IRI, string or comment of that line. Whatever could still go wrong shows as
//! an error or a changed prefix table, and then the caller parses the file sequentially:
//! - a cut inside a multi-line string leaves the piece before it ending inside that string,
//!   an error;
//! - every piece must end with the prefixes and base it started with (pieces after the
//!   first start with those of the file's first statement), so a directive after the
//!   first statement that changes them sends the file back to the sequential parser.
//!
//! So pieces give exactly the statements of a sequential parse, and errors (with their
//! locations) always come from the sequential parser.

use memchr::memchr;
use oxttl::TurtleParser;
use rayon::prelude::*;

use crate::chunk::Chunk;

/// Below this size a file is parsed sequentially.
pub const MIN_PARALLEL_BYTES: u64 = 4 << 20;

/// A file parsed in pieces is first read whole into memory: above this size (on disk;
/// a tenth of it for gzip) it is streamed to the sequential parser instead.
pub const MAX_PARALLEL_BYTES: u64 = 4 << 30;

/// Whether a Turtle file of `bytes` on disk is parsed in pieces.
pub fn in_pieces(bytes: u64, gzip: bool) -> bool {
    let limit = if gzip {
        MAX_PARALLEL_BYTES / 10
    } else {
        MAX_PARALLEL_BYTES
    };
    (MIN_PARALLEL_BYTES..=limit).contains(&bytes)
}

/// The smallest piece worth a task of its own.
const MIN_PIECE_BYTES: usize = 1 << 20;

/// Parses `bytes` in pieces on `threads` workers; each piece's statements go to a chunk of
/// its own. `None` when the file must be parsed sequentially (see the module docs).
pub(crate) fn parse(
    bytes: &[u8],
    threads: usize,
    blank_prefix: Option<&str>,
) -> Option<Vec<(Chunk, u64)>> {
    parse_in_pieces(bytes, threads, blank_prefix, MIN_PIECE_BYTES)
}

/// [`parse`] with pieces of at least `piece_bytes` (small in tests).
fn parse_in_pieces(
    bytes: &[u8],
    threads: usize,
    blank_prefix: Option<&str>,
    piece_bytes: usize,
) -> Option<Vec<(Chunk, u64)>> {
    let (parser, state) = prologue(bytes)?;
    let pieces = (bytes.len() / piece_bytes).clamp(1, threads.max(1) * 4);
    let cuts = cuts(bytes, pieces, &parser);
    if cuts.len() < 2 {
        return None;
    }
    let mut starts = vec![0];
    starts.extend(&cuts);
    let mut ends = cuts;
    ends.push(bytes.len());
    let ranges: Vec<(usize, usize)> = starts.into_iter().zip(ends).collect();
    let parse_piece = |(index, &(start, end)): (usize, &(usize, usize))| {
        // The first piece starts with the file's own declarations.
        let mut piece = if index == 0 {
            TurtleParser::new()
        } else {
            parser.clone()
        }
        .for_slice(&bytes[start..end]);
        let mut chunk = Chunk::new();
        let mut statements = 0;
        for triple in &mut piece {
            let quad = triple.ok()?.in_graph(oxrdf::GraphName::DefaultGraph);
            chunk.add_quad(quad, blank_prefix).ok()?;
            statements += 1;
        }
        if declarations(&piece) != state {
            return None;
        }
        chunk.seal();
        Some((chunk, statements))
    };
    let run = || {
        ranges
            .par_iter()
            .enumerate()
            .map(parse_piece)
            .collect::<Option<Vec<_>>>()
    };
    match rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
    {
        Ok(pool) => pool.install(run),
        Err(_) => run(),
    }
}

/// Prefixes and base of a parser, comparable.
type Declarations = (Vec<(String, String)>, Option<String>);

fn declarations(parser: &oxttl::turtle::SliceTurtleParser<'_>) -> Declarations {
    let mut prefixes: Vec<(String, String)> = parser
        .prefixes()
        .map(|(name, iri)| (name.to_owned(), iri.to_owned()))
        .collect();
    prefixes.sort();
    (prefixes, parser.base_iri().map(str::to_owned))
}

/// The parser to start pieces with (the declarations before the first statement), and
/// those declarations; `None` if the first statement is malformed.
fn prologue(bytes: &[u8]) -> Option<(TurtleParser, Declarations)> {
    let mut first = TurtleParser::new().for_slice(bytes);
    first.next()?.ok()?;
    let state = declarations(&first);
    let mut parser = TurtleParser::new();
    if let Some(base) = &state.1 {
        parser = parser.with_base_iri(base.clone()).ok()?;
    }
    for (name, iri) in &state.0 {
        parser = parser.with_prefix(name.clone(), iri.clone()).ok()?;
    }
    Some((parser, state))
}

/// Up to `pieces - 1` cut offsets, ascending (each the start of a line).
fn cuts(bytes: &[u8], pieces: usize, parser: &TurtleParser) -> Vec<usize> {
    let size = bytes.len() / pieces;
    let mut cuts = Vec::new();
    let mut from = size;
    while cuts.len() + 1 < pieces && from < bytes.len() {
        match next_cut(bytes, from, parser) {
            Some(cut) => {
                cuts.push(cut);
                from = cut + size;
            }
            None => break,
        }
    }
    cuts
}

/// The first acceptable cut at or after `from`: the start of a line after a line ending a
/// statement, where three statements parse. Gives up after a few thousand lines.
fn next_cut(bytes: &[u8], from: usize, parser: &TurtleParser) -> Option<usize> {
    let mut line_start = from;
    for _ in 0..10_000 {
        let newline = line_start + memchr(b'\n', bytes.get(line_start..)?)?;
        let line = &bytes[line_start..newline];
        let cut = newline + 1;
        if line_start > from
            && ends_statement(line)
            && three_statements_parse(&bytes[cut..], parser)
        {
            return Some(cut);
        }
        line_start = cut;
    }
    None
}

fn three_statements_parse(bytes: &[u8], parser: &TurtleParser) -> bool {
    let mut statements = parser.clone().for_slice(bytes);
    (0..3).all(|_| matches!(statements.next(), Some(Ok(_))))
}

/// Whether `line` ends with a `.` that lies outside any IRI, string or comment of the line
/// (a line that starts inside a multi-line string is caught by the piece before the cut).
fn ends_statement(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let end = line
        .iter()
        .rposition(|c| !matches!(c, b' ' | b'\t'))
        .map_or(0, |i| i + 1);
    let line = &line[..end];
    if line.last() != Some(&b'.') {
        return false;
    }
    let mut i = 0;
    while i < line.len() - 1 {
        match line[i] {
            b'#' => return false,
            b'<' => match memchr(b'>', &line[i + 1..]) {
                Some(close) => i += close + 2,
                None => return false,
            },
            quote @ (b'"' | b'\'') => {
                i += 1;
                loop {
                    match line.get(i) {
                        None => return false,
                        Some(b'\\') => i += 2,
                        Some(&c) if c == quote => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            _ => i += 1,
        }
    }
    i == line.len() - 1
}

#[cfg(test)]
mod tests;
