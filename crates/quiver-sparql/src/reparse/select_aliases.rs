//! SELECT expressions that read the variable of an earlier one:
//! `SELECT (COUNT(?v) AS ?count) (?count + 1 AS ?countPlusOne)`.
//!
//! SPARQL 1.2 lets an expression of a SELECT clause use the variable an earlier expression
//! of the same clause binds. In a query that aggregates, spargebra's parser refuses it ("a
//! variable that is unbound"): it checks each expression against the variables of the
//! pattern and the GROUP BY alone. For the second reading (`super`), [`inline_aliases`]
//! writes each such use as the earlier expression itself, in parentheses
//! (`((COUNT(?v)) + 1 AS ?countPlusOne)`), which has the same value for every solution or
//! group. An expression that may give another value each time it is evaluated (it calls
//! `RAND`, `BNODE`, `UUID` or `STRUUID`) is never copied: its uses stay, and so does the
//! parser's error.
//!
//! Each SELECT clause of the text is read this way, subqueries' too, each with its own
//! variables.

use std::ops::Range;

use crate::text_tokens::{in_name, iri_end, line_end, string_end};

/// Functions whose calls may each give another value.
const FRESH: [&[u8]; 4] = [b"RAND", b"BNODE", b"UUID", b"STRUUID"];

/// The most bytes inlining may add to a text, besides as many as it has: expressions that
/// each read the one before double at each step, and a few dozen would fill the memory.
const MOST_ADDED: usize = 64 * 1024;

/// `text` with every use of an earlier SELECT expression's variable in a later one written
/// as that expression; `None` when it has none.
pub(super) fn inline_aliases(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut edits = Edits {
        edits: Vec::new(),
        room: text.len() + MOST_ADDED,
    };
    let mut i = skip_space(bytes, 0);
    while i < bytes.len() {
        let end = token_end(bytes, i);
        i = match is_word(bytes, i..end, b"SELECT") && !continues_name(bytes, i) {
            true => select_clause(text, end, &mut edits)?,
            false => end,
        };
        i = skip_space(bytes, i);
    }
    let edits = edits.edits;
    if edits.is_empty() {
        return None;
    }
    let mut inlined = String::with_capacity(text.len() + 64);
    let mut copied = 0;
    for (range, expression) in edits {
        inlined.push_str(&text[copied..range.start]);
        inlined.push('(');
        inlined.push_str(&expression);
        inlined.push(')');
        copied = range.end;
    }
    inlined.push_str(&text[copied..]);
    Some(inlined)
}

/// The uses of earlier expressions' variables found so far, each with the expression to
/// write instead, and the bytes they may still add.
struct Edits {
    edits: Vec<(Range<usize>, String)>,
    room: usize,
}

impl Edits {
    /// Adds one; `None` once they would add more than their room.
    fn add(&mut self, at: Range<usize>, copy: &str) -> Option<()> {
        self.room = self.room.checked_sub(copy.len() + 2)?;
        self.edits.push((at, copy.to_owned()));
        Some(())
    }
}

/// Reads the items of the SELECT clause whose keyword ends at `from`, adding to `edits`
/// the uses of its earlier expressions' variables; returns where the clause ends, or
/// `None` once the edits outgrow their room.
fn select_clause(text: &str, from: usize, edits: &mut Edits) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = skip_space(bytes, from);
    let end = token_end(bytes, i);
    if is_word(bytes, i..end, b"DISTINCT") || is_word(bytes, i..end, b"REDUCED") {
        i = skip_space(bytes, end);
    }
    // The clause's expressions so far: each one's variable and its text with the uses of
    // earlier ones inlined (`None`: not to be copied).
    let mut aliases: Vec<(&str, Option<String>)> = Vec::new();
    while i < bytes.len() {
        match bytes[i] {
            b'?' | b'$' => i = token_end(bytes, i),
            b'(' => {
                let Some(close) = closing(bytes, i) else {
                    return Some(bytes.len());
                };
                if let Some((expression, variable)) = expression_item(bytes, i + 1..close) {
                    let mut inlined = String::new();
                    let mut copied = expression.start;
                    let mut fresh = false;
                    let mut at = skip_space(bytes, expression.start);
                    while at < expression.end {
                        let end = token_end(bytes, at);
                        let earlier = matches!(bytes[at], b'?' | b'$')
                            .then(|| &text[at + 1..end])
                            .and_then(|name| aliases.iter().rev().find(|(v, _)| *v == name))
                            .and_then(|(_, copy)| copy.as_ref());
                        if let Some(copy) = earlier {
                            edits.add(at..end, copy)?;
                            inlined.push_str(&text[copied..at]);
                            inlined.push('(');
                            inlined.push_str(copy);
                            inlined.push(')');
                            copied = end;
                        }
                        fresh |= FRESH.iter().any(|f| is_word(bytes, at..end, f))
                            && bytes.get(skip_space(bytes, end)) == Some(&b'(');
                        at = skip_space(bytes, end);
                    }
                    inlined.push_str(&text[copied..expression.end]);
                    let copy = (!fresh).then(|| inlined.trim().to_owned());
                    aliases.push((&text[variable], copy));
                }
                i = close + 1;
            }
            // WHERE, FROM, `{`, `*`: the clause has ended.
            _ => return Some(i),
        }
        i = skip_space(bytes, i);
    }
    Some(i)
}

/// The expression and the variable's name of a SELECT item `( expression AS ?variable )`
/// whose inside is `inside`; `None` for another item.
fn expression_item(bytes: &[u8], inside: Range<usize>) -> Option<(Range<usize>, Range<usize>)> {
    let mut depth = 0usize;
    let mut i = skip_space(bytes, inside.start);
    while i < inside.end {
        let end = token_end(bytes, i);
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            // `AS`, then a variable that ends the item.
            _ if depth == 0 && is_word(bytes, i..end, b"AS") => {
                let variable = skip_space(bytes, end);
                let after = token_end(bytes, variable);
                if matches!(bytes.get(variable), Some(b'?' | b'$'))
                    && after > variable + 1
                    && skip_space(bytes, after) >= inside.end
                {
                    return Some((inside.start..i, variable + 1..after));
                }
            }
            _ => {}
        }
        i = skip_space(bytes, end);
    }
    None
}

/// The `)` that closes the `(` at `open`, brackets inside counted.
fn closing(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i = skip_space(bytes, token_end(bytes, i));
    }
    None
}

/// Where the token that starts at `at` ends: a string, an IRI, a variable, a word (a
/// keyword, a function's or a prefixed name), or one byte.
fn token_end(bytes: &[u8], at: usize) -> usize {
    let Some(&byte) = bytes.get(at) else {
        return bytes.len();
    };
    match byte {
        b'"' | b'\'' => string_end(bytes, at),
        b'<' => iri_end(bytes, at).unwrap_or(at + 1),
        b'?' | b'$' => name_end(bytes, at + 1),
        byte if in_name(byte) => name_end(bytes, at),
        _ => at + 1,
    }
}

fn name_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| !in_name(b))
        .map_or(bytes.len(), |n| from + n)
}

/// Past spaces and comments from `from`.
fn skip_space(bytes: &[u8], mut from: usize) -> usize {
    while from < bytes.len() {
        match bytes[from] {
            b'#' => from = line_end(bytes, from),
            byte if byte.is_ascii_whitespace() => from += 1,
            _ => break,
        }
    }
    from
}

/// Whether the token `token` is the keyword `word`.
fn is_word(bytes: &[u8], token: Range<usize>, word: &[u8]) -> bool {
    bytes[token].eq_ignore_ascii_case(word)
}

/// Whether the token at `at` continues a name (`:select`, `?x.SELECT`).
fn continues_name(bytes: &[u8], at: usize) -> bool {
    at > 0 && (in_name(bytes[at - 1]) || matches!(bytes[at - 1], b'?' | b'$' | b'@' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_expression_is_inlined_where_its_variable_is_read() {
        assert_eq!(
            inline_aliases(
                "SELECT (COUNT(?v) AS ?count) (?count + 1 AS ?countPlusOne) WHERE { ?s ?p ?v }"
            )
            .as_deref(),
            Some("SELECT (COUNT(?v) AS ?count) ((COUNT(?v)) + 1 AS ?countPlusOne) WHERE { ?s ?p ?v }")
        );
        // A chain, `$` for `?`, DISTINCT, a variable item between, lowercase keywords.
        assert_eq!(
            inline_aliases(
                "select distinct ?g (sum(?x) as ?s) ($s * 2 as ?d) (?d - ?s AS ?e) {} group by ?g"
            )
            .as_deref(),
            Some(
                "select distinct ?g (sum(?x) as ?s) ((sum(?x)) * 2 as ?d) (((sum(?x)) * 2) - (sum(?x)) AS ?e) {} group by ?g"
            )
        );
    }

    #[test]
    fn only_earlier_expressions_of_the_same_clause() {
        for text in [
            // No expression reads another's variable.
            "SELECT (COUNT(?v) AS ?count) (?v AS ?w) {}",
            // A later one's, a longer name, a string, an IRI, a comment.
            "SELECT (?n + 1 AS ?m) (COUNT(*) AS ?n) {}",
            "SELECT (COUNT(*) AS ?n) (?nn AS ?m) {}",
            "SELECT (COUNT(*) AS ?n) (\"?n\" AS ?m) (<?n> AS ?k) {}",
            "SELECT (COUNT(*) AS ?n) # (?n AS ?m)\n{}",
            // A value that may differ at each call.
            "SELECT (RAND() AS ?r) (?r * 2 AS ?d) {}",
            "SELECT (STRUUID() AS ?u) (STR(?u) AS ?s) {}",
            // Another clause: the subquery's variable is the outer pattern's.
            "SELECT (COUNT(*) AS ?n) { { SELECT ?n {} } }",
            "SELECT * { ?s ?p ?o }",
        ] {
            assert_eq!(inline_aliases(text), None, "{text}");
        }
        // Each clause with its own: the subquery's.
        assert_eq!(
            inline_aliases("SELECT ?n { { SELECT (MAX(?x) AS ?n) (?n + 1 AS ?m) {} } }").as_deref(),
            Some("SELECT ?n { { SELECT (MAX(?x) AS ?n) ((MAX(?x)) + 1 AS ?m) {} } }")
        );
        // Each expression reading the one before twice: the copies double at each step,
        // and the rewrite stops once they outgrow the bound.
        let mut text = String::from("SELECT (COUNT(*) AS ?v0)");
        for i in 1..64 {
            text.push_str(&format!(" (?v{j} + ?v{j} AS ?v{i})", j = i - 1));
        }
        assert_eq!(inline_aliases(&format!("{text} {{}}")), None);
        // A long expression read a few times: once fits, three times is past the bound.
        let long = format!(
            "SELECT (CONCAT(\"{}\", STR(COUNT(*))) AS ?l)",
            "x".repeat(40_000)
        );
        assert!(inline_aliases(&format!("{long} (?l AS ?a) {{}}")).is_some());
        assert_eq!(
            inline_aliases(&format!("{long} (?l AS ?a) (?l AS ?b) (?l AS ?c) {{}}")),
            None
        );
        // Nested brackets and strings with brackets in the copied expression.
        assert_eq!(
            inline_aliases("SELECT (CONCAT(\")(\", STR(COUNT(*))) AS ?l) (STRLEN(?l) AS ?n) {}")
                .as_deref(),
            Some(
                "SELECT (CONCAT(\")(\", STR(COUNT(*))) AS ?l) (STRLEN((CONCAT(\")(\", STR(COUNT(*))))) AS ?n) {}"
            )
        );
    }
}
