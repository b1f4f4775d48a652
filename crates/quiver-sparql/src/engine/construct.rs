//! CONSTRUCT: a template's triples built from each solution, distinct, under the query's
//! result cap and memory budget.

use oxrdf::{Term, Triple};
use spargebra::term::{NamedNodePattern, TermPattern, TriplePattern};

use crate::describe::count_triple;
use crate::error::QueryError;
use crate::exec::Evaluator;
use crate::table::Table;

pub(super) fn construct(
    evaluator: &Evaluator<'_>,
    table: &Table,
    template: &[TriplePattern],
    max_results: Option<usize>,
) -> Result<Vec<Triple>, QueryError> {
    let ctx = evaluator.ctx();
    let mut memory = ctx.reservation();
    let mut triples = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for row in 0..table.rows {
        ctx.tick(row)?;
        for pattern in template {
            let Some(triple) = template_triple(evaluator, table, row, pattern) else {
                continue;
            };
            if seen.insert(triple.clone()) {
                count_triple(&mut memory, &triple, triples.len() + 1, max_results)?;
                triples.push(triple);
            }
        }
    }
    Ok(triples)
}

/// The triple of a CONSTRUCT template in solution `row`, if every term is bound and fits
/// its place (a triple term of the template is built the same way).
fn template_triple(
    evaluator: &Evaluator<'_>,
    table: &Table,
    row: usize,
    pattern: &TriplePattern,
) -> Option<Triple> {
    let term = |t: &TermPattern| -> Option<Term> {
        match t {
            TermPattern::Variable(v) => evaluator.term(table.value(row, evaluator.vars.get(v)?)),
            TermPattern::NamedNode(n) => Some(n.clone().into()),
            TermPattern::Literal(l) => Some(l.clone().into()),
            TermPattern::BlankNode(b) => {
                Some(oxrdf::BlankNode::new_unchecked(format!("{}r{row}", b.as_str())).into())
            }
            TermPattern::Triple(inner) => {
                template_triple(evaluator, table, row, inner).map(Term::from)
            }
        }
    };
    let subject = match term(&pattern.subject)? {
        Term::NamedNode(n) => oxrdf::NamedOrBlankNode::from(n),
        Term::BlankNode(b) => oxrdf::NamedOrBlankNode::from(b),
        _ => return None,
    };
    let predicate = match &pattern.predicate {
        NamedNodePattern::NamedNode(n) => n.clone(),
        NamedNodePattern::Variable(v) => {
            match evaluator.term(table.value(row, evaluator.vars.get(v)?))? {
                Term::NamedNode(n) => n,
                _ => return None,
            }
        }
    };
    Some(Triple::new(subject, predicate, term(&pattern.object)?))
}
