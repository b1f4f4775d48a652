//! SERVICE (SPARQL 1.1 Federated Query): what the engine asks of the client that reaches
//! remote endpoints, and the text of the queries it sends them.
//!
//! The engine knows no network: it builds the query each remote call runs (the SERVICE's
//! pattern, joined with a `VALUES` block of the bindings already found, [`remote_query`])
//! and hands the texts to a [`ServiceClient`] (`quiver-federation` speaks the SPARQL 1.1
//! Protocol over HTTP). The client returns the remote solutions, parsed; the operator
//! (`exec/service.rs`) turns them into a table and the join above it matches them with the
//! local rows. With no client in [`crate::ExecOptions::service`], SERVICE is refused.

use oxrdf::{NamedNode, Term, Variable};
use spargebra::algebra::GraphPattern;
use spargebra::term::GroundTerm;
use spargebra::Query;

use crate::context::QueryState;
use crate::error::QueryError;

/// Bindings sent in one remote call's `VALUES` block when the client does not say.
pub const DEFAULT_BATCH: usize = 100;

/// A remote endpoint's answer to one query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceSolutions {
    pub variables: Vec<Variable>,
    /// One entry per solution, aligned with `variables` (`None`: unbound).
    pub rows: Vec<Vec<Option<Term>>>,
    /// Bytes of the response body, for EXPLAIN.
    pub bytes: usize,
}

/// Why a remote call gave no solutions.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ServiceError {
    /// The client does not call this endpoint (outgoing requests off, a host not allowed).
    #[error("{0}")]
    Refused(String),
    /// The call failed: no connection, an error status, a body too large or not SPARQL
    /// results, no answer within the per-request timeout.
    #[error("{0}")]
    Failed(String),
    /// The query itself must stop (its deadline, its cancellation, its memory budget):
    /// never silenced by `SILENT`.
    #[error(transparent)]
    Query(#[from] QueryError),
}

/// What reaches remote SPARQL endpoints for SERVICE.
pub trait ServiceClient: Send + Sync + std::fmt::Debug {
    /// Runs each SELECT of `queries` at `endpoint` (the client may run several at once)
    /// and returns their solutions in order, or the first error. It must return soon after
    /// `state`'s deadline passes or the query is cancelled (`state.check()` fails then),
    /// abandoning the calls in flight, and charge the bytes it holds to `state.budget()`.
    fn select(
        &self,
        endpoint: &NamedNode,
        queries: &[String],
        state: &QueryState,
    ) -> Result<Vec<ServiceSolutions>, ServiceError>;

    /// The most bindings one call's `VALUES` block carries (a bind join sends one call per
    /// batch).
    fn batch_size(&self) -> usize {
        DEFAULT_BATCH
    }
}

/// The query one remote call runs: `SELECT * { VALUES … pattern }`, or the pattern alone
/// when there are no bindings to send. Rows of `bindings` align with `variables`; `None`
/// is `UNDEF`.
pub fn remote_query(
    pattern: &GraphPattern,
    variables: &[Variable],
    bindings: Vec<Vec<Option<GroundTerm>>>,
) -> String {
    let pattern = if variables.is_empty() {
        pattern.clone()
    } else {
        GraphPattern::Join {
            left: Box::new(GraphPattern::Values {
                variables: variables.to_vec(),
                bindings,
            }),
            right: Box::new(pattern.clone()),
        }
    };
    Query::Select {
        dataset: None,
        pattern,
        base_iri: None,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use spargebra::SparqlParser;

    fn inner(text: &str) -> GraphPattern {
        let Query::Select { pattern, .. } = SparqlParser::new().parse_query(text).unwrap() else {
            unreachable!()
        };
        match pattern {
            GraphPattern::Project { inner, .. } => *inner,
            other => other,
        }
    }

    #[test]
    fn remote_queries_parse_and_carry_the_bindings() {
        let pattern = inner("SELECT * { ?s <http://e/p> ?o OPTIONAL { ?o <http://e/q> ?x } }");
        let s = Variable::new_unchecked("s");
        let a = GroundTerm::NamedNode(NamedNode::new_unchecked("http://e/a"));
        let text = remote_query(
            &pattern,
            std::slice::from_ref(&s),
            vec![vec![Some(a)], vec![None]],
        );
        let parsed = SparqlParser::new().parse_query(&text).unwrap();
        let printed = parsed.to_string();
        assert!(printed.contains("VALUES"), "{printed}");
        assert!(
            printed.contains("<http://e/a>") && printed.contains("UNDEF"),
            "{printed}"
        );
        assert!(printed.contains("OPTIONAL"), "{printed}");
        // No bindings: the pattern alone, still a SELECT every endpoint parses.
        let alone = remote_query(
            &inner("SELECT * { <http://e/a> <http://e/p> <http://e/b> }"),
            &[],
            vec![],
        );
        SparqlParser::new().parse_query(&alone).unwrap();
        assert!(alone.starts_with("SELECT"), "{alone}");
    }
}
