//! Error propagation, and robustness: no input makes evaluation panic.

use crate::{check, check_error, context, term};
use oxrdf::{BlankNode, Literal, NamedNode, Term, Variable};
use quiver_expr::{evaluate, order_terms};
use spargebra::algebra::{Expression, Function};

#[test]
fn errors_propagate() {
    check_error("STR(?unbound)");
    check_error("STRLEN(STR(?unbound))");
    check_error("1 + (2 * (3 / 0))");
    check_error("CONCAT(\"a\", STR(BNODE()))");
    check_error("UCASE(SUBSTR(1, 1))");
    check_error("xsd:integer(\"a\") + 1");
    check_error("REGEX(STR(?unbound), \"a\")");
    check_error("IF(1/0 = 1, 1, 2)");
    // Errors are recovered only by ||, &&, COALESCE, IF's untaken branch, BOUND and IN.
    check(
        "COALESCE(xsd:integer(\"a\") + 1, \"fallback\")",
        "\"fallback\"",
    );
    check("!BOUND(?unbound) || STRLEN(?unbound) > 0", "true");
    check_error("BOUND(?unbound) || STRLEN(?unbound) > 0");
    check("(1/0 = 1) || true", "true");
}

#[test]
fn malformed_calls_are_errors() {
    let ctx = context();
    let call = |function: Function, args: Vec<Expression>| {
        evaluate(
            &Expression::FunctionCall(function, args),
            &|_| None,
            &|_| true,
            &ctx,
        )
    };
    let one = || Expression::Literal(Literal::from(1));
    assert_eq!(call(Function::Str, vec![]), None);
    assert_eq!(call(Function::Str, vec![one(), one()]), None);
    assert_eq!(call(Function::Rand, vec![one()]), None);
    assert_eq!(call(Function::SubStr, vec![one()]), None);
    assert_eq!(
        call(Function::Regex, vec![one(), one(), one(), one()]),
        None
    );
    assert_eq!(
        call(
            Function::Custom(NamedNode::new_unchecked(
                "http://www.w3.org/2001/XMLSchema#integer"
            )),
            vec![one(), one()]
        ),
        None
    );
    assert_eq!(
        call(
            Function::Custom(NamedNode::new_unchecked("http://example.org/f")),
            vec![one()]
        ),
        None
    );
}

/// The constructor of a binary operator expression.
type BinaryOperator = fn(Box<Expression>, Box<Expression>) -> Expression;

/// Every built-in function.
fn functions() -> Vec<Function> {
    let xsd = |local: &str| {
        Function::Custom(NamedNode::new_unchecked(format!(
            "http://www.w3.org/2001/XMLSchema#{local}"
        )))
    };
    let mut functions = vec![
        Function::Str,
        Function::Lang,
        Function::LangMatches,
        Function::Datatype,
        Function::Iri,
        Function::BNode,
        Function::Rand,
        Function::Abs,
        Function::Ceil,
        Function::Floor,
        Function::Round,
        Function::Concat,
        Function::SubStr,
        Function::StrLen,
        Function::Replace,
        Function::UCase,
        Function::LCase,
        Function::EncodeForUri,
        Function::Contains,
        Function::StrStarts,
        Function::StrEnds,
        Function::StrBefore,
        Function::StrAfter,
        Function::Year,
        Function::Month,
        Function::Day,
        Function::Hours,
        Function::Minutes,
        Function::Seconds,
        Function::Timezone,
        Function::Tz,
        Function::Now,
        Function::Uuid,
        Function::StrUuid,
        Function::Md5,
        Function::Sha1,
        Function::Sha256,
        Function::Sha384,
        Function::Sha512,
        Function::StrLang,
        Function::StrDt,
        Function::IsIri,
        Function::IsBlank,
        Function::IsLiteral,
        Function::IsNumeric,
        Function::Regex,
        Function::Triple,
        Function::Subject,
        Function::Predicate,
        Function::Object,
        Function::IsTriple,
        Function::LangDir,
        Function::HasLang,
        Function::HasLangDir,
        Function::StrLangDir,
    ];
    for local in [
        "string",
        "boolean",
        "integer",
        "decimal",
        "float",
        "double",
        "dateTime",
        "date",
        "time",
        "duration",
        "dayTimeDuration",
        "yearMonthDuration",
        "gYear",
        "gYearMonth",
        "gMonth",
        "gMonthDay",
        "gDay",
        "byte",
        "unsignedLong",
    ] {
        functions.push(xsd(local));
    }
    functions
}

/// Edge-case values: extremes, NaN, empty strings, ill-formed literals, all kinds of terms.
fn pool() -> Vec<Term> {
    let xsd = |lexical: &str, local: &str| -> Term {
        Literal::new_typed_literal(
            lexical,
            NamedNode::new_unchecked(format!("http://www.w3.org/2001/XMLSchema#{local}")),
        )
        .into()
    };
    let mut pool: Vec<Term> = [
        "9223372036854775807",
        "-9223372036854775807 - 1",
        "0",
        "-0.5",
        "0.0",
        "170141183460469231731.687303715884105727",
        "1e308",
        "xsd:double(\"NaN\")",
        "xsd:float(\"-INF\")",
        "\"\"",
        "\"a\"",
        "\"\"@en",
        "\"食べ物\\U0001F600\"@ja",
        "\"(\"",
        "\"$\"",
        "\"i\"",
        "\"*\"",
        "\"en\"",
        "true",
        "<http://example.org/a>",
        "\"-292277022657-01-27T08:29:52Z\"^^xsd:dateTime",
        "\"2024-02-29T23:59:59.999-14:00\"^^xsd:dateTime",
        "\"24:00:00\"^^xsd:time",
        "\"-P106751991167300DT15H30M7.999999999S\"^^xsd:dayTimeDuration",
        "\"P768614336404564650Y7M\"^^xsd:yearMonthDuration",
        "\"--02-29\"^^xsd:gMonthDay",
        "\"x\"^^ex:t",
        "xsd:integer",
        "rdf:langString",
        "\"ltr\"",
        "\"\"@ar--rtl",
        "<<( ex:a ex:b <<( ex:c ex:d \"x\"@en--ltr )>> )>>",
    ]
    .iter()
    .map(|c| term(c))
    .collect();
    pool.push(xsd("abc", "integer"));
    pool.push(xsd("99999999999999999999999", "integer"));
    pool.push(xsd("18446744073709551615", "unsignedLong"));
    pool.push(xsd("1e99999", "double"));
    pool.push(BlankNode::new_unchecked("b").into());
    pool
}

#[test]
fn no_input_panics() {
    let ctx = context();
    let pool = pool();
    let vars: Vec<Variable> = (0..=pool.len())
        .map(|i| Variable::new_unchecked(format!("v{i}")))
        .collect();
    // The last variable is unbound.
    let bindings = |v: &Variable| {
        let i = vars.iter().position(|x| x == v)?;
        pool.get(i).cloned()
    };
    let arg = |i: usize| Expression::Variable(vars[i].clone());
    // Numbers, strings, a tag, an IRI, dates, an unknown datatype, RDF 1.2 terms, unbound.
    let small: Vec<usize> = vec![
        0,
        3,
        6,
        9,
        13,
        14,
        17,
        19,
        22,
        26,
        29,
        30,
        31,
        vars.len() - 1,
    ];
    let mut evaluations = 0_usize;
    let mut run = |e: Expression| {
        let result = evaluate(&e, &bindings, &|_| true, &ctx);
        // Results are usable terms: ordering them must work too.
        let _ = order_terms(result.as_ref(), pool.first());
        evaluations += 1;
    };
    for function in functions() {
        run(Expression::FunctionCall(function.clone(), vec![]));
        for a in 0..vars.len() {
            run(Expression::FunctionCall(function.clone(), vec![arg(a)]));
            for b in 0..vars.len() {
                run(Expression::FunctionCall(
                    function.clone(),
                    vec![arg(a), arg(b)],
                ));
            }
        }
        for &a in &small {
            for &b in &small {
                for &c in &small {
                    run(Expression::FunctionCall(
                        function.clone(),
                        vec![arg(a), arg(b), arg(c)],
                    ));
                    for &d in &small[..4] {
                        run(Expression::FunctionCall(
                            function.clone(),
                            vec![arg(a), arg(b), arg(c), arg(d)],
                        ));
                    }
                }
            }
        }
    }
    let binary: [BinaryOperator; 12] = [
        Expression::Or,
        Expression::And,
        Expression::Equal,
        Expression::SameTerm,
        Expression::Greater,
        Expression::GreaterOrEqual,
        Expression::Less,
        Expression::LessOrEqual,
        Expression::Add,
        Expression::Subtract,
        Expression::Multiply,
        Expression::Divide,
    ];
    for a in 0..vars.len() {
        run(Expression::UnaryMinus(Box::new(arg(a))));
        run(Expression::UnaryPlus(Box::new(arg(a))));
        run(Expression::Not(Box::new(arg(a))));
        for b in 0..vars.len() {
            for operator in binary {
                run(operator(Box::new(arg(a)), Box::new(arg(b))));
            }
            run(Expression::In(Box::new(arg(a)), vec![arg(b), arg(a)]));
        }
    }
    assert!(evaluations > 100_000, "{evaluations}");
}
