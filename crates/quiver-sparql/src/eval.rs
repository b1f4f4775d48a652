//! Evaluating the operator tree over columnar tables.
//!
//! Basic graph patterns run through the exploration executor; joins and OPTIONALs whose
//! right side is a basic graph pattern continue the exploration from the left rows
//! (seeded); everything else is a relational operator over tables. Terms are decoded from
//! the dictionary only where an expression needs their value.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use oxrdf::{Term, Variable};
use quiver_model::Id;
use quiver_store::Store;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use spargebra::term::GroundTerm;

use crate::algebra::{certain_vars, Compiler, GraphRef, Operator, PlannedBgp};
use crate::bgp::Vars;
use crate::dataset::DatasetScope;
use crate::error::QueryError;
use crate::explore::{explore, ExecContext, StepProfile};
use crate::group::{group, GroupProfile};
use crate::join::{hash_join, minus, ROW_VAR};
use crate::path::{End, PathPattern, PathProfile, PathTerm};
use crate::table::{Table, VarId, UNBOUND};

/// The profile of one basic graph pattern's run.
#[derive(Debug, Clone)]
pub struct BgpProfile {
    pub patterns: Vec<String>,
    pub seeded: bool,
    pub steps: Vec<StepProfile>,
}

/// Terms computed by expressions that the dictionary does not hold, numbered downward
/// from `UNBOUND - 1` so they never collide with dictionary ids.
#[derive(Default)]
pub struct LocalTerms {
    terms: Vec<Term>,
    index: FxHashMap<Term, Id>,
}

/// State of one query execution.
pub struct Evaluator<'a> {
    pub store: &'a Store,
    pub threads: usize,
    pub deadline: Option<(Instant, f64)>,
    pub cancel: Option<&'a AtomicBool>,
    pub vars: RefCell<Vars>,
    pub locals: RefCell<LocalTerms>,
    pub expressions: quiver_expr::EvalContext,
    pub profiles: RefCell<Vec<BgpProfile>>,
    pub group_profiles: RefCell<Vec<GroupProfile>>,
    pub path_profiles: RefCell<Vec<PathProfile>>,
    /// The dataset the query reads.
    pub dataset: DatasetScope,
    exists_cache: RefCell<FxHashMap<(usize, GraphRef), Rc<Operator>>>,
    /// The graph the filter being evaluated reads (for its EXISTS patterns).
    pub(crate) active_graph: Cell<GraphRef>,
}

impl<'a> Evaluator<'a> {
    pub fn new(
        store: &'a Store,
        vars: Vars,
        threads: usize,
        deadline: Option<(Instant, f64)>,
        cancel: Option<&'a AtomicBool>,
    ) -> Self {
        Self {
            store,
            threads,
            deadline,
            cancel,
            vars: RefCell::new(vars),
            locals: RefCell::default(),
            expressions: quiver_expr::EvalContext::new(),
            profiles: RefCell::default(),
            group_profiles: RefCell::default(),
            dataset: DatasetScope::default(),
            path_profiles: RefCell::default(),
            exists_cache: RefCell::default(),
            active_graph: Cell::new(GraphRef::Default),
        }
    }

    fn context(&self, graph: GraphRef) -> ExecContext<'_> {
        ExecContext {
            store: self.store,
            graph: self.dataset.index(self.store, graph),
            threads: self.threads,
            deadline: self.deadline,
            cancel: self.cancel,
        }
    }

    /// The term of an id (dictionary or computed); `None` for UNBOUND.
    pub fn term(&self, id: Id) -> Option<Term> {
        if id == UNBOUND {
            return None;
        }
        if (id as u64) < self.store.terms() {
            return self.store.term(id);
        }
        let index = (UNBOUND - 1 - id) as usize;
        self.locals.borrow().terms.get(index).cloned()
    }

    /// The computed terms, indexed by `UNBOUND - 1 - id`.
    pub fn local_terms(&self) -> Vec<Term> {
        self.locals.borrow().terms.clone()
    }

    /// The id of a term: its dictionary id, else a query-local one.
    pub fn intern(&self, term: &Term) -> Id {
        if let Some(id) = self.store.term_id(term.as_ref()) {
            return id;
        }
        let mut locals = self.locals.borrow_mut();
        if let Some(&id) = locals.index.get(term) {
            return id;
        }
        let id = UNBOUND - 1 - locals.terms.len() as Id;
        locals.terms.push(term.clone());
        locals.index.insert(term.clone(), id);
        id
    }

    pub fn evaluate(&self, operator: &Operator) -> Result<Table, QueryError> {
        self.context(GraphRef::Default).check()?;
        Ok(match operator {
            Operator::Bgp(planned) => self.bgp(planned, Table::unit(), false)?,
            Operator::Path(pattern) => self.path(pattern, None)?,
            Operator::Join(left, right) => {
                let left = self.evaluate(left)?;
                self.join(left, right)?
            }
            Operator::LeftJoin {
                left,
                right,
                filter,
            } => {
                let left = self.evaluate(left)?;
                self.left_join(left, right, filter.as_ref())?
            }
            Operator::Filter(expression, inner, graph) => {
                let table = self.evaluate(inner)?;
                let outer = self.active_graph.replace(*graph);
                let table = self.filter(table, expression);
                self.active_graph.set(outer);
                table
            }
            Operator::Union(a, b) => {
                let a = self.evaluate(a)?;
                let b = self.evaluate(b)?;
                let mut vars = a.vars.clone();
                vars.extend(b.vars.iter().filter(|v| !a.vars.contains(v)));
                let mut result = a.reshape(&vars);
                result.append(b.reshape(&vars));
                result
            }
            Operator::Extend { .. } => self.extend(operator)?,
            Operator::Minus(left, right) => {
                let left = self.evaluate(left)?;
                let right = self.evaluate(right)?;
                minus(left, &right)
            }
            Operator::GraphVar { var, branches } => self.graph_var(*var, branches)?,
            Operator::Values { vars, rows } => {
                let mut table = Table::empty(vars.clone());
                for row in rows {
                    for (c, value) in row.iter().enumerate() {
                        let id = value
                            .as_ref()
                            .map_or(UNBOUND, |v| self.intern(&ground_term(v)));
                        table.columns[c].push(id);
                    }
                    table.rows += 1;
                }
                table
            }
            Operator::Project(inner, vars) => self.evaluate(inner)?.reshape(vars),
            Operator::Distinct(inner) => {
                let table = self.evaluate(inner)?;
                let mut seen = FxHashSet::default();
                let keep: Vec<u32> = (0..table.rows)
                    .filter(|&row| seen.insert(table.row(row)))
                    .map(|row| row as u32)
                    .collect();
                table.gather(&keep)
            }
            Operator::OrderBy(inner, keys) => {
                let table = self.evaluate(inner)?;
                self.order_by(table, keys)
            }
            Operator::Slice {
                inner,
                start,
                length,
            } => {
                let table = self.evaluate(inner)?;
                let end = length.map_or(table.rows, |l| start.saturating_add(l));
                table.slice(*start, end)
            }
            Operator::Group {
                inner,
                keys,
                aggregates,
            } => {
                let table = self.evaluate(inner)?;
                let (table, profile) = group(self, &table, keys, aggregates);
                self.group_profiles.borrow_mut().push(profile);
                table
            }
        })
    }

    /// A chain of BINDs / SELECT expressions, evaluated innermost first. The expressions of
    /// one chain see one solution per row, so `BNODE(str)` gives the same blank node for the
    /// same string within a row (one scope id per row) and a fresh one in other rows.
    fn extend(&self, mut operator: &Operator) -> Result<Table, QueryError> {
        let mut chain = Vec::new();
        while let Operator::Extend {
            inner,
            var,
            expression,
        } = operator
        {
            chain.push((*var, expression));
            operator = inner;
        }
        let mut table = self.evaluate(operator)?;
        let scopes = self.expressions.fresh_scope();
        for (var, expression) in chain.into_iter().rev() {
            let column: Vec<Id> = (0..table.rows)
                .map(|row| {
                    let bindings = |variable: &Variable| self.binding(&table, row, variable);
                    let exists = |pattern: &GraphPattern| self.exists(pattern, &table, row);
                    let scope = scopes.wrapping_add(row as u64);
                    quiver_expr::evaluate_in_scope(
                        expression,
                        &bindings,
                        &exists,
                        &self.expressions,
                        scope,
                    )
                    .map_or(UNBOUND, |term| self.intern(&term))
                })
                .collect();
            match table.column_of(var) {
                Some(c) => table.columns[c] = column,
                None => {
                    table.vars.push(var);
                    table.columns.push(column);
                }
            }
        }
        Ok(table)
    }

    /// `GRAPH ?var`: each named graph's rows with `var` bound to the graph's name (rows
    /// that bind `var` inside to another term are dropped, unbound ones get the name),
    /// concatenated.
    fn graph_var(&self, var: VarId, branches: &[(Id, Operator)]) -> Result<Table, QueryError> {
        let mut result = Table::empty(vec![var]);
        for (name, branch) in branches {
            let mut table = self.evaluate(branch)?;
            match table.column_of(var) {
                Some(c) => {
                    let keep: Vec<u32> = (0..table.rows)
                        .filter(|&row| matches!(table.columns[c][row], id if id == *name || id == UNBOUND))
                        .map(|row| row as u32)
                        .collect();
                    table = table.gather(&keep);
                    table.columns[c].fill(*name);
                }
                None => {
                    table.vars.push(var);
                    table.columns.push(vec![*name; table.rows]);
                }
            }
            let mut vars = result.vars.clone();
            vars.extend(table.vars.iter().filter(|v| !result.vars.contains(v)));
            result = result.reshape(&vars);
            result.append(table.reshape(&vars));
        }
        Ok(result)
    }

    fn bgp(&self, planned: &PlannedBgp, input: Table, seeded: bool) -> Result<Table, QueryError> {
        let steps = match (&planned.seeded, seeded) {
            (Some((_, steps)), true) => steps,
            _ => &planned.alone,
        };
        let mut profile = Vec::new();
        let result = explore(
            &planned.bgp,
            steps,
            input,
            &self.context(planned.graph),
            &mut profile,
        )?;
        self.profiles.borrow_mut().push(BgpProfile {
            patterns: planned
                .bgp
                .patterns
                .iter()
                .map(|p| p.text.clone())
                .collect(),
            seeded,
            steps: profile,
        });
        Ok(result)
    }

    /// Whether `left` can seed the exploration of `right`: its seed columns are complete.
    fn seedable<'o>(&self, left: &Table, right: &'o Operator) -> Option<&'o PlannedBgp> {
        let Operator::Bgp(planned) = right else {
            return None;
        };
        let (seeds, _) = planned.seeded.as_ref()?;
        let complete = seeds
            .iter()
            .all(|&v| left.column(v).is_some_and(|c| !c.contains(&UNBOUND)));
        // Other shared variables must be complete too, or exploration could miss matches.
        let shared_complete = planned
            .bgp
            .vars()
            .iter()
            .filter_map(|&v| left.column(v))
            .all(|c| !c.contains(&UNBOUND));
        (complete && shared_complete).then_some(planned)
    }

    fn join(&self, left: Table, right: &Operator) -> Result<Table, QueryError> {
        if let Some(planned) = self.seedable(&left, right) {
            return self.bgp(planned, left, true);
        }
        let right = self.evaluate_right(&left, right)?;
        Ok(hash_join(&left, &right, false))
    }

    /// The right side of a join: a path between variables walks only from the values the
    /// left rows bind to one of its ends.
    fn evaluate_right(&self, left: &Table, right: &Operator) -> Result<Table, QueryError> {
        match right {
            Operator::Path(pattern) => self.path(pattern, Some(left)),
            other => self.evaluate(other),
        }
    }

    /// A property path pattern; with `left`, seeded by its rows where they bind an end
    /// variable in every row (the end with fewer distinct values).
    fn path(&self, pattern: &PathPattern, left: Option<&Table>) -> Result<Table, QueryError> {
        if pattern.graph == GraphRef::Missing {
            return Ok(Table::empty(pattern.vars()));
        }
        let started = Instant::now();
        let resolve = |end: &PathTerm| match end {
            PathTerm::Var(v) => End::Var(*v),
            PathTerm::Term(term) => End::Const(self.intern(term)),
        };
        let (subject, object) = (resolve(&pattern.subject), resolve(&pattern.object));
        let seeds = match (subject, object, left) {
            (End::Var(s), End::Var(o), Some(left)) => [s, o]
                .into_iter()
                .filter_map(|var| {
                    let column = left.column(var)?;
                    if column.contains(&UNBOUND) {
                        return None;
                    }
                    let mut values = column.to_vec();
                    values.sort_unstable();
                    values.dedup();
                    Some((var, values))
                })
                .min_by_key(|(_, values)| values.len()),
            _ => None,
        };
        let context = self.context(pattern.graph);
        let mut profile = PathProfile {
            pattern: pattern.text.clone(),
            ..PathProfile::default()
        };
        let table = crate::path::evaluate(
            subject,
            &pattern.path,
            object,
            seeds,
            context.graph,
            &context,
            &mut profile,
        )?;
        profile.micros = started.elapsed().as_secs_f64() * 1e6;
        self.path_profiles.borrow_mut().push(profile);
        Ok(table)
    }

    fn left_join(
        &self,
        left: Table,
        right: &Operator,
        filter: Option<&Expression>,
    ) -> Result<Table, QueryError> {
        let right_vars = certain_or_all_vars(right);
        if let Some(planned) = self.seedable(&left, right) {
            let mut seeded = left.clone();
            seeded.vars.push(ROW_VAR);
            seeded.columns.push((0..left.rows as Id).collect());
            let mut joined = self.bgp(planned, seeded, true)?;
            if let Some(filter) = filter {
                joined = self.filter(joined, filter);
            }
            let rows = joined
                .column(ROW_VAR)
                .map(<[Id]>::to_vec)
                .unwrap_or_default();
            let mut matched = vec![false; left.rows];
            for row in rows {
                matched[row as usize] = true;
            }
            let mut vars: Vec<VarId> = joined
                .vars
                .iter()
                .copied()
                .filter(|&v| v != ROW_VAR)
                .collect();
            vars.extend(
                right_vars
                    .iter()
                    .filter(|v| !vars.contains(v))
                    .collect::<Vec<_>>(),
            );
            let mut result = joined.reshape(&vars);
            let unmatched: Vec<u32> = (0..left.rows)
                .filter(|&r| !matched[r])
                .map(|r| r as u32)
                .collect();
            result.append(left.gather(&unmatched).reshape(&vars));
            return Ok(result);
        }
        let right = self.evaluate_right(&left, right)?;
        let mut vars = left.vars.clone();
        vars.extend(right.vars.iter().filter(|v| !left.vars.contains(v)));
        let joined = hash_join(&left, &right, true);
        // Keep joined rows passing the filter; remember which left rows matched.
        let mut joined_with_rows = joined;
        if let Some(filter) = filter {
            let keep: Vec<u32> = (0..joined_with_rows.rows)
                .filter(|&row| self.truth(filter, &joined_with_rows, row))
                .map(|row| row as u32)
                .collect();
            joined_with_rows = joined_with_rows.gather(&keep);
        }
        let mut matched = vec![false; left.rows];
        for &row in joined_with_rows.column(ROW_VAR).unwrap_or(&[]) {
            matched[row as usize] = true;
        }
        let mut result = joined_with_rows.reshape(&vars);
        let unmatched: Vec<u32> = (0..left.rows)
            .filter(|&r| !matched[r])
            .map(|r| r as u32)
            .collect();
        result.append(left.gather(&unmatched).reshape(&vars));
        Ok(result)
    }

    fn filter(&self, table: Table, expression: &Expression) -> Table {
        let keep: Vec<u32> = (0..table.rows)
            .filter(|&row| self.truth(expression, &table, row))
            .map(|row| row as u32)
            .collect();
        table.gather(&keep)
    }

    fn truth(&self, expression: &Expression, table: &Table, row: usize) -> bool {
        let bindings = |variable: &Variable| self.binding(table, row, variable);
        let exists = |pattern: &GraphPattern| self.exists(pattern, table, row);
        quiver_expr::filter(expression, &bindings, &exists, &self.expressions)
    }

    pub(crate) fn expression(
        &self,
        expression: &Expression,
        table: &Table,
        row: usize,
    ) -> Option<Term> {
        let bindings = |variable: &Variable| self.binding(table, row, variable);
        let exists = |pattern: &GraphPattern| self.exists(pattern, table, row);
        quiver_expr::evaluate(expression, &bindings, &exists, &self.expressions)
    }

    fn binding(&self, table: &Table, row: usize, variable: &Variable) -> Option<Term> {
        let var = self.vars.borrow().get(variable)?;
        self.term(table.value(row, var))
    }

    /// FILTER (NOT) EXISTS: runs the pattern, on the graph of the filter, seeded with the
    /// current row. Each pattern is compiled once per graph; the cache is not borrowed while
    /// the pattern runs, so EXISTS may nest.
    fn exists(&self, pattern: &GraphPattern, table: &Table, row: usize) -> bool {
        let graph = self.active_graph.get();
        let key = (pattern as *const GraphPattern as usize, graph);
        let cached = self.exists_cache.borrow().get(&key).cloned();
        let operator = match cached {
            Some(operator) => operator,
            None => {
                let vars = std::mem::take(&mut *self.vars.borrow_mut());
                let mut compiler = Compiler::new(self.store, None);
                compiler.vars = vars;
                compiler.dataset = self.dataset.clone();
                let compiled = compiler.compile(pattern, graph);
                *self.vars.borrow_mut() = compiler.vars;
                let Ok(operator) = compiled else {
                    return false;
                };
                let operator = Rc::new(operator);
                self.exists_cache.borrow_mut().insert(key, operator.clone());
                operator
            }
        };
        let seed = table.gather(&[row as u32]);
        let result = match &*operator {
            Operator::Bgp(planned) => {
                let bound: Vec<VarId> = seed
                    .vars
                    .iter()
                    .copied()
                    .filter(|&v| seed.value(0, v) != UNBOUND)
                    .collect();
                let mut local = planned.clone();
                local.seeded = Some((
                    bound.clone(),
                    crate::planner::plan(
                        &planned.bgp,
                        self.store,
                        self.context(planned.graph).graph,
                        &bound,
                        1.0,
                    ),
                ));
                self.bgp(&local, seed.reshape(&bound), true)
            }
            other => self.evaluate(other).map(|t| hash_join(&seed, &t, false)),
        };
        result.is_ok_and(|t| t.rows > 0)
    }

    fn order_by(&self, table: Table, keys: &[OrderExpression]) -> Table {
        let values: Vec<Vec<Option<Term>>> = (0..table.rows)
            .map(|row| {
                keys.iter()
                    .map(|key| match key {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                            self.expression(e, &table, row)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut order: Vec<u32> = (0..table.rows as u32).collect();
        order.sort_by(|&a, &b| {
            for (k, key) in keys.iter().enumerate() {
                let ordering = quiver_expr::order_terms(
                    values[a as usize][k].as_ref(),
                    values[b as usize][k].as_ref(),
                );
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
        table.gather(&order)
    }
}

fn certain_or_all_vars(operator: &Operator) -> Vec<VarId> {
    match operator {
        Operator::Bgp(planned) => planned.bgp.vars(),
        Operator::Path(pattern) => pattern.vars(),
        other => certain_vars(other),
    }
}

fn ground_term(term: &GroundTerm) -> Term {
    match term {
        GroundTerm::NamedNode(n) => n.clone().into(),
        GroundTerm::Literal(l) => l.clone().into(),
        #[allow(unreachable_patterns)]
        _ => Term::from(oxrdf::NamedNode::new_unchecked("urn:quiver:unsupported")),
    }
}
