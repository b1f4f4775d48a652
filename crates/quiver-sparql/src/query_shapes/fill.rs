//! A shape's parse with IRIs put in its slots: every IRI of the algebra visited, the
//! slots' replaced.

use std::cell::Cell;

use oxrdf::{NamedNode, NamedNodeRef};
use spargebra::algebra::{
    AggregateExpression, AggregateFunction, Expression, Function, GraphPattern, OrderExpression,
    PropertyPathExpression, QueryDataset,
};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};
use spargebra::Query;

use quiver_model::plain_iri::is_plain_iri;

use super::SLOT;
use crate::operands::for_each_operand_mut;

/// `parsed` with `iris[K]` in slot `K`; `None` if one of `iris` is no IRI the parser takes.
pub(super) fn fill(parsed: &Query, iris: &[&str]) -> Option<Query> {
    // Checked as the parser checks an IRI (or by the quick check of a plain form that the
    // parser takes), without a copy: each slot's IRI is copied once, into its place.
    let iris = iris
        .iter()
        .map(|iri| match is_plain_iri(iri.as_bytes()) {
            true => Some(NamedNodeRef::new_unchecked(iri)),
            false => NamedNodeRef::new(iri).ok(),
        })
        .collect::<Option<Vec<_>>>()?;
    let mut query = parsed.clone();
    let filler = Filler {
        iris: &iris,
        unknown: Cell::new(false),
    };
    match &mut query {
        Query::Select {
            dataset, pattern, ..
        }
        | Query::Describe {
            dataset, pattern, ..
        }
        | Query::Ask {
            dataset, pattern, ..
        } => {
            filler.dataset(dataset);
            filler.pattern(pattern);
        }
        Query::Construct {
            template,
            dataset,
            pattern,
            ..
        } => {
            template.iter_mut().for_each(|t| filler.triple(t));
            filler.dataset(dataset);
            filler.pattern(pattern);
        }
    }
    (!filler.unknown.get()).then_some(query)
}

struct Filler<'a> {
    iris: &'a [NamedNodeRef<'a>],
    /// Whether a pattern of a kind this does not know was met (one of the parser's
    /// optional extensions): its IRIs would stay slots, so the shape is not used.
    unknown: Cell<bool>,
}

impl Filler<'_> {
    fn iri(&self, node: &mut NamedNode) {
        let slot = node
            .as_str()
            .strip_prefix(SLOT)
            .and_then(|k| k.parse::<usize>().ok());
        if let Some(iri) = slot.and_then(|k| self.iris.get(k)) {
            *node = iri.into_owned();
        }
    }

    fn dataset(&self, dataset: &mut Option<QueryDataset>) {
        if let Some(dataset) = dataset {
            dataset.default.iter_mut().for_each(|g| self.iri(g));
            dataset.named.iter_mut().flatten().for_each(|g| self.iri(g));
        }
    }

    fn named(&self, node: &mut NamedNodePattern) {
        if let NamedNodePattern::NamedNode(node) = node {
            self.iri(node);
        }
    }

    fn term(&self, term: &mut TermPattern) {
        match term {
            TermPattern::NamedNode(node) => self.iri(node),
            TermPattern::Triple(triple) => self.triple(triple),
            TermPattern::BlankNode(_) | TermPattern::Literal(_) | TermPattern::Variable(_) => {}
        }
    }

    fn triple(&self, triple: &mut TriplePattern) {
        self.term(&mut triple.subject);
        self.named(&mut triple.predicate);
        self.term(&mut triple.object);
    }

    fn ground(&self, term: &mut GroundTerm) {
        match term {
            GroundTerm::NamedNode(node) => self.iri(node),
            GroundTerm::Literal(_) => {}
            GroundTerm::Triple(triple) => {
                self.iri(&mut triple.subject);
                self.iri(&mut triple.predicate);
                self.ground(&mut triple.object);
            }
        }
    }

    fn path(&self, path: &mut PropertyPathExpression) {
        use PropertyPathExpression as P;
        match path {
            P::NamedNode(node) => self.iri(node),
            P::Reverse(p) | P::ZeroOrMore(p) | P::OneOrMore(p) | P::ZeroOrOne(p) => self.path(p),
            P::Sequence(a, b) | P::Alternative(a, b) => {
                self.path(a);
                self.path(b);
            }
            P::NegatedPropertySet(nodes) => nodes.iter_mut().for_each(|n| self.iri(n)),
        }
    }

    fn expression(&self, expression: &mut Expression) {
        match expression {
            Expression::NamedNode(node) => self.iri(node),
            Expression::FunctionCall(Function::Custom(node), _) => self.iri(node),
            Expression::Exists(pattern) => self.pattern(pattern),
            _ => {}
        }
        for_each_operand_mut(expression, &mut |operand| self.expression(operand));
    }

    fn pattern(&self, pattern: &mut GraphPattern) {
        use GraphPattern as G;
        match pattern {
            G::Bgp { patterns } => patterns.iter_mut().for_each(|t| self.triple(t)),
            G::Path {
                subject,
                path,
                object,
            } => {
                self.term(subject);
                self.path(path);
                self.term(object);
            }
            G::Join { left, right } | G::Union { left, right } | G::Minus { left, right } => {
                self.pattern(left);
                self.pattern(right);
            }
            G::LeftJoin {
                left,
                right,
                expression,
            } => {
                self.pattern(left);
                self.pattern(right);
                if let Some(expression) = expression {
                    self.expression(expression);
                }
            }
            G::Filter { expr, inner } => {
                self.expression(expr);
                self.pattern(inner);
            }
            G::Graph { name, inner } | G::Service { name, inner, .. } => {
                self.named(name);
                self.pattern(inner);
            }
            G::Extend {
                inner, expression, ..
            } => {
                self.pattern(inner);
                self.expression(expression);
            }
            G::Values { bindings, .. } => bindings
                .iter_mut()
                .flatten()
                .flatten()
                .for_each(|term| self.ground(term)),
            G::OrderBy { inner, expression } => {
                self.pattern(inner);
                for order in expression {
                    let (OrderExpression::Asc(e) | OrderExpression::Desc(e)) = order;
                    self.expression(e);
                }
            }
            G::Project { inner, .. }
            | G::Distinct { inner }
            | G::Reduced { inner }
            | G::Slice { inner, .. } => self.pattern(inner),
            G::Group {
                inner, aggregates, ..
            } => {
                self.pattern(inner);
                for (_, aggregate) in aggregates {
                    if let AggregateExpression::FunctionCall { name, expr, .. } = aggregate {
                        if let AggregateFunction::Custom(node) = name {
                            self.iri(node);
                        }
                        self.expression(expr);
                    }
                }
            }
            #[allow(unreachable_patterns)]
            _ => self.unknown.set(true),
        }
    }
}
