//! Serializing results: solutions in SPARQL JSON, XML, TSV and CSV straight from the id
//! columns (`stream.rs`), CSV a row of terms at a time for callers holding terms
//! (`csv.rs`), booleans via `sparesults`, graphs via `oxrdfio`; a result's rows handed out
//! in the writers' chunks to callers decoding them into forms of their own
//! (`row_chunks.rs`).
//!
//! Rows are written as they are decoded, so a large result is never held as text.

mod chunks;
mod csv;
mod kept_buffers;
mod row_chunks;
mod row_writer;
mod stream;
mod term_cache;
mod term_syntax;

use std::io::Write;

use oxrdfio::{RdfFormat, RdfSerializer};
use sparesults::{QueryResultsFormat, QueryResultsSerializer};

use crate::engine::{QueryResults, Solutions};

pub use chunks::{give_back_chunk, ChunkWriter};
pub use csv::CsvSolutionsWriter;
pub use row_chunks::map_row_chunks;
pub use stream::{
    parallel_chunk_rows, solutions_to_vec, write_solutions, write_solutions_in_chunks,
};
pub use term_syntax::Syntax;

/// The formats `write_results` produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsFormat {
    Json,
    Xml,
    Csv,
    Tsv,
    NTriples,
    Turtle,
    RdfXml,
    /// JSON-LD (expanded, as `oxjsonld` writes it).
    JsonLd,
}

impl ResultsFormat {
    /// Parses a format name (`json`, `xml`, `csv`, `tsv`, `nt`, `ttl`, `rdfxml`, `jsonld`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "json" | "srj" => Self::Json,
            "xml" | "srx" => Self::Xml,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "nt" | "ntriples" | "n-triples" => Self::NTriples,
            "ttl" | "turtle" => Self::Turtle,
            "rdfxml" | "rdf" | "rdf/xml" => Self::RdfXml,
            "jsonld" | "json-ld" => Self::JsonLd,
            _ => return None,
        })
    }

    fn tabular(self) -> Option<QueryResultsFormat> {
        match self {
            Self::Json => Some(QueryResultsFormat::Json),
            Self::Xml => Some(QueryResultsFormat::Xml),
            Self::Csv => Some(QueryResultsFormat::Csv),
            Self::Tsv => Some(QueryResultsFormat::Tsv),
            _ => None,
        }
    }

    /// The tabular syntax of this format (JSON for a graph format).
    pub fn syntax(self) -> Syntax {
        match self {
            Self::Xml => Syntax::Xml,
            Self::Csv => Syntax::Csv,
            Self::Tsv => Syntax::Tsv,
            _ => Syntax::Json,
        }
    }

    fn graph(self) -> RdfFormat {
        match self {
            Self::Turtle => RdfFormat::Turtle,
            Self::RdfXml => RdfFormat::RdfXml,
            Self::JsonLd => RdfFormat::JsonLd {
                profile: oxrdfio::JsonLdProfileSet::empty(),
            },
            _ => RdfFormat::NTriples,
        }
    }
}

/// Writes `results` in `format`. Solutions need a tabular format (JSON, XML, CSV, TSV),
/// graphs an RDF one (the default for graphs is N-Triples when a tabular one is asked).
pub fn write_results<W: Write>(
    results: &QueryResults<'_>,
    format: ResultsFormat,
    writer: W,
) -> std::io::Result<W> {
    match results {
        QueryResults::Boolean(value) => {
            let format = format.tabular().unwrap_or(QueryResultsFormat::Json);
            QueryResultsSerializer::from_format(format).serialize_boolean_to_writer(writer, *value)
        }
        QueryResults::Solutions(solutions) => write_solutions(solutions, format.syntax(), writer),
        QueryResults::Graph(triples) => {
            let graph_format = format.graph();
            if matches!(graph_format, RdfFormat::JsonLd { .. })
                && triples.iter().any(|t| t.object.is_triple())
            {
                // Refused before a byte is written (the serializer would stop midway).
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "JSON-LD has no triple terms (RDF 1.2): ask for Turtle, N-Triples or RDF/XML",
                ));
            }
            let mut serializer = RdfSerializer::from_format(graph_format).for_writer(writer);
            for triple in triples {
                serializer.serialize_triple(triple)?;
            }
            serializer.finish()
        }
    }
}

/// `results` in `format`, as one buffer in memory: the bytes [`write_results`] writes, a
/// large result's chunks copied into place on every thread ([`solutions_to_vec`]).
pub fn results_to_vec(
    results: &QueryResults<'_>,
    format: ResultsFormat,
) -> std::io::Result<Vec<u8>> {
    match results {
        QueryResults::Solutions(solutions) => solutions_to_vec(solutions, format.syntax()),
        other => write_results(other, format, Vec::new()),
    }
}

/// Writes `solutions` the way they were written before [`write_solutions`]: rows decoded
/// into terms ([`Solutions::for_each_row`]) handed to `sparesults` (JSON, XML, TSV) or to
/// [`CsvSolutionsWriter`]. Kept as the reference the streaming writers are checked and
/// timed against.
pub fn write_solutions_reference<W: Write>(
    solutions: &Solutions<'_>,
    syntax: Syntax,
    writer: W,
) -> std::io::Result<W> {
    let mut failure = None;
    if syntax == Syntax::Csv {
        let mut csv = CsvSolutionsWriter::start(writer, &solutions.variables)?;
        solutions.for_each_row(|row| {
            if failure.is_none() {
                failure = csv.write_row(row.iter().copied()).err();
            }
        });
        return failure.map_or(Ok(csv.finish()), Err);
    }
    let format = match syntax {
        Syntax::Xml => QueryResultsFormat::Xml,
        Syntax::Tsv => QueryResultsFormat::Tsv,
        _ => QueryResultsFormat::Json,
    };
    let variables = &solutions.variables;
    let mut serializer = QueryResultsSerializer::from_format(format)
        .serialize_solutions_to_writer(writer, variables.to_vec())?;
    solutions.for_each_row(|row| {
        if failure.is_none() {
            let bound = variables
                .iter()
                .zip(row)
                .filter_map(|(variable, term)| term.map(|term| (variable.as_ref(), term)));
            failure = serializer.serialize(bound).err();
        }
    });
    match failure {
        Some(error) => Err(error),
        None => serializer.finish(),
    }
}
