//! The kept pairs of the product and what the aggregates add up over them, on the
//! query's threads, without building a row.

use std::ops::Range;

use quiver_expr::Number;
use quiver_model::Id;
use quiver_store::{Direction, GraphIndex};
use rustc_hash::FxHashMap;

use super::super::group::{Checked, Groups};
use super::shape::Shape;
use super::Side;
use crate::context::{ExecContext, CHECK_STRIDE};
use crate::error::QueryError;
use crate::table::Table;

/// What an aggregate adds up over the pairs.
pub(super) enum Job {
    /// `COUNT(*)`: the pairs of each group.
    All,
    /// `COUNT(value)`: the pairs whose value is bound.
    Bound(Side<bool>),
    /// SUM or AVG of the values.
    Add(Addends),
    /// Any other aggregate, folded over the pairs on the query's thread afterwards (it
    /// decodes and compares terms).
    Fold(Side<Id>),
}

/// A job's result for a run of groups.
pub(super) enum Partial {
    Counts(Vec<u64>),
    Sums(Vec<Option<Number>>, Vec<i64>),
    Later,
}

/// The values a SUM or AVG adds: `f32`s or `f64`s as they are when every value is an
/// `xsd:float` or every one an `xsd:double` (adding them from 0 is what
/// `Number::checked_add` does, in the same order), else numbers of any type.
pub(super) enum Addends {
    Float(Side<f32>),
    Double(Side<f64>),
    Any(Side<Option<Number>>),
}

impl Addends {
    pub(super) fn of(numbers: Side<Option<Number>>) -> Self {
        let floats: Option<Vec<f32>> = numbers
            .values()
            .iter()
            .map(|n| n.and_then(Number::as_float))
            .collect();
        if let Some(floats) = floats {
            return Addends::Float(numbers.like(floats));
        }
        let doubles: Option<Vec<f64>> = numbers
            .values()
            .iter()
            .map(|n| n.and_then(Number::as_double))
            .collect();
        match doubles {
            Some(doubles) => Addends::Double(numbers.like(doubles)),
            None => Addends::Any(numbers),
        }
    }

    /// The sums and numbers of values of the groups in `range`.
    fn add_up(
        &self,
        ctx: &ExecContext<'_>,
        source: &PairSource<'_>,
        of_row: &[u32],
        range: Range<u32>,
    ) -> Result<(Vec<Option<Number>>, Vec<i64>), QueryError> {
        let width = (range.end - range.start) as usize;
        let local = |k: u32| (of_row[k as usize] - range.start) as usize;
        let mut counts = vec![0_i64; width];
        let sums = match self {
            Addends::Float(values) => {
                add_plain(ctx, source, of_row, range.clone(), values, &mut counts)?
                    .into_iter()
                    .map(|sum| Some(Number::float(sum)))
                    .collect()
            }
            Addends::Double(values) => {
                add_plain(ctx, source, of_row, range.clone(), values, &mut counts)?
                    .into_iter()
                    .map(|sum| Some(Number::double(sum)))
                    .collect()
            }
            Addends::Any(values) => {
                let mut sums = vec![Some(Number::zero()); width];
                add_each(ctx, source, of_row, range.clone(), values, |k, value| {
                    let group = local(k);
                    if let Some(sum) = sums[group] {
                        sums[group] = value.and_then(|value| sum.checked_add(value));
                        counts[group] += 1;
                    }
                })?;
                sums
            }
        };
        Ok((sums, counts))
    }
}

/// The sums of `f32`s or `f64`s of the groups in `range`, each from 0 in pair order, and
/// their numbers of values added to `counts`.
fn add_plain<T: Copy + Default + std::ops::AddAssign>(
    ctx: &ExecContext<'_>,
    source: &PairSource<'_>,
    of_row: &[u32],
    range: Range<u32>,
    values: &Side<T>,
    counts: &mut [i64],
) -> Result<Vec<T>, QueryError> {
    let start = range.start;
    let mut sums = vec![T::default(); counts.len()];
    add_each(ctx, source, of_row, range, values, |k, value| {
        let group = (of_row[k as usize] - start) as usize;
        sums[group] += value;
        counts[group] += 1;
    })?;
    Ok(sums)
}

/// `add(keyed row, value)` for every kept pair of the groups in `range`, the valued side's
/// value read once per valued row.
fn add_each<T: Copy>(
    ctx: &ExecContext<'_>,
    source: &PairSource<'_>,
    of_row: &[u32],
    range: Range<u32>,
    values: &Side<T>,
    mut add: impl FnMut(u32, T),
) -> Result<(), QueryError> {
    source.each_valued_row(ctx, of_row, range, |v, kept| match values {
        Side::Valued(values) => {
            let value = values[v as usize];
            for &k in kept {
                add(k, value);
            }
        }
        Side::Keyed(values) => {
            for &k in kept {
                add(k, values[k as usize]);
            }
        }
    })
}

/// The pairs of each group, and what each job adds up, on the query's threads: the groups
/// are cut into runs, each run's keyed rows paired with every valued row, so each group
/// still adds its values valued row by valued row, as one pass would.
pub(super) fn add_up_pairs(
    ctx: &ExecContext<'_>,
    source: &PairSource<'_>,
    groups: &Groups,
    jobs: &[Job],
    keyed_rows: usize,
    valued_rows: usize,
) -> Result<(Vec<u64>, Vec<Partial>), QueryError> {
    use rayon::prelude::*;
    let of_row = &groups.of_row;
    let run = |range: Range<u32>| -> Result<(Vec<u64>, Vec<Partial>), QueryError> {
        ctx.check()?;
        let width = (range.end - range.start) as usize;
        let local = |k: u32| (of_row[k as usize] - range.start) as usize;
        let mut partials = Vec::with_capacity(jobs.len());
        for job in jobs {
            partials.push(match job {
                Job::All | Job::Fold(_) => Partial::Later,
                Job::Bound(bound) => {
                    let mut counts = vec![0u64; width];
                    source.each_valued_row(ctx, of_row, range.clone(), |v, kept| {
                        for &k in kept {
                            counts[local(k)] += u64::from(bound.at(k, v));
                        }
                    })?;
                    Partial::Counts(counts)
                }
                Job::Add(addends) => {
                    let (sums, numbers) = addends.add_up(ctx, source, of_row, range.clone())?;
                    Partial::Sums(sums, numbers)
                }
            });
        }
        // A float or double sum counted every pair of its groups.
        let counted = jobs
            .iter()
            .zip(&partials)
            .find_map(|(job, partial)| match (job, partial) {
                (Job::Add(Addends::Float(_) | Addends::Double(_)), Partial::Sums(_, numbers)) => {
                    Some(numbers.iter().map(|&n| n as u64).collect())
                }
                _ => None,
            });
        let counts = match counted {
            Some(counts) => counts,
            None => {
                let mut counts = vec![0u64; width];
                source.each_valued_row(ctx, of_row, range.clone(), |_, kept| {
                    for &k in kept {
                        counts[local(k)] += 1;
                    }
                })?;
                counts
            }
        };
        Ok((counts, partials))
    };
    let count = groups.count as u32;
    let work = keyed_rows.saturating_mul(valued_rows);
    let runs = if crate::exec::parallel::parallel(work) && ctx.threads > 1 {
        (ctx.threads * 4).min(groups.count).max(1) as u32
    } else {
        1
    };
    let bounds: Vec<Range<u32>> = (0..runs)
        .map(|i| {
            let at = |i: u32| (u64::from(count) * u64::from(i) / u64::from(runs)) as u32;
            at(i)..at(i + 1)
        })
        .collect();
    let parts: Vec<(Vec<u64>, Vec<Partial>)> = if runs == 1 {
        bounds.into_iter().map(run).collect::<Result<_, _>>()?
    } else {
        crate::exec::parallel::on_workers(ctx, || bounds.into_par_iter().map(run).collect())?
    };
    // The runs are consecutive groups: their results follow one another.
    let mut counts = Vec::with_capacity(groups.count);
    let mut partials: Vec<Partial> = jobs
        .iter()
        .map(|job| match job {
            Job::Bound(_) => Partial::Counts(Vec::with_capacity(groups.count)),
            Job::Add(_) => Partial::Sums(Vec::new(), Vec::new()),
            Job::All | Job::Fold(_) => Partial::Later,
        })
        .collect();
    for (run_counts, run_partials) in parts {
        counts.extend(run_counts);
        for (total, part) in partials.iter_mut().zip(run_partials) {
            match (total, part) {
                (Partial::Counts(all), Partial::Counts(some)) => all.extend(some),
                (Partial::Sums(all, all_numbers), Partial::Sums(some, some_numbers)) => {
                    all.extend(some);
                    all_numbers.extend(some_numbers);
                }
                _ => {}
            }
        }
    }
    Ok((counts, partials))
}

/// The kept pairs (keyed row, valued row) of the product, valued row by valued row.
pub(super) struct PairSource<'a> {
    keyed_ids: &'a [Id],
    valued_ids: &'a [Id],
    /// The keyed rows by their id of the EXISTS variable.
    by_id: FxHashMap<Id, Vec<u32>>,
    graph: &'a GraphIndex,
    predicate: Option<quiver_model::PredId>,
    direction: Direction,
    negated: bool,
}

impl<'a> PairSource<'a> {
    pub(super) fn new(
        shape: &Shape<'_>,
        keyed: &'a Table,
        valued: &'a Table,
        graph: &'a GraphIndex,
    ) -> Self {
        let keyed_ids = keyed.column(shape.keyed_var).unwrap_or(&[]);
        let mut by_id: FxHashMap<Id, Vec<u32>> = FxHashMap::default();
        for (row, &id) in keyed_ids.iter().enumerate() {
            by_id.entry(id).or_default().push(row as u32);
        }
        PairSource {
            keyed_ids,
            valued_ids: valued.column(shape.valued_var).unwrap_or(&[]),
            by_id,
            graph,
            predicate: shape.predicate,
            direction: shape.direction,
            negated: shape.negated,
        }
    }

    /// `f(valued row, its kept keyed rows)` for every valued row, over the keyed rows whose
    /// group is in `groups`, with the query's checks between rows.
    fn each_valued_row(
        &self,
        ctx: &ExecContext<'_>,
        of_row: &[u32],
        groups: Range<u32>,
        mut f: impl FnMut(u32, &[u32]),
    ) -> Result<(), QueryError> {
        let mut pairs = self.pairs_of(of_row, groups);
        let mut seen = 0usize;
        for valued in 0..self.valued_ids.len() {
            pairs.fill(valued);
            seen += pairs.kept.len() + 1;
            if seen >= CHECK_STRIDE {
                ctx.check()?;
                seen = 0;
            }
            f(valued as u32, &pairs.kept);
        }
        Ok(())
    }

    fn pairs_of<'c>(&'c self, of_row: &'c [u32], groups: Range<u32>) -> Pairs<'c, 'a> {
        let rows: Vec<u32> = (0..self.keyed_ids.len() as u32)
            .filter(|&row| groups.contains(&of_row[row as usize]))
            .collect();
        Pairs {
            source: self,
            rows,
            of_row,
            groups,
            valued: 0,
            kept: Vec::new(),
            at: 0,
            marked: vec![false; self.keyed_ids.len()],
        }
    }

    /// The kept pairs of the keyed rows whose group is in `groups`, with the query's
    /// checks (a failed one ends the pairs and is left in `stopped`).
    pub(super) fn pairs<'c, 'x>(
        &'c self,
        ctx: &'c ExecContext<'x>,
        stopped: &'c mut Option<QueryError>,
        of_row: &'c [u32],
        groups: Range<u32>,
    ) -> Checked<'c, 'x, Pairs<'c, 'a>> {
        Checked {
            inner: self.pairs_of(of_row, groups),
            ctx,
            seen: 0,
            stopped,
        }
    }
}

/// The iterator of [`PairSource::pairs`].
pub(super) struct Pairs<'s, 'a> {
    source: &'s PairSource<'a>,
    /// The keyed rows paired, ascending.
    rows: Vec<u32>,
    of_row: &'s [u32],
    groups: Range<u32>,
    /// The next valued row to pair.
    valued: usize,
    /// The keyed rows paired with the last valued row, ascending.
    kept: Vec<u32>,
    at: usize,
    marked: Vec<bool>,
}

impl Pairs<'_, '_> {
    /// Pairs valued row `valued`: with the keyed rows its list names (EXISTS), or with
    /// the others (NOT EXISTS).
    fn fill(&mut self, valued: usize) {
        let source = self.source;
        self.kept.clear();
        let list = match source.predicate {
            Some(predicate) => {
                source
                    .graph
                    .get(source.valued_ids[valued], predicate, source.direction)
            }
            None => &[],
        };
        let named = |id: &Id| source.by_id.get(id).map_or(&[][..], Vec::as_slice);
        if source.negated {
            for &row in list.iter().flat_map(named) {
                self.marked[row as usize] = true;
            }
            let marked = &self.marked;
            self.kept
                .extend(self.rows.iter().filter(|&&row| !marked[row as usize]));
            for &row in list.iter().flat_map(named) {
                self.marked[row as usize] = false;
            }
        } else {
            let (of_row, groups) = (self.of_row, &self.groups);
            self.kept.extend(
                list.iter()
                    .flat_map(named)
                    .filter(|&&row| groups.contains(&of_row[row as usize])),
            );
            self.kept.sort_unstable();
        }
    }
}

impl Iterator for Pairs<'_, '_> {
    type Item = (u32, u32);

    #[inline]
    fn next(&mut self) -> Option<(u32, u32)> {
        loop {
            if let Some(&keyed) = self.kept.get(self.at) {
                self.at += 1;
                return Some((keyed, self.valued as u32 - 1));
            }
            if self.valued >= self.source.valued_ids.len() {
                return None;
            }
            self.fill(self.valued);
            self.at = 0;
            self.valued += 1;
        }
    }
}
