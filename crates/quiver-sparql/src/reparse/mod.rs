//! A second reading of a text the parser rejects, for what SPARQL allows and spargebra's
//! parser does not: the boolean keywords in any case ([`booleans`]), and SELECT
//! expressions that read the variable of an earlier one ([`select_aliases`], SPARQL 1.2).
//!
//! Both are rewritten into text the parser takes with the same meaning, and the rewritten
//! text is parsed once more; when that fails too, the parser's error on the text as written
//! stands, so errors always point into what the user wrote. A text the parser accepts
//! never pays for the scans.

mod booleans;
mod select_aliases;

use spargebra::SparqlParser;

use crate::QueryError;

/// A parser resolving relative IRIs against `base_iri`, for queries and updates alike.
pub(crate) fn parser(base_iri: Option<&str>) -> Result<SparqlParser, QueryError> {
    match base_iri {
        Some(base) => SparqlParser::new()
            .with_base_iri(base)
            .map_err(|e| QueryError::Syntax(e.to_string())),
        None => Ok(SparqlParser::new()),
    }
}

/// `parse` of `text`, or where it fails, of `text` rewritten as above; the first error when
/// both fail (or there is nothing to rewrite).
pub(crate) fn parse_again<T, E>(text: &str, parse: impl Fn(&str) -> Result<T, E>) -> Result<T, E> {
    let error = match parse(text) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    let lowered = booleans::lowercase_booleans(text);
    let inlined = select_aliases::inline_aliases(lowered.as_deref().unwrap_or(text));
    match inlined.or(lowered) {
        // Inlining nests brackets: the rewritten text passes the same guard as the text.
        Some(rewritten) if crate::nesting::check(&rewritten).is_ok() => {
            parse(&rewritten).map_err(|_| error)
        }
        _ => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_parse_only_after_a_failure() {
        let calls = std::cell::Cell::new(0);
        let parse = |text: &str| {
            calls.set(calls.get() + 1);
            match text.find("TRUE").or(text.find("?n + 1")) {
                Some(at) => Err(at),
                None => Ok(text.to_owned()),
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
        // Both rewrites at once.
        assert_eq!(
            parse_again(
                "SELECT (COUNT(*) AS ?n) (?n + 1 AS ?m) { FILTER(TRUE) }",
                parse
            ),
            Ok("SELECT (COUNT(*) AS ?n) ((COUNT(*)) + 1 AS ?m) { FILTER(true) }".into())
        );
        // Nothing to rewrite, or the rewritten text fails too: the first error stands.
        assert_eq!(parse_again("ASK { ?TRUE }", parse), Err(7));
        assert_eq!(
            parse_again("SELECT (?n + 1 AS ?m) { FILTER(TRUE) }", parse),
            Err(31)
        );
    }

    /// Every cut of texts that exercise the scans, at every byte (a text may end anywhere:
    /// after a keyword, inside a string, an IRI, a bracket or a character of several
    /// bytes): no panic.
    #[test]
    fn the_scans_take_any_text() {
        let texts = [
            r#"SELECT DISTINCT (COUNT(?v) AS ?n) ($n + 1 AS ?m) ("é)\"" AS ?s) WHERE { ?s <p> TRUE }"#,
            "SELECT (MAX(?x) AS ?n) (CONCAT('''a''', \"b\") AS ?c) # c\n (?n AS ?k) {}",
            "PREFIX ex: <http://e/> SELECT ?x (STRUUID() AS ?u) (?u AS ?v) { ?x ex:p False . }",
            "SELECT ( ?n AS ) (AS ?m) ((?m)) (?x AS ?y ?z) { { SELECT (1 AS ?n) (?n AS ?o) {} } }",
        ];
        for text in texts {
            for cut in (0..=text.len()).filter(|&cut| text.is_char_boundary(cut)) {
                let text = &text[..cut];
                let _ = booleans::lowercase_booleans(text);
                let _ = select_aliases::inline_aliases(text);
                let _ = parse_again(text, |text| Err::<(), _>(text.len()));
            }
        }
    }

    /// Expressions that each read the one before, nested deeper than the nesting guard
    /// allows once inlined: the second reading is not parsed (a parser without a depth
    /// limit of its own would overflow its stack).
    #[test]
    fn a_rewrite_nested_too_deep_is_not_parsed() {
        let mut text = String::from("SELECT (COUNT(*) AS ?v0)");
        for i in 1..200 {
            text.push_str(&format!(" (?v{} AS ?v{i})", i - 1));
        }
        text.push_str(" {}");
        assert!(crate::nesting::check(&text).is_ok());
        assert!(select_aliases::inline_aliases(&text).is_some());
        let parsed = std::cell::Cell::new(0);
        let parse = |_: &str| {
            parsed.set(parsed.get() + 1);
            Err::<(), _>(())
        };
        assert_eq!(parse_again(&text, parse), Err(()));
        assert_eq!(parsed.get(), 1);
    }
}
