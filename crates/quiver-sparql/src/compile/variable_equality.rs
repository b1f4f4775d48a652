//! `FILTER(?a = ?b)` or `FILTER(sameTerm(?a, ?b))` over a basic graph pattern in which the
//! two variables lie in parts that share no variable: as written, a cross product of the
//! parts, filtered (BSBM's BI Q2 joins a product's features with every product's features
//! that way: 10 × 20,000 rows built to keep 100). The filter is a join condition, and is
//! compiled as one:
//!
//! - where `?a` is an IRI or a blank node, `?a = ?b` holds exactly when `?b` is the same
//!   term (RDFterm-equal; an IRI never equals a literal), so the pattern is explored with
//!   `?b` replaced by `?a`, the parts now connected, and `?b` bound to `?a` after:
//!   `Extend(?b := ?a, Filter(!isLiteral(?a), P[?b → ?a]))`;
//! - where `?a` is a literal, `=` compares values ("1"^^xsd:integer = "1.0"^^xsd:decimal),
//!   so those rows keep the filtered product, but only of the rows whose `?a` and `?b` are
//!   literals: `Filter(?a = ?b, Join(Filter(isLiteral(?a), Pa), Filter(isLiteral(?b),
//!   Pb)))`, where `Pa` is the part binding `?a` and `Pb` the rest; when no `?a` is a
//!   literal that side is empty and the join stops before the other;
//! - the union of the two gives each solution of the original exactly once. With
//!   `sameTerm` the first branch alone is exact, on any term.
//!
//! The filter's other conjuncts apply above both. Only a plain basic graph pattern is
//! rewritten (no RDF-star triple terms), so no variable is renamed inside a nested scope.

use std::collections::HashMap;

use oxrdf::Variable;
use spargebra::algebra::{Expression, Function, GraphPattern};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

use super::join_order::{conjunction, split_conjuncts};

/// The rewritten pattern when `FILTER(expr)` over `inner` is the case above.
pub(super) fn rewrite(expr: &Expression, inner: &GraphPattern) -> Option<GraphPattern> {
    let GraphPattern::Bgp { patterns } = inner else {
        return None;
    };
    if patterns.iter().any(has_triple_term) {
        return None;
    }
    let parts = Parts::new(patterns);
    let conjuncts = split_conjuncts(expr);
    let (index, a, b, same_term) = conjuncts.iter().enumerate().find_map(|(i, c)| {
        let (a, b, same_term) = variables_compared(&c.expression)?;
        let (part_a, part_b) = (parts.of(a)?, parts.of(b)?);
        (part_a != part_b).then(|| (i, a.clone(), b.clone(), same_term))
    })?;
    let rest = conjunction(
        conjuncts
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != index)
            .map(|(_, c)| c.expression.clone())
            .collect(),
    );
    let is_literal = |v: &Variable| {
        Expression::FunctionCall(Function::IsLiteral, vec![Expression::Variable(v.clone())])
    };

    let substituted = GraphPattern::Bgp {
        patterns: patterns.iter().map(|p| substitute(p, &b, &a)).collect(),
    };
    let connected = if same_term {
        substituted
    } else {
        GraphPattern::Filter {
            expr: Expression::Not(Box::new(is_literal(&a))),
            inner: Box::new(substituted),
        }
    };
    let mut rewritten = GraphPattern::Extend {
        inner: Box::new(connected),
        variable: b.clone(),
        expression: Expression::Variable(a.clone()),
    };
    if !same_term {
        let part_a = parts.of(&a).expect("found above");
        let (mut with_a, mut others) = (Vec::new(), Vec::new());
        for (i, pattern) in patterns.iter().enumerate() {
            if parts.part_of_pattern(i) == part_a {
                with_a.push(pattern.clone());
            } else {
                others.push(pattern.clone());
            }
        }
        let literals = GraphPattern::Filter {
            expr: conjuncts[index].expression.clone(),
            inner: Box::new(GraphPattern::Join {
                left: Box::new(GraphPattern::Filter {
                    expr: is_literal(&a),
                    inner: Box::new(GraphPattern::Bgp { patterns: with_a }),
                }),
                right: Box::new(GraphPattern::Filter {
                    expr: is_literal(&b),
                    inner: Box::new(GraphPattern::Bgp { patterns: others }),
                }),
            }),
        };
        rewritten = GraphPattern::Union {
            left: Box::new(rewritten),
            right: Box::new(literals),
        };
    }
    Some(match rest {
        Some(rest) => GraphPattern::Filter {
            expr: rest,
            inner: Box::new(rewritten),
        },
        None => rewritten,
    })
}

/// `?a = ?b` or `sameTerm(?a, ?b)` of two distinct variables, and whether it is sameTerm.
fn variables_compared(expression: &Expression) -> Option<(&Variable, &Variable, bool)> {
    let (a, b, same_term) = match expression {
        Expression::Equal(a, b) => (a, b, false),
        Expression::SameTerm(a, b) => (a, b, true),
        _ => return None,
    };
    match (&**a, &**b) {
        (Expression::Variable(a), Expression::Variable(b)) if a != b => Some((a, b, same_term)),
        _ => None,
    }
}

fn has_triple_term(pattern: &TriplePattern) -> bool {
    #[allow(unreachable_patterns)] // `Triple` exists only with spargebra's RDF-star feature.
    let nested = |t: &TermPattern| {
        !matches!(
            t,
            TermPattern::Variable(_)
                | TermPattern::NamedNode(_)
                | TermPattern::BlankNode(_)
                | TermPattern::Literal(_)
        )
    };
    nested(&pattern.subject) || nested(&pattern.object)
}

/// `pattern` with variable `from` replaced by `to`.
fn substitute(pattern: &TriplePattern, from: &Variable, to: &Variable) -> TriplePattern {
    let term = |t: &TermPattern| match t {
        TermPattern::Variable(v) if v == from => TermPattern::Variable(to.clone()),
        other => other.clone(),
    };
    TriplePattern {
        subject: term(&pattern.subject),
        predicate: match &pattern.predicate {
            NamedNodePattern::Variable(v) if v == from => NamedNodePattern::Variable(to.clone()),
            other => other.clone(),
        },
        object: term(&pattern.object),
    }
}

/// The connected parts of a basic graph pattern: patterns joined by a shared variable or
/// blank node (a blank node of a pattern is a variable scoped to it).
struct Parts {
    /// The part of each pattern.
    of_pattern: Vec<usize>,
    /// The part of each variable.
    of_variable: HashMap<Variable, usize>,
}

impl Parts {
    fn new(patterns: &[TriplePattern]) -> Self {
        let mut parent: Vec<usize> = (0..patterns.len()).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        let mut first_seen: HashMap<String, usize> = HashMap::new();
        for (i, pattern) in patterns.iter().enumerate() {
            for key in keys(pattern) {
                match first_seen.get(&key) {
                    Some(&j) => {
                        let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                        parent[a] = b;
                    }
                    None => {
                        first_seen.insert(key, i);
                    }
                }
            }
        }
        let of_pattern: Vec<usize> = (0..patterns.len()).map(|i| root(&mut parent, i)).collect();
        let mut of_variable = HashMap::new();
        for (i, pattern) in patterns.iter().enumerate() {
            for_each_variable(pattern, |v| {
                of_variable.insert(v.clone(), of_pattern[i]);
            });
        }
        Self {
            of_pattern,
            of_variable,
        }
    }

    fn of(&self, variable: &Variable) -> Option<usize> {
        self.of_variable.get(variable).copied()
    }

    fn part_of_pattern(&self, pattern: usize) -> usize {
        self.of_pattern[pattern]
    }
}

/// The join keys of a pattern: its variables (`?name`) and blank nodes (`_:name`).
fn keys(pattern: &TriplePattern) -> Vec<String> {
    let mut keys = Vec::new();
    for_each_variable(pattern, |v| keys.push(format!("?{}", v.as_str())));
    for term in [&pattern.subject, &pattern.object] {
        if let TermPattern::BlankNode(b) = term {
            keys.push(format!("_:{}", b.as_str()));
        }
    }
    keys
}

fn for_each_variable(pattern: &TriplePattern, mut f: impl FnMut(&Variable)) {
    if let TermPattern::Variable(v) = &pattern.subject {
        f(v);
    }
    if let NamedNodePattern::Variable(v) = &pattern.predicate {
        f(v);
    }
    if let TermPattern::Variable(v) = &pattern.object {
        f(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::{Query, SparqlParser};

    fn filter_of(query: &str) -> (Expression, GraphPattern) {
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(query).unwrap() else {
            panic!()
        };
        let mut pattern = pattern;
        loop {
            match pattern {
                GraphPattern::Project { inner, .. } => pattern = *inner,
                GraphPattern::Filter { expr, inner } => return (expr, *inner),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn rewrites_equalities_across_unconnected_parts_only() {
        let (expr, inner) =
            filter_of("SELECT * { <http://e/x> <http://e/p> ?a . ?s <http://e/p> ?b . FILTER(?a = ?b && ?s != <http://e/y>) }");
        let rewritten = format!("{:?}", rewrite(&expr, &inner).unwrap());
        assert!(rewritten.contains("Union"), "{rewritten}");
        assert!(rewritten.contains("IsLiteral"), "{rewritten}");
        // Same part: already a join, left alone; sameTerm: no literal branch.
        let (expr, inner) = filter_of("SELECT * { ?a <http://e/p> ?b . FILTER(?a = ?b) }");
        assert!(rewrite(&expr, &inner).is_none());
        let (expr, inner) =
            filter_of("SELECT * { <http://e/x> <http://e/p> ?a . ?s <http://e/p> ?b . FILTER(sameTerm(?a, ?b)) }");
        let rewritten = format!("{:?}", rewrite(&expr, &inner).unwrap());
        assert!(!rewritten.contains("Union"), "{rewritten}");
        // Connected through a blank node: one part.
        let (expr, inner) =
            filter_of("SELECT * { _:n <http://e/p> ?a . _:n <http://e/q> ?b . FILTER(?a = ?b) }");
        assert!(rewrite(&expr, &inner).is_none());
        // A variable outside the pattern: not certainly bound, left alone.
        let (expr, inner) =
            filter_of("SELECT * { <http://e/x> <http://e/p> ?a . FILTER(?a = ?z) }");
        assert!(rewrite(&expr, &inner).is_none());
    }
}
