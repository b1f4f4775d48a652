//! XSD constructor functions (§17.5), checked against the W3C `cast` tests' expectations.

use crate::{check, check_error};

#[test]
fn to_string() {
    check(
        "xsd:string(<http://example.org/z>)",
        "\"http://example.org/z\"",
    );
    check("xsd:string(\"-10.2E3\")", "\"-10.2E3\"");
    check("xsd:string(\"0\"^^xsd:boolean)", "\"false\"");
    check("xsd:string(true)", "\"true\"");
    check("xsd:string(1.0)", "\"1\"");
    check("xsd:string(-1.0)", "\"-1\"");
    check("xsd:string(0E1)", "\"0\"");
    check("xsd:string(\"1E0\"^^xsd:float)", "\"1\"");
    check("xsd:string(\"-7.875\"^^xsd:float)", "\"-7.875\"");
    check("xsd:string(\"01\"^^xsd:integer)", "\"1\"");
    check("xsd:string(\"abc\"^^ex:t)", "\"abc\"");
    check(
        "xsd:string(\"2002-10-10T17:00:00Z\"^^xsd:dateTime)",
        "\"2002-10-10T17:00:00Z\"",
    );
    check_error("xsd:string(BNODE())");
}

#[test]
fn to_boolean() {
    check("xsd:boolean(\"0\")", "false");
    check("xsd:boolean(\"1\")", "true");
    check("xsd:boolean(\"true\")", "true");
    check("xsd:boolean(\" false \")", "false");
    check("xsd:boolean(-1)", "true");
    check("xsd:boolean(0.0)", "false");
    check("xsd:boolean(0E1)", "false");
    check("xsd:boolean(xsd:double(\"NaN\"))", "false");
    check("xsd:boolean(2.5)", "true");
    check_error("xsd:boolean(\"13\")");
    check_error("xsd:boolean(\"1.5\")");
    check_error("xsd:boolean(\"string\")");
    check_error("xsd:boolean(<http://example.org/z>)");
    check_error("xsd:boolean(\"2002-10-10T17:00:00Z\"^^xsd:dateTime)");
}

#[test]
fn to_integer() {
    check("xsd:integer(\"0\")", "0");
    check("xsd:integer(\"13\")", "13");
    check("xsd:integer(\"+13\")", "13");
    check("xsd:integer(true)", "1");
    check("xsd:integer(-1.0)", "-1");
    check("xsd:integer(1E0)", "1");
    check("xsd:integer(\"1.25\"^^xsd:float)", "1");
    check("xsd:integer(\"-7.875\"^^xsd:float)", "-7");
    check("xsd:integer(2.5)", "2");
    check("xsd:integer(-2.5)", "-2");
    check_error("xsd:integer(\"0.0\")");
    check_error("xsd:integer(\"1E0\")");
    check_error("xsd:integer(\"string\")");
    check_error("xsd:integer(xsd:double(\"INF\"))");
    check_error("xsd:integer(xsd:double(\"NaN\"))");
    check_error("xsd:integer(1e30)");
    check_error("xsd:integer(<http://example.org/z>)");
    // Derived integer types check their range.
    check("xsd:int(\"42\")", "\"42\"^^xsd:int");
    check("xsd:byte(127)", "\"127\"^^xsd:byte");
    check_error("xsd:byte(128)");
    check_error("xsd:nonNegativeInteger(-1)");
}

#[test]
fn to_decimal() {
    check("xsd:decimal(\"+33.3300\")", "33.33");
    check("xsd:decimal(\"0\")", "0.0");
    check("xsd:decimal(\"13\")", "13.0");
    check("xsd:decimal(false)", "0.0");
    check("xsd:decimal(1)", "1.0");
    check("xsd:decimal(1E0)", "1.0");
    check("xsd:decimal(\"1.25\"^^xsd:float)", "1.25");
    check_error("xsd:decimal(\"-10.2E3\")");
    check_error("xsd:decimal(\"1E0\")");
    check_error("xsd:decimal(xsd:double(\"NaN\"))");
    check_error("xsd:decimal(\"2002-10-10T17:00:00Z\")");
}

#[test]
fn to_float_and_double() {
    check("xsd:double(\"-10.2E3\")", "-1.02E4");
    check("xsd:double(\"+33.3300\")", "3.333E1");
    check("xsd:double(\"0\")", "0E0");
    check("xsd:double(\".5\")", "5E-1");
    check("xsd:double(\"INF\")", "1e0 / 0");
    check("xsd:double(true)", "1.0E0");
    check("xsd:double(1)", "1.0E0");
    check("xsd:double(2.5)", "2.5E0");
    check("xsd:double(\"1.25\"^^xsd:float)", "1.25E0");
    check("xsd:float(\"1.5\")", "xsd:float(1.5)");
    check("xsd:float(-1)", "\"-1\"^^xsd:float");
    check_error("xsd:double(\"string\")");
    check_error("xsd:double(\"infinity\")");
    check_error("xsd:double(\"1e\")");
    check_error("xsd:double(\"2002-10-10T17:00:00Z\")");
    check_error("xsd:float(<http://example.org/z>)");
}

#[test]
fn to_date_and_time_types() {
    check(
        "xsd:dateTime(\"2002-10-10T17:00:00Z\")",
        "\"2002-10-10T17:00:00Z\"^^xsd:dateTime",
    );
    check(
        "xsd:dateTime(\"2002-10-10\"^^xsd:date)",
        "\"2002-10-10T00:00:00\"^^xsd:dateTime",
    );
    check(
        "xsd:date(\"2002-10-10T17:00:00Z\"^^xsd:dateTime)",
        "\"2002-10-10Z\"^^xsd:date",
    );
    check(
        "xsd:time(\"2002-10-10T17:00:00Z\"^^xsd:dateTime)",
        "\"17:00:00Z\"^^xsd:time",
    );
    check(
        "xsd:dayTimeDuration(\"P1Y2M3DT4H\"^^xsd:duration)",
        "\"P3DT4H\"^^xsd:dayTimeDuration",
    );
    check(
        "xsd:yearMonthDuration(\"P1Y2M3DT4H\"^^xsd:duration)",
        "\"P1Y2M\"^^xsd:yearMonthDuration",
    );
    check("xsd:gYear(\"2002-10-10\"^^xsd:date)", "\"2002\"^^xsd:gYear");
    check_error("xsd:dateTime(\"string\")");
    check_error("xsd:dateTime(1)");
    check_error("xsd:date(\"10:00:00\"^^xsd:time)");
}

#[test]
fn unknown_functions_and_arities() {
    check_error("ex:unknown(1)");
    check_error("xsd:unknown(1)");
    check_error("xsd:anyURI(\"http://example.org/\")");
    check_error("xsd:integer(?unbound)");
}
