//! A guard against deeply nested query text, run before the parser.
//!
//! spargebra's parser descends recursively, one chain of calls per `(`, `{` or `[`, with no
//! depth limit of its own: a request body of a million `(` overflows the stack of the
//! thread parsing it and kills the process. [`check`] scans the text once, in linear time,
//! and refuses nesting deeper than [`MAX_DEPTH`] levels of the three brackets combined with
//! a syntax error at the line and column where the limit was crossed. SPARQL 1.2's reified
//! triples `<< … >>` nest the same way and count as a bracket (`<<( … )>>`, a triple term,
//! counts twice: its `<<` and its `(`).
//!
//! The count must never fall below the parser's real depth, or crafted text could slip
//! through. Brackets inside strings, IRIs and comments are not structure, but they are not
//! simply skipped: inside those tokens opening brackets still count and closing ones only
//! undo openings made inside the same token, so closers hidden in a token never lower the
//! count, while a balanced `"(a+)+$"` or `<http://x/a_(b)>` leaves it unchanged.
//!
//! One token is read differently by the grammar depending on where it stands: inside an
//! expression (always within parentheses) after an operand, `<` is less-than, elsewhere it
//! starts an IRI. There `<x#…>` may begin a comment running to the line's end and `<x'…>`
//! a string, whose closing brackets would not be real. So after such an ambiguous `<` the
//! rest of its line counts like the inside of a token, and where a quote makes the two
//! readings diverge further, closing brackets stop lowering the count for the rest of the
//! text. `VALUES` blocks hold only data, where `<` is always an IRI.

use crate::text_tokens::{iri_end, line_end, string_end};
use crate::QueryError;

/// The deepest nesting of `(`, `{` and `[` accepted, all kinds together. Real queries stay
/// far below (a few levels of groups, OPTIONALs and function calls); the parser and the
/// compiler handle this depth on a 2 MiB thread stack.
pub const MAX_DEPTH: usize = 128;

/// The scan's position: the count, and the line and column (1-based, in characters) of
/// the byte about to be read.
struct Scan {
    depth: usize,
    line: usize,
    column: usize,
    /// Set once the text could be read two ways that disagree on which brackets are real:
    /// from then on, closing brackets no longer lower the count.
    closers_ignored: bool,
}

impl Scan {
    /// Moves past `byte`; UTF-8 continuation bytes do not start a new column.
    fn advance(&mut self, byte: u8) {
        if byte == b'\n' {
            self.line += 1;
            self.column = 1;
        } else if byte & 0xC0 != 0x80 {
            self.column += 1;
        }
    }

    fn open(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(QueryError::Syntax(format!(
                "error at {}:{}: nesting deeper than {MAX_DEPTH} levels of (, {{, [ and <<",
                self.line, self.column
            )));
        }
        Ok(())
    }

    /// Reads `bytes[start..end]` as the inside of a string, IRI or comment: opening
    /// brackets count, closing ones only down to the count at `start`.
    fn inside(&mut self, bytes: &[u8], start: usize, end: usize) -> Result<(), QueryError> {
        let floor = self.depth;
        for &byte in &bytes[start..end] {
            match byte {
                b'(' | b'{' | b'[' => self.open()?,
                b')' | b'}' | b']' if self.depth > floor && !self.closers_ignored => {
                    self.depth -= 1
                }
                _ => {}
            }
            self.advance(byte);
        }
        Ok(())
    }
}

/// Whether a byte can end an operand (a variable, name, number, literal, IRI or bracketed
/// expression; strings and IRIs are tokens of their own), after which `<` inside an
/// expression is less-than.
fn ends_operand(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte >= 0x80 || b"_)]".contains(&byte)
}

/// Whether the keyword `VALUES` starts at `i` (as a whole word).
fn values_keyword(bytes: &[u8], i: usize) -> bool {
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b >= 0x80;
    bytes.len() >= i + 6
        && bytes[i..i + 6].eq_ignore_ascii_case(b"values")
        && !bytes.get(i + 6).is_some_and(word)
        && !(i > 0 && (word(&bytes[i - 1]) || b"?$:".contains(&bytes[i - 1])))
}

/// Refuses `text` when its brackets nest deeper than [`MAX_DEPTH`].
pub fn check(text: &str) -> Result<(), QueryError> {
    // Every level the scan opens is at least one `(`, `{`, `[` or `<` byte: text with no
    // more of them than the limit cannot nest past it (nearly every query), and a count
    // of bytes, which the compiler vectorises, costs a fraction of the scan.
    if brackets(text.as_bytes()) <= MAX_DEPTH {
        return Ok(());
    }
    scan(text)
}

/// The bytes of `bytes` that may open a level: `(`, `{`, `[` and `<`.
///
/// Counted in runs of at most 255 bytes into one byte each, which the compiler adds 16 or
/// 32 at a time; counted straight into a `usize`, each byte's match was widened to 64 bits
/// first, about a cycle a byte (2.4 % of the LUBM mix's light queries).
fn brackets(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|run| {
            run.iter()
                .map(|&b| u8::from(matches!(b, b'(' | b'{' | b'[' | b'<')))
                .sum::<u8>() as usize
        })
        .sum()
}

/// The scan of [`check`], over the whole text.
fn scan(text: &str) -> Result<(), QueryError> {
    let bytes = text.as_bytes();
    let mut scan = Scan {
        depth: 0,
        line: 1,
        column: 1,
        closers_ignored: false,
    };
    // The brackets open outside tokens, innermost last (never longer than the count).
    let mut open: Vec<u8> = Vec::new();
    // The length of `open` inside the `{` of the innermost VALUES block, if any.
    let mut values_block: Option<usize> = None;
    let mut values_pending = false;
    let mut after_operand = false;
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        let token_end = match byte {
            b'#' => Some(line_end(bytes, i)),
            b'"' | b'\'' => Some(string_end(bytes, i)),
            b'<' => iri_end(bytes, i),
            // An escaped character of a local name (`ex:a\'b`) is no quote or bracket.
            b'\\' => Some((i + 2).min(bytes.len())),
            _ => None,
        };
        if let Some(end) = token_end {
            let in_values = values_block.is_some_and(|level| open.len() >= level);
            let ambiguous =
                byte == b'<' && after_operand && open.last() == Some(&b'(') && !in_values;
            scan.inside(bytes, i, end)?;
            let mut next = end;
            if ambiguous {
                let iri = &bytes[i + 1..end - 1];
                let rest = line_end(bytes, end);
                let quoted = |part: &[u8]| part.iter().any(|&b| b == b'\'' || b == b'"');
                if quoted(iri) || (iri.contains(&b'#') && quoted(&bytes[end..rest])) {
                    scan.closers_ignored = true;
                } else if iri.contains(&b'#') {
                    // Read as less-than, the rest of the line is a comment.
                    scan.inside(bytes, end, rest)?;
                    next = rest;
                }
            }
            if byte != b'#' {
                after_operand = true;
            }
            i = next;
            continue;
        }
        match byte {
            b'<' if bytes.get(i + 1) == Some(&b'<') => {
                scan.open()?;
                open.push(b'<');
                scan.advance(b'<');
                scan.advance(b'<');
                after_operand = false;
                i += 2;
                continue;
            }
            // Lowers the count only against a `<<` open outside tokens.
            b'>' if bytes.get(i + 1) == Some(&b'>') && open.last() == Some(&b'<') => {
                if !scan.closers_ignored {
                    scan.depth = scan.depth.saturating_sub(1);
                }
                open.pop();
                scan.advance(b'>');
                scan.advance(b'>');
                after_operand = true;
                i += 2;
                continue;
            }
            b'(' | b'{' | b'[' => {
                scan.open()?;
                open.push(byte);
                if byte == b'{' && values_pending {
                    values_block = Some(open.len());
                    values_pending = false;
                }
            }
            b')' | b'}' | b']' => {
                if !scan.closers_ignored {
                    scan.depth = scan.depth.saturating_sub(1);
                }
                open.pop();
                if values_block.is_some_and(|level| open.len() < level) {
                    values_block = None;
                }
                if byte == b'}' {
                    values_pending = false;
                }
            }
            b'v' | b'V' if values_keyword(bytes, i) => values_pending = true,
            _ => {}
        }
        if !byte.is_ascii_whitespace() {
            after_operand = ends_operand(byte);
        }
        scan.advance(byte);
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count by runs of bytes is the count of each byte, across runs' edges.
    #[test]
    fn brackets_counts_every_opening_byte() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for len in [0, 1, 254, 255, 256, 510, 511, 1000, 4099] {
            for opening in [0, 1, 3, 8] {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        match state % 8 {
                            k if k < opening => b"({[<"[k as usize % 4],
                            _ => b"a)}]> "[(state >> 8) as usize % 6],
                        }
                    })
                    .collect();
                let each = bytes.iter().filter(|b| b"({[<".contains(b)).count();
                assert_eq!(brackets(&bytes), each, "{len} bytes");
            }
        }
        assert_eq!(brackets(&[b'('; 1000]), 1000);
    }

    /// Text with no more opening bytes than the limit passes the scan too, however its
    /// brackets, strings, IRIs and comments are mixed: what lets [`check`] skip it.
    #[test]
    fn few_opening_bytes_never_nest_past_the_limit() {
        let pieces = [
            "(", "{", "[", "<", "<<", ">>", ")", "}", "]", "\"", "'", "\"\"\"", "#", "\n", "?x",
            " ", "<a#", "VALUES", "1", "<x'", ">", "\\",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut checked = 0;
        for _ in 0..5_000 {
            let mut text = String::new();
            while brackets(text.as_bytes()) < MAX_DEPTH - 2 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            assert!(brackets(text.as_bytes()) <= MAX_DEPTH);
            assert!(scan(&text).is_ok(), "{text:?}");
            checked += 1;
        }
        assert_eq!(checked, 5_000);
        // One opening byte more than the limit, all nested: the scan runs and refuses.
        let deep = "(".repeat(MAX_DEPTH + 1);
        assert!(check(&deep).is_err());
    }

    fn nested(open: &str, close: &str, depth: usize) -> String {
        format!("{}1{}", open.repeat(depth), close.repeat(depth))
    }

    fn refused_at(text: &str) -> String {
        match check(text) {
            Err(QueryError::Syntax(message)) => message,
            other => panic!("expected a syntax error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_the_limit_and_refuses_one_more_level_where_it_is_crossed() {
        for (open, close) in [("(", ")"), ("{", "}"), ("[", "]"), ("({[", "]})")] {
            let levels = MAX_DEPTH / open.len();
            assert!(check(&nested(open, close, levels)).is_ok(), "{open}");
        }
        let message = refused_at(&nested("(", ")", MAX_DEPTH + 1));
        assert!(
            message.starts_with("error at 1:129: nesting deeper than 128"),
            "{message}"
        );
        // Kinds add up; the column counts characters, the line follows newlines.
        let text = format!("SELECT * {{\n  é {}", "([".repeat(64));
        assert!(
            refused_at(&text).starts_with("error at 2:132:"),
            "{}",
            refused_at(&text)
        );
    }

    #[test]
    fn reified_triples_nest_like_brackets() {
        let reified = |depth| {
            let mut term = ":o".to_owned();
            for _ in 0..depth {
                term = format!("<< :s :p {term} >>");
            }
            format!("SELECT * {{ ?x ?y {term} }}")
        };
        assert!(check(&reified(MAX_DEPTH - 1)).is_ok());
        assert!(refused_at(&reified(MAX_DEPTH)).contains("nesting deeper than 128"));
        // Side by side they do not add up, and `<` as less-than is no opener.
        let flat = "?x ?y << :s :p :o >> . ".repeat(1000);
        assert!(check(&format!("SELECT * {{ {flat} FILTER(?a < ?b && ?c<?d) }}")).is_ok());
    }

    #[test]
    fn sequences_do_not_add_up() {
        let flat = "{ ?s ?p ?o } UNION ".repeat(10_000) + "{}";
        assert!(check(&flat).is_ok());
        let calls = "FILTER(STRLEN(STR(?x)) > 1) ".repeat(10_000);
        assert!(check(&calls).is_ok());
    }

    #[test]
    fn balanced_brackets_in_strings_iris_and_comments_leave_the_depth_alone() {
        // Brackets inside a token still count while it lasts: the deepest token here opens two.
        let deep = "{".repeat(MAX_DEPTH - 2);
        for token in [
            "\"(a+)+$\"",
            "'''{\n}'''",
            "<http://x/a_(b)>",
            "# a comment ( with ) brackets\n",
            "\"\\\"((\\\"))\"",
        ] {
            let text = format!("{deep}{}{token}{}", token.repeat(1000), "{}");
            assert!(check(&text).is_ok(), "{token}: {:?}", check(&text));
        }
        // Unbalanced opening brackets there are not ignored: a string of ( is refused.
        assert!(check(&format!("\"{}\"", "(".repeat(MAX_DEPTH + 1))).is_err());
    }

    #[test]
    fn closing_brackets_hidden_in_tokens_do_not_hide_nesting() {
        // Closers in a string, an IRI-shaped token, a comment or after an escape never
        // lower the depth below where the token began.
        for hider in ["\")))\"", "<a)))>", "# )))\n", "'))'", "\\)"] {
            let text = format!("(((( {hider} ").repeat(MAX_DEPTH / 4 + 1);
            assert!(check(&text).is_err(), "{hider}");
        }
    }

    #[test]
    fn less_than_read_as_an_iri_does_not_hide_nesting() {
        // Inside an expression `?a<'x>` is less-than and a string that swallows the
        // closers after it; `?a<x#>` is less-than and a comment to the line's end.
        let quote = "SELECT * { FILTER(".to_owned()
            + &format!("{}?a<'x>{}' + ", "(".repeat(40), ")".repeat(40)).repeat(5);
        assert!(check(&quote).is_err());
        let hash = "SELECT * { FILTER(".to_owned()
            + &format!("{}?a<x#>{}\n", "(".repeat(40), ")".repeat(40)).repeat(5);
        assert!(check(&hash).is_err());
    }

    #[test]
    fn iris_with_hashes_and_quotes_in_patterns_and_values_keep_the_count() {
        let patterns = "?s <http://x#p> ?o . OPTIONAL { ?s <http://x#q> ?v }\n".repeat(1000);
        assert!(check(&format!("SELECT * {{\n{patterns}}}")).is_ok());
        let one_line = "?s <http://x#p> ?o OPTIONAL { ?s <http://x/it's> ?v } ".repeat(1000);
        assert!(check(&format!("SELECT * {{ {one_line} }}")).is_ok());
        let rows = "(<http://a#x> <http://a/it's>) (\"it's\" <http://a#y>)\n".repeat(1000);
        let values = format!("SELECT * {{ VALUES (?x ?y) {{\n{rows}}} }}");
        assert!(check(&values).is_ok());
        let compared = "FILTER(?a < <http://x#y> && ?b<3 && (?c) > <http://x#z>)\n".repeat(1000);
        assert!(check(&format!("SELECT * {{ {compared} }}")).is_ok());
        // A variable named values is no VALUES block.
        let not_values = "SELECT * { BIND(1 AS ?values) FILTER(?values<x#> ))))\n".to_owned();
        assert!(check(&(not_values.clone() + &"(".repeat(MAX_DEPTH))).is_err());
    }

    #[test]
    fn a_megabyte_of_brackets_is_refused() {
        for open in ["(", "{", "["] {
            let text = open.repeat(1 << 20);
            assert!(refused_at(&text).starts_with("error at 1:129:"));
        }
        let unclosed = format!("SELECT * {{ ?s ?p \"{}", "x".repeat(1 << 20));
        assert!(check(&unclosed).is_ok());
        // `<<` opens a reified triple: a megabyte of `<` is 2^19 of them.
        let iri_less = "<".repeat(1 << 20);
        assert!(refused_at(&iri_less).starts_with("error at 1:257:"));
    }
}
