//! The commonest IRIs checked without a full parser.
//!
//! An IRI is checked as the parsers check it, with `oxiri`'s RFC 3987 parser, which walks
//! it character by character through the grammar's branches: in a bulk insert of new
//! subjects that check was a quarter of parsing (the loader's `fast_lines`), and on the
//! emulator's light queries, whose constants are new IRIs each time, 2.9 % of the
//! processor time (a query shape's IRIs, `quiver-sparql`'s `query_shapes`). Almost every
//! IRI in real data is plain: `scheme://host/path?query#fragment` in ASCII, a host of
//! letters, digits, `-`, `.`, `_`, `~`, no port, no percent-encoding. [`is_plain_iri`]
//! accepts exactly such IRIs, each of them valid under RFC 3987's `IRI` rule (an authority
//! whose host is a registered name, `path-abempty`, `iquery`, `ifragment`), in one pass
//! over the bytes; anything else goes to `oxiri`, so no IRI is accepted that it would
//! reject (a property test checks that against `oxiri` on random strings).

/// RFC 3986 `unreserved`, ASCII.
fn unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 `pchar` without percent-encoding: `unreserved`, `sub-delims`, `:` and `@`.
fn pchar(c: u8) -> bool {
    unreserved(c)
        || matches!(
            c,
            b'!' | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
        )
}

/// Whether `iri` is a plain absolute IRI (see the module documentation). `false` says
/// nothing: the IRI may still be valid.
pub fn is_plain_iri(iri: &[u8]) -> bool {
    let mut i = 0;
    let at = |i: usize| iri.get(i).copied();
    // scheme ":"
    if !at(0).is_some_and(|c| c.is_ascii_alphabetic()) {
        return false;
    }
    while at(i).is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')) {
        i += 1;
    }
    if at(i) != Some(b':') || at(i + 1) != Some(b'/') || at(i + 2) != Some(b'/') {
        return false;
    }
    i += 3;
    // "//" host: a non-empty registered name, followed by the path, query, fragment or
    // the end (a ":" would start a port: left to the full parser).
    let host = i;
    while at(i).is_some_and(unreserved) {
        i += 1;
    }
    if i == host || !matches!(at(i), None | Some(b'/' | b'?' | b'#')) {
        return false;
    }
    // path-abempty
    while at(i).is_some_and(|c| pchar(c) || c == b'/') {
        i += 1;
    }
    // "?" query, "#" fragment
    for separator in [b'?', b'#'] {
        if at(i) == Some(separator) {
            i += 1;
            while at(i).is_some_and(|c| pchar(c) || matches!(c, b'/' | b'?')) {
                i += 1;
            }
        }
    }
    i == iri.len()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn plain_iris_are_taken_and_others_left_to_the_parser() {
        for iri in [
            "http://www.Department0.University0.edu/GraduateStudent12",
            "http://swat.cse.lehigh.edu/onto/univ-bench.owl#name",
            "https://example.org/a/b;c=d?x=1&y=(2)#frag/ment?",
            "urn-x://h",
            "http://h?q",
            "http://h#",
        ] {
            assert!(is_plain_iri(iri.as_bytes()), "{iri}");
            assert!(oxrdf::NamedNodeRef::new(iri).is_ok(), "{iri}");
        }
        for iri in [
            "http://h:8080/p",
            "http://u@h/p",
            "http:///p",
            "http://[::1]/p",
            "http://h/p%20q",
            "http://h/é",
            "urn:isbn:123",
            "http://h/a#b#c",
            "http://h/a b",
            "1http://h",
            "",
        ] {
            assert!(!is_plain_iri(iri.as_bytes()), "{iri}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Whatever the check takes, the full parser takes too (strings of few characters,
        /// most of them structural, so that ports, user names, brackets, percent signs
        /// and repeated separators come up often).
        #[test]
        fn every_plain_iri_is_valid(
            iri in "([a-z0-9][a-z0-9+.:-]{0,2}(:(//)?)?|[a-z]{1,3}://[a-z0-9.:@%\\[\\]-]{0,6})[-a-z0-9.:/?#@%é \\[\\]]{0,10}",
        ) {
            if is_plain_iri(iri.as_bytes()) {
                prop_assert!(oxrdf::NamedNodeRef::new(iri.as_str()).is_ok(), "{}", iri);
            }
        }

        /// Plain IRIs built from the grammar are all taken, and all valid.
        #[test]
        fn plain_iris_built_from_the_grammar_are_taken(
            iri in "[a-z][a-z0-9+.-]{0,5}://[a-zA-Z0-9._~-]{1,12}(/[a-zA-Z0-9._~!$&'()*+,;=:@-]{0,8}){0,4}(\\?[a-zA-Z0-9/?=&:@-]{0,8})?(#[a-zA-Z0-9/?:@-]{0,8})?",
        ) {
            prop_assert!(is_plain_iri(iri.as_bytes()), "{}", iri);
            prop_assert!(oxrdf::NamedNodeRef::new(iri.as_str()).is_ok(), "{}", iri);
        }
    }
}
