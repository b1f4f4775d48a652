//! The total order of ORDER BY (§15.1).
//!
//! SPARQL fixes unbound < blank nodes < IRIs < literals and orders literals with `<` where it is
//! defined, leaving the rest to the implementation. To stay a total order (sorting needs
//! transitivity) literals are first grouped into kinds, each compared by value within itself:
//! strings, language-tagged strings, numbers (NaN first), booleans, then each date/time type,
//! durations, and finally literals of other datatypes or ill-formed ones. Date/times with and
//! without timezone are ordered as if a missing timezone were UTC, which agrees with every
//! determinate comparison. Terms whose values are equal (`1` and `1.0`) are ordered by datatype
//! IRI, lexical form and language tag, so only identical terms compare `Equal`.

use crate::cast::duration_parts;
use crate::compare::duration;
use crate::exact;
use crate::value::{Numeric, Value};
use oxrdf::{Literal, Term};
use oxsdatatypes::Decimal;
use std::cmp::Ordering;

/// ORDER BY comparison of two possibly unbound terms.
pub(crate) fn order_terms(a: Option<&Term>, b: Option<&Term>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => order_bound(a, b),
    }
}

/// Rank of the kind of term: blank nodes, IRIs, literals, others.
fn term_rank(term: &Term) -> u8 {
    #[allow(unreachable_patterns)] // more variants exist when oxrdf's rdf-12 is enabled
    match term {
        Term::BlankNode(_) => 0,
        Term::NamedNode(_) => 1,
        Term::Literal(_) => 2,
        _ => 3,
    }
}

fn order_bound(a: &Term, b: &Term) -> Ordering {
    match (a, b) {
        (Term::BlankNode(a), Term::BlankNode(b)) => a.as_str().cmp(b.as_str()),
        (Term::NamedNode(a), Term::NamedNode(b)) => a.as_str().cmp(b.as_str()),
        (Term::Literal(a), Term::Literal(b)) => order_literals(a, b),
        _ => term_rank(a)
            .cmp(&term_rank(b))
            // Terms of other kinds (RDF 1.2 triples): by their N-Triples form.
            .then_with(|| a.to_string().cmp(&b.to_string())),
    }
}

/// Rank of the kind of literal.
fn literal_rank(value: &Value<'_>) -> u8 {
    match value {
        Value::String(_) => 0,
        Value::LangString(..) => 1,
        Value::Numeric(_) => 2,
        Value::Boolean(_) => 3,
        Value::DateTime(_) => 4,
        Value::Date(_) => 5,
        Value::Time(_) => 6,
        Value::GYearMonth(_) => 7,
        Value::GYear(_) => 8,
        Value::GMonthDay(_) => 9,
        Value::GMonth(_) => 10,
        Value::GDay(_) => 11,
        Value::Duration(_) | Value::YearMonthDuration(_) | Value::DayTimeDuration(_) => 12,
        _ => 13,
    }
}

fn order_literals(a: &Literal, b: &Literal) -> Ordering {
    let (va, vb) = (Value::of_literal(a), Value::of_literal(b));
    literal_rank(&va)
        .cmp(&literal_rank(&vb))
        .then_with(|| order_values(va, vb))
        .then_with(|| a.datatype().as_str().cmp(b.datatype().as_str()))
        .then_with(|| a.value().cmp(b.value()))
        .then_with(|| a.language().cmp(&b.language()))
}

/// Value order within one kind of literal (`Equal` when no value order applies).
fn order_values(a: Value<'_>, b: Value<'_>) -> Ordering {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::LangString(a, la), Value::LangString(b, lb)) => a
            .cmp(b)
            .then_with(|| la.to_ascii_lowercase().cmp(&lb.to_ascii_lowercase())),
        (Value::Numeric(a), Value::Numeric(b)) => order_numbers(a, b),
        (Value::Boolean(a), Value::Boolean(b)) => a.cmp(&b),
        (Value::DateTime(a), Value::DateTime(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::Date(a), Value::Date(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::Time(a), Value::Time(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::GYearMonth(a), Value::GYearMonth(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::GYear(a), Value::GYear(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::GMonthDay(a), Value::GMonthDay(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::GMonth(a), Value::GMonth(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (Value::GDay(a), Value::GDay(b)) => timeline(a.to_be_bytes(), b.to_be_bytes()),
        (a, b) => match (duration(a), duration(b)) {
            (Some(a), Some(b)) => {
                let (a, b) = (duration_parts(a), duration_parts(b));
                approximate_seconds(a)
                    .total_cmp(&approximate_seconds(b))
                    .then_with(|| a.cmp(&b))
            }
            _ => Ordering::Equal,
        },
    }
}

/// Numbers by exact value (not after promotion to a common type, which rounds and would
/// make the order cyclic), NaN before everything else.
fn order_numbers(a: Numeric, b: Numeric) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => exact::compare(a, b).unwrap_or(Ordering::Equal),
    }
}

/// Orders two date/time encodings: the first 16 bytes are the instant in seconds (normalized to
/// UTC, a missing timezone counting as UTC), the last 2 the timezone.
fn timeline(a: [u8; 18], b: [u8; 18]) -> Ordering {
    let instant = |bytes: [u8; 18]| {
        let mut value = [0; 16];
        value.copy_from_slice(&bytes[..16]);
        Decimal::from_be_bytes(value)
    };
    instant(a).cmp(&instant(b))
}

/// A duration as seconds, counting a month as its average length (30.436875 days).
fn approximate_seconds((months, seconds): (i64, Decimal)) -> f64 {
    #[expect(clippy::cast_precision_loss)] // an approximation by design
    let months = months as f64;
    months * 2_629_746.0 + f64::from(oxsdatatypes::Double::from(seconds))
}
