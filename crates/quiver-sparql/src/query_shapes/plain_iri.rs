//! A quick check for the IRIs applications mostly send, `scheme://host/path` in plain
//! ASCII, that the full IRI parser needs not see.
//!
//! Each IRI put into a shape's slot is checked as the parser checks it, by `oxiri`'s
//! RFC 3987 parser, which walks it character by character through the grammar's
//! branches. On the emulator's mix (LUBM-100, two clients) that check was 2.9 % of the
//! processor time: the light queries' constants are new IRIs each time. The form checked
//! here is a strict part of that grammar, so whatever passes it the parser takes too
//! (the tests check it against `oxiri`); everything else, including every valid IRI of
//! another form (`urn:`, percent-escapes, a port, a user, non-ASCII), goes to the parser
//! as before.
//!
//! The form: a scheme (a letter, then letters, digits, `+`, `-`, `.`), then `://`, a host
//! of at least one unreserved character (letters, digits, `-`, `.`, `_`, `~`), then a path
//! of `/`-separated segments of unreserved characters, sub-delimiters (`!$&'()*+,;=`),
//! `:` and `@`, then optionally a query after `?` and a fragment after `#`, both of those
//! characters, `/` and `?`: RFC 3987's `scheme ":" "//" ireg-name ipath-abempty
//! [ "?" iquery ] [ "#" ifragment ]` without percent-escapes, ports, users or non-ASCII.

/// Byte classes: a bit per role.
const SCHEME: u8 = 1;
const HOST: u8 = 2;
const PATH: u8 = 4;

/// The roles of each ASCII byte (bytes above 127 have none).
const CLASSES: [u8; 128] = {
    let mut classes = [0u8; 128];
    let mut byte = 0;
    while byte < 128 {
        let b = byte as u8;
        let alphanumeric = b.is_ascii_alphanumeric();
        let unreserved = alphanumeric || matches!(b, b'-' | b'.' | b'_' | b'~');
        let sub_delimiter = matches!(
            b,
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'='
        );
        if alphanumeric || matches!(b, b'+' | b'-' | b'.') {
            classes[byte] |= SCHEME;
        }
        if unreserved {
            classes[byte] |= HOST;
        }
        if unreserved || sub_delimiter || matches!(b, b':' | b'@' | b'/') {
            classes[byte] |= PATH;
        }
        byte += 1;
    }
    classes
};

fn has(byte: u8, role: u8) -> bool {
    CLASSES
        .get(usize::from(byte))
        .is_some_and(|c| c & role != 0)
}

/// Whether `iri` has the plain form above (and so is an IRI the parser takes).
pub(super) fn is_plain(iri: &str) -> bool {
    let bytes = iri.as_bytes();
    let Some((&first, rest)) = bytes.split_first() else {
        return false;
    };
    if !first.is_ascii_alphabetic() {
        return false;
    }
    let scheme = rest.iter().take_while(|&&b| has(b, SCHEME)).count();
    let Some(rest) = rest[scheme..].strip_prefix(b"://") else {
        return false;
    };
    let host = rest.iter().take_while(|&&b| has(b, HOST)).count();
    if host == 0 {
        return false;
    }
    let rest = &rest[host..];
    if rest
        .first()
        .is_some_and(|&b| b != b'/' && b != b'?' && b != b'#')
    {
        return false;
    }
    // The path, then a query after a `?`, then a fragment after a `#`: the query and the
    // fragment may hold `?` too, never a second `#`.
    let path = rest.iter().take_while(|&&b| has(b, PATH)).count();
    let mut rest = &rest[path..];
    if let Some(query) = rest.strip_prefix(b"?") {
        rest = &query[query
            .iter()
            .take_while(|&&b| has(b, PATH) || b == b'?')
            .count()..];
    }
    if let Some(fragment) = rest.strip_prefix(b"#") {
        rest = &fragment[fragment
            .iter()
            .take_while(|&&b| has(b, PATH) || b == b'?')
            .count()..];
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::is_plain;
    use oxrdf::NamedNodeRef;
    use proptest::prelude::*;

    /// The IRIs of LUBM's data and of common vocabularies take the quick way.
    #[test]
    fn common_iris_are_plain() {
        for iri in [
            "http://www.Department0.University0.edu/GraduateStudent17",
            "http://swat.cse.lehigh.edu/onto/univ-bench.owl#Course",
            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
            "https://example.org/a_b~c/d.e-f/(g)!$&'*+,;=:@",
            "http://example.org",
            "http://example.org/a?b=c?d#e?f/g",
            "http://example.org#top",
        ] {
            assert!(is_plain(iri), "{iri}");
            assert!(NamedNodeRef::new(iri).is_ok(), "{iri}");
        }
    }

    /// Valid IRIs of other forms, and invalid ones, go to the parser.
    #[test]
    fn other_forms_are_not_plain() {
        for iri in [
            "",
            "urn:isbn:0451450523",
            "http://example.org/%41",
            "http://example.org:8080/a",
            "http://user@example.org/",
            "http://[::1]/",
            "http:///a",
            "1http://a/",
            "http://exämple.org/",
            "http://a/ b",
            "http://a/<b>",
            "http://a/b\\c",
            "mailto:a@b",
            "http://a/b#c#d",
            "http://a/b?c%20",
            "http://a/b#c[d]",
        ] {
            assert!(!is_plain(iri), "{iri}");
        }
    }

    fn iri_like() -> impl Strategy<Value = String> {
        let pieces = prop::collection::vec(
            prop::sample::select(vec![
                "a", "Z", "0", "9", "+", "-", ".", "_", "~", ":", "/", "//", "://", "@", "%", "%4",
                "%41", "?", "#", "[", "]", "!", "$", "&", "'", "(", ")", "*", ",", ";", "=", " ",
                "<", ">", "\"", "{", "}", "|", "\\", "^", "`", "é", "\u{feff}", "http", "x://h",
            ]),
            0..16,
        );
        // Most strings start as a plain IRI does, so that the pieces after test the path.
        let start = prop::sample::select(vec!["", "x://h", "http://a.b", "h://a/", "a+b.c-d://e"]);
        (start, pieces).prop_map(|(start, pieces)| format!("{start}{}", pieces.concat()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Whatever the quick check takes, the full parser takes.
        #[test]
        fn plain_iris_parse(iri in iri_like()) {
            if is_plain(&iri) {
                prop_assert!(NamedNodeRef::new(&iri).is_ok(), "{:?}", iri);
            }
        }
    }
}
