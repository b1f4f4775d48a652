//! Date and time accessors (§17.4.5) and NOW().

use crate::{check, check_error, NOW};

const DT: &str = "\"2011-01-10T14:45:13.815-05:00\"^^xsd:dateTime";

#[test]
fn accessors() {
    check(&format!("YEAR({DT})"), "2011");
    check(&format!("MONTH({DT})"), "1");
    check(&format!("DAY({DT})"), "10");
    check(&format!("HOURS({DT})"), "14");
    check(&format!("MINUTES({DT})"), "45");
    check(&format!("SECONDS({DT})"), "13.815");
    check(
        "SECONDS(\"2010-06-21T11:28:01Z\"^^xsd:dateTime)",
        "\"1\"^^xsd:decimal",
    );
    check("YEAR(\"-0044-03-15T12:00:00\"^^xsd:dateTime)", "-44");
}

#[test]
fn timezones() {
    check(&format!("TIMEZONE({DT})"), "\"-PT5H\"^^xsd:dayTimeDuration");
    check(
        "TIMEZONE(\"2010-06-21T11:28:01Z\"^^xsd:dateTime)",
        "\"PT0S\"^^xsd:dayTimeDuration",
    );
    check(
        "TIMEZONE(\"2010-12-21T15:38:02+05:30\"^^xsd:dateTime)",
        "\"PT5H30M\"^^xsd:dayTimeDuration",
    );
    check_error("TIMEZONE(\"2011-02-01T01:02:03\"^^xsd:dateTime)");
    check(&format!("TZ({DT})"), "\"-05:00\"");
    check("TZ(\"2010-06-21T11:28:01Z\"^^xsd:dateTime)", "\"Z\"");
    check("TZ(\"2011-02-01T01:02:03\"^^xsd:dateTime)", "\"\"");
}

#[test]
fn other_date_types() {
    check("YEAR(\"2011-01-10\"^^xsd:date)", "2011");
    check("DAY(\"2011-01-10+02:00\"^^xsd:date)", "10");
    check("TZ(\"2011-01-10+02:00\"^^xsd:date)", "\"+02:00\"");
    check("HOURS(\"10:20:30\"^^xsd:time)", "10");
    check("MONTH(\"--12-25\"^^xsd:gMonthDay)", "12");
    check("YEAR(\"2020\"^^xsd:gYear)", "2020");
    check_error("HOURS(\"2011-01-10\"^^xsd:date)");
    check_error("YEAR(\"10:20:30\"^^xsd:time)");
}

#[test]
fn errors() {
    check_error("YEAR(\"2011-01-10T14:45:13Z\")");
    check_error("YEAR(\"not a date\"^^xsd:dateTime)");
    check_error("MONTH(1)");
    check_error("TZ(<http://example.org/>)");
    check_error("DAY(?unbound)");
}

#[test]
fn now_is_constant() {
    check("NOW()", &format!("\"{NOW}\"^^xsd:dateTime"));
    check("NOW() = NOW()", "true");
    check("YEAR(NOW())", "2024");
    check("DATATYPE(NOW())", "xsd:dateTime");
}

/// A context's `NOW()` is the clock's instant when the context was made (the query's
/// start), in UTC, however much later it is first asked.
#[test]
fn now_is_when_the_context_was_made() {
    use oxsdatatypes::DateTime;
    let before = DateTime::now();
    let context = quiver_expr::EvalContext::new();
    let after = DateTime::now();
    std::thread::sleep(std::time::Duration::from_millis(30));
    let now = context.now();
    assert!(before <= now && now <= after, "{before} ≤ {now} ≤ {after}");
    assert_eq!(context.now(), now, "the same instant on every call");
    assert_eq!(
        now.timezone().map(|z| z.to_string()),
        Some("PT0S".into()),
        "{now}"
    );
}
