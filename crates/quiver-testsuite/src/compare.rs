//! Comparing an actual answer with the expected one.
//!
//! Booleans compare by value. Solutions compare variables as sets, then rows as bags, or
//! in sequence where the query orders them ([`Order`]). Graphs compare as sets of triples.
//! Terms compare exactly, except numbers and blank nodes. Literals of the numeric types
//! (integer, decimal, float, double) compare by value within their datatype, as SPARQL's
//! numeric equality does (the suite's expected results mix lexical forms: a cast of `"1"` to
//! float is written `1.0` in one row and `1` in another). Blank nodes compare up to a
//! consistent relabelling: a bijection between the blank nodes of the two sides, found by
//! backtracking over candidate rows with the same shape. Triple terms (RDF 1.2) compare
//! part by part under the same rules: the blank nodes inside them belong to the same
//! bijection as the others, and their literals compare as literals elsewhere do.

use std::collections::HashMap;
use std::fmt::Write;

use oxrdf::vocab::xsd;
use oxrdf::{BlankNode, Literal, NamedOrBlankNode, Term, Triple, Variable};

use crate::answer::{Answer, Row};

/// How rows must line up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// Any order (a multiset of rows).
    Bag,
    /// The query orders by these variables: their values must come in the same sequence,
    /// and the whole rows must agree as a bag (rows tied on the keys may come in any order).
    Keys(Vec<Variable>),
    /// The rows must come in exactly the expected sequence.
    Sequence,
}

/// Backtracking steps tried before an isomorphism search gives up.
const STEP_LIMIT: usize = 2_000_000;

/// `Ok` when `actual` matches `expected`; else a summary of the difference.
pub fn compare(expected: &Answer, actual: &Answer, order: &Order) -> Result<(), String> {
    match (&normalize(expected), &normalize(actual)) {
        (Answer::Boolean(e), Answer::Boolean(a)) if e == a => Ok(()),
        (Answer::Boolean(e), Answer::Boolean(a)) => Err(format!("expected {e}, got {a}")),
        (
            Answer::Solutions {
                variables: ev,
                rows: er,
            },
            Answer::Solutions {
                variables: av,
                rows: ar,
            },
        ) => compare_solutions(ev, er, av, ar, order),
        (Answer::Graph(e), Answer::Graph(a)) => {
            let (e, a) = (triple_rows(e), triple_rows(a));
            bag(&e, &a, &[])
        }
        (e, a) => Err(format!("expected {}, got {}", kind(e), kind(a))),
    }
}

/// The answer with every numeric literal in the canonical lexical form of its value.
fn normalize(answer: &Answer) -> Answer {
    match answer {
        Answer::Boolean(b) => Answer::Boolean(*b),
        Answer::Solutions { variables, rows } => Answer::Solutions {
            variables: variables.clone(),
            rows: rows
                .iter()
                .map(|row| row.iter().map(|t| t.as_ref().map(canonical)).collect())
                .collect(),
        },
        Answer::Graph(triples) => Answer::Graph(
            triples
                .iter()
                .map(|t| Triple::new(t.subject.clone(), t.predicate.clone(), canonical(&t.object)))
                .collect(),
        ),
    }
}

fn canonical(term: &Term) -> Term {
    use oxsdatatypes::{Decimal, Double, Float, Integer};
    use std::str::FromStr;
    let literal = match term {
        Term::Literal(literal) => literal,
        Term::Triple(triple) => {
            return Triple::new(
                triple.subject.clone(),
                triple.predicate.clone(),
                canonical(&triple.object),
            )
            .into()
        }
        Term::NamedNode(_) | Term::BlankNode(_) => return term.clone(),
    };
    let value = literal.value();
    let datatype = literal.datatype();
    let lexical = match datatype {
        xsd::INTEGER => Integer::from_str(value).ok().map(|v| v.to_string()),
        xsd::DECIMAL => Decimal::from_str(value).ok().map(|v| v.to_string()),
        xsd::FLOAT => Float::from_str(value).ok().map(|v| v.to_string()),
        xsd::DOUBLE => Double::from_str(value).ok().map(|v| v.to_string()),
        _ => None,
    };
    match lexical {
        Some(lexical) => Literal::new_typed_literal(lexical, datatype.into_owned()).into(),
        None => term.clone(),
    }
}

fn kind(answer: &Answer) -> &'static str {
    match answer {
        Answer::Boolean(_) => "a boolean",
        Answer::Solutions { .. } => "solutions",
        Answer::Graph(_) => "a graph",
    }
}

fn triple_rows(triples: &[Triple]) -> Vec<Row> {
    let mut triples = triples.to_vec();
    crate::files::dedup(&mut triples);
    triples
        .into_iter()
        .map(|t| {
            vec![
                Some(t.subject.into()),
                Some(t.predicate.into()),
                Some(t.object),
            ]
        })
        .collect()
}

fn compare_solutions(
    expected_vars: &[Variable],
    expected: &[Row],
    actual_vars: &[Variable],
    actual: &[Row],
    order: &Order,
) -> Result<(), String> {
    let mut sorted_e: Vec<&str> = expected_vars.iter().map(Variable::as_str).collect();
    let mut sorted_a: Vec<&str> = actual_vars.iter().map(Variable::as_str).collect();
    sorted_e.sort_unstable();
    sorted_a.sort_unstable();
    if sorted_e != sorted_a {
        return Err(format!(
            "variables differ: expected ?{}, got ?{}",
            sorted_e.join(" ?"),
            sorted_a.join(" ?")
        ));
    }
    // Actual columns in the expected variable order.
    let permutation: Vec<usize> = expected_vars
        .iter()
        .map(|v| actual_vars.iter().position(|a| a == v).unwrap_or(0))
        .collect();
    let actual: Vec<Row> = actual
        .iter()
        .map(|row| permutation.iter().map(|&i| row[i].clone()).collect())
        .collect();
    let names: Vec<String> = expected_vars.iter().map(|v| v.to_string()).collect();
    match order {
        Order::Bag => bag(expected, &actual, &names),
        Order::Sequence => sequence(expected, &actual, &names),
        Order::Keys(keys) => {
            let columns: Option<Vec<usize>> = keys
                .iter()
                .map(|k| expected_vars.iter().position(|v| v == k))
                .collect();
            let Some(columns) = columns else {
                return sequence(expected, &actual, &names);
            };
            let project = |rows: &[Row]| -> Vec<Row> {
                rows.iter()
                    .map(|row| columns.iter().map(|&c| row[c].clone()).collect())
                    .collect()
            };
            let key_names: Vec<String> = columns.iter().map(|&c| names[c].clone()).collect();
            sequence(&project(expected), &project(&actual), &key_names)
                .map_err(|e| format!("order differs: {e}"))?;
            bag(expected, &actual, &names)
        }
    }
}

/// The rows must pair up in order under one blank node bijection.
fn sequence(expected: &[Row], actual: &[Row], names: &[String]) -> Result<(), String> {
    if expected.len() != actual.len() {
        return Err(format!(
            "expected {} rows, got {}{}",
            expected.len(),
            actual.len(),
            difference(expected, actual, names)
        ));
    }
    let mut bijection = Bijection::default();
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if !bijection.unify_row(a, e) {
            return Err(format!(
                "row {} differs: expected {}, got {}",
                i + 1,
                show(e, names),
                show(a, names)
            ));
        }
    }
    Ok(())
}

/// The rows must match as multisets under one blank node bijection.
fn bag(expected: &[Row], actual: &[Row], names: &[String]) -> Result<(), String> {
    match isomorphic_bags(expected, actual) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!(
            "expected {} rows, got {}{}",
            expected.len(),
            actual.len(),
            difference(expected, actual, names)
        )),
        Err(message) => Err(message),
    }
}

fn has_blank(row: &Row) -> bool {
    row.iter().flatten().any(term_has_blank)
}

/// Whether `term` is a blank node or a triple term with one inside (at any depth).
fn term_has_blank(term: &Term) -> bool {
    match term {
        Term::BlankNode(_) => true,
        Term::Triple(triple) => {
            matches!(triple.subject, NamedOrBlankNode::BlankNode(_))
                || term_has_blank(&triple.object)
        }
        Term::NamedNode(_) | Term::Literal(_) => false,
    }
}

/// A row with every blank node (inside triple terms too) replaced by one placeholder: rows
/// that may match under some relabelling share a shape.
fn shape(row: &Row) -> Row {
    row.iter().map(|t| t.as_ref().map(term_shape)).collect()
}

fn placeholder() -> BlankNode {
    BlankNode::new_unchecked("_")
}

fn term_shape(term: &Term) -> Term {
    match term {
        Term::BlankNode(_) => placeholder().into(),
        Term::Triple(triple) => {
            let subject = match &triple.subject {
                NamedOrBlankNode::BlankNode(_) => placeholder().into(),
                named => named.clone(),
            };
            Triple::new(
                subject,
                triple.predicate.clone(),
                term_shape(&triple.object),
            )
            .into()
        }
        Term::NamedNode(_) | Term::Literal(_) => term.clone(),
    }
}

fn counts(rows: impl Iterator<Item = Row>) -> HashMap<Row, i64> {
    let mut counts = HashMap::new();
    for row in rows {
        *counts.entry(row).or_insert(0) += 1;
    }
    counts
}

/// Whether `actual` is `expected` up to blank node relabelling; `Err` when the search
/// ran past its step limit (`STEP_LIMIT`).
pub fn isomorphic_bags(expected: &[Row], actual: &[Row]) -> Result<bool, String> {
    if expected.len() != actual.len() {
        return Ok(false);
    }
    let ground = |rows: &[Row]| counts(rows.iter().filter(|r| !has_blank(r)).cloned());
    if ground(expected) != ground(actual) {
        return Ok(false);
    }
    let blank_e: Vec<&Row> = expected.iter().filter(|r| has_blank(r)).collect();
    let blank_a: Vec<&Row> = actual.iter().filter(|r| has_blank(r)).collect();
    if counts(blank_e.iter().map(|r| shape(r))) != counts(blank_a.iter().map(|r| shape(r))) {
        return Ok(false);
    }
    let shapes_e: Vec<Row> = blank_e.iter().map(|r| shape(r)).collect();
    let mut candidates: Vec<(&Row, Vec<usize>)> = blank_a
        .iter()
        .map(|a| {
            let s = shape(a);
            let matching = (0..blank_e.len()).filter(|&j| shapes_e[j] == s).collect();
            (*a, matching)
        })
        .collect();
    candidates.sort_by_key(|(_, c)| c.len());
    let mut search = Search {
        expected: &blank_e,
        candidates: &candidates,
        used: vec![false; blank_e.len()],
        bijection: Bijection::default(),
        steps: 0,
    };
    search.run(0)
}

struct Search<'a> {
    expected: &'a [&'a Row],
    candidates: &'a [(&'a Row, Vec<usize>)],
    used: Vec<bool>,
    bijection: Bijection,
    steps: usize,
}

impl Search<'_> {
    fn run(&mut self, i: usize) -> Result<bool, String> {
        let Some((actual, candidates)) = self.candidates.get(i) else {
            return Ok(true);
        };
        for &j in candidates {
            if self.used[j] {
                continue;
            }
            self.steps += 1;
            if self.steps > STEP_LIMIT {
                return Err("blank node isomorphism search gave up".into());
            }
            let mark = self.bijection.trail.len();
            if self.bijection.unify_row(actual, self.expected[j]) {
                self.used[j] = true;
                if self.run(i + 1)? {
                    return Ok(true);
                }
                self.used[j] = false;
            }
            self.bijection.undo(mark);
        }
        Ok(false)
    }
}

/// A partial bijection between actual and expected blank nodes, with an undo trail.
#[derive(Default)]
struct Bijection {
    forward: HashMap<BlankNode, BlankNode>,
    backward: HashMap<BlankNode, BlankNode>,
    trail: Vec<BlankNode>,
}

impl Bijection {
    /// Extends the bijection so that `actual` maps onto `expected`, if it can. On failure
    /// some pairs may have been added: the caller undoes to its mark.
    fn unify_row(&mut self, actual: &Row, expected: &Row) -> bool {
        actual.len() == expected.len()
            && actual.iter().zip(expected).all(|pair| match pair {
                (None, None) => true,
                (Some(a), Some(e)) => self.unify(a, e),
                _ => false,
            })
    }

    fn unify(&mut self, actual: &Term, expected: &Term) -> bool {
        match (actual, expected) {
            (Term::BlankNode(a), Term::BlankNode(e)) => self.unify_blank(a, e),
            (Term::Triple(a), Term::Triple(e)) => {
                a.predicate == e.predicate
                    && match (&a.subject, &e.subject) {
                        (NamedOrBlankNode::BlankNode(a), NamedOrBlankNode::BlankNode(e)) => {
                            self.unify_blank(a, e)
                        }
                        (a, e) => a == e,
                    }
                    && self.unify(&a.object, &e.object)
            }
            (a, e) => a == e,
        }
    }

    fn unify_blank(&mut self, actual: &BlankNode, expected: &BlankNode) -> bool {
        match (self.forward.get(actual), self.backward.get(expected)) {
            (Some(mapped), _) => mapped == expected,
            (None, Some(_)) => false,
            (None, None) => {
                self.forward.insert(actual.clone(), expected.clone());
                self.backward.insert(expected.clone(), actual.clone());
                self.trail.push(actual.clone());
                true
            }
        }
    }

    fn undo(&mut self, mark: usize) {
        for a in self.trail.drain(mark..) {
            if let Some(e) = self.forward.remove(&a) {
                self.backward.remove(&e);
            }
        }
    }
}

/// Up to five rows missing and five unexpected, by shape (blank nodes shown as `_:_`).
fn difference(expected: &[Row], actual: &[Row], names: &[String]) -> String {
    let mut remaining = counts(actual.iter().map(shape));
    let mut missing = Vec::new();
    for row in expected.iter().map(shape) {
        match remaining.get_mut(&row) {
            Some(n) if *n > 0 => *n -= 1,
            _ => missing.push(row),
        }
    }
    let mut unexpected: Vec<Row> = Vec::new();
    let mut left = counts(expected.iter().map(shape));
    for row in actual.iter().map(shape) {
        match left.get_mut(&row) {
            Some(n) if *n > 0 => *n -= 1,
            _ => unexpected.push(row),
        }
    }
    let mut text = String::new();
    let mut list = |title: &str, rows: &[Row]| {
        if rows.is_empty() {
            return;
        }
        let _ = write!(text, "; {title} ({}):", rows.len());
        for row in rows.iter().take(5) {
            let _ = write!(text, " [{}]", show(row, names));
        }
        if rows.len() > 5 {
            text.push_str(" …");
        }
    };
    list("missing", &missing);
    list("unexpected", &unexpected);
    if missing.is_empty() && unexpected.is_empty() {
        text.push_str("; same rows up to blank nodes, but no consistent blank node mapping");
    }
    text
}

fn show(row: &Row, names: &[String]) -> String {
    let cell = |t: &Option<Term>| t.as_ref().map_or("UNDEF".to_owned(), Term::to_string);
    if names.is_empty() {
        return row.iter().map(cell).collect::<Vec<_>>().join(" ");
    }
    row.iter()
        .zip(names)
        .map(|(t, n)| format!("{n}={}", cell(t)))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
