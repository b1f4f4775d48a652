//! A text search: the literals the store's full-text index finds, kept when the graph
//! holds them.
//!
//! The index covers every string literal of the dictionary, and a literal stays in the
//! dictionary after its last triple is deleted, so each hit is kept only when it is the
//! object of a triple in the graph the pattern reads (one record lookup). The version's
//! own literals only: the index, shared by every version, is asked for ids below this
//! version's dictionary length.

use std::time::Instant;

use oxrdf::{Literal, Term};
use quiver_store::Direction;

use super::Evaluator;
use crate::context::table_bytes;
use crate::error::QueryError;
use crate::operator::{TextPattern, TextQuery};
use crate::table::Table;

impl Evaluator<'_> {
    pub(crate) fn text(&self, pattern: &TextPattern) -> Result<Table, QueryError> {
        let started = Instant::now();
        let ctx = self.context(pattern.graph);
        ctx.check()?;
        let index = ctx
            .store
            .text_index()
            .ok_or_else(QueryError::no_text_index)?;
        let terms = ctx.store.terms();
        let (hits, what) = match &pattern.query {
            TextQuery::Matches(query) => (
                index.search(query, terms).map_err(QueryError::Text)?,
                format!("matches {query:?}"),
            ),
            TextQuery::Contains(needle) => (
                index
                    .candidates(needle, terms)
                    .map_err(QueryError::Text)?
                    .unwrap_or_default()
                    .into_iter()
                    .map(|id| (id, 0.0))
                    .collect(),
                format!("may contain {needle:?}"),
            ),
        };
        let found = hits.len();
        let mut reservation = ctx.reservation();
        reservation.try_grow(table_bytes(found, pattern.vars().len()))?;
        let mut table = Table::empty(pattern.vars());
        for (i, (id, score)) in hits.into_iter().enumerate() {
            ctx.tick(i)?;
            let held = ctx
                .graph
                .edges(id, Direction::In)
                .iter()
                .any(|(_, subjects)| !subjects.is_empty());
            if !held {
                continue;
            }
            table.columns[0].push(id);
            if pattern.score.is_some() {
                let score = Term::from(Literal::from(f64::from(score)));
                table.columns[1].push(self.intern(&score));
            }
            table.rows += 1;
        }
        self.notes.borrow_mut().push(format!(
            "text search: {found} literals {what}, {} in the graph ({:.0} µs)",
            table.rows,
            started.elapsed().as_secs_f64() * 1e6
        ));
        Ok(table)
    }
}
