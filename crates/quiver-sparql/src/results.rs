//! Serializing results: SPARQL JSON/XML/CSV/TSV via `sparesults`, graphs via `oxrdfio`.
//!
//! Rows are decoded and written one at a time, so a large result is never held as text.

use std::io::Write;

use oxrdfio::{RdfFormat, RdfSerializer};
use sparesults::{QueryResultsFormat, QueryResultsSerializer};

use crate::engine::QueryResults;

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
}

impl ResultsFormat {
    /// Parses a format name (`json`, `xml`, `csv`, `tsv`, `nt`, `ttl`, `rdfxml`).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "json" | "srj" => Self::Json,
            "xml" | "srx" => Self::Xml,
            "csv" => Self::Csv,
            "tsv" => Self::Tsv,
            "nt" | "ntriples" | "n-triples" => Self::NTriples,
            "ttl" | "turtle" => Self::Turtle,
            "rdfxml" | "rdf" | "rdf/xml" => Self::RdfXml,
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

    fn graph(self) -> RdfFormat {
        match self {
            Self::Turtle => RdfFormat::Turtle,
            Self::RdfXml => RdfFormat::RdfXml,
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
        QueryResults::Solutions(solutions) => {
            let format = format.tabular().unwrap_or(QueryResultsFormat::Json);
            let mut serializer = QueryResultsSerializer::from_format(format)
                .serialize_solutions_to_writer(writer, solutions.variables.clone())?;
            for row in 0..solutions.len() {
                let values = solutions.row(row);
                serializer.serialize(solutions.variables.iter().zip(&values).filter_map(
                    |(variable, value)| {
                        value
                            .as_ref()
                            .map(|term| (variable.as_ref(), term.as_ref()))
                    },
                ))?;
            }
            serializer.finish()
        }
        QueryResults::Graph(triples) => {
            let mut serializer = RdfSerializer::from_format(format.graph()).for_writer(writer);
            for triple in triples {
                serializer.serialize_triple(triple)?;
            }
            serializer.finish()
        }
    }
}
