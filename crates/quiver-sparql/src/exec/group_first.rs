//! GROUP BY under a LIMIT in no order, as in
//! `SELECT ?x (SAMPLE(?c) AS ?course) { ?x <takesCourse> ?c } GROUP BY ?x LIMIT 10`: any ten
//! groups will do, but each must be whole.
//!
//! A group's rows all share its keys, so the rows of some values of one key variable hold
//! those values' groups whole. The values come from an index list that holds every value
//! the key can take in the pattern (the predicate index's subjects or objects of one of
//! its patterns, or a constant's neighbours), and the pattern runs seeded with a batch of
//! them at a time, as a join's right side does, until the batches hold enough groups:
//! twice as many values each round. Only those rows are grouped, instead of every row of
//! the pattern (a million groups built to keep ten).
//!
//! When values keep giving no rows (the other patterns reject them), the rounds stop once
//! they have built as many rows as the pattern's own plan is estimated to build, or gone
//! through a quarter of the list, and the group runs over the whole pattern, so that no
//! query costs much more than it did (a plan from a selective constant elsewhere in the
//! pattern, whose groups are few or none, is not traded for a walk of the whole list). Over partitions, the values are those of the coordinator's own
//! part of the index, which need not hold them all: where they run out first, the whole
//! pattern runs too.

use quiver_model::Id;
use quiver_store::graph::Direction;
use rustc_hash::FxHashSet;

use super::group::group;
use super::Evaluator;
use crate::bgp::{Node, Pred};
use crate::context::table_bytes;
use crate::error::QueryError;
use crate::operator::bgp::PlannedBgp;
use crate::operator::group::Aggregate;
use crate::operator::Operator;
use crate::table::{Table, VarId};

/// Values seeded in the first round, at least (a round costs a plan's start).
const FIRST_VALUES: usize = 16;

impl Evaluator<'_> {
    /// The groups of some values of a key, at least `limit` of them unless the pattern has
    /// fewer; `None` where the shape does not apply or the rounds gave up.
    pub(crate) fn first_groups_seeded(
        &self,
        inner: &Operator,
        keys: &[VarId],
        aggregates: &[(VarId, Aggregate)],
        limit: usize,
    ) -> Result<Option<Table>, QueryError> {
        let Operator::Bgp(planned) = inner else {
            return Ok(None);
        };
        if keys.is_empty() || limit == 0 || planned.bgp.is_unsatisfiable() {
            return Ok(None);
        }
        let ctx = self.context(planned.graph);
        // Of each key, the shortest list that holds its every value; of the keys, the one
        // with the most values, whose each value holds the fewest rows.
        let Some((key, values)) = keys
            .iter()
            .filter_map(|&key| Some((key, self.values_of(planned, key)?)))
            .max_by_key(|(_, values)| values.len())
        else {
            return Ok(None);
        };
        if values.len() <= limit {
            return Ok(None);
        }
        let steps = crate::planner::plan(&planned.bgp, self.store, ctx.graph, &[key], 1.0);
        let seeded = PlannedBgp {
            bgp: planned.bgp.clone(),
            graph: planned.graph,
            alone: planned.alone.clone(),
            seeded: Some((vec![key], steps)),
        };
        // The rows the rounds may build: four times what the pattern's own plan is
        // estimated to build (estimates may be low), or 64 per group asked.
        let estimate: f64 = planned.alone.iter().map(|step| step.estimate).sum();
        let budget = (4.0 * estimate).max(64.0 * limit as f64);
        let mut built = 0.0;
        let mut parts: Vec<Table> = Vec::new();
        // The rounds' rows, held until they are grouped.
        let mut memory = ctx.reservation();
        let (mut start, mut batch, mut found, mut rounds) = (0, limit.max(FIRST_VALUES), 0, 0);
        while found < limit && start < values.len() {
            if start > values.len() / 4 || built > budget {
                // Most values give nothing: the whole pattern costs less.
                self.notes.borrow_mut().push(format!(
                    "GROUP BY under LIMIT {limit}: {found} group(s) in the first {start} of {} \
                     values of ?{}, too few; the whole pattern runs",
                    values.len(),
                    self.vars.name(key)
                ));
                return Ok(None);
            }
            let end = values.len().min(start.saturating_add(batch));
            let seeds = Table {
                vars: vec![key],
                rows: end - start,
                columns: vec![values[start..end].to_vec()],
            };
            let rows = self.bgp(&seeded, seeds, true, None)?;
            memory.try_grow(table_bytes(rows.rows, rows.columns.len()))?;
            // Built outside `evaluate`, which counts an operator's output.
            self.built(rows.rows);
            found += distinct_values(&rows, key);
            built += (end - start + rows.rows) as f64;
            parts.push(rows);
            (start, batch, rounds) = (end, batch.saturating_mul(2), rounds + 1);
        }
        let vars = parts[0].vars.clone();
        let rows = Table::concat(parts.into_iter().map(|t| t.into_reshape(&vars)).collect());
        self.notes.borrow_mut().push(format!(
            "GROUP BY under LIMIT {limit}: the groups of the first {start} of {} values of \
             ?{} from the index, in {rounds} round(s)",
            values.len(),
            self.vars.name(key)
        ));
        let (table, profile) = group(self, &rows, keys, aggregates)?;
        self.group_profiles.borrow_mut().push(profile);
        if start < values.len() {
            // Groups were left out: a HAVING that rejects some must ask again.
            self.note_cut(table.rows, Some(limit));
        }
        Ok(Some(table))
    }

    /// A list, from the index of `planned`'s graph, holding every value `key` takes in
    /// its pattern (a superset): the shortest its patterns give.
    fn values_of<'a>(&'a self, planned: &PlannedBgp, key: VarId) -> Option<&'a [Id]> {
        let graph = self.context(planned.graph).graph;
        planned
            .bgp
            .patterns
            .iter()
            .filter_map(|pattern| {
                let Pred::Const(predicate) = pattern.predicate else {
                    return None;
                };
                Some(match (pattern.subject, pattern.object) {
                    (Node::Var(s), Node::Var(o)) if s == key && o != key => {
                        graph.predicate_subjects(predicate)
                    }
                    (Node::Var(s), Node::Var(o)) if o == key && s != key => {
                        graph.predicate_objects(predicate)
                    }
                    (Node::Var(s), Node::Const(o)) if s == key => {
                        graph.get(o, predicate, Direction::In)
                    }
                    (Node::Const(s), Node::Var(o)) if o == key => {
                        graph.get(s, predicate, Direction::Out)
                    }
                    _ => return None,
                })
            })
            .min_by_key(|values| values.len())
    }
}

/// The distinct values of `var` in `table`.
fn distinct_values(table: &Table, var: VarId) -> usize {
    let Some(column) = table.column(var) else {
        return 0;
    };
    column.iter().collect::<FxHashSet<_>>().len()
}
