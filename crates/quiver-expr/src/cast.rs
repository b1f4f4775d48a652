//! XSD constructor functions (§17.5): `xsd:string(…)`, `xsd:integer(…)`, … called as
//! `Function::Custom` with the datatype IRI.
//!
//! Casting follows the XPath casting table: strings are parsed in the target's lexical space
//! (after trimming surrounding whitespace), numbers and booleans convert into each other
//! (`xsd:integer` truncates, NaN and infinities cannot become decimals or integers), dates,
//! times and durations convert along XPath's allowed paths, and everything can become an
//! `xsd:string` (the canonical form of the value, or the IRI string). Derived integer types
//! (`xsd:int`, `xsd:nonNegativeInteger`…) cast like `xsd:integer` plus a range check. Blank
//! nodes and invalid conversions are errors.

use crate::compare::duration;
use crate::value::{self, integer_range, parse_boolean, parse_double, parse_float, Numeric, Value};
use oxrdf::{Literal, NamedNode, Term};
use oxsdatatypes::{
    Boolean, Date, DateTime, DayTimeDuration, Decimal, Double, Duration, Float, GDay, GMonth,
    GMonthDay, GYear, GYearMonth, Integer, Time, YearMonthDuration,
};
use std::str::FromStr;

/// Casts `arg` to the XSD datatype `datatype`; `None` if it is not a castable datatype or the
/// value cannot be cast.
pub(crate) fn cast(datatype: &NamedNode, arg: &Term) -> Option<Term> {
    let local = datatype
        .as_str()
        .strip_prefix("http://www.w3.org/2001/XMLSchema#")?;
    let value = Value::of(arg);
    // A string being parsed: XML whitespace around the lexical form is ignored.
    let string = match value {
        Value::String(s) => Some(s.trim_matches([' ', '\t', '\n', '\r'])),
        _ => None,
    };
    Some(match local {
        "string" => value::string(to_string(arg, value)?),
        "boolean" => value::literal(Boolean::from(match (string, value) {
            (Some(s), _) => parse_boolean(s)?,
            (None, Value::Boolean(b)) => b,
            (None, Value::Numeric(n)) => match n {
                Numeric::Integer(v) => Boolean::from(v).into(),
                Numeric::Decimal(v) => Boolean::from(v).into(),
                Numeric::Float(v) => Boolean::from(v).into(),
                Numeric::Double(v) => Boolean::from(v).into(),
            },
            _ => return None,
        })),
        "decimal" => value::literal(match (string, value) {
            (Some(s), _) => Decimal::from_str(s).ok()?,
            (None, Value::Boolean(b)) => Decimal::from(b),
            (None, Value::Numeric(n)) => match n {
                Numeric::Integer(v) => v.into(),
                Numeric::Decimal(v) => v,
                Numeric::Float(v) => v.try_into().ok()?,
                Numeric::Double(v) => v.try_into().ok()?,
            },
            _ => return None,
        }),
        "float" => value::literal(match (string, value) {
            (Some(s), _) => Float::from(parse_float(s)?),
            (None, Value::Boolean(b)) => Float::from(Boolean::from(b)),
            (None, Value::Numeric(n)) => match n {
                Numeric::Integer(v) => v.into(),
                Numeric::Decimal(v) => v.into(),
                Numeric::Float(v) => v,
                Numeric::Double(v) => v.into(),
            },
            _ => return None,
        }),
        "double" => value::literal(match (string, value) {
            (Some(s), _) => Double::from(parse_double(s)?),
            (None, Value::Boolean(b)) => Double::from(Boolean::from(b)),
            (None, Value::Numeric(n)) => n.to_double(),
            _ => return None,
        }),
        "dateTime" => value::literal(match (string, value) {
            (Some(s), _) => DateTime::from_str(s).ok()?,
            (None, Value::DateTime(v)) => v,
            (None, Value::Date(v)) => v.try_into().ok()?,
            _ => return None,
        }),
        "date" => value::literal(match (string, value) {
            (Some(s), _) => Date::from_str(s).ok()?,
            (None, Value::Date(v)) => v,
            (None, Value::DateTime(v)) => v.try_into().ok()?,
            _ => return None,
        }),
        "time" => value::literal(match (string, value) {
            (Some(s), _) => Time::from_str(s).ok()?,
            (None, Value::Time(v)) => v,
            (None, Value::DateTime(v)) => v.into(),
            _ => return None,
        }),
        "gYearMonth" => value::literal(match (string, value) {
            (Some(s), _) => GYearMonth::from_str(s).ok()?,
            (None, Value::GYearMonth(v)) => v,
            (None, Value::DateTime(v)) => v.try_into().ok()?,
            (None, Value::Date(v)) => v.into(),
            _ => return None,
        }),
        "gYear" => value::literal(match (string, value) {
            (Some(s), _) => GYear::from_str(s).ok()?,
            (None, Value::GYear(v)) => v,
            (None, Value::DateTime(v)) => v.try_into().ok()?,
            (None, Value::Date(v)) => v.try_into().ok()?,
            _ => return None,
        }),
        "gMonthDay" => value::literal(match (string, value) {
            (Some(s), _) => GMonthDay::from_str(s).ok()?,
            (None, Value::GMonthDay(v)) => v,
            (None, Value::DateTime(v)) => v.into(),
            (None, Value::Date(v)) => v.into(),
            _ => return None,
        }),
        "gMonth" => value::literal(match (string, value) {
            (Some(s), _) => GMonth::from_str(s).ok()?,
            (None, Value::GMonth(v)) => v,
            (None, Value::DateTime(v)) => v.into(),
            (None, Value::Date(v)) => v.into(),
            _ => return None,
        }),
        "gDay" => value::literal(match (string, value) {
            (Some(s), _) => GDay::from_str(s).ok()?,
            (None, Value::GDay(v)) => v,
            (None, Value::DateTime(v)) => v.into(),
            (None, Value::Date(v)) => v.into(),
            _ => return None,
        }),
        "duration" => value::literal(match string {
            Some(s) => Duration::from_str(s).ok()?,
            None => duration(value)?,
        }),
        "yearMonthDuration" => value::literal(match string {
            Some(s) => YearMonthDuration::from_str(s).ok()?,
            // Casting keeps the year-month part of a duration.
            None => YearMonthDuration::new(duration_parts(duration(value)?).0),
        }),
        "dayTimeDuration" => value::literal(match string {
            Some(s) => DayTimeDuration::from_str(s).ok()?,
            // Casting keeps the day-time part of a duration.
            None => DayTimeDuration::new(duration_parts(duration(value)?).1),
        }),
        local => {
            let (min, max) = integer_range(local)?;
            let integer = to_integer(string, value)?;
            if integer < Integer::from(min) || integer > Integer::from(max) {
                return None;
            }
            Literal::new_typed_literal(integer.to_string(), datatype.clone()).into()
        }
    })
}

/// The integer value of a cast source.
fn to_integer(string: Option<&str>, value: Value<'_>) -> Option<Integer> {
    Some(match (string, value) {
        (Some(s), _) => value::parse_integer(s)?.into(),
        (None, Value::Boolean(b)) => Integer::from(b),
        (None, Value::Numeric(n)) => match n {
            Numeric::Integer(v) => v,
            Numeric::Decimal(v) => v.try_into().ok()?,
            Numeric::Float(v) => v.try_into().ok()?,
            Numeric::Double(v) => v.try_into().ok()?,
        },
        _ => return None,
    })
}

/// The `xsd:string` cast: the canonical form of known values, the lexical form of other
/// literals, the string of an IRI.
fn to_string(term: &Term, value: Value<'_>) -> Option<String> {
    Some(match value {
        Value::NamedNode(n) => n.as_str().to_owned(),
        Value::BlankNode(_) | Value::Triple(_) => return None,
        Value::String(s) | Value::LangString(s, ..) => s.to_owned(),
        Value::Boolean(v) => v.to_string(),
        Value::Numeric(Numeric::Integer(v)) => v.to_string(),
        Value::Numeric(Numeric::Decimal(v)) => v.to_string(),
        Value::Numeric(Numeric::Float(v)) => v.to_string(),
        Value::Numeric(Numeric::Double(v)) => v.to_string(),
        Value::DateTime(v) => v.to_string(),
        Value::Date(v) => v.to_string(),
        Value::Time(v) => v.to_string(),
        Value::GYearMonth(v) => v.to_string(),
        Value::GYear(v) => v.to_string(),
        Value::GMonthDay(v) => v.to_string(),
        Value::GMonth(v) => v.to_string(),
        Value::GDay(v) => v.to_string(),
        Value::Duration(v) => v.to_string(),
        Value::YearMonthDuration(v) => v.to_string(),
        Value::DayTimeDuration(v) => v.to_string(),
        Value::Other(_) => match term {
            Term::Literal(l) => l.value().to_owned(),
            _ => return None,
        },
    })
}

/// The total months and seconds of a duration (its encoding: 8 bytes of months, 16 of seconds).
pub(crate) fn duration_parts(duration: Duration) -> (i64, Decimal) {
    let bytes = duration.to_be_bytes();
    let mut months = [0; 8];
    months.copy_from_slice(&bytes[..8]);
    let mut seconds = [0; 16];
    seconds.copy_from_slice(&bytes[8..]);
    (i64::from_be_bytes(months), Decimal::from_be_bytes(seconds))
}
