//! Property path patterns (SPARQL 1.1 §9.3 and §18.4) as compiled: predicates resolved
//! to predicate ids, ends resolved to variables or terms.
//!
//! Zero-length matches follow the spec's case split; [`Path::zero_length_count`] says how
//! often a vertex with no edges matches itself (`exec/path/` walks the rest).

use quiver_model::PredId;
use quiver_store::Store;
use spargebra::algebra::PropertyPathExpression;

use crate::bgp::add_vars;
use crate::dataset::GraphRef;
use crate::table::VarId;

/// A property path with its predicates resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Path {
    /// One edge; `None` for a predicate the store does not have (never matches).
    Link(Option<PredId>),
    Reverse(Box<Path>),
    Sequence(Box<Path>, Box<Path>),
    Alternative(Box<Path>, Box<Path>),
    ZeroOrMore(Box<Path>),
    OneOrMore(Box<Path>),
    ZeroOrOne(Box<Path>),
    /// Any predicate but these (forward members only: spargebra splits off the inverse
    /// ones as `Reverse(NegatedPropertySet)`). Predicates the store lacks are left out.
    Negated(Vec<PredId>),
}

/// One end of a path pattern as compiled: a variable (blank nodes of the pattern are
/// hidden variables) or a term, given an id when the query runs since a term the store
/// lacks still matches itself over a zero-length path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathTerm {
    Var(VarId),
    Term(oxrdf::Term),
}

impl PathTerm {
    pub fn var(&self) -> Option<VarId> {
        match self {
            PathTerm::Var(v) => Some(*v),
            PathTerm::Term(_) => None,
        }
    }
}

/// A compiled property path pattern: `subject path object` on one graph.
#[derive(Debug, Clone)]
pub struct PathPattern {
    pub subject: PathTerm,
    pub path: Path,
    pub object: PathTerm,
    pub graph: GraphRef,
    /// The pattern as written, for EXPLAIN.
    pub text: String,
}

impl PathPattern {
    /// The variables of the ends (bound in every solution).
    pub fn vars(&self) -> Vec<VarId> {
        let mut vars: Vec<VarId> = self.subject.var().into_iter().collect();
        add_vars(&mut vars, self.object.var());
        vars
    }
}

impl Path {
    pub fn compile(expression: &PropertyPathExpression, store: &Store) -> Path {
        let boxed = |e: &PropertyPathExpression| Box::new(Path::compile(e, store));
        match expression {
            PropertyPathExpression::NamedNode(p) => Path::Link(store.predicate_id(p.as_str())),
            PropertyPathExpression::Reverse(p) => Path::Reverse(boxed(p)),
            PropertyPathExpression::Sequence(a, b) => Path::Sequence(boxed(a), boxed(b)),
            PropertyPathExpression::Alternative(a, b) => Path::Alternative(boxed(a), boxed(b)),
            PropertyPathExpression::ZeroOrMore(p) => Path::ZeroOrMore(boxed(p)),
            PropertyPathExpression::OneOrMore(p) => Path::OneOrMore(boxed(p)),
            PropertyPathExpression::ZeroOrOne(p) => Path::ZeroOrOne(boxed(p)),
            PropertyPathExpression::NegatedPropertySet(set) => {
                let mut ids: Vec<PredId> = set
                    .iter()
                    .filter_map(|p| store.predicate_id(p.as_str()))
                    .collect();
                ids.sort_unstable();
                ids.dedup();
                Path::Negated(ids)
            }
        }
    }

    /// Whether the path can match a zero-length path.
    pub(crate) fn nullable(&self) -> bool {
        match self {
            Path::Link(_) | Path::Negated(_) => false,
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) => true,
            Path::Reverse(p) | Path::OneOrMore(p) => p.nullable(),
            Path::Sequence(a, b) => a.nullable() && b.nullable(),
            Path::Alternative(a, b) => a.nullable() || b.nullable(),
        }
    }

    /// How many times the spec's algebra matches `(t, t)` for a term `t` that is no vertex
    /// of the active graph, given which ends are that constant (the others are variables).
    /// Between two variables zero-length paths only pair graph vertices, so this is 0 when
    /// neither end is constant; a sequence's middle is a fresh variable.
    pub fn zero_length_count(&self, subject_const: bool, object_const: bool) -> usize {
        match self {
            Path::Link(_) | Path::Negated(_) => 0,
            Path::Reverse(p) => p.zero_length_count(object_const, subject_const),
            Path::Sequence(a, b) => {
                a.zero_length_count(subject_const, false) * b.zero_length_count(false, object_const)
            }
            Path::Alternative(a, b) => {
                a.zero_length_count(subject_const, object_const)
                    + b.zero_length_count(subject_const, object_const)
            }
            Path::ZeroOrMore(_) | Path::ZeroOrOne(_) => usize::from(subject_const || object_const),
            // ALP from the constant end: the term is in the result if one step of the inner
            // path (towards a variable) reaches it.
            Path::OneOrMore(p) => usize::from(if subject_const {
                p.zero_length_count(true, false) > 0
            } else {
                object_const && p.zero_length_count(false, true) > 0
            }),
        }
    }
}
