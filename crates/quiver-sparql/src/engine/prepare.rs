//! Preparing a query: its text parsed (through the parse of its shape), its constants
//! resolved, its algebra compiled and planned; on a cluster's coordinator, the constants
//! and record sizes other owners hold asked in batches, and the query planned again with
//! them known.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oxrdf::Variable;
use quiver_store::Store;
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};
use spargebra::Query;

use crate::compile::Compiler;
use crate::dataset::DatasetScope;
use crate::error::QueryError;

use super::{Form, PrepareOptions, PreparedQuery};

/// Parses, resolves and plans `text` against `store`.
pub fn prepare(
    store: &Store,
    text: &str,
    options: &PrepareOptions,
) -> Result<PreparedQuery, QueryError> {
    crate::nesting::check(text)?;
    let started = Instant::now();
    // Without a base IRI, through the parse of the text's shape, kept for other queries
    // of that shape that differ in their IRIs (`query_shapes`).
    let query = match &options.base_iri {
        Some(base) => parse_checked(text, Some(base)).map(crate::query_shapes::Parsed::whole)?,
        None => crate::reparse::parse_again(text, crate::query_shapes::parse)
            .map_err(|e| QueryError::syntax(text, &e))?,
    };
    let star = crate::select_star::is_select_star(text);
    prepare_parsed(store, &query, options, started, star)
}

/// Parses `text` as a query, its relative IRIs resolved against `base_iri`, as [`prepare`]
/// parses it (the nesting guard, the second reading of `crate::reparse`): for callers that
/// read the algebra themselves.
pub fn parse_query(text: &str, base_iri: Option<&str>) -> Result<Query, QueryError> {
    crate::nesting::check(text)?;
    parse_checked(text, base_iri)
}

/// `text` parsed against `base_iri`, its nesting already checked.
fn parse_checked(text: &str, base_iri: Option<&str>) -> Result<Query, QueryError> {
    let parser = crate::reparse::parser(base_iri)?;
    crate::reparse::parse_again(text, |text| parser.clone().parse_query(text))
        .map_err(|e| QueryError::syntax(text, &e))
}

/// Resolves and plans an already parsed query against `store` (`options.base_iri` is not
/// used: the query carries its own). SPARQL Update evaluates its `WHERE` patterns through
/// this, as SELECT queries it builds.
pub fn prepare_query(
    store: &Store,
    query: &Query,
    options: &PrepareOptions,
) -> Result<PreparedQuery, QueryError> {
    prepare_parsed(store, query, options, Instant::now(), false)
}

fn prepare_parsed(
    store: &Store,
    query: &Query,
    options: &PrepareOptions,
    started: Instant,
    select_star: bool,
) -> Result<PreparedQuery, QueryError> {
    let dictionary = store.dictionary();
    let partitions = options
        .partitions
        .as_ref()
        .filter(|_| store.partition_info().is_some());
    if !dictionary.resolves() && partitions.is_none() {
        return plan_parsed(store, query, options, started, select_star);
    }
    // A coordinator holding its share of a cluster: the constants other owners hold are
    // asked of them in one batch, then the sizes of their records the planner wanted, and
    // the query is planned again with them known (a few times at most: a constant found
    // may lead the planner to others).
    use crate::degree::{record_foreign_degrees, Guess};
    use crate::size_free::TemplateKey;
    let plan = || plan_parsed(store, query, options, started, select_star);
    let mut degrees = HashMap::new();
    // Sizes the partitions know without asking: taken as the planner meets them, so that
    // a planning with all of them known is the only one.
    let elsewhere: Option<crate::degree::KnownSizes> = partitions.map(|partitions| {
        let partitions = Arc::clone(partitions);
        Arc::new(move |ask: &crate::degree::DegreeAsk| partitions.known_degrees(&[*ask]).pop()?)
            as crate::degree::KnownSizes
    });
    let partitions_known = elsewhere.as_ref();
    for _ in 0..4 {
        // Timed only where a cluster may ask for sizes (two clock reads of a light query's
        // few microseconds otherwise).
        let planning = partitions.map(|_| Instant::now());
        let ((prepared, misses), recorded) =
            record_foreign_degrees((&degrees, partitions_known), Guess::Average, || {
                quiver_model::dictionary::record_misses(plan)
            });
        let planning = planning.map_or(Duration::ZERO, |started| started.elapsed());
        if !misses.is_empty() && dictionary.resolves() {
            let learnt = dictionary
                .resolve_terms(misses)
                .map_err(|e| QueryError::Cluster(format!("its dictionary did not answer: {e}")))?;
            if learnt > 0 {
                continue;
            }
        }
        let Some(partitions) = partitions.filter(|_| !recorded.lacked.is_empty()) else {
            return prepared;
        };
        // Sizes kept from earlier questions cost nothing to take.
        let known = partitions.known_degrees(&recorded.lacked);
        if known.iter().all(Option::is_some) {
            degrees.extend(recorded.lacked.into_iter().zip(known.into_iter().flatten()));
            continue;
        }
        // One record whose size, from the fewest to the most, leaves every plan as it is:
        // not worth a round trip. Finding that out costs two more plannings, so it is
        // checked only where they cost less than the question (a small pattern; the
        // question's time as the partitions measured it).
        let unchanged = |guess| {
            record_foreign_degrees((&degrees, partitions_known), guess, plan)
                .1
                .plans
        };
        let worth_checking = partitions
            .degrees_cost()
            .is_none_or(|question| 2 * planning < question);
        if recorded.lacked.len() == 1 && worth_checking {
            // A template whose check held before holds again (`crate::size_free`); a
            // dataset or a plan given beside the text is not part of its key.
            let keyed = options.dataset.is_none() && options.plan.is_none();
            let template = partitions
                .size_free_plans()
                .filter(|_| keyed)
                .and_then(|memo| {
                    let key = TemplateKey::new(store, query, &recorded.lacked[0], &recorded.plans);
                    key.map(|key| (memo, key))
                });
            if let Some((memo, key)) = &template {
                if memo.holds(key) {
                    return prepared;
                }
            }
            if [Guess::Fewest, Guess::Most]
                .into_iter()
                .all(|guess| unchanged(guess) == recorded.plans)
            {
                if let Some((memo, key)) = template {
                    memo.remember(key);
                }
                return prepared;
            }
        }
        let Some(sizes) = partitions.degrees(&recorded.lacked)? else {
            return prepared;
        };
        degrees.extend(recorded.lacked.into_iter().zip(sizes));
    }
    record_foreign_degrees((&degrees, partitions_known), Guess::Average, plan).0
}

fn plan_parsed(
    store: &Store,
    query: &Query,
    options: &PrepareOptions,
    started: Instant,
    select_star: bool,
) -> Result<PreparedQuery, QueryError> {
    let user_plans = match &options.plan {
        Some(plan) => Some(vec![crate::plan_file::parse_plan(plan)?]),
        None => None,
    };
    let mut compiler = Compiler::new(store, user_plans);
    compiler.partitioned = options.partitioned();
    if let Some(partitions) = &options.partitions {
        compiler.spread = partitions.spread();
    }
    let (Query::Select {
        dataset,
        pattern,
        base_iri,
    }
    | Query::Ask {
        dataset,
        pattern,
        base_iri,
    }
    | Query::Construct {
        dataset,
        pattern,
        base_iri,
        ..
    }
    | Query::Describe {
        dataset,
        pattern,
        base_iri,
    }) = query;
    compiler.dataset = DatasetScope::new(store, options.dataset.as_ref().or(dataset.as_ref()));
    // Triple terms with variables inside are unpacked first; the query's own form (its
    // variables for SELECT *) is read from the pattern as written.
    let unpacked = crate::compile::triple_terms::unpack(pattern);
    let operator = compiler.compile(
        unpacked.as_ref().unwrap_or(pattern),
        compiler.dataset.default,
    )?;
    let form = match query {
        Query::Select { .. } => {
            let variables: Arc<[Variable]> = match select_star {
                true => star_variables(pattern).into(),
                false => projected(pattern).map_or_else(|| Arc::from([]), Arc::from),
            };
            let columns = variables
                .iter()
                .map(|v| compiler.vars.get(v).unwrap_or(usize::MAX - 1))
                .collect();
            Form::Select(variables, columns)
        }
        Query::Ask { .. } => Form::Ask,
        Query::Construct { template, .. } => Form::Construct(template.clone()),
        Query::Describe { .. } => Form::Describe(projected_variables(pattern)),
    };
    if let Form::Construct(template) = &form {
        let mut patterns: Vec<&TriplePattern> = template.iter().collect();
        while let Some(pattern) = patterns.pop() {
            for term in [&pattern.subject, &pattern.object] {
                match term {
                    TermPattern::Variable(v) => {
                        compiler.vars.var(v);
                    }
                    TermPattern::Triple(inner) => patterns.push(inner),
                    _ => {}
                }
            }
            if let NamedNodePattern::Variable(v) = &pattern.predicate {
                compiler.vars.var(v);
            }
        }
    }
    Ok(PreparedQuery {
        form,
        operator: Arc::new(operator),
        dataset: compiler.dataset,
        base_iri: base_iri.clone(),
        vars: compiler.vars,
        exists: Arc::new(compiler.exists),
        plan_micros: started.elapsed().as_secs_f64() * 1e6,
        store_version: store.version(),
        store_view: store.view(),
        calls_services: compiler.services,
    })
}

/// What EXPLAIN says of the default graph read, for a store with reasoning.
pub(super) fn reasoning_note(store: &Store) -> Option<String> {
    let entailment = store.entailment()?;
    Some(match store.view() {
        quiver_store::View::Entailed => format!(
            "reasoning: the default graph is entailed under {}: {} triples, {} of them derived",
            entailment.profile(),
            entailment.triples(),
            entailment.derived()
        ),
        quiver_store::View::Asserted => format!(
            "reasoning: off, the default graph as asserted (the store also holds its {} entailment)",
            entailment.profile()
        ),
    })
}

/// The projection of `SELECT *` in the order its variables appear in the pattern.
fn star_variables(pattern: &spargebra::algebra::GraphPattern) -> Vec<Variable> {
    use spargebra::algebra::GraphPattern;
    match pattern {
        GraphPattern::Project { inner, variables } => {
            crate::select_star::appearance_order(inner, variables)
        }
        GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::OrderBy { inner, .. } => star_variables(inner),
        _ => Vec::new(),
    }
}

fn projected_variables(pattern: &spargebra::algebra::GraphPattern) -> Vec<Variable> {
    projected(pattern).map_or_else(Vec::new, <[Variable]>::to_vec)
}

/// The variables of the projection of `pattern`, if it has one.
fn projected(pattern: &spargebra::algebra::GraphPattern) -> Option<&[Variable]> {
    use spargebra::algebra::GraphPattern;
    match pattern {
        GraphPattern::Project { variables, .. } => Some(variables),
        GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner }
        | GraphPattern::Slice { inner, .. }
        | GraphPattern::OrderBy { inner, .. } => projected(inner),
        _ => None,
    }
}
