//! CSV results read back by an RFC 4180 reader: every field, IRIs included, survives commas,
//! quotes and line breaks, and each row has one field per variable.

use crate::support;

use oxrdf::Term;
use quiver_sparql::{prepare, write_results, ExecOptions, PrepareOptions, ResultsFormat};
use quiver_store::Store;

const DATA: &str = r#"<http://x/s,1> <http://x/p> "a, \"quoted\"\nvalue" .
_:b1 <http://x/p> "plain" .
<http://x/s2> <http://x/p> <http://x/o,q> .
"#;

/// Parses RFC 4180 text (fields separated by `,`, records by CRLF, quoted fields with
/// doubled quotes) into records.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' => {
                assert!(
                    field.is_empty(),
                    "a quote inside an unquoted field: {text:?}"
                );
                quoted = true;
            }
            ',' => record.push(std::mem::take(&mut field)),
            '\r' => {
                assert_eq!(chars.next(), Some('\n'), "CR without LF: {text:?}");
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            '\n' => panic!("a bare LF outside quotes: {text:?}"),
            c => field.push(c),
        }
    }
    assert!(!quoted, "an unterminated quote: {text:?}");
    assert!(
        field.is_empty() && record.is_empty(),
        "no CRLF after the last record: {text:?}"
    );
    records
}

/// The CSV value of a term by SPARQL 1.1 CSV's rules (before quoting).
fn csv_value(term: &Term) -> String {
    match term {
        Term::NamedNode(n) => n.as_str().to_owned(),
        Term::BlankNode(b) => format!("_:{}", b.as_str()),
        Term::Literal(l) => l.value().to_owned(),
        Term::Triple(t) => format!(
            "{} {} {}",
            csv_value(&t.subject.clone().into()),
            t.predicate.as_str(),
            csv_value(&t.object)
        ),
    }
}

/// The query's CSV, parsed, and the solutions it came from as CSV values.
fn csv_and_expected(store: &Store, query: &str) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let prepared = prepare(store, query, &PrepareOptions::default()).unwrap();
    let results = prepared.execute(store, &ExecOptions::default()).unwrap();
    let quiver_sparql::QueryResults::Solutions(solutions) = &results else {
        panic!("{query}: not solutions");
    };
    let mut expected = vec![solutions
        .variables
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect::<Vec<_>>()];
    for row in 0..solutions.len() {
        expected.push(
            solutions
                .row(row)
                .iter()
                .map(|t| t.as_ref().map(csv_value).unwrap_or_default())
                .collect(),
        );
    }
    let bytes = write_results(&results, ResultsFormat::Csv, Vec::new()).unwrap();
    (parse_csv(&String::from_utf8(bytes).unwrap()), expected)
}

#[test]
fn an_iri_with_a_comma_stays_one_field() {
    let store = support::load(DATA);
    let (csv, _) = csv_and_expected(
        &store,
        "SELECT * WHERE { VALUES ?i { <http://e,ample!.o_:/zed> } }",
    );
    assert_eq!(
        csv,
        [
            vec!["i".to_owned()],
            vec!["http://e,ample!.o_:/zed".to_owned()]
        ]
    );
}

#[test]
fn every_field_reads_back_as_written() {
    let store = support::load(DATA);
    let query = "SELECT ?s ?o ?missing WHERE { ?s <http://x/p> ?o OPTIONAL { ?s <http://x/none> ?missing } }";
    let (csv, expected) = csv_and_expected(&store, query);
    assert_eq!(csv.len(), 4, "a header and three rows: {csv:?}");
    let mut rows = csv.clone();
    let mut wanted = expected.clone();
    rows[1..].sort();
    wanted[1..].sort();
    assert_eq!(rows, wanted);
    // The hard cases are there: a comma in an IRI, quotes and a line break in a literal,
    // a second such IRI as an object, a blank node, an unbound value.
    let fields: Vec<&str> = csv[1..].iter().flatten().map(String::as_str).collect();
    for needle in [
        "http://x/s,1",
        "a, \"quoted\"\nvalue",
        "http://x/o,q",
        "plain",
    ] {
        assert!(fields.contains(&needle), "{needle:?} missing from {csv:?}");
    }
    assert!(fields.iter().any(|f| f.starts_with("_:")), "{csv:?}");
    assert!(csv[1..].iter().all(|row| row[2].is_empty()), "{csv:?}");
}
