//! Exact comparison of two numbers of any XSD numeric types, for ORDER BY.
//!
//! The `<` operator promotes both sides to a common type (§17.3), so `xsd:integer`
//! 9007199254740993 and `xsd:double` 9007199254740992 compare equal after rounding while the
//! same integer is greater than an `xsd:decimal` between them: a cycle, which a sort must not
//! see. ORDER BY therefore compares the exact values: decimals and integers as decimals,
//! floats and doubles as the binary fractions they are, and a decimal against a binary
//! fraction by cross-multiplying in 128-bit integers.

use crate::value::Numeric;
use oxsdatatypes::Decimal;
use std::cmp::Ordering;

/// `xsd:decimal` values are held as integers scaled by 10^18.
const DECIMAL_SCALE: u128 = 1_000_000_000_000_000_000;

/// Compares two numbers by their exact values; `None` when either is NaN.
pub(crate) fn compare(a: Numeric, b: Numeric) -> Option<Ordering> {
    match (binary(a), binary(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y),
        (None, None) => Some(scaled(a).cmp(&scaled(b))),
        (Some(x), None) => Some(compare_binary_scaled(x, scaled(b))?),
        (None, Some(y)) => Some(compare_binary_scaled(y, scaled(a))?.reverse()),
    }
}

/// A float or double as the `f64` holding its exact value (every `f32` is an `f64`).
fn binary(n: Numeric) -> Option<f64> {
    match n {
        Numeric::Float(v) => Some(f64::from(f32::from(v))),
        Numeric::Double(v) => Some(f64::from(v)),
        Numeric::Integer(_) | Numeric::Decimal(_) => None,
    }
}

/// An integer or decimal as its value times 10^18 (an integer fits: it has 64 bits).
fn scaled(n: Numeric) -> i128 {
    let decimal = match n {
        Numeric::Integer(v) => Decimal::from(v),
        Numeric::Decimal(v) => v,
        Numeric::Float(_) | Numeric::Double(_) => unreachable!("binary numbers are compared apart"),
    };
    i128::from_be_bytes(decimal.to_be_bytes())
}

/// Compares the binary fraction `d` with the decimal `v / 10^18`; `None` when `d` is NaN.
fn compare_binary_scaled(d: f64, v: i128) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    if d.is_infinite() {
        return Some(if d > 0.0 {
            Ordering::Greater
        } else {
            Ordering::Less
        });
    }
    let d_sign = sign(d > 0.0, d < 0.0);
    let v_sign = sign(v > 0, v < 0);
    if d_sign != v_sign || d_sign == Ordering::Equal {
        return Some(d_sign.cmp(&v_sign));
    }
    let magnitude = compare_magnitudes(d.abs(), v.unsigned_abs());
    Some(if d_sign == Ordering::Less {
        magnitude.reverse()
    } else {
        magnitude
    })
}

fn sign(positive: bool, negative: bool) -> Ordering {
    match (positive, negative) {
        (true, _) => Ordering::Greater,
        (_, true) => Ordering::Less,
        _ => Ordering::Equal,
    }
}

/// Compares a finite non-negative `d = m · 2^e` with `v / 10^18`, as `m · 10^18 · 2^e`
/// against `v`: the left product is below 2^113, and a shift that would pass 2^128 decides
/// the comparison without being carried out.
fn compare_magnitudes(d: f64, v: u128) -> Ordering {
    let bits = d.to_bits();
    let exponent_field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    let (mantissa, exponent) = if exponent_field == 0 {
        (fraction, -1074)
    } else {
        (fraction | 1 << 52, exponent_field - 1075)
    };
    let product = u128::from(mantissa) * DECIMAL_SCALE;
    if exponent >= 0 {
        let shift = exponent.unsigned_abs();
        if product != 0 && product.leading_zeros() < shift {
            return Ordering::Greater;
        }
        (product << shift).cmp(&v)
    } else {
        let shift = exponent.unsigned_abs();
        if v != 0 && v.leading_zeros() < shift {
            return Ordering::Less;
        }
        product.cmp(&(v << shift.min(127)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oxsdatatypes::{Double, Float, Integer};
    use std::str::FromStr;

    fn decimal(text: &str) -> Numeric {
        Numeric::Decimal(Decimal::from_str(text).unwrap())
    }

    fn double(v: f64) -> Numeric {
        Numeric::Double(Double::from(v))
    }

    #[test]
    fn integers_beyond_the_doubles_precision_compare_exactly() {
        let big = Numeric::Integer(Integer::from(9_007_199_254_740_993_i64));
        let rounded = double(9_007_199_254_740_992.0);
        assert_eq!(compare(big, rounded), Some(Ordering::Greater));
        assert_eq!(compare(rounded, big), Some(Ordering::Less));
        let between = decimal("9007199254740992.5");
        assert_eq!(compare(between, big), Some(Ordering::Less));
        assert_eq!(compare(between, rounded), Some(Ordering::Greater));
    }

    #[test]
    fn binary_fractions_against_decimals() {
        // 0.1 as a double is slightly above one tenth.
        assert_eq!(
            compare(double(0.1), decimal("0.1")),
            Some(Ordering::Greater)
        );
        assert_eq!(compare(double(0.5), decimal("0.5")), Some(Ordering::Equal));
        assert_eq!(
            compare(double(-0.5), decimal("-0.25")),
            Some(Ordering::Less)
        );
        assert_eq!(compare(double(-0.0), decimal("0")), Some(Ordering::Equal));
        assert_eq!(
            compare(double(1e300), decimal("1")),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(double(1e-300), decimal("0.000000000000000001")),
            Some(Ordering::Less)
        );
        assert_eq!(
            compare(double(1e-300), decimal("0")),
            Some(Ordering::Greater)
        );
        assert_eq!(
            compare(double(f64::NEG_INFINITY), decimal("-100000000000000000000")),
            Some(Ordering::Less)
        );
        assert_eq!(compare(double(f64::NAN), decimal("1")), None);
        let float = Numeric::Float(Float::from(0.1_f32));
        assert_eq!(compare(float, double(0.1)), Some(Ordering::Greater));
    }
}
