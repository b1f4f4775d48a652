//! The fast reader for the commonest update: `INSERT DATA { … }` whose body is N-Triples.
//!
//! Why: spargebra's parser builds an owned `oxrdf` term (a `String` each) for every term
//! of the request, and a batch insert spent more time there than in the whole commit. A
//! client that streams data as SPARQL sends exactly this shape: one `INSERT DATA`, full
//! IRIs, quoted literals, one statement per line, possibly inside one `GRAPH <iri> { … }`.
//! Such a body is N-Triples, whose statements mean what they mean in SPARQL, so it goes
//! through the loader's line parser ([`crate::fast_lines`]) into a [`Chunk`] of encoded,
//! de-duplicated terms.
//!
//! Nothing else is guessed: a prologue, a second operation, prefixed names, numbers, `;`
//! or `,` lists, blank nodes (fresh per request in SPARQL, which the caller's general path
//! names) or any line the N-Triples parsers reject make [`parse_insert_data`] answer
//! `None`, and the request goes to the SPARQL parser, with its error messages.

use quiver_model::term::{TAG_BLANK, TAG_IRI};

use crate::chunk::{Chunk, DEFAULT_GRAPH};
use rayon::prelude::*;

use crate::fast_lines::parse_lines;
use crate::source::Format;

/// The quads of an `INSERT DATA` request read by the fast path: local term ids into
/// `chunk`, the graph [`DEFAULT_GRAPH`] or a local id.
#[derive(Debug)]
pub struct InsertData {
    /// Never sealed, so its terms are read in place.
    chunk: Chunk,
}

impl InsertData {
    /// The encoded bytes of local term `id`.
    pub fn term(&self, id: u32) -> &[u8] {
        self.chunk.open_term(id)
    }

    /// How many distinct terms the statements name.
    pub fn term_count(&self) -> usize {
        self.chunk.term_count()
    }

    /// The statements as local ids `[subject, predicate, object, graph]`.
    pub fn quads(&self) -> &[[u32; 4]] {
        &self.chunk.quads
    }
}

/// Reads `text` if it is one `INSERT DATA` of N-Triples statements (see the module
/// documentation); `None` sends it to the SPARQL parser.
pub fn parse_insert_data(text: &str) -> Option<InsertData> {
    let rest = keyword(text, "INSERT")?;
    let rest = keyword(rest, "DATA")?;
    let rest = rest.trim_start().strip_prefix('{')?;
    let body = rest.trim_end().strip_suffix('}')?;
    let (graph, body) = match keyword(body, "GRAPH") {
        Some(inner) => {
            let inner = inner.trim_start().strip_prefix('<')?;
            let end = inner.find('>')?;
            let (iri, inner) = (&inner[..end], &inner[end + 1..]);
            let inner = inner.trim_start().strip_prefix('{')?;
            let inner = inner.trim_end().strip_suffix('}')?;
            (Some(iri), inner)
        }
        None => (None, body),
    };
    if body.contains('{') || body.contains('}') {
        // Braces belong in no N-Triples statement outside a literal; a literal holding
        // one is rare enough to leave to the general parser.
        return None;
    }
    let mut chunk = parse_body(body)?;
    let blank =
        (0..chunk.spans.len() as u32).any(|id| chunk.open_term(id).first() == Some(&TAG_BLANK));
    if blank {
        return None;
    }
    if let Some(iri) = graph {
        let name = oxrdf::NamedNode::new(iri).ok()?;
        let mut encoded = Vec::new();
        quiver_model::encode_term(oxrdf::TermRef::NamedNode(name.as_ref()), &mut encoded);
        debug_assert_eq!(encoded.first(), Some(&TAG_IRI));
        let graph = chunk.intern(&encoded);
        for quad in &mut chunk.quads {
            debug_assert_eq!(quad[3], DEFAULT_GRAPH);
            quad[3] = graph;
        }
    }
    Some(InsertData { chunk })
}

/// Bodies at least this long are parsed in pieces on the worker threads (about 2,500
/// statements); shorter ones on the caller's thread, leaving the workers to queries.
const PARALLEL_BYTES: usize = 256 << 10;

/// The statements of `body` in one chunk: parsed in pieces of whole lines in parallel when
/// it is long, the pieces' chunks then merged (their terms interned into the first's).
fn parse_body(body: &str) -> Option<Chunk> {
    let pieces = rayon::current_num_threads().min(body.len() / (PARALLEL_BYTES / 2));
    if body.len() < PARALLEL_BYTES || pieces < 2 {
        let mut chunk = Chunk::new();
        parse_lines(body.as_bytes(), Format::NTriples, None, &mut chunk)?;
        return Some(chunk);
    }
    let bytes = body.as_bytes();
    let mut bounds = vec![0];
    for piece in 1..pieces {
        let from = (body.len() * piece / pieces).max(*bounds.last()?);
        let end = bytes[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(body.len(), |i| from + i + 1);
        bounds.push(end);
    }
    bounds.push(body.len());
    let chunks: Vec<Chunk> = bounds
        .par_windows(2)
        .map(|range| {
            let mut chunk = Chunk::new();
            parse_lines(
                &bytes[range[0]..range[1]],
                Format::NTriples,
                None,
                &mut chunk,
            )?;
            Some(chunk)
        })
        .collect::<Option<_>>()?;
    let mut chunks = chunks.into_iter();
    let mut merged = chunks.next()?;
    for chunk in chunks {
        let ids: Vec<u32> = (0..chunk.spans.len() as u32)
            .map(|id| merged.intern(chunk.open_term(id)))
            .collect();
        let id = |local: u32| match local {
            DEFAULT_GRAPH => DEFAULT_GRAPH,
            local => ids[local as usize],
        };
        merged.quads.extend(
            chunk
                .quads
                .iter()
                .map(|q| [id(q[0]), id(q[1]), id(q[2]), id(q[3])]),
        );
    }
    Some(merged)
}

/// `text` after leading whitespace and the keyword `word` (any case) and at least one
/// whitespace character or a `{`/`<` that ends it.
fn keyword<'t>(text: &'t str, word: &str) -> Option<&'t str> {
    let text = text.trim_start();
    let head = text.get(..word.len())?;
    if !head.eq_ignore_ascii_case(word) {
        return None;
    }
    let rest = &text[word.len()..];
    match rest.chars().next() {
        Some(c) if c.is_whitespace() || c == '{' || c == '<' => Some(rest),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(data: &InsertData) -> Vec<[Vec<u8>; 4]> {
        let chunk = &data.chunk;
        chunk
            .quads
            .iter()
            .map(|q| {
                let graph = if q[3] == DEFAULT_GRAPH {
                    Vec::new()
                } else {
                    chunk.term(q[3]).to_vec()
                };
                [
                    chunk.term(q[0]).to_vec(),
                    chunk.term(q[1]).to_vec(),
                    chunk.term(q[2]).to_vec(),
                    graph,
                ]
            })
            .collect()
    }

    #[test]
    fn reads_n_triples_bodies_in_the_default_graph_and_in_one_graph() {
        let data = parse_insert_data(
            "insert data {\n<http://x/s> <http://x/p> \"o\\n\"@EN .\n<http://x/s> <http://x/p> <http://x/o> . # c\n}",
        )
        .expect("fast path");
        assert_eq!(data.chunk.quads.len(), 2);
        assert!(terms(&data).iter().all(|q| q[3].is_empty()));
        let data =
            parse_insert_data("INSERT DATA{GRAPH<http://x/g>{<http://x/s> <http://x/p> \"1\" .}}")
                .expect("fast path");
        let quads = terms(&data);
        assert_eq!(quads.len(), 1);
        assert_eq!(quads[0][3][0], TAG_IRI);
    }

    #[test]
    fn a_long_body_parsed_in_pieces_reads_like_one_piece() {
        // Subjects and objects recur across the whole body, so the pieces share terms.
        let mut body = String::new();
        for n in 0..16_000 {
            body.push_str(&format!(
                "<http://x/s{}> <http://x/p{}> \"v{}\"@en .\n",
                n % 1_500,
                n % 7,
                n % 2_500
            ));
        }
        assert!(body.len() > 2 * PARALLEL_BYTES);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let data = pool
            .install(|| parse_insert_data(&format!("INSERT DATA {{\n{body}}}")))
            .expect("fast path");
        let mut whole = Chunk::new();
        parse_lines(body.as_bytes(), Format::NTriples, None, &mut whole).unwrap();
        let whole = InsertData { chunk: whole };
        assert_eq!(terms(&data), terms(&whole));
        assert_eq!(data.chunk.spans.len(), whole.chunk.spans.len());
        assert_eq!(data.chunk.quads.len(), 16_000);
    }

    #[test]
    fn leaves_everything_else_to_the_sparql_parser() {
        for text in [
            "PREFIX x: <http://x/> INSERT DATA { x:s x:p x:o }",
            "INSERT DATA { <http://x/s> <http://x/p> 1 . }",
            "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> ; <http://x/q> <http://x/o> . }",
            "INSERT DATA { _:b <http://x/p> <http://x/o> . }",
            "INSERT DATA { <s> <http://x/p> <http://x/o> . }",
            "INSERT DATA { <http://x/s> <http://x/p> \"}\" . }",
            "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> . } ; INSERT DATA { <http://x/s> <http://x/p> <http://x/o> . }",
            "INSERT DATA { GRAPH <http://x/g> { <http://x/s> <http://x/p> <http://x/o> . } GRAPH <http://x/h> { <http://x/s> <http://x/p> <http://x/o> . } }",
            "DELETE DATA { <http://x/s> <http://x/p> <http://x/o> . }",
            "INSERTDATA { <http://x/s> <http://x/p> <http://x/o> . }",
            "INSERT DATA { <http://x/s> <http://x/p> <http://x/o> }",
        ] {
            assert!(parse_insert_data(text).is_none(), "{text}");
        }
    }
}
