//! FILTERs over one variable decided per id instead of per row.
//!
//! A filter whose expression reads a single variable (and nothing random, no EXISTS) has
//! the same answer for every row holding the same id, so each distinct id is decided once
//! (a memo of id → bool for the query) instead of decoding the term of every row. Other
//! variables it reads count as constants when they hold one id in every row (a value read
//! from a constant, as in `?v < ?origin + 120`); the conjuncts of an `&&` are decided this
//! way one by one where they can be (`filter.rs`).
//!
//! Some string filters need no decoding at all for the dictionary's sorted part, whose ids
//! follow the byte order of the terms' encodings (tag, then text; `quiver_model::term`):
//!
//! - `STRSTARTS(?v, "p")` with a simple-literal prefix holds for the simple literals
//!   (`xsd:string` included) starting with `p`, one range of ids, and for the
//!   language-tagged literals whose value starts with `p`, one range per language tag;
//!   on any other term it is a type error, so false.
//! - `REGEX(?v, "^p")` without flags (or only `s`) and without metacharacters in `p` is
//!   the same test.
//! - `?v = c` with `c` an IRI or a simple literal, and `sameTerm(?v, c)` with any `c`,
//!   hold for exactly the id of `c`; `?v != c` with `c` an IRI, and `!sameTerm(?v, c)`,
//!   for every id but that one.
//!
//! The ranges come from binary searches of the front-coded dictionary
//! (`Dictionary::rank`). Ids outside the sorted part (terms appended by updates, terms
//! computed by the query) are decided by evaluating the expression, once per id.

use std::ops::Range;

use oxrdf::vocab::xsd;
use oxrdf::{Literal, Term, Variable};
use quiver_model::term::{TAG_DIRECTIONAL, TAG_LANG, TAG_SIMPLE, TAG_TRIPLE, TAG_TYPED};
use quiver_model::{Dictionary, Id};
use rustc_hash::FxHashMap;
use spargebra::algebra::{Expression, Function};

use super::parallel::map_morsels;
use super::Evaluator;
use crate::bgp::{Node, Pattern, Pred};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::PlannedBgp;
use crate::passing_ids::PassingIds;
use crate::table::{Table, UNBOUND};

impl Evaluator<'_> {
    /// FILTER decided per id when `expression` reads one variable; `None` otherwise.
    pub(crate) fn filter_by_ids(
        &self,
        table: &Table,
        expression: &Expression,
    ) -> Result<Option<Table>, QueryError> {
        let mut variables = Vec::new();
        if !crate::operands::per_id(expression, &mut variables) {
            return Ok(None);
        }
        variables.dedup();
        if table.rows == 0 {
            return Ok(None);
        }
        // Variables holding one id in every row are constants here; one other may vary.
        let column_of = |v: &Variable| self.vars.get(v).and_then(|var| table.column(var));
        let mut fixed: Vec<(&Variable, Id)> = Vec::new();
        let mut varying: Vec<(&Variable, &[Id])> = Vec::new();
        for variable in &variables {
            match column_of(variable) {
                Some(column) if column.iter().any(|&id| id != column[0]) => {
                    varying.push((variable, column))
                }
                Some(column) => fixed.push((variable, column[0])),
                None if variables.len() == 1 => return Ok(None),
                None => fixed.push((variable, UNBOUND)),
            }
        }
        let (variable, column) = match (varying.as_slice(), fixed.first()) {
            ([one], _) => *one,
            ([], Some((variable, _))) => match column_of(variable) {
                Some(column) => (*variable, column),
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        // Decoded only now that the filter is known to be decided per id.
        let fixed: Vec<(&Variable, Option<Term>)> = fixed
            .into_iter()
            .filter(|(v, _)| *v != variable)
            .map(|(v, id)| (v, (id != UNBOUND).then(|| self.term(id)).flatten()))
            .collect();
        let ctx = self.ctx();
        let dictionary = self.store.dictionary();
        let base = Id::try_from(dictionary.base_len()).unwrap_or(Id::MAX);
        let ranges = if fixed.is_empty() {
            id_ranges(self, dictionary, expression, variable)
        } else {
            None
        };
        // The parts reading only constant columns are evaluated once, not once per id.
        let folded;
        let expression = if fixed.is_empty() {
            expression
        } else {
            let fixed_term = |v: &Variable| {
                fixed
                    .iter()
                    .find(|(f, _)| *f == v)
                    .and_then(|(_, term)| term.clone())
            };
            folded = fold_fixed(expression, variable, &|part| {
                quiver_expr::evaluate(part, &fixed_term, &|_| false, &self.expressions)
            });
            &folded
        };
        // Ids the ranges do not decide: evaluate the expression once per id.
        let mut memo: FxHashMap<Id, bool> = FxHashMap::default();
        let mut decide = |id: Id| -> bool {
            *memo.entry(id).or_insert_with(|| {
                let bindings = |v: &Variable| {
                    if v == variable {
                        return self.term(id);
                    }
                    fixed
                        .iter()
                        .find(|(f, _)| *f == v)
                        .and_then(|(_, term)| term.clone())
                };
                quiver_expr::filter(expression, &bindings, &|_| false, &self.expressions)
            })
        };
        let keep: Vec<u32> = match &ranges {
            Some(ranges) => {
                // Base ids in the ranges pass; the others are decided one by one below.
                let parts = map_morsels(&ctx, column.len(), |rows| {
                    rows.filter(|&row| {
                        let id = column[row];
                        id >= base || in_ranges(ranges, id)
                    })
                    .map(|row| row as u32)
                    .collect::<Vec<u32>>()
                })?;
                let mut keep = Vec::new();
                for (i, row) in parts.into_iter().flatten().enumerate() {
                    ctx.tick(i)?;
                    let id = column[row as usize];
                    if id < base || decide(id) {
                        keep.push(row);
                    }
                }
                keep
            }
            None => {
                let mut keep = Vec::new();
                for (row, &id) in column.iter().enumerate() {
                    ctx.tick(row)?;
                    if decide(id) {
                        keep.push(row as u32);
                    }
                }
                keep
            }
        };
        ctx.check()?;
        self.notes.borrow_mut().push(format!(
            "filter: {} of {} rows kept, {}{} ids evaluated",
            keep.len(),
            table.rows,
            if ranges.is_some() {
                "base ids by id ranges, "
            } else {
                ""
            },
            memo.len()
        ));
        Ok(Some(table.gather(&keep)))
    }
}

impl Evaluator<'_> {
    /// FILTER over a basic graph pattern whose answer is a set of ids of one of the
    /// pattern's variables (the shapes of the module doc): when those ids are few against
    /// the rows the pattern is expected to find, the pattern runs seeded with them instead
    /// of finding every row and dropping most. `None` when it does not apply.
    pub(crate) fn filter_seeding_bgp(
        &self,
        planned: &PlannedBgp,
        expression: &Expression,
    ) -> Result<Option<Table>, QueryError> {
        let mut variables = Vec::new();
        if matches!(expression, Expression::Not(_))
            || !crate::operands::per_id(expression, &mut variables)
        {
            // A negation passes all ids but a few: no seeding pays for it.
            return Ok(None);
        }
        let [variable] = variables.as_slice() else {
            return Ok(None);
        };
        let Some(var) = self.vars.get(variable) else {
            return Ok(None);
        };
        if !planned.bgp.vars().contains(&var) {
            return Ok(None);
        }
        let dictionary = self.store.dictionary();
        let graph = self.context(planned.graph).graph;
        let base = dictionary.base_len();
        // When the variable is the object of a pattern with a constant predicate, only that
        // predicate's objects (listed sorted by id in the predicate index) can pass.
        let objects: Option<&[Id]> = planned.bgp.patterns.iter().find_map(|p| match p {
            Pattern {
                object: Node::Var(o),
                predicate: Pred::Const(predicate),
                ..
            } if *o == var && self.partitions.is_none() => {
                Some(graph.predicate_objects(*predicate))
            }
            _ => None,
        });
        let objects = objects.filter(|objects| objects.is_sorted());
        // Without ranges, every object of the predicate is a candidate, tested on its term
        // (a comparison such as `?date >= d1 && ?date < d2` over a few hundred dates).
        let (ranges, test_each) = match id_ranges(self, dictionary, expression, variable) {
            Some(ranges) => (ranges, false),
            None if objects.is_some() => {
                let all = Id::try_from(base).unwrap_or(Id::MAX);
                (std::iter::once(0..all).collect(), true)
            }
            None => return Ok(None),
        };
        let passes = |id: Id| {
            let bindings = |v: &Variable| (v == variable).then(|| self.term(id)).flatten();
            quiver_expr::filter(expression, &bindings, &|_| false, &self.expressions)
        };
        let within = |range: &Range<Id>| -> Range<usize> {
            match objects {
                Some(objects) => {
                    objects.partition_point(|&id| id < range.start)
                        ..objects.partition_point(|&id| id < range.end)
                }
                None => range.start as usize..range.end as usize,
            }
        };
        let ids: u64 = ranges.iter().map(|r| within(r).len() as u64).sum();
        // Appended terms are not in the ranges' order: each is tested on its term.
        let appended: Vec<Id> = match objects {
            Some(objects) => {
                let first = objects.partition_point(|&id| (id as u64) < base);
                objects[first..].to_vec()
            }
            None => (base..dictionary.len())
                .filter_map(|id| Id::try_from(id).ok())
                .collect(),
        };
        let candidates = ids + appended.len() as u64;
        let expected = planned.alone.last().map_or(0.0, |step| step.estimate);
        if candidates as f64 * 4.0 > expected || candidates > MAX_SEEDS {
            return Ok(None);
        }
        let ctx = self.ctx();
        let mut memory = ctx.reservation();
        memory.try_grow((candidates as usize).saturating_mul(ID_BYTES))?;
        let mut seeds: Vec<Id> = Vec::new();
        for range in &ranges {
            let positions = within(range);
            match objects {
                Some(objects) if test_each => {
                    for (i, &id) in objects[positions].iter().enumerate() {
                        ctx.tick(i)?;
                        if passes(id) {
                            seeds.push(id);
                        }
                    }
                }
                Some(objects) => seeds.extend_from_slice(&objects[positions]),
                None => seeds.extend(range.clone()),
            }
            ctx.check()?;
        }
        for (i, id) in appended.into_iter().enumerate() {
            ctx.tick(i)?;
            if !in_ranges(&ranges, id) && passes(id) {
                seeds.push(id);
            }
        }
        let rows = seeds.len();
        let input = Table {
            vars: vec![var],
            columns: vec![seeds],
            rows,
        };
        let steps = crate::planner::plan(&planned.bgp, self.store, graph, &[var], rows as f64);
        let mut local = planned.clone();
        local.seeded = Some((vec![var], steps));
        let table = self.bgp(&local, input, true, None)?;
        self.notes.borrow_mut().push(format!(
            "filter: the pattern seeded with the {rows} ids that pass, {} rows",
            table.rows
        ));
        Ok(Some(table))
    }
}

impl Evaluator<'_> {
    /// The ids of one of `planned`'s variables that `expression` can pass, as ranges of the
    /// sorted dictionary's ids, when it reads that variable alone and is one of the shapes
    /// of the module doc (`PartitionedBgp::passes`).
    pub(crate) fn passing_ids(
        &self,
        planned: &PlannedBgp,
        expression: &Expression,
    ) -> Option<PassingIds> {
        let mut variables = Vec::new();
        if !crate::operands::per_id(expression, &mut variables) {
            return None;
        }
        variables.dedup();
        let [variable] = variables.as_slice() else {
            return None;
        };
        let var = self.vars.get(variable)?;
        if !planned.bgp.vars().contains(&var) {
            return None;
        }
        let dictionary = self.store.dictionary();
        let ranges = id_ranges(self, dictionary, expression, variable)?;
        Some(PassingIds {
            var,
            ranges,
            decided_below: Id::try_from(dictionary.base_len()).unwrap_or(Id::MAX),
        })
    }
}

/// The most ids a filter seeds a pattern with.
const MAX_SEEDS: u64 = 1 << 22;

/// The base ids for which `expression` (over `variable` alone) is true, as sorted ranges,
/// when it is one of the shapes of the module doc.
fn id_ranges(
    evaluator: &Evaluator<'_>,
    dictionary: &Dictionary,
    expression: &Expression,
    variable: &Variable,
) -> Option<Vec<Range<Id>>> {
    if dictionary.share().is_some() {
        // A share of a cluster's dictionary: ids do not sort like terms, and a constant
        // another owner holds may not be known here.
        return None;
    }
    let is_var = |e: &Expression| matches!(e, Expression::Variable(v) if v == variable);
    let one = |term: Term| {
        let ranges = match evaluator.store.term_id(term.as_ref()) {
            Some(id) => std::iter::once(id..id + 1).collect(),
            None => Vec::new(),
        };
        Some(ranges)
    };
    match expression {
        Expression::SameTerm(a, b) | Expression::Equal(a, b) => {
            let constant = match (&**a, &**b) {
                (a, c) | (c, a) if is_var(a) => c,
                _ => return None,
            };
            let equal = matches!(expression, Expression::Equal(..));
            match constant {
                Expression::NamedNode(node) => one(node.clone().into()),
                Expression::Literal(literal) if !equal || is_simple(literal) => {
                    one(literal.clone().into())
                }
                _ => None,
            }
        }
        Expression::Not(inner) => match &**inner {
            // `?v != <iri>` (and `!sameTerm(?v, c)`) holds for every term but that one: no
            // term compared with an IRI is a type error.
            Expression::Equal(a, b) | Expression::SameTerm(a, b) => {
                let constant = match (&**a, &**b) {
                    (a, c) | (c, a) if is_var(a) => c,
                    _ => return None,
                };
                let term: Term = match constant {
                    Expression::NamedNode(node) => node.clone().into(),
                    Expression::Literal(literal)
                        if matches!(&**inner, Expression::SameTerm(..)) =>
                    {
                        literal.clone().into()
                    }
                    _ => return None,
                };
                let base = Id::try_from(dictionary.base_len()).unwrap_or(Id::MAX);
                let ranges: Vec<Range<Id>> = match evaluator.store.term_id(term.as_ref()) {
                    Some(id) if id < base => vec![0..id, id + 1..base],
                    _ => std::iter::once(0..base).collect(),
                };
                Some(ranges.into_iter().filter(|r| !r.is_empty()).collect())
            }
            _ => None,
        },
        Expression::FunctionCall(Function::StrStarts, arguments) => match arguments.as_slice() {
            [a, Expression::Literal(prefix)] if is_var(a) && is_simple(prefix) => {
                Some(prefix_ranges(dictionary, prefix.value()))
            }
            _ => None,
        },
        Expression::FunctionCall(Function::Regex, arguments) => {
            let (a, pattern, flags) = match arguments.as_slice() {
                [a, Expression::Literal(p)] => (a, p, None),
                [a, Expression::Literal(p), Expression::Literal(f)] => (a, p, Some(f)),
                _ => return None,
            };
            let flags_ok = flags.is_none_or(|f| is_simple(f) && matches!(f.value(), "" | "s"));
            let prefix = pattern.value().strip_prefix('^')?;
            let plain = !prefix.contains(|c: char| "\\.+*?()|[]{}^$".contains(c));
            (is_var(a) && is_simple(pattern) && flags_ok && plain)
                .then(|| prefix_ranges(dictionary, prefix))
        }
        _ => None,
    }
}

/// `expression` with each largest part that reads variables, none of them `varying`,
/// replaced by its value (`value` of it); a part whose value is an error or a blank node
/// stays as it is, to be evaluated per id as before.
fn fold_fixed(
    expression: &Expression,
    varying: &Variable,
    value: &dyn Fn(&Expression) -> Option<Term>,
) -> Expression {
    let mut variables = Vec::new();
    crate::operands::per_id(expression, &mut variables);
    if variables.is_empty() {
        return expression.clone();
    }
    if !variables.contains(varying) {
        return match value(expression) {
            Some(Term::NamedNode(node)) => Expression::NamedNode(node),
            Some(Term::Literal(literal)) => Expression::Literal(literal),
            _ => expression.clone(),
        };
    }
    crate::operands::map_operands(expression, &mut |operand| {
        fold_fixed(operand, varying, value)
    })
}

/// A simple literal (or `xsd:string`).
fn is_simple(literal: &Literal) -> bool {
    literal.language().is_none() && literal.datatype() == xsd::STRING
}

/// The base ids of the string literals whose value starts with `prefix`: simple literals,
/// then language-tagged ones, tag by tag, then directional ones (RDF 1.2) likewise.
fn prefix_ranges(dictionary: &Dictionary, prefix: &str) -> Vec<Range<Id>> {
    let id = |rank: u64| Id::try_from(rank).unwrap_or(Id::MAX);
    let mut ranges = Vec::new();
    let mut simple = vec![TAG_SIMPLE];
    simple.extend_from_slice(prefix.as_bytes());
    ranges.push(id(dictionary.rank(&simple))..id(dictionary.rank(&successor(&simple))));
    tagged_prefix_ranges(dictionary, prefix, TAG_LANG, TAG_TYPED, &mut ranges);
    tagged_prefix_ranges(dictionary, prefix, TAG_DIRECTIONAL, TAG_TRIPLE, &mut ranges);
    ranges.retain(|r| r.start < r.end);
    ranges
}

/// Literals of kind `tag` (the next kind: `end_tag`) sort by language, then value: one
/// range per language of those whose value starts with `prefix`.
fn tagged_prefix_ranges(
    dictionary: &Dictionary,
    prefix: &str,
    tag: u8,
    end_tag: u8,
    ranges: &mut Vec<Range<Id>>,
) {
    let id = |rank: u64| Id::try_from(rank).unwrap_or(Id::MAX);
    let end = dictionary.rank(&[end_tag]);
    let mut next = dictionary.rank(&[tag]);
    let mut bytes = Vec::new();
    while next < end {
        let Some(at) = Id::try_from(next).ok() else {
            break;
        };
        if !dictionary.term_into(at, &mut bytes) {
            break;
        }
        let Some(nul) = bytes.iter().position(|&b| b == 0) else {
            break;
        };
        let mut start = bytes[..=nul].to_vec();
        start.extend_from_slice(prefix.as_bytes());
        ranges.push(id(dictionary.rank(&start))..id(dictionary.rank(&successor(&start))));
        // The next tag: past every encoding of this tag followed by NUL.
        let mut past = bytes[..nul].to_vec();
        past.push(1);
        next = dictionary.rank(&past);
    }
}

/// The smallest byte string above every string starting with `prefix` (the prefix with
/// its last byte below 0xFF incremented; UTF-8 text after a tag byte always has one).
fn successor(prefix: &[u8]) -> Vec<u8> {
    let mut next = prefix.to_vec();
    while let Some(last) = next.pop() {
        if last < 0xFF {
            next.push(last + 1);
            return next;
        }
    }
    vec![0xFF; prefix.len() + 1]
}

fn in_ranges(ranges: &[Range<Id>], id: Id) -> bool {
    ranges.iter().any(|r| r.contains(&id))
}
