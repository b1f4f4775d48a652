//! Queries: bytes → SPARQL text → prepare and execute on a small fixed store.
//!
//! [`query`] runs any text under a short timeout, a row limit and a memory limit: an error
//! is fine, a panic is not. For queries in a fragment whose answers are exactly defined
//! (basic graph patterns, property paths, joins, OPTIONAL without a condition, UNION,
//! MINUS, VALUES, projection, DISTINCT; no expressions, no ordering or slicing, a few
//! patterns) the bag of rows must equal Oxigraph's on the same data.
//!
//! [`results`] serializes a query's results to each tabular format and reads them back:
//! JSON, XML and TSV through `sparesults` must give the same rows in the same order; CSV,
//! which `sparesults` cannot read (it is lossy), is parsed here and each field compared
//! with the term's lexical form.

use std::sync::OnceLock;
use std::time::Duration;

use oxrdf::{GraphNameRef, Term};
use quiver_sparql::{
    prepare, write_results, ExecOptions, PrepareOptions, QueryResults, ResultsFormat,
};
use quiver_store::Store;
use spargebra::algebra::GraphPattern;
use spargebra::{Query, SparqlParser};

/// The fixed data: a few dozen triples with IRIs and literals of several kinds.
pub const DATA: &str = r#"
<http://example.org/alice> <http://xmlns.com/foaf/0.1/name> "Alice" .
<http://example.org/alice> <http://xmlns.com/foaf/0.1/age> "31"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/alice> <http://xmlns.com/foaf/0.1/knows> <http://example.org/bob> .
<http://example.org/alice> <http://xmlns.com/foaf/0.1/knows> <http://example.org/carol> .
<http://example.org/alice> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://xmlns.com/foaf/0.1/Person> .
<http://example.org/alice> <http://example.org/height> "1.68"^^<http://www.w3.org/2001/XMLSchema#decimal> .
<http://example.org/bob> <http://xmlns.com/foaf/0.1/name> "Bob"@en .
<http://example.org/bob> <http://xmlns.com/foaf/0.1/name> "Robert"@fr .
<http://example.org/bob> <http://xmlns.com/foaf/0.1/age> "25"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/bob> <http://xmlns.com/foaf/0.1/knows> <http://example.org/carol> .
<http://example.org/bob> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://xmlns.com/foaf/0.1/Person> .
<http://example.org/bob> <http://example.org/height> "1.8"^^<http://www.w3.org/2001/XMLSchema#double> .
<http://example.org/carol> <http://xmlns.com/foaf/0.1/name> "Carol" .
<http://example.org/carol> <http://xmlns.com/foaf/0.1/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://example.org/carol> <http://xmlns.com/foaf/0.1/knows> <http://example.org/dave> .
<http://example.org/carol> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Student> .
<http://example.org/carol> <http://example.org/note> "line one\nline \"two\"\ttab, comma" .
<http://example.org/dave> <http://xmlns.com/foaf/0.1/name> "Dave" .
<http://example.org/dave> <http://xmlns.com/foaf/0.1/knows> <http://example.org/alice> .
<http://example.org/dave> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Student> .
<http://example.org/dave> <http://example.org/member> <http://example.org/club> .
<http://example.org/dave> <http://example.org/active> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .
<http://example.org/club> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Club> .
<http://example.org/club> <http://example.org/label> "Chess club"@en .
<http://example.org/club> <http://example.org/founded> "1999-05-01"^^<http://www.w3.org/2001/XMLSchema#date> .
<http://example.org/club> <http://example.org/member> <http://example.org/alice> .
<http://example.org/club> <http://example.org/member> <http://example.org/bob> .
<http://example.org/Student> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://xmlns.com/foaf/0.1/Person> .
<http://xmlns.com/foaf/0.1/Person> <http://www.w3.org/2000/01/rdf-schema#label> "Person" .
<http://example.org/eve> <http://xmlns.com/foaf/0.1/knows> <http://example.org/eve> .
<http://example.org/eve> <http://example.org/weird> "é ü 中 \u0001" .
<http://example.org/eve> <http://example.org/empty> "" .
"#;

struct Fixture {
    store: Store,
    oxigraph: oxigraph::store::Store,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let triples: Vec<oxrdf::Triple> = oxttl::NTriplesParser::new()
            .for_slice(DATA)
            .collect::<Result<_, _>>()
            .expect("the fixture parses");
        let quads = triples
            .iter()
            .map(|t| t.clone().in_graph(oxrdf::GraphName::DefaultGraph));
        let (store, _) = quiver_loader::load_quads(quads, None).expect("the fixture loads");
        assert_eq!(store.triples(), triples.len() as u64);
        let oxigraph = oxigraph::store::Store::new().expect("an in-memory Oxigraph store");
        for t in &triples {
            oxigraph
                .insert(t.as_ref().in_graph(GraphNameRef::DefaultGraph))
                .expect("Oxigraph inserts");
        }
        Fixture { store, oxigraph }
    })
}

/// The limits every fuzzed query runs under.
fn options() -> ExecOptions {
    ExecOptions {
        threads: 1,
        timeout: Some(Duration::from_millis(500)),
        max_results: Some(2000),
        max_memory: Some(64 << 20),
        ..ExecOptions::default()
    }
}

/// Runs the query text in `data` on the fixture; compares with Oxigraph where exact.
pub fn query(data: &[u8]) {
    let Some(text) = text_of(data) else { return };
    let fixture = fixture();
    let Ok(prepared) = prepare(&fixture.store, text, &PrepareOptions::default()) else {
        return;
    };
    let Ok(results) = prepared.execute(&fixture.store, &options()) else {
        return;
    };
    let QueryResults::Solutions(solutions) = &results else {
        return;
    };
    let Some(as_sets) = comparable(text) else {
        return;
    };
    let variables: Vec<String> = solutions
        .variables
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect();
    let mut ours: Vec<String> = (0..solutions.len())
        .map(|r| render(&solutions.row(r)))
        .collect();
    let reference = oxigraph::sparql::SparqlEvaluator::new()
        .without_optimizations()
        .parse_query(text)
        .map(|q| q.on_store(&fixture.oxigraph).execute());
    let Ok(Ok(oxigraph::sparql::QueryResults::Solutions(theirs))) = reference else {
        return;
    };
    let Ok(mut theirs) = theirs
        .map(|s| {
            s.map(|s| {
                render(
                    &variables
                        .iter()
                        .map(|v| s.get(v.as_str()).cloned())
                        .collect::<Vec<_>>(),
                )
            })
        })
        .collect::<Result<Vec<String>, _>>()
    else {
        return;
    };
    ours.sort();
    theirs.sort();
    if as_sets {
        ours.dedup();
        theirs.dedup();
    }
    assert_eq!(ours, theirs, "Quiver and Oxigraph disagree on\n{text}");
}

/// Serializes the results of the query in `data` to each tabular format and reads them
/// back.
pub fn results(data: &[u8]) {
    let Some(text) = text_of(data) else { return };
    let fixture = fixture();
    let Ok(prepared) = prepare(&fixture.store, text, &PrepareOptions::default()) else {
        return;
    };
    let Ok(results) = prepared.execute(&fixture.store, &options()) else {
        return;
    };
    let expected = match &results {
        QueryResults::Solutions(solutions) => Expected::Rows(
            solutions
                .variables
                .iter()
                .map(|v| v.as_str().to_owned())
                .collect(),
            (0..solutions.len()).map(|r| solutions.row(r)).collect(),
        ),
        QueryResults::Boolean(value) => Expected::Boolean(*value),
        QueryResults::Graph(_) => return,
    };
    for (format, parser) in [
        (ResultsFormat::Json, sparesults::QueryResultsFormat::Json),
        (ResultsFormat::Xml, sparesults::QueryResultsFormat::Xml),
        (ResultsFormat::Tsv, sparesults::QueryResultsFormat::Tsv),
    ] {
        let bytes = write_results(&results, format, Vec::new()).expect("writing to memory");
        let parsed = sparesults::QueryResultsParser::from_format(parser)
            .for_slice(&bytes)
            .unwrap_or_else(|e| panic!("{format:?} output does not parse: {e}\n{}", lossy(&bytes)));
        let found = match parsed {
            sparesults::SliceQueryResultsParserOutput::Boolean(value) => Expected::Boolean(value),
            sparesults::SliceQueryResultsParserOutput::Solutions(solutions) => {
                let variables: Vec<String> = solutions
                    .variables()
                    .iter()
                    .map(|v| v.as_str().to_owned())
                    .collect();
                let rows = solutions
                    .map(|s| {
                        let s = s.unwrap_or_else(|e| {
                            panic!("{format:?} output does not parse: {e}\n{}", lossy(&bytes))
                        });
                        variables
                            .iter()
                            .map(|v| s.get(v.as_str()).cloned())
                            .collect()
                    })
                    .collect();
                Expected::Rows(variables, rows)
            }
        };
        assert_eq!(
            found,
            expected,
            "{format:?} round trip of\n{text}\n{}",
            lossy(&bytes)
        );
    }
    let csv = write_results(&results, ResultsFormat::Csv, Vec::new()).expect("writing to memory");
    check_csv(&csv, &expected, text);
}

#[derive(Debug, PartialEq)]
enum Expected {
    Rows(Vec<String>, Vec<Vec<Option<Term>>>),
    Boolean(bool),
}

/// The query text of a fuzz input: UTF-8, not too long.
fn text_of(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok().filter(|t| t.len() <= 4096)
}

fn render(row: &[Option<Term>]) -> String {
    row.iter()
        .map(|t| t.as_ref().map_or("UNBOUND".to_owned(), Term::to_string))
        .collect::<Vec<_>>()
        .join(" ")
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `text` is a SELECT in the exactly defined fragment, small enough for Oxigraph's
/// unoptimised evaluation to finish quickly; `Some(true)` when it has a property path,
/// whose answers are then compared as sets: SPARQL defines `P|Q` and `P/Q` as a union and a
/// join of bags (duplicates count), Oxigraph evaluates every path as a set.
fn comparable(text: &str) -> Option<bool> {
    let Ok(Query::Select {
        dataset: None,
        pattern,
        ..
    }) = SparqlParser::new().parse_query(text)
    else {
        return None;
    };
    let mut patterns = 0;
    let mut paths = false;
    (exact(&pattern, &mut patterns, &mut paths) && patterns <= 4).then_some(paths)
}

fn exact(pattern: &GraphPattern, patterns: &mut usize, paths: &mut bool) -> bool {
    match pattern {
        GraphPattern::Bgp { patterns: bgp } => {
            *patterns += bgp.len();
            true
        }
        GraphPattern::Path { .. } => {
            *patterns += 1;
            *paths = true;
            true
        }
        GraphPattern::Join { left, right }
        | GraphPattern::Union { left, right }
        | GraphPattern::Minus { left, right }
        | GraphPattern::LeftJoin {
            left,
            right,
            expression: None,
        } => exact(left, patterns, paths) && exact(right, patterns, paths),
        GraphPattern::Project { inner, .. } | GraphPattern::Distinct { inner } => {
            exact(inner, patterns, paths)
        }
        GraphPattern::Values { .. } => true,
        _ => false,
    }
}

/// Reads CSV (RFC 4180: quoted fields may hold commas, quotes and line breaks) and checks
/// it against the rows: header = variables, each field = the term's CSV form.
fn check_csv(bytes: &[u8], expected: &Expected, text: &str) {
    let Expected::Rows(variables, rows) = expected else {
        return;
    };
    let csv = std::str::from_utf8(bytes).expect("CSV output is UTF-8");
    let records =
        parse_csv(csv).unwrap_or_else(|e| panic!("CSV output is malformed ({e}):\n{csv}"));
    let mut want = vec![variables.clone()];
    want.extend(rows.iter().map(|row| {
        row.iter()
            .map(|t| t.as_ref().map_or_else(String::new, csv_value))
            .collect()
    }));
    // A table of one column whose only field is empty is written as an empty line.
    let want: Vec<Vec<String>> = want
        .into_iter()
        .map(|r| if r == [String::new()] { Vec::new() } else { r })
        .collect();
    let records: Vec<Vec<String>> = records
        .into_iter()
        .map(|r| if r == [String::new()] { Vec::new() } else { r })
        .collect();
    if variables.is_empty() {
        return;
    }
    assert_eq!(records, want, "CSV of\n{text}\n{csv}");
}

fn parse_csv(text: &str) -> Result<Vec<Vec<String>>, String> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
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
            '"' if field.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            ',' => {
                record.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                was_quoted = false;
            }
            '"' => return Err("a quote inside an unquoted field".into()),
            c => field.push(c),
        }
    }
    if quoted {
        return Err("an unterminated quoted field".into());
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        records.push(record);
    }
    Ok(records)
}

/// The CSV value of a term (before quoting), as SPARQL 1.1 CSV and `sparesults` write it:
/// a triple term as its three terms' values, space separated.
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
