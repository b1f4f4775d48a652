//! The comparison operators of §17.3: `=` (and so `!=` and `IN`), `<`, `<=`, `>`, `>=`.
//!
//! `=` compares values when both operands are of known datatypes (numbers across numeric types,
//! strings, booleans, dates…) and falls back to RDFterm-equal otherwise: identical terms are
//! equal, IRIs and blank nodes are equal only to themselves, and two literals that are not
//! identical and whose values cannot be known to differ (an unknown datatype or an ill-formed
//! lexical form is involved) are a type error. Known values of different types are simply not
//! equal.
//!
//! Two triple terms (RDF 1.2) are `=` when their components are: the same subject and
//! predicate, and `=` objects (so `<<( :s :p 1 )>> = <<( :s :p 1.0 )>>`); as the operator mapping
//! joins the three component tests with `&&`, different subjects or predicates make the result
//! false even when the objects cannot be compared. A triple term is not equal to any other kind of
//! term. Language-tagged strings are equal when their values, language tags (case-insensitively)
//! and base directions (none, `ltr` or `rtl`) are.
//!
//! Ordering operators are only defined between numbers, strings (simple literals and
//! `xsd:string`), booleans, values of the same date/time type, and durations; anything else is a
//! type error. Comparisons involving NaN are false rather than errors.

use crate::numeric;
use crate::value::Value;
use oxrdf::{Term, Triple};
use oxsdatatypes::Duration;
use std::cmp::Ordering;

/// The `=` operator: `None` is a type error.
pub(crate) fn equals(a: &Term, b: &Term) -> Option<bool> {
    if a == b && !matches!(a, Term::Triple(_)) {
        // Identical terms are equal, except NaN which is not equal to itself (nor are triple terms
        // with a NaN object, compared component by component below).
        return Some(!matches!(Value::of(a), Value::Numeric(n) if n.is_nan()));
    }
    let (a, b) = (Value::of(a), Value::of(b));
    Some(match (a, b) {
        (Value::Triple(a), Value::Triple(b)) => return triples_equal(a, b),
        // A triple term equals no term of another kind, literals of unknown datatypes included.
        (Value::Triple(_), _) | (_, Value::Triple(_)) => false,
        (Value::Other(_), Value::NamedNode(_) | Value::BlankNode(_))
        | (Value::NamedNode(_) | Value::BlankNode(_), Value::Other(_)) => false,
        // A language-tagged string is an rdf:langString (or rdf:dirLangString): it equals no
        // literal of another datatype, known or not.
        (Value::Other(_), Value::LangString(..)) | (Value::LangString(..), Value::Other(_)) => {
            false
        }
        (Value::Other(_), _) | (_, Value::Other(_)) => return None,
        (Value::NamedNode(a), Value::NamedNode(b)) => a == b,
        (Value::BlankNode(a), Value::BlankNode(b)) => a == b,
        (Value::String(a), Value::String(b)) => a == b,
        (Value::LangString(a, la, da), Value::LangString(b, lb, db)) => {
            a == b && la.eq_ignore_ascii_case(lb) && da == db
        }
        (Value::Boolean(a), Value::Boolean(b)) => a == b,
        (Value::Numeric(a), Value::Numeric(b)) => numeric::equal(a, b),
        // With a timezone on one side only, equality can be indeterminate: an error.
        (Value::DateTime(a), Value::DateTime(b)) => a.partial_cmp(&b)?.is_eq(),
        (Value::Date(a), Value::Date(b)) => a.partial_cmp(&b)?.is_eq(),
        (Value::Time(a), Value::Time(b)) => a.partial_cmp(&b)?.is_eq(),
        (Value::GYearMonth(a), Value::GYearMonth(b)) => a == b,
        (Value::GYear(a), Value::GYear(b)) => a == b,
        (Value::GMonthDay(a), Value::GMonthDay(b)) => a == b,
        (Value::GMonth(a), Value::GMonth(b)) => a == b,
        (Value::GDay(a), Value::GDay(b)) => a == b,
        (a, b) => match (duration(a), duration(b)) {
            (Some(a), Some(b)) => a == b,
            // Known values of different types.
            _ => false,
        },
    })
}

/// `=` on two triple terms: `a.subject = b.subject && a.predicate = b.predicate && a.object =
/// b.object`, with `&&`'s error tolerance (subjects and predicates, IRIs and blank nodes, compare
/// without errors).
fn triples_equal(a: &Triple, b: &Triple) -> Option<bool> {
    if a.subject != b.subject || a.predicate != b.predicate {
        return Some(false);
    }
    equals(&a.object, &b.object)
}

/// Any of the three duration types as an `xsd:duration`.
pub(crate) fn duration(value: Value<'_>) -> Option<Duration> {
    match value {
        Value::Duration(v) => Some(v),
        Value::YearMonthDuration(v) => Some(v.into()),
        Value::DayTimeDuration(v) => Some(v.into()),
        _ => None,
    }
}

/// The order of `<`, `<=`, `>`, `>=`: `Some(None)` when unordered (NaN), `None` on a type error
/// (including date/times whose order is indeterminate because only one has a timezone).
pub(crate) fn partial_compare(a: &Term, b: &Term) -> Option<Option<Ordering>> {
    let (a, b) = (Value::of(a), Value::of(b));
    let determinate = |order: Option<Ordering>| order.map(Some);
    match (a, b) {
        (Value::Numeric(a), Value::Numeric(b)) => Some(numeric::compare(a, b)),
        (Value::String(a), Value::String(b)) => Some(Some(a.cmp(b))),
        (Value::Boolean(a), Value::Boolean(b)) => Some(Some(a.cmp(&b))),
        (Value::DateTime(a), Value::DateTime(b)) => determinate(a.partial_cmp(&b)),
        (Value::Date(a), Value::Date(b)) => determinate(a.partial_cmp(&b)),
        (Value::Time(a), Value::Time(b)) => determinate(a.partial_cmp(&b)),
        (Value::GYearMonth(a), Value::GYearMonth(b)) => determinate(a.partial_cmp(&b)),
        (Value::GYear(a), Value::GYear(b)) => determinate(a.partial_cmp(&b)),
        (Value::GMonthDay(a), Value::GMonthDay(b)) => determinate(a.partial_cmp(&b)),
        (Value::GMonth(a), Value::GMonth(b)) => determinate(a.partial_cmp(&b)),
        (Value::GDay(a), Value::GDay(b)) => determinate(a.partial_cmp(&b)),
        (a, b) => determinate(duration(a)?.partial_cmp(&duration(b)?)),
    }
}

/// Whether `order` satisfies the operator described by the orders it accepts.
pub(crate) fn test(a: &Term, b: &Term, accepted: &[Ordering]) -> Option<bool> {
    Some(partial_compare(a, b)?.is_some_and(|order| accepted.contains(&order)))
}
