//! The columns of `SELECT *` in their order of appearance in the query.
//!
//! spargebra's parser lists the variables of `SELECT *` sorted by name (`?o ?p ?s` for
//! `{ ?s ?p ?o }`), which Oxigraph keeps; Jena lists them in the order they first appear in
//! the pattern, which is what a reader expects. The algebra no longer says whether the
//! query wrote `*` (an explicit `SELECT ?o ?p ?s` parses to the same projection), so
//! [`is_select_star`] reads the query's head, and [`appearance_order`] walks the pattern in
//! the order of its text: triple patterns subject, predicate, object; a join's left side
//! first; `BIND`'s variable after the pattern it extends; a subquery's projection in its
//! own order.

use oxrdf::Variable;
use spargebra::algebra::GraphPattern;
use spargebra::term::{NamedNodePattern, TermPattern};

/// Whether the query text's (outer) query form is `SELECT *` (also `SELECT DISTINCT *`,
/// `SELECT REDUCED *`), after its prologue of `BASE` and `PREFIX` declarations and
/// comments. Text it does not recognise answers false.
pub fn is_select_star(text: &str) -> bool {
    // Most queries have no `*` at all: one scan of the bytes (memchr) settles them, where
    // reading the head word by word cost 1.6 % of a light query (the LUBM mix's
    // templates open with three declarations).
    if !text.as_bytes().contains(&b'*') {
        return false;
    }
    let mut words = HeadWords { rest: text };
    loop {
        let Some(word) = words.next() else {
            return false;
        };
        if word.eq_ignore_ascii_case("BASE") {
            if !words.next().is_some_and(|w| w.starts_with('<')) {
                return false;
            }
        } else if word.eq_ignore_ascii_case("PREFIX") {
            let name = words.next();
            if !name.is_some_and(|n| n.ends_with(':')) {
                return false;
            }
            if !words.next().is_some_and(|w| w.starts_with('<')) {
                return false;
            }
        } else if word.eq_ignore_ascii_case("SELECT") {
            let mut next = words.next();
            if next.is_some_and(|w| {
                w.eq_ignore_ascii_case("DISTINCT") || w.eq_ignore_ascii_case("REDUCED")
            }) {
                next = words.next();
            }
            return next == Some("*");
        } else {
            return false;
        }
    }
}

/// The words of a query's head: IRIs (`<…>`), `*`, and runs of other characters up to a
/// space, `<`, `*`, `{`, `(` or `#`; comments are skipped.
struct HeadWords<'a> {
    rest: &'a str,
}

impl<'a> Iterator for HeadWords<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            self.rest = self.rest.trim_start();
            if let Some(comment) = self.rest.strip_prefix('#') {
                self.rest = comment.find('\n').map_or("", |end| &comment[end..]);
                continue;
            }
            break;
        }
        let end = if self.rest.starts_with('<') {
            self.rest.find('>')? + 1
        } else if self.rest.starts_with(['*', '{', '(']) {
            1
        } else {
            self.rest
                .find(|c: char| c.is_whitespace() || matches!(c, '<' | '*' | '{' | '(' | '#'))
                .unwrap_or(self.rest.len())
        };
        if end == 0 {
            return None;
        }
        let (word, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(word)
    }
}

/// `variables` (the projection of `SELECT *`) reordered by their first appearance in
/// `pattern`; any the walk does not meet keep their relative order at the end.
pub fn appearance_order(pattern: &GraphPattern, variables: &[Variable]) -> Vec<Variable> {
    let mut seen = Vec::new();
    walk(pattern, &mut |v| {
        if !seen.contains(v) {
            seen.push(v.clone());
        }
    });
    let mut ordered: Vec<Variable> = seen.into_iter().filter(|v| variables.contains(v)).collect();
    for v in variables {
        if !ordered.contains(v) {
            ordered.push(v.clone());
        }
    }
    ordered
}

fn walk(pattern: &GraphPattern, found: &mut impl FnMut(&Variable)) {
    let term = |t: &TermPattern, found: &mut dyn FnMut(&Variable)| {
        if let TermPattern::Variable(v) = t {
            found(v)
        }
    };
    match pattern {
        GraphPattern::Bgp { patterns } => {
            for triple in patterns {
                term(&triple.subject, found);
                if let NamedNodePattern::Variable(v) = &triple.predicate {
                    found(v);
                }
                term(&triple.object, found);
            }
        }
        GraphPattern::Path {
            subject, object, ..
        } => {
            term(subject, found);
            term(object, found);
        }
        GraphPattern::Join { left, right }
        | GraphPattern::LeftJoin { left, right, .. }
        | GraphPattern::Union { left, right } => {
            walk(left, found);
            walk(right, found);
        }
        GraphPattern::Minus { left, .. } => walk(left, found),
        GraphPattern::Graph { name, inner } => {
            if let NamedNodePattern::Variable(v) = name {
                found(v);
            }
            walk(inner, found);
        }
        GraphPattern::Extend {
            inner, variable, ..
        } => {
            walk(inner, found);
            found(variable);
        }
        GraphPattern::Values { variables, .. } => variables.iter().for_each(&mut *found),
        GraphPattern::Project { variables, .. } => variables.iter().for_each(&mut *found),
        GraphPattern::Group {
            variables,
            aggregates,
            ..
        } => {
            variables.iter().for_each(&mut *found);
            aggregates.iter().for_each(|(v, _)| found(v));
        }
        GraphPattern::Filter { inner, .. }
        | GraphPattern::OrderBy { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::Service { inner, .. } => walk(inner, found),
        #[allow(unreachable_patterns)]
        other => other.on_in_scope_variable(found),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_is_read_after_the_prologue() {
        for text in [
            "SELECT * { ?s ?p ?o }",
            "select distinct*{?s ?p ?o}",
            "# a comment\nBASE <http://b/> PREFIX ex: <http://e/> PREFIX : <http://x#> SELECT REDUCED * WHERE {}",
            "PREFIX ex:<http://e/>SELECT *{}",
        ] {
            assert!(is_select_star(text), "{text}");
        }
        for text in [
            "SELECT ?s { ?s ?p ?o }",
            "SELECT (1 AS ?x) {}",
            "ASK { ?s ?p ?o }",
            "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }",
            "PREFIX select: <http://e/> SELECT ?x {}",
            "",
            "PREFIX",
        ] {
            assert!(!is_select_star(text), "{text}");
        }
    }
}
