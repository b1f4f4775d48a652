//! FILTERs over several variables (`STRLEN(STR(?a)) > STRLEN(STR(?b)) + 6`,
//! `?price1 > ?price2 * 1.5`), evaluated row by row on the query's workers, each part of the
//! expression that reads one variable computed once per id of that variable.
//!
//! [`super::id_filter`] decides a filter that reads one variable once per id. A filter over
//! two varying variables has as many outcomes as pairs of ids, so it runs per row; but its
//! parts over one variable (`STRLEN(STR(?a))`, `?price2 * 1.5`, a bare `?a`, whose term is
//! otherwise decoded from the dictionary for every row) take as many values as that
//! variable takes ids, usually far fewer than the rows. Each such part, the largest that
//! reads that one variable, is computed once per distinct id before the rows are
//! evaluated, and the rows read it from that memo: the expression is rewritten to read
//! each memo as a variable whose name no query can write (`#memo0`, …). An error in a part
//! (SPARQL's evaluation error) reads as that variable unbound, which every operator treats
//! as the same error; and a part is the same function of its one variable however often it
//! is computed, as only parts decidable per id are memoised.
//!
//! Only filters whose every conjunct is decidable per id run here (no EXISTS, which runs a
//! pattern per row on the evaluator's own state, and nothing random or fresh, whose value
//! differs per call); the others keep the sequential path of `filter.rs`. A part is
//! memoised when its variable takes at most [`MEMO_IDS`] distinct ids and at most half as
//! many as the rows: past that, computing it per row costs about as much, and the memo's
//! terms would weigh like a column of the table. A memo's terms are held against the
//! query's memory budget as memory it can do without: where the budget refuses them, the
//! part is computed per row instead, with the same answers.

use oxrdf::{Term, Variable};
use quiver_model::Id;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::Expression;

use quiver_store::Store;

use super::parallel::map_morsels;
use super::{decode, Evaluator, ExecContext};
use crate::bgp::Vars;
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::operands::{map_operands, per_id};
use crate::table::Table;

/// Distinct ids a memoised part is computed for at most.
const MEMO_IDS: usize = 1 << 16;

/// A part of an expression that reads one variable, computed for each id of its column.
struct Memo<'t> {
    /// The variable the rewritten expression reads it as.
    name: Variable,
    /// The column of the variable the part reads.
    column: &'t [Id],
    values: FxHashMap<Id, Option<Term>>,
}

/// What a row's evaluation reads: the memos, the table's columns and the terms (the parts
/// of the evaluator that its workers share).
struct Rows<'a, 't> {
    store: &'a Store,
    vars: &'a Vars,
    expressions: &'a quiver_expr::EvalContext,
    ctx: ExecContext<'a>,
    table: &'t Table,
    locals: &'a [Term],
    memos: Vec<Memo<'t>>,
    /// The memos' share of the query's memory budget, held until the filter is done.
    held: Reservation<'a>,
}

impl Rows<'_, '_> {
    /// The value of `variable` in `row`: a memo's, or the term of the row's id.
    fn binding(&self, row: usize, variable: &Variable) -> Option<Term> {
        if let Some(memo) = self.memos.iter().find(|memo| &memo.name == variable) {
            return memo.values.get(&memo.column[row]).cloned().flatten();
        }
        let var = self.vars.get(variable)?;
        decode(self.store, self.locals, self.table.value(row, var))
    }

    /// Whether every one of `conjuncts` is true for `row`.
    fn passes(&self, row: usize, conjuncts: &[Expression]) -> bool {
        let bindings = |variable: &Variable| self.binding(row, variable);
        conjuncts
            .iter()
            .all(|conjunct| quiver_expr::filter(conjunct, &bindings, &|_| false, self.expressions))
    }
}

impl Evaluator<'_> {
    /// The rows of `table` for which every one of `conjuncts` is true, when each is
    /// decidable per id (the module doc); `None` otherwise.
    pub(crate) fn filter_memoised(
        &self,
        table: &Table,
        conjuncts: &[&Expression],
    ) -> Result<Option<Table>, QueryError> {
        if !conjuncts.iter().all(|c| per_id(c, &mut Vec::new())) {
            return Ok(None);
        }
        let locals = self.locals.borrow();
        let ctx = self.ctx();
        let mut rows = Rows {
            store: self.store,
            vars: self.vars,
            expressions: &self.expressions,
            ctx,
            table,
            locals: &locals.terms,
            memos: Vec::new(),
            held: ctx.reservation(),
        };
        let mut rewritten = Vec::with_capacity(conjuncts.len());
        for conjunct in conjuncts {
            rewritten.push(rows.memoise(conjunct)?);
        }
        let parts = map_morsels(&rows.ctx, table.rows, |range| {
            range
                .filter(|&row| rows.passes(row, &rewritten))
                .map(|row| row as u32)
                .collect::<Vec<u32>>()
        })?;
        let keep: Vec<u32> = parts.concat();
        let evaluated: usize = rows.memos.iter().map(|memo| memo.values.len()).sum();
        self.notes.borrow_mut().push(format!(
            "filter per row: {} of {} rows kept, {} part(s) over one variable computed for {} ids",
            keep.len(),
            table.rows,
            rows.memos.len(),
            evaluated
        ));
        Ok(Some(table.gather(&keep)))
    }
}

impl<'t> Rows<'_, 't> {
    /// `expression` with each largest part that reads one variable replaced by a memo of
    /// it, where its variable's ids are few enough.
    fn memoise(&mut self, expression: &Expression) -> Result<Expression, QueryError> {
        let mut variables = Vec::new();
        let decidable = per_id(expression, &mut variables);
        if decidable && variables.len() == 1 {
            return Ok(match self.memo(expression, &variables[0])? {
                Some(name) => Expression::Variable(name),
                // Its smaller parts read the same variable, with as many ids.
                None => expression.clone(),
            });
        }
        if variables.is_empty() {
            return Ok(expression.clone());
        }
        let mut failed = None;
        let mapped = map_operands(expression, &mut |operand| {
            self.memoise(operand).unwrap_or_else(|error| {
                failed.get_or_insert(error);
                operand.clone()
            })
        });
        match failed {
            Some(error) => Err(error),
            None => Ok(mapped),
        }
    }

    /// The name of a memo of `part` (which reads `variable` only), computed for each id of
    /// its column; `None` when the variable has no column or too many ids, or when the
    /// query's memory budget refuses the memo's terms.
    fn memo(
        &mut self,
        part: &Expression,
        variable: &Variable,
    ) -> Result<Option<Variable>, QueryError> {
        let Some(column) = self
            .vars
            .get(variable)
            .and_then(|var| self.table.column(var))
        else {
            return Ok(None);
        };
        let most = MEMO_IDS.min(column.len() / 2);
        let mut distinct = FxHashSet::default();
        for &id in column {
            if distinct.insert(id) && distinct.len() > most {
                return Ok(None);
            }
        }
        let ids: Vec<Id> = distinct.into_iter().collect();
        let (store, locals, expressions) = (self.store, self.locals, self.expressions);
        let parts = map_morsels(&self.ctx, ids.len(), |range| {
            range
                .map(|i| {
                    let term = decode(store, locals, ids[i]);
                    let bindings = |v: &Variable| if v == variable { term.clone() } else { None };
                    let value = quiver_expr::evaluate(part, &bindings, &|_| false, expressions);
                    (ids[i], value)
                })
                .collect::<Vec<_>>()
        })?;
        let values: FxHashMap<Id, Option<Term>> = parts.into_iter().flatten().collect();
        let bytes = values.capacity() * (size_of::<(Id, Option<Term>)>() + 1)
            + values
                .values()
                .flatten()
                .map(term_heap_bytes)
                .sum::<usize>();
        if !self.held.try_grow_optional(bytes) {
            return Ok(None);
        }
        let name = Variable::new_unchecked(format!("#memo{}", self.memos.len()));
        self.memos.push(Memo {
            name: name.clone(),
            column,
            values,
        });
        Ok(Some(name))
    }
}

/// The bytes `term` holds on the heap (its strings), near enough for a memory budget.
fn term_heap_bytes(term: &Term) -> usize {
    match term {
        Term::NamedNode(node) => node.as_str().len(),
        Term::BlankNode(node) => node.as_str().len(),
        Term::Literal(literal) => {
            literal.value().len()
                + literal.datatype().as_str().len()
                + literal.language().map_or(0, str::len)
        }
        Term::Triple(triple) => {
            size_of::<oxrdf::Triple>()
                + match &triple.subject {
                    oxrdf::NamedOrBlankNode::NamedNode(node) => node.as_str().len(),
                    oxrdf::NamedOrBlankNode::BlankNode(node) => node.as_str().len(),
                }
                + triple.predicate.as_str().len()
                + term_heap_bytes(&triple.object)
        }
    }
}
