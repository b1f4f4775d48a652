//! A guard against deeply nested triple terms in RDF text, run before the parser.
//!
//! A triple term may hold another as its object (`<<( :s :p <<( … )>> )>>`), and Turtle's
//! reified triples nest the same way (`<< :s :p << … >> >>`). The parsers Quiver uses have
//! no depth limit, and terms nested some thousands deep overflow a thread's stack while
//! they are built and dropped, killing the process: one line of a file, or one request
//! body, would take a server down. The store refuses more than [`MAX_TRIPLE_NESTING`]
//! levels anyway, so [`NestingScan`] reads the text once, in linear time and without
//! allocating, and refuses it at the line and column where `<<` opens one level too many.
//!
//! The scan reads N-Triples, N-Quads, Turtle and TriG as their lexers do: `<<` opens a
//! level and `>>` closes one outside strings (short and long, with escapes), IRIs and
//! comments, and a backslash outside them escapes the next character (a local name's
//! `\'`). It keeps its state between calls, so a stream is scanned block by block as it
//! is read ([`GuardedReader`]). Text that is not one of these syntaxes can only be
//! over-counted, which refuses nothing a parser would accept: real data nests a level or
//! two.

use std::io::Read;

use crate::term::MAX_TRIPLE_NESTING;

/// Text whose triple terms nest deeper than [`MAX_TRIPLE_NESTING`]; line and column are
/// 1-based (columns count bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: triple terms nested more than {MAX_TRIPLE_NESTING} deep")]
pub struct NestedTooDeeply {
    pub line: u64,
    pub column: u64,
}

/// Where the scan stands between two bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Normal,
    /// After a backslash outside strings: the next byte is escaped.
    Escape,
    /// After one `<`: a second opens a level, anything else starts an IRI.
    Less,
    /// After one `>` outside an IRI: a second closes a level.
    Greater,
    Iri,
    Comment,
    /// `run` quotes `quote` seen in a row where a string may start (1 or 2).
    Quotes {
        quote: u8,
        run: u8,
    },
    Short {
        quote: u8,
        escaped: bool,
    },
    /// Inside `"""…"""` or `'''…'''`; `run` quotes seen in a row before the end.
    Long {
        quote: u8,
        run: u8,
        escaped: bool,
    },
}

/// The scan of one document, fed its bytes in order.
#[derive(Debug, Clone)]
pub struct NestingScan {
    state: State,
    depth: usize,
    line: u64,
    column: u64,
    /// N-Triples or N-Quads: every statement on its own line.
    lines: bool,
}

impl Default for NestingScan {
    fn default() -> Self {
        Self {
            state: State::Normal,
            depth: 0,
            line: 1,
            column: 0,
            lines: false,
        }
    }
}

impl NestingScan {
    /// The scan of a line-based document (N-Triples, N-Quads), where no token or triple
    /// term spans lines: a block of lines without `<<` is skipped at memory speed, only
    /// its last, unfinished line read.
    pub fn for_lines() -> Self {
        Self {
            lines: true,
            ..Self::default()
        }
    }

    /// Scans the next bytes of the document.
    pub fn scan(&mut self, bytes: &[u8]) -> Result<(), NestedTooDeeply> {
        if !self.lines {
            return self.scan_bytes(bytes);
        }
        let Some(first) = memchr::memchr(b'\n', bytes) else {
            return self.scan_bytes(bytes);
        };
        // The line under way ends here, and with it every token and level.
        self.scan_bytes(&bytes[..=first])?;
        self.state = State::Normal;
        self.depth = 0;
        let rest = &bytes[first + 1..];
        let last = memchr::memrchr(b'\n', rest).map_or(0, |last| last + 1);
        let (whole, unfinished) = rest.split_at(last);
        if memchr::memmem::find(whole, b"<<").is_none() {
            // Whole lines that open no level; the unfinished one is read from its start.
            self.line += memchr::memchr_iter(b'\n', whole).count() as u64;
        } else {
            self.scan_bytes(whole)?;
            self.state = State::Normal;
            self.depth = 0;
        }
        self.scan_bytes(unfinished)
    }

    fn scan_bytes(&mut self, bytes: &[u8]) -> Result<(), NestedTooDeeply> {
        for &byte in bytes {
            self.column += 1;
            self.step(byte)?;
            if byte == b'\n' {
                self.line += 1;
                self.column = 0;
            }
        }
        Ok(())
    }

    fn step(&mut self, byte: u8) -> Result<(), NestedTooDeeply> {
        self.state = match self.state {
            State::Normal => self.normal(byte),
            State::Escape => State::Normal,
            State::Less if byte == b'<' => {
                self.depth += 1;
                if self.depth > MAX_TRIPLE_NESTING {
                    return Err(NestedTooDeeply {
                        line: self.line,
                        column: self.column.saturating_sub(1).max(1),
                    });
                }
                State::Normal
            }
            State::Less | State::Iri => match byte {
                b'>' | b'\n' => State::Normal,
                _ => State::Iri,
            },
            State::Greater if byte == b'>' => {
                self.depth = self.depth.saturating_sub(1);
                State::Normal
            }
            State::Greater => self.normal(byte),
            State::Comment if byte == b'\n' => State::Normal,
            State::Comment => State::Comment,
            State::Quotes { quote, run } if byte == quote => {
                if run == 2 {
                    State::Long {
                        quote,
                        run: 0,
                        escaped: false,
                    }
                } else {
                    State::Quotes { quote, run: 2 }
                }
            }
            // `""`: an empty string, then this byte as usual.
            State::Quotes { run: 2, .. } => self.normal(byte),
            State::Quotes { quote, .. } => short(quote, false, byte),
            State::Short { quote, escaped } => short(quote, escaped, byte),
            State::Long {
                quote,
                run,
                escaped,
            } => match byte {
                _ if escaped => State::Long {
                    quote,
                    run: 0,
                    escaped: false,
                },
                b'\\' => State::Long {
                    quote,
                    run: 0,
                    escaped: true,
                },
                _ if byte == quote && run == 2 => State::Normal,
                _ if byte == quote => State::Long {
                    quote,
                    run: run + 1,
                    escaped: false,
                },
                _ => State::Long {
                    quote,
                    run: 0,
                    escaped: false,
                },
            },
        };
        Ok(())
    }

    /// The state after `byte` read outside any token.
    fn normal(&self, byte: u8) -> State {
        match byte {
            b'<' => State::Less,
            b'>' => State::Greater,
            b'#' => State::Comment,
            b'"' | b'\'' => State::Quotes {
                quote: byte,
                run: 1,
            },
            b'\\' => State::Escape,
            _ => State::Normal,
        }
    }
}

/// The state after `byte` inside a short string.
fn short(quote: u8, escaped: bool, byte: u8) -> State {
    match byte {
        _ if escaped => State::Short {
            quote,
            escaped: false,
        },
        b'\\' => State::Short {
            quote,
            escaped: true,
        },
        // A short string ends at its quote, or at the line's end at the latest.
        b'\n' | b'\r' => State::Normal,
        _ if byte == quote => State::Normal,
        _ => State::Short {
            quote,
            escaped: false,
        },
    }
}

/// Scans `text` whole: a document without `<<` opens no level and is not read further.
pub fn check_nesting(text: &[u8]) -> Result<(), NestedTooDeeply> {
    if memchr::memmem::find(text, b"<<").is_none() {
        return Ok(());
    }
    NestingScan::default().scan(text)
}

/// A reader that scans what it reads: a read past the limit fails with an
/// `InvalidData` error naming the line, before the parser sees the bytes.
pub struct GuardedReader<R> {
    inner: R,
    scan: NestingScan,
}

impl<R> GuardedReader<R> {
    /// A reader of Turtle or TriG.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            scan: NestingScan::default(),
        }
    }

    /// A reader of N-Triples or N-Quads ([`NestingScan::for_lines`]).
    pub fn for_lines(inner: R) -> Self {
        Self {
            inner,
            scan: NestingScan::for_lines(),
        }
    }
}

impl<R: Read> Read for GuardedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.scan
            .scan(&buf[..read])
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        Ok(read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(open: &str, close: &str, depth: usize) -> String {
        let mut term = "<http://o>".to_owned();
        for _ in 0..depth {
            term = format!("{open} <http://s> <http://p> {term} {close}");
        }
        format!("<http://a> <http://b> {term} .\n")
    }

    #[test]
    fn refuses_one_level_past_the_limit_where_it_opens() {
        for (open, close) in [("<<(", ")>>"), ("<<", ">>")] {
            assert!(check_nesting(nested(open, close, MAX_TRIPLE_NESTING).as_bytes()).is_ok());
            let text = format!(
                "# a comment\n{}",
                nested(open, close, MAX_TRIPLE_NESTING + 1)
            );
            let error = check_nesting(text.as_bytes()).unwrap_err();
            // The line's first 22 bytes, then one level per `{open} <http://s> <http://p> `:
            // the first `<` of the level past the limit.
            let level = (open.len() + 23) as u64;
            let column = 22 + level * MAX_TRIPLE_NESTING as u64 + 1;
            assert_eq!((error.line, error.column), (2, column), "{open}");
        }
    }

    #[test]
    fn levels_side_by_side_and_in_tokens_do_not_count() {
        let flat = nested("<<(", ")>>", 3).repeat(10_000);
        assert!(check_nesting(flat.as_bytes()).is_ok());
        let deep_text = "<<(".repeat(1000);
        for hidden in [
            format!("<a> <b> \"{deep_text}\" .\n"),
            format!("<a> <b> '''x ' '' {deep_text}''' .\n"),
            format!("<a> <b> \"\"\"\\\"\"\" {deep_text}\"\"\" .\n"),
            format!("# {deep_text}\n<a> <b> <c> ."),
            format!("<a> <b> <{}> .\n", "x".repeat(10)),
        ] {
            assert!(check_nesting(hidden.as_bytes()).is_ok(), "{hidden}");
        }
        // A closed string does not hide what follows it.
        for shown in [
            format!("<a> <b> \"x\" , {deep_text}"),
            format!("<a> <b> \"\" , {deep_text}"),
            format!("<a> <b> \"\"\"x\"\"\" , {deep_text}"),
            format!("ex:a\\'b ex:c {deep_text}"),
            format!("<a> <b> \"unclosed\n{deep_text}"),
        ] {
            assert!(check_nesting(shown.as_bytes()).is_err(), "{shown}");
        }
    }

    #[test]
    fn a_stream_is_scanned_across_its_reads() {
        let text = nested("<<(", ")>>", MAX_TRIPLE_NESTING + 1);
        // One byte at a time: `<<` and `"""` split between reads still count.
        let mut scan = NestingScan::default();
        let refused = text
            .as_bytes()
            .chunks(1)
            .map(|chunk| scan.scan(chunk))
            .find_map(Result::err);
        assert_eq!(refused, check_nesting(text.as_bytes()).err());
        let mut reader = GuardedReader::new(text.as_bytes());
        let error = std::io::read_to_string(&mut reader).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("line 1"), "{error}");
        // Line by line, in reads of any size: the same refusal, where it opens.
        let text = format!("{}{text}", nested("<<(", ")>>", 1).repeat(3));
        for size in [1, 7, 100, 4096] {
            let mut scan = NestingScan::for_lines();
            let refused = text
                .as_bytes()
                .chunks(size)
                .map(|chunk| scan.scan(chunk))
                .find_map(Result::err)
                .expect("refused");
            assert_eq!(
                Some(refused),
                check_nesting(text.as_bytes()).err(),
                "{size}"
            );
            assert_eq!(refused.line, 4);
        }
        let fine = nested("<<(", ")>>", 2);
        let read = std::io::read_to_string(GuardedReader::new(fine.as_bytes())).unwrap();
        assert_eq!(read, fine);
    }
}
