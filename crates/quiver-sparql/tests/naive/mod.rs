//! A naive reference evaluator for tests only: nested loops over a list of triples.
//!
//! It shares no code with the engine: patterns are matched by scanning candidate triples,
//! in the order that binds the most variables first. To stay tractable on LUBM-1 the
//! candidates of a pattern come from plain hash maps by predicate, (predicate, subject)
//! and (predicate, object) when those are known.

#![allow(dead_code)]

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};

use oxrdf::{Term, Triple};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

pub type Row = BTreeMap<String, Term>;

thread_local! {
    /// Candidate triples the evaluator may still try on this thread ([`within`]).
    static WORK: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Runs `f` with the evaluator allowed to try at most `work` candidate triples: `None`
/// when they ran out, so that its answers are incomplete (nested loops are exponential in
/// a random query's patterns, EXISTS inside EXISTS over cross products). Unbounded
/// otherwise.
pub fn within<T>(work: u64, f: impl FnOnce() -> T) -> Option<T> {
    WORK.with(|left| left.set(work));
    let value = f();
    let left = WORK.with(|left| left.replace(u64::MAX));
    (left > 0).then_some(value)
}

/// Takes one try from the budget; `false` once it is spent.
fn try_one() -> bool {
    WORK.with(|left| match left.get() {
        0 => false,
        n => {
            left.set(n - 1);
            true
        }
    })
}

fn match_term(pattern: &TermPattern, value: &Term, row: &mut Row) -> bool {
    match pattern {
        TermPattern::Variable(v) => bind(v.as_str(), value, row),
        TermPattern::BlankNode(b) => bind(&format!("_:{}", b.as_str()), value, row),
        TermPattern::NamedNode(n) => matches!(value, Term::NamedNode(m) if m == n),
        TermPattern::Literal(l) => matches!(value, Term::Literal(m) if m == l),
        TermPattern::Triple(pattern) => {
            let Term::Triple(triple) = value else {
                return false;
            };
            let predicate = match &pattern.predicate {
                NamedNodePattern::NamedNode(n) => n == &triple.predicate,
                NamedNodePattern::Variable(v) => {
                    bind(v.as_str(), &triple.predicate.clone().into(), row)
                }
            };
            predicate
                && match_term(&pattern.subject, &triple.subject.clone().into(), row)
                && match_term(&pattern.object, &triple.object, row)
        }
    }
}

fn bind(name: &str, value: &Term, row: &mut Row) -> bool {
    match row.get(name) {
        Some(existing) => existing == value,
        None => {
            row.insert(name.to_owned(), value.clone());
            true
        }
    }
}

fn vars_of(pattern: &TriplePattern) -> Vec<String> {
    let mut vars = Vec::new();
    for t in [&pattern.subject, &pattern.object] {
        match t {
            TermPattern::Variable(v) => vars.push(v.as_str().to_owned()),
            TermPattern::BlankNode(b) => vars.push(format!("_:{}", b.as_str())),
            TermPattern::Triple(inner) => vars.extend(vars_of(inner)),
            _ => {}
        }
    }
    if let NamedNodePattern::Variable(v) = &pattern.predicate {
        vars.push(v.as_str().to_owned());
    }
    vars
}

/// Triples with hash maps to find a pattern's candidates.
pub struct Triples<'a> {
    all: &'a [Triple],
    by_predicate: HashMap<&'a oxrdf::NamedNode, Vec<&'a Triple>>,
    by_subject: HashMap<(&'a oxrdf::NamedNode, Term), Vec<&'a Triple>>,
    by_object: HashMap<(&'a oxrdf::NamedNode, &'a Term), Vec<&'a Triple>>,
}

impl<'a> Triples<'a> {
    pub fn new(all: &'a [Triple]) -> Self {
        let mut by_predicate: HashMap<_, Vec<_>> = HashMap::new();
        let mut by_subject: HashMap<_, Vec<_>> = HashMap::new();
        let mut by_object: HashMap<_, Vec<_>> = HashMap::new();
        for t in all {
            by_predicate.entry(&t.predicate).or_default().push(t);
            by_subject
                .entry((&t.predicate, Term::from(t.subject.clone())))
                .or_default()
                .push(t);
            by_object
                .entry((&t.predicate, &t.object))
                .or_default()
                .push(t);
        }
        Self {
            all,
            by_predicate,
            by_subject,
            by_object,
        }
    }

    fn candidates(&self, pattern: &TriplePattern, row: &Row) -> Vec<&'a Triple> {
        let value = |t: &TermPattern| -> Option<Term> {
            match t {
                TermPattern::Variable(v) => row.get(v.as_str()).cloned(),
                TermPattern::NamedNode(n) => Some(n.clone().into()),
                TermPattern::Literal(l) => Some(l.clone().into()),
                _ => None,
            }
        };
        let NamedNodePattern::NamedNode(p) = &pattern.predicate else {
            return self.all.iter().collect();
        };
        if let Some(s) = value(&pattern.subject) {
            return self.by_subject.get(&(p, s)).cloned().unwrap_or_default();
        }
        if let Some(o) = value(&pattern.object) {
            return self.by_object.get(&(p, &o)).cloned().unwrap_or_default();
        }
        self.by_predicate.get(p).cloned().unwrap_or_default()
    }
}

/// All solutions of a basic graph pattern over `triples`, starting from `seed`.
pub fn bgp(triples: &Triples<'_>, patterns: &[TriplePattern], seed: Row) -> Vec<Row> {
    // Order: repeatedly take the pattern with the most already-bound variables/constants.
    let mut remaining: Vec<&TriplePattern> = patterns.iter().collect();
    let mut ordered = Vec::new();
    let mut bound: Vec<String> = seed.keys().cloned().collect();
    while !remaining.is_empty() {
        let score = |p: &TriplePattern| {
            let vars = vars_of(p);
            let unbound = vars.iter().filter(|v| !bound.contains(v)).count();
            (unbound, usize::MAX - vars.len())
        };
        let best = (0..remaining.len())
            .min_by_key(|&i| score(remaining[i]))
            .unwrap();
        let pattern = remaining.remove(best);
        bound.extend(vars_of(pattern));
        ordered.push(pattern);
    }
    let mut rows = vec![seed];
    for pattern in ordered {
        let mut next = Vec::new();
        for row in &rows {
            for triple in triples.candidates(pattern, row) {
                if !try_one() {
                    return Vec::new();
                }
                if !plausible(pattern, triple, row) {
                    continue;
                }
                let mut candidate = row.clone();
                let subject: Term = triple.subject.clone().into();
                let predicate_ok = match &pattern.predicate {
                    NamedNodePattern::NamedNode(n) => n == &triple.predicate,
                    NamedNodePattern::Variable(v) => {
                        bind(v.as_str(), &triple.predicate.clone().into(), &mut candidate)
                    }
                };
                if predicate_ok
                    && match_term(&pattern.subject, &subject, &mut candidate)
                    && match_term(&pattern.object, &triple.object, &mut candidate)
                {
                    next.push(candidate);
                }
            }
        }
        rows = next;
    }
    rows
}

/// A cheap pre-check without cloning: constants and already bound variables agree.
fn plausible(pattern: &TriplePattern, triple: &Triple, row: &Row) -> bool {
    let subject: Term = triple.subject.clone().into();
    let agrees = |p: &TermPattern, value: &Term| match p {
        TermPattern::Variable(v) => row.get(v.as_str()).is_none_or(|b| b == value),
        TermPattern::NamedNode(n) => matches!(value, Term::NamedNode(m) if m == n),
        TermPattern::Literal(l) => matches!(value, Term::Literal(m) if m == l),
        _ => true,
    };
    let predicate_ok = match &pattern.predicate {
        NamedNodePattern::NamedNode(n) => n == &triple.predicate,
        NamedNodePattern::Variable(v) => row
            .get(v.as_str())
            .is_none_or(|b| matches!(b, Term::NamedNode(m) if m == &triple.predicate)),
    };
    predicate_ok && agrees(&pattern.object, &triple.object) && agrees(&pattern.subject, &subject)
}

/// Projects rows on `vars` and renders them as sorted strings (a multiset).
pub fn project(rows: &[Row], vars: &[String]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|row| {
            vars.iter()
                .map(|v| row.get(v).map_or("UNBOUND".to_owned(), |t| t.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------
// Beyond basic graph patterns: the SPARQL algebra operators, straight from the definitions
// of §18.5 (Join, LeftJoin, Filter, Union, Minus, Project, Distinct, OrderBy, Slice), over the
// spargebra algebra of a parsed query. Everything is nested loops over `Row`s.
//
// Expressions (FILTER, the filter of an OPTIONAL, ORDER BY keys) are evaluated with
// `quiver_expr`, the same expression crate the engine uses: it is a separate crate with
// tests of its own, and reimplementing SPARQL's operators here would not make the
// comparison more independent where it matters (the engine's operators and executor).
// The Oxigraph comparison in `differential.rs` checks expression semantics independently.
// ---------------------------------------------------------------------------------------

use spargebra::algebra::{Expression, GraphPattern, OrderExpression};

/// Whether two solutions agree on every variable they both bind.
fn compatible(a: &Row, b: &Row) -> bool {
    a.iter().all(|(k, v)| b.get(k).is_none_or(|w| w == v))
}

/// For each row of `left`, the rows of `right` compatible with it. Rows can only be
/// compatible if they agree on the variables bound in every row of both sides, so `right`
/// is grouped by those values first (the definition, made fast enough for thousands of
/// rows).
fn compatible_rows<'r>(left: &[Row], right: &'r [Row]) -> Vec<Vec<&'r Row>> {
    let always = |rows: &[Row]| -> Vec<String> {
        match rows.first() {
            None => Vec::new(),
            Some(first) => first
                .keys()
                .filter(|k| rows.iter().all(|r| r.contains_key(*k)))
                .cloned()
                .collect(),
        }
    };
    let right_always = always(right);
    let shared: Vec<String> = always(left)
        .into_iter()
        .filter(|k| right_always.contains(k))
        .collect();
    let key = |row: &Row| -> Vec<Term> { shared.iter().map(|k| row[k].clone()).collect() };
    let mut groups: HashMap<Vec<Term>, Vec<&Row>> = HashMap::new();
    for r in right {
        groups.entry(key(r)).or_default().push(r);
    }
    left.iter()
        .map(|l| {
            groups
                .get(&key(l))
                .map(|rows| rows.iter().copied().filter(|r| compatible(l, r)).collect())
                .unwrap_or_default()
        })
        .collect()
}

fn merge(a: &Row, b: &Row) -> Row {
    let mut row = a.clone();
    for (k, v) in b {
        row.entry(k.clone()).or_insert_with(|| v.clone());
    }
    row
}

/// The effective boolean value of `expression` on `row` (errors are false).
pub fn filter_holds(triples: &Triples<'_>, expression: &Expression, row: &Row) -> bool {
    let context = quiver_expr::EvalContext::new();
    let bindings = |v: &oxrdf::Variable| row.get(v.as_str()).cloned();
    let exists = |pattern: &GraphPattern| exists(triples, pattern, row);
    quiver_expr::filter(expression, &bindings, &exists, &context)
}

fn expression_value(triples: &Triples<'_>, expression: &Expression, row: &Row) -> Option<Term> {
    let context = quiver_expr::EvalContext::new();
    let bindings = |v: &oxrdf::Variable| row.get(v.as_str()).cloned();
    let exists = |pattern: &GraphPattern| exists(triples, pattern, row);
    quiver_expr::evaluate(expression, &bindings, &exists, &context)
}

/// EXISTS: whether `pattern` has a solution compatible with `row`. For the basic graph
/// patterns the tests put in EXISTS, this is the same as substituting the row's values
/// into the pattern (§18.6); a group with FILTER or OPTIONAL inside would differ.
fn exists(triples: &Triples<'_>, pattern: &GraphPattern, row: &Row) -> bool {
    assert!(
        matches!(pattern, GraphPattern::Bgp { .. }),
        "the naive evaluator supports EXISTS on basic graph patterns only: {pattern}"
    );
    evaluate(triples, pattern)
        .iter()
        .any(|solution| compatible(row, solution))
}

/// All solutions of `pattern` over `triples`, in the order the algebra defines (the order
/// matters only below an ORDER BY).
pub fn evaluate(triples: &Triples<'_>, pattern: &GraphPattern) -> Vec<Row> {
    match pattern {
        GraphPattern::Bgp { patterns } => bgp(triples, patterns, Row::new()),
        GraphPattern::Join { left, right } => {
            let left = evaluate(triples, left);
            let right = evaluate(triples, right);
            let mut out = Vec::new();
            for (l, matches) in left.iter().zip(compatible_rows(&left, &right)) {
                for r in matches {
                    out.push(merge(l, r));
                }
            }
            out
        }
        GraphPattern::LeftJoin {
            left,
            right,
            expression,
        } => {
            let left = evaluate(triples, left);
            let right = evaluate(triples, right);
            let mut out = Vec::new();
            for (l, matches) in left.iter().zip(compatible_rows(&left, &right)) {
                let mut matched = false;
                for r in matches {
                    let merged = merge(l, r);
                    if expression
                        .as_ref()
                        .is_none_or(|e| filter_holds(triples, e, &merged))
                    {
                        matched = true;
                        out.push(merged);
                    }
                }
                if !matched {
                    out.push(l.clone());
                }
            }
            out
        }
        GraphPattern::Filter { expr, inner } => evaluate(triples, inner)
            .into_iter()
            .filter(|row| filter_holds(triples, expr, row))
            .collect(),
        GraphPattern::Union { left, right } => {
            let mut out = evaluate(triples, left);
            out.extend(evaluate(triples, right));
            out
        }
        GraphPattern::Project { inner, variables } => evaluate(triples, inner)
            .into_iter()
            .map(|row| {
                variables
                    .iter()
                    .filter_map(|v| {
                        row.get(v.as_str())
                            .map(|t| (v.as_str().to_owned(), t.clone()))
                    })
                    .collect()
            })
            .collect(),
        GraphPattern::Distinct { inner } => {
            let mut seen = std::collections::HashSet::new();
            evaluate(triples, inner)
                .into_iter()
                .filter(|row| seen.insert(row.clone()))
                .collect()
        }
        GraphPattern::OrderBy { inner, expression } => {
            let rows = evaluate(triples, inner);
            let mut keyed: Vec<(Vec<Option<Term>>, Row)> = rows
                .into_iter()
                .map(|row| {
                    let keys = expression
                        .iter()
                        .map(|key| match key {
                            OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                                expression_value(triples, e, &row)
                            }
                        })
                        .collect();
                    (keys, row)
                })
                .collect();
            // A stable sort: rows with equal keys keep their order, as in the engine.
            keyed.sort_by(|(a, _), (b, _)| {
                for (k, key) in expression.iter().enumerate() {
                    let ordering = quiver_expr::order_terms(a[k].as_ref(), b[k].as_ref());
                    let ordering = match key {
                        OrderExpression::Asc(_) => ordering,
                        OrderExpression::Desc(_) => ordering.reverse(),
                    };
                    if ordering.is_ne() {
                        return ordering;
                    }
                }
                std::cmp::Ordering::Equal
            });
            keyed.into_iter().map(|(_, row)| row).collect()
        }
        GraphPattern::Slice {
            inner,
            start,
            length,
        } => evaluate(triples, inner)
            .into_iter()
            .skip(*start)
            .take(length.unwrap_or(usize::MAX))
            .collect(),
        GraphPattern::Minus { left, right } => {
            let right = evaluate(triples, right);
            evaluate(triples, left)
                .into_iter()
                .filter(|l| {
                    !right
                        .iter()
                        .any(|r| compatible(l, r) && l.keys().any(|k| r.contains_key(k)))
                })
                .collect()
        }
        GraphPattern::Reduced { inner } => evaluate(triples, inner),
        // BIND: the expression's value, or the row unchanged when it is an error.
        GraphPattern::Extend {
            inner,
            variable,
            expression,
        } => evaluate(triples, inner)
            .into_iter()
            .map(|mut row| {
                if let Some(value) = expression_value(triples, expression, &row) {
                    row.insert(variable.as_str().to_owned(), value);
                }
                row
            })
            .collect(),
        GraphPattern::Values {
            variables,
            bindings,
        } => bindings
            .iter()
            .map(|values| {
                variables
                    .iter()
                    .zip(values)
                    .filter_map(|(variable, value)| {
                        let term: Term = value.clone()?.into();
                        Some((variable.as_str().to_owned(), term))
                    })
                    .collect()
            })
            .collect(),
        other => panic!("the naive evaluator does not support {other}"),
    }
}

/// Rows as lists of terms in the order of `vars` (`None` when unbound), keeping the order.
pub fn rows_of(rows: &[Row], vars: &[String]) -> Vec<Vec<Option<Term>>> {
    rows.iter()
        .map(|row| vars.iter().map(|v| row.get(v).cloned()).collect())
        .collect()
}
