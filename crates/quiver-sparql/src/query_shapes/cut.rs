//! A query's text cut into its shape and its IRIs.
//!
//! Written by hand, a lexer of the few tokens that matter: strings (short and long, with
//! escapes), comments, IRIs (`IRIREF` of the grammar: `<` then no `<>"{}|^\`` and no
//! character up to the space, then `>`), and words, for `BASE` and the colon that ends a
//! `PREFIX` declaration's name. Anything it misreads only makes a shape whose check fails
//! (the module doc of `query_shapes`).

use std::fmt::Write;

use super::SLOT;

/// A text's shape and the IRIs cut out of it, in the order of their slots.
#[derive(Debug, PartialEq, Eq)]
pub struct Cut<'a> {
    pub shape: String,
    /// In place for the first eight: a light query's few IRIs take no allocation.
    pub iris: smallvec::SmallVec<[&'a str; 8]>,
}

/// Whether `byte` may stand inside an IRI written `<…>`.
fn in_iri(byte: u8) -> bool {
    byte > b' '
        && !matches!(
            byte,
            b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' | b'\\'
        )
}

/// The end of the string opening at `at` (its quote `quote`): past its closing quote, or
/// the text's end.
fn string_end(bytes: &[u8], at: usize, quote: u8) -> usize {
    let long = bytes[at..].starts_with(&[quote; 3]);
    let mut i = at + if long { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            q if q == quote && !long => return i + 1,
            q if q == quote && bytes[i..].starts_with(&[quote; 3]) => return i + 3,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// `text` cut into its shape and IRIs; `None` when it is parsed as it is: it has a `BASE`,
/// a slot's IRI of its own, or no IRI to cut.
pub fn cut(text: &str) -> Option<Cut<'_>> {
    if text.contains(SLOT) {
        return None;
    }
    let bytes = text.as_bytes();
    let mut shape = String::with_capacity(text.len() + 32);
    let mut iris = smallvec::SmallVec::new();
    // The text copied into the shape so far ends here.
    let mut copied = 0;
    // The last two bytes before `i` that are no space (of the tokens read).
    let mut last = [b' '; 2];
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'#' => {
                i = bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n' || b == b'\r')
                    .map_or(bytes.len(), |n| i + n);
            }
            b'"' | b'\'' => {
                i = string_end(bytes, i, byte);
                last = [last[1], byte];
            }
            b'<' => {
                let end = bytes[i + 1..]
                    .iter()
                    .position(|&b| !in_iri(b))
                    .map(|n| i + 1 + n);
                match end.filter(|&end| bytes[end] == b'>') {
                    Some(end) => {
                        // A PREFIX declaration's IRI follows its name's colon; a literal's
                        // datatype follows `^^`.
                        let declared = last[1] == b':';
                        let datatype = last == [b'^', b'^'];
                        if !declared && !datatype {
                            shape.push_str(&text[copied..i]);
                            shape.push('<');
                            shape.push_str(SLOT);
                            // Written in place: a `to_string` per IRI allocated.
                            let _ = write!(shape, "{}", iris.len());
                            shape.push('>');
                            iris.push(&text[i + 1..end]);
                            copied = end + 1;
                        }
                        i = end + 1;
                        last = [last[1], b'>'];
                    }
                    None => {
                        i += 1;
                        last = [last[1], byte];
                    }
                }
            }
            b if b.is_ascii_alphabetic() => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'_' | b':' | b'-'))
                {
                    i += 1;
                }
                let word = &text[start..i];
                let variable = start > 0 && matches!(bytes[start - 1], b'?' | b'$');
                if !variable && word.eq_ignore_ascii_case("base") {
                    return None;
                }
                last = [last[1], bytes[i - 1]];
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                i += 1;
                last = [last[1], byte];
            }
        }
    }
    if iris.is_empty() {
        return None;
    }
    shape.push_str(&text[copied..]);
    Some(Cut { shape, iris })
}
