//! The boolean keywords in any case: `TRUE`, `False`.
//!
//! SPARQL matches its keywords without regard to case (all but `a`), and `true` and `false`
//! are keywords of its grammar (`BooleanLiteral`), so `SELECT (TRUE AS ?t) {}` is a query.
//! spargebra's parser takes them in lowercase only. A text the parser rejects is therefore
//! read once more with each such keyword in lowercase ([`lowercase_booleans`]), and that
//! parse is taken when it succeeds; otherwise the parser's first error stands. A text the
//! parser accepts never pays for the scan.
//!
//! A keyword is a word standing alone: not a variable's name (`?TRUE`), a part of a
//! prefixed name (`ex:TRUE`, `TRUE:x`), a blank node's label (`_:TRUE`), a language tag
//! (`"x"@TRUE`), nor anything inside a string, an IRI or a comment. Lowercasing keeps every
//! byte where it was, so the line and column of a later error still point into the text
//! as written.

use crate::text_tokens::{iri_end, line_end, string_end};

/// Whether `byte` may continue a name: a prefixed name, a variable, a local name, a
/// language tag, or a keyword (bytes of other scripts included).
fn in_name(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b':') || byte >= 0x80
}

/// `text` with every boolean keyword written in another case than lowercase put in
/// lowercase; `None` when it has none.
pub(crate) fn lowercase_booleans(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut keywords = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let byte = bytes[i];
        match byte {
            b'#' => i = line_end(bytes, i),
            b'"' | b'\'' => i = string_end(bytes, i),
            b'<' => i = iri_end(bytes, i).unwrap_or(i + 1),
            b if b.is_ascii_alphabetic() => {
                let start = i;
                while i < bytes.len() && in_name(bytes[i]) {
                    i += 1;
                }
                let word = &bytes[start..i];
                // A name's part, a variable, a blank node's label or a language tag.
                let named = start > 0
                    && (in_name(bytes[start - 1])
                        || matches!(bytes[start - 1], b'?' | b'$' | b'@' | b'.'));
                let boolean =
                    word.eq_ignore_ascii_case(b"true") || word.eq_ignore_ascii_case(b"false");
                if boolean && !named && word.iter().any(u8::is_ascii_uppercase) {
                    keywords.push(start..i);
                }
            }
            _ => i += 1,
        }
    }
    if keywords.is_empty() {
        return None;
    }
    let mut lowered = text.to_owned().into_bytes();
    for keyword in keywords {
        lowered[keyword].make_ascii_lowercase();
    }
    // Only ASCII letters changed: still UTF-8.
    String::from_utf8(lowered).ok()
}

/// `parse` of `text`, or where it fails, of `text` with its boolean keywords in lowercase;
/// the first error when both fail (or there is no keyword to lower).
pub(crate) fn parse_again<T, E>(text: &str, parse: impl Fn(&str) -> Result<T, E>) -> Result<T, E> {
    let error = match parse(text) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    match lowercase_booleans(text) {
        Some(lowered) => parse(&lowered).map_err(|_| error),
        None => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_in_any_case_are_lowered() {
        assert_eq!(
            lowercase_booleans("SELECT (TRUE as ?t) (False as ?f) {}").as_deref(),
            Some("SELECT (true as ?t) (false as ?f) {}")
        );
        assert_eq!(
            lowercase_booleans("ASK { FILTER(?x = tRuE)}").as_deref(),
            Some("ASK { FILTER(?x = true)}")
        );
        // Lowercase ones alone: nothing to do.
        assert_eq!(lowercase_booleans("ASK { FILTER(true || false) }"), None);
    }

    #[test]
    fn names_strings_iris_and_comments_keep_their_case() {
        for text in [
            "SELECT ?TRUE { ?s ?p $FALSE }",
            "PREFIX TRUE: <http://e/> SELECT * { TRUE:x ex:FALSE ex:True }",
            "SELECT * { _:TRUE ?p \"x\"@TRUE }",
            "SELECT * { ?s ?p 'TRUE', \"False\", '''TRUE''' }",
            "SELECT * { <http://e/TRUE> ?p <FALSE> }",
            "SELECT * { ?s ?p ?o } # TRUE\n",
            "SELECT * { ?s ex:a.TRUE ?o }",
            "SELECT * { ?s ?p TRUEly, FALSEHOOD }",
        ] {
            assert_eq!(lowercase_booleans(text), None, "{text}");
        }
        // After a comment, a string or an IRI, keywords are found again.
        assert_eq!(
            lowercase_booleans("# TRUE\nASK { FILTER(\"TRUE\" != <x> || TRUE) }").as_deref(),
            Some("# TRUE\nASK { FILTER(\"TRUE\" != <x> || true) }")
        );
        // `<` as an operator is no IRI.
        assert_eq!(
            lowercase_booleans("ASK { FILTER(1 < 2 && FALSE) }").as_deref(),
            Some("ASK { FILTER(1 < 2 && false) }")
        );
    }

    #[test]
    fn a_second_parse_only_after_a_failure() {
        let calls = std::cell::Cell::new(0);
        let parse = |text: &str| {
            calls.set(calls.get() + 1);
            if text.contains("TRUE") {
                Err(text.find("TRUE").unwrap())
            } else {
                Ok(text.to_owned())
            }
        };
        assert_eq!(
            parse_again("ASK { FILTER(true) }", parse),
            Ok("ASK { FILTER(true) }".into())
        );
        assert_eq!(calls.get(), 1);
        assert_eq!(
            parse_again("ASK { FILTER(TRUE) }", parse),
            Ok("ASK { FILTER(true) }".into())
        );
        assert_eq!(calls.get(), 3);
        // Both fail: the first error stands.
        assert_eq!(parse_again("ASK { ?TRUE }", parse), Err(7));
    }
}
