//! Sorting triples whose tail is in order already.
//!
//! A load on top of a store rebuilds the store from its triples and the new ones: ids
//! follow term order, and new terms move old ids. The store's own triples are read from
//! its index in order, and they stay in order in the rebuilt store's ids when no update
//! appended terms (the merged dictionary keeps the old terms' order): its OUT records give
//! them by (subject, predicate, object), its IN records by (object, predicate, subject).
//! Sorting them again, twice, was most of such a load. Here the new triples, a head short
//! beside the tail, are sorted on their own and merged into the tail in place, in one pass
//! that moves each run of the tail between two new triples with one copy.
//!
//! Whether the tail is in order is checked, not trusted: a tail out of order (ids that an
//! update appended map out of order) is sorted first, so the result never depends on it.

use quiver_model::Id;
use rayon::prelude::*;

/// Sorts `triples` and removes duplicates, given that `triples[start..]` is most likely
/// sorted already: the head `triples[..start]` is sorted on its own and merged in. Returns
/// the head, sorted and without duplicates, and whether the tail held no duplicate.
pub(crate) fn sort_with_sorted_tail(
    triples: &mut Vec<[Id; 3]>,
    start: usize,
    sort: impl Fn(&mut [[Id; 3]]),
) -> (Vec<[Id; 3]>, bool) {
    let mut head = triples[..start].to_vec();
    sort(&mut head);
    head.dedup();
    let tail = triples.len() - start;
    let kept = order_tail(&mut triples[start..], &sort);
    triples.truncate(start + kept);
    let len = merge_head(triples, start, &head);
    triples.truncate(len);
    (head, kept == tail)
}

/// Makes `tail` strictly ascending if it is not: sorted, duplicates moved past the
/// returned length.
pub(crate) fn order_tail(tail: &mut [[Id; 3]], sort: impl Fn(&mut [[Id; 3]])) -> usize {
    if tail.par_windows(2).all(|pair| pair[0] < pair[1]) {
        return tail.len();
    }
    sort(tail);
    let mut kept = 0;
    for i in 0..tail.len() {
        if kept == 0 || tail[i] != tail[kept - 1] {
            tail[kept] = tail[i];
            kept += 1;
        }
    }
    kept
}

/// Merges `head` (strictly ascending) into `triples[start..]` (strictly ascending), writing
/// the merged triples from the front of `triples`, each once; returns their number. The
/// gap in front of the tail must hold the head's triples that the tail lacks: it panics
/// before overwriting a triple it has not read otherwise.
pub(crate) fn merge_head(triples: &mut [[Id; 3]], start: usize, head: &[[Id; 3]]) -> usize {
    let mut out = 0;
    let mut read = start;
    for &triple in head {
        // The tail's triples below this one move as one run.
        let run = triples[read..].partition_point(|t| *t < triple);
        triples.copy_within(read..read + run, out);
        out += run;
        read += run;
        if triples.get(read) == Some(&triple) {
            // The tail holds it: it moves with the next run.
            continue;
        }
        assert!(
            out < read,
            "the gap before a sorted tail is smaller than the triples merged into it"
        );
        triples[out] = triple;
        out += 1;
    }
    let rest = triples.len() - read;
    triples.copy_within(read.., out);
    out + rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(triples: &[[Id; 3]]) -> Vec<[Id; 3]> {
        let mut all = triples.to_vec();
        all.sort_unstable();
        all.dedup();
        all
    }

    fn triple() -> impl Strategy<Value = [Id; 3]> {
        [0..4 as Id, 0..3 as Id, 0..5 as Id]
    }

    proptest! {
        /// Any head before a tail, sorted or not, with duplicates within and between them:
        /// the result is the sorted set of both, and the head comes back sorted.
        #[test]
        fn a_head_merged_into_a_tail_sorts_both(
            head in proptest::collection::vec(triple(), 0..20),
            tail in proptest::collection::vec(triple(), 0..40),
            sorted_tail in any::<bool>(),
        ) {
            let tail = if sorted_tail { reference(&tail) } else { tail };
            let mut triples = [head.clone(), tail.clone()].concat();
            let expected = reference(&triples);
            let (returned, distinct) =
                sort_with_sorted_tail(&mut triples, head.len(), |t| t.sort_unstable());
            prop_assert_eq!(triples, expected);
            prop_assert_eq!(returned, reference(&head));
            prop_assert_eq!(distinct, reference(&tail).len() == tail.len());
        }

        /// A tail placed after a gap of exactly the head's triples it lacks merges into the
        /// whole set.
        #[test]
        fn a_tail_after_its_gap_merges_with_the_head(
            head in proptest::collection::vec(triple(), 0..20),
            tail in proptest::collection::vec(triple(), 0..40),
        ) {
            let head = reference(&head);
            let tail = reference(&tail);
            let all = reference(&[head.clone(), tail.clone()].concat());
            let gap = all.len() - tail.len();
            let mut triples = vec![[Id::MAX; 3]; gap];
            triples.extend_from_slice(&tail);
            let len = merge_head(&mut triples, gap, &head);
            prop_assert_eq!(&triples[..len], &all[..]);
        }
    }

    #[test]
    #[should_panic(expected = "the gap before a sorted tail")]
    fn a_gap_too_small_panics_before_overwriting() {
        let mut triples = vec![[5, 0, 0], [6, 0, 0]];
        merge_head(&mut triples, 0, &[[1, 0, 0]]);
    }
}
