//! Text searches in a group: `quiver:matches` patterns, and the index's candidates for a
//! `CONTAINS` or case-insensitive `REGEX` filter.
//!
//! `?lit quiver:matches "words"` (with `?lit quiver:score ?score`) is not a triple of the
//! graph: the compiler takes such patterns out of their basic graph pattern and makes each
//! a [`TextPattern`] operand of the group, estimated by the index's count of matches, so
//! the join order puts a selective search first and the graph patterns explore from the
//! literals it finds (and a broad one after them, meeting them in a hash join).
//!
//! A filter conjunct `CONTAINS(?v, "needle")`, `REGEX(?v, "needle")` or `REGEX(?v,
//! "needle", "i")` (a needle of ASCII letters, digits and spaces: no regex syntax) over a
//! variable an operand always binds adds an operand of the literals holding every trigram
//! of the needle, when the index expects fewer of them than that operand's rows. The
//! filter still decides every row: the candidates only narrow what the graph patterns
//! explore, so the rows are those of the scan.

use spargebra::algebra::{Expression, Function};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

use super::Compiler;
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::operator::estimate::estimated_rows;
use crate::operator::text::{MATCHES, SCORE};
use crate::operator::{certain_vars, Operator, TextPattern, TextQuery};

/// Whether `pattern` is a text pattern (its predicate `quiver:matches` or `quiver:score`).
pub(super) fn is_text(pattern: &TriplePattern) -> bool {
    matches!(&pattern.predicate, NamedNodePattern::NamedNode(p) if p.as_str() == MATCHES || p.as_str() == SCORE)
}

/// Whether a basic graph pattern holds a text pattern.
pub(super) fn mentions(patterns: &[TriplePattern]) -> bool {
    patterns.iter().any(is_text)
}

fn misuse(what: &str) -> QueryError {
    QueryError::Text(format!(
        "{what} (write `?literal quiver:matches \"words\"`, and `?literal quiver:score ?score` for its relevance)"
    ))
}

impl Compiler<'_> {
    /// The text searches of `patterns`, and the patterns left.
    pub(super) fn text_searches(
        &mut self,
        patterns: &[TriplePattern],
        graph: GraphRef,
    ) -> Result<(Vec<Operator>, Vec<TriplePattern>), QueryError> {
        let (text, rest): (Vec<&TriplePattern>, Vec<&TriplePattern>) =
            patterns.iter().partition(|p| is_text(p));
        let mut searches: Vec<TextPattern> = Vec::new();
        for pattern in text.iter().filter(|p| !is_score(p)) {
            let TermPattern::Variable(subject) = &pattern.subject else {
                return Err(misuse("quiver:matches needs a variable subject"));
            };
            let TermPattern::Literal(query) = &pattern.object else {
                return Err(misuse("quiver:matches needs a string literal object"));
            };
            let index = self
                .store
                .text_index()
                .ok_or_else(QueryError::no_text_index)?;
            let estimate = index.estimate(query.value()).map_err(QueryError::Text)?;
            searches.push(TextPattern {
                var: self.vars.var(subject),
                query: TextQuery::Matches(query.value().to_owned()),
                score: None,
                graph,
                estimate: estimate as f64,
            });
        }
        for pattern in text.iter().filter(|p| is_score(p)) {
            let (TermPattern::Variable(subject), TermPattern::Variable(score)) =
                (&pattern.subject, &pattern.object)
            else {
                return Err(misuse("quiver:score needs variables on both sides"));
            };
            let subject = self.vars.var(subject);
            let score = self.vars.var(score);
            let search = searches
                .iter_mut()
                .find(|s| s.var == subject && s.score.is_none())
                .ok_or_else(|| misuse("quiver:score needs a quiver:matches of the same literal"))?;
            search.score = Some(score);
        }
        Ok((
            searches.into_iter().map(Operator::Text).collect(),
            rest.into_iter().cloned().collect(),
        ))
    }

    /// The candidates of the index for `conjunct` when it is a `CONTAINS` or `REGEX` the
    /// index narrows, over a variable one of `operators` binds in more rows than the index
    /// expects candidates.
    pub(super) fn contains_search(
        &mut self,
        conjunct: &Expression,
        graph: GraphRef,
        operators: &[Operator],
    ) -> Option<Operator> {
        let index = self.store.text_index()?;
        let (variable, needle) = needle(conjunct)?;
        let var = self.vars.get(variable)?;
        let binders = operators
            .iter()
            .filter(|o| certain_vars(o).contains(&var))
            .map(estimated_rows)
            .reduce(f64::min)?;
        let estimate = index.estimate_candidates(needle)? as f64;
        (estimate < binders).then(|| {
            Operator::Text(TextPattern {
                var,
                query: TextQuery::Contains(needle.to_owned()),
                score: None,
                graph,
                estimate,
            })
        })
    }
}

fn is_score(pattern: &TriplePattern) -> bool {
    matches!(&pattern.predicate, NamedNodePattern::NamedNode(p) if p.as_str() == SCORE)
}

/// The variable and needle of `CONTAINS(?v, "needle")`, `REGEX(?v, "needle")` or
/// `REGEX(?v, "needle", "i")` whose needle has no regex syntax and a simple literal.
fn needle(expression: &Expression) -> Option<(&oxrdf::Variable, &str)> {
    let Expression::FunctionCall(function, arguments) = expression else {
        return None;
    };
    let (variable, literal, regex) = match (function, arguments.as_slice()) {
        (Function::Contains, [Expression::Variable(v), Expression::Literal(l)]) => (v, l, false),
        (Function::Regex, [Expression::Variable(v), Expression::Literal(l)]) => (v, l, true),
        (
            Function::Regex,
            [Expression::Variable(v), Expression::Literal(l), Expression::Literal(flags)],
        ) if flags.value() == "i" || flags.value().is_empty() => (v, l, true),
        _ => return None,
    };
    let simple = literal.language().is_none() && literal.datatype() == oxrdf::vocab::xsd::STRING;
    let plain = literal
        .value()
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == ' ');
    (simple && (plain || !regex)).then_some((variable, literal.value()))
}
