//! An expected answer read from one of the suite's result files, by its extension: SPARQL
//! XML, JSON and TSV results, CSV ([`crate::csv`]), or an RDF graph (which may hold a
//! result set in the DAWG vocabulary).

use sparesults::QueryResultsFormat;

use crate::answer::{parse_results, result_set, Answer};
use crate::files::{read_text, read_triples};

/// Reads an expected answer from a results file, by extension.
pub fn read_expected(iri: &str) -> Result<Answer, String> {
    let extension = iri.rsplit('.').next().unwrap_or("");
    let format = match extension {
        "srx" => QueryResultsFormat::Xml,
        "srj" => QueryResultsFormat::Json,
        "tsv" => QueryResultsFormat::Tsv,
        "csv" => return crate::csv::parse(&read_text(iri)?),
        _ => {
            let triples = read_triples(iri)?;
            return Ok(result_set(&triples).unwrap_or(Answer::Graph(triples)));
        }
    };
    let text = read_text(iri)?;
    parse_results(format, &text).map_err(|e| format!("{iri}: {e}"))
}
