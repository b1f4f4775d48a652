//! SERVICE: the pattern evaluated by a remote endpoint, as a bind join.
//!
//! On the right of a join or an OPTIONAL, the operator is given the left rows: it sends
//! the distinct values they bind to the pattern's variables as `VALUES` blocks of the
//! client's batch size, one call per block, so the endpoint returns only solutions that
//! can join (the join above matches them with the left rows, by the usual hash join).
//! Alone, it sends the pattern as written, with the LIMIT asked of it (`SELECT * { SERVICE
//! <e> { ?s ?p ?o } } LIMIT 10` asks the endpoint for 10 rows, not all). `SERVICE ?var` groups the left rows by the
//! endpoint they bind and calls each endpoint with its own rows' values; its solutions
//! carry `?var` bound to that endpoint, so they join only with those rows.
//!
//! Remote terms are interned like computed ones (`Evaluator::intern`); remote blank nodes
//! are renamed apart per response, since a label means nothing outside the response that
//! holds it. A local blank node is sent as `UNDEF` (VALUES cannot carry one), which only
//! widens the call: the join keeps the compatible rows. `SILENT` turns a failed call into
//! one empty solution (with `?var` bound to that endpoint), never the query's own limits
//! (deadline, cancellation, memory), which stop it; an endpoint variable bound to a literal
//! is such a failed call. Rows whose endpoint variable is unbound are an error, or with
//! `SILENT` are dropped (an empty solution there would be compatible with the other
//! endpoints' rows too), unless no row binds it: then `SILENT` gives one empty solution.

use std::time::Instant;

use oxrdf::{BlankNode, NamedNode, Term, Variable};
use quiver_model::Id;
use rustc_hash::{FxHashMap, FxHashSet};
use spargebra::term::GroundTerm;

use super::Evaluator;
use crate::context::table_bytes;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::{ServiceEndpoint, ServicePattern};
use crate::service::{remote_query, ServiceError, ServiceSolutions};
use crate::table::{Table, UNBOUND};

/// The left rows sent to one endpoint: its IRI (or why the term bound is none), its id when
/// the endpoint is a variable, the rows (all of them when `None`).
struct EndpointRows {
    iri: Result<NamedNode, String>,
    id: Option<Id>,
    rows: Option<Vec<u32>>,
}

impl Evaluator<'_> {
    /// The rows of `service`, sent the bindings of `left` when it is given; alone, at most
    /// `limit` of them.
    pub(crate) fn service(
        &self,
        service: &ServicePattern,
        left: Option<&Table>,
        limit: Option<usize>,
    ) -> Result<Table, QueryError> {
        let started = Instant::now();
        let endpoint_text = service.endpoint_text(|v| self.vars.name(v).to_owned());
        let mut table = Table::empty(service.possible_vars());
        let groups = match self.endpoints(service, left, &endpoint_text) {
            Ok(groups) => groups,
            Err(error) if service.silent && !stops_query(&error) => {
                // No row binds the endpoint: every call fails, one empty solution.
                self.notes
                    .borrow_mut()
                    .push(format!("SERVICE SILENT {endpoint_text}: {error}"));
                push_empty_solution(&mut table, service, None);
                return Ok(table);
            }
            Err(error) => return Err(error),
        };
        let (mut calls, mut bytes, mut bindings) = (0, 0, 0);
        for group in groups {
            let iri = match &group.iri {
                Ok(iri) => iri,
                Err(message) if service.silent => {
                    self.notes
                        .borrow_mut()
                        .push(format!("SERVICE SILENT {endpoint_text}: {message}"));
                    push_empty_solution(&mut table, service, group.id);
                    continue;
                }
                Err(message) => {
                    return Err(QueryError::Service {
                        endpoint: endpoint_text.clone(),
                        message: message.clone(),
                    })
                }
            };
            let (queries, sent) =
                self.remote_queries(service, left, group.rows.as_deref(), limit)?;
            calls += queries.len();
            bindings += sent;
            let answers = match &self.service {
                Some(client) => client.select(iri, &queries, self.state),
                None => Err(ServiceError::Refused(
                    "this execution was given no SERVICE client (ExecOptions::service)".into(),
                )),
            };
            match answers {
                Ok(answers) => {
                    for answer in &answers {
                        bytes += answer.bytes;
                        self.append_solutions(&mut table, service, answer, group.id)?;
                    }
                }
                Err(ServiceError::Query(error)) => return Err(error),
                Err(error) if service.silent => {
                    self.notes
                        .borrow_mut()
                        .push(format!("SERVICE SILENT <{}>: {error}", iri.as_str()));
                    push_empty_solution(&mut table, service, group.id);
                }
                Err(ServiceError::Refused(message)) => {
                    return Err(QueryError::ServiceRefused(format!(
                        "<{}>: {message}",
                        iri.as_str()
                    )))
                }
                Err(ServiceError::Failed(message)) => {
                    return Err(QueryError::Service {
                        endpoint: format!("<{}>", iri.as_str()),
                        message,
                    })
                }
            }
        }
        let bound = if bindings > 0 {
            format!(
                ", a bind join sending {bindings} bindings in batches of at most {}",
                self.batch_size()
            )
        } else {
            String::new()
        };
        self.notes.borrow_mut().push(format!(
            "SERVICE {endpoint_text}: {calls} calls{bound}, {} rows, {bytes} bytes in {:.1} ms",
            table.rows,
            started.elapsed().as_secs_f64() * 1e3
        ));
        self.note_cut(table.rows, limit);
        Ok(table)
    }

    fn batch_size(&self) -> usize {
        self.service
            .as_ref()
            .map_or(crate::service::DEFAULT_BATCH, |c| c.batch_size())
            .max(1)
    }

    /// The endpoints to call and the left rows each is sent.
    fn endpoints(
        &self,
        service: &ServicePattern,
        left: Option<&Table>,
        endpoint_text: &str,
    ) -> Result<Vec<EndpointRows>, QueryError> {
        let var = match &service.endpoint {
            ServiceEndpoint::Iri(iri) => {
                return Ok(vec![EndpointRows {
                    iri: Ok(iri.clone()),
                    id: None,
                    rows: None,
                }])
            }
            ServiceEndpoint::Var(var) => *var,
        };
        let unbound = || QueryError::Service {
            endpoint: endpoint_text.to_owned(),
            message: "the endpoint variable is unbound (bind it before the SERVICE)".into(),
        };
        let Some((left, column)) = left.and_then(|l| Some((l, l.column(var)?))) else {
            return Err(unbound());
        };
        let mut groups: Vec<EndpointRows> = Vec::new();
        let mut by_id: FxHashMap<Id, usize> = FxHashMap::default();
        let ctx = self.ctx();
        for (row, &id) in column.iter().enumerate().take(left.rows) {
            ctx.tick(row)?;
            if id == UNBOUND {
                if service.silent {
                    continue;
                }
                return Err(unbound());
            }
            let g = match by_id.get(&id) {
                Some(&g) => g,
                None => {
                    let iri = match self.term(id) {
                        Some(Term::NamedNode(iri)) => Ok(iri),
                        other => Err(format!(
                            "the endpoint variable is bound to {}, not an IRI",
                            other.map_or_else(|| "nothing".into(), |t| t.to_string())
                        )),
                    };
                    groups.push(EndpointRows {
                        iri,
                        id: Some(id),
                        rows: Some(Vec::new()),
                    });
                    by_id.insert(id, groups.len() - 1);
                    groups.len() - 1
                }
            };
            if let Some(rows) = &mut groups[g].rows {
                rows.push(row as u32);
            }
        }
        Ok(groups)
    }

    /// The queries one endpoint is sent: the pattern with the distinct bindings `rows` of
    /// `left` give its variables, in batches; and how many bindings they carry. Without
    /// bindings, one query asking for at most `limit` rows.
    fn remote_queries(
        &self,
        service: &ServicePattern,
        left: Option<&Table>,
        rows: Option<&[u32]>,
        limit: Option<usize>,
    ) -> Result<(Vec<String>, usize), QueryError> {
        let shared: Vec<(Variable, usize)> = match left {
            Some(left) => service
                .vars
                .iter()
                .filter_map(|(name, var)| Some((name.clone(), left.column_of(*var)?)))
                .collect(),
            None => Vec::new(),
        };
        let Some(left) = left.filter(|_| !shared.is_empty()) else {
            let pattern = match limit {
                Some(length) => spargebra::algebra::GraphPattern::Slice {
                    inner: Box::new(service.pattern.clone()),
                    start: 0,
                    length: Some(length),
                },
                None => service.pattern.clone(),
            };
            return Ok((vec![remote_query(&pattern, &[], Vec::new())], 0));
        };
        let ctx = self.ctx();
        let mut memory = ctx.reservation();
        let mut seen: FxHashSet<Vec<Id>> = FxHashSet::default();
        let mut distinct: Vec<Vec<Id>> = Vec::new();
        let all = 0..left.rows as u32;
        let rows: Box<dyn Iterator<Item = u32>> = match rows {
            Some(rows) => Box::new(rows.iter().copied()),
            None => Box::new(all),
        };
        for (i, row) in rows.enumerate() {
            ctx.tick(i)?;
            let key: Vec<Id> = shared
                .iter()
                .map(|&(_, c)| left.columns[c][row as usize])
                .collect();
            if !seen.contains(&key) {
                memory.try_grow(2 * (key.len() * ID_BYTES + 48))?;
                seen.insert(key.clone());
                distinct.push(key);
            }
        }
        let variables: Vec<Variable> = shared.iter().map(|(v, _)| v.clone()).collect();
        let mut queries = Vec::new();
        for batch in distinct.chunks(self.batch_size()) {
            let bindings = batch
                .iter()
                .map(|key| key.iter().map(|&id| self.ground_term(id)).collect())
                .collect();
            let query = remote_query(&service.pattern, &variables, bindings);
            memory.try_grow(query.len())?;
            queries.push(query);
        }
        Ok((queries, distinct.len()))
    }

    /// The term of `id` as a VALUES entry: `None` (UNDEF) when unbound or a blank node
    /// (or a triple term holding one).
    fn ground_term(&self, id: Id) -> Option<GroundTerm> {
        GroundTerm::try_from(self.term(id)?).ok()
    }

    /// Appends the solutions of one call to `table` (whose columns are the pattern's
    /// variables and a variable endpoint's, bound to `endpoint`).
    fn append_solutions(
        &self,
        table: &mut Table,
        service: &ServicePattern,
        answer: &ServiceSolutions,
        endpoint: Option<Id>,
    ) -> Result<(), QueryError> {
        let ctx = self.ctx();
        // Where each remote variable goes (`None`: not one of the pattern's, ignored).
        let targets: Vec<Option<usize>> = answer
            .variables
            .iter()
            .map(|variable| {
                let var = service.vars.iter().find(|(v, _)| v == variable)?.1;
                table.column_of(var)
            })
            .collect();
        let endpoint_column = match service.endpoint {
            ServiceEndpoint::Var(var) => table.column_of(var),
            ServiceEndpoint::Iri(_) => None,
        };
        let mut memory = ctx.reservation();
        memory.try_grow(table_bytes(answer.rows.len(), table.vars.len()))?;
        // The answer's terms other owners of a partitioned dictionary hold, asked of them
        // in one batch: they then get their stored ids and join with the cluster's rows.
        self.learn_held_elsewhere(|visit| {
            answer.rows.iter().flatten().flatten().for_each(visit);
            Ok(())
        })?;
        let mut blank_nodes: FxHashMap<String, Term> = FxHashMap::default();
        let mut values = vec![UNBOUND; table.vars.len()];
        for (i, row) in answer.rows.iter().enumerate() {
            ctx.tick(i)?;
            values.fill(UNBOUND);
            if let Some(c) = endpoint_column {
                values[c] = endpoint.unwrap_or(UNBOUND);
            }
            for (term, target) in row.iter().zip(&targets) {
                let (Some(term), Some(c)) = (term, target) else {
                    continue;
                };
                let id = match term {
                    Term::BlankNode(b) => {
                        let fresh = blank_nodes
                            .entry(b.as_str().to_owned())
                            .or_insert_with(|| BlankNode::default().into());
                        self.intern(fresh)
                    }
                    other => self.intern(other),
                };
                values[*c] = id;
            }
            if endpoint_column.is_some_and(|c| values[c] != endpoint.unwrap_or(UNBOUND)) {
                continue;
            }
            for (column, &value) in table.columns.iter_mut().zip(&values) {
                column.push(value);
            }
            table.rows += 1;
        }
        ctx.check()
    }
}

/// Appends the one empty solution a failed SILENT call gives (its endpoint variable bound to
/// the endpoint called, so it joins only with the rows that named it).
fn push_empty_solution(table: &mut Table, service: &ServicePattern, endpoint: Option<Id>) {
    for (c, &var) in table.vars.iter().enumerate() {
        let is_endpoint = matches!(service.endpoint, ServiceEndpoint::Var(v) if v == var);
        table.columns[c].push(if is_endpoint {
            endpoint.unwrap_or(UNBOUND)
        } else {
            UNBOUND
        });
    }
    table.rows += 1;
}

/// Whether `error` stops the query whatever `SILENT` says: its limits, not the call's.
fn stops_query(error: &QueryError) -> bool {
    matches!(
        error,
        QueryError::Timeout(_) | QueryError::Cancelled | QueryError::MemoryLimit { .. }
    )
}
