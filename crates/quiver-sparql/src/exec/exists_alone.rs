//! FILTER (NOT) EXISTS whose pattern costs less alone than seeded with every row.
//!
//! `?x a ub:UndergraduateStudent FILTER EXISTS { ?x ub:takesCourse ?c . ?c ub:name
//! "Course0" }`, seeded with LUBM-100's 796 K undergraduates, walks their 2.4 M courses to
//! keep those of the 2 K courses so named. Alone, the pattern starts from its constant and
//! finds the 44 K rows that match at all; each row then looks its values of the shared
//! variables up among theirs (a hash semi-join, on all threads). The planner's costs of
//! both plans decide (rows expected after each step): alone, twice its cost (to find the
//! rows and to hash them) and one look-up per row must be less than seeded.

use rustc_hash::FxHashSet;

use super::filter::After;
use super::parallel::map_morsels;
use super::Evaluator;
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::operator::PlannedBgp;
use crate::table::{Table, VarId};
use quiver_model::Id;

impl Evaluator<'_> {
    /// The numbers of the rows of `table` that `planned`'s pattern, run alone and through
    /// `after`, matches on `seeds` (none when `negated`); `None` when alone costs more
    /// than seeded (`seeded_cost`, see the module doc). The caller checks that `after`
    /// reads no variable of the rows but the pattern's, and that the seeds are bound in
    /// every row.
    pub(super) fn exists_alone(
        &self,
        planned: &PlannedBgp,
        after: &[After<'_>],
        table: &Table,
        seeds: &[VarId],
        seeded_cost: f64,
        negated: bool,
    ) -> Result<Option<Vec<u32>>, QueryError> {
        let graph = self.context(planned.graph).graph;
        let (_, alone_cost) =
            crate::planner::plan_costed(&planned.bgp, self.store, graph, &[], 1.0);
        if 2.0 * alone_cost + table.rows as f64 >= seeded_cost {
            return Ok(None);
        }
        let found = self.bgp(planned, Table::unit(), false, None)?;
        let rows = found.rows;
        let found = self.after_exists(found, after)?;
        let ctx = self.ctx();
        // The set of the found keys: a hash slot each, and a vector's own for wider keys.
        let mut memory = ctx.reservation();
        memory.try_resize(found.rows * (seeds.len() * ID_BYTES + 40))?;
        let columns: Vec<&[Id]> = seeds
            .iter()
            .map(|&v| found.column(v).unwrap_or(&[]))
            .collect();
        let probes: Vec<&[Id]> = seeds
            .iter()
            .map(|&v| table.column(v).unwrap_or(&[]))
            .collect();
        let kept = if let ([values], [probe]) = (&columns[..], &probes[..]) {
            let set: FxHashSet<Id> = values.iter().copied().collect();
            map_morsels(&ctx, table.rows, |range| {
                range
                    .filter(|&row| set.contains(&probe[row]) != negated)
                    .map(|row| row as u32)
                    .collect::<Vec<u32>>()
            })?
        } else {
            let set: FxHashSet<Vec<Id>> = (0..found.rows)
                .map(|row| columns.iter().map(|column| column[row]).collect())
                .collect();
            map_morsels(&ctx, table.rows, |range| {
                // One key buffer per morsel, refilled for each row it looks up.
                let mut probe = Vec::with_capacity(probes.len());
                range
                    .filter(|&row| {
                        probe.clear();
                        probe.extend(probes.iter().map(|column| column[row]));
                        set.contains(probe.as_slice()) != negated
                    })
                    .map(|row| row as u32)
                    .collect::<Vec<u32>>()
            })?
        };
        let kept = kept.concat();
        self.notes.borrow_mut().push(format!(
            "exists: the pattern ran alone (cost {alone_cost:.0}, seeded {seeded_cost:.0}): \
             {rows} rows found, looked up by {} rows, {} kept",
            table.rows,
            kept.len()
        ));
        Ok(Some(kept))
    }
}
