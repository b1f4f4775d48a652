//! The boolean keywords in any case: `TRUE`, `False`.
//!
//! SPARQL matches its keywords without regard to case (all but `a`), and `true` and `false`
//! are keywords of its grammar (`BooleanLiteral`), so `SELECT (TRUE AS ?t) {}` is a query;
//! spargebra's parser takes them in lowercase only. [`lowercase_booleans`] writes them in
//! lowercase for the second reading (`super`).
//!
//! A keyword is a word standing alone: not a variable's name (`?TRUE`), a part of a
//! prefixed name (`ex:TRUE`, `TRUE:x`), a blank node's label (`_:TRUE`), a language tag
//! (`"x"@TRUE`), nor anything inside a string, an IRI or a comment.

use crate::text_tokens::{in_name, iri_end, line_end, string_end};

/// `text` with every boolean keyword written in another case than lowercase put in
/// lowercase; `None` when it has none.
pub(super) fn lowercase_booleans(text: &str) -> Option<String> {
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
}
