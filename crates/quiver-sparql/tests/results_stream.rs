//! The streaming writers of `results/stream.rs` against the reference path (rows decoded
//! into terms, handed to `sparesults` for JSON, XML and TSV and to `CsvSolutionsWriter`
//! for CSV): byte for byte the same output, on random stores whose terms have every kind —
//! IRIs, blank nodes, simple, language-tagged and typed literals (numbers and booleans in
//! forms TSV may or may not write bare), values with quotes, line ends, tabs, control
//! characters, markup, Unicode and surrounding white space — in columns that repeat
//! (cached) and do not (caching switched off), with unbound values and terms the query
//! computes. RDF 1.2 too: directional language-tagged literals and triple terms, nested,
//! stored and computed.

use crate::support;

use std::fmt::Write as _;

use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, Term, Triple};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use quiver_sparql::results::{
    give_back_chunk, parallel_chunk_rows, solutions_to_vec, write_solutions,
    write_solutions_in_chunks, write_solutions_reference, ChunkWriter, Syntax,
};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

const XSD: &str = "http://www.w3.org/2001/XMLSchema#";

const SYNTAXES: [Syntax; 4] = [Syntax::Json, Syntax::Xml, Syntax::Tsv, Syntax::Csv];

const QUERIES: &[&str] = &[
    "SELECT ?s ?p ?o ?x WHERE { ?s ?p ?o OPTIONAL { ?o <http://x/next> ?x } }",
    "SELECT ?o ?s WHERE { ?s ?p ?o } ORDER BY ?o",
    "SELECT * WHERE { ?s <http://x/p0> ?o }",
    "SELECT ?o (CONCAT(STR(?o), \"\\t\\\"<&>\") AS ?c) (STRLEN(STR(?o)) AS ?n) (LANG(?o) AS ?l) (BNODE() AS ?b) (?n / 2 AS ?h) WHERE { ?s ?p ?o } LIMIT 300",
    "SELECT ?s (COUNT(*) AS ?count) WHERE { ?s ?p ?o } GROUP BY ?s",
    "SELECT ?nothing ?s WHERE { ?s <http://x/p1> ?o }",
    "SELECT * WHERE { }",
    "SELECT ?o (TRIPLE(?s, ?p, ?o) AS ?t) (TRIPLE(?s, ?p, TRIPLE(?s, ?p, ?o)) AS ?n) WHERE { ?s ?p ?o } LIMIT 200",
    // One column of stored terms (triple terms among them) and computed triple terms.
    "SELECT ?t WHERE { { ?s ?p ?t } UNION { ?s ?p ?o BIND(TRIPLE(?s, ?p, ?o) AS ?t) } UNION { ?s ?p ?t } }",
    "SELECT ?o (OBJECT(?o) AS ?x) (STRLANGDIR(\"a\", \"ar\", \"rtl\") AS ?d) WHERE { ?s ?p ?o FILTER(isTRIPLE(?o)) }",
    "SELECT ?s WHERE { ?s <http://x/none> ?o }",
];

/// Text pieces that exercise every escaping rule.
const PIECES: &[&str] = &[
    "a", "plain", " ", "\t", "\n", "\r", "\"", "'", "\\", ",", "<", ">", "&", "é", "日本", "🦀",
    "\u{1}", "\u{8}", "\u{c}", "\u{1f}", "\u{7f}", "\u{a0}", "x y", "1", "-", "+", ".", "e", "E",
    "0",
];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..6).prop_map(|p| p.concat())
}

/// Lexical forms near the Turtle number grammar, valid or not.
fn number_form() -> impl Strategy<Value = String> {
    prop::sample::select(
        &[
            "12", "+3", "-0", "007", "1.5", ".5", "1.", "-2.25", "+.0", "1e5", "1.E-2", ".5e1",
            "e5", "1e", "1.5e+07", "-1E0", "abc", "", "true", "false", "1", "TRUE", " 1", "1 ",
        ][..],
    )
    .prop_map(str::to_owned)
}

const DATATYPES: &[&str] = &[
    "integer", "decimal", "double", "boolean", "string", "float", "dateTime",
];

fn term() -> impl Strategy<Value = Term> {
    prop_oneof![
        4 => flat_term(),
        1 => (flat_term(), flat_term(), (0u32..3)).prop_map(|(o, nested, p)| {
            // A triple term, its object a triple term again at times.
            let predicate = NamedNode::new_unchecked(format!("http://x/t{p}"));
            let object = match nested {
                Term::Literal(_) => Triple::new(
                    BlankNode::new_unchecked("inner"),
                    predicate.clone(),
                    nested,
                )
                .into(),
                _ => o,
            };
            Triple::new(NamedNode::new_unchecked("http://x/ts"), predicate, object).into()
        }),
    ]
}

fn flat_term() -> impl Strategy<Value = Term> {
    let datatype = || prop::sample::select(DATATYPES);
    prop_oneof![
        (0u32..40).prop_map(|i| NamedNode::new_unchecked(format!("http://x/i{i},'&")).into()),
        (0u32..20).prop_map(|i| BlankNode::new_unchecked(format!("b{i}")).into()),
        text().prop_map(|v| Literal::new_simple_literal(v).into()),
        (
            text(),
            prop::sample::select(&["en", "en-GB", "fr", "x-ab"][..])
        )
            .prop_map(|(v, l)| Literal::new_language_tagged_literal_unchecked(v, l).into()),
        (text(), prop::bool::ANY).prop_map(|(v, rtl)| {
            let direction = if rtl {
                BaseDirection::Rtl
            } else {
                BaseDirection::Ltr
            };
            Literal::new_directional_language_tagged_literal_unchecked(v, "he", direction).into()
        }),
        (number_form(), datatype()).prop_map(|(v, d)| {
            Literal::new_typed_literal(v, NamedNode::new_unchecked(format!("{XSD}{d}"))).into()
        }),
        (text(), datatype()).prop_map(|(v, d)| {
            Literal::new_typed_literal(v, NamedNode::new_unchecked(format!("{XSD}{d}"))).into()
        }),
        text().prop_map(|v| {
            Literal::new_typed_literal(v, NamedNode::new_unchecked("http://x/type?a=1&b='2'"))
                .into()
        }),
    ]
}

/// N-Triples of `objects` spread over subjects and predicates, with links between
/// subjects for the OPTIONAL, and a long run of distinct subjects.
fn ntriples(objects: &[Term], distinct_subjects: usize) -> String {
    let mut text = String::new();
    for (i, object) in objects.iter().enumerate() {
        let _ = writeln!(
            text,
            "<http://x/s{}> <http://x/p{}> {object} .",
            i % 7,
            i % 3
        );
    }
    for i in 0..7 {
        let _ = writeln!(text, "<http://x/s{i}> <http://x/next> _:n{} .", i % 2);
    }
    for i in 0..distinct_subjects {
        let object = &objects[i % objects.len().max(1)];
        let _ = writeln!(text, "<http://x/many{i}> <http://x/p1> {object} .");
    }
    text
}

fn check(store: &Store, query: &str) {
    let prepared = prepare(store, query, &PrepareOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let results = prepared
        .execute(store, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let QueryResults::Solutions(solutions) = &results else {
        panic!("{query}: not solutions");
    };
    for syntax in SYNTAXES {
        let reference = write_solutions_reference(solutions, syntax, Vec::new()).unwrap();
        let written = write_solutions(solutions, syntax, Vec::new()).unwrap();
        let in_memory = solutions_to_vec(solutions, syntax).unwrap();
        let handed = write_solutions_in_chunks(solutions, syntax, Handed::default()).unwrap();
        if parallel_chunk_rows(solutions, rayon::current_num_threads()).is_some() {
            assert!(handed.chunks > 0, "{query}: no chunk handed over");
        }
        let handed = handed.bytes;
        for (path, ours) in [
            ("writer", written),
            ("memory", in_memory),
            ("handed", handed),
        ] {
            if ours != reference {
                let ours = String::from_utf8_lossy(&ours);
                let reference = String::from_utf8_lossy(&reference);
                let at = ours
                    .chars()
                    .zip(reference.chars())
                    .position(|(a, b)| a != b)
                    .unwrap_or(ours.len().min(reference.len()));
                // The text around the first difference.
                let around = |text: &str| {
                    text.chars()
                        .skip(at.saturating_sub(40))
                        .take(120)
                        .collect::<String>()
                };
                panic!(
                    "{syntax:?} ({path}) differs for {query} at char {at}:\nours:      {:?}\n\
                     reference: {:?}",
                    around(&ours),
                    around(&reference),
                );
            }
        }
    }
}

/// A writer handed whole chunks: their bytes appended, their buffers given back.
#[derive(Default)]
struct Handed {
    bytes: Vec<u8>,
    chunks: usize,
}

impl std::io::Write for Handed {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl ChunkWriter for Handed {
    fn take_chunk(&mut self, chunk: Vec<u8>) -> std::io::Result<()> {
        self.bytes.extend_from_slice(&chunk);
        self.chunks += 1;
        give_back_chunk(chunk);
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn streaming_writers_match_the_reference(objects in prop::collection::vec(term(), 1..120)) {
        let store = support::load(&ntriples(&objects, 0));
        for query in QUERIES {
            check(&store, query);
        }
    }
}

/// A store of `objects` terms drawn by a deterministic runner, laid out by [`ntriples`]
/// with `distinct_subjects` more subjects.
fn random_store(objects: usize, distinct_subjects: usize) -> Store {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let objects: Vec<Term> = (0..objects)
        .map(|_| term().new_tree(&mut runner).unwrap().current())
        .collect();
    support::load(&ntriples(&objects, distinct_subjects))
}

/// A column of more distinct ids than the cache's trial (its caching switches off) beside
/// columns that repeat, in results long enough to be written in chunks on several threads
/// (on pools of two and four, whatever the machine's cores): on two threads, in more than
/// one batch of chunks, the later ones filled while the earlier ones are written.
#[test]
fn long_columns_match_the_reference() {
    check_on_pools(&random_store(200, 90_000));
}

/// Results of tens of thousands of rows, cut into chunks of a few thousand rows when
/// written on several threads (smaller than the largest chunks, of 16,384 rows).
#[test]
fn results_of_tens_of_thousands_of_rows_match_the_reference() {
    check_on_pools(&random_store(100, 40_000));
}

/// A result far smaller than those cut into chunks for their size, but whose ids are
/// scattered over the dictionary (subjects spaced far apart, ordered by their objects), is
/// written in chunks too, the calling thread writing the first, with the reference's bytes
/// (on pools of two and four threads); the same rows in the order of their subjects (ids
/// in order, a dictionary bucket after the other) stay on one thread.
#[test]
fn small_results_of_scattered_ids_are_written_in_chunks() {
    let store = random_store(100, 5_000);
    let scattered = "SELECT ?o ?s WHERE { ?s <http://x/p1> ?o } ORDER BY ?o";
    let in_order = "SELECT ?s ?o WHERE { ?s <http://x/p1> ?o } ORDER BY ?s";
    on_pools(|threads| {
        for (query, chunked) in [(scattered, true), (in_order, false)] {
            let results = prepare(&store, query, &PrepareOptions::default())
                .and_then(|prepared| prepared.execute(&store, &ExecOptions::default()))
                .unwrap_or_else(|e| panic!("{query}: {e}"));
            let QueryResults::Solutions(solutions) = &results else {
                panic!("{query}: not solutions");
            };
            assert!(
                (5_000..32_768).contains(&solutions.len()),
                "{query}: {} rows",
                solutions.len()
            );
            assert_eq!(
                parallel_chunk_rows(solutions, threads).is_some(),
                chunked,
                "{query}: written in chunks on {threads} threads"
            );
            check(&store, query);
        }
    });
}

/// [`check`] of every query on pools of two and four threads.
fn check_on_pools(store: &Store) {
    on_pools(|_| {
        for query in QUERIES {
            check(store, query);
        }
    });
}

/// Runs `f` in pools of two and four threads (whatever the machine's cores), with the
/// pool's size.
fn on_pools(f: impl Fn(usize) + Sync) {
    for threads in [2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| f(threads));
    }
}

/// `Solutions::for_each_row_in` (rows decoded cell by cell when few, by blocks of distinct
/// ids otherwise) against each row decoded alone (`Solutions::row`, a dictionary lookup
/// per cell), over ranges that start and end inside blocks, past the end, and empty.
#[test]
fn rows_visited_by_ranges_match_rows_decoded_alone() {
    let store = random_store(300, 3_000);
    for query in QUERIES {
        let results = prepare(&store, query, &PrepareOptions::default())
            .and_then(|prepared| prepared.execute(&store, &ExecOptions::default()))
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        let QueryResults::Solutions(solutions) = &results else {
            panic!("{query}: not solutions");
        };
        let n = solutions.len();
        let ranges = [
            0..n,
            1..n,
            5..40,
            63..1_100,
            1_000..2_500,
            n.saturating_sub(5)..n + 10,
            n + 3..n + 3,
        ];
        for range in ranges {
            let mut visited: Vec<Vec<Option<Term>>> = Vec::new();
            solutions.for_each_row_in(range.clone(), |row| {
                visited.push(row.iter().map(|t| t.map(|t| t.into_owned())).collect());
            });
            let alone: Vec<Vec<Option<Term>>> = (range.start..range.end.min(n))
                .map(|row| solutions.row(row))
                .collect();
            assert_eq!(visited, alone, "{query}, rows {range:?} of {n}");
        }
    }
}
