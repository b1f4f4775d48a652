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

use oxrdf::Term;
use quiver_model::Id;
use quiver_store::Store;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::algebra::Expression;
use spargebra::term::GroundTerm;

use crate::algebra::{GraphRef, Operator};
use crate::bgp::Vars;
use crate::dataset::DatasetScope;
use crate::error::QueryError;
use crate::explore::{ExecContext, StepProfile};
use crate::group::{group, GroupProfile};
use crate::join::minus;
use crate::path::PathProfile;
use crate::table::{Table, VarId, UNBOUND};

mod expressions;
mod seeded;

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
                let batched = match expression {
                    Expression::Exists(pattern) => self.filter_exists(&table, pattern, false),
                    Expression::Not(inner) => match &**inner {
                        Expression::Exists(pattern) => self.filter_exists(&table, pattern, true),
                        _ => Ok(None),
                    },
                    _ => Ok(None),
                };
                let table = match batched {
                    Ok(Some(table)) => Ok(table),
                    Ok(None) => Ok(self.filter(table, expression)),
                    Err(error) => Err(error),
                };
                self.active_graph.set(outer);
                table?
            }
            Operator::Union(a, b) => union(self.evaluate(a)?, self.evaluate(b)?),
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
}

/// The rows of `a` then those of `b`, over the variables of both.
fn union(a: Table, b: Table) -> Table {
    let mut vars = a.vars.clone();
    vars.extend(b.vars.iter().filter(|v| !a.vars.contains(v)));
    let mut result = a.reshape(&vars);
    result.append(b.reshape(&vars));
    result
}

fn ground_term(term: &GroundTerm) -> Term {
    match term {
        GroundTerm::NamedNode(n) => n.clone().into(),
        GroundTerm::Literal(l) => l.clone().into(),
        #[allow(unreachable_patterns)]
        _ => Term::from(oxrdf::NamedNode::new_unchecked("urn:quiver:unsupported")),
    }
}
