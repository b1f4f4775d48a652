//! ORDER BY ?o LIMIT k over one pattern `?s p ?o`: the predicate index lists the pattern's
//! objects sorted by id, and base ids of IRIs, blank nodes and simple literals sort like
//! their terms (`sort_key.rs`), so the first objects of the list hold the first rows of
//! the order. Only their rows are read, until there are at least `k`; the rows of every
//! object appended by updates (whose ids do not sort like their terms) are added, and the
//! top-k runs over those rows instead of the pattern's whole answer.
//!
//! `ORDER BY DESC(?o)` reads the list from its end the same way, where every object of the
//! sorted part sorts by id: typed and language-tagged literals sort after all of those
//! kinds, so where the predicate has any, the last rows of the order are among them, and
//! their ids do not tell which.
//!
//! ORDER BY ?s LIMIT k over `?s p ?o` or `?s ?p ?o` reads subjects the same way: the
//! predicate index lists each predicate's subjects sorted by id, so the first subjects of
//! the list (of the lists' union, over any predicate) hold the first rows, all of their
//! edges read, and the subjects appended by updates are added.
//!
//! Rows tied on every key may be others than a full evaluation would keep at the cut, which
//! SPARQL leaves open. So where the order has that one key, only the rows still needed are
//! read of the last object (or subject) taken: a million subjects sharing one value cost
//! `k` rows, not a million.

use quiver_model::term::TAG_LANG;
use quiver_model::Id;
use quiver_store::graph::Direction;
use spargebra::algebra::{Expression, OrderExpression};

use super::Evaluator;
use crate::bgp::{Node, Pred};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::Operator;
use crate::table::Table;

impl Evaluator<'_> {
    /// The candidates of a top-k over one pattern in object order (see the module doc);
    /// `None` when the shape does not apply or the ordered objects hold fewer than `k`
    /// rows.
    pub(crate) fn top_k_candidates(
        &self,
        inner: &Operator,
        keys: &[OrderExpression],
        k: usize,
    ) -> Result<Option<Table>, QueryError> {
        let Operator::Bgp(planned) = inner else {
            return Ok(None);
        };
        if self.partitions.is_some() {
            // The scan reads the predicate index: the coordinator holds only a part.
            return Ok(None);
        }
        let ([pattern], []) = (
            planned.bgp.patterns.as_slice(),
            planned.bgp.equalities.as_slice(),
        ) else {
            return Ok(None);
        };
        let (Node::Var(subject), Node::Var(object)) = (pattern.subject, pattern.object) else {
            return Ok(None);
        };
        let (first, descending) = match keys.first() {
            Some(OrderExpression::Asc(Expression::Variable(first))) => (first, false),
            Some(OrderExpression::Desc(Expression::Variable(first))) => (first, true),
            _ => return Ok(None),
        };
        let first = self.vars.get(first);
        // Past the first key, rows tied on it are told apart by the others: all are read.
        let ties = match keys.len() {
            1 => Ties::Any,
            _ => Ties::All,
        };
        if subject == object || k == 0 {
            return Ok(None);
        }
        let ctx = self.context(planned.graph);
        let (candidates, order) = match pattern.predicate {
            Pred::Const(predicate) if first == Some(object) => (
                object_order_candidates(&ctx, predicate, (k, ties), descending)?,
                "object",
            ),
            Pred::Const(predicate) if first == Some(subject) => (
                subject_order_candidates(&ctx, Some(predicate), (k, ties), descending)?,
                "subject",
            ),
            Pred::Var(p) if first == Some(subject) && p != subject && p != object => {
                let Some(candidates) = subject_order_candidates(&ctx, None, (k, ties), descending)?
                else {
                    return Ok(None);
                };
                self.notes.borrow_mut().push(format!(
                    "top-k: {} candidate rows read in subject order from the predicate index",
                    candidates.subjects.len()
                ));
                let predicates = candidates
                    .predicates
                    .iter()
                    .map(|&p| ctx.store.predicate_term(p))
                    .collect();
                let mut table = candidates.into_table(subject, object);
                table.set_column(p, predicates);
                return Ok(Some(table));
            }
            _ => return Ok(None),
        };
        let Some(candidates) = candidates else {
            return Ok(None);
        };
        self.notes.borrow_mut().push(format!(
            "top-k: {} candidate rows read in {order} order from the predicate index",
            candidates.subjects.len()
        ));
        Ok(Some(candidates.into_table(subject, object)))
    }
}

/// Which rows of the last object (or subject) a top-k's candidates must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ties {
    /// All of them: keys after the first tell them apart.
    All,
    /// Only as many as the `k` still need: the first key is the only one, and rows tied on
    /// every key may be any of them.
    Any,
}

/// The candidates of a top-k over `?s predicate ?o` (`?s ?p ?o` when `predicate` is
/// `None`) in the order of `?s`, first (`descending` or not): every edge out of the first
/// subjects (the last, when descending) until they hold `k` rows, and out of every subject
/// appended after the sort. `None` where the dictionary is a share of a cluster's, the
/// sorted subjects hold fewer than `k` rows, or, descending, some do not sort by id.
pub fn subject_order_candidates(
    ctx: &crate::context::ExecContext<'_>,
    predicate: Option<quiver_model::PredId>,
    (k, ties): (usize, Ties),
    descending: bool,
) -> Result<Option<Candidates>, QueryError> {
    let dictionary = ctx.store.dictionary();
    if dictionary.share().is_some() {
        return Ok(None);
    }
    let base = dictionary.base_len();
    let ordered_below = dictionary.rank(&[TAG_LANG]).min(base);
    let predicates: Vec<quiver_model::PredId> = match predicate {
        Some(p) => vec![p],
        None => (0..ctx.store.predicate_count() as quiver_model::PredId).collect(),
    };
    // Of each predicate's sorted subjects, the first `k` (the last, descending): a subject
    // among the first `k` distinct subjects of the union is among the first `k` of every
    // list that holds it. And every subject appended after the sort.
    let mut ordered: Vec<Id> = Vec::new();
    let mut appended: Vec<Id> = Vec::new();
    for (i, &p) in predicates.iter().enumerate() {
        ctx.tick(i)?;
        // Sorted, as the index keeps them (checking would cost a pass over every list).
        let subjects = ctx.graph.predicate_subjects(p);
        debug_assert!(subjects.is_sorted());
        let sorting = subjects.partition_point(|&id| (id as u64) < ordered_below);
        let after = subjects.partition_point(|&id| (id as u64) < base);
        if descending && sorting < after {
            return Ok(None);
        }
        let sorted = &subjects[..sorting];
        ordered.extend_from_slice(match descending {
            false => &sorted[..sorted.len().min(k)],
            true => &sorted[sorted.len().saturating_sub(k)..],
        });
        appended.extend_from_slice(&subjects[after..]);
    }
    ordered.sort_unstable();
    ordered.dedup();
    if descending {
        ordered.reverse();
    }
    appended.sort_unstable();
    appended.dedup();
    let mut memory = ctx.reservation();
    let mut candidates = Candidates::default();
    // Every edge out of `vertex`, at most until the candidates hold `until` rows.
    let add = |vertex: Id, candidates: &mut Candidates, until: usize| {
        for &p in &predicates {
            let objects = ctx.graph.get(vertex, p, Direction::Out);
            let room = until.saturating_sub(candidates.subjects.len());
            let objects = &objects[..objects.len().min(room)];
            candidates
                .subjects
                .extend(std::iter::repeat_n(vertex, objects.len()));
            candidates
                .predicates
                .extend(std::iter::repeat_n(p, objects.len()));
            candidates.objects.extend_from_slice(objects);
        }
    };
    for (i, &vertex) in ordered.iter().enumerate() {
        if candidates.subjects.len() >= k {
            break;
        }
        if i % 256 == 255 {
            ctx.check()?;
            memory.try_resize(candidates.subjects.len() * 3 * ID_BYTES)?;
        }
        let until = match ties {
            Ties::All => usize::MAX,
            Ties::Any => k,
        };
        add(vertex, &mut candidates, until);
    }
    if candidates.subjects.len() < k {
        return Ok(None);
    }
    for (i, &vertex) in appended.iter().enumerate() {
        ctx.tick(i)?;
        // Every row of a subject appended after the sort: its place is not known yet.
        add(vertex, &mut candidates, usize::MAX);
    }
    memory.try_resize(candidates.subjects.len() * 3 * ID_BYTES)?;
    Ok(Some(candidates))
}

/// The candidates of a top-k over the one pattern `?s predicate ?o` in the order of `?o`,
/// first (`descending` or not; see the module doc), read from `ctx.graph` in the order of
/// `ctx.store`'s dictionary: the subjects and objects of the first objects (the last, when
/// descending) until they hold `k` rows, and of every object appended after the sort.
/// `None` where the dictionary is a share of a cluster's (whose ids do not sort), the
/// sorted objects hold fewer than `k` rows, or, descending, some do not sort by id. A cluster's worker runs it on its partition, whose objects are those it
/// holds the records of.
pub fn object_order_candidates(
    ctx: &crate::context::ExecContext<'_>,
    predicate: quiver_model::PredId,
    (k, ties): (usize, Ties),
    descending: bool,
) -> Result<Option<Candidates>, QueryError> {
    // Sorted, as the index keeps them (patched lists are merged in order); checking would
    // cost a pass over the whole list, far more than the rows read.
    let objects = ctx.graph.predicate_objects(predicate);
    debug_assert!(objects.is_sorted());
    let dictionary = ctx.store.dictionary();
    if dictionary.share().is_some() {
        // A share of a cluster's dictionary: ids do not sort like terms.
        return Ok(None);
    }
    let base = dictionary.base_len();
    let ordered_below = dictionary.rank(&[TAG_LANG]).min(base);
    let mut memory = ctx.reservation();
    let mut subjects: Vec<Id> = Vec::new();
    let mut values: Vec<Id> = Vec::new();
    let add = |value: Id, subjects: &mut Vec<Id>, values: &mut Vec<Id>, room: usize| {
        let found = ctx.graph.get(value, predicate, Direction::In);
        let found = &found[..found.len().min(room)];
        subjects.extend_from_slice(found);
        values.extend(std::iter::repeat_n(value, found.len()));
    };
    let sorting = objects.partition_point(|&id| (id as u64) < ordered_below);
    let appended = objects.partition_point(|&id| (id as u64) < base);
    if descending && sorting < appended {
        // Typed or language-tagged literals, which sort last: their ids do not tell which.
        return Ok(None);
    }
    let in_order: Box<dyn Iterator<Item = &Id>> = match descending {
        false => Box::new(objects[..sorting].iter()),
        true => Box::new(objects[..sorting].iter().rev()),
    };
    for (i, &value) in in_order.enumerate() {
        if subjects.len() >= k {
            break;
        }
        if i % 256 == 255 {
            ctx.check()?;
            memory.try_resize(subjects.len() * 2 * ID_BYTES)?;
        }
        let room = match ties {
            Ties::All => usize::MAX,
            Ties::Any => k.saturating_sub(subjects.len()),
        };
        add(value, &mut subjects, &mut values, room);
    }
    if subjects.len() < k {
        return Ok(None);
    }
    for (i, &value) in objects[appended..].iter().enumerate() {
        ctx.tick(i)?;
        // Every row of an object appended after the sort: its place is not known yet.
        add(value, &mut subjects, &mut values, usize::MAX);
    }
    memory.try_resize(subjects.len() * 2 * ID_BYTES)?;
    Ok(Some(Candidates {
        subjects,
        objects: values,
        predicates: Vec::new(),
    }))
}

/// The rows of a pattern `?s p ?o` a top-k reads in object or subject order: a subject and
/// an object per row (and its predicate, when read in subject order).
#[derive(Debug, Default)]
pub struct Candidates {
    pub subjects: Vec<Id>,
    pub objects: Vec<Id>,
    pub predicates: Vec<quiver_model::PredId>,
}

impl Candidates {
    /// The rows as a table of the pattern's subject and object variables.
    pub fn into_table(self, subject: crate::table::VarId, object: crate::table::VarId) -> Table {
        Table {
            vars: vec![subject, object],
            rows: self.subjects.len(),
            columns: vec![self.subjects, self.objects],
        }
    }
}
