//! The fast path against oxttl: on random N-Triples and N-Quads with nasty terms, a block
//! either gives exactly the chunk oxttl's terms encode to (same terms in the same order,
//! same statements), or, exactly when oxttl reports an error, is handed back to oxttl.

use oxrdfio::RdfParser;
use proptest::prelude::*;

use super::*;

/// The chunk the oxttl path builds from `bytes`, or `None` if oxttl reports any error.
fn oxttl_chunk(bytes: &[u8], format: Format, prefix: Option<&str>) -> Option<(Chunk, u64)> {
    let mut chunk = Chunk::new();
    let mut statements = 0;
    for quad in RdfParser::from_format(format.rdf_format()).for_slice(bytes) {
        chunk.add_quad(quad.ok()?, prefix).ok()?;
        statements += 1;
    }
    Some((chunk, statements))
}

fn check(bytes: &[u8], format: Format, prefix: Option<&str>) -> Result<(), TestCaseError> {
    let mut fast = Chunk::new();
    let statements = parse_block(bytes, format, prefix, &mut fast).map(|parsed| {
        assert_eq!(
            parsed.newlines as usize,
            memchr::memchr_iter(b'\n', bytes).count()
        );
        parsed.statements
    });
    match (statements, oxttl_chunk(bytes, format, prefix)) {
        (None, None) => {}
        (Some(statements), Some((reference, expected))) => {
            prop_assert_eq!(statements, expected);
            prop_assert_eq!(&fast.quads, &reference.quads);
            prop_assert_eq!(&fast.spans, &reference.spans);
            prop_assert_eq!(&fast.arena, &reference.arena);
        }
        (fast, reference) => prop_assert!(
            false,
            "fast path {} the block, oxttl {}: {:?}",
            if fast.is_some() {
                "accepted"
            } else {
                "refused"
            },
            if reference.is_some() {
                "accepts it"
            } else {
                "refuses it"
            },
            String::from_utf8_lossy(bytes)
        ),
    }
    Ok(())
}

/// A character of a term's text, written raw or as an escape.
fn text_char() -> impl Strategy<Value = char> {
    prop_oneof![
        8 => proptest::char::range('a', 'z'),
        2 => Just('/'),
        1 => prop::sample::select(vec![
            'é', 'ß', '日', '𝄞', '\u{7f}', '\u{a0}', '"', '\\', '\'', '\n', '\r', '\t', '\u{8}',
            '\u{c}', ' ', '<', '>', '{', '#', '.', '\u{0}', '\u{fffd}', ':', '@', '^', '%'
        ]),
    ]
}

/// How a character is written: raw, `\u`, `\U`, an ECHAR where one exists, or a bad escape.
fn write_char(out: &mut String, c: char, how: u8, in_literal: bool) {
    let echar = match c {
        '\t' => Some('t'),
        '\u{8}' => Some('b'),
        '\n' => Some('n'),
        '\r' => Some('r'),
        '\u{c}' => Some('f'),
        '"' => Some('"'),
        '\'' => Some('\''),
        '\\' => Some('\\'),
        _ => None,
    };
    match how % 8 {
        0 => out.push_str(&format!("\\u{:04X}", c as u32 & 0xFFFF)),
        1 => out.push_str(&format!("\\U{:08x}", c as u32)),
        2 if in_literal && echar.is_some() => {
            out.push('\\');
            out.push(echar.unwrap());
        }
        3 if how > 250 => out.push_str("\\q"),
        _ => {
            // Raw, except where it would end the token (most of the time).
            let ends = if in_literal {
                matches!(c, '"' | '\\' | '\n' | '\r')
            } else {
                matches!(c, '>' | '\\' | '\n' | '\r')
            };
            if ends && how < 240 {
                out.push_str(&format!("\\u{:04X}", c as u32 & 0xFFFF));
            } else {
                out.push(c);
            }
        }
    }
}

fn escaped(chars: &[(char, u8)], in_literal: bool) -> String {
    let mut out = String::new();
    for &(c, how) in chars {
        write_char(&mut out, c, how, in_literal);
    }
    out
}

fn iri() -> impl Strategy<Value = String> {
    prop_oneof![
        // A few IRIs that repeat, so terms are found again in the chunk.
        6 => prop::sample::select(vec![
            "<http://example.org/a>", "<http://example.org/b>", "<http://ex.org/p>",
            "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<urn:x>",
            "<http://example.org/\\u00E9>", "<http://example.org/é>",
        ]).prop_map(str::to_owned),
        4 => (
            prop::sample::select(vec!["http://example.org/", "urn:", "", "http://[::1]/", "http://a b/"]),
            prop::collection::vec((text_char(), any::<u8>()), 0..8),
        )
            .prop_map(|(base, chars)| format!("<{base}{}>", escaped(&chars, false))),
    ]
}

fn blank() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "_:b", "_:b0", "_:0", "_:_x", "_:a.b", "_:a-b", "_:x.", "_:-x", "_:é", "_:bé", "_:",
        "_:a:b",
    ])
    .prop_map(str::to_owned)
}

fn literal() -> impl Strategy<Value = String> {
    let value = prop::collection::vec((text_char(), any::<u8>()), 0..10);
    let suffix = prop_oneof![
        4 => Just(String::new()),
        3 => prop::sample::select(vec![
            "@en", "@EN", "@en-US", "@fr-be", "@de-CH-1996", "@x-private", "@e1", "@en-",
            "@en--ltr", "@i-klingon", "@abcdefghi", "@", "@zh-Hant-TW",
        ]).prop_map(str::to_owned),
        3 => prop::sample::select(vec![
            "^^<http://www.w3.org/2001/XMLSchema#string>",
            "^^<http://www.w3.org/2001/XMLSchema#integer>",
            "^^<http://www.w3.org/1999/02/22-rdf-syntax-ns#langString>",
            "^^<http://www.w3.org/2001/XMLSchema#str\\u0069ng>",
            "^^<relative>", "^^<http://ex.org/dt\\u0000x>", "^^<http://ex.org/d t>", "^^", "^<a:b>",
        ]).prop_map(str::to_owned),
    ];
    (value, suffix).prop_map(|(value, suffix)| format!("\"{}\"{suffix}", escaped(&value, true)))
}

fn space() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![" ", " ", " ", "  ", "\t", "", " \u{b} "])
}

/// One line: a statement (usually well formed), a comment or blank line, or garbage.
fn line(with_graph: bool) -> impl Strategy<Value = String> {
    let subject = prop_oneof![4 => iri(), 1 => blank(), 1 => literal()];
    let object = prop_oneof![3 => iri(), 1 => blank(), 3 => literal()];
    let graph = prop_oneof![
        3 => Just(String::new()),
        2 => iri(),
        1 => blank(),
    ];
    let end = prop::sample::select(vec![
        " .",
        ".",
        " . ",
        " .\t# a comment",
        " . # \u{e9}",
        "",
        " . <x>",
        " .\r",
        " ;",
    ]);
    let statement = (
        subject,
        iri(),
        object,
        graph,
        end,
        prop::collection::vec(space(), 4),
    )
        .prop_map(move |(s, p, o, g, end, spaces)| {
            let g = if with_graph || g.is_empty() || spaces[3] == "\t" {
                g
            } else {
                String::new()
            };
            format!(
                "{}{s}{}{p}{}{o}{}{g}{end}",
                spaces[0], spaces[1], spaces[2], spaces[3]
            )
        });
    prop_oneof![
        12 => statement,
        1 => prop::sample::select(vec!["", "# comment", "  \t", "#", "  # <a> <b> <c> .", "\r"])
            .prop_map(str::to_owned),
        1 => prop::sample::select(vec!["<a> <b>", "garbage", "<http://a.org/s> <http://a.org/p> \"open ."])
            .prop_map(str::to_owned),
    ]
}

fn document(with_graph: bool) -> impl Strategy<Value = String> {
    (
        prop::collection::vec((line(with_graph), any::<bool>()), 0..12),
        any::<bool>(),
    )
        .prop_map(|(lines, final_newline)| {
            let mut text = String::new();
            for (i, (line, crlf)) in lines.iter().enumerate() {
                text.push_str(line);
                if i + 1 < lines.len() || final_newline {
                    text.push_str(if *crlf { "\r\n" } else { "\n" });
                }
            }
            text
        })
}

/// Documents of well-formed lines only, so that the fast path's own output is compared
/// (not only its refusals).
fn good_document(with_graph: bool) -> impl Strategy<Value = String> {
    prop::collection::vec(line(with_graph), 1..16).prop_map(move |lines| {
        let mut text = String::new();
        for line in lines {
            let format = if with_graph {
                Format::NQuads
            } else {
                Format::NTriples
            };
            if oxttl_chunk(line.as_bytes(), format, None).is_some() {
                text.push_str(&line);
                text.push('\n');
            }
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn ntriples_blocks_equal_oxttl(text in document(false), scoped in any::<bool>()) {
        let prefix = scoped.then_some("f1_");
        check(text.as_bytes(), Format::NTriples, prefix)?;
    }

    #[test]
    fn nquads_blocks_equal_oxttl(text in document(true), scoped in any::<bool>()) {
        let prefix = scoped.then_some("f1_");
        check(text.as_bytes(), Format::NQuads, prefix)?;
    }

    #[test]
    fn well_formed_blocks_equal_oxttl(text in good_document(false), quads in good_document(true)) {
        check(text.as_bytes(), Format::NTriples, None)?;
        check(quads.as_bytes(), Format::NQuads, Some("g_"))?;
    }
}

#[test]
fn the_common_shapes_take_the_fast_path() {
    // The parser itself (not the oxttl fallback) reads these lines.
    let lines = [
        "<http://a.org/s> <http://a.org/p> <http://a.org/o> .",
        "_:b1 <http://a.org/p> \"x\\ty\\u00E9\" .",
        "<http://a.org/s>\t<http://a.org/p>\t\"chat\"@FR-be .",
        "<http://a.org/s> <http://a.org/p> \"1\"^^<http://www.w3.org/2001/XMLSchema#integer> . # c",
        "<http://a.org/s> <http://a.org/p> \"s\"^^<http://www.w3.org/2001/XMLSchema#string>.",
        "<http://a.org/\\u00E9> <http://a.org/p> _:o.b .\r",
    ];
    let mut parser = LineParser {
        terms: Default::default(),
        recent: Default::default(),
        value: Vec::new(),
        with_graph: false,
        blank_prefix: b"",
    };
    for line in lines {
        assert!(
            matches!(parser.parse_line(line.as_bytes()), Some(Line::Statement(3))),
            "{line}"
        );
    }
    parser.with_graph = true;
    let quad = "<http://a.org/s> <http://a.org/p> <http://a.org/o> <http://a.org/g> .";
    assert!(matches!(
        parser.parse_line(quad.as_bytes()),
        Some(Line::Statement(4))
    ));
    for empty in ["", "   ", "# only a comment", "\t# x\r"] {
        assert!(matches!(
            parser.parse_line(empty.as_bytes()),
            Some(Line::Empty)
        ));
    }
}

#[test]
fn a_block_with_a_bad_line_goes_back_to_oxttl() {
    let text = "<http://a.org/s> <http://a.org/p> <http://a.org/o> .\n\
                <http://a.org/s> <http://a.org/p> <not an iri> .\n";
    assert!(parse_block(text.as_bytes(), Format::NTriples, None, &mut Chunk::new()).is_none());
    // A term is checked on its first occurrence even when the line is otherwise simple.
    let text = "<http://a.org/s> <http://a.org/p> \"x\"@abcdefghi .\n";
    assert!(parse_block(text.as_bytes(), Format::NTriples, None, &mut Chunk::new()).is_none());
    let latin1 = b"<http://a.org/s> <http://a.org/p> \"caf\xe9\" .\n";
    assert!(parse_block(latin1, Format::NTriples, None, &mut Chunk::new()).is_none());
}
