//! The joins of a group in the order that builds the least, whatever order they were
//! written in.
//!
//! SPARQL's join is commutative and associative, so a group `{ A . B . VALUES … }` (a tree
//! of `Join`s in the algebra) is a set of operands that may run in any order. The
//! compiler flattens the tree, merges the basic graph patterns that share a variable into
//! one (the exploration planner orders their triples), and orders the operands greedily
//! by their estimated rows (`operator/estimate.rs`): the smallest first, then always the
//! smallest operand that shares a variable with what is already joined (or has one row),
//! a cross product only when nothing connected is left. So a pattern that cannot match
//! (a constant the store lacks), a VALUES block or a selective pattern runs first wherever
//! it was written, and every basic graph pattern after it explores seeded with its rows;
//! an empty side stops the join before the other is evaluated (`exec/join.rs`).
//!
//! A BIND of a constant is a one-row VALUES too (its variable is new where it is bound), so
//! it seeds the patterns that read its variable.
//!
//! An OPTIONAL in a group takes the group's other operands into its required side when
//! that changes no answer: `{ A OPTIONAL { B } C }` is `{ { A C } OPTIONAL { B } }` when
//! every variable `C` shares with `B` (or with the OPTIONAL's filter) is one `A` always
//! binds. Then `C` cuts `A`'s rows before the OPTIONAL extends them, instead of joining
//! with the OPTIONAL's whole result.
//!
//! A UNION of basic graph patterns after other operands (`{ ?r a ?t } UNION { ?r b ?t }`
//! joined with what binds `?r`) has each branch planned seeded too: the join runs every
//! branch seeded with the left rows, as `L ⋈ (A ∪ B) = (L ⋈ A) ∪ (L ⋈ B)`, instead of
//! evaluating the whole union alone and hashing it.
//!
//! A FILTER of the group that compares a certainly bound variable to an IRI or a simple
//! literal with `=` (or to any term with `sameTerm`) holds exactly for rows binding that
//! term: it becomes a one-row VALUES operand, so it seeds the patterns too. Any other
//! conjunct of the FILTER (without EXISTS, which reads the whole row) whose variables one
//! operand always binds filters that operand's rows instead of the group's: its value is
//! the same on the joined row. A basic graph pattern under such filters still runs seeded
//! by the operands before it. Over an OPTIONAL, these conjuncts move into its required
//! side when it binds their variables.

use oxrdf::Variable;
use spargebra::algebra::{Expression, GraphPattern};
use spargebra::term::{GroundTerm, NamedNodePattern, TermPattern, TriplePattern};

use super::{collect_vars, Compiler};
use crate::dataset::GraphRef;
use crate::error::QueryError;
use crate::operator::estimate::{estimated_rows, may_share};
use crate::operator::{certain_vars, Operator};
use crate::table::VarId;

/// A conjunct of a group's FILTER.
#[derive(Debug, Clone)]
pub(super) struct Conjunct {
    pub expression: Expression,
    /// The variable and term when the conjunct holds for exactly that term.
    equality: Option<(Variable, GroundTerm)>,
}

impl Conjunct {
    fn new(expression: Expression) -> Self {
        Self {
            equality: equality(&expression),
            expression,
        }
    }
}

/// `?v = <iri>`, `?v = "simple literal"` or `sameTerm(?v, term)` (either way round): the
/// variable and the one term it holds for.
fn equality(expression: &Expression) -> Option<(Variable, GroundTerm)> {
    let (a, b, same_term) = match expression {
        Expression::Equal(a, b) => (a, b, false),
        Expression::SameTerm(a, b) => (a, b, true),
        _ => return None,
    };
    let (variable, constant) = match (&**a, &**b) {
        (Expression::Variable(v), c) | (c, Expression::Variable(v)) => (v, c),
        _ => return None,
    };
    let term = match constant {
        Expression::NamedNode(n) => GroundTerm::NamedNode(n.clone()),
        // `=` on literals compares values ("01"^^xsd:int = "1"^^xsd:int): only a simple
        // literal equals exactly itself.
        Expression::Literal(l)
            if same_term
                || (l.language().is_none() && l.datatype() == oxrdf::vocab::xsd::STRING) =>
        {
            GroundTerm::Literal(l.clone())
        }
        _ => return None,
    };
    Some((variable.clone(), term))
}

/// The `&&` conjuncts of `expression`, in the order written.
pub(super) fn split_conjuncts(expression: &Expression) -> Vec<Conjunct> {
    let mut conjuncts = Vec::new();
    let mut pending = vec![expression];
    while let Some(e) = pending.pop() {
        match e {
            Expression::And(a, b) => pending.extend([&**b, &**a]),
            other => conjuncts.push(Conjunct::new(other.clone())),
        }
    }
    conjuncts
}

/// The conjunction of `expressions` (`None` when there are none).
pub(super) fn conjunction(expressions: Vec<Expression>) -> Option<Expression> {
    expressions
        .into_iter()
        .reduce(|a, b| Expression::And(Box::new(a), Box::new(b)))
}

impl Compiler<'_> {
    /// Compiles `pattern` with `conjuncts` (of a FILTER above it) turned into operands or
    /// pushed onto operands where they can; returns the conjuncts it could not use.
    pub(super) fn compile_with(
        &mut self,
        pattern: &GraphPattern,
        graph: GraphRef,
        conjuncts: Vec<Conjunct>,
    ) -> Result<(Operator, Vec<Conjunct>), QueryError> {
        match pattern {
            GraphPattern::Join { .. } | GraphPattern::Bgp { .. } => {
                let mut operands = Vec::new();
                let mut binds = Vec::new();
                flatten(pattern, &mut operands, &mut binds);
                operands.extend(binds.iter());
                if let Some(absorbed) = into_optional(&operands) {
                    return self.compile_with(&absorbed, graph, conjuncts);
                }
                self.join_group(&operands, graph, conjuncts)
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } if !conjuncts.is_empty() => {
                let (left, unused) = self.compile_with(left, graph, conjuncts)?;
                let operator = self.left_join(left, right, expression, graph)?;
                Ok((operator, unused))
            }
            other => Ok((self.compile(other, graph)?, conjuncts)),
        }
    }

    /// A group's operands joined in the order of their estimated sizes.
    fn join_group(
        &mut self,
        operands: &[&GraphPattern],
        graph: GraphRef,
        conjuncts: Vec<Conjunct>,
    ) -> Result<(Operator, Vec<Conjunct>), QueryError> {
        let mut operators = Vec::new();
        for operand in merge_bgps(operands) {
            match operand {
                Operand::Bgp(patterns) if super::text::mentions(&patterns) => {
                    let (searches, rest) = self.text_searches(&patterns, graph)?;
                    operators.extend(searches);
                    if !rest.is_empty() {
                        operators.push(Operator::Bgp(self.bgp(&rest, graph, None)?));
                    }
                }
                Operand::Bgp(patterns) => {
                    operators.push(Operator::Bgp(self.bgp(&patterns, graph, None)?))
                }
                Operand::Other(pattern) => operators.push(self.compile(pattern, graph)?),
            }
        }
        // The text index's candidates of a CONTAINS or REGEX conjunct (`text.rs`).
        let candidates: Vec<Operator> = conjuncts
            .iter()
            .filter_map(|c| self.contains_search(&c.expression, graph, &operators))
            .collect();
        operators.extend(candidates);
        let certain: Vec<Vec<VarId>> = operators.iter().map(certain_vars).collect();
        let mut unused = Vec::new();
        let mut pushed: Vec<(usize, Expression)> = Vec::new();
        for conjunct in conjuncts {
            if let Some((variable, term)) = &conjunct.equality {
                let var = self.vars.var(variable);
                if certain.iter().any(|vars| vars.contains(&var)) {
                    operators.push(Operator::Values {
                        vars: vec![var],
                        rows: vec![vec![Some(term.clone())]],
                    });
                    continue;
                }
            }
            let mut read = Vec::new();
            collect_vars(&conjunct.expression, &mut read);
            let read: Vec<VarId> = read.iter().map(|v| self.vars.var(v)).collect();
            let onto = (certain.len() > 1 && !read.is_empty() && !has_exists(&conjunct.expression))
                .then(|| {
                    certain
                        .iter()
                        .position(|vars| read.iter().all(|v| vars.contains(v)))
                })
                .flatten();
            match onto {
                Some(k) => pushed.push((k, conjunct.expression)),
                None => unused.push(conjunct),
            }
        }
        for (k, expression) in pushed {
            let operator = std::mem::replace(
                &mut operators[k],
                Operator::Values {
                    vars: Vec::new(),
                    rows: Vec::new(),
                },
            );
            operators[k] = Operator::Filter(expression, Box::new(operator));
        }
        let mut order = greedy_order(&operators).into_iter();
        let mut operators: Vec<Option<Operator>> = operators.into_iter().map(Some).collect();
        let first = order.next().expect("a group has an operand");
        let mut joined = operators[first].take().expect("each operand once");
        for next in order {
            let mut operator = operators[next].take().expect("each operand once");
            // Under the filters pushed onto it, a basic graph pattern still runs seeded.
            let mut under = &mut operator;
            while let Operator::Filter(_, inner) = under {
                under = inner;
            }
            self.seed_branches(under, &certain_vars(&joined));
            joined = Operator::Join(Box::new(joined), Box::new(operator));
        }
        Ok((joined, unused))
    }
}

impl Compiler<'_> {
    /// Plans `operator` to run seeded with `certain`'s values: a basic graph pattern, or
    /// each branch of a UNION of them (the executor seeds every branch with the left rows
    /// when it can, `exec/join.rs`).
    fn seed_branches(&self, operator: &mut Operator, certain: &[VarId]) {
        match operator {
            Operator::Bgp(planned) => self.seed(planned, certain.to_vec()),
            Operator::Union(a, b) => {
                self.seed_branches(a, certain);
                self.seed_branches(b, certain);
            }
            _ => {}
        }
    }
}

/// The order to join `operators` in: the smallest estimate first, then the smallest that
/// shares a variable with those before it or has at most one row (a cross product with one
/// row multiplies nothing), the smallest of all when there is none. A `SERVICE ?var` waits
/// for an operand that may bind its endpoint while there is one.
fn greedy_order(operators: &[Operator]) -> Vec<usize> {
    let estimates: Vec<f64> = operators.iter().map(estimated_rows).collect();
    let mut left: Vec<usize> = (0..operators.len()).collect();
    let mut order: Vec<usize> = Vec::with_capacity(operators.len());
    let smallest = |candidates: &mut dyn Iterator<Item = usize>| {
        candidates.min_by(|&a, &b| estimates[a].total_cmp(&estimates[b]).then(a.cmp(&b)))
    };
    while !left.is_empty() {
        let ready: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&c| endpoint_bound(&operators[c], order.iter().map(|&o| &operators[o])))
            .collect();
        let candidates = if ready.is_empty() { &left } else { &ready };
        let connected = smallest(&mut candidates.iter().copied().filter(|&c| {
            estimates[c] <= 1.0
                || order
                    .iter()
                    .any(|&o| may_share(&operators[o], &operators[c]))
        }));
        let pick = connected
            .or_else(|| smallest(&mut candidates.iter().copied()))
            .expect("candidates left");
        left.retain(|&c| c != pick);
        order.push(pick);
    }
    order
}

/// Whether `operator`, when it is a `SERVICE ?var`, follows an operand that may bind `?var`
/// (always true of other operators).
fn endpoint_bound<'a>(operator: &Operator, before: impl Iterator<Item = &'a Operator>) -> bool {
    match operator {
        Operator::Service(service) => match service.endpoint {
            crate::operator::ServiceEndpoint::Var(var) => {
                let mut before = before;
                before.any(|o| crate::operator::estimate::possible_vars(o).contains(&var))
            }
            crate::operator::ServiceEndpoint::Iri(_) => true,
        },
        _ => true,
    }
}

/// The group as one OPTIONAL whose required side holds the group's other operands, when
/// they may all move there (see the module docs); `None` otherwise.
fn into_optional(operands: &[&GraphPattern]) -> Option<GraphPattern> {
    let (at, (left, right, expression)) =
        operands
            .iter()
            .enumerate()
            .find_map(|(i, operand)| match operand {
                GraphPattern::LeftJoin {
                    left,
                    right,
                    expression,
                } => Some((i, (left, right, expression))),
                _ => None,
            })?;
    if operands.len() < 2 || expression.as_ref().is_some_and(has_exists) {
        return None;
    }
    let certain = certain_pattern_vars(left);
    let mut optional_vars = in_scope_vars(right);
    if let Some(expression) = expression {
        collect_vars(expression, &mut optional_vars);
    }
    let movable = operands.iter().enumerate().all(|(i, operand)| {
        i == at
            || in_scope_vars(operand)
                .iter()
                .all(|v| !optional_vars.contains(v) || certain.contains(v))
    });
    if !movable {
        return None;
    }
    let required = operands.iter().enumerate().filter(|(i, _)| *i != at).fold(
        (**left).clone(),
        |joined, (_, operand)| GraphPattern::Join {
            left: Box::new(joined),
            right: Box::new((*operand).clone()),
        },
    );
    Some(GraphPattern::LeftJoin {
        left: Box::new(required),
        right: right.clone(),
        expression: expression.clone(),
    })
}

/// The variables a pattern's solutions may bind.
fn in_scope_vars(pattern: &GraphPattern) -> Vec<Variable> {
    let mut vars = Vec::new();
    pattern.on_in_scope_variable(|v| {
        if !vars.contains(v) {
            vars.push(v.clone());
        }
    });
    vars
}

/// The variables every solution of `pattern` binds (some of them, where that is simpler
/// to tell: fewer only keeps an operand out of an OPTIONAL).
fn certain_pattern_vars(pattern: &GraphPattern) -> Vec<Variable> {
    match pattern {
        GraphPattern::Bgp { patterns } => {
            let mut vars = Vec::new();
            for p in patterns {
                for term in [&p.subject, &p.object] {
                    if let TermPattern::Variable(v) = term {
                        vars.push(v.clone());
                    }
                }
                if let NamedNodePattern::Variable(v) = &p.predicate {
                    vars.push(v.clone());
                }
            }
            vars
        }
        GraphPattern::Path {
            subject, object, ..
        } => [subject, object]
            .into_iter()
            .filter_map(|t| match t {
                TermPattern::Variable(v) => Some(v.clone()),
                _ => None,
            })
            .collect(),
        GraphPattern::Join { left, right } => {
            let mut vars = certain_pattern_vars(left);
            vars.extend(certain_pattern_vars(right));
            vars
        }
        GraphPattern::LeftJoin { left, .. }
        | GraphPattern::Minus { left, .. }
        | GraphPattern::Filter { inner: left, .. }
        | GraphPattern::Extend { inner: left, .. } => certain_pattern_vars(left),
        _ => Vec::new(),
    }
}

fn has_exists(expression: &Expression) -> bool {
    match expression {
        Expression::Exists(_) => true,
        other => {
            let mut found = false;
            crate::operands::for_each_operand(other, &mut |operand| found |= has_exists(operand));
            found
        }
    }
}

/// The operands of a tree of joins, in the order written; a `BIND` of a constant comes
/// out as a one-row VALUES in `binds` (the variable is new to the pattern it extends, so
/// extending is joining).
fn flatten<'p>(
    pattern: &'p GraphPattern,
    out: &mut Vec<&'p GraphPattern>,
    binds: &mut Vec<GraphPattern>,
) {
    match pattern {
        GraphPattern::Join { left, right } => {
            flatten(left, out, binds);
            flatten(right, out, binds);
        }
        GraphPattern::Extend {
            inner,
            variable,
            expression,
        } if constant(expression).is_some() => {
            flatten(inner, out, binds);
            binds.push(GraphPattern::Values {
                variables: vec![variable.clone()],
                bindings: vec![vec![constant(expression)]],
            });
        }
        other => out.push(other),
    }
}

/// The term of a constant expression.
fn constant(expression: &Expression) -> Option<GroundTerm> {
    match expression {
        Expression::NamedNode(n) => Some(GroundTerm::NamedNode(n.clone())),
        Expression::Literal(l) => Some(GroundTerm::Literal(l.clone())),
        _ => None,
    }
}

/// An operand of a group once its basic graph patterns are merged.
enum Operand<'p> {
    Bgp(Vec<TriplePattern>),
    Other(&'p GraphPattern),
}

/// The operands with the basic graph patterns that share a variable (directly or through
/// another basic graph pattern) merged into one, at the place of the first; patterns that
/// share none stay apart, so that no exploration builds a cross product a later operand
/// would cut.
fn merge_bgps<'p>(operands: &[&'p GraphPattern]) -> Vec<Operand<'p>> {
    let names: Vec<Option<Vec<String>>> = operands
        .iter()
        .map(|operand| match operand {
            GraphPattern::Bgp { patterns } => {
                Some(patterns.iter().flat_map(pattern_names).collect())
            }
            _ => None,
        })
        .collect();
    // Union-find over the basic graph patterns; each set is named by its first member.
    let mut first: Vec<usize> = (0..operands.len()).collect();
    fn root(first: &mut [usize], mut i: usize) -> usize {
        while first[i] != i {
            first[i] = first[first[i]];
            i = first[i];
        }
        i
    }
    for i in 0..operands.len() {
        for j in 0..i {
            let (Some(a), Some(b)) = (&names[i], &names[j]) else {
                continue;
            };
            if a.iter().any(|name| b.contains(name)) {
                let (ri, rj) = (root(&mut first, i), root(&mut first, j));
                first[ri.max(rj)] = ri.min(rj);
            }
        }
    }
    let mut merged = Vec::new();
    for (i, operand) in operands.iter().enumerate() {
        match operand {
            GraphPattern::Bgp { .. } if root(&mut first, i) == i => {
                let mut patterns = Vec::new();
                for (j, member) in operands.iter().enumerate().skip(i) {
                    if let GraphPattern::Bgp { patterns: more } = member {
                        if root(&mut first, j) == i {
                            patterns.extend(more.iter().cloned());
                        }
                    }
                }
                merged.push(Operand::Bgp(patterns));
            }
            GraphPattern::Bgp { .. } => {}
            other => merged.push(Operand::Other(other)),
        }
    }
    merged
}

/// The variables and blank nodes of a triple pattern, prefixed to keep them apart.
fn pattern_names(pattern: &TriplePattern) -> Vec<String> {
    let mut names = Vec::new();
    for term in [&pattern.subject, &pattern.object] {
        match term {
            TermPattern::Variable(v) => names.push(format!("?{}", v.as_str())),
            TermPattern::BlankNode(b) => names.push(format!("_:{}", b.as_str())),
            _ => {}
        }
    }
    if let NamedNodePattern::Variable(v) = &pattern.predicate {
        names.push(format!("?{}", v.as_str()));
    }
    names
}
