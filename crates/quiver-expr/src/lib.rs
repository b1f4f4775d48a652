//! Evaluation of SPARQL 1.1 expressions over RDF terms, with SPARQL 1.2's triple terms and
//! directional language-tagged strings.
//!
//! The SPARQL engine hands this crate a [`spargebra::algebra::Expression`] together with a way to
//! look up the current solution's variables, and gets back the resulting [`oxrdf::Term`], or
//! `None` when the evaluation raised an error (type error, unbound variable, overflow…): SPARQL
//! turns such errors into unbound values (BIND, projections) or into `false` (FILTER), so an
//! `Option` is all the engine needs.
//!
//! What lives where:
//! - [`context`]: per-query state ([`EvalContext`]: `NOW()`, base IRI, randomness, regex cache);
//! - `eval`: the expression tree walker, logical operators with SPARQL's error tolerance,
//!   `IF`, `COALESCE`, `IN`, `EXISTS`, and the dispatch of built-in function calls;
//! - `value`: the typed view of RDF terms (numbers, strings, dates…) the operators work on;
//! - `compare` (`=`, `<`…), `order` (ORDER BY total order), `numeric` (arithmetic and
//!   promotion), `string`, `pattern` (REGEX/REPLACE), `datetime`, `hash`, `term` (term
//!   constructors and tests, `LANGDIR`, `STRLANGDIR`…), `triple` (`TRIPLE`, `SUBJECT`,
//!   `PREDICATE`, `OBJECT`, `isTRIPLE`) and `cast` (XSD constructor functions).
//!
//! The semantics follow §17 of the SPARQL 1.1 specification, with XSD values computed by
//! `oxsdatatypes`. Besides the required operators, `+`/`-` also work on `xsd:dateTime`,
//! `xsd:date`, `xsd:time` and durations, as in Oxigraph. The SPARQL 1.2 additions follow the
//! W3C working draft and its test suite: the triple-term functions, `LANGDIR`, `hasLANG`,
//! `hasLANGDIR`, `STRLANGDIR`, base directions kept by the string functions, `=` and ORDER BY on
//! triple terms. (Effective boolean values still follow SPARQL 1.1, where a language-tagged string
//! has one.)
//!
//! ```
//! use oxrdf::{Literal, Term, Variable};
//! use quiver_expr::{evaluate, filter, EvalContext};
//! use spargebra::algebra::Expression;
//!
//! let x = Variable::new_unchecked("x");
//! // ?x * 2
//! let expression = Expression::Multiply(
//!     Box::new(Expression::Variable(x.clone())),
//!     Box::new(Expression::Literal(Literal::from(2))),
//! );
//! let context = EvalContext::new(); // once per query
//! let bindings = |v: &Variable| (v == &x).then(|| Term::from(Literal::from(21)));
//! let no_exists = |_: &spargebra::algebra::GraphPattern| false;
//! assert_eq!(
//!     evaluate(&expression, &bindings, &no_exists, &context),
//!     Some(Literal::from(42).into())
//! );
//! // Errors (here: ?x unbound) are None, and false in a FILTER.
//! assert_eq!(evaluate(&expression, &|_| None, &no_exists, &context), None);
//! assert!(!filter(&expression, &|_| None, &no_exists, &context));
//! ```

pub mod context;

mod cast;
mod compare;
mod datetime;
mod eval;
mod exact;
mod hash;
mod numeric;
mod order;
mod pattern;
mod regexes;
mod string;
mod term;
mod triple;
mod value;

use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, GraphPattern};
use std::cmp::Ordering;

pub use context::EvalContext;
pub use order::OrderedTerm;
pub use oxiri::Iri;

/// Evaluates `expression` against one solution.
///
/// `bindings` gives the value of each variable (`None` = unbound). `exists` answers
/// `EXISTS`/`NOT EXISTS` sub-patterns: it receives the pattern and must tell whether it has at least
/// one solution compatible with the current bindings.
///
/// Returns `None` on an evaluation error, as SPARQL specifies.
///
/// Each call is its own scope for `BNODE(str)`: the same string gives the same blank node within
/// the call and different blank nodes in different calls. When several expressions are evaluated
/// for one solution (e.g. two projections calling `BNODE(?s)`), use [`evaluate_in_scope`] with an
/// id of that solution so that they agree.
pub fn evaluate(
    expression: &Expression,
    bindings: &dyn Fn(&Variable) -> Option<Term>,
    exists: &dyn Fn(&GraphPattern) -> bool,
    context: &EvalContext,
) -> Option<Term> {
    let scope = context.fresh_scope();
    eval::Evaluator::new(bindings, exists, context, scope).eval(expression)
}

/// Like [`evaluate`], with an explicit id of the solution being evaluated.
///
/// Within one [`EvalContext`], `BNODE(str)` returns the same blank node for the same string and
/// `solution_id`, and distinct blank nodes otherwise (§17.4.2.9). The id is opaque: a row number
/// or a hash of the input solution both work.
pub fn evaluate_in_scope(
    expression: &Expression,
    bindings: &dyn Fn(&Variable) -> Option<Term>,
    exists: &dyn Fn(&GraphPattern) -> bool,
    context: &EvalContext,
    solution_id: u64,
) -> Option<Term> {
    eval::Evaluator::new(bindings, exists, context, solution_id).eval(expression)
}

/// FILTER convenience: evaluates `expression` and takes its effective boolean value; errors are
/// `false`.
pub fn filter(
    expression: &Expression,
    bindings: &dyn Fn(&Variable) -> Option<Term>,
    exists: &dyn Fn(&GraphPattern) -> bool,
    context: &EvalContext,
) -> bool {
    evaluate(expression, bindings, exists, context)
        .and_then(|t| effective_boolean_value(&t))
        .unwrap_or(false)
}

/// Effective boolean value (§17.2.2); `None` is a type error.
///
/// Booleans are their value, numbers are false when zero or NaN, strings (simple, `xsd:string`
/// and language-tagged) are false when empty, booleans and numbers with an invalid lexical form are
/// false; every other term (IRIs, blank nodes, other literals) is an error.
pub fn effective_boolean_value(term: &Term) -> Option<bool> {
    value::effective_boolean_value(term)
}

/// Total order used by ORDER BY (§15.1): unbound < blank nodes < IRIs < literals < triple terms.
///
/// Literals are grouped by kind (strings, language-tagged strings, numbers, booleans, dates and
/// times, durations, other datatypes) and compared by value within a kind; values that are equal
/// or incomparable fall back to datatype IRI, lexical form, language tag and base direction, so
/// that only identical terms compare `Equal`. Triple terms compare by subject, predicate, then
/// object.
pub fn order_terms(a: Option<&Term>, b: Option<&Term>) -> Ordering {
    order::order_terms(a, b)
}

/// The `=` operator: value equality for known datatypes, RDFterm-equal otherwise; triple terms
/// are compared component by component.
///
/// `Some(true)`/`Some(false)`, or `None` for a type error (e.g. literals of unknown datatypes
/// with different lexical forms, whose values cannot be known to differ).
pub fn equals(a: &Term, b: &Term) -> Option<bool> {
    compare::equals(a, b)
}

/// The order of the `<`, `<=`, `>`, `>=` operators: `Some(Some(order))` when comparable,
/// `Some(None)` when the values are unordered (NaN: every comparison is false), `None` for a type
/// error (e.g. an IRI, or a number against a string).
pub fn compare(a: &Term, b: &Term) -> Option<Option<Ordering>> {
    compare::partial_compare(a, b)
}

/// `a + b` with numeric type promotion (for SUM); also date/time plus duration.
pub fn add(a: &Term, b: &Term) -> Option<Term> {
    numeric::add(a, b)
}

/// A number (`xsd:integer` and the types derived from it, `xsd:decimal`, `xsd:float`,
/// `xsd:double`) as a value, so that SUM and AVG add a column's numbers without building a
/// term at each step: [`Number::checked_add`] is [`add`] on numbers.
#[derive(Debug, Clone, Copy)]
pub struct Number(value::Numeric);

impl Number {
    /// The number `term` is; `None` for any other term (an ill-formed number included).
    pub fn of(term: &Term) -> Option<Self> {
        value::Value::of(term).numeric().map(Self)
    }

    /// The integer 0, where a SUM starts.
    pub fn zero() -> Self {
        Self(value::Numeric::Integer(0.into()))
    }

    /// `self + other` with numeric type promotion, as [`add`] computes it (`None` where an
    /// integer or decimal sum overflows).
    pub fn checked_add(self, other: Self) -> Option<Self> {
        numeric::add_numbers(self.0, other.0).map(Self)
    }

    /// `self` added `count` times, as one product with numeric type promotion: exact for
    /// integers and decimals (`None` where it overflows), rounded once for floats and
    /// doubles (where `count` additions would round at each).
    pub fn times(self, count: u64) -> Option<Self> {
        let count = value::Numeric::Integer(i64::try_from(count).ok()?.into());
        numeric::multiply_numbers(self.0, count).map(Self)
    }

    /// The value of an `xsd:float`; `None` for any other type.
    pub fn as_float(self) -> Option<f32> {
        match self.0 {
            value::Numeric::Float(value) => Some(value.into()),
            _ => None,
        }
    }

    /// The value of an `xsd:double`; `None` for any other type.
    pub fn as_double(self) -> Option<f64> {
        match self.0 {
            value::Numeric::Double(value) => Some(value.into()),
            _ => None,
        }
    }

    /// An `xsd:float`.
    pub fn float(value: f32) -> Self {
        Self(value::Numeric::Float(value.into()))
    }

    /// An `xsd:double`.
    pub fn double(value: f64) -> Self {
        Self(value::Numeric::Double(value.into()))
    }

    /// The number as a term, as [`add`] writes its result.
    pub fn to_term(self) -> Term {
        value::numeric(self.0)
    }
}

/// `a - b` with numeric type promotion; also date/time differences.
pub fn subtract(a: &Term, b: &Term) -> Option<Term> {
    numeric::subtract(a, b)
}

/// `a * b` with numeric type promotion.
pub fn multiply(a: &Term, b: &Term) -> Option<Term> {
    numeric::multiply(a, b)
}

/// `a / b` with numeric type promotion (for AVG): integer division yields a decimal; dividing an
/// integer or a decimal by zero is an error.
pub fn divide(a: &Term, b: &Term) -> Option<Term> {
    numeric::divide(a, b)
}

/// The smaller of two terms by [`order_terms`] (for MIN).
pub fn min_term(a: Term, b: Term) -> Term {
    if order_terms(Some(&b), Some(&a)) == Ordering::Less {
        b
    } else {
        a
    }
}

/// The larger of two terms by [`order_terms`] (for MAX).
pub fn max_term(a: Term, b: Term) -> Term {
    if order_terms(Some(&b), Some(&a)) == Ordering::Greater {
        b
    } else {
        a
    }
}

/// `STR()` of a term: the lexical form of a literal or the IRI string; `None` for blank nodes.
/// Useful for GROUP_CONCAT.
pub fn string_value(term: &Term) -> Option<&str> {
    match term {
        Term::NamedNode(n) => Some(n.as_str()),
        Term::Literal(l) => Some(l.value()),
        _ => None,
    }
}
