//! Typed view of RDF terms.
//!
//! Operators and functions do not work on lexical forms but on values: `"01"^^xsd:integer` is
//! the number 1, `"2024-01-01"^^xsd:date` a date. [`Value::of`] parses a term into that view
//! (literals of unknown datatypes and ill-formed literals stay [`Value::Other`]), and the
//! constructors at the end turn computed values back into terms.

use oxrdf::vocab::xsd;
use oxrdf::{BaseDirection, BlankNode, Literal, NamedNode, NamedNodeRef, Term, Triple};
use oxsdatatypes::{
    Boolean, Date, DateTime, DayTimeDuration, Decimal, Double, Duration, Float, GDay, GMonth,
    GMonthDay, GYear, GYearMonth, Integer, Time, YearMonthDuration,
};
use std::str::FromStr;

/// A number of one of the four primitive numeric types (derived integer types are integers).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Numeric {
    Integer(Integer),
    Decimal(Decimal),
    Float(Float),
    Double(Double),
}

/// The value of an RDF term, as SPARQL operators see it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    NamedNode(&'a NamedNode),
    BlankNode(&'a BlankNode),
    /// A simple literal, i.e. an `xsd:string` literal.
    String(&'a str),
    /// A language-tagged string: value, language tag and, for an `rdf:dirLangString`, base
    /// direction.
    LangString(&'a str, &'a str, Option<BaseDirection>),
    Boolean(bool),
    Numeric(Numeric),
    DateTime(DateTime),
    Date(Date),
    Time(Time),
    GYearMonth(GYearMonth),
    GYear(GYear),
    GMonthDay(GMonthDay),
    GMonth(GMonth),
    GDay(GDay),
    Duration(Duration),
    YearMonthDuration(YearMonthDuration),
    DayTimeDuration(DayTimeDuration),
    /// A literal of an unknown datatype, or of a known one with an invalid lexical form.
    Other(&'a Literal),
    /// An RDF 1.2 triple term.
    Triple(&'a Triple),
}

impl<'a> Value<'a> {
    /// The value of `term`.
    pub(crate) fn of(term: &'a Term) -> Self {
        match term {
            Term::NamedNode(n) => Self::NamedNode(n),
            Term::BlankNode(b) => Self::BlankNode(b),
            Term::Literal(l) => Self::of_literal(l),
            Term::Triple(t) => Self::Triple(t),
        }
    }

    /// The value of `literal`.
    pub(crate) fn of_literal(literal: &'a Literal) -> Self {
        if let Some(language) = literal.language() {
            return Self::LangString(literal.value(), language, literal.direction());
        }
        parse_typed(literal.value(), literal.datatype()).unwrap_or(Self::Other(literal))
    }

    /// The numeric value, if the term is a number.
    pub(crate) fn numeric(self) -> Option<Numeric> {
        match self {
            Self::Numeric(n) => Some(n),
            _ => None,
        }
    }
}

/// Parses a lexical form of a known datatype; `None` when unknown or ill-formed.
fn parse_typed<'a>(lexical: &'a str, datatype: NamedNodeRef<'_>) -> Option<Value<'a>> {
    Some(
        match datatype
            .as_str()
            .strip_prefix("http://www.w3.org/2001/XMLSchema#")?
        {
            "string" => Value::String(lexical),
            "boolean" => Value::Boolean(parse_boolean(lexical)?),
            "decimal" => Value::Numeric(Numeric::Decimal(Decimal::from_str(lexical).ok()?)),
            "float" => Value::Numeric(Numeric::Float(parse_float(lexical)?.into())),
            "double" => Value::Numeric(Numeric::Double(parse_double(lexical)?.into())),
            "dateTime" | "dateTimeStamp" => Value::DateTime(lexical.parse().ok()?),
            "date" => Value::Date(lexical.parse().ok()?),
            "time" => Value::Time(lexical.parse().ok()?),
            "gYearMonth" => Value::GYearMonth(lexical.parse().ok()?),
            "gYear" => Value::GYear(lexical.parse().ok()?),
            "gMonthDay" => Value::GMonthDay(lexical.parse().ok()?),
            "gMonth" => Value::GMonth(lexical.parse().ok()?),
            "gDay" => Value::GDay(lexical.parse().ok()?),
            "duration" => Value::Duration(lexical.parse().ok()?),
            "yearMonthDuration" => Value::YearMonthDuration(lexical.parse().ok()?),
            "dayTimeDuration" => Value::DayTimeDuration(lexical.parse().ok()?),
            local => {
                let (min, max) = integer_range(local)?;
                let value = parse_integer(lexical)?;
                if value < min || value > max {
                    return None;
                }
                Value::Numeric(Numeric::Integer(Integer::from(value)))
            }
        },
    )
}

/// The value range of `xsd:integer` and its derived types, by local name.
pub(crate) fn integer_range(local: &str) -> Option<(i64, i64)> {
    Some(match local {
        "integer" | "long" => (i64::MIN, i64::MAX),
        "int" => (i32::MIN.into(), i32::MAX.into()),
        "short" => (i16::MIN.into(), i16::MAX.into()),
        "byte" => (i8::MIN.into(), i8::MAX.into()),
        "nonPositiveInteger" => (i64::MIN, 0),
        "negativeInteger" => (i64::MIN, -1),
        // unsignedLong values above i64::MAX are not representable and so treated as ill-formed
        "nonNegativeInteger" | "unsignedLong" => (0, i64::MAX),
        "positiveInteger" => (1, i64::MAX),
        "unsignedInt" => (0, u32::MAX.into()),
        "unsignedShort" => (0, u16::MAX.into()),
        "unsignedByte" => (0, u8::MAX.into()),
        _ => return None,
    })
}

/// Whether `datatype` is one of the numeric datatypes (primitive or derived).
pub(crate) fn is_numeric_datatype(datatype: NamedNodeRef<'_>) -> bool {
    datatype
        .as_str()
        .strip_prefix("http://www.w3.org/2001/XMLSchema#")
        .is_some_and(|local| {
            matches!(local, "decimal" | "float" | "double") || integer_range(local).is_some()
        })
}

/// `xsd:integer` lexical space: `[+-]?[0-9]+` (within 64 bits).
pub(crate) fn parse_integer(lexical: &str) -> Option<i64> {
    let digits = lexical
        .strip_prefix(['+', '-'])
        .unwrap_or(lexical)
        .as_bytes();
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    lexical.parse().ok()
}

/// `xsd:boolean` lexical space.
pub(crate) fn parse_boolean(lexical: &str) -> Option<bool> {
    match lexical {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// `xsd:double` lexical space.
pub(crate) fn parse_double(lexical: &str) -> Option<f64> {
    match lexical {
        "INF" | "+INF" => Some(f64::INFINITY),
        "-INF" => Some(f64::NEG_INFINITY),
        "NaN" => Some(f64::NAN),
        _ if is_finite_double_lexical(lexical) => lexical.parse().ok(),
        _ => None,
    }
}

/// `xsd:float` lexical space (the same as `xsd:double`'s).
pub(crate) fn parse_float(lexical: &str) -> Option<f32> {
    match lexical {
        "INF" | "+INF" => Some(f32::INFINITY),
        "-INF" => Some(f32::NEG_INFINITY),
        "NaN" => Some(f32::NAN),
        _ if is_finite_double_lexical(lexical) => lexical.parse().ok(),
        _ => None,
    }
}

/// `(\+|-)?([0-9]+(\.[0-9]*)?|\.[0-9]+)([Ee](\+|-)?[0-9]+)?`: the finite doubles.
fn is_finite_double_lexical(lexical: &str) -> bool {
    let unsigned = lexical.strip_prefix(['+', '-']).unwrap_or(lexical);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int_part.is_empty() && frac_part.is_empty())
        || !all_digits(int_part)
        || !all_digits(frac_part)
    {
        return false;
    }
    exponent.is_none_or(|exponent| {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !exponent.is_empty() && all_digits(exponent)
    })
}

/// Effective boolean value (§17.2.2).
pub(crate) fn effective_boolean_value(term: &Term) -> Option<bool> {
    match Value::of(term) {
        Value::Boolean(b) => Some(b),
        Value::String(s) | Value::LangString(s, ..) => Some(!s.is_empty()),
        Value::Numeric(Numeric::Integer(i)) => Some(i != Integer::from(0)),
        Value::Numeric(Numeric::Decimal(d)) => Some(d != Decimal::from(0)),
        Value::Numeric(Numeric::Float(f)) => Some(Boolean::from(f).into()),
        Value::Numeric(Numeric::Double(d)) => Some(Boolean::from(d).into()),
        // A boolean or a number with an invalid lexical form is false.
        Value::Other(l) if l.datatype() == xsd::BOOLEAN || is_numeric_datatype(l.datatype()) => {
            Some(false)
        }
        _ => None,
    }
}

/// A boolean term.
pub(crate) fn boolean(value: bool) -> Term {
    Literal::from(value).into()
}

/// A simple literal term.
pub(crate) fn string(value: impl Into<String>) -> Term {
    Literal::new_simple_literal(value).into()
}

/// A term of any value that oxrdf can turn into a literal.
pub(crate) fn literal(value: impl Into<Literal>) -> Term {
    Term::Literal(value.into())
}

/// The term of a number.
pub(crate) fn numeric(value: Numeric) -> Term {
    match value {
        Numeric::Integer(v) => literal(v),
        Numeric::Decimal(v) => literal(v),
        Numeric::Float(v) => literal(v),
        Numeric::Double(v) => literal(v),
    }
}
