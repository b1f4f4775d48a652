//! Compiling the SPARQL algebra (spargebra) into Quiver's operator tree ([`crate::operator`]).
//!
//! Basic graph patterns are resolved and planned here, once, when a query is prepared:
//! each gets the plan it runs alone and, when it is the right side of a join or OPTIONAL,
//! the plan it runs seeded with the left side's bindings (graph exploration continues
//! from the rows already found instead of joining two independent results). Counts and
//! DISTINCT over one pattern that the index answers become an [`IndexAggregate`]
//! (`index_aggregate.rs`), `OPTIONAL { … } FILTER(!BOUND(?v))` becomes the NOT EXISTS
//! semi-join it means (`optional_unbound.rs`), and an ORDER BY key that repeats a SELECT
//! expression sorts by that expression's variable (`order_keys.rs`).
//!
//! [`IndexAggregate`]: crate::operator::IndexAggregate

use oxrdf::Variable;
use quiver_store::{GraphIndex, Store};
use spargebra::algebra::{Expression, GraphPattern, OrderExpression};
use spargebra::term::{NamedNodePattern, TermPattern};

use crate::bgp::{resolve, Vars};
use crate::dataset::{DatasetScope, GraphRef};
use crate::error::QueryError;
use crate::operator::{
    certain_vars, Aggregate, ExistsOperators, Operator, Path, PathPattern, PathTerm, PlannedBgp,
    ServiceEndpoint, ServicePattern,
};
use crate::planner::{plan_over, Step};
use crate::table::VarId;

mod exists;
mod graph_candidates;
mod index_aggregate;
mod join_order;
mod optional_unbound;
mod order_keys;
mod text;
pub(crate) mod triple_terms;
mod variable_equality;

/// Compiles patterns against one store.
pub struct Compiler<'a> {
    pub store: &'a Store,
    pub vars: Vars,
    /// User plans for the query's basic graph patterns, in order of appearance.
    pub user_plans: Option<Vec<Vec<Step>>>,
    /// The dataset the query reads.
    pub dataset: DatasetScope,
    /// The operators of the EXISTS patterns in the compiled expressions.
    pub exists: ExistsOperators,
    /// Compile for a partitioned store: only the index aggregates whose partitions' counts
    /// add up (see `PrepareOptions::partitions`).
    pub partitioned: bool,
    /// How the store's records spread over partitions, for the planner's cost of moving
    /// rows between them (one store: nothing moves).
    pub spread: crate::planner::Spread,
    /// Whether a SERVICE was compiled (EXISTS patterns' included).
    pub services: bool,
    next_bgp: usize,
}

impl<'a> Compiler<'a> {
    pub fn new(store: &'a Store, user_plans: Option<Vec<Vec<Step>>>) -> Self {
        Self {
            store,
            vars: Vars::default(),
            user_plans,
            dataset: DatasetScope::default(),
            exists: ExistsOperators::default(),
            partitioned: false,
            spread: crate::planner::Spread::ONE,
            services: false,
            next_bgp: 0,
        }
    }

    pub fn compile(
        &mut self,
        pattern: &GraphPattern,
        graph: GraphRef,
    ) -> Result<Operator, QueryError> {
        Ok(match pattern {
            GraphPattern::Bgp { patterns } if text::mentions(patterns) => {
                if self.user_plans.is_some() {
                    return Err(QueryError::Plan(
                        "a plan file cannot place text searches (quiver:matches)".into(),
                    ));
                }
                self.compile_with(pattern, graph, Vec::new())?.0
            }
            GraphPattern::Bgp { patterns } => Operator::Bgp(self.bgp(patterns, graph, None)?),
            GraphPattern::Join { .. } if self.user_plans.is_none() => {
                self.compile_with(pattern, graph, Vec::new())?.0
            }
            GraphPattern::Join { left, right } if path_first_but_bound_by(left, right) => {
                // The right side binds an end of the path: run it first so the path's
                // walks start only from the vertices it binds.
                let right = self.compile(right, graph)?;
                let left = self.compile(left, graph)?;
                Operator::Join(Box::new(right), Box::new(left))
            }
            GraphPattern::Join { left, right } => {
                let left = self.compile(left, graph)?;
                let right = self.compile_seeded(right, graph, &left)?;
                Operator::Join(Box::new(left), Box::new(right))
            }
            GraphPattern::LeftJoin {
                left,
                right,
                expression,
            } => {
                let left = self.compile(left, graph)?;
                self.left_join(left, right, expression, graph)?
            }
            GraphPattern::Filter { expr, inner } => {
                if let Some((not_exists, left)) = optional_unbound::as_not_exists(expr, inner) {
                    // The OPTIONAL's variables stay known (unbound in every row).
                    self.register_expression_vars(expr);
                    self.register_pattern_vars(inner);
                    let left = self.compile(left, graph)?;
                    self.compile_exists(&not_exists, graph)?;
                    return Ok(Operator::Filter(not_exists, Box::new(left)));
                }
                if self.user_plans.is_none() {
                    if let Some(rewritten) = variable_equality::rewrite(expr, inner) {
                        return self.compile(&rewritten, graph);
                    }
                }
                self.register_expression_vars(expr);
                let (inner, unused) = if self.user_plans.is_none() {
                    self.compile_with(inner, graph, join_order::split_conjuncts(expr))?
                } else {
                    (self.compile(inner, graph)?, Vec::new())
                };
                // The conjuncts left (all of them, as written, when none was used).
                let expr = if self.user_plans.is_some() || unused.len() == conjunct_count(expr) {
                    expr.clone()
                } else if unused.is_empty() {
                    return Ok(inner);
                } else {
                    join_order::conjunction(unused.into_iter().map(|c| c.expression).collect())
                        .expect("a conjunct is left")
                };
                self.compile_exists(&expr, graph)?;
                Operator::Filter(expr, Box::new(inner))
            }
            GraphPattern::Union { left, right } => Operator::Union(
                Box::new(self.compile(left, graph)?),
                Box::new(self.compile(right, graph)?),
            ),
            GraphPattern::Graph { name, inner } => match name {
                NamedNodePattern::NamedNode(name) => {
                    let id = self.store.term_id(name.as_ref().into());
                    match self.dataset.named_graph(self.store, id) {
                        // Not in the dataset: no solutions, even for an empty pattern.
                        GraphRef::Missing => Operator::Values {
                            vars: Vec::new(),
                            rows: Vec::new(),
                        },
                        graph => self.compile(inner, graph)?,
                    }
                }
                NamedNodePattern::Variable(variable) => {
                    let var = self.vars.var(variable);
                    let mut branches = Vec::new();
                    let mut names = self.dataset.named_graphs(self.store);
                    // Only on one store, and when no user plan is matched to the patterns
                    // by their order (a branch left out would shift them).
                    let text_search = matches!(&**inner, GraphPattern::Bgp { patterns } if text::mentions(patterns));
                    let one_store = !self.partitioned && self.spread.partitions == 1;
                    if one_store && self.user_plans.is_none() && !text_search {
                        names = graph_candidates::candidates(self.store, inner, names);
                    }
                    for name in names {
                        branches.push((name, self.compile(inner, GraphRef::Named(name))?));
                    }
                    Operator::GraphVar { var, branches }
                }
            },
            GraphPattern::Extend {
                inner,
                variable,
                expression,
            } => {
                let inner = self.compile(inner, graph)?;
                self.register_expression_vars(expression);
                let expression = expression.clone();
                self.compile_exists(&expression, graph)?;
                Operator::Extend {
                    inner: Box::new(inner),
                    var: self.vars.var(variable),
                    expression,
                }
            }
            GraphPattern::Minus { left, right } => Operator::Minus(
                Box::new(self.compile(left, graph)?),
                Box::new(self.compile(right, graph)?),
            ),
            GraphPattern::Values {
                variables,
                bindings,
            } => Operator::Values {
                vars: variables.iter().map(|v| self.vars.var(v)).collect(),
                rows: bindings.clone(),
            },
            GraphPattern::OrderBy { inner, expression } => {
                let keys: Vec<OrderExpression> = expression
                    .iter()
                    .map(|key| order_keys::by_bound_expression(key, inner))
                    .collect();
                for key in &keys {
                    match key {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                            self.register_expression_vars(e)
                        }
                    }
                }
                let inner = self.compile(inner, graph)?;
                for key in &keys {
                    match key {
                        OrderExpression::Asc(e) | OrderExpression::Desc(e) => {
                            self.compile_exists(e, graph)?
                        }
                    }
                }
                Operator::OrderBy(Box::new(inner), keys)
            }
            GraphPattern::Project { inner, variables } => {
                let inner = self.compile(inner, graph)?;
                Operator::Project(
                    Box::new(inner),
                    variables.iter().map(|v| self.vars.var(v)).collect(),
                )
            }
            GraphPattern::Distinct { inner } => {
                let inner = self.compile(inner, graph)?;
                let read = index_aggregate::distinct(&self.vars, &inner)
                    .filter(|read| !self.partitioned || runs_partitioned(read, self.store));
                match read {
                    Some(read) => read,
                    None => Operator::Distinct(Box::new(inner)),
                }
            }
            GraphPattern::Reduced { inner } => self.compile(inner, graph)?,
            GraphPattern::Slice {
                inner,
                start,
                length,
            } => {
                let inner = self.compile(inner, graph)?;
                let inner = match length {
                    Some(length) => top_k(&self.vars, inner, start.saturating_add(*length)),
                    None => inner,
                };
                Operator::Slice {
                    inner: Box::new(inner),
                    start: *start,
                    length: *length,
                }
            }
            GraphPattern::Path {
                subject,
                path,
                object,
            } => Operator::Path(PathPattern {
                subject: self.path_term(subject)?,
                path: Path::compile(path, self.store),
                object: self.path_term(object)?,
                graph,
                text: pattern.to_string(),
            }),
            GraphPattern::Group {
                inner,
                variables,
                aggregates,
            } => {
                let inner = self.compile(inner, graph)?;
                let keys: Vec<VarId> = variables.iter().map(|v| self.vars.var(v)).collect();
                let aggregates = aggregates
                    .iter()
                    .map(|(variable, expression)| {
                        let aggregate = Aggregate::new(expression)?;
                        if let Some(argument) = &aggregate.argument {
                            self.register_expression_vars(argument);
                            self.compile_exists(argument, graph)?;
                        }
                        Ok((self.vars.var(variable), aggregate))
                    })
                    .collect::<Result<Vec<_>, QueryError>>()?;
                let read = index_aggregate::group(&self.vars, &inner, &keys, &aggregates)
                    .filter(|read| !self.partitioned || runs_partitioned(read, self.store));
                match read {
                    Some(read) => read,
                    None => Operator::Group {
                        inner: Box::new(inner),
                        keys,
                        aggregates,
                    },
                }
            }
            GraphPattern::Service {
                name,
                inner,
                silent,
            } => Operator::Service(self.service(name, inner, *silent)),
            #[allow(unreachable_patterns)]
            other => return Err(QueryError::Unsupported(format!("{other}"))),
        })
    }

    /// Compiles the right side of a join; a basic graph pattern also gets a seeded plan.
    fn compile_seeded(
        &mut self,
        pattern: &GraphPattern,
        graph: GraphRef,
        left: &Operator,
    ) -> Result<Operator, QueryError> {
        match pattern {
            GraphPattern::Bgp { patterns } if !text::mentions(patterns) => {
                let seeds = certain_vars(left);
                Ok(Operator::Bgp(self.bgp(patterns, graph, Some(seeds))?))
            }
            other => self.compile(other, graph),
        }
    }

    /// OPTIONAL with `left` compiled: the right side gets a plan seeded by the left's rows.
    fn left_join(
        &mut self,
        left: Operator,
        right: &GraphPattern,
        expression: &Option<Expression>,
        graph: GraphRef,
    ) -> Result<Operator, QueryError> {
        let right = self.compile_seeded(right, graph, &left)?;
        let filter = expression.clone();
        if let Some(filter) = &filter {
            self.compile_exists(filter, graph)?;
        }
        Ok(Operator::LeftJoin {
            left: Box::new(left),
            right: Box::new(right),
            filter,
        })
    }

    fn bgp(
        &mut self,
        patterns: &[spargebra::term::TriplePattern],
        graph: GraphRef,
        seeds: Option<Vec<VarId>>,
    ) -> Result<PlannedBgp, QueryError> {
        let bgp = resolve(patterns, self.store, &mut self.vars);
        let user_plan = self
            .user_plans
            .as_ref()
            .and_then(|plans| plans.get(self.next_bgp).cloned());
        self.next_bgp += 1;
        let index = self.graph_index(graph);
        let alone = match user_plan {
            Some(steps) => {
                crate::plan_file::validate_plan(&steps, &bgp, &[])?;
                steps
            }
            None => plan_over(
                &bgp,
                (self.store, &self.spread.over(graph)),
                index,
                &[],
                1.0,
            ),
        };
        let mut planned = PlannedBgp {
            bgp,
            graph,
            alone,
            seeded: None,
        };
        if let Some(seeds) = seeds {
            self.seed(&mut planned, seeds);
        }
        Ok(planned)
    }

    /// `SERVICE`: the pattern kept as written (the endpoint evaluates it), its variables
    /// given ids.
    fn service(
        &mut self,
        name: &NamedNodePattern,
        inner: &GraphPattern,
        silent: bool,
    ) -> ServicePattern {
        self.services = true;
        let endpoint = match name {
            NamedNodePattern::NamedNode(iri) => ServiceEndpoint::Iri(iri.clone()),
            NamedNodePattern::Variable(v) => ServiceEndpoint::Var(self.vars.var(v)),
        };
        let mut vars = Vec::new();
        inner.on_in_scope_variable(|v| {
            if !vars.iter().any(|(w, _)| w == v) {
                vars.push((v.clone(), self.vars.var(v)));
            }
        });
        // A silent call that fails is one empty solution: nothing is certain then.
        let certain = if silent {
            Vec::new()
        } else {
            crate::operator::service::certain_pattern_vars(inner)
                .iter()
                .map(|v| self.vars.var(v))
                .collect()
        };
        ServicePattern {
            endpoint,
            pattern: inner.clone(),
            silent,
            vars,
            certain,
        }
    }

    /// Gives `planned` a plan for running seeded with rows binding `seeds`, when it shares
    /// one of them.
    fn seed(&self, planned: &mut PlannedBgp, seeds: Vec<VarId>) {
        if !planned.bgp.vars().iter().any(|v| seeds.contains(v)) {
            return;
        }
        let index = self.graph_index(planned.graph);
        let steps = plan_over(
            &planned.bgp,
            (self.store, &self.spread.over(planned.graph)),
            index,
            &seeds,
            1000.0,
        );
        planned.seeded = Some((seeds, steps));
    }

    fn path_term(&mut self, term: &TermPattern) -> Result<PathTerm, QueryError> {
        Ok(match term {
            TermPattern::Variable(v) => PathTerm::Var(self.vars.var(v)),
            TermPattern::BlankNode(b) => PathTerm::Var(self.vars.blank(b.as_str())),
            TermPattern::NamedNode(n) => PathTerm::Term(n.clone().into()),
            TermPattern::Literal(l) => PathTerm::Term(l.clone().into()),
            TermPattern::Triple(triple) if !crate::bgp::is_open(triple) => {
                match crate::bgp::closed_term(triple) {
                    Some(term) => PathTerm::Term(term),
                    None => unreachable!("a triple term without variables is a term"),
                }
            }
            other => {
                return Err(QueryError::Unsupported(format!(
                    "{other} as the end of a property path"
                )))
            }
        })
    }

    pub fn graph_index(&self, graph: GraphRef) -> &GraphIndex {
        self.dataset.index(self.store, graph)
    }

    /// Makes sure every variable an expression mentions has an id.
    fn register_pattern_vars(&mut self, pattern: &GraphPattern) {
        pattern.on_in_scope_variable(|variable| {
            self.vars.var(variable);
        });
    }

    fn register_expression_vars(&mut self, expression: &Expression) {
        let mut found: Vec<Variable> = Vec::new();
        collect_vars(expression, &mut found);
        for variable in found {
            self.vars.var(&variable);
        }
    }
}

/// The operator under a LIMIT of `k` rows (counting the OFFSET): an ORDER BY, directly or
/// under a projection, becomes a top-k, and a count read from the index that it orders by
/// first keeps only the groups that can be among its rows ([`index_aggregate::cut_counts`]).
fn top_k(vars: &Vars, operator: Operator, k: usize) -> Operator {
    match operator {
        Operator::OrderBy(mut inner, keys) => {
            index_aggregate::cut_counts(vars, &mut inner, &keys, k);
            Operator::TopK { inner, keys, k }
        }
        Operator::Project(inner, projection) => {
            Operator::Project(Box::new(top_k(vars, *inner, k)), projection)
        }
        other => other,
    }
}

/// Whether `left` is a path between two variables and `right` a basic graph pattern that
/// binds one of them.
fn path_first_but_bound_by(left: &GraphPattern, right: &GraphPattern) -> bool {
    let (
        GraphPattern::Path {
            subject, object, ..
        },
        GraphPattern::Bgp { patterns },
    ) = (left, right)
    else {
        return false;
    };
    let is_var =
        |t: &TermPattern| matches!(t, TermPattern::Variable(_) | TermPattern::BlankNode(_));
    is_var(subject)
        && is_var(object)
        && patterns.iter().any(|p| {
            [&p.subject, &p.object]
                .into_iter()
                .any(|t| t == subject || t == object)
                || matches!(&p.predicate, NamedNodePattern::Variable(v)
                    if [subject, object].iter().any(|e| matches!(e, TermPattern::Variable(w) if w == v)))
        })
}

/// The `&&` conjuncts of `expression`.
fn conjunct_count(expression: &Expression) -> usize {
    match expression {
        Expression::And(a, b) => conjunct_count(a) + conjunct_count(b),
        _ => 1,
    }
}

fn collect_vars(expression: &Expression, out: &mut Vec<Variable>) {
    match expression {
        Expression::Variable(v) | Expression::Bound(v) => out.push(v.clone()),
        Expression::Exists(_) => {}
        _ => {
            crate::operands::for_each_operand(expression, &mut |operand| collect_vars(operand, out))
        }
    }
}

/// Whether a count read from the index can run over a store's partitions: its counts add
/// up across them, or the coordinator's statistics tell them
/// ([`crate::statistics_counts`]).
fn runs_partitioned(read: &Operator, store: &quiver_store::Store) -> bool {
    matches!(read, Operator::IndexAggregate(aggregate)
        if aggregate.adds_up(store.rdf_type()) || crate::statistics_counts::tell(store, aggregate))
}
