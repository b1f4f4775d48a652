//! `INSERT DATA` read by the fast N-Triples reader against the same request through the
//! SPARQL parser: the same quads, the same number of terms, on the same store.

use crate::common;

use common::*;
use proptest::prelude::*;
use quiver_db::{Database, SyncMode};
use quiver_sparql::ExecOptions;

/// One term of a generated statement, as N-Triples text.
fn iri() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..6u32).prop_map(|n| format!("<http://example.org/r{n}>")),
        // Escapes and non-ASCII characters in IRIs.
        (0..3u32).prop_map(|n| format!("<http://example.org/\\u00E9t\u{e9}{n}>")),
        Just("<http://example.org/tag>".to_owned()),
    ]
}

fn literal() -> impl Strategy<Value = String> {
    let text = prop_oneof![
        Just("plain".to_owned()),
        Just(String::new()),
        Just("tab\\there \\\"quoted\\\" \\\\ back".to_owned()),
        Just("\\u00e9t\u{e9} \\U0001F600".to_owned()),
        (0..4u32).prop_map(|n| format!("v{n}")),
    ];
    let suffix = prop_oneof![
        Just(String::new()),
        Just("@en".to_owned()),
        Just("@EN-gb".to_owned()),
        Just("^^<http://www.w3.org/2001/XMLSchema#string>".to_owned()),
        Just("^^<http://www.w3.org/2001/XMLSchema#integer>".to_owned()),
        Just("^^<http://example.org/type>".to_owned()),
    ];
    (text, suffix).prop_map(|(text, suffix)| format!("\"{text}\"{suffix}"))
}

fn statement() -> impl Strategy<Value = String> {
    let object = prop_oneof![iri(), literal()];
    (iri(), iri(), object, any::<bool>()).prop_map(|(s, p, o, comment)| {
        let comment = if comment { " # a comment" } else { "" };
        format!("{s} {p} {o} .{comment}")
    })
}

fn request() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(statement(), 0..12),
        prop_oneof![Just(None), Just(Some("<http://example.org/g>"))],
        any::<bool>(),
    )
        .prop_map(|(lines, graph, upper)| {
            let body = lines.join("\n");
            let keyword = if upper { "INSERT DATA" } else { "insert data" };
            match graph {
                None => format!("{keyword} {{\n{body}\n}}"),
                Some(g) => format!("{keyword} {{ GRAPH {g} {{\n{body}\n}} }}"),
            }
        })
}

/// A database over a built store (so new vertices go beyond its dense base) holding
/// some of the generated terms, so requests find some terms and append others.
fn database() -> Database {
    let base = "<http://example.org/r0> <http://example.org/tag> \"v0\" .\n\
                <http://example.org/r1> <http://example.org/r2> \"plain\"@en .\n";
    let quads = oxrdfio::RdfParser::from_format(oxrdfio::RdfFormat::NTriples)
        .for_slice(base.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let (store, _) = quiver_loader::load_quads(quads, None).unwrap();
    Database::in_memory(store)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_fast_reader_changes_the_store_as_the_sparql_parser_does(
        requests in proptest::collection::vec(request(), 1..5)
    ) {
        let (fast, general) = (database(), database());
        let options = ExecOptions::default();
        for text in &requests {
            prop_assert!(quiver_loader::parse_insert_data(text).is_some(), "{}", text);
            let by_fast = fast.update(text, None, &options).map(|r| r.inserted);
            let parsed = quiver_sparql::parse_update(text, None).unwrap();
            let by_general = general.update_parsed(&parsed, &options).map(|r| r.inserted);
            prop_assert_eq!(by_fast.is_ok(), by_general.is_ok(), "{}", text);
            prop_assert_eq!(by_fast.ok(), by_general.ok(), "{}", text);
            let (a, b) = (fast.snapshot(), general.snapshot());
            prop_assert_eq!(quads(&a), quads(&b), "{}", text);
            prop_assert_eq!(a.terms(), b.terms(), "{}", text);
        }
    }
}

#[test]
fn the_fast_reader_keeps_commits_durable() {
    let dir = Scratch::new("fast-insert");
    let text = "INSERT DATA {\n<http://example.org/s> <http://example.org/p> \"o\" .\n}";
    assert!(quiver_loader::parse_insert_data(text).is_some());
    let expected = {
        let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
        let report = db.update(text, None, &ExecOptions::default()).unwrap();
        assert_eq!(report.inserted, 1);
        assert_eq!(report.sequence, 1);
        quads(&db.snapshot())
    };
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(db.open_report().replayed, 1);
    assert_eq!(quads(&db.snapshot()), expected);
    assert_eq!(expected.len(), 1);
}
