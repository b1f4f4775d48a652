//! Query answers in one shape for comparison: expected ones parsed from the suite's result
//! files (SPARQL XML/JSON/TSV results through `sparesults`, the DAWG result-set vocabulary
//! of SPARQL 1.0 tests; [`crate::expected`] picks the reader by extension, CSV through
//! [`crate::csv`]), actual ones taken from the engine's [`QueryResults`].

use oxrdf::vocab::{rdf, xsd};
use oxrdf::{Graph, Literal, NamedNodeRef, NamedOrBlankNodeRef, Term, TermRef, Triple, Variable};
use quiver_sparql::QueryResults;
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};

/// One solution: a value (or nothing) per variable, in the order of its variable list.
pub type Row = Vec<Option<Term>>;

/// The answer to a query.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Boolean(bool),
    Solutions {
        variables: Vec<Variable>,
        rows: Vec<Row>,
    },
    Graph(Vec<Triple>),
}

macro_rules! rs {
    ($name:literal) => {
        NamedNodeRef::new_unchecked(concat!(
            "http://www.w3.org/2001/sw/DataAccess/tests/result-set#",
            $name
        ))
    };
}

/// Parses SPARQL results in XML, JSON or TSV.
pub fn parse_results(format: QueryResultsFormat, text: &str) -> Result<Answer, String> {
    let parsed = QueryResultsParser::from_format(format)
        .for_slice(text)
        .map_err(|e| e.to_string())?;
    match parsed {
        SliceQueryResultsParserOutput::Boolean(value) => Ok(Answer::Boolean(value)),
        SliceQueryResultsParserOutput::Solutions(solutions) => {
            let variables = solutions.variables().to_vec();
            let mut rows = Vec::new();
            for solution in solutions {
                let solution = solution.map_err(|e| e.to_string())?;
                rows.push(variables.iter().map(|v| solution.get(v).cloned()).collect());
            }
            Ok(Answer::Solutions { variables, rows })
        }
    }
}

/// A result set written in the DAWG result-set vocabulary, if `triples` hold one.
pub(crate) fn result_set(triples: &[Triple]) -> Option<Answer> {
    let graph: Graph = triples.iter().collect();
    let set = graph.subject_for_predicate_object(rdf::TYPE, rs!("ResultSet"))?;
    if let Some(TermRef::Literal(value)) = graph.object_for_subject_predicate(set, rs!("boolean")) {
        return Some(Answer::Boolean(value.value() == "true"));
    }
    let mut variables: Vec<Variable> = graph
        .objects_for_subject_predicate(set, rs!("resultVariable"))
        .filter_map(|t| match t {
            TermRef::Literal(l) => Variable::new(l.value()).ok(),
            _ => None,
        })
        .collect();
    variables.sort_by(|a, b| a.as_str().cmp(b.as_str()));
    let mut indexed = Vec::new();
    for solution in graph.objects_for_subject_predicate(set, rs!("solution")) {
        let solution = as_subject(solution)?;
        let mut row: Row = vec![None; variables.len()];
        for binding in graph.objects_for_subject_predicate(solution, rs!("binding")) {
            let binding = as_subject(binding)?;
            let variable = match graph.object_for_subject_predicate(binding, rs!("variable")) {
                Some(TermRef::Literal(l)) => l.value().to_owned(),
                _ => continue,
            };
            let value = graph.object_for_subject_predicate(binding, rs!("value"));
            if let Some(column) = variables.iter().position(|v| v.as_str() == variable) {
                row[column] = value.map(TermRef::into_owned);
            }
        }
        let index = match graph.object_for_subject_predicate(solution, rs!("index")) {
            Some(TermRef::Literal(l)) => l.value().parse::<i64>().ok(),
            _ => None,
        };
        indexed.push((index, row));
    }
    // Solutions with an rs:index come in that order (they are all indexed when any is).
    indexed.sort_by_key(|(index, _)| *index);
    let rows = indexed.into_iter().map(|(_, row)| row).collect();
    Some(Answer::Solutions { variables, rows })
}

fn as_subject(term: TermRef<'_>) -> Option<NamedOrBlankNodeRef<'_>> {
    match term {
        TermRef::NamedNode(n) => Some(n.into()),
        TermRef::BlankNode(b) => Some(b.into()),
        _ => None,
    }
}

/// The engine's answer in comparable form.
pub fn from_results(results: QueryResults<'_>) -> Answer {
    match results {
        QueryResults::Boolean(value) => Answer::Boolean(value),
        QueryResults::Graph(mut triples) => {
            crate::files::dedup(&mut triples);
            Answer::Graph(triples)
        }
        QueryResults::Solutions(solutions) => {
            let rows = (0..solutions.len()).map(|r| solutions.row(r)).collect();
            Answer::Solutions {
                variables: solutions.variables.to_vec(),
                rows,
            }
        }
    }
}

/// Upper-cases the exponent marker of `xsd:double` literals. TSV writes numbers in short
/// form and the suite's TSV files spell `1.0E6` as `1.0e6`: the exponent's case is no part
/// of the value, only of the writer's style, so TSV comparisons ignore it.
pub fn normalize_double_exponents(answer: &mut Answer) {
    let Answer::Solutions { rows, .. } = answer else {
        return;
    };
    for term in rows.iter_mut().flatten().flatten() {
        *term = upper_exponent(term);
    }
}

/// `term` with the exponent marker of an `xsd:double` upper-cased, inside triple terms too.
fn upper_exponent(term: &Term) -> Term {
    match term {
        Term::Literal(literal)
            if literal.datatype() == xsd::DOUBLE && literal.value().contains('e') =>
        {
            let value = literal.value().replace('e', "E");
            Literal::new_typed_literal(value, xsd::DOUBLE).into()
        }
        Term::Triple(triple) => Triple::new(
            triple.subject.clone(),
            triple.predicate.clone(),
            upper_exponent(&triple.object),
        )
        .into(),
        Term::NamedNode(_) | Term::BlankNode(_) | Term::Literal(_) => term.clone(),
    }
}

/// A plain string term, as CSV cells read back.
pub fn plain(text: &str) -> Term {
    Literal::new_simple_literal(text).into()
}

#[cfg(test)]
mod tests {
    use oxrdf::{BlankNode, Literal, NamedNode};

    use super::*;

    #[test]
    fn reads_a_result_set_graph_in_index_order() {
        let text = r#"
            @prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .
            [] a rs:ResultSet ; rs:resultVariable "x", "y" ;
               rs:solution [ rs:index 2 ; rs:binding [ rs:variable "x" ; rs:value <http://e/b> ] ] ;
               rs:solution [ rs:index 1 ; rs:binding [ rs:variable "x" ; rs:value <http://e/a> ] ,
                                                     [ rs:variable "y" ; rs:value 7 ] ] .
        "#;
        let triples: Vec<Triple> = oxttl::TurtleParser::new()
            .for_slice(text)
            .map(|t| t.unwrap())
            .collect();
        let Some(Answer::Solutions { variables, rows }) = result_set(&triples) else {
            panic!("no result set")
        };
        assert_eq!(
            variables,
            vec![Variable::new_unchecked("x"), Variable::new_unchecked("y")]
        );
        let a: Term = NamedNode::new_unchecked("http://e/a").into();
        let b: Term = NamedNode::new_unchecked("http://e/b").into();
        assert_eq!(
            rows,
            vec![
                vec![Some(a), Some(Literal::from(7).into())],
                vec![Some(b), None]
            ]
        );
        let plain_graph = vec![Triple::new(
            BlankNode::default(),
            NamedNode::new_unchecked("http://e/p"),
            Literal::from(1),
        )];
        assert_eq!(result_set(&plain_graph), None);
    }

    #[test]
    fn results_files_read_triple_terms() {
        let expected: Term = Triple::new(
            NamedNode::new_unchecked("http://e/s"),
            NamedNode::new_unchecked("http://e/p"),
            Triple::new(
                BlankNode::new_unchecked("b"),
                NamedNode::new_unchecked("http://e/q"),
                Literal::new_simple_literal("o"),
            ),
        )
        .into();
        let json = r#"{"head":{"vars":["t"]},"results":{"bindings":[{"t":{"type":"triple",
            "value":{"subject":{"type":"uri","value":"http://e/s"},
                     "predicate":{"type":"uri","value":"http://e/p"},
                     "object":{"type":"triple","value":{
                        "subject":{"type":"bnode","value":"b"},
                        "predicate":{"type":"uri","value":"http://e/q"},
                        "object":{"type":"literal","value":"o"}}}}}}]}}"#;
        let xml = r#"<?xml version="1.0"?>
            <sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="t"/></head>
            <results><result><binding name="t"><triple>
              <subject><uri>http://e/s</uri></subject><predicate><uri>http://e/p</uri></predicate>
              <object><triple><subject><bnode>b</bnode></subject>
                <predicate><uri>http://e/q</uri></predicate><object><literal>o</literal></object>
              </triple></object>
            </triple></binding></result></results></sparql>"#;
        let tsv = "?t\n<<( <http://e/s> <http://e/p> <<( _:b <http://e/q> \"o\" )>> )>>\n";
        for (format, text) in [
            (QueryResultsFormat::Json, json),
            (QueryResultsFormat::Xml, xml),
            (QueryResultsFormat::Tsv, tsv),
        ] {
            let answer = parse_results(format, text).unwrap_or_else(|e| panic!("{format}: {e}"));
            let Answer::Solutions { rows, .. } = answer else {
                panic!("{format}: not solutions")
            };
            assert_eq!(rows, vec![vec![Some(expected.clone())]], "{format}");
        }
    }

    #[test]
    fn tsv_double_exponents_compare_regardless_of_case() {
        let double = |v: &str| Some(Literal::new_typed_literal(v, xsd::DOUBLE).into());
        let mut answer = Answer::Solutions {
            variables: vec![Variable::new_unchecked("o")],
            rows: vec![vec![double("1.0e6")]],
        };
        normalize_double_exponents(&mut answer);
        let Answer::Solutions { rows, .. } = answer else {
            unreachable!()
        };
        assert_eq!(rows, vec![vec![double("1.0E6")]]);
    }
}
