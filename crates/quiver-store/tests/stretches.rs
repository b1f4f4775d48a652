//! A graph's subjects and objects cut into stretches (what a load on top of a store reads
//! on every core, giving back each stretch's pages once read): every triple once, in the
//! order of its records, and stretches of about as many records' words each, so that a
//! hub (a class's instances, a popular object) does not make the stretches around it
//! long too.

use quiver_model::Id;
use quiver_store::build::build_graph;

/// 2,000 subjects with one edge each to one of 50 objects, and all of them to one hub.
fn triples() -> Vec<[Id; 3]> {
    let mut triples = Vec::new();
    for s in 0..2_000 {
        triples.push([s, 0, 2_000 + s % 50]);
        triples.push([s, 1, 5_000]);
    }
    triples
}

#[test]
fn stretches_hold_every_triple_once_in_order_and_about_as_many_each() {
    let all = triples();
    let (graph, _) = build_graph(all.clone(), Some(6_000), 2);
    let mut by_subject = all.clone();
    by_subject.sort_unstable();
    let mut by_object: Vec<[Id; 3]> = all.iter().map(|&[s, p, o]| [o, p, s]).collect();
    by_object.sort_unstable();
    for parts in [1, 3, 16, 64] {
        for (stretches, expected) in [
            (graph.subject_stretches(parts), &by_subject),
            (graph.object_stretches(parts), &by_object),
        ] {
            assert!(stretches.len() <= parts, "{} stretches", stretches.len());
            let mut read = Vec::new();
            for stretch in &stretches {
                let before = read.len();
                stretch.for_each_triple(|v, p, n| read.push([v, p as Id, n]));
                assert_eq!(stretch.triples(), read.len() - before);
            }
            assert_eq!(&read, expected, "{parts} parts");
            // Every stretch but the hub's holds about its share of the records.
            let share = all.len() / parts;
            for stretch in &stretches {
                let mut hub = false;
                stretch.for_each_triple(|v, _, _| hub |= v == 5_000);
                assert!(
                    hub || stretch.triples() <= 3 * share.max(1) + 1,
                    "a stretch of {} triples for a share of {share}",
                    stretch.triples()
                );
            }
        }
    }
}
