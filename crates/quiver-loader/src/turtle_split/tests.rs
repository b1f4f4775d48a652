//! Turtle in pieces against oxttl's sequential parse, on generated documents with
//! prefixes, a base, multi-line statements, multi-line strings and comments that hold
//! statements, late directives and malformed statements.

use oxrdfio::RdfParser;
use proptest::prelude::*;
use quiver_model::decode_term;

use super::*;

/// Statements as decoded text, sorted; anonymous blank nodes (random labels) as `[]`.
fn statements(chunks: &[Chunk]) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in chunks {
        for quad in &chunk.quads {
            let term = |id: u32| {
                let text = decode_term(&chunk.term(id)).unwrap().to_term().to_string();
                match text.strip_prefix("_:") {
                    Some(label) if label.len() > 2 => "[]".to_owned(),
                    _ => text,
                }
            };
            out.push(format!(
                "{} {} {}",
                term(quad[0]),
                term(quad[1]),
                term(quad[2])
            ));
        }
    }
    out.sort();
    out
}

/// The sequential parse (as the loader's oxttl path), or `None` on any error.
fn sequential(text: &str) -> Option<Vec<String>> {
    let mut chunk = Chunk::new();
    for quad in RdfParser::from_format(oxrdfio::RdfFormat::Turtle).for_slice(text.as_bytes()) {
        chunk.add_quad(quad.ok()?, None).ok()?;
    }
    Some(statements(&[chunk]))
}

fn check(text: &str, piece_bytes: usize) -> Result<bool, TestCaseError> {
    let pieces = parse_in_pieces(text.as_bytes(), 4, None, piece_bytes);
    match (pieces, sequential(text)) {
        (None, _) => Ok(false),
        (Some(_), None) => {
            prop_assert!(false, "pieces accepted what oxttl refuses:\n{text}");
            unreachable!()
        }
        (Some(pieces), Some(reference)) => {
            let count: u64 = pieces.iter().map(|(_, n)| n).sum();
            prop_assert_eq!(count as usize, reference.len());
            let chunks: Vec<Chunk> = pieces.into_iter().map(|(chunk, _)| chunk).collect();
            prop_assert_eq!(statements(&chunks), reference, "{}", text);
            Ok(true)
        }
    }
}

fn node() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (0..20u8).prop_map(|n| format!("ex:n{n}")),
        2 => (0..20u8).prop_map(|n| format!("<http://example.org/n{n}>")),
        1 => (0..20u8).prop_map(|n| format!("<rel{n}>")),
        2 => (0..5u8).prop_map(|n| format!("_:b{n}")),
        1 => Just("[ ex:p ex:n1 ;\n    ex:q \"in a blank node\" ]".to_owned()),
    ]
}

fn object() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => node(),
        2 => prop::sample::select(vec![
            "\"plain\"", "\"tab\\t and \\\"quotes\\\" . # not a comment\"", "'single . '",
            "\"chat\"@FR", "\"1\"^^xsd:integer", "42", "1.5", "-3e2", "true",
            "\"\"\"two\nlines . \"\"\"", "\"\"\"three .\n<http://a.org/x> <http://a.org/y> <http://a.org/z> .\n<http://a.org/x> <http://a.org/y> <http://a.org/z> .\n<http://a.org/x> <http://a.org/y> <http://a.org/z> .\n\"\"\"",
            "( ex:n1 ex:n2\n  \"in a list\" )", "\"\\u00E9t\\u00E9\"",
        ]).prop_map(str::to_owned),
    ]
}

/// A statement over one or more lines, a comment, or something unusual.
fn statement() -> impl Strategy<Value = String> {
    let subject = node().prop_filter("a subject", |s| !s.starts_with('['));
    let simple = (
        subject,
        prop::collection::vec((0..6u8, prop::collection::vec(object(), 1..3)), 1..3),
    )
        .prop_map(|(s, predicates)| {
            let list: Vec<String> = predicates
                .into_iter()
                .map(|(p, objects)| {
                    let p = if p == 0 {
                        "a".to_owned()
                    } else {
                        format!("ex:p{p}")
                    };
                    format!("{p} {}", objects.join(" ,\n        "))
                })
                .collect();
            format!("{s} {} .", list.join(" ;\n    "))
        });
    prop_oneof![
        20 => simple,
        2 => Just("# <http://a.org/x> <http://a.org/y> <http://a.org/z> . <http://a.org/x> <http://a.org/y> <http://a.org/z> . <http://a.org/x> <http://a.org/y> <http://a.org/z> . <http://a.org/x> <http://a.org/y> <http://a.org/z> .".to_owned()),
        1 => Just("[ ex:p ex:n3 ] ex:q ex:n4 .".to_owned()),
    ]
}

/// Something unusual for one document: a late directive or a malformed statement.
fn oddity() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        6 => Just(None),
        1 => prop::sample::select(vec![
            "@prefix ex: <http://other.org/> .",
            "@prefix ex: <http://example.org/> .",
            "PREFIX new: <http://new.org/>",
            "@base <http://elsewhere.org/> .",
            "ex:n1 ex:p1 .",
            "ex:n1 ex:p1 \"open .",
            "undeclared:x ex:p1 ex:n1 .",
        ]).prop_map(Some),
    ]
}

fn document() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::collection::vec(statement(), 1..60),
        any::<bool>(),
        (oddity(), any::<prop::sample::Index>()),
    )
        .prop_map(|(base, mut statements, crlf, (oddity, at))| {
            if let Some(oddity) = oddity {
                let at = at.index(statements.len() + 1);
                statements.insert(at, oddity.to_owned());
            }
            let mut text = String::from("@prefix ex: <http://example.org/> .\n");
            text.push_str("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n");
            if base {
                text.push_str("@base <http://base.org/> .\n");
            }
            text.push_str("# a comment\n\n");
            for statement in statements {
                text.push_str(&statement);
                text.push('\n');
            }
            if crlf {
                text = text.replace('\n', "\r\n");
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn pieces_equal_the_sequential_parse(text in document(), piece_bytes in 64usize..400) {
        check(&text, piece_bytes)?;
    }
}

#[test]
fn a_large_regular_document_is_parsed_in_pieces() {
    let mut text = String::from("@prefix ex: <http://example.org/> .\n");
    for i in 0..2000 {
        text.push_str(&format!(
            "ex:s{i} a ex:C ;\n    ex:name \"name {i} . # x\" ;\n    ex:knows ex:s{} , [ ex:p {i} ] .\n",
            i / 2
        ));
    }
    let pieces = parse_in_pieces(text.as_bytes(), 2, None, 1000).expect("parsed in pieces");
    assert!(pieces.len() > 4, "{} pieces", pieces.len());
    let chunks: Vec<Chunk> = pieces.into_iter().map(|(chunk, _)| chunk).collect();
    assert_eq!(statements(&chunks), sequential(&text).unwrap());
}

#[test]
fn cuts_follow_a_statement_end_outside_comments_strings_and_iris() {
    assert!(ends_statement(b"ex:a ex:b ex:c ."));
    assert!(ends_statement(b"  ex:b \"x . # y\" .  \r"));
    assert!(ends_statement(b"<http://a.org/#x> ex:b <y> ."));
    assert!(!ends_statement(b"# ex:a ex:b ex:c ."));
    assert!(!ends_statement(b"ex:a ex:b ex:c . # done."));
    assert!(!ends_statement(b"ex:a ex:b \"open ."));
    assert!(!ends_statement(b"ex:a ex:b ex:c ;"));
}
