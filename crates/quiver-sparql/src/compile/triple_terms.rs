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
    let mut unpacker = Unpacker::default();
    let rewritten = unpacker.pattern(pattern);
    unpacker.changed.then_some(rewritten)
}

#[derive(Default)]
struct Unpacker {
    next: usize,
    changed: bool,
}

/// A fresh variable and the triple term pattern its term must match.
type Pending = (Variable, TriplePattern);

impl Unpacker {
    fn fresh(&mut self) -> Variable {
        self.next += 1;
        // `·` may not start a SPARQL variable name: no query can name these.
        Variable::new_unchecked(format!("·triple{}", self.next))
    }

    fn pattern(&mut self, pattern: &GraphPattern) -> GraphPattern {
        let mut inner = |p: &GraphPattern| Box::new(self.pattern(p));
        match pattern {
            GraphPattern::Bgp { patterns } => self.bgp(patterns),
            GraphPattern::Path {
                subject,
                path,
                object,
            } => self.path(subject, path, object),
            GraphPattern::Join { left, right } => GraphPattern::Join {
                left: inner(left),
                right: inner(right),
            },
            GraphPattern::Union { left, right } => GraphPattern::Union {
                left: inner(left),
                right: inner(right),
            },
            GraphPattern::Minus { left, right } => GraphPattern::Minus {
                left: inner(left),
                right: inner(right),
            },
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => GraphPattern::LeftJoin {
                left: inner(left),
                right: inner(right),
                expression: expression.as_ref().map(|e| self.expression(e)),
            },
            GraphPattern::Filter { expr, inner: i } => GraphPattern::Filter {
                inner: inner(i),
                expr: self.expression(expr),
            },
            GraphPattern::Graph { name, inner: i } => GraphPattern::Graph {
                name: name.clone(),
                inner: inner(i),
            },
            GraphPattern::Extend {
                inner: i,
                variable,
                expression,
            } => GraphPattern::Extend {
                inner: inner(i),
                variable: variable.clone(),
                expression: self.expression(expression),
            },
            GraphPattern::OrderBy {
                inner: i,
                expression,
            } => GraphPattern::OrderBy {
                inner: inner(i),
                expression: expression
                    .iter()
                    .map(|order| match order {
                        OrderExpression::Asc(e) => OrderExpression::Asc(self.expression(e)),
                        OrderExpression::Desc(e) => OrderExpression::Desc(self.expression(e)),
                    })
                    .collect(),
            },
            GraphPattern::Project {
                inner: i,
                variables,
            } => GraphPattern::Project {
                inner: inner(i),
                variables: variables.clone(),
            },
            GraphPattern::Distinct { inner: i } => GraphPattern::Distinct { inner: inner(i) },
            GraphPattern::Reduced { inner: i } => GraphPattern::Reduced { inner: inner(i) },
            GraphPattern::Slice {
                inner: i,
                start,
                length,
            } => GraphPattern::Slice {
                inner: inner(i),
                start: *start,
                length: *length,
            },
            GraphPattern::Group {
                inner: i,
                variables,
                aggregates,
            } => GraphPattern::Group {
                inner: inner(i),
                variables: variables.clone(),
                aggregates: aggregates
                    .iter()
                    .map(|(variable, aggregate)| {
                        let aggregate = match aggregate {
                            AggregateExpression::FunctionCall {
                                name,
                                expr,
                                distinct,
                            } => AggregateExpression::FunctionCall {
                                name: name.clone(),
                                expr: self.expression(expr),
                                distinct: *distinct,
                            },
                            count => count.clone(),
                        };
                        (variable.clone(), aggregate)
                    })
                    .collect(),
            },
            // VALUES holds terms only; a SERVICE pattern goes out as written.
            #[allow(unreachable_patterns)] // LATERAL, with spargebra's SEP-0006 feature
            other => other.clone(),
        }
    }

    /// An expression with the patterns of its EXISTS unpacked.
    fn expression(&mut self, expression: &Expression) -> Expression {
        let mut boxed = |e: &Expression| Box::new(self.expression(e));
        match expression {
            Expression::Exists(pattern) => Expression::Exists(Box::new(self.pattern(pattern))),
            Expression::Or(a, b) => Expression::Or(boxed(a), boxed(b)),
            Expression::And(a, b) => Expression::And(boxed(a), boxed(b)),
            Expression::Equal(a, b) => Expression::Equal(boxed(a), boxed(b)),
            Expression::SameTerm(a, b) => Expression::SameTerm(boxed(a), boxed(b)),
            Expression::Greater(a, b) => Expression::Greater(boxed(a), boxed(b)),
            Expression::GreaterOrEqual(a, b) => Expression::GreaterOrEqual(boxed(a), boxed(b)),
            Expression::Less(a, b) => Expression::Less(boxed(a), boxed(b)),
            Expression::LessOrEqual(a, b) => Expression::LessOrEqual(boxed(a), boxed(b)),
            Expression::Add(a, b) => Expression::Add(boxed(a), boxed(b)),
            Expression::Subtract(a, b) => Expression::Subtract(boxed(a), boxed(b)),
            Expression::Multiply(a, b) => Expression::Multiply(boxed(a), boxed(b)),
            Expression::Divide(a, b) => Expression::Divide(boxed(a), boxed(b)),
            Expression::UnaryPlus(a) => Expression::UnaryPlus(boxed(a)),
            Expression::UnaryMinus(a) => Expression::UnaryMinus(boxed(a)),
            Expression::Not(a) => Expression::Not(boxed(a)),
            Expression::If(a, b, c) => Expression::If(boxed(a), boxed(b), boxed(c)),
            Expression::In(a, list) => {
                Expression::In(boxed(a), list.iter().map(|e| self.expression(e)).collect())
            }
            Expression::Coalesce(list) => {
                Expression::Coalesce(list.iter().map(|e| self.expression(e)).collect())
            }
            Expression::FunctionCall(function, args) => Expression::FunctionCall(
                function.clone(),
                args.iter().map(|e| self.expression(e)).collect(),
            ),
            Expression::NamedNode(_)
            | Expression::Literal(_)
            | Expression::Variable(_)
            | Expression::Bound(_) => expression.clone(),
        }
    }

    fn bgp(&mut self, patterns: &[TriplePattern]) -> GraphPattern {
        let open = |t: &TermPattern| matches!(t, TermPattern::Triple(inner) if is_open(inner));
        if !patterns.iter().any(|p| open(&p.subject) || open(&p.object)) {
            return GraphPattern::Bgp {
                patterns: patterns.to_vec(),
            };
        }
        self.changed = true;
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
        self.unpack_all(GraphPattern::Bgp { patterns }, bound, pending)
    }

    fn path(
        &mut self,
        subject: &TermPattern,
        path: &spargebra::algebra::PropertyPathExpression,
        object: &TermPattern,
    ) -> GraphPattern {
        let open = |t: &TermPattern| matches!(t, TermPattern::Triple(inner) if is_open(inner));
        if !open(subject) && !open(object) {
            return GraphPattern::Path {
                subject: subject.clone(),
                path: path.clone(),
                object: object.clone(),
            };
        }
        self.changed = true;
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
        self.unpack_all(path, bound, pending)
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
