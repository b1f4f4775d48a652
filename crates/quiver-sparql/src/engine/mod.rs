//! The public face of the engine: prepare a query once, execute it many times.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oxrdf::{Term, Triple, Variable};
use quiver_store::Store;
use spargebra::algebra::QueryDataset;
use spargebra::term::TriplePattern;

use crate::bgp::Vars;
use crate::context::{CheckHook, QueryState};
use crate::dataset::DatasetScope;
use crate::error::QueryError;
use crate::exec::{BgpProfile, Evaluator, GroupProfile, PathProfile};
use crate::memory::{MemoryBudget, MemoryPool};
use crate::operator::{ExistsOperators, Operator};
use crate::table::{Table, VarId};

mod construct;
mod prepare;

use construct::construct;
use prepare::reasoning_note;
pub use prepare::{parse_query, prepare, prepare_query};

/// Options for preparing a query.
#[derive(Debug, Clone, Default)]
pub struct PrepareOptions {
    pub base_iri: Option<String>,
    /// A user plan (Wukong plan-file text) for the query's basic graph pattern.
    pub plan: Option<String>,
    /// An RDF dataset that replaces the query's own `FROM` / `FROM NAMED` clauses (the
    /// protocol's `default-graph-uri` / `named-graph-uri`).
    pub dataset: Option<QueryDataset>,
    /// Prepare on one partition of a partitioned store, whose basic graph patterns these
    /// partitions run (the same as [`ExecOptions::partitions`]): counts and DISTINCTs are
    /// read from the index only where the partitions' counts add up, since the
    /// coordinator's graph holds only a part of the data, and the sizes of the constants'
    /// records the coordinator lacks are asked of the partitions, in one batch, for the
    /// planner.
    pub partitions: Option<Arc<dyn crate::partitions::BgpPartitions>>,
}

impl PrepareOptions {
    /// Whether the query is prepared on one partition of a partitioned store.
    pub fn partitioned(&self) -> bool {
        self.partitions.is_some()
    }
}

/// Options for one execution.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    pub threads: usize,
    pub timeout: Option<Duration>,
    /// Fail when a result has more rows than this.
    pub max_results: Option<usize>,
    /// Set to true from another thread to cancel the query.
    pub cancel: Option<Arc<AtomicBool>>,
    /// The most bytes the query's operators may hold at once (tables, hash tables, sort
    /// buffers, group states); going over it stops the query with
    /// [`QueryError::MemoryLimit`].
    pub max_memory: Option<usize>,
    /// The pool the query's memory comes from, shared with the other queries in flight
    /// (a server's); `None`: a pool of `max_memory` bytes of the query's own.
    pub pool: Option<Arc<MemoryPool>>,
    /// The budget to charge instead of a fresh one from the pool (several queries can
    /// share one; a test can read it after the query).
    #[doc(hidden)]
    pub budget: Option<Arc<MemoryBudget>>,
    /// Called on every check of the query's limits (tests: cancel at a chosen check).
    #[doc(hidden)]
    pub check_hook: Option<CheckHook>,
    /// The accelerator that runs heavy exploration steps (`--device gpu`); `None`: the CPU.
    pub device: Option<Arc<dyn crate::device::BgpDevice>>,
    /// The executor of basic graph patterns over a partitioned store; `None`: this store.
    pub partitions: Option<Arc<dyn crate::partitions::BgpPartitions>>,
    /// What calls remote endpoints for `SERVICE` (`quiver-federation`'s HTTP client);
    /// `None`: a query with SERVICE fails with [`QueryError::ServiceRefused`].
    pub service: Option<Arc<dyn crate::service::ServiceClient>>,
    /// The run is for EXPLAIN: executors that pay to record what they did record it (a
    /// cluster's workers, whose messages then carry their records, [`ExecutionProfile`]'s
    /// per-worker steps).
    pub explain: bool,
}

impl Default for ExecOptions {
    fn default() -> Self {
        Self {
            threads: 1,
            timeout: None,
            max_results: None,
            cancel: None,
            max_memory: None,
            pool: None,
            budget: None,
            check_hook: None,
            device: None,
            partitions: None,
            service: None,
            explain: false,
        }
    }
}

impl ExecOptions {
    /// The memory budget of one run: the one given, or a fresh one from the pool (a pool
    /// of `max_memory` bytes of its own when none is given).
    pub fn query_budget(&self) -> Arc<MemoryBudget> {
        match (&self.budget, &self.pool) {
            (Some(budget), _) => Arc::clone(budget),
            (None, Some(pool)) => pool.budget(),
            (None, None) => MemoryBudget::new(self.max_memory),
        }
    }
}

#[derive(Debug, Clone)]
enum Form {
    /// SELECT: the projected variables, shared with each run's solutions (a light query
    /// runs in microseconds, and copying their names was a few allocations of them), and
    /// their columns (`usize::MAX - 1` for a variable the pattern does not bind).
    Select(Arc<[Variable]>, Arc<[VarId]>),
    Ask,
    Construct(Vec<TriplePattern>),
    /// DESCRIBE: the resources bound to these variables.
    Describe(Vec<Variable>),
}

/// A parsed, resolved and planned query, bound to the store it was prepared on.
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    form: Form,
    /// Shared by clones: EXISTS operators are found by the address of their pattern in
    /// this tree (and in theirs), which a deep copy would change.
    operator: Arc<Operator>,
    vars: Vars,
    exists: Arc<ExistsOperators>,
    dataset: DatasetScope,
    /// The query's base IRI, which `IRI()` resolves against.
    base_iri: Option<oxiri::Iri<String>>,
    plan_micros: f64,
    /// The version of the store it was prepared on ([`Store::version`]): constants were
    /// resolved to that version's ids, and a constant it lacked made a pattern empty.
    store_version: u64,
    /// The view (asserted or entailed default graph) it was prepared on: class and
    /// statistics ids differ between them.
    store_view: quiver_store::View,
    /// Whether it has a SERVICE (its time is a remote endpoint's, however cheap its last
    /// run was).
    calls_services: bool,
}

/// The answer of a query.
pub enum QueryResults<'a> {
    Solutions(Solutions<'a>),
    Boolean(bool),
    Graph(Vec<Triple>),
}

/// SELECT results: variables and rows of terms (decoded lazily, row by row).
pub struct Solutions<'a> {
    pub variables: Arc<[Variable]>,
    table: Table,
    store: StoreRef<'a>,
    /// Terms computed by the query (see `eval::LocalTerms`).
    locals: Vec<Term>,
}

/// The store solutions decode their ids with: borrowed, or shared (solutions that outlive
/// the caller's borrow: the Python package's).
enum StoreRef<'a> {
    Borrowed(&'a Store),
    Shared(Arc<Store>),
}

impl std::ops::Deref for StoreRef<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        match self {
            StoreRef::Borrowed(store) => store,
            StoreRef::Shared(store) => store,
        }
    }
}

/// What happened during an execution, for EXPLAIN.
#[derive(Debug, Clone, Default)]
pub struct ExecutionProfile {
    pub plan_micros: f64,
    pub execute_micros: f64,
    pub bgps: Vec<BgpProfile>,
    pub groups: Vec<GroupProfile>,
    pub paths: Vec<PathProfile>,
    /// What other operators did (top-k), one line each.
    pub notes: Vec<String>,
    /// The most bytes the query's operators held at once.
    pub peak_memory: usize,
    /// Rows built in all: every operator's output and every exploration step's, rounds
    /// repeated under a LIMIT included (the work a plan did, whatever the result's size).
    pub rows_built: usize,
}

impl PreparedQuery {
    /// Microseconds spent parsing, resolving and planning.
    pub fn plan_micros(&self) -> f64 {
        self.plan_micros
    }

    /// Runs the query. `store` must be the store the query was prepared on.
    pub fn execute<'a>(
        &self,
        store: &'a Store,
        options: &ExecOptions,
    ) -> Result<QueryResults<'a>, QueryError> {
        self.run(store, options, false).map(|(results, _)| results)
    }

    /// Runs the query and reports what each step did.
    pub fn execute_profiled<'a>(
        &self,
        store: &'a Store,
        options: &ExecOptions,
    ) -> Result<(QueryResults<'a>, ExecutionProfile), QueryError> {
        self.run(store, options, true)
    }

    /// Runs the query; the profile's BGPs and the reasoning note are left out but when
    /// `profiling`.
    fn run<'a>(
        &self,
        store: &'a Store,
        options: &ExecOptions,
        profiling: bool,
    ) -> Result<(QueryResults<'a>, ExecutionProfile), QueryError> {
        if store.version() != self.store_version {
            return Err(QueryError::Plan(
                "the query was prepared on another version of the store (it changed since): prepare it again".into(),
            ));
        }
        if store.view() != self.store_view {
            return Err(QueryError::Plan(format!(
                "the query was prepared on the {} default graph, and is run on the {}: prepare it again",
                self.store_view.name(),
                store.view().name()
            )));
        }
        // The clock is read only where something uses it: a light query runs in a few
        // microseconds, and a read costs tens of nanoseconds on a virtual machine.
        let started = (profiling || options.timeout.is_some()).then(Instant::now);
        let deadline = options
            .timeout
            .zip(started)
            .map(|(t, started)| (started + t, t.as_secs_f64()));
        let budget = options.query_budget();
        let state = QueryState::new(
            deadline,
            options.cancel.clone(),
            budget.clone(),
            options.check_hook.clone(),
        )
        .with_step_times(profiling);
        let mut evaluator = Evaluator::new(
            store,
            &self.vars,
            &self.exists,
            options.threads.max(1),
            &state,
        );
        evaluator.dataset = self.dataset.clone();
        evaluator.device = options.device.clone();
        evaluator.partitions = options.partitions.clone();
        evaluator.trace_partitions = options.explain;
        evaluator.profiling = profiling;
        evaluator.service = options.service.clone();
        if let Some(base) = &self.base_iri {
            evaluator.expressions = quiver_expr::EvalContext::new().with_base_iri(base.clone());
        }
        if let (Form::Select(..), Some(cap)) = (&self.form, options.max_results) {
            evaluator.cap_results(&self.operator, cap);
        }
        if let Form::Ask = &self.form {
            // One solution answers ASK: the operators stop at it where they can.
            evaluator.ask_for(1);
        }
        let mut table = evaluator.evaluate(&self.operator)?;
        let results = match &self.form {
            Form::Ask => QueryResults::Boolean(table.rows > 0),
            Form::Select(variables, columns) => {
                if let Some(cap) = options.max_results {
                    if table.rows > cap {
                        return Err(QueryError::TooManyResults(cap));
                    }
                }
                table = table.into_reshape(columns);
                QueryResults::Solutions(Solutions {
                    variables: Arc::clone(variables),
                    table,
                    store: StoreRef::Borrowed(store),
                    locals: evaluator.take_local_terms(),
                })
            }
            Form::Construct(template) => QueryResults::Graph(construct(
                &evaluator,
                &table,
                template,
                options.max_results,
            )?),
            Form::Describe(variables) => {
                let vars: Vec<VarId> = variables
                    .iter()
                    .filter_map(|v| evaluator.vars.get(v))
                    .collect();
                let ids = vars
                    .iter()
                    .filter_map(|&var| table.column(var))
                    .flat_map(|column| column.iter().copied());
                QueryResults::Graph(crate::describe::describe(
                    &evaluator,
                    ids,
                    options.max_results,
                )?)
            }
        };
        let profile = ExecutionProfile {
            plan_micros: self.plan_micros,
            execute_micros: started.map_or(0.0, |started| started.elapsed().as_secs_f64() * 1e6),
            bgps: evaluator.profiles.take(),
            groups: evaluator.group_profiles.take(),
            paths: evaluator.path_profiles.take(),
            notes: profiling
                .then(|| reasoning_note(store))
                .flatten()
                .into_iter()
                .chain(evaluator.notes.take())
                .collect(),
            peak_memory: budget.peak(),
            rows_built: evaluator.rows_built.get(),
        };
        Ok((results, profile))
    }

    /// Whether the query has a SERVICE pattern: it waits on remote endpoints, so a server
    /// must not run it on a thread that serves other requests.
    pub fn calls_services(&self) -> bool {
        self.calls_services
    }

    /// The rows the plan expects to build in all ([`crate::operator::estimate::estimated_work`]),
    /// or [`crate::operator::estimate::UNKNOWN_ROWS`] for a query with an EXISTS pattern
    /// (evaluated once per row, at a cost its operator does not tell) and for DESCRIBE
    /// (a resource's description may hold any number of triples). A server runs an
    /// uncached query whose work is small on the request's own thread.
    pub fn estimated_work(&self) -> f64 {
        if self.exists.is_empty() && !matches!(self.form, Form::Describe(_)) {
            crate::operator::estimate::estimated_work(&self.operator)
        } else {
            crate::operator::estimate::UNKNOWN_ROWS
        }
    }

    /// The query form in lower case: `select`, `ask`, `construct` or `describe`.
    pub fn form_name(&self) -> &'static str {
        match self.form {
            Form::Select(..) => "select",
            Form::Ask => "ask",
            Form::Construct(_) => "construct",
            Form::Describe(_) => "describe",
        }
    }

    /// A one-line summary of the plan, for logs: the form and the operators' nesting
    /// (see [`crate::operator::summary`]).
    pub fn plan_summary(&self) -> String {
        format!(
            "{} {}",
            self.form_name().to_ascii_uppercase(),
            crate::operator::summary::summary(&self.operator)
        )
    }

    /// The operator tree, for EXPLAIN.
    pub fn operator(&self) -> &Operator {
        &self.operator
    }

    /// A variable's name.
    pub fn var_name(&self, var: VarId) -> &str {
        self.vars.name(var)
    }
}

impl Solutions<'_> {
    /// These solutions holding `store`, the store they were computed on, instead of
    /// borrowing it: they may then outlive the borrow. Fails for another store.
    pub fn with_shared_store(self, store: &Arc<Store>) -> Result<Solutions<'static>, QueryError> {
        if !std::ptr::eq(&*self.store, &**store) {
            return Err(QueryError::Plan(
                "the solutions were computed on another store".into(),
            ));
        }
        Ok(Solutions {
            variables: self.variables,
            table: self.table,
            store: StoreRef::Shared(Arc::clone(store)),
            locals: self.locals,
        })
    }

    pub fn len(&self) -> usize {
        self.table.rows
    }

    pub fn is_empty(&self) -> bool {
        self.table.rows == 0
    }

    /// The term of an id the query computed (an id of [`Solutions::id`] that is not
    /// [`crate::table::UNBOUND`] and not below the store's `terms()`).
    pub fn computed_term(&self, id: quiver_model::Id) -> Option<&Term> {
        if id == crate::table::UNBOUND || (id as u64) < self.store.terms() {
            return None;
        }
        self.locals.get((crate::table::UNBOUND - 1 - id) as usize)
    }

    /// Row `row` as terms, one per variable (`None` when unbound).
    pub fn row(&self, row: usize) -> Vec<Option<Term>> {
        (0..self.variables.len())
            .map(|c| self.term(self.table.columns[c][row]))
            .collect()
    }

    /// The term of an id of [`Solutions::id`]: a store term, a term the query computed, or
    /// `None` for an unbound cell.
    pub fn term(&self, id: quiver_model::Id) -> Option<Term> {
        if id == crate::table::UNBOUND {
            None
        } else if (id as u64) < self.store.terms() {
            self.store.term(id)
        } else {
            self.locals
                .get((crate::table::UNBOUND - 1 - id) as usize)
                .cloned()
        }
    }

    /// Visits every row as borrowed terms, in order, without allocating per term: a block
    /// of rows at a time, each column's distinct ids decoded once where they repeat
    /// ([`crate::row_terms`]). This is what the Python package's columns and benchmarks use.
    pub fn for_each_row(&self, f: impl FnMut(&[Option<oxrdf::TermRef<'_>>])) {
        self.for_each_row_in(0..self.table.rows, f);
    }

    /// [`Solutions::for_each_row`] over a range of rows: disjoint ranges can be decoded on
    /// several threads at once (e.g. to materialise a large result in parallel).
    pub fn for_each_row_in(
        &self,
        rows: std::ops::Range<usize>,
        f: impl FnMut(&[Option<oxrdf::TermRef<'_>>]),
    ) {
        let decoding = crate::row_terms::Decoding {
            dictionary: self.store.dictionary(),
            terms: self.store.terms(),
            locals: &self.locals,
            rows: self.table.rows,
            columns: (0..self.variables.len())
                .map(|c| &self.table.columns[c][..self.table.rows])
                .collect(),
        };
        decoding.for_each_row_in(rows, f);
    }

    /// Visits the terms of one column over a range of rows, in order, through one
    /// dictionary cursor (`None` when unbound): what a client decoding a column lazily,
    /// block by block, uses instead of a lookup per cell.
    pub fn for_each_term_in(
        &self,
        column: usize,
        rows: std::ops::Range<usize>,
        mut f: impl FnMut(quiver_model::Id, Option<oxrdf::TermRef<'_>>),
    ) {
        let dictionary = self.store.dictionary();
        let mut cursor = dictionary.cursor();
        let ids = &self.table.columns[column];
        let end = rows.end.min(self.table.rows);
        let ids = ids.get(rows.start..end).unwrap_or_default();
        for (at, &id) in ids.iter().enumerate() {
            dictionary.prefetch_ahead(ids, at);
            if id == crate::table::UNBOUND {
                f(id, None);
            } else if (id as u64) < self.store.terms() {
                let term = cursor
                    .term(id)
                    .and_then(|bytes| quiver_model::decode_term(bytes).ok());
                match term {
                    Some(triple @ quiver_model::DecodedTerm::Triple { .. }) => {
                        f(id, Some(triple.to_term().as_ref()))
                    }
                    term => f(id, term.and_then(|t| t.as_term_ref())),
                }
            } else {
                let term = self.locals.get((crate::table::UNBOUND - 1 - id) as usize);
                f(id, term.map(Term::as_ref));
            }
        }
    }

    /// The ids of result column `column` (one per row; [`crate::table::UNBOUND`] where
    /// unbound, ids at or above the store's `terms()` for computed terms).
    pub fn column_ids(&self, column: usize) -> &[quiver_model::Id] {
        &self.table.columns[column][..self.table.rows]
    }

    /// The store the solutions' ids belong to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The raw ids of row `row` (for comparisons without decoding).
    pub fn row_ids(&self, row: usize) -> Vec<quiver_model::Id> {
        self.table.row(row)
    }

    /// The raw id of variable `column` in row `row` (no allocation, unlike `row_ids`).
    pub fn id(&self, row: usize, column: usize) -> quiver_model::Id {
        self.table.columns[column][row]
    }
}
