//! Arithmetic (§17.3 `+ - * /`, unary `+ -`) and the numeric functions of §17.4.4.
//!
//! Binary operators promote both operands to their common type along
//! `xsd:integer → xsd:decimal → xsd:float → xsd:double` (derived integer types count as
//! `xsd:integer`). Integer and decimal arithmetic is exact and errors on overflow; dividing two
//! integers yields a decimal and dividing an integer or decimal by zero is an error, whereas
//! floats and doubles follow IEEE 754 (infinities, NaN). Additions and subtractions that involve
//! dates, times or durations are delegated to `datetime`.

use crate::context::EvalContext;
use crate::datetime;
use crate::value::{self, Numeric, Value};
use oxrdf::Term;
use oxsdatatypes::{Decimal, Double, Float, Integer};
use std::cmp::Ordering;

/// Two numbers promoted to their common type.
pub(crate) enum Promoted {
    Integer(Integer, Integer),
    Decimal(Decimal, Decimal),
    Float(Float, Float),
    Double(Double, Double),
}

impl Numeric {
    /// Rank in the promotion order.
    fn rank(self) -> u8 {
        match self {
            Self::Integer(_) => 0,
            Self::Decimal(_) => 1,
            Self::Float(_) => 2,
            Self::Double(_) => 3,
        }
    }

    fn to_decimal(self) -> Option<Decimal> {
        match self {
            Self::Integer(v) => Some(v.into()),
            Self::Decimal(v) => Some(v),
            Self::Float(v) => Decimal::try_from(v).ok(),
            Self::Double(v) => Decimal::try_from(v).ok(),
        }
    }

    fn to_float(self) -> Float {
        match self {
            Self::Integer(v) => v.into(),
            Self::Decimal(v) => v.into(),
            Self::Float(v) => v,
            Self::Double(v) => v.into(),
        }
    }

    pub(crate) fn to_double(self) -> Double {
        match self {
            Self::Integer(v) => v.into(),
            Self::Decimal(v) => v.into(),
            Self::Float(v) => v.into(),
            Self::Double(v) => v,
        }
    }

    /// Whether this number is NaN.
    pub(crate) fn is_nan(self) -> bool {
        match self {
            Self::Float(v) => v.is_nan(),
            Self::Double(v) => v.is_nan(),
            Self::Integer(_) | Self::Decimal(_) => false,
        }
    }
}

/// Promotes `a` and `b` to their common numeric type.
pub(crate) fn promote(a: Numeric, b: Numeric) -> Option<Promoted> {
    Some(match a.rank().max(b.rank()) {
        0 => match (a, b) {
            (Numeric::Integer(a), Numeric::Integer(b)) => Promoted::Integer(a, b),
            _ => return None,
        },
        1 => Promoted::Decimal(a.to_decimal()?, b.to_decimal()?),
        2 => Promoted::Float(a.to_float(), b.to_float()),
        _ => Promoted::Double(a.to_double(), b.to_double()),
    })
}

/// Numeric comparison: `None` when unordered (NaN).
pub(crate) fn compare(a: Numeric, b: Numeric) -> Option<Ordering> {
    match promote(a, b)? {
        Promoted::Integer(a, b) => Some(a.cmp(&b)),
        Promoted::Decimal(a, b) => Some(a.cmp(&b)),
        Promoted::Float(a, b) => a.partial_cmp(&b),
        Promoted::Double(a, b) => a.partial_cmp(&b),
    }
}

/// Numeric equality (`NaN = NaN` is false).
pub(crate) fn equal(a: Numeric, b: Numeric) -> bool {
    compare(a, b) == Some(Ordering::Equal)
}

/// The four variants of a binary operation, by promoted type.
struct Operation {
    integer: fn(Integer, Integer) -> Option<Numeric>,
    decimal: fn(Decimal, Decimal) -> Option<Decimal>,
    float: fn(Float, Float) -> Float,
    double: fn(Double, Double) -> Double,
}

/// Applies `operation` to two numbers, promoted to their common type.
fn combine(a: Numeric, b: Numeric, operation: &Operation) -> Option<Numeric> {
    Some(match promote(a, b)? {
        Promoted::Integer(a, b) => (operation.integer)(a, b)?,
        Promoted::Decimal(a, b) => Numeric::Decimal((operation.decimal)(a, b)?),
        Promoted::Float(a, b) => Numeric::Float((operation.float)(a, b)),
        Promoted::Double(a, b) => Numeric::Double((operation.double)(a, b)),
    })
}

/// Applies a binary operation whose four variants are given.
fn binary(
    a: &Term,
    b: &Term,
    integer: fn(Integer, Integer) -> Option<Numeric>,
    decimal: fn(Decimal, Decimal) -> Option<Decimal>,
    float: fn(Float, Float) -> Float,
    double: fn(Double, Double) -> Double,
) -> Option<Term> {
    let a = Value::of(a).numeric()?;
    let b = Value::of(b).numeric()?;
    let operation = Operation {
        integer,
        decimal,
        float,
        double,
    };
    Some(value::numeric(combine(a, b, &operation)?))
}

/// `+` on numbers.
const ADD: Operation = Operation {
    integer: |a, b| a.checked_add(b).map(Numeric::Integer),
    decimal: |a, b| a.checked_add(b),
    float: |a, b| a + b,
    double: |a, b| a + b,
};

/// `a + b` on numbers (`None` on an integer or decimal overflow).
#[inline]
pub(crate) fn add_numbers(a: Numeric, b: Numeric) -> Option<Numeric> {
    // Two integers (every SUM or AVG of counts) need no promotion: added here, without
    // the dispatch through the operation's table, which costs more than the sum itself.
    if let (Numeric::Integer(a), Numeric::Integer(b)) = (a, b) {
        return a.checked_add(b).map(Numeric::Integer);
    }
    combine(a, b, &ADD)
}

/// `a + b`.
pub(crate) fn add(a: &Term, b: &Term) -> Option<Term> {
    binary(a, b, ADD.integer, ADD.decimal, ADD.float, ADD.double).or_else(|| datetime::add(a, b))
}

/// `a - b`.
pub(crate) fn subtract(a: &Term, b: &Term) -> Option<Term> {
    binary(
        a,
        b,
        |a, b| a.checked_sub(b).map(Numeric::Integer),
        |a, b| a.checked_sub(b),
        |a, b| a - b,
        |a, b| a - b,
    )
    .or_else(|| datetime::subtract(a, b))
}

/// `*` on numbers.
const MULTIPLY: Operation = Operation {
    integer: |a, b| a.checked_mul(b).map(Numeric::Integer),
    decimal: |a, b| a.checked_mul(b),
    float: |a, b| a * b,
    double: |a, b| a * b,
};

/// `a * b` on numbers (`None` on an integer or decimal overflow).
pub(crate) fn multiply_numbers(a: Numeric, b: Numeric) -> Option<Numeric> {
    combine(a, b, &MULTIPLY)
}

/// `a * b`.
pub(crate) fn multiply(a: &Term, b: &Term) -> Option<Term> {
    binary(
        a,
        b,
        MULTIPLY.integer,
        MULTIPLY.decimal,
        MULTIPLY.float,
        MULTIPLY.double,
    )
}

/// `a / b`: integers divide as decimals; a zero integer or decimal divisor is an error.
pub(crate) fn divide(a: &Term, b: &Term) -> Option<Term> {
    binary(
        a,
        b,
        |a, b| Decimal::from(a).checked_div(b).map(Numeric::Decimal),
        |a, b| a.checked_div(b),
        |a, b| a / b,
        |a, b| a / b,
    )
}

/// Unary `+`: the number itself (as its primitive type).
pub(crate) fn unary_plus(a: &Term) -> Option<Term> {
    Some(value::numeric(Value::of(a).numeric()?))
}

/// Unary `-`.
pub(crate) fn unary_minus(a: &Term) -> Option<Term> {
    Some(value::numeric(match Value::of(a).numeric()? {
        Numeric::Integer(v) => Numeric::Integer(v.checked_neg()?),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_neg()?),
        Numeric::Float(v) => Numeric::Float(-v),
        Numeric::Double(v) => Numeric::Double(-v),
    }))
}

/// ABS.
pub(crate) fn abs(a: &Term) -> Option<Term> {
    Some(value::numeric(match Value::of(a).numeric()? {
        Numeric::Integer(v) => Numeric::Integer(v.checked_abs()?),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_abs()?),
        Numeric::Float(v) => Numeric::Float(v.abs()),
        Numeric::Double(v) => Numeric::Double(v.abs()),
    }))
}

/// CEIL.
pub(crate) fn ceil(a: &Term) -> Option<Term> {
    Some(value::numeric(match Value::of(a).numeric()? {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_ceil()?),
        Numeric::Float(v) => Numeric::Float(v.ceil()),
        Numeric::Double(v) => Numeric::Double(v.ceil()),
    }))
}

/// FLOOR.
pub(crate) fn floor(a: &Term) -> Option<Term> {
    Some(value::numeric(match Value::of(a).numeric()? {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_floor()?),
        Numeric::Float(v) => Numeric::Float(v.floor()),
        Numeric::Double(v) => Numeric::Double(v.floor()),
    }))
}

/// ROUND: halves are rounded towards positive infinity (`ROUND(-2.5) = -2`).
pub(crate) fn round(a: &Term) -> Option<Term> {
    Some(value::numeric(match Value::of(a).numeric()? {
        Numeric::Integer(v) => Numeric::Integer(v),
        Numeric::Decimal(v) => Numeric::Decimal(v.checked_round()?),
        Numeric::Float(v) => Numeric::Float(v.round()),
        Numeric::Double(v) => Numeric::Double(v.round()),
    }))
}

/// RAND: a double in [0, 1).
pub(crate) fn rand(context: &EvalContext) -> Term {
    // 53 random bits, the precision of a double.
    #[expect(clippy::cast_precision_loss)] // exact: below 2^53
    let fraction = (context.next_random() >> 11) as f64 / (1_u64 << 53) as f64;
    value::literal(Double::from(fraction))
}

/// isNUMERIC: a literal of a numeric datatype with a valid lexical form.
pub(crate) fn is_numeric(a: &Term) -> Term {
    value::boolean(matches!(Value::of(a), Value::Numeric(_)))
}
