//! Intersecting walks: bind a variable to the intersection of two sorted neighbour lists.

use quiver_model::{Id, PredId};
use quiver_store::Direction;

use rayon::prelude::*;

use super::partner_sets::BitSet;
use super::step_io::{end, Ahead, Bounded, End, PARALLEL_MIN_ROWS};
use crate::bgp::{Node, Pattern, Pred};
use crate::context::{table_bytes, ExecContext};
use crate::error::QueryError;
use crate::exec::parallel::{min_parallel_work, on_workers};
use crate::memory::ID_BYTES;
use crate::step::{Step, StepKind};
use crate::table::{Table, VarId};

/// A walk fused with a partner pattern: both neighbour lists are intersected.
pub(crate) fn intersect_step(
    pattern: &Pattern,
    step: Step,
    other: &Pattern,
    other_direction: Direction,
    table: &Table,
    bounded: &mut Bounded<'_, '_>,
) -> Result<Table, QueryError> {
    let ctx = bounded.ctx;
    let Fused {
        direction,
        source,
        other_source,
        p,
        var,
    } = Fused::of(pattern, step, other, other_direction, table)?;
    let Pred::Const(q) = other.predicate else {
        return Err(cannot_intersect(pattern, other));
    };
    let mut selection = Vec::new();
    let mut column = Vec::new();
    let mut scratch = Vec::new();
    // Read once: the loop then keeps them in registers.
    let (graph, cap) = (ctx.graph, bounded.cap);
    // A constant partner (`?x rdf:type C`) intersects every row with the same list: once
    // the rows have spent on it a fair share of its length, it becomes a bit set.
    let mut members = match other_source {
        End::Const(b) => match bounded
            .sets
            .and_then(|sets| sets.get(b, q, other_direction))
        {
            Some(bits) => Members::Shared(bits),
            None => Members::Pending {
                list: graph.get(b, q, other_direction),
                spent: 0,
            },
        },
        _ => Members::PerRow,
    };
    let mut memory = ctx.reservation();
    if cap == usize::MAX
        && ctx.threads > 1
        && !bounded.in_morsel
        && (2..PARALLEL_MIN_ROWS).contains(&table.rows)
    {
        let rows = Rows {
            graph,
            source,
            other_source,
            p,
            q,
            direction,
            other_direction,
        };
        let work = rows.work(table.rows);
        // A few rows that each walk a long list (a08's 111 names shared by millions of
        // students) split over the threads, which would otherwise run one row each.
        if work >= min_parallel_work() {
            let members = match other_source {
                End::Const(b) => {
                    let list = graph.get(b, q, other_direction);
                    match BitSet::worth_building(list, work) {
                        Some(words) if memory.try_grow_optional(words * 8) => {
                            Members::Bits(BitSet::of(list, words))
                        }
                        _ => Members::List(list),
                    }
                }
                _ => Members::PerRow,
            };
            let (selection, column) = rows.on_threads(table.rows, &members, ctx)?;
            bounded
                .memory
                .try_resize(selection.len() * (4 + ID_BYTES))?;
            let mut result = table.gather(&selection);
            result.vars.push(var);
            result.columns.push(column);
            bounded.split = true;
            return Ok(result);
        }
    }
    // Both lists of the rows ahead are fetched while this row's are intersected.
    let ahead = Ahead::of(source, graph.adjacency(direction), table.rows);
    let partner_ahead = Ahead::of(other_source, graph.adjacency(other_direction), table.rows);
    for row in 0..table.rows {
        ahead.fetch(row);
        partner_ahead.fetch(row);
        bounded.tick(row, || selection.len() * (4 + ID_BYTES))?;
        if selection.len() >= cap {
            bounded.truncated = true;
            break;
        }
        let (Some(a), Some(b)) = (source.value(row), other_source.value(row)) else {
            continue;
        };
        let left = graph.get(a, p, direction);
        if left.is_empty() {
            continue;
        }
        match &mut members {
            Members::Pending { list, spent } => {
                intersect_sorted(left, list, &mut scratch);
                *spent += left.len().min(list.len());
                if let Some(words) = BitSet::worth_building(list, *spent) {
                    // Over the memory budget, the list stays a list.
                    members = if memory.try_grow_optional(words * 8) {
                        Members::Bits(BitSet::of(list, words))
                    } else {
                        Members::List(list)
                    };
                }
            }
            settled => settled.intersect(left, || graph.get(b, q, other_direction), &mut scratch),
        }
        selection.extend(std::iter::repeat_n(row as u32, scratch.len()));
        column.extend_from_slice(&scratch);
    }
    Ok(bound_rows(table, selection, column, var, bounded))
}

/// A walk fused with a partner pattern whose lists are given (`partner_lists`, by the
/// partner's source value) rather than read from the graph: for an executor over
/// partitions, which fetched them from the partition that holds them. One thread: such an
/// executor runs a step per worker.
pub(crate) fn intersect_fetched<'l>(
    pattern: &Pattern,
    step: Step,
    other: &Pattern,
    other_direction: Direction,
    table: &Table,
    bounded: &mut Bounded<'_, '_>,
    partner_lists: &dyn Fn(Id) -> &'l [Id],
) -> Result<Table, QueryError> {
    let Fused {
        direction,
        source,
        other_source,
        p,
        var,
    } = Fused::of(pattern, step, other, other_direction, table)?;
    let (graph, cap) = (bounded.ctx.graph, bounded.cap);
    let (mut selection, mut column, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    // The walk's lists of the rows ahead are fetched while this row's are intersected, and
    // the partner's where this graph holds them (a partition's own vertices).
    let ahead = Ahead::of(source, graph.adjacency(direction), table.rows);
    let partner_ahead = Ahead::of(other_source, graph.adjacency(other_direction), table.rows);
    for row in 0..table.rows {
        ahead.fetch(row);
        partner_ahead.fetch(row);
        bounded.tick(row, || selection.len() * (4 + ID_BYTES))?;
        if selection.len() >= cap {
            bounded.truncated = true;
            break;
        }
        let (Some(a), Some(b)) = (source.value(row), other_source.value(row)) else {
            continue;
        };
        intersect_sorted(graph.get(a, p, direction), partner_lists(b), &mut scratch);
        selection.extend(std::iter::repeat_n(row as u32, scratch.len()));
        column.extend_from_slice(&scratch);
    }
    let kept = selection.len().min(cap);
    bounded
        .memory
        .try_resize(kept * (4 + ID_BYTES) + table_bytes(kept, table.columns.len()))?;
    Ok(bound_rows(table, selection, column, var, bounded))
}

/// What both kinds of intersecting walk read: the walk's direction, its source and the
/// partner's over the table, the walk's predicate and the variable both lists bind.
struct Fused<'t> {
    direction: Direction,
    source: End<'t>,
    other_source: End<'t>,
    p: PredId,
    var: VarId,
}

impl<'t> Fused<'t> {
    fn of(
        pattern: &Pattern,
        step: Step,
        other: &Pattern,
        other_direction: Direction,
        table: &'t Table,
    ) -> Result<Self, QueryError> {
        let StepKind::Walk(direction) = step.kind else {
            return Err(QueryError::Plan("only walks can intersect".into()));
        };
        let (source, target) = match direction {
            Direction::Out => (pattern.subject, pattern.object),
            Direction::In => (pattern.object, pattern.subject),
        };
        let other_source = match other_direction {
            Direction::Out => other.subject,
            Direction::In => other.object,
        };
        let (Pred::Const(p), Node::Var(var)) = (pattern.predicate, target) else {
            return Err(cannot_intersect(pattern, other));
        };
        Ok(Self {
            direction,
            source: end(source, table),
            other_source: end(other_source, table),
            p,
            var,
        })
    }
}

fn cannot_intersect(pattern: &Pattern, other: &Pattern) -> QueryError {
    QueryError::Plan(format!("cannot intersect {pattern} with {other}"))
}

/// `table`'s rows at `selection`, each with its value of `var` in `column`: the first
/// `bounded.cap` of them (marking the step truncated when there were more).
fn bound_rows(
    table: &Table,
    mut selection: Vec<u32>,
    mut column: Vec<Id>,
    var: VarId,
    bounded: &mut Bounded<'_, '_>,
) -> Table {
    if selection.len() > bounded.cap {
        bounded.truncated = true;
        selection.truncate(bounded.cap);
        column.truncate(bounded.cap);
    }
    table.gather_with(&selection, [Some((var, column))])
}

/// Rows at most whose lists are counted for the work of a step over few rows.
const WORK_SAMPLE: usize = 64;

/// What the rows of an intersecting walk read: both ends and both lists' keys.
#[derive(Clone, Copy)]
struct Rows<'g, 't> {
    graph: &'g quiver_store::GraphIndex,
    source: End<'t>,
    other_source: End<'t>,
    p: quiver_model::PredId,
    q: quiver_model::PredId,
    direction: Direction,
    other_direction: Direction,
}

impl<'g> Rows<'g, '_> {
    /// The elements of the walked lists of the first `rows` rows: counted for at most
    /// [`WORK_SAMPLE`] rows spread evenly over them, scaled to all. (Counting every row
    /// read each row's record twice, once here on one thread; for q1's thousand
    /// universities at LUBM-1000 that was a quarter of the step's time on two threads.)
    fn work(&self, rows: usize) -> usize {
        let stride = rows.div_ceil(WORK_SAMPLE).max(1);
        let sampled: usize = (0..rows)
            .step_by(stride)
            .filter_map(|row| self.source.value(row))
            .map(|a| self.graph.get(a, self.p, self.direction).len())
            .sum();
        sampled.saturating_mul(stride)
    }

    /// Intersects the rows in chunks on the query's threads, against `members` (settled,
    /// never pending); returns the selection and the new column, in row order.
    fn on_threads(
        &self,
        rows: usize,
        members: &Members<'g>,
        ctx: &ExecContext<'_>,
    ) -> Result<(Vec<u32>, Vec<Id>), QueryError> {
        let chunk = rows.div_ceil(ctx.threads * 4);
        let starts: Vec<usize> = (0..rows).step_by(chunk).collect();
        // Each chunk reads ahead as the loop on one thread does (past its end too: the
        // next chunk's first records are as likely to be read soon by another thread).
        let ahead = Ahead::of(self.source, self.graph.adjacency(self.direction), rows);
        let partner_ahead = Ahead::of(
            self.other_source,
            self.graph.adjacency(self.other_direction),
            rows,
        );
        let parts = on_workers(ctx, || {
            starts
                .into_par_iter()
                .map(|start| {
                    let mut memory = ctx.reservation();
                    let (mut selection, mut column, mut scratch) =
                        (Vec::new(), Vec::new(), Vec::new());
                    for row in start..(start + chunk).min(rows) {
                        ahead.fetch(row);
                        partner_ahead.fetch(row);
                        ctx.check()?;
                        let (Some(a), Some(b)) =
                            (self.source.value(row), self.other_source.value(row))
                        else {
                            continue;
                        };
                        let left = self.graph.get(a, self.p, self.direction);
                        let right = || self.graph.get(b, self.q, self.other_direction);
                        members.intersect(left, right, &mut scratch);
                        selection.extend(std::iter::repeat_n(row as u32, scratch.len()));
                        column.extend_from_slice(&scratch);
                        memory
                            .try_resize(selection.capacity() * 4 + column.capacity() * ID_BYTES)?;
                    }
                    Ok((selection, column))
                })
                .collect::<Result<Vec<_>, QueryError>>()
        })?;
        let total = parts.iter().map(|(s, _)| s.len()).sum();
        let (mut selection, mut column) = (Vec::with_capacity(total), Vec::with_capacity(total));
        for (s, c) in parts {
            selection.extend_from_slice(&s);
            column.extend_from_slice(&c);
        }
        Ok((selection, column))
    }
}

/// The partner list of an intersection.
enum Members<'g> {
    /// Another list per row.
    PerRow,
    /// The same list for every row, intersected as a list so far; `spent` counts the
    /// elements looked up in it.
    Pending { list: &'g [Id], spent: usize },
    /// The same list, as a bit set.
    Bits(BitSet),
    /// The same list, kept as a list for good.
    List(&'g [Id]),
    /// The same list, as a bit set a parallel run built for all its morsels.
    Shared(&'g BitSet),
}

impl Members<'_> {
    /// `left` ∩ the partner list into `out`, when settled (a pending list counts its
    /// lookups in [`intersect_step`]'s loop and is intersected as a list here).
    #[inline]
    fn intersect<'r>(&self, left: &[Id], right: impl FnOnce() -> &'r [Id], out: &mut Vec<Id>) {
        match self {
            Members::Bits(bits) => bits.keep(left, out),
            Members::Shared(bits) => bits.keep(left, out),
            Members::Pending { list, .. } | Members::List(list) => {
                intersect_sorted(left, list, out)
            }
            Members::PerRow => intersect_sorted(left, right(), out),
        }
    }
}

/// The intersection of two sorted, duplicate-free lists: where one is much the smaller,
/// each of its elements is found in what is left of the larger ([`seek`]); otherwise both
/// are first trimmed to the range they share ([`overlap`]), then merged, or sought again
/// where the trimming left one much the smaller.
fn intersect_sorted(a: &[Id], b: &[Id], out: &mut Vec<Id>) {
    out.clear();
    let (small, large) = smaller_first(a, b);
    if small.is_empty() {
        return;
    }
    if skewed(small, large) {
        return seek_each(small, large, out);
    }
    let (Some(a), Some(b)) = (overlap(small, large), overlap(large, small)) else {
        return;
    };
    let (small, large) = smaller_first(a, b);
    if skewed(small, large) {
        return seek_each(small, large, out);
    }
    let (mut i, mut j) = (0, 0);
    while i < small.len() && j < large.len() {
        match small[i].cmp(&large[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(small[i]);
                i += 1;
                j += 1;
            }
        }
    }
}

fn smaller_first<'l>(a: &'l [Id], b: &'l [Id]) -> (&'l [Id], &'l [Id]) {
    if a.len() <= b.len() {
        (a, b)
    } else {
        (b, a)
    }
}

/// Whether seeking each of `small`'s elements in `large` beats merging them.
fn skewed(small: &[Id], large: &[Id]) -> bool {
    small.len() * 16 < large.len()
}

/// Pushes the elements of `small` that `large` holds, each sought in what is left of
/// `large` after the one before.
fn seek_each(small: &[Id], large: &[Id], out: &mut Vec<Id>) {
    let mut rest = large;
    for &x in small {
        let (Some(&first), Some(&last)) = (rest.first(), rest.last()) else {
            break;
        };
        if x < first {
            continue;
        }
        if x > last {
            break;
        }
        match seek(rest, x) {
            Ok(i) => {
                out.push(x);
                rest = &rest[i + 1..];
            }
            Err(i) => rest = &rest[i..],
        }
    }
}

/// The part of `list` (sorted, duplicate-free) between the first and last ids of `other`,
/// or `None` where that part or either list is empty.
///
/// Why before a merge: a whole store's ids are ranks in term order, so the neighbours of
/// one vertex often lie in a narrow range (a department's members share their IRIs'
/// prefix) while their partner's spread over all ids (a university's alumni). q1 and q3 of
/// LUBM-1000 intersect such pairs twenty thousand times: merged whole, each cost both
/// lists' length (thousands of ids) for a result of a row or none; trimmed first, two
/// seeks and the few ids in range.
fn overlap<'l>(list: &'l [Id], other: &[Id]) -> Option<&'l [Id]> {
    let (&first, &last) = (list.first()?, list.last()?);
    let (&lo, &hi) = (other.first()?, other.last()?);
    if lo > last || hi < first {
        return None;
    }
    let start = if lo <= first {
        0
    } else {
        // `first < lo <= last`: within what `seek` takes.
        match seek(list, lo) {
            Ok(i) | Err(i) => i,
        }
    };
    let end = if hi >= last {
        list.len()
    } else {
        // `first <= hi < last`.
        match seek(list, hi) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    };
    (start < end).then(|| &list[start..end])
}

/// Where `x` is, or would go, in `list` (sorted, duplicate-free, `list[0] <= x <=` its
/// last), as `binary_search` tells it: a guess by interpolation between the list's ends,
/// then galloping from the guess towards `x`, then a binary search of the last window.
///
/// Why not gallop from the last place found, as before: a light query's few rows (a
/// course's students) checked against a class's instances (hundreds of thousands of ids)
/// are far apart in it, and every doubling of such a gallop read another distant cache
/// line (the intersections took 10 % of the LUBM emulator's processor time). Ids of one kind spread
/// over a range (a whole store's ids are dense in term order), so the guess lands near
/// `x` and the gallop from it reads a few neighbouring lines.
fn seek(list: &[Id], x: Id) -> Result<usize, usize> {
    let n = list.len();
    let (first, last) = (list[0], list[n - 1]);
    // At most (2^32 − 1)²: no overflow in 64 bits.
    let guess = match u64::from(last - first) {
        0 => 0,
        span => (u64::from(x - first) * (n as u64 - 1) / span) as usize,
    };
    // The window `lo..=hi` that holds `x`'s place: `list[lo - 1] < x` (or `lo` is 0) and
    // `list[hi] >= x` (`x` is at most the last).
    let (lo, hi) = if list[guess] < x {
        let mut step = 1;
        let mut lo = guess + 1;
        while guess + step < n - 1 && list[guess + step] < x {
            lo = guess + step + 1;
            step *= 2;
        }
        (lo, (guess + step).min(n - 1))
    } else {
        let mut step = 1;
        let mut hi = guess;
        loop {
            if step > guess {
                break (0, hi);
            }
            if list[guess - step] < x {
                break (guess - step + 1, hi);
            }
            hi = guess - step;
            step *= 2;
        }
    };
    match list[lo..=hi].binary_search(&x) {
        Ok(i) => Ok(lo + i),
        Err(i) => Err(lo + i),
    }
}

#[cfg(test)]
mod tests {
    use super::intersect_sorted;
    use crate::exec::bgp::partner_sets::BitSet;
    use quiver_model::Id;

    #[test]
    fn a_bit_set_intersects_like_the_lists() {
        let list: Vec<_> = (0..40_000).filter(|x| x % 7 != 3 && x % 11 != 0).collect();
        let enough = (list.len() / 16).max(BitSet::MIN_SPENT);
        assert!(BitSet::worth_building(&list, enough - 1).is_none());
        assert!(BitSet::worth_building(&list[..4000], 1 << 20).is_none());
        let sparse: Vec<_> = (0..5000).map(|x| x * 1000).collect();
        assert!(BitSet::worth_building(&sparse, 1 << 20).is_none());
        let words = BitSet::worth_building(&list, enough).expect("long, dense, paid for");
        let bits = BitSet::of(&list, words);
        for small in [
            vec![],
            vec![0, 3, 10, 11, 12, 39_999, 40_000, 1 << 30],
            (0..3000).map(|x| x * 13).collect::<Vec<_>>(),
        ] {
            let mut expected = Vec::new();
            intersect_sorted(&small, &list, &mut expected);
            let got: Vec<_> = small
                .iter()
                .copied()
                .filter(|&x| bits.contains(x))
                .collect();
            assert_eq!(got, expected);
        }
    }

    /// Interpolated seeks give `binary_search`'s answers, on lists spread evenly, in
    /// clusters far apart (a department's students), with one huge gap, and of one or
    /// two elements, for every value between and at their elements.
    #[test]
    fn seeks_find_what_a_binary_search_finds() {
        let mut seed = 11u64;
        let mut next = |bound: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % bound) as Id
        };
        let mut lists: Vec<Vec<Id>> = vec![
            vec![7],
            vec![3, 4],
            vec![0, u32::MAX as Id],
            (0..3000).map(|x| x * 7).collect(),
            (0..40)
                .flat_map(|c| (0..50).map(move |i| c * 100_000 + i * 3))
                .collect(),
            (0..2000).chain([4_000_000_000]).collect(),
            [0].into_iter()
                .chain(4_000_000_000..4_000_002_000)
                .collect(),
        ];
        let mut random: Vec<Id> = (0..5000).map(|_| next(1 << 31)).collect();
        random.sort_unstable();
        random.dedup();
        lists.push(random);
        for list in &lists {
            let (first, last) = (list[0], *list.last().unwrap());
            let mut probes: Vec<Id> = list
                .iter()
                .flat_map(|&x| [x, x.saturating_add(1), x.saturating_sub(1)])
                .filter(|&x| (first..=last).contains(&x))
                .collect();
            probes.extend((0..2000).map(|_| first + next(u64::from(last - first) + 1)));
            for x in probes {
                assert_eq!(super::seek(list, x), list.binary_search(&x), "{x}");
            }
        }
    }

    proptest::proptest! {
        /// Any two lists, each in a range of its own that may or may not meet the other's.
        #[test]
        fn any_lists_intersect_as_a_naive_filter_does(
            a in proptest::collection::btree_set(0..3000 as Id, 0..400),
            b in proptest::collection::btree_set(0..600 as Id, 0..200),
            shift in 0..3000 as Id,
        ) {
            let a: Vec<Id> = a.into_iter().collect();
            let b: Vec<Id> = b.into_iter().map(|x| x + shift).collect();
            let expected: Vec<_> = a.iter().copied().filter(|x| b.contains(x)).collect();
            let mut out = Vec::new();
            intersect_sorted(&a, &b, &mut out);
            proptest::prop_assert_eq!(&out, &expected);
            intersect_sorted(&b, &a, &mut out);
            proptest::prop_assert_eq!(&out, &expected);
        }
    }

    #[test]
    fn intersections_match_a_naive_filter() {
        let large: Vec<_> = (0..5000).filter(|x| x % 3 != 0).collect();
        for small in [
            vec![],
            vec![1, 2, 3],
            vec![0],
            vec![4999],
            vec![7000, 8000],
            (0..300).map(|x| x * 17).collect(),
            (0..4000).collect::<Vec<_>>(),
            // Narrow ranges at the start, in the middle and at the end of `large`, and
            // reaching past either end (a department's members against a university's
            // alumni).
            (0..40).collect(),
            (2400..2460).collect(),
            (4980..5100).collect(),
            (4000..4001).chain(6000..6100).collect(),
        ] {
            let mut out = Vec::new();
            intersect_sorted(&small, &large, &mut out);
            let expected: Vec<_> = small
                .iter()
                .copied()
                .filter(|x| large.contains(x))
                .collect();
            assert_eq!(out, expected);
            intersect_sorted(&large, &small, &mut out);
            assert_eq!(out, expected);
        }
    }
}
