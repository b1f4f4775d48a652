//! Behaviour tests of expression evaluation, one module per family of operators and functions.
//!
//! Expressions are written in SPARQL syntax and parsed by spargebra (`SELECT (expr AS ?r) {}`),
//! and expected values are SPARQL constant expressions too, so that each case reads like the
//! examples of the specification.

mod arithmetic;
mod casts;
mod datetime;
mod ebv;
mod errors;
mod hashes;
mod langdir;
mod logic;
mod order;
mod order_total;
mod strings;
mod terms;
mod triples;

use oxrdf::{Term, Variable};
use oxsdatatypes::DateTime;
use quiver_expr::{equals, evaluate, EvalContext};
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::{Query, SparqlParser};
use std::str::FromStr;

const PREFIXES: &str = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX ex: <http://example.org/>
";

/// The instant `NOW()` returns in tests.
pub const NOW: &str = "2024-05-06T07:08:09Z";

/// Parses the SPARQL expression `expression`.
pub fn parse(expression: &str) -> Expression {
    let query = format!("{PREFIXES}SELECT ({expression} AS ?r) {{}}");
    let query = SparqlParser::new()
        .parse_query(&query)
        .unwrap_or_else(|e| panic!("invalid test expression {expression}: {e}"));
    let Query::Select { pattern, .. } = query else {
        panic!("not a SELECT query")
    };
    find_extend(&pattern).unwrap_or_else(|| panic!("no projected expression in {pattern:?}"))
}

fn find_extend(pattern: &GraphPattern) -> Option<Expression> {
    match pattern {
        GraphPattern::Extend {
            variable,
            expression,
            ..
        } if variable.as_str() == "r" => Some(expression.clone()),
        GraphPattern::Extend { inner, .. } | GraphPattern::Project { inner, .. } => {
            find_extend(inner)
        }
        _ => None,
    }
}

/// A deterministic context: fixed `NOW()`, fixed seed, base IRI `http://example.org/base/`.
pub fn context() -> EvalContext {
    EvalContext::new()
        .with_now(DateTime::from_str(NOW).expect("valid dateTime"))
        .with_seed(42)
        .with_base_iri_str("http://example.org/base/")
        .expect("valid base IRI")
}

/// Evaluates `expression` with the variables `vars` (name, SPARQL constant expression) bound;
/// `EXISTS` patterns are all true.
pub fn eval_with(expression: &str, vars: &[(&str, &str)]) -> Option<Term> {
    let vars: Vec<(&str, Term)> = vars
        .iter()
        .map(|(name, value)| (*name, term(value)))
        .collect();
    eval_with_terms(expression, &vars)
}

/// Evaluates `expression` with the variables `vars` bound to the given terms.
pub fn eval_with_terms(expression: &str, vars: &[(&str, Term)]) -> Option<Term> {
    let vars: Vec<(Variable, Term)> = vars
        .iter()
        .map(|(name, value)| (Variable::new_unchecked(*name), value.clone()))
        .collect();
    let bindings = |v: &Variable| vars.iter().find(|(n, _)| n == v).map(|(_, t)| t.clone());
    evaluate(&parse(expression), &bindings, &|_| true, &context())
}

/// Evaluates `expression` with no variable bound.
pub fn eval(expression: &str) -> Option<Term> {
    eval_with(expression, &[])
}

/// The term a constant SPARQL expression evaluates to.
pub fn term(constant: &str) -> Term {
    eval(constant).unwrap_or_else(|| panic!("{constant} is not a valid constant"))
}

/// Whether two terms are the same term, or equal values of the same datatype (`"2"^^xsd:decimal`
/// and `"2.0"^^xsd:decimal`).
pub fn same_value(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Literal(la), Term::Literal(lb)) => {
            a == b
                || (la.datatype() == lb.datatype()
                    && la.language() == lb.language()
                    && equals(a, b) == Some(true))
        }
        _ => a == b,
    }
}

/// Asserts that `expression` evaluates to the value of the constant `expected`.
#[track_caller]
pub fn check(expression: &str, expected: &str) {
    check_with(expression, &[], expected);
}

/// Asserts that `expression` evaluates to the value of `expected` with `vars` bound.
#[track_caller]
pub fn check_with(expression: &str, vars: &[(&str, &str)], expected: &str) {
    let expected = term(expected);
    match eval_with(expression, vars) {
        Some(actual) => assert!(
            same_value(&actual, &expected),
            "{expression}: got {actual}, expected {expected}"
        ),
        None => panic!("{expression}: got an error, expected {expected}"),
    }
}

/// Asserts that `expression` raises an evaluation error.
#[track_caller]
pub fn check_error(expression: &str) {
    if let Some(actual) = eval(expression) {
        panic!("{expression}: got {actual}, expected an error");
    }
}
