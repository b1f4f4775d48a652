//! SPARQL results in CSV, which `sparesults` writes but does not read: a small reader
//! (RFC 4180 quoting) and the round trip of actual answers through the serializer. CSV
//! loses term kinds, so both sides become rows of plain strings, except `_:` cells, which
//! stay blank nodes so that they compare up to relabelling.

use oxrdf::{BlankNode, Term, Variable};
use sparesults::{QueryResultsFormat, QueryResultsSerializer};

use crate::answer::{plain, Answer, Row};

/// Reads CSV results (a header of variable names, then one line per solution; an empty
/// cell is unbound).
pub fn parse(text: &str) -> Result<Answer, String> {
    let mut lines = records(text)?.into_iter();
    let header = lines.next().ok_or("empty CSV results")?;
    let variables = header
        .iter()
        .map(|name| Variable::new(name.trim()).map_err(|e| format!("CSV header: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rows = Vec::new();
    for record in lines {
        if record.len() == 1 && record[0].is_empty() && variables.len() != 1 {
            continue;
        }
        if record.len() != variables.len() {
            return Err(format!(
                "CSV line has {} cells for {} variables",
                record.len(),
                variables.len()
            ));
        }
        let row: Row = record.iter().map(|cell| cell_term(cell)).collect();
        rows.push(row);
    }
    Ok(Answer::Solutions { variables, rows })
}

fn cell_term(cell: &str) -> Option<Term> {
    if cell.is_empty() {
        None
    } else if let Some(label) = cell.strip_prefix("_:") {
        BlankNode::new(label)
            .ok()
            .map(Term::from)
            .or(Some(plain(cell)))
    } else {
        Some(plain(cell))
    }
}

/// Splits CSV text into records of unquoted cells. Line ends may be `\r\n` or `\n`.
fn records(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut cell = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') if cell.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => cell.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted CSV cell".into());
    }
    if !cell.is_empty() || !record.is_empty() {
        record.push(cell);
        records.push(record);
    }
    Ok(records)
}

/// Writes solutions as CSV with `sparesults` and reads them back, as the expected side is.
pub fn round_trip(answer: &Answer) -> Result<Answer, String> {
    let Answer::Solutions { variables, rows } = answer else {
        return Err("CSV results need a SELECT query".into());
    };
    let mut serializer = QueryResultsSerializer::from_format(QueryResultsFormat::Csv)
        .serialize_solutions_to_writer(Vec::new(), variables.clone())
        .map_err(|e| e.to_string())?;
    for row in rows {
        let bound = variables
            .iter()
            .zip(row)
            .filter_map(|(v, t)| t.as_ref().map(|t| (v.as_ref(), t.as_ref())));
        serializer.serialize(bound).map_err(|e| e.to_string())?;
    }
    let bytes = serializer.finish().map_err(|e| e.to_string())?;
    parse(&String::from_utf8(bytes).map_err(|e| e.to_string())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_cells_and_unbound_values() {
        let answer = parse("a,b\r\n\"x,\"\"y\"\"\",\r\n_:b1,2\r\n").unwrap();
        let Answer::Solutions { variables, rows } = answer else {
            panic!("not solutions")
        };
        assert_eq!(
            variables,
            vec![Variable::new_unchecked("a"), Variable::new_unchecked("b")]
        );
        assert_eq!(rows[0], vec![Some(plain("x,\"y\"")), None]);
        assert_eq!(
            rows[1],
            vec![
                Some(BlankNode::new_unchecked("b1").into()),
                Some(plain("2"))
            ]
        );
    }
}
