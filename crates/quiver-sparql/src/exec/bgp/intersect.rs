//! Intersecting walks: bind a variable to the intersection of two sorted neighbour lists.

use quiver_model::Id;
use quiver_store::Direction;

use super::step_io::{end, Bounded};
use crate::bgp::{Node, Pattern, Pred};
use crate::error::QueryError;
use crate::memory::ID_BYTES;
use crate::step::{Step, StepKind};
use crate::table::Table;

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
    let (Pred::Const(p), Pred::Const(q), Node::Var(var)) =
        (pattern.predicate, other.predicate, target)
    else {
        return Err(QueryError::Plan(format!(
            "cannot intersect {pattern} with {other}"
        )));
    };
    let (source, other_source) = (end(source, table), end(other_source, table));
    let mut selection = Vec::new();
    let mut column = Vec::new();
    let mut scratch = Vec::new();
    // Read once: the loop then keeps them in registers.
    let (graph, cap) = (ctx.graph, bounded.cap);
    for row in 0..table.rows {
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
        let right = graph.get(b, q, other_direction);
        intersect_sorted(left, right, &mut scratch);
        selection.extend(std::iter::repeat_n(row as u32, scratch.len()));
        column.extend_from_slice(&scratch);
    }
    if selection.len() > bounded.cap {
        bounded.truncated = true;
        selection.truncate(bounded.cap);
        column.truncate(bounded.cap);
    }
    let mut result = table.gather(&selection);
    result.vars.push(var);
    result.columns.push(column);
    Ok(result)
}

/// The intersection of two sorted, duplicate-free lists: a merge when their sizes are
/// close; otherwise each element of the smaller is found in the larger by galloping
/// (exponential then binary search from the last position), which touches few cache
/// lines when the matches cluster, as ids of related vertices do.
fn intersect_sorted(a: &[Id], b: &[Id], out: &mut Vec<Id>) {
    out.clear();
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.is_empty() {
        return;
    }
    if small.len() * 16 < large.len() {
        let mut rest = large;
        for &x in small {
            let mut bound = 1;
            while bound < rest.len() && rest[bound] < x {
                bound *= 2;
            }
            let window = &rest[..rest.len().min(bound + 1)];
            match window.binary_search(&x) {
                Ok(i) => {
                    out.push(x);
                    rest = &rest[i + 1..];
                }
                Err(i) => rest = &rest[i..],
            }
            if rest.is_empty() {
                break;
            }
        }
        return;
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

#[cfg(test)]
mod tests {
    use super::intersect_sorted;

    #[test]
    fn intersections_match_a_naive_filter() {
        let large: Vec<_> = (0..5000).filter(|x| x % 3 != 0).collect();
        for small in [
            vec![],
            vec![1, 2, 3],
            (0..300).map(|x| x * 17).collect(),
            (0..4000).collect::<Vec<_>>(),
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
