//! Triple-term patterns (RDF 1.2): `?r rdf:reifies <<( ?s :p ?o )>>`.
//!
//! A triple term is one dictionary entry like any other term (`quiver_model::term`), so a
//! pattern naming one whole (`<<( :a :b :c )>>`) is a constant of the graph index and needs
//! nothing here. A triple term with variables or blank nodes inside cannot be looked up:
//! it is rewritten before compiling into a fresh variable standing for the whole term,
//! and the parts read back from the term that variable binds:
//!
//! ```text
//! { ?r :q <<( ?s :p ?o )>> . ?s :name ?n }
//!   ⇒ Filter(sameTerm(PREDICATE(?t), :p) && sameTerm(SUBJECT(?t), ?s),
//!        Extend(?o := OBJECT(?t), Filter(isTRIPLE(?t), { ?r :q ?t . ?s :name ?n })))
//! ```
//!
//! A part's variable that something else in the pattern binds (or an earlier part) is
//! compared with `sameTerm`, as matching a graph compares terms; one bound nowhere else is
//! bound by `Extend`; a constant part is compared; a nested triple term gets a fresh
//! variable of its own and is unpacked in turn. The blank nodes of such a basic graph
//! pattern become variables (what they are in a pattern). The fresh variables are never
//! projected: `SELECT *` reads the query as written. A SERVICE pattern is sent as
//! written.

use std::collections::HashSet;

use oxrdf::Variable;
use spargebra::algebra::{
    AggregateExpression, Expression, Function, GraphPattern, OrderExpression,
};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

use crate::bgp::is_open;

/// `pattern` with its open triple terms unpacked; `None` when it has none.
pub(crate) fn unpack(pattern: &GraphPattern) -> Option<GraphPattern> {
    Unpacker::default().pattern(pattern)
}

#[derive(Default)]
struct Unpacker {
    next: usize,
}

/// A fresh variable and the triple term pattern its term must match.
type Pending = (Variable, TriplePattern);

impl Unpacker {
    fn fresh(&mut self) -> Variable {
        self.next += 1;
        // `·` may not start a SPARQL variable name: no query can name these.
        Variable::new_unchecked(format!("·triple{}", self.next))
    }

    /// `pattern` rewritten, or `None` when nothing in it changes: an unchanged part is
    /// never copied (most queries have no triple term, and copying their whole algebra
    /// for nothing cost a light query a few percent of its time).
    fn pattern(&mut self, pattern: &GraphPattern) -> Option<GraphPattern> {
        match pattern {
            GraphPattern::Bgp { patterns } => self.bgp(patterns),
            GraphPattern::Path {
                subject,
                path,
                object,
            } => self.path(subject, path, object),
            GraphPattern::Join { left, right } => self
                .two(left, right)
                .map(|(left, right)| GraphPattern::Join { left, right }),
            GraphPattern::Union { left, right } => self
                .two(left, right)
                .map(|(left, right)| GraphPattern::Union { left, right }),
            GraphPattern::Minus { left, right } => self
                .two(left, right)
                .map(|(left, right)| GraphPattern::Minus { left, right }),
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => {
                let sides = self.two(left, right);
                let condition = expression.as_ref().and_then(|e| self.expression(e));
                if sides.is_none() && condition.is_none() {
                    return None;
                }
                let (left, right) = sides.unwrap_or_else(|| (left.clone(), right.clone()));
                Some(GraphPattern::LeftJoin {
                    left,
                    right,
                    expression: condition.or_else(|| expression.clone()),
                })
            }
            GraphPattern::Filter { expr, inner } => {
                let (inner_new, expr_new) = (self.pattern(inner), self.expression(expr));
                if inner_new.is_none() && expr_new.is_none() {
                    return None;
                }
                Some(GraphPattern::Filter {
                    inner: or_boxed(inner_new, inner),
                    expr: expr_new.unwrap_or_else(|| expr.clone()),
                })
            }
            GraphPattern::Graph { name, inner } => {
                self.pattern(inner).map(|inner| GraphPattern::Graph {
                    name: name.clone(),
                    inner: Box::new(inner),
                })
            }
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => {
                let (inner_new, expression_new) =
                    (self.pattern(inner), self.expression(expression));
                if inner_new.is_none() && expression_new.is_none() {
                    return None;
                }
                Some(GraphPattern::Extend {
                    inner: or_boxed(inner_new, inner),
                    variable: variable.clone(),
                    expression: expression_new.unwrap_or_else(|| expression.clone()),
                })
            }
            GraphPattern::OrderBy { inner, expression } => {
                let inner_new = self.pattern(inner);
                let orders: Vec<Option<OrderExpression>> = expression
                    .iter()
                    .map(|order| match order {
                        OrderExpression::Asc(e) => self.expression(e).map(OrderExpression::Asc),
                        OrderExpression::Desc(e) => self.expression(e).map(OrderExpression::Desc),
                    })
                    .collect();
                if inner_new.is_none() && orders.iter().all(Option::is_none) {
                    return None;
                }
                Some(GraphPattern::OrderBy {
                    inner: or_boxed(inner_new, inner),
                    expression: orders
                        .into_iter()
                        .zip(expression)
                        .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                        .collect(),
                })
            }
            GraphPattern::Project { inner, variables } => {
                self.pattern(inner).map(|inner| GraphPattern::Project {
                    inner: Box::new(inner),
                    variables: variables.clone(),
                })
            }
            GraphPattern::Distinct { inner } => {
                self.pattern(inner).map(|inner| GraphPattern::Distinct {
                    inner: Box::new(inner),
                })
            }
            GraphPattern::Reduced { inner } => {
                self.pattern(inner).map(|inner| GraphPattern::Reduced {
                    inner: Box::new(inner),
                })
            }
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => self.pattern(inner).map(|inner| GraphPattern::Slice {
                inner: Box::new(inner),
                start: *start,
                length: *length,
            }),
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => {
                let inner_new = self.pattern(inner);
                let aggregates_new: Vec<Option<AggregateExpression>> = aggregates
                    .iter()
                    .map(|(_, aggregate)| match aggregate {
                        AggregateExpression::FunctionCall {
                            name,
                            expr,
                            distinct,
                        } => self
                            .expression(expr)
                            .map(|expr| AggregateExpression::FunctionCall {
                                name: name.clone(),
                                expr,
                                distinct: *distinct,
                            }),
                        AggregateExpression::CountSolutions { .. } => None,
                    })
                    .collect();
                if inner_new.is_none() && aggregates_new.iter().all(Option::is_none) {
                    return None;
                }
                Some(GraphPattern::Group {
                    inner: or_boxed(inner_new, inner),
                    variables: variables.clone(),
                    aggregates: aggregates_new
                        .into_iter()
                        .zip(aggregates)
                        .map(|(new, (variable, old))| {
                            (variable.clone(), new.unwrap_or_else(|| old.clone()))
                        })
                        .collect(),
                })
            }
            // VALUES holds terms only; a SERVICE pattern goes out as written.
            GraphPattern::Values { .. } | GraphPattern::Service { .. } => None,
            #[allow(unreachable_patterns)] // LATERAL, with spargebra's SEP-0006 feature
            _ => None,
        }
    }

    /// Two patterns rewritten (the left one first), or `None` when neither changes.
    fn two(
        &mut self,
        left: &GraphPattern,
        right: &GraphPattern,
    ) -> Option<(Box<GraphPattern>, Box<GraphPattern>)> {
        let (left_new, right_new) = (self.pattern(left), self.pattern(right));
        if left_new.is_none() && right_new.is_none() {
            return None;
        }
        Some((or_boxed(left_new, left), or_boxed(right_new, right)))
    }

    /// An expression with the patterns of its EXISTS unpacked, or `None` when none
    /// changes.
    fn expression(&mut self, expression: &Expression) -> Option<Expression> {
        match expression {
            Expression::Exists(pattern) => self
                .pattern(pattern)
                .map(|pattern| Expression::Exists(Box::new(pattern))),
            Expression::Or(a, b) => self.binary(Expression::Or, a, b),
            Expression::And(a, b) => self.binary(Expression::And, a, b),
            Expression::Equal(a, b) => self.binary(Expression::Equal, a, b),
            Expression::SameTerm(a, b) => self.binary(Expression::SameTerm, a, b),
            Expression::Greater(a, b) => self.binary(Expression::Greater, a, b),
            Expression::GreaterOrEqual(a, b) => self.binary(Expression::GreaterOrEqual, a, b),
            Expression::Less(a, b) => self.binary(Expression::Less, a, b),
            Expression::LessOrEqual(a, b) => self.binary(Expression::LessOrEqual, a, b),
            Expression::Add(a, b) => self.binary(Expression::Add, a, b),
            Expression::Subtract(a, b) => self.binary(Expression::Subtract, a, b),
            Expression::Multiply(a, b) => self.binary(Expression::Multiply, a, b),
            Expression::Divide(a, b) => self.binary(Expression::Divide, a, b),
            Expression::UnaryPlus(a) => self
                .expression(a)
                .map(|a| Expression::UnaryPlus(Box::new(a))),
            Expression::UnaryMinus(a) => self
                .expression(a)
                .map(|a| Expression::UnaryMinus(Box::new(a))),
            Expression::Not(a) => self.expression(a).map(|a| Expression::Not(Box::new(a))),
            Expression::If(a, b, c) => self
                .expressions([a, b, c])
                .map(|[a, b, c]| Expression::If(Box::new(a), Box::new(b), Box::new(c))),
            Expression::In(a, list) => {
                let (a_new, list_new) = (self.expression(a), self.list(list));
                if a_new.is_none() && list_new.is_none() {
                    return None;
                }
                Some(Expression::In(
                    Box::new(a_new.unwrap_or_else(|| (**a).clone())),
                    list_new.unwrap_or_else(|| list.clone()),
                ))
            }
            Expression::Coalesce(list) => self.list(list).map(Expression::Coalesce),
            Expression::FunctionCall(function, args) => self
                .list(args)
                .map(|args| Expression::FunctionCall(function.clone(), args)),
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_) => None,
        }
    }

    /// A binary expression `make(a, b)` rewritten, or `None` when neither side changes.
    fn binary(
        &mut self,
        make: fn(Box<Expression>, Box<Expression>) -> Expression,
        a: &Expression,
        b: &Expression,
    ) -> Option<Expression> {
        self.expressions([a, b])
            .map(|[a, b]| make(Box::new(a), Box::new(b)))
    }

    /// Expressions rewritten in order, or `None` when none changes.
    fn expressions<const N: usize>(&mut self, parts: [&Expression; N]) -> Option<[Expression; N]> {
        let mut new = parts.map(|part| self.expression(part));
        if new.iter().all(Option::is_none) {
            return None;
        }
        Some(std::array::from_fn(|i| {
            new[i].take().unwrap_or_else(|| parts[i].clone())
        }))
    }

    /// A list of expressions rewritten, or `None` when none changes.
    fn list(&mut self, list: &[Expression]) -> Option<Vec<Expression>> {
        let new: Vec<Option<Expression>> = list.iter().map(|e| self.expression(e)).collect();
        if new.iter().all(Option::is_none) {
            return None;
        }
        Some(
            new.into_iter()
                .zip(list)
                .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                .collect(),
        )
    }

    fn bgp(&mut self, patterns: &[TriplePattern]) -> Option<GraphPattern> {
        let open = |t: &TermPattern| matches!(t, TermPattern::Triple(inner) if is_open(inner));
        if !patterns.iter().any(|p| open(&p.subject) || open(&p.object)) {
            return None;
        }
        let mut pending = Vec::new();
        let patterns: Vec<TriplePattern> = patterns
            .iter()
            .map(|p| TriplePattern {
                subject: self.end(&p.subject, &mut pending),
                predicate: p.predicate.clone(),
                object: self.end(&p.object, &mut pending),
            })
            .collect();
        let mut bound = HashSet::new();
        for p in &patterns {
            for term in [&p.subject, &p.object] {
                if let TermPattern::Variable(v) = term {
                    bound.insert(v.clone());
                }
            }
            if let NamedNodePattern::Variable(v) = &p.predicate {
                bound.insert(v.clone());
            }
        }
        Some(self.unpack_all(GraphPattern::Bgp { patterns }, bound, pending))
    }

    fn path(
        &mut self,
        subject: &TermPattern,
        path: &spargebra::algebra::PropertyPathExpression,
        object: &TermPattern,
    ) -> Option<GraphPattern> {
        let open = |t: &TermPattern| matches!(t, TermPattern::Triple(inner) if is_open(inner));
        if !open(subject) && !open(object) {
            return None;
        }
        let mut pending = Vec::new();
        let (subject, object) = (
            self.end(subject, &mut pending),
            self.end(object, &mut pending),
        );
        let bound = [&subject, &object]
            .into_iter()
            .filter_map(|t| match t {
                TermPattern::Variable(v) => Some(v.clone()),
                _ => None,
            })
            .collect();
        let path = GraphPattern::Path {
            subject,
            path: path.clone(),
            object,
        };
        Some(self.unpack_all(path, bound, pending))
    }

    /// An end of a pattern: an open triple term becomes a fresh variable (unpacked
    /// later), a blank node a variable.
    fn end(&mut self, term: &TermPattern, pending: &mut Vec<Pending>) -> TermPattern {
        match term {
            TermPattern::Triple(triple) if is_open(triple) => {
                let variable = self.fresh();
                pending.push((variable.clone(), (**triple).clone()));
                TermPattern::Variable(variable)
            }
            TermPattern::BlankNode(node) => TermPattern::Variable(blank_variable(node.as_str())),
            other => other.clone(),
        }
    }

    /// `inner` with the triple terms `pending` stands for unpacked, `bound` holding the
    /// variables bound so far.
    fn unpack_all(
        &mut self,
        mut inner: GraphPattern,
        mut bound: HashSet<Variable>,
        mut pending: Vec<Pending>,
    ) -> GraphPattern {
        let mut at = 0;
        while at < pending.len() {
            let (whole, triple) = pending[at].clone();
            at += 1;
            let whole_expression = Expression::Variable(whole.clone());
            inner = GraphPattern::Filter {
                expr: Expression::FunctionCall(Function::IsTriple, vec![whole_expression.clone()]),
                inner: Box::new(inner),
            };
            let predicate = match &triple.predicate {
                NamedNodePattern::NamedNode(n) => TermPattern::NamedNode(n.clone()),
                NamedNodePattern::Variable(v) => TermPattern::Variable(v.clone()),
            };
            let mut conditions = Vec::new();
            for (function, part) in [
                (Function::Subject, &triple.subject),
                (Function::Predicate, &predicate),
                (Function::Object, &triple.object),
            ] {
                let value = Expression::FunctionCall(function, vec![whole_expression.clone()]);
                let variable = match part {
                    TermPattern::Variable(v) => v.clone(),
                    TermPattern::BlankNode(b) => blank_variable(b.as_str()),
                    TermPattern::Triple(nested) if is_open(nested) => {
                        let variable = self.fresh();
                        pending.push((variable.clone(), (**nested).clone()));
                        variable
                    }
                    constant => {
                        conditions.push(same_term(value, constant_expression(constant)));
                        continue;
                    }
                };
                if bound.contains(&variable) {
                    conditions.push(same_term(value, Expression::Variable(variable)));
                } else {
                    bound.insert(variable.clone());
                    inner = GraphPattern::Extend {
                        inner: Box::new(inner),
                        variable,
                        expression: value,
                    };
                }
            }
            if let Some(condition) = conditions
                .into_iter()
                .reduce(|a, b| Expression::And(Box::new(a), Box::new(b)))
            {
                inner = GraphPattern::Filter {
                    expr: condition,
                    inner: Box::new(inner),
                };
            }
        }
        inner
    }
}

/// `new`, boxed, or a copy of `old` when it did not change.
fn or_boxed(new: Option<GraphPattern>, old: &GraphPattern) -> Box<GraphPattern> {
    Box::new(new.unwrap_or_else(|| old.clone()))
}

/// The variable a blank node of a rewritten pattern becomes.
fn blank_variable(label: &str) -> Variable {
    Variable::new_unchecked(format!("·blank·{label}"))
}

fn same_term(a: Expression, b: Expression) -> Expression {
    Expression::SameTerm(Box::new(a), Box::new(b))
}

/// The expression of a part with neither variables nor blank nodes.
fn constant_expression(term: &TermPattern) -> Expression {
    match term {
        TermPattern::NamedNode(n) => Expression::NamedNode(n.clone()),
        TermPattern::Literal(l) => Expression::Literal(l.clone()),
        TermPattern::Triple(triple) => {
            let predicate = match &triple.predicate {
                NamedNodePattern::NamedNode(n) => Expression::NamedNode(n.clone()),
                NamedNodePattern::Variable(v) => Expression::Variable(v.clone()),
            };
            Expression::FunctionCall(
                Function::Triple,
                vec![
                    constant_expression(&triple.subject),
                    predicate,
                    constant_expression(&triple.object),
                ],
            )
        }
        TermPattern::Variable(v) => Expression::Variable(v.clone()),
        TermPattern::BlankNode(b) => Expression::Variable(blank_variable(b.as_str())),
    }
}
