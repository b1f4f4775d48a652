//! Date and time functions (§17.4.5) and date/time arithmetic.
//!
//! The accessors (`YEAR` … `SECONDS`, `TIMEZONE`, `TZ`) are specified on `xsd:dateTime`; like
//! XPath's component functions they also accept the other date/time types that carry the
//! requested component (`YEAR` of an `xsd:date` or `xsd:gYear`, `HOURS` of an `xsd:time`…).
//! Arithmetic follows XPath: date/time minus date/time of the same type is an
//! `xsd:dayTimeDuration`, a date/time plus or minus a duration is a date/time, and durations of the
//! same kind add up.

use crate::value::{self, Value};
use oxrdf::Term;
use oxsdatatypes::{DayTimeDuration, Decimal, Duration, Integer, TimezoneOffset};

/// A component of a date/time value.
#[derive(Clone, Copy)]
pub(crate) enum Component {
    Year,
    Month,
    Day,
    Hours,
    Minutes,
    Seconds,
}

/// YEAR, MONTH, DAY, HOURS, MINUTES and SECONDS.
pub(crate) fn component(term: &Term, component: Component) -> Option<Term> {
    let integer = |v: i64| Some(value::literal(Integer::from(v)));
    let seconds = |v: Decimal| Some(value::literal(v));
    match (Value::of(term), component) {
        (Value::DateTime(v), Component::Year) => integer(v.year()),
        (Value::DateTime(v), Component::Month) => integer(v.month().into()),
        (Value::DateTime(v), Component::Day) => integer(v.day().into()),
        (Value::DateTime(v), Component::Hours) => integer(v.hour().into()),
        (Value::DateTime(v), Component::Minutes) => integer(v.minute().into()),
        (Value::DateTime(v), Component::Seconds) => seconds(v.second()),
        (Value::Date(v), Component::Year) => integer(v.year()),
        (Value::Date(v), Component::Month) => integer(v.month().into()),
        (Value::Date(v), Component::Day) => integer(v.day().into()),
        (Value::Time(v), Component::Hours) => integer(v.hour().into()),
        (Value::Time(v), Component::Minutes) => integer(v.minute().into()),
        (Value::Time(v), Component::Seconds) => seconds(v.second()),
        (Value::GYearMonth(v), Component::Year) => integer(v.year()),
        (Value::GYearMonth(v), Component::Month) => integer(v.month().into()),
        (Value::GYear(v), Component::Year) => integer(v.year()),
        (Value::GMonthDay(v), Component::Month) => integer(v.month().into()),
        (Value::GMonthDay(v), Component::Day) => integer(v.day().into()),
        (Value::GMonth(v), Component::Month) => integer(v.month().into()),
        (Value::GDay(v), Component::Day) => integer(v.day().into()),
        _ => None,
    }
}

/// The timezone of a date/time value: `Some(None)` when it has none, `None` when not a date/time.
fn timezone_offset(term: &Term) -> Option<Option<TimezoneOffset>> {
    Some(match Value::of(term) {
        Value::DateTime(v) => v.timezone_offset(),
        Value::Date(v) => v.timezone_offset(),
        Value::Time(v) => v.timezone_offset(),
        Value::GYearMonth(v) => v.timezone_offset(),
        Value::GYear(v) => v.timezone_offset(),
        Value::GMonthDay(v) => v.timezone_offset(),
        Value::GMonth(v) => v.timezone_offset(),
        Value::GDay(v) => v.timezone_offset(),
        _ => return None,
    })
}

/// TIMEZONE: the timezone as an `xsd:dayTimeDuration`; an error when there is none.
pub(crate) fn timezone(term: &Term) -> Option<Term> {
    let offset = timezone_offset(term)??;
    Some(value::literal(DayTimeDuration::from(offset)))
}

/// TZ: the timezone as a simple literal (`"Z"`, `"-05:00"`), `""` when there is none.
pub(crate) fn tz(term: &Term) -> Option<Term> {
    Some(value::string(
        timezone_offset(term)?.map_or_else(String::new, |offset| offset.to_string()),
    ))
}

/// A duration of any of the three duration types.
fn any_duration(value: Value<'_>) -> Option<Duration> {
    match value {
        Value::Duration(v) => Some(v),
        Value::YearMonthDuration(v) => Some(v.into()),
        Value::DayTimeDuration(v) => Some(v.into()),
        _ => None,
    }
}

/// `a + b` on dates, times and durations.
pub(crate) fn add(a: &Term, b: &Term) -> Option<Term> {
    let (a, b) = (Value::of(a), Value::of(b));
    Some(match (a, b) {
        (Value::YearMonthDuration(a), Value::YearMonthDuration(b)) => {
            value::literal(a.checked_add(b)?)
        }
        (Value::DayTimeDuration(a), Value::DayTimeDuration(b)) => value::literal(a.checked_add(b)?),
        (Value::DateTime(a), b) => value::literal(a.checked_add_duration(any_duration(b)?)?),
        (Value::Date(a), b) => value::literal(a.checked_add_duration(any_duration(b)?)?),
        (Value::Time(a), Value::DayTimeDuration(b)) => {
            value::literal(a.checked_add_day_time_duration(b)?)
        }
        // Commutative forms: duration + date/time.
        (a, Value::DateTime(b)) => value::literal(b.checked_add_duration(any_duration(a)?)?),
        (a, Value::Date(b)) => value::literal(b.checked_add_duration(any_duration(a)?)?),
        (Value::DayTimeDuration(a), Value::Time(b)) => {
            value::literal(b.checked_add_day_time_duration(a)?)
        }
        _ => return None,
    })
}

/// `a - b` on dates, times and durations.
pub(crate) fn subtract(a: &Term, b: &Term) -> Option<Term> {
    let (a, b) = (Value::of(a), Value::of(b));
    Some(match (a, b) {
        (Value::DateTime(a), Value::DateTime(b)) => value::literal(a.checked_sub(b)?),
        (Value::Date(a), Value::Date(b)) => value::literal(a.checked_sub(b)?),
        (Value::Time(a), Value::Time(b)) => value::literal(a.checked_sub(b)?),
        (Value::YearMonthDuration(a), Value::YearMonthDuration(b)) => {
            value::literal(a.checked_sub(b)?)
        }
        (Value::DayTimeDuration(a), Value::DayTimeDuration(b)) => value::literal(a.checked_sub(b)?),
        (Value::DateTime(a), b) => value::literal(a.checked_sub_duration(any_duration(b)?)?),
        (Value::Date(a), b) => value::literal(a.checked_sub_duration(any_duration(b)?)?),
        (Value::Time(a), Value::DayTimeDuration(b)) => {
            value::literal(a.checked_sub_day_time_duration(b)?)
        }
        _ => return None,
    })
}
