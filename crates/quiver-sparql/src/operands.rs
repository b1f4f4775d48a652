//! The operands of a SPARQL expression, for the walks that the compiler (variables, EXISTS
//! patterns) and the executors (which FILTERs and aggregated expressions can be decided
//! per id) make over
//! expressions: one list of spargebra's expression shapes, below both.

use oxrdf::Variable;
use spargebra::algebra::{Expression, Function};

/// The one list of spargebra's operand shapes, for a walk over shared or mutable
/// expressions (`$iter` is `iter` or `iter_mut`).
macro_rules! each_operand {
    ($expression:expr, $f:expr, $iter:ident) => {
        match $expression {
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
                $f(a);
                $f(b);
            }
            Expression::In(a, list) => {
                $f(a);
                list.$iter().for_each(|e| $f(e));
            }
            Expression::UnaryPlus(a) | Expression::UnaryMinus(a) | Expression::Not(a) => $f(a),
            Expression::If(a, b, c) => {
                $f(a);
                $f(b);
                $f(c);
            }
            Expression::Coalesce(list) | Expression::FunctionCall(_, list) => {
                list.$iter().for_each(|e| $f(e))
            }
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_)
            | Expression::Exists(_) => {}
        }
    };
}

/// Calls `f` on each operand of `expression` (none for constants, variables, `BOUND` and
/// `EXISTS`, whose pattern is no expression).
pub fn for_each_operand<'e>(expression: &'e Expression, f: &mut impl FnMut(&'e Expression)) {
    each_operand!(expression, f, iter)
}

/// [`for_each_operand`] over an expression that `f` may change.
pub fn for_each_operand_mut(expression: &mut Expression, f: &mut impl FnMut(&mut Expression)) {
    each_operand!(expression, f, iter_mut)
}

/// `expression` with each operand replaced by `f` of it (constants, variables, `BOUND` and
/// `EXISTS` as they are).
pub(crate) fn map_operands(
    expression: &Expression,
    f: &mut impl FnMut(&Expression) -> Expression,
) -> Expression {
    let mut two = |a: &Expression, b: &Expression| (Box::new(f(a)), Box::new(f(b)));
    match expression {
        Expression::Or(a, b) => {
            let (a, b) = two(a, b);
            Expression::Or(a, b)
        }
        Expression::And(a, b) => {
            let (a, b) = two(a, b);
            Expression::And(a, b)
        }
        Expression::Equal(a, b) => {
            let (a, b) = two(a, b);
            Expression::Equal(a, b)
        }
        Expression::SameTerm(a, b) => {
            let (a, b) = two(a, b);
            Expression::SameTerm(a, b)
        }
        Expression::Greater(a, b) => {
            let (a, b) = two(a, b);
            Expression::Greater(a, b)
        }
        Expression::GreaterOrEqual(a, b) => {
            let (a, b) = two(a, b);
            Expression::GreaterOrEqual(a, b)
        }
        Expression::Less(a, b) => {
            let (a, b) = two(a, b);
            Expression::Less(a, b)
        }
        Expression::LessOrEqual(a, b) => {
            let (a, b) = two(a, b);
            Expression::LessOrEqual(a, b)
        }
        Expression::Add(a, b) => {
            let (a, b) = two(a, b);
            Expression::Add(a, b)
        }
        Expression::Subtract(a, b) => {
            let (a, b) = two(a, b);
            Expression::Subtract(a, b)
        }
        Expression::Multiply(a, b) => {
            let (a, b) = two(a, b);
            Expression::Multiply(a, b)
        }
        Expression::Divide(a, b) => {
            let (a, b) = two(a, b);
            Expression::Divide(a, b)
        }
        Expression::In(a, list) => Expression::In(Box::new(f(a)), list.iter().map(f).collect()),
        Expression::UnaryPlus(a) => Expression::UnaryPlus(Box::new(f(a))),
        Expression::UnaryMinus(a) => Expression::UnaryMinus(Box::new(f(a))),
        Expression::Not(a) => Expression::Not(Box::new(f(a))),
        Expression::If(a, b, c) => Expression::If(Box::new(f(a)), Box::new(f(b)), Box::new(f(c))),
        Expression::Coalesce(list) => Expression::Coalesce(list.iter().map(f).collect()),
        Expression::FunctionCall(function, list) => {
            Expression::FunctionCall(function.clone(), list.iter().map(f).collect())
        }
        Expression::NamedNode(_)
        | Expression::Literal(_)
        | Expression::Variable(_)
        | Expression::Bound(_)
        | Expression::Exists(_) => expression.clone(),
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
