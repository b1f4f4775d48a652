//! The operands of a SPARQL expression, for the walks that the compiler (variables, EXISTS
//! patterns) and the executors (which FILTERs and aggregated expressions can be decided
//! per id) make over
//! expressions: one list of spargebra's expression shapes, below both.

use oxrdf::Variable;
use spargebra::algebra::{Expression, Function};

/// Calls `f` on each operand of `expression` (none for constants, variables, `BOUND` and
/// `EXISTS`, whose pattern is no expression).
pub fn for_each_operand<'e>(expression: &'e Expression, f: &mut impl FnMut(&'e Expression)) {
    match expression {
        Expression::Or(a, b)
        | Expression::And(a, b)
        | Expression::Equal(a, b)
        | Expression::SameTerm(a, b)
        | Expression::Greater(a, b)
        | Expression::GreaterOrEqual(a, b)
        | Expression::Less(a, b)
        | Expression::LessOrEqual(a, b)
        | Expression::Add(a, b)
        | Expression::Subtract(a, b)
        | Expression::Multiply(a, b)
        | Expression::Divide(a, b) => {
            f(a);
            f(b);
        }
        Expression::In(a, list) => {
            f(a);
            list.iter().for_each(f);
        }
        Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => f(a),
        Expression::If(a, b, c) => {
            f(a);
            f(b);
            f(c);
        }
        Expression::Coalesce(list) | Expression::FunctionCall(_, list) => list.iter().for_each(f),
        Expression::NamedNode(_)
        | Expression::Literal(_)
        | Expression::Variable(_)
        | Expression::Bound(_)
        | Expression::Exists(_) => {}
    }
}

/// Whether `expression` can be decided per id (no EXISTS, nothing random or fresh); adds
/// the variables it reads to `variables`.
pub(crate) fn per_id(expression: &Expression, variables: &mut Vec<Variable>) -> bool {
    match expression {
        Expression::Variable(v) | Expression::Bound(v) => {
            if !variables.contains(v) {
                variables.push(v.clone());
            }
            true
        }
        Expression::Exists(_) => false,
        Expression::FunctionCall(
            Function::Rand | Function::Uuid | Function::StrUuid | Function::BNode,
            _,
        ) => false,
        _ => {
            let mut decidable = true;
            for_each_operand(expression, &mut |operand| {
                decidable = decidable && per_id(operand, variables);
            });
            decidable
        }
    }
}
