//! The tokens a scan of SPARQL text must step over whole, because brackets, quotes, `#`
//! and words inside them are not structure: strings, IRIs written `<…>` and comments.
//! Shared by the scans that run before or beside the parser (`nesting`, `reparse`), and what
//! continues a name.

/// Where the IRI that starts with the `<` at `start` ends (one past its `>`), when the
/// text there has the shape of an IRI: no spaces and none of `<>"{}|^` and backquote
/// before the `>`. Otherwise `<` is an operator.
pub(crate) fn iri_end(bytes: &[u8], start: usize) -> Option<usize> {
    for (offset, &byte) in bytes[start + 1..].iter().enumerate() {
        match byte {
            b'>' => return Some(start + offset + 2),
            b'<' | b'"' | b'{' | b'}' | b'|' | b'^' | b'`' => return None,
            _ if byte.is_ascii_whitespace() => return None,
            _ => {}
        }
    }
    None
}

/// Where the string that starts with the quote at `start` ends: one past its closing
/// quote (three for `'''` and `"""`), or the end of the text when it is not closed.
pub(crate) fn string_end(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let long = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let width = if long { 3 } else { 1 };
    let mut i = start + width;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            byte if byte == quote && bytes[i..].iter().take(width).all(|&b| b == quote) => {
                return (i + width).min(bytes.len());
            }
            // A short string ends at the line's end at the latest.
            b'\n' | b'\r' if !long => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Where the line that holds `from` ends: its `\n`, or the end of the text (a comment's
/// end).
pub(crate) fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |n| from + n)
}

/// Whether `byte` may continue a name: a prefixed name, a variable, a local name, a
/// language tag, or a keyword (bytes of other scripts included).
pub(crate) fn in_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b':') || byte >= 0x80
}
