//! The expression tree walker.
//!
//! Every node evaluates to `Option<Term>`, `None` being SPARQL's evaluation error. Errors
//! propagate through operators and functions, except where §17 says otherwise: `||` and `&&`
//! tolerate an error on one side when the other side decides (§17.2), `IF` only evaluates the
//! chosen branch, `COALESCE` returns its first non-error argument, `BOUND` never fails, and `IN`
//! is true as soon as one member is equal even if others raise errors.

use crate::compare;
use crate::context::EvalContext;
use crate::datetime::{self, Component};
use crate::hash::{self, Algorithm};
use crate::numeric;
use crate::pattern;
use crate::string;
use crate::term;
use crate::triple;
use crate::value::{self, effective_boolean_value};
use oxrdf::{Term, Variable};
use spargebra::algebra::{Expression, Function, GraphPattern};
use std::cmp::Ordering;

/// Evaluates expressions against one solution.
pub(crate) struct Evaluator<'a> {
    bindings: &'a dyn Fn(&Variable) -> Option<Term>,
    exists: &'a dyn Fn(&GraphPattern) -> bool,
    context: &'a EvalContext,
    /// The `BNODE(str)` scope: one per solution.
    scope: u64,
}

impl<'a> Evaluator<'a> {
    pub(crate) fn new(
        bindings: &'a dyn Fn(&Variable) -> Option<Term>,
        exists: &'a dyn Fn(&GraphPattern) -> bool,
        context: &'a EvalContext,
        scope: u64,
    ) -> Self {
        Self {
            bindings,
            exists,
            context,
            scope,
        }
    }

    /// Evaluates `expression`; `None` is an evaluation error.
    pub(crate) fn eval(&self, expression: &Expression) -> Option<Term> {
        match expression {
            Expression::NamedNode(n) => Some(n.clone().into()),
            Expression::Literal(l) => Some(l.clone().into()),
            Expression::Variable(v) => (self.bindings)(v),
            Expression::Or(a, b) => self.or(a, b).map(value::boolean),
            Expression::And(a, b) => self.and(a, b).map(value::boolean),
            Expression::Not(a) => Some(value::boolean(!self.ebv(a)?)),
            Expression::Equal(a, b) => {
                let (a, b) = (self.eval(a)?, self.eval(b)?);
                compare::equals(&a, &b).map(value::boolean)
            }
            Expression::SameTerm(a, b) => Some(value::boolean(self.eval(a)? == self.eval(b)?)),
            Expression::Greater(a, b) => self.compare(a, b, &[Ordering::Greater]),
            Expression::GreaterOrEqual(a, b) => {
                self.compare(a, b, &[Ordering::Greater, Ordering::Equal])
            }
            Expression::Less(a, b) => self.compare(a, b, &[Ordering::Less]),
            Expression::LessOrEqual(a, b) => self.compare(a, b, &[Ordering::Less, Ordering::Equal]),
            Expression::In(a, list) => self.is_in(a, list).map(value::boolean),
            Expression::Add(a, b) => numeric::add(&self.eval(a)?, &self.eval(b)?),
            Expression::Subtract(a, b) => numeric::subtract(&self.eval(a)?, &self.eval(b)?),
            Expression::Multiply(a, b) => numeric::multiply(&self.eval(a)?, &self.eval(b)?),
            Expression::Divide(a, b) => numeric::divide(&self.eval(a)?, &self.eval(b)?),
            Expression::UnaryPlus(a) => numeric::unary_plus(&self.eval(a)?),
            Expression::UnaryMinus(a) => numeric::unary_minus(&self.eval(a)?),
            Expression::Exists(pattern) => Some(value::boolean((self.exists)(pattern))),
            Expression::Bound(v) => Some(value::boolean((self.bindings)(v).is_some())),
            Expression::If(condition, then, otherwise) => {
                if self.ebv(condition)? {
                    self.eval(then)
                } else {
                    self.eval(otherwise)
                }
            }
            Expression::Coalesce(list) => list.iter().find_map(|e| self.eval(e)),
            Expression::FunctionCall(function, args) => self.call(function, args),
        }
    }

    /// The effective boolean value of `expression`.
    fn ebv(&self, expression: &Expression) -> Option<bool> {
        effective_boolean_value(&self.eval(expression)?)
    }

    /// `a || b`: true if either side is true, even if the other is an error.
    fn or(&self, a: &Expression, b: &Expression) -> Option<bool> {
        match self.ebv(a) {
            Some(true) => Some(true),
            a => match (a, self.ebv(b)?) {
                (_, true) => Some(true),
                (Some(false), false) => Some(false),
                (_, false) => None,
            },
        }
    }

    /// `a && b`: false if either side is false, even if the other is an error.
    fn and(&self, a: &Expression, b: &Expression) -> Option<bool> {
        match self.ebv(a) {
            Some(false) => Some(false),
            a => match (a, self.ebv(b)?) {
                (_, false) => Some(false),
                (Some(true), true) => Some(true),
                (_, true) => None,
            },
        }
    }

    /// The ordering operators.
    fn compare(&self, a: &Expression, b: &Expression, accepted: &[Ordering]) -> Option<Term> {
        let (a, b) = (self.eval(a)?, self.eval(b)?);
        compare::test(&a, &b, accepted).map(value::boolean)
    }

    /// `a IN (list)`: true if some member is equal; else an error if some comparison failed.
    fn is_in(&self, a: &Expression, list: &[Expression]) -> Option<bool> {
        if list.is_empty() {
            return Some(false);
        }
        let a = self.eval(a)?;
        let mut error = false;
        for member in list {
            match self.eval(member).and_then(|m| compare::equals(&a, &m)) {
                Some(true) => return Some(true),
                Some(false) => (),
                None => error = true,
            }
        }
        if error {
            None
        } else {
            Some(false)
        }
    }

    /// A built-in or XSD constructor function call.
    fn call(&self, function: &Function, args: &[Expression]) -> Option<Term> {
        let ctx = self.context;
        // Functions without arguments.
        match (function, args) {
            (Function::Rand, []) => return Some(numeric::rand(ctx)),
            (Function::Now, []) => return Some(value::literal(ctx.now())),
            (Function::Uuid, []) => return Some(term::uuid_iri(ctx)),
            (Function::StrUuid, []) => return Some(term::struuid(ctx)),
            (Function::BNode, []) => return term::bnode(ctx, self.scope, None),
            _ => (),
        }
        let args = args
            .iter()
            .map(|a| self.eval(a))
            .collect::<Option<Vec<_>>>()?;
        match (function, args.as_slice()) {
            (Function::Concat, args) => string::concat(args),
            (Function::Str, [a]) => term::str(a),
            (Function::Lang, [a]) => term::lang(a),
            (Function::LangDir, [a]) => term::langdir(a),
            (Function::HasLang, [a]) => Some(term::has_lang(a)),
            (Function::HasLangDir, [a]) => Some(term::has_langdir(a)),
            (Function::LangMatches, [a, b]) => string::langmatches(a, b),
            (Function::Datatype, [a]) => term::datatype(a),
            (Function::Iri, [a]) => term::iri(ctx, a),
            (Function::BNode, [a]) => term::bnode(ctx, self.scope, Some(a)),
            (Function::Abs, [a]) => numeric::abs(a),
            (Function::Ceil, [a]) => numeric::ceil(a),
            (Function::Floor, [a]) => numeric::floor(a),
            (Function::Round, [a]) => numeric::round(a),
            (Function::SubStr, [a, b]) => string::substr(a, b, None),
            (Function::SubStr, [a, b, c]) => string::substr(a, b, Some(c)),
            (Function::StrLen, [a]) => string::strlen(a),
            (Function::Replace, [a, b, c]) => pattern::replace(ctx, a, b, c, None),
            (Function::Replace, [a, b, c, d]) => pattern::replace(ctx, a, b, c, Some(d)),
            (Function::UCase, [a]) => string::ucase(a),
            (Function::LCase, [a]) => string::lcase(a),
            (Function::EncodeForUri, [a]) => string::encode_for_uri(a),
            (Function::Contains, [a, b]) => string::contains(a, b),
            (Function::StrStarts, [a, b]) => string::strstarts(a, b),
            (Function::StrEnds, [a, b]) => string::strends(a, b),
            (Function::StrBefore, [a, b]) => string::strbefore(a, b),
            (Function::StrAfter, [a, b]) => string::strafter(a, b),
            (Function::Year, [a]) => datetime::component(a, Component::Year),
            (Function::Month, [a]) => datetime::component(a, Component::Month),
            (Function::Day, [a]) => datetime::component(a, Component::Day),
            (Function::Hours, [a]) => datetime::component(a, Component::Hours),
            (Function::Minutes, [a]) => datetime::component(a, Component::Minutes),
            (Function::Seconds, [a]) => datetime::component(a, Component::Seconds),
            (Function::Timezone, [a]) => datetime::timezone(a),
            (Function::Tz, [a]) => datetime::tz(a),
            (Function::Md5, [a]) => hash::hash(Algorithm::Md5, a),
            (Function::Sha1, [a]) => hash::hash(Algorithm::Sha1, a),
            (Function::Sha256, [a]) => hash::hash(Algorithm::Sha256, a),
            (Function::Sha384, [a]) => hash::hash(Algorithm::Sha384, a),
            (Function::Sha512, [a]) => hash::hash(Algorithm::Sha512, a),
            (Function::StrLang, [a, b]) => term::strlang(a, b),
            (Function::StrLangDir, [a, b, c]) => term::strlangdir(a, b, c),
            (Function::StrDt, [a, b]) => term::strdt(a, b),
            (Function::IsIri, [a]) => Some(term::is_iri(a)),
            (Function::IsBlank, [a]) => Some(term::is_blank(a)),
            (Function::IsLiteral, [a]) => Some(term::is_literal(a)),
            (Function::IsNumeric, [a]) => Some(numeric::is_numeric(a)),
            (Function::Regex, [a, b]) => pattern::regex(ctx, a, b, None),
            (Function::Regex, [a, b, c]) => pattern::regex(ctx, a, b, Some(c)),
            (Function::Triple, [s, p, o]) => triple::triple(s, p, o),
            (Function::Subject, [a]) => triple::subject(a),
            (Function::Predicate, [a]) => triple::predicate(a),
            (Function::Object, [a]) => triple::object(a),
            (Function::IsTriple, [a]) => Some(triple::is_triple(a)),
            (Function::Custom(datatype), [a]) => crate::cast::cast(datatype, a),
            // Wrong arities, unknown custom functions, and functions of SPARQL extensions
            // (spargebra's `sep-0002` ADJUST).
            _ => None,
        }
    }
}
