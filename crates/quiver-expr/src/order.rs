//! The total order of ORDER BY (§15.1).
//!
//! SPARQL fixes unbound < blank nodes < IRIs < literals < triple terms and orders literals with
//! `<` where it is defined, leaving the rest to the implementation. To stay a total order
//! (sorting needs transitivity) literals are first grouped into kinds, each compared by value
//! within itself: strings, language-tagged strings (with or without a base direction), numbers
//! (NaN first), booleans, then each date/time type, durations, and finally literals of other
//! datatypes or ill-formed ones. Date/times with and without timezone are ordered as if a missing
//! timezone were UTC, which agrees with every determinate comparison. Terms whose values are equal
//! (`1` and `1.0`) are ordered by datatype IRI, lexical form, language tag and base direction
//! (none, `ltr`, `rtl`), so only identical terms compare `Equal`. Triple terms are ordered by
//! subject, then predicate, then object, each with this same order.

use crate::cast::duration_parts;
use crate::compare::duration;
use crate::exact;
use crate::value::{Numeric, Value};
use oxrdf::{BaseDirection, Literal, NamedOrBlankNode, Term, Triple};
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

/// A term with its literal's value parsed once, for sorting many terms in ORDER BY's order:
/// [`order_terms`] parses both values at each comparison, which dominates a sort of
/// numbers or dates. Orders exactly as [`order_terms`] does.
#[derive(Debug, Clone, Copy)]
pub struct OrderedTerm<'a> {
    term: &'a Term,
    /// The value of the term when it is a literal.
    value: Option<Value<'a>>,
}

impl<'a> OrderedTerm<'a> {
    pub fn new(term: &'a Term) -> Self {
        let value = match term {
            Term::Literal(literal) => Some(Value::of_literal(literal)),
            _ => None,
        };
        Self { term, value }
    }

    /// The term itself: two ordered terms compare equal exactly when their terms are
    /// identical (`==`, cheaper than [`Ord::cmp`]).
    pub fn term(&self) -> &'a Term {
        self.term
    }
}

impl Ord for OrderedTerm<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.term, self.value, other.term, other.value) {
            (Term::Literal(a), Some(va), Term::Literal(b), Some(vb)) => {
                order_valued_literals(a, va, b, vb)
            }
            _ => order_bound(self.term, other.term),
        }
    }
}

impl PartialOrd for OrderedTerm<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for OrderedTerm<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for OrderedTerm<'_> {}

/// Rank of the kind of term: blank nodes, IRIs, literals, triple terms.
fn term_rank(term: &Term) -> u8 {
    match term {
        Term::BlankNode(_) => 0,
        Term::NamedNode(_) => 1,
        Term::Literal(_) => 2,
        Term::Triple(_) => 3,
    }
}

fn order_bound(a: &Term, b: &Term) -> Ordering {
    match (a, b) {
        (Term::BlankNode(a), Term::BlankNode(b)) => a.as_str().cmp(b.as_str()),
        (Term::NamedNode(a), Term::NamedNode(b)) => a.as_str().cmp(b.as_str()),
        (Term::Literal(a), Term::Literal(b)) => order_literals(a, b),
        (Term::Triple(a), Term::Triple(b)) => order_triples(a, b),
        _ => term_rank(a).cmp(&term_rank(b)),
    }
}

/// Triple terms component by component: subject, predicate, then object, each with this order.
fn order_triples(a: &Triple, b: &Triple) -> Ordering {
    let subjects = match (&a.subject, &b.subject) {
        (NamedOrBlankNode::BlankNode(a), NamedOrBlankNode::BlankNode(b)) => {
            a.as_str().cmp(b.as_str())
        }
        (NamedOrBlankNode::NamedNode(a), NamedOrBlankNode::NamedNode(b)) => {
            a.as_str().cmp(b.as_str())
        }
        (NamedOrBlankNode::BlankNode(_), NamedOrBlankNode::NamedNode(_)) => Ordering::Less,
        (NamedOrBlankNode::NamedNode(_), NamedOrBlankNode::BlankNode(_)) => Ordering::Greater,
    };
    subjects
        .then_with(|| a.predicate.as_str().cmp(b.predicate.as_str()))
        .then_with(|| order_bound(&a.object, &b.object))
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
    order_valued_literals(a, Value::of_literal(a), b, Value::of_literal(b))
}

/// [`order_literals`] with the literals' values already parsed.
fn order_valued_literals(a: &Literal, va: Value<'_>, b: &Literal, vb: Value<'_>) -> Ordering {
    literal_rank(&va)
        .cmp(&literal_rank(&vb))
        .then_with(|| order_values(va, vb))
        .then_with(|| a.datatype().as_str().cmp(b.datatype().as_str()))
        .then_with(|| a.value().cmp(b.value()))
        .then_with(|| a.language().cmp(&b.language()))
        .then_with(|| direction_rank(a.direction()).cmp(&direction_rank(b.direction())))
}

/// Base directions in the order none, `ltr`, `rtl`.
fn direction_rank(direction: Option<BaseDirection>) -> u8 {
    match direction {
        None => 0,
        Some(BaseDirection::Ltr) => 1,
        Some(BaseDirection::Rtl) => 2,
    }
}

/// Value order within one kind of literal (`Equal` when no value order applies).
fn order_values(a: Value<'_>, b: Value<'_>) -> Ordering {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::LangString(a, la, da), Value::LangString(b, lb, db)) => a
            .cmp(b)
            .then_with(|| la.to_ascii_lowercase().cmp(&lb.to_ascii_lowercase()))
            .then_with(|| direction_rank(da).cmp(&direction_rank(db))),
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
