//! SPARQL 1.2 directional language-tagged strings (`rdf:dirLangString`): `LANG`, `LANGDIR`,
//! `hasLANG`, `hasLANGDIR`, `STRLANGDIR`, `DATATYPE`, the string functions, `=` and ORDER BY. The
//! cases follow the W3C test suite's `lang-basedir` tests and the specification's examples.

use crate::{check, check_error, eval, term};
use oxrdf::{BaseDirection, Literal, Term};
use quiver_expr::{compare, equals, order_terms};
use std::cmp::Ordering;

fn directional(value: &str, language: &str, direction: BaseDirection) -> Term {
    Literal::new_directional_language_tagged_literal_unchecked(value, language, direction).into()
}

/// Asserts that `expression` evaluates to exactly `expected` (same term, base direction included).
#[track_caller]
fn check_term(expression: &str, expected: Term) {
    assert_eq!(eval(expression), Some(expected), "{expression}");
}

#[test]
fn lang_and_langdir() {
    // lang-basedir/lang and langdir, over the data's five objects.
    check("LANG(\"abc\"@en)", "\"en\"");
    check("LANG(\"abc\"@en--ltr)", "\"en\"");
    check("LANG(\"تصميم المواقع\"@ar--rtl)", "\"ar\"");
    check("LANG(1)", "\"\"");
    check_error("LANG(<http://example/>)");
    check("LANGDIR(\"abc\"@en)", "\"\"");
    check("LANGDIR(\"abc\"@en--ltr)", "\"ltr\"");
    check("LANGDIR(\"تصميم المواقع\"@ar--rtl)", "\"rtl\"");
    check("LANGDIR(1)", "\"\"");
    check("LANGDIR(\"abc\")", "\"\"");
    check_error("LANGDIR(<http://example/>)");
    check_error("LANGDIR(BNODE())");
    check_error("LANGDIR(<<( ex:a ex:b \"c\"@en--ltr )>>)");
    check_error("LANGDIR(?undef)");
    // The results are simple literals.
    check_term(
        "LANGDIR(\"a\"@en--rtl)",
        Literal::new_simple_literal("rtl").into(),
    );
    check("LANGMATCHES(LANG(\"a\"@en-gb--ltr), \"en\")", "true");
}

#[test]
fn has_lang_and_has_langdir() {
    // lang-basedir/haslang and haslangdir: false (not an error) for non-literals.
    for (term, lang, dir) in [
        ("\"abc\"@en", true, false),
        ("\"abc\"@en--ltr", true, true),
        ("\"تصميم المواقع\"@ar--rtl", true, true),
        ("1", false, false),
        ("\"abc\"", false, false),
        ("\"abc\"^^rdf:dirLangString", false, false),
        ("<http://example/>", false, false),
        ("BNODE()", false, false),
        ("<<( ex:a ex:b \"c\"@en--ltr )>>", false, false),
    ] {
        check(&format!("hasLANG({term})"), &lang.to_string());
        check(&format!("hasLANGDIR({term})"), &dir.to_string());
    }
    check_error("hasLANG(?undef)");
    check_error("hasLANGDIR(?undef)");
}

#[test]
fn strlangdir() {
    // lang-basedir/strlangdir: only term1 and term4 are bound.
    check_term(
        "STRLANGDIR(\"abc\", \"en\", \"ltr\")",
        directional("abc", "en", BaseDirection::Ltr),
    );
    check_term(
        "STRLANGDIR(\"قطة\", \"ar\", \"rtl\")",
        directional("قطة", "ar", BaseDirection::Rtl),
    );
    check_error("STRLANGDIR(\"abc\", \"en\", \"LTR\")");
    check_error("STRLANGDIR(\"abc\", \"en\", \"\")");
    check_error("STRLANGDIR(\"abc\", \"\", \"ltr\")");
    check_error("STRLANGDIR(123, \"\", \"ltr\")");
    check_error("STRLANGDIR(<http://example/x>, \"en\", \"ltr\")");
    // Arguments must be simple literals (or xsd:string); tags are checked and normalized.
    check_term(
        "STRLANGDIR(\"abc\"^^xsd:string, \"EN-gb\", \"rtl\"^^xsd:string)",
        directional("abc", "en-gb", BaseDirection::Rtl),
    );
    check_error("STRLANGDIR(\"abc\"@en, \"en\", \"ltr\")");
    check_error("STRLANGDIR(\"abc\"@en--ltr, \"en\", \"ltr\")");
    check_error("STRLANGDIR(\"abc\", \"en\"@en, \"ltr\")");
    check_error("STRLANGDIR(\"abc\", \"en\", \"ltr\"@en)");
    check_error("STRLANGDIR(\"abc\", \"not a tag\", \"ltr\")");
    check_error("STRLANGDIR(\"abc\", \"en\", ?undef)");
    // What STRLANGDIR builds, the accessors take apart.
    check("LANG(STRLANGDIR(\"abc\", \"fr\", \"rtl\"))", "\"fr\"");
    check("LANGDIR(STRLANGDIR(\"abc\", \"fr\", \"rtl\"))", "\"rtl\"");
    check("STR(STRLANGDIR(\"abc\", \"fr\", \"rtl\"))", "\"abc\"");
}

#[test]
fn strlang_datatype_and_strdt() {
    // lang-basedir/strlang.
    check_term(
        "STRLANG(\"abc\", \"en\")",
        Literal::new_language_tagged_literal_unchecked("abc", "en").into(),
    );
    check_error("STRLANG(\"abc\", \"\")");
    check_error("STRLANG(123, \"en\")");
    check_error("STRLANG(<http://example/x>, \"en\")");
    check_error("STRLANG(\"abc\"@en--ltr, \"en\")");
    // lang-basedir/datatype.
    check("DATATYPE(\"foo\"@en--ltr)", "rdf:dirLangString");
    check("DATATYPE(\"foo\"@en)", "rdf:langString");
    check_error("STRDT(\"foo\", rdf:dirLangString)");
}

#[test]
fn concat() {
    // lang-basedir/concat: a tag and a direction are kept only when all arguments share both.
    let ltr = |value: &str| directional(value, "en", BaseDirection::Ltr);
    let simple = |value: &str| -> Term { Literal::new_simple_literal(value).into() };
    check_term("CONCAT(\"a\"@en--ltr, \"b\"@en--ltr)", ltr("ab"));
    check_term("CONCAT(\"a\"@en--ltr, \"b\"@en--rtl)", simple("ab"));
    check_term("CONCAT(\"a\"@en--ltr, \"b\"@en)", simple("ab"));
    check_term("CONCAT(\"a\"@en, \"b\"@en--ltr)", simple("ab"));
    check_term(
        "CONCAT(\"a\"@en--ltr, \"b\"@en--ltr, \"c\"@en--ltr)",
        ltr("abc"),
    );
    check_term("CONCAT(\"a\"@en--ltr, \"b\", \"c\"@en--ltr)", simple("abc"));
    check_term("CONCAT(\"a\"@en, \"b\", \"c\"@en--ltr)", simple("abc"));
    check_term("CONCAT(\"a\"@fr--ltr, \"b\"@en--ltr)", simple("ab"));
    check_term(
        "CONCAT(\"a\"@en--rtl)",
        directional("a", "en", BaseDirection::Rtl),
    );
    check_term(
        "CONCAT(\"a\"@en, \"b\"@en)",
        Literal::new_language_tagged_literal_unchecked("ab", "en").into(),
    );
}

#[test]
fn argument_compatibility() {
    // lang-basedir/contains and the specification's compatibility table.
    check("CONTAINS(\"abc\"@en--ltr, \"b\"@en--ltr)", "true");
    check("CONTAINS(\"abc\"@en--ltr, \"b\")", "true");
    check("CONTAINS(\"abc\"@en--ltr, \"z\")", "false");
    check_error("CONTAINS(\"abc\"@en--ltr, \"b\"@en)");
    check_error("CONTAINS(\"abc\"@en, \"b\"@en--ltr)");
    check_error("CONTAINS(\"abc\", \"b\"@en--ltr)");
    check_error("CONTAINS(\"abc\"@en--ltr, \"b\"@en--rtl)");
    check_error("CONTAINS(\"abc\"@en--ltr, \"b\"@fr--ltr)");
    check("STRSTARTS(\"abc\"@ar--rtl, \"a\"@ar--rtl)", "true");
    check("STRENDS(\"abc\"@ar--rtl, \"c\")", "true");
    check_error("STRSTARTS(\"abc\"@ar--rtl, \"a\"@ar)");
    check_error("STRENDS(\"abc\"@ar--rtl, \"c\"@ar--ltr)");
}

#[test]
fn string_functions_keep_the_direction() {
    let rtl = |value: &str| directional(value, "ar", BaseDirection::Rtl);
    let simple = |value: &str| -> Term { Literal::new_simple_literal(value).into() };
    check_term("STRBEFORE(\"abc\"@ar--rtl, \"c\")", rtl("ab"));
    check_term("STRBEFORE(\"abc\"@ar--rtl, \"b\"@ar--rtl)", rtl("a"));
    check_term("STRBEFORE(\"abc\"@ar--rtl, \"\")", rtl(""));
    check_term("STRBEFORE(\"abc\"@ar--rtl, \"z\")", simple(""));
    check_term("STRAFTER(\"abc\"@ar--rtl, \"a\")", rtl("bc"));
    check_term("STRAFTER(\"abc\"@ar--rtl, \"z\"@ar--rtl)", simple(""));
    check_error("STRAFTER(\"abc\"@ar--rtl, \"a\"@ar)");
    check_term("SUBSTR(\"abcd\"@ar--rtl, 2, 2)", rtl("bc"));
    check_term("UCASE(\"abc\"@ar--rtl)", rtl("ABC"));
    check_term("LCASE(\"ABC\"@ar--rtl)", rtl("abc"));
    check_term("REPLACE(\"abc\"@ar--rtl, \"b\", \"x\")", rtl("axc"));
    check("STRLEN(\"abc\"@ar--rtl)", "3");
    check("REGEX(\"abc\"@ar--rtl, \"^a\")", "true");
    check_term("ENCODE_FOR_URI(\"a b\"@ar--rtl)", simple("a%20b"));
    check_term("STR(\"abc\"@ar--rtl)", simple("abc"));
    check_term("xsd:string(\"abc\"@ar--rtl)", simple("abc"));
    check_error("MD5(\"abc\"@ar--rtl)");
    check_error("STRLANG(\"abc\"@ar--rtl, \"en\")");
}

#[test]
fn equality() {
    // Equal only with the same value, language tag and base direction.
    check("\"abc\"@en--ltr = \"abc\"@en--ltr", "true");
    check("\"abc\"@en--ltr = \"abc\"@en--rtl", "false");
    check("\"abc\"@en--ltr != \"abc\"@en--rtl", "true");
    check("\"abc\"@en--ltr = \"abc\"@en", "false");
    check("\"abc\"@en--ltr = \"abc\"", "false");
    check("\"abc\"@en--ltr = \"abc\"@fr--ltr", "false");
    check("\"abc\"@en--ltr = \"abd\"@en--ltr", "false");
    // Not equal to any other datatype, an unknown one included (no error).
    check("\"abc\"@en--ltr = \"abc\"^^ex:t", "false");
    check("\"abc\"@en--ltr = \"abc\"^^rdf:dirLangString", "false");
    check("sameTerm(\"abc\"@en--rtl, \"abc\"@en)", "false");
    check("sameTerm(\"abc\"@en--rtl, \"abc\"@en--rtl)", "true");
    check("\"abc\"@en--ltr IN (\"abc\"@en, \"abc\"@en--ltr)", "true");
    let (ltr, rtl) = (term("\"a\"@en--ltr"), term("\"a\"@en--rtl"));
    assert_eq!(equals(&ltr, &rtl), Some(false));
    assert_eq!(equals(&ltr, &ltr), Some(true));
    // No < order between language-tagged strings, as in SPARQL 1.1.
    assert_eq!(compare(&ltr, &rtl), None);
    check_error("\"a\"@en--ltr < \"b\"@en--ltr");
}

#[test]
fn order_by() {
    let mut terms: Vec<Term> = [
        "\"b\"@en",
        "\"a\"@en--rtl",
        "\"a\"@en--ltr",
        "\"a\"@en",
        "\"a\"",
        "<<( ex:s ex:p \"a\"@en--ltr )>>",
        "<<( ex:s ex:p \"a\"@en )>>",
    ]
    .iter()
    .map(|c| term(c))
    .collect();
    terms.sort_by(|a, b| order_terms(Some(a), Some(b)));
    let expected: Vec<Term> = [
        "\"a\"",
        "\"a\"@en",
        "\"a\"@en--ltr",
        "\"a\"@en--rtl",
        "\"b\"@en",
        "<<( ex:s ex:p \"a\"@en )>>",
        "<<( ex:s ex:p \"a\"@en--ltr )>>",
    ]
    .iter()
    .map(|c| term(c))
    .collect();
    assert_eq!(terms, expected);
    let (ltr, rtl) = (term("\"a\"@en--ltr"), term("\"a\"@en--rtl"));
    assert_eq!(order_terms(Some(&rtl), Some(&ltr)), Ordering::Greater);
    assert_eq!(order_terms(Some(&ltr), Some(&ltr.clone())), Ordering::Equal);
}
