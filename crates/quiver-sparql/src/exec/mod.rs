//! Executing the operator tree over columnar tables, one file per operator.
//!
//! Basic graph patterns run through the exploration executor (`bgp/`); joins and
//! OPTIONALs whose right side is a basic graph pattern continue the exploration from the
//! left rows (seeded); everything else is a relational operator over tables. Terms are
//! decoded from the dictionary only where an expression needs their value. Execution
//! never compiles: EXISTS patterns come compiled with the query ([`ExistsOperators`]).
//!
//! [`Evaluator::evaluate`] is every operator's boundary: it checks the query's limits
//! before and after the operator, and charges the operator's output table to the memory
//! budget until the operator above it has finished with it.

use std::cell::{Cell, RefCell};

use oxrdf::Term;
use quiver_model::Id;
use quiver_store::Store;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::Expression;

use crate::bgp::Vars;
use crate::context::{ensure_addressable, table_bytes, ExecContext, QueryState};
use crate::dataset::{DatasetScope, GraphRef};
use crate::error::QueryError;
use crate::memory::Reservation;
use crate::operator::{ExistsOperators, Operator};
use crate::table::{Table, VarId, UNBOUND};
use distinct::distinct;
use group::group;
use minus::minus;
use scope::Scope;
use union::union;

pub use bgp::profile::StepProfile;
pub use bgp::BgpProfile;
pub use group::GroupProfile;
pub use path::PathProfile;

pub mod bgp;
mod computed_terms;
mod distinct;
pub mod edges;
mod exists_alone;
mod expression;
mod extend;
mod filter;
mod graph_var;
pub mod group;
mod group_extremes;
mod group_first;
mod group_pairs;
mod group_partitions;
mod id_filter;
pub mod index_aggregate;
mod join;
mod key_index;
mod left_join;
mod memo_filter;
mod minus;
mod order_by;
pub mod ordered_scan;
mod pair_filter;
pub mod parallel;
pub mod path;
pub mod scope;
mod service;
mod sort_key;
mod text;
mod top_k;
mod union;
mod values;

/// The term of an id: the dictionary's, or one of `locals`, the terms the query computed
/// (numbered downward from `UNBOUND - 1`); `None` for UNBOUND.
pub(crate) fn decode(store: &Store, locals: &[Term], id: Id) -> Option<Term> {
    if id == UNBOUND {
        return None;
    }
    if (id as u64) < store.terms() {
        return store.term(id);
    }
    locals.get((UNBOUND - 1 - id) as usize).cloned()
}

/// Terms computed by expressions that the dictionary does not hold, numbered downward
/// from `UNBOUND - 1` so they never collide with dictionary ids, and the ids of computed
/// terms that it does hold, remembered.
#[derive(Default)]
pub struct LocalTerms {
    terms: Vec<Term>,
    index: FxHashMap<Term, Id>,
    /// Computed terms found in the store, up to [`FOUND_TERMS`]: a GROUP BY computes one
    /// count per group, mostly the same few values, each a dictionary search otherwise.
    found: FxHashMap<Term, Id>,
}

/// Computed terms found in the store that a query remembers (a bound on its memory).
const FOUND_TERMS: usize = 1 << 16;

/// The fewest rows [`Evaluator::grow_until`] asks for at first.
const FIRST_ASK: usize = 64;

/// Bytes charged per computed term besides its text (the term, its index entry).
const LOCAL_TERM_BYTES: usize = 2 * std::mem::size_of::<Term>() + 16;

/// State of one query execution.
pub struct Evaluator<'a> {
    pub store: &'a Store,
    pub threads: usize,
    /// The accelerator that runs heavy exploration steps, if any.
    pub device: Option<std::sync::Arc<dyn crate::device::BgpDevice>>,
    /// The executor of basic graph patterns over a partitioned store, if any.
    pub partitions: Option<std::sync::Arc<dyn crate::partitions::BgpPartitions>>,
    /// Ask the partitions what each worker did (EXPLAIN).
    pub trace_partitions: bool,
    /// What calls remote endpoints for SERVICE; `None`: SERVICE is refused.
    pub service: Option<std::sync::Arc<dyn crate::service::ServiceClient>>,
    /// Deadline, cancellation, memory budget and recorded errors, shared by all threads.
    pub state: &'a QueryState,
    /// The query's variables, EXISTS patterns' included.
    pub vars: &'a Vars,
    /// The operators of the query's EXISTS patterns.
    exists: &'a ExistsOperators,
    pub locals: RefCell<LocalTerms>,
    local_bytes: RefCell<Reservation<'a>>,
    pub expressions: quiver_expr::EvalContext,
    pub profiles: RefCell<Vec<BgpProfile>>,
    /// Whether to keep what each BGP did in [`Evaluator::profiles`] (its patterns' texts
    /// and steps): not when nobody reads it, as a light query's copies of its patterns'
    /// texts cost about as much as one of its steps.
    pub profiling: bool,
    pub group_profiles: RefCell<Vec<GroupProfile>>,
    pub path_profiles: RefCell<Vec<PathProfile>>,
    /// What other operators did worth reporting (top-k), for EXPLAIN.
    pub notes: RefCell<Vec<String>>,
    /// The dataset the query reads.
    pub dataset: DatasetScope,
    /// The output tables operators returned, charged until their parent finishes.
    held: RefCell<Vec<Reservation<'a>>>,
    /// Rows the operator about to run is asked for at most (a LIMIT passed down through
    /// operators that keep every row).
    pending_limit: Cell<Option<usize>>,
    /// Whether an operator asked for at most some rows stopped before its end since this
    /// was last cleared: its rows may not be all there are ([`Evaluator::grow_until`]).
    cut: Cell<bool>,
    /// Rows built so far: operators' outputs and exploration steps' (for EXPLAIN, and
    /// for tests that bound the work a plan does).
    pub rows_built: Cell<usize>,
    /// The only columns the operator about to run must return, when it is a basic graph
    /// pattern over partitions (what a GROUP BY above it reads): the rest stay on the
    /// workers.
    pending_columns: RefCell<Option<Vec<VarId>>>,
    /// The columns by which that pattern's rows may be counted where they are, when the
    /// GROUP BY (or DISTINCT) above it reads no other (`PartitionedBgp::count_by`).
    pending_count_by: RefCell<Option<Vec<VarId>>>,
    /// The counts of `pending_count_by` are not read (`PartitionedBgp::distinct_only`).
    pending_distinct_only: Cell<bool>,
    /// The rows that answer the next pattern's caller as they come, under its LIMIT
    /// ([`crate::partitions::PartitionedBgp::answers`]).
    pending_answers: Cell<Option<usize>>,
    /// The first rows in an order, all a top-k right above that pattern reads
    /// (`PartitionedBgp::top`).
    pending_top: RefCell<Option<crate::top_rows::TopRows>>,
    /// The counted columns only MIN or MAX read, which that pattern's partitions may
    /// narrow before counting (`PartitionedBgp::extremes`).
    pending_extremes: RefCell<Option<crate::extreme_values::ExtremeValues>>,
    /// The ids a FILTER right above that pattern can pass, which its partitions may check
    /// where they find the rows (`PartitionedBgp::passes`).
    pending_passes: RefCell<Vec<crate::passing_ids::PassingIds>>,
    /// FILTER (NOT) EXISTS of one edge the next pattern's partitions decide
    /// (`exec/filter.rs`); taken by that pattern, which tells its caller they ran.
    pending_checks: RefCell<Vec<crate::edge_checks::EdgeCheck>>,
    /// What the partitions counted for it: the rows it returned stand for these many each.
    counted: RefCell<Option<Vec<u64>>>,
    /// The result cap and the operators whose row count is at most the result's (every
    /// row they produce is a result row): they fail as soon as they exceed it.
    result_cap: Option<(usize, FxHashSet<usize>)>,
}

impl<'a> Evaluator<'a> {
    pub fn new(
        store: &'a Store,
        vars: &'a Vars,
        exists: &'a ExistsOperators,
        threads: usize,
        state: &'a QueryState,
    ) -> Self {
        Self {
            store,
            threads,
            device: None,
            partitions: None,
            trace_partitions: false,
            service: None,
            state,
            vars,
            exists,
            locals: RefCell::default(),
            local_bytes: RefCell::new(state.budget().reservation()),
            expressions: quiver_expr::EvalContext::new(),
            profiles: RefCell::default(),
            profiling: true,
            group_profiles: RefCell::default(),
            path_profiles: RefCell::default(),
            notes: RefCell::default(),
            dataset: DatasetScope::default(),
            held: RefCell::default(),
            pending_limit: Cell::new(None),
            cut: Cell::new(false),
            rows_built: Cell::new(0),
            pending_columns: RefCell::new(None),
            pending_count_by: RefCell::new(None),
            pending_distinct_only: Cell::new(false),
            pending_answers: Cell::new(None),
            pending_top: RefCell::new(None),
            pending_extremes: RefCell::new(None),
            pending_passes: RefCell::new(Vec::new()),
            pending_checks: RefCell::new(Vec::new()),
            counted: RefCell::new(None),
            result_cap: None,
        }
    }

    /// Makes `root`'s result fail with [`QueryError::TooManyResults`] as soon as an operator
    /// whose every row is a result row produces more than `cap` rows.
    pub fn cap_results(&mut self, root: &Operator, cap: usize) {
        let mut spine = FxHashSet::default();
        let mut pending = vec![root];
        while let Some(operator) = pending.pop() {
            spine.insert(operator as *const Operator as usize);
            match operator {
                Operator::Project(inner, _)
                | Operator::OrderBy(inner, _)
                | Operator::Extend { inner, .. } => pending.push(inner),
                Operator::Union(a, b) => pending.extend([&**a, &**b]),
                _ => {}
            }
        }
        self.result_cap = Some((cap, spine));
    }

    /// The context of an operator reading `graph`.
    pub fn context(&self, graph: GraphRef) -> ExecContext<'_> {
        ExecContext {
            store: self.store,
            graph: self.dataset.index(self.store, graph),
            threads: self.threads,
            state: self.state,
            device: self.device.as_deref(),
        }
    }

    /// The context of an operator that reads no graph.
    pub fn ctx(&self) -> ExecContext<'_> {
        self.context(GraphRef::Default)
    }

    /// The term of an id (dictionary or computed); `None` for UNBOUND.
    pub fn term(&self, id: Id) -> Option<Term> {
        decode(self.store, &self.locals.borrow().terms, id)
    }

    /// The computed terms, indexed by `UNBOUND - 1 - id`, taken from the evaluator (whose
    /// query is over: its results hold them from now on, not a copy).
    pub fn take_local_terms(&self) -> Vec<Term> {
        std::mem::take(&mut self.locals.borrow_mut().terms)
    }

    /// The id of a term: its dictionary id, else a query-local one. When no id is left
    /// between the dictionary's and UNBOUND, or the memory budget is spent, the query
    /// records the error (the next check returns it) and the term is UNBOUND meanwhile.
    pub fn intern(&self, term: &Term) -> Id {
        let mut locals = self.locals.borrow_mut();
        if let Some(&id) = locals.found.get(term).or_else(|| locals.index.get(term)) {
            return id;
        }
        if let Some(id) = self.store.term_id(term.as_ref()) {
            if locals.found.len() < FOUND_TERMS {
                locals.found.insert(term.clone(), id);
            }
            return id;
        }
        let Some(id) = local_id(locals.terms.len(), self.store.terms()) else {
            self.state.fail(QueryError::Unsupported(format!(
                "the query computes more new terms than the {} ids the dictionary leaves free",
                (UNBOUND as u64).saturating_sub(1 + self.store.terms())
            )));
            return UNBOUND;
        };
        let bytes = LOCAL_TERM_BYTES + 2 * crate::memory::term_text_bytes(term);
        if let Err(error) = self.local_bytes.borrow_mut().try_grow(bytes) {
            self.state.fail(error);
            return UNBOUND;
        }
        locals.terms.push(term.clone());
        locals.index.insert(term.clone(), id);
        id
    }

    /// Runs one operator: checks before and after, charges its output to the memory
    /// budget (held until the operator that asked for it finishes) and applies the
    /// result cap.
    pub fn evaluate(&self, operator: &Operator) -> Result<Table, QueryError> {
        let limit = self.pending_limit.take();
        let ctx = self.ctx();
        ctx.check()?;
        let mark = self.held.borrow().len();
        let table = self.operate(operator, limit);
        self.held.borrow_mut().truncate(mark);
        let table = table?;
        self.built(table.rows);
        ctx.check()?;
        ensure_addressable(table.rows)?;
        let mut reservation = self.state.budget().reservation();
        reservation.try_grow(table_bytes(table.rows, table.columns.len()))?;
        self.held.borrow_mut().push(reservation);
        if let Some((cap, spine)) = &self.result_cap {
            if table.rows > *cap && spine.contains(&(operator as *const Operator as usize)) {
                return Err(QueryError::TooManyResults(*cap));
            }
        }
        Ok(table)
    }

    /// Runs `f` and then releases what the operators it evaluated still hold: for
    /// evaluations whose tables are dropped before the current operator ends (EXISTS).
    pub(crate) fn scoped<T>(&self, f: impl FnOnce() -> T) -> T {
        let mark = self.held.borrow().len();
        let result = f();
        self.held.borrow_mut().truncate(mark);
        result
    }

    /// Streaming under a LIMIT without a pipeline: evaluates `inner` asked for `limit`
    /// rows, then for four times more each round, until `finish` of its rows gives
    /// `limit` rows or `inner` was not cut short (it had no more). `finish` must keep
    /// rows in, never add more than the rows it is given could give: a filter, a join, a
    /// DISTINCT. The rounds repeat the work of the ones before, at most a third more than
    /// the last round's; each round's tables are released before the next.
    pub(crate) fn grow_until(
        &self,
        inner: &Operator,
        limit: usize,
        finish: impl Fn(Table) -> Result<Table, QueryError>,
    ) -> Result<Table, QueryError> {
        self.grow_until_with(inner, limit, || {}, finish)
    }

    /// [`Evaluator::grow_until`], calling `before` ahead of each round's evaluation of
    /// `inner` (to leave it what it takes from the evaluator, such as edge checks).
    pub(crate) fn grow_until_with(
        &self,
        inner: &Operator,
        limit: usize,
        before: impl Fn(),
        finish: impl Fn(Table) -> Result<Table, QueryError>,
    ) -> Result<Table, QueryError> {
        let outer = self.cut.get();
        let mut asked = limit.max(FIRST_ASK);
        let mut rounds = 0;
        loop {
            rounds += 1;
            self.cut.set(false);
            let (table, inner_cut) = self.scoped(|| {
                before();
                self.pending_limit.set(Some(asked));
                let table = self.evaluate(inner)?;
                let inner_cut = self.cut.get();
                Ok::<_, QueryError>((finish(table)?, inner_cut))
            })?;
            if !inner_cut || table.rows >= limit || asked == usize::MAX {
                if rounds > 1 {
                    self.notes.borrow_mut().push(format!(
                        "LIMIT {limit}: the input was asked for {asked} rows after {} rounds",
                        rounds - 1
                    ));
                }
                self.cut.set(outer || self.cut.get());
                return Ok(table);
            }
            asked = asked.saturating_mul(4);
        }
    }

    /// Asks the next operator evaluated for at most `rows` rows (ASK needs one).
    pub fn ask_for(&self, rows: usize) {
        self.pending_limit.set(Some(rows));
    }

    /// Counts `rows` built.
    pub(crate) fn built(&self, rows: usize) {
        self.rows_built
            .set(self.rows_built.get().saturating_add(rows));
    }

    /// Records that an operator asked for `limit` rows may have stopped before its end.
    pub(crate) fn note_cut(&self, rows: usize, limit: Option<usize>) {
        if limit.is_some_and(|limit| rows >= limit) {
            self.cut.set(true);
        }
    }

    /// The rows a BGP under the current operator must find at most.
    fn bgp_limit(&self, operator: &Operator, limit: Option<usize>) -> Option<usize> {
        limit.or_else(|| {
            let (cap, spine) = self.result_cap.as_ref()?;
            spine
                .contains(&(operator as *const Operator as usize))
                .then(|| cap.saturating_add(1))
        })
    }

    fn operate(&self, operator: &Operator, limit: Option<usize>) -> Result<Table, QueryError> {
        Ok(match operator {
            Operator::Bgp(planned) => {
                let limit = self.bgp_limit(operator, limit);
                self.bgp(planned, Table::unit(), false, limit)?
            }
            Operator::Path(pattern) => self.path(pattern, None)?,
            Operator::Join(left, right) => self.join_operator(left, right, limit)?,
            Operator::LeftJoin {
                left,
                right,
                filter,
            } => {
                // Every left row gives at least one row: the limit's rows of it are enough.
                self.pending_limit.set(limit);
                let left = self.evaluate(left)?;
                if left.rows == 0 {
                    return Ok(join::empty_join(left, right));
                }
                self.left_join(left, right, filter.as_ref())?
            }
            Operator::Filter(expression, inner) => {
                self.filter_operator(expression, inner, limit)?
            }
            Operator::Union(a, b) => {
                self.pending_limit.set(limit);
                let a = self.evaluate(a)?;
                let b = match limit {
                    Some(limit) if a.rows >= limit => {
                        self.cut.set(true);
                        Table::empty(crate::operator::estimate::possible_vars(b))
                    }
                    _ => {
                        self.pending_limit.set(limit.map(|limit| limit - a.rows));
                        self.evaluate(b)?
                    }
                };
                union(&self.ctx(), a, b)?
            }
            Operator::Extend { .. } => {
                self.pending_limit.set(limit);
                self.extend(operator)?
            }
            Operator::Minus(left, right) => match self.minus_by_check(left, right, limit)? {
                filter::Minused::Done(table) => table,
                filter::Minused::Left(evaluated) => {
                    let left = match evaluated {
                        Some(table) => table,
                        None => self.evaluate(left)?,
                    };
                    if left.rows == 0 {
                        return Ok(left);
                    }
                    let right = self.evaluate(right)?;
                    minus(&self.ctx(), left, &right)?
                }
            },
            Operator::GraphVar { var, branches } => self.graph_var(*var, branches)?,
            Operator::Values { vars, rows } => self.values(vars, rows)?,
            Operator::Project(inner, vars) => {
                self.pending_limit.set(limit);
                self.evaluate(inner)?.into_reshape(vars)
            }
            Operator::Distinct(inner) => match limit {
                Some(limit) => self.grow_until(inner, limit, |table| distinct(&self.ctx(), &table))?,
                None => {
                    // Over partitions, the distinct rows of a pattern's projection may be
                    // found on each worker before the rows leave it (its counts unread).
                    if let Some(keys) = self.distinct_keys(inner) {
                        *self.pending_count_by.borrow_mut() = Some(keys);
                        self.pending_distinct_only.set(true);
                    }
                    let table = self.evaluate(inner);
                    self.pending_count_by.borrow_mut().take();
                    self.pending_distinct_only.set(false);
                    self.counted.borrow_mut().take();
                    distinct(&self.ctx(), &table?)?
                }
            },
            Operator::OrderBy(inner, keys) => {
                let table = self.evaluate(inner)?;
                self.order_by(table, keys)?
            }
            Operator::TopK { inner, keys, k } => {
                let table = match self.top_k_candidates(inner, keys, *k)? {
                    Some(candidates) => candidates,
                    None => {
                        *self.pending_top.borrow_mut() = self.top_over_partitions(inner, keys, *k);
                        let table = self.evaluate(inner);
                        self.pending_top.borrow_mut().take();
                        table?
                    }
                };
                top_k::top_k(self, table, keys, *k)?
            }
            Operator::Slice {
                inner,
                start,
                length,
            } => {
                self.pending_limit
                    .set(length.map(|length| start.saturating_add(length)));
                // What the slice keeps is its whole result, however its input was cut.
                let cut = self.cut.get();
                let table = self.evaluate(inner)?;
                self.cut.set(cut);
                let end = length.map_or(table.rows, |l| start.saturating_add(l));
                table.slice(*start, end)
            }
            Operator::Group {
                inner,
                keys,
                aggregates,
            } => {
                if let Some(table) = self.extremes_by_order(inner, keys, aggregates)? {
                    return Ok(table);
                }
                if let Some(limit) = limit {
                    if let Some(table) = self.first_groups_seeded(inner, keys, aggregates, limit)? {
                        return Ok(table);
                    }
                }
                if let Some(table) = self.group_over_pairs(inner, keys, aggregates)? {
                    return Ok(table);
                }
                if let Some(table) = self.group_over_partitions(inner, keys, aggregates)? {
                    return Ok(table);
                }
                let table = self.evaluate(inner)?;
                let (table, profile) = group(self, &table, keys, aggregates)?;
                self.group_profiles.borrow_mut().push(profile);
                table
            }
            Operator::IndexAggregate(aggregate)
                if self.partitions.is_some()
                    && !aggregate.adds_up(self.store.rdf_type())
                    && !crate::statistics_counts::tell(self.store, aggregate) =>
            {
                return Err(partitioned_unsupported(
                    "a count read from the index that does not add up over partitions (prepare with `partitioned`)",
                ))
            }
            Operator::IndexAggregate(aggregate) => {
                let table = self.index_aggregate(aggregate, limit)?;
                self.note_cut(table.rows, limit);
                table
            }
            Operator::Service(service) => self.service(service, None, limit)?,
            Operator::Text(text) => self.text(text)?,
        })
    }
}

impl Scope for Evaluator<'_> {
    fn ctx(&self) -> ExecContext<'_> {
        Evaluator::ctx(self)
    }

    fn expression(&self, expression: &Expression, table: &Table, row: usize) -> Option<Term> {
        Evaluator::expression(self, expression, table, row)
    }

    fn term(&self, id: Id) -> Option<Term> {
        Evaluator::term(self, id)
    }

    fn intern(&self, term: &Term) -> Id {
        Evaluator::intern(self, term)
    }

    fn var(&self, variable: &oxrdf::Variable) -> Option<VarId> {
        self.vars.get(variable)
    }

    fn is_visible(&self, var: VarId) -> bool {
        var < self.vars.len() && !self.vars.is_hidden(var)
    }

    fn note(&self, note: String) {
        self.notes.borrow_mut().push(note);
    }
}

/// The id of the computed term numbered `n` (counting from 0) over a dictionary of
/// `terms` terms: ids run down from `UNBOUND - 1`; `None` once they would reach the
/// dictionary's.
fn local_id(n: usize, terms: u64) -> Option<Id> {
    let id = (UNBOUND as u64).checked_sub(1)?.checked_sub(n as u64)?;
    (id >= terms).then(|| Id::try_from(id).ok()).flatten()
}

/// What a partitioned store does not answer yet: `what` reads the graph outside a basic
/// graph pattern, and the coordinator's graph holds only a part of the data.
pub(crate) fn partitioned_unsupported(what: &str) -> QueryError {
    QueryError::Unsupported(format!("{what} over a partitioned store"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_ids_stop_before_the_dictionarys() {
        let max = UNBOUND as u64;
        assert_eq!(local_id(0, 10), Some(UNBOUND - 1));
        assert_eq!(local_id(5, 10), Some(UNBOUND - 6));
        // The last free id is the dictionary's size; one more would collide.
        let last = (max - 1 - 10) as usize;
        assert_eq!(local_id(last, 10), Some(10 as Id));
        assert_eq!(local_id(last + 1, 10), None);
        assert_eq!(local_id(usize::MAX, 0), None);
    }
}
