//! Functions on RDF terms (§17.4.2): tests, accessors and constructors.

use crate::{check, check_error, check_with, context, eval, parse};
use oxrdf::{Term, Variable};
use quiver_expr::{evaluate, evaluate_in_scope, EvalContext};

#[test]
fn term_tests() {
    check("isIRI(<http://example.org/>)", "true");
    check("isURI(<http://example.org/>)", "true");
    check("isIRI(\"http://example.org/\")", "false");
    check("isBLANK(BNODE())", "true");
    check("isBLANK(<http://example.org/>)", "false");
    check("isLITERAL(\"a\"@en)", "true");
    check("isLITERAL(1)", "true");
    check("isLITERAL(<http://example.org/>)", "false");
    check_error("isIRI(?unbound)");
}

#[test]
fn str_lang_datatype() {
    check("STR(<http://example.org/a>)", "\"http://example.org/a\"");
    check("STR(\"01\"^^xsd:int)", "\"01\"");
    check("STR(\"chat\"@en)", "\"chat\"");
    check_error("STR(BNODE())");
    check("LANG(\"chat\"@en)", "\"en\"");
    check("LANG(\"chat\")", "\"\"");
    check("LANG(1)", "\"\"");
    check_error("LANG(<http://example.org/>)");
    check("DATATYPE(\"a\")", "xsd:string");
    check("DATATYPE(1)", "xsd:integer");
    check("DATATYPE(\"1\"^^xsd:byte)", "xsd:byte");
    check("DATATYPE(\"a\"^^ex:t)", "ex:t");
    check("DATATYPE(\"a\"@en)", "rdf:langString");
    check_error("DATATYPE(<http://example.org/>)");
}

#[test]
fn iri() {
    check("IRI(\"http://example.org/a\")", "<http://example.org/a>");
    check("URI(\"http://example.org/a\")", "<http://example.org/a>");
    check("IRI(<http://example.org/a>)", "<http://example.org/a>");
    // The test context's base IRI is http://example.org/base/.
    check("IRI(\"rel\")", "<http://example.org/base/rel>");
    check("IRI(\"../up\")", "<http://example.org/up>");
    check(
        "IRI(\"http://example.org/a\"^^xsd:string)",
        "<http://example.org/a>",
    );
    check_error("IRI(\"a\"@en)");
    check_error("IRI(1)");
    check_error("IRI(\"http://exa mple.org/\")");
    // Without a base IRI, relative IRIs are errors.
    let relative = parse("IRI(\"rel\")");
    let no_base = EvalContext::new();
    assert_eq!(evaluate(&relative, &|_| None, &|_| true, &no_base), None);
}

#[test]
fn strdt_and_strlang() {
    check("STRDT(\"123\", xsd:integer)", "123");
    check(
        "STRDT(\"iiii\", ex:romanNumeral)",
        "\"iiii\"^^ex:romanNumeral",
    );
    check("STRDT(\"a\"^^xsd:string, xsd:string)", "\"a\"");
    check_error("STRDT(\"123\"@en, xsd:integer)");
    check_error("STRDT(\"123\"^^xsd:integer, xsd:integer)");
    check_error("STRDT(\"a\", \"b\")");
    check_error("STRDT(\"a\", rdf:langString)");
    check("STRLANG(\"chat\", \"en\")", "\"chat\"@en");
    check("STRLANG(\"chat\", \"EN-gb\")", "\"chat\"@en-gb");
    check_error("STRLANG(\"chat\"@fr, \"en\")");
    check_error("STRLANG(\"chat\", \"\")");
    check_error("STRLANG(\"chat\", \"not a tag\")");
    check_error("STRLANG(1, \"en\")");
}

#[test]
fn bnode() {
    check("sameTerm(BNODE(), BNODE())", "false");
    check("sameTerm(BNODE(\"a\"), BNODE(\"a\"))", "true");
    check("sameTerm(BNODE(\"a\"), BNODE(\"a\"^^xsd:string))", "true");
    check("sameTerm(BNODE(\"a\"), BNODE(\"b\"))", "false");
    check_with(
        "sameTerm(BNODE(?x), BNODE(\"a\"))",
        &[("x", "\"a\"")],
        "true",
    );
    check_error("BNODE(1)");
    check_error("BNODE(\"a\"@en)");

    // Across evaluations: distinct unless the engine gives the same solution id.
    let ctx = context();
    let expression = parse("BNODE(\"a\")");
    let none = |_: &Variable| None::<Term>;
    let first = evaluate(&expression, &none, &|_| true, &ctx);
    let second = evaluate(&expression, &none, &|_| true, &ctx);
    assert!(matches!(first, Some(Term::BlankNode(_))));
    assert_ne!(first, second);
    let in_row_1 = evaluate_in_scope(&expression, &none, &|_| true, &ctx, 1);
    assert_eq!(
        in_row_1,
        evaluate_in_scope(&expression, &none, &|_| true, &ctx, 1)
    );
    assert_ne!(
        in_row_1,
        evaluate_in_scope(&expression, &none, &|_| true, &ctx, 2)
    );
    // Another query (context) gives other blank nodes for the same row.
    let other = EvalContext::new();
    assert_ne!(
        in_row_1,
        evaluate_in_scope(&expression, &none, &|_| true, &other, 1)
    );
}

#[test]
fn uuid() {
    let Some(Term::NamedNode(iri)) = eval("UUID()") else {
        panic!("UUID() is not an IRI")
    };
    let uuid = iri
        .as_str()
        .strip_prefix("urn:uuid:")
        .expect("a urn:uuid: IRI");
    assert_uuid_v4(uuid);
    let Some(Term::Literal(literal)) = eval("STRUUID()") else {
        panic!("STRUUID() is not a literal")
    };
    assert!(literal.datatype() == oxrdf::vocab::xsd::STRING);
    assert_uuid_v4(literal.value());
    check("UUID() != UUID()", "true");
    check("STRUUID() != STRUUID()", "true");
}

fn assert_uuid_v4(uuid: &str) {
    let groups: Vec<&str> = uuid.split('-').collect();
    let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
    assert_eq!(lengths, [8, 4, 4, 4, 12], "{uuid}");
    assert!(uuid
        .chars()
        .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)));
    assert!(groups[2].starts_with('4'), "version 4: {uuid}");
    assert!(
        groups[3].starts_with(['8', '9', 'a', 'b']),
        "variant: {uuid}"
    );
}

#[test]
fn context_is_shareable_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<EvalContext>();
    // Parallel evaluations of one context agree on NOW() and compile regexes once.
    let ctx = context();
    let expression = parse("IF(REGEX(\"abc\", \"^a\", \"i\"), NOW(), 0)");
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| evaluate(&expression, &|_| None, &|_| true, &ctx)))
            .collect();
        for handle in handles {
            let result = handle.join().expect("no panic");
            assert_eq!(result, eval("NOW()"));
        }
    });
}
