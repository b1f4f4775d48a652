//! A shape's parse with IRIs put in its slots: every IRI of the algebra visited, the
//! slots' replaced.
//!
//! The first query of a shape on a thread is a copy of the shape's parse, filled; the walk
//! records which of the IRIs it visits are slots ([`Slots`]). The next ones of that shape
//! refill that same query in place ([`refill`]): the walk visits the same IRIs in the same
//! order (the two algebras differ only in their IRIs' text), and each slot's IRI is written
//! into the string the last query's IRI held. A light query's copy of its algebra was
//! about a fifth of its allocations.

use std::cell::{Cell, RefCell};

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

/// For each IRI a fill's walk visits, in order, the slot it is (`None`: an IRI of the
/// shape's own).
pub(super) type Slots = Vec<Option<u32>>;

/// `iris` as IRIs, each checked as the parser checks one (or by the quick check of a plain
/// form that the parser takes), without a copy; `None` if one is no IRI the parser takes.
fn checked<'a>(iris: &[&'a str]) -> Option<smallvec::SmallVec<[NamedNodeRef<'a>; 8]>> {
    iris.iter()
        .map(|iri| match is_plain_iri(iri.as_bytes()) {
            true => Some(NamedNodeRef::new_unchecked(iri)),
            false => NamedNodeRef::new(iri).ok(),
        })
        .collect()
}

/// `parsed` with `iris[K]` in slot `K`, and the slots its walk met; `None` if one of
/// `iris` is no IRI the parser takes.
pub(super) fn fill(parsed: &Query, iris: &[&str]) -> Option<(Query, Slots)> {
    let iris = checked(iris)?;
    let mut query = parsed.clone();
    let filler = Filler {
        iris: &iris,
        unknown: Cell::new(false),
        mode: Mode::Marked(RefCell::default()),
    };
    filler.query(&mut query);
    let Mode::Marked(slots) = filler.mode else {
        unreachable!("a fill walks in the marked mode")
    };
    (!filler.unknown.get()).then(|| (query, slots.into_inner()))
}

/// What [`refill`] made of a query.
pub(super) enum Refill {
    /// It holds `iris` now.
    Filled,
    /// One of `iris` is no IRI the parser takes (the query is left as it was).
    Invalid,
    /// Its walk did not meet `slots` (it is not the fill of their shape): not to be used.
    Mismatch,
}

/// `query`, a fill of a shape whose walk met `slots`, with `iris[K]` in slot `K` instead of
/// the IRIs it held, each written into the string its predecessor held.
pub(super) fn refill(query: &mut Query, slots: &[Option<u32>], iris: &[&str]) -> Refill {
    let Some(iris) = checked(iris) else {
        return Refill::Invalid;
    };
    let filler = Filler {
        iris: &iris,
        unknown: Cell::new(false),
        mode: Mode::Recorded {
            slots,
            at: Cell::new(0),
        },
    };
    filler.query(query);
    let Mode::Recorded { at, .. } = &filler.mode else {
        unreachable!("a refill walks in the recorded mode")
    };
    match !filler.unknown.get() && at.get() == slots.len() {
        true => Refill::Filled,
        false => Refill::Mismatch,
    }
}

/// How a walk knows the slots among the IRIs it visits.
enum Mode<'s> {
    /// By their text (`SLOT` and a number), each visit's slot recorded.
    Marked(RefCell<Slots>),
    /// By the slots a walk of the same shape recorded, the visits counted.
    Recorded {
        slots: &'s [Option<u32>],
        at: Cell<usize>,
    },
}

struct Filler<'a> {
    iris: &'a [NamedNodeRef<'a>],
    /// Whether a pattern of a kind this does not know was met (one of the parser's
    /// optional extensions): its IRIs would stay slots, so the shape is not used.
    unknown: Cell<bool>,
    mode: Mode<'a>,
}

impl Filler<'_> {
    fn query(&self, query: &mut Query) {
        match query {
            Query::Select {
                dataset, pattern, ..
            }
            | Query::Describe {
                dataset, pattern, ..
            }
            | Query::Ask {
                dataset, pattern, ..
            } => {
                self.dataset(dataset);
                self.pattern(pattern);
            }
            Query::Construct {
                template,
                dataset,
                pattern,
                ..
            } => {
                template.iter_mut().for_each(|t| self.triple(t));
                self.dataset(dataset);
                self.pattern(pattern);
            }
        }
    }

    fn iri(&self, node: &mut NamedNode) {
        let slot = match &self.mode {
            Mode::Marked(slots) => {
                let slot = node
                    .as_str()
                    .strip_prefix(SLOT)
                    .and_then(|k| k.parse::<u32>().ok());
                slots.borrow_mut().push(slot);
                slot
            }
            Mode::Recorded { slots, at } => {
                let visit = at.get();
                at.set(visit + 1);
                match slots.get(visit) {
                    Some(slot) => *slot,
                    None => {
                        self.unknown.set(true);
                        None
                    }
                }
            }
        };
        if let Some(iri) = slot.and_then(|k| self.iris.get(k as usize)) {
            // The string the slot (or the last query's IRI) held takes the IRI.
            let empty = NamedNode::new_unchecked(String::new());
            let mut text = std::mem::replace(node, empty).into_string();
            text.clear();
            text.push_str(iri.as_str());
            *node = NamedNode::new_unchecked(text);
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
