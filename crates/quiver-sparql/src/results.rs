//! Serializing results: SPARQL JSON/XML/TSV via `sparesults`, CSV solutions here (RFC 4180
//! quoting of every field, IRIs included, which `sparesults` writes bare), graphs via
//! `oxrdfio`.
//!
//! Rows are decoded and written one at a time, so a large result is never held as text.

use std::io::Write;

use oxrdf::{TermRef, Variable};
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
        QueryResults::Solutions(solutions) if format == ResultsFormat::Csv => {
            let mut csv = CsvSolutionsWriter::start(writer, &solutions.variables)?;
            for row in 0..solutions.len() {
                let values = solutions.row(row);
                csv.write_row(
                    values
                        .iter()
                        .map(|value| value.as_ref().map(|t| t.as_ref())),
                )?;
            }
            Ok(csv.finish())
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

/// Writes solutions as SPARQL 1.1 CSV: a header of variable names, then one line per
/// solution (CRLF line ends); IRIs bare, literals by their lexical form, blank nodes as
/// `_:label`, unbound as an empty field. A field holding `,`, `"`, CR or LF is quoted, its
/// quotes doubled (RFC 4180).
pub struct CsvSolutionsWriter<W: Write> {
    writer: W,
    line: String,
}

impl<W: Write> CsvSolutionsWriter<W> {
    /// Writes the header.
    pub fn start(mut writer: W, variables: &[Variable]) -> std::io::Result<Self> {
        let mut line = String::new();
        for (i, variable) in variables.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_field(&mut line, variable.as_str());
        }
        line.push_str("\r\n");
        writer.write_all(line.as_bytes())?;
        Ok(Self { writer, line })
    }

    /// Writes one solution: a value (or `None` for unbound) per variable, in order.
    pub fn write_row<'t>(
        &mut self,
        values: impl IntoIterator<Item = Option<TermRef<'t>>>,
    ) -> std::io::Result<()> {
        self.line.clear();
        for (i, value) in values.into_iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            match value {
                None => {}
                Some(TermRef::NamedNode(iri)) => push_field(&mut self.line, iri.as_str()),
                Some(TermRef::Literal(literal)) => push_field(&mut self.line, literal.value()),
                Some(TermRef::BlankNode(node)) => {
                    push_field(&mut self.line, &format!("_:{}", node.as_str()))
                }
                #[allow(unreachable_patterns)]
                Some(other) => push_field(&mut self.line, &other.to_string()),
            }
        }
        self.line.push_str("\r\n");
        self.writer.write_all(self.line.as_bytes())
    }

    pub fn finish(self) -> W {
        self.writer
    }
}

/// Appends `text` as one CSV field, quoted when it holds a separator, a quote or a line end.
fn push_field(line: &mut String, text: &str) {
    if text.contains([',', '"', '\r', '\n']) {
        line.push('"');
        line.push_str(&text.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(text);
    }
}
