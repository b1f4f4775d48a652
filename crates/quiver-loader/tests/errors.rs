//! Loading a file with a malformed statement: the error names the file and the position
//! oxttl gives when it parses the whole file sequentially, whichever parser (the fast line
//! parser or oxttl) met the line, and `--lenient` skips exactly the malformed lines.

use std::path::PathBuf;

use oxrdfio::{RdfFormat, RdfParser};
use proptest::prelude::*;
use quiver_loader::{load_files, Format, LoadError, LoadOptions, NoProgress};

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// oxttl's first error on the whole text: 1-based line and column, and its message.
fn reference_error(text: &str, format: RdfFormat) -> Option<(u64, u64, String)> {
    for quad in RdfParser::from_format(format).for_slice(text.as_bytes()) {
        if let Err(error) = quad {
            let location = error.location().expect("a located error");
            let text = error.to_string();
            let message = text
                .split_once(": ")
                .map_or(text.clone(), |(_, m)| m.to_owned());
            return Some((location.start.line + 1, location.start.column + 1, message));
        }
    }
    None
}

fn good_line() -> impl Strategy<Value = String> {
    (0..50u32, 0..5u32, 0..4u8, 0..30u32).prop_map(|(s, p, kind, o)| {
        let object = match kind {
            0 => format!("<http://example.org/o{o}>"),
            1 => format!("\"v\\u00E9{o}\\n\"@en-GB"),
            2 => format!("\"{o}\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
            _ => format!("_:b{o}"),
        };
        format!("<http://example.org/s{s}> <http://example.org/p{p}> {object} .")
    })
}

fn bad_line() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "<http://example.org/s> <http://example.org/p> <http://ex ample.org/o> .",
        "<http://example.org/s> <http://example.org/p> \"open .",
        "<http://example.org/s> <http://example.org/p> \"x\"@abcdefghijk .",
        "<http://example.org/s> <http://example.org/p> <relative> .",
        "<http://example.org/s> <http://example.org/p> \"\\uD800\" .",
        "<http://example.org/s> <http://example.org/p> <http://example.org/o>",
        "<http://example.org/s> <http://example.org/p> <http://example.org/o> . <x>",
        "\"literal\" <http://example.org/p> <http://example.org/o> .",
        "<http://example.org/s> <http://example.org/p> \"x\"^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString> .",
        "<http://example.org/s> <http://example.org/p> _:-bad .",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_malformed_line_is_reported_where_oxttl_reports_it(
        lines in prop::collection::vec(good_line(), 1..40),
        bad in bad_line(),
        at in any::<prop::sample::Index>(),
        crlf in any::<bool>(),
    ) {
        let mut lines = lines;
        let at = at.index(lines.len() + 1);
        lines.insert(at, bad.to_owned());
        let newline = if crlf { "\r\n" } else { "\n" };
        let text = lines.join(newline) + newline;
        let (line, column, message) =
            reference_error(&text, RdfFormat::NTriples).expect("the bad line is an error");
        let path = temp_file("bad.nt", &text);
        let options = LoadOptions { format: Some(Format::NTriples), lenient: false, threads: 2 };
        match load_files(std::slice::from_ref(&path), &options, None, &NoProgress) {
            Err(LoadError::Syntax { line: l, column: c, message: m, .. }) => {
                prop_assert_eq!((l, c, m), (line, column, message));
            }
            other => prop_assert!(false, "expected a syntax error, got {:?}", other.map(|(_, r)| r)),
        }

        // Lenient: the bad line is skipped, every other statement loaded.
        let options = LoadOptions { lenient: true, ..options };
        let (store, report) = load_files(std::slice::from_ref(&path), &options, None, &NoProgress)
            .expect("a lenient load succeeds");
        prop_assert_eq!(report.skipped, 1);
        // oxttl still reads the statement of a line that lacks its dot or has more after it.
        let from_bad = RdfParser::from_format(RdfFormat::NTriples)
            .for_slice(bad.as_bytes())
            .filter(Result::is_ok)
            .count() as u64;
        let good = lines.len() as u64 - 1;
        prop_assert_eq!(report.statements, good + from_bad);
        let distinct: std::collections::HashSet<&String> =
            lines.iter().filter(|l| l.as_str() != bad).collect();
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
        let distinct = distinct.len() as u64;
        prop_assert!(
            (distinct..=distinct + from_bad).contains(&store.triples()),
            "{} triples stored, {} distinct good statements", store.triples(), distinct
        );
    }
}
