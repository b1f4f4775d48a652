//! String functions (§17.4.3), with the specification's examples for language tags and
//! argument compatibility.

use crate::{check, check_error};

#[test]
fn strlen() {
    check("STRLEN(\"chat\")", "4");
    check("STRLEN(\"chat\"@en)", "4");
    check("STRLEN(\"chat\"^^xsd:string)", "4");
    check("STRLEN(\"\")", "0");
    check("STRLEN(\"食べ物\")", "3");
    check("STRLEN(\"\\U0001F600x\")", "2"); // non-BMP code point
    check_error("STRLEN(1)");
    check_error("STRLEN(<http://example.org/>)");
}

#[test]
fn substr() {
    check("SUBSTR(\"foobar\", 4)", "\"bar\"");
    check("SUBSTR(\"foobar\", 4, 1)", "\"b\"");
    check("SUBSTR(\"foobar\"@en, 4, 1)", "\"b\"@en");
    check("SUBSTR(\"foobar\"^^xsd:string, 4, 1)", "\"b\"^^xsd:string");
    check("SUBSTR(\"motor car\", 6)", "\" car\"");
    check("SUBSTR(\"metadata\", 4, 3)", "\"ada\"");
    // XPath edge cases.
    check("SUBSTR(\"12345\", 1.5, 2.6)", "\"234\"");
    check("SUBSTR(\"12345\", 0, 3)", "\"12\"");
    check("SUBSTR(\"12345\", 5, -3)", "\"\"");
    check("SUBSTR(\"12345\", -3, 5)", "\"1\"");
    check("SUBSTR(\"12345\", 10)", "\"\"");
    check("SUBSTR(\"12345\", 0e0/0)", "\"\"");
    check("SUBSTR(\"\\U0001F600a\\U0001F600\", 2, 1)", "\"a\"");
    check("SUBSTR(\"食べ物\", 2)", "\"べ物\"");
    check_error("SUBSTR(1, 1)");
    check_error("SUBSTR(\"abc\", \"1\")");
}

#[test]
fn case_functions() {
    check("UCASE(\"foo\")", "\"FOO\"");
    check("UCASE(\"foo\"@en)", "\"FOO\"@en");
    check("UCASE(\"straße\")", "\"STRASSE\"");
    check("LCASE(\"BAR\")", "\"bar\"");
    check("LCASE(\"BAR\"@en)", "\"bar\"@en");
    check("LCASE(\"BAR\"^^xsd:string)", "\"bar\"^^xsd:string");
    check_error("UCASE(<http://example.org/>)");
}

#[test]
fn encode_for_uri() {
    check("ENCODE_FOR_URI(\"Los Angeles\")", "\"Los%20Angeles\"");
    check("ENCODE_FOR_URI(\"Los Angeles\"@en)", "\"Los%20Angeles\"");
    check("ENCODE_FOR_URI(\"~bébé\")", "\"~b%C3%A9b%C3%A9\"");
    check("ENCODE_FOR_URI(\"100% a/b\")", "\"100%25%20a%2Fb\"");
    check_error("ENCODE_FOR_URI(1)");
}

#[test]
fn contains_starts_ends() {
    check("CONTAINS(\"foobar\", \"bar\")", "true");
    check("CONTAINS(\"foobar\"@en, \"foo\")", "true");
    check("CONTAINS(\"foobar\"@en, \"foo\"@en)", "true");
    check(
        "CONTAINS(\"foobar\"^^xsd:string, \"foo\"^^xsd:string)",
        "true",
    );
    check("CONTAINS(\"foobar\", \"\")", "true");
    check("CONTAINS(\"foobar\", \"baz\")", "false");
    check_error("CONTAINS(\"foobar\", \"foo\"@en)");
    check_error("CONTAINS(\"foobar\"@en, \"foo\"@fr)");
    check_error("CONTAINS(\"1\", 1)");
    check("STRSTARTS(\"foobar\", \"foo\")", "true");
    check("STRSTARTS(\"foobar\"@en, \"bar\")", "false");
    check("STRENDS(\"foobar\", \"bar\")", "true");
    check("STRENDS(\"foobar\"@en, \"bar\"@en)", "true");
    check_error("STRENDS(\"foobar\", \"bar\"@en)");
    check_error("STRSTARTS(1, \"1\")");
}

#[test]
fn strbefore() {
    // The examples of §17.4.3.14.
    check("STRBEFORE(\"abc\", \"b\")", "\"a\"");
    check("STRBEFORE(\"abc\"@en, \"bc\")", "\"a\"@en");
    check_error("STRBEFORE(\"abc\"@en, \"b\"@cy)");
    check("STRBEFORE(\"abc\"^^xsd:string, \"\")", "\"\"^^xsd:string");
    check("STRBEFORE(\"abc\", \"xyz\")", "\"\"");
    check("STRBEFORE(\"abc\"@en, \"z\"@en)", "\"\"");
    check("STRBEFORE(\"abc\"@en, \"z\")", "\"\"");
    check("STRBEFORE(\"abc\"@en, \"\"@en)", "\"\"@en");
    check("STRBEFORE(\"abc\"@en, \"\")", "\"\"@en");
    check("STRBEFORE(\"食べ物\", \"物\")", "\"食べ\"");
}

#[test]
fn strafter() {
    // The examples of §17.4.3.15.
    check("STRAFTER(\"abc\", \"b\")", "\"c\"");
    check("STRAFTER(\"abc\"@en, \"ab\")", "\"c\"@en");
    check_error("STRAFTER(\"abc\"@en, \"b\"@cy)");
    check("STRAFTER(\"abc\"^^xsd:string, \"\")", "\"abc\"^^xsd:string");
    check("STRAFTER(\"abc\", \"xyz\")", "\"\"");
    check("STRAFTER(\"abc\"@en, \"z\"@en)", "\"\"");
    check("STRAFTER(\"abc\"@en, \"z\")", "\"\"");
    check("STRAFTER(\"abc\"@en, \"\"@en)", "\"abc\"@en");
    check("STRAFTER(\"abc\"@en, \"\")", "\"abc\"@en");
    check("STRAFTER(\"食べ物\", \"食\")", "\"べ物\"");
}

#[test]
fn concat() {
    check("CONCAT(\"foo\", \"bar\")", "\"foobar\"");
    check("CONCAT(\"foo\"@en, \"bar\"@en)", "\"foobar\"@en");
    check("CONCAT(\"foo\"@en, \"bar\")", "\"foobar\"");
    check("CONCAT(\"foo\"@en, \"bar\"@fr)", "\"foobar\"");
    check(
        "CONCAT(\"foo\"^^xsd:string, \"bar\"^^xsd:string)",
        "\"foobar\"^^xsd:string",
    );
    check("CONCAT(\"foo\")", "\"foo\"");
    check("CONCAT(\"foo\"@en)", "\"foo\"@en");
    check("CONCAT()", "\"\"");
    check_error("CONCAT(\"a\", 1)");
    check_error("CONCAT(\"a\", ?unbound)");
}

#[test]
fn langmatches() {
    check("LANGMATCHES(\"fr\", \"FR\")", "true");
    check("LANGMATCHES(\"fr-BE\", \"fr\")", "true");
    check("LANGMATCHES(\"fr-be\", \"FR-BE\")", "true");
    check("LANGMATCHES(\"frx\", \"fr\")", "false");
    check("LANGMATCHES(\"fr\", \"fr-be\")", "false");
    check("LANGMATCHES(\"fr\", \"*\")", "true");
    check("LANGMATCHES(\"\", \"*\")", "false");
    check("LANGMATCHES(LANG(\"abc\"@en-GB), \"en\")", "true");
    check("LANGMATCHES(LANG(\"abc\"), \"en\")", "false");
    check_error("LANGMATCHES(1, \"en\")");
}

#[test]
fn regex() {
    check("REGEX(\"Alice\", \"^ali\", \"i\")", "true");
    check("REGEX(\"Alice\", \"^ali\")", "false");
    check("REGEX(\"abc\"@en, \"b\")", "true");
    check("REGEX(\"abc\"^^xsd:string, \"^a.c$\")", "true");
    check("REGEX(\"a\\nb\", \"a.b\")", "false");
    check("REGEX(\"a\\nb\", \"a.b\", \"s\")", "true");
    check("REGEX(\"a\\nb\", \"^b$\")", "false");
    check("REGEX(\"a\\nb\", \"^b$\", \"m\")", "true");
    check("REGEX(\"abc\", \"a b c\", \"x\")", "true");
    check("REGEX(\"abc\", \"a.c\", \"q\")", "false");
    check("REGEX(\"a.c\", \"a.c\", \"q\")", "true");
    check("REGEX(\"食べ物\", \"^.べ\")", "true");
    check_error("REGEX(\"abc\", \"(\")");
    check_error("REGEX(\"abc\", \"b\", \"z\")");
    check_error("REGEX(1, \"1\")");
    check_error("REGEX(\"abc\", \"b\"@en)");
    check_error("REGEX(\"abc\", ?unbound)");
}

#[test]
fn replace() {
    check("REPLACE(\"abcd\", \"b\", \"Z\")", "\"aZcd\"");
    check("REPLACE(\"abab\", \"B\", \"Z\", \"i\")", "\"aZaZ\"");
    check("REPLACE(\"abab\", \"B.\", \"Z\", \"i\")", "\"aZb\"");
    check("REPLACE(\"abcd\"@en, \"b\", \"Z\")", "\"aZcd\"@en");
    check(
        "REPLACE(\"abcd\"^^xsd:string, \"b\", \"Z\")",
        "\"aZcd\"^^xsd:string",
    );
    check("REPLACE(\"abc\", \"(b)\", \"[$1]\")", "\"a[b]c\"");
    check("REPLACE(\"abc\", \"b\", \"\\\\$\")", "\"a$c\"");
    // W3C replace03, from XPath's examples.
    check(
        "REPLACE(\"abcd\", \"(ab)|(a)\", \"[1=$1][2=$2]\")",
        "\"[1=ab][2=]cd\"",
    );
    check("REPLACE(\"a.b.c\", \".\", \"$\", \"q\")", "\"a$b$c\"");
    check_error("REPLACE(\"abc\", \"b\", \"$\")");
    check_error("REPLACE(\"abc\", \"(\", \"x\")");
    check_error("REPLACE(\"abc\", \"b\", \"x\", \"k\")");
    check_error("REPLACE(1, \"1\", \"2\")");
}
