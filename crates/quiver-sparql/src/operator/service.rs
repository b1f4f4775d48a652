//! `SERVICE <endpoint> { … }` as compiled: the endpoint (an IRI, or a variable the rows
//! before it bind), the pattern sent as written, and the variables its solutions bind.

use oxrdf::{NamedNode, Variable};
use spargebra::algebra::GraphPattern;

use crate::table::VarId;

/// Where a SERVICE sends its pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceEndpoint {
    Iri(NamedNode),
    /// `SERVICE ?var`: the endpoint each input row binds.
    Var(VarId),
}

/// A compiled SERVICE pattern.
#[derive(Debug, Clone)]
pub struct ServicePattern {
    pub endpoint: ServiceEndpoint,
    /// The pattern the endpoint evaluates, unchanged.
    pub pattern: GraphPattern,
    /// `SERVICE SILENT`: a failed call is one empty solution instead of an error.
    pub silent: bool,
    /// The pattern's in-scope variables and their ids: the columns of its rows.
    pub vars: Vec<(Variable, VarId)>,
    /// Those bound in every solution (a basic graph pattern's, a join's of them).
    pub certain: Vec<VarId>,
}

impl ServicePattern {
    /// Every variable its rows may bind: the pattern's and a variable endpoint's.
    pub fn possible_vars(&self) -> Vec<VarId> {
        let mut vars: Vec<VarId> = self.vars.iter().map(|(_, v)| *v).collect();
        if let ServiceEndpoint::Var(var) = self.endpoint {
            crate::bgp::add_vars(&mut vars, [var]);
        }
        vars
    }

    /// The variables bound in every row: the certain ones of the pattern and a variable
    /// endpoint.
    pub fn certain_vars(&self) -> Vec<VarId> {
        let mut vars = self.certain.clone();
        if let ServiceEndpoint::Var(var) = self.endpoint {
            crate::bgp::add_vars(&mut vars, [var]);
        }
        vars
    }

    /// The endpoint as written (`<iri>` or `?var`), for EXPLAIN and errors.
    pub fn endpoint_text(&self, var_name: impl Fn(VarId) -> String) -> String {
        match &self.endpoint {
            ServiceEndpoint::Iri(iri) => iri.to_string(),
            ServiceEndpoint::Var(var) => format!("?{}", var_name(*var)),
        }
    }
}

/// The variables of `pattern` bound in every solution, as far as its shape tells: a
/// basic graph pattern's, a join's of both sides, a filter's or a projection's of its
/// inner pattern; nothing for the rest.
pub fn certain_pattern_vars(pattern: &GraphPattern) -> Vec<Variable> {
    let mut vars = Vec::new();
    match pattern {
        GraphPattern::Bgp { .. } | GraphPattern::Path { .. } => {
            pattern.on_in_scope_variable(|v| {
                if !vars.contains(v) {
                    vars.push(v.clone())
                }
            });
        }
        GraphPattern::Join { left, right } => {
            vars = certain_pattern_vars(left);
            for v in certain_pattern_vars(right) {
                if !vars.contains(&v) {
                    vars.push(v);
                }
            }
        }
        GraphPattern::LeftJoin { left: inner, .. }
        | GraphPattern::Filter { inner, .. }
        | GraphPattern::Distinct { inner }
        | GraphPattern::Reduced { inner } => vars = certain_pattern_vars(inner),
        GraphPattern::Project { inner, variables } => {
            vars = certain_pattern_vars(inner);
            vars.retain(|v| variables.contains(v));
        }
        _ => {}
    }
    vars
}
