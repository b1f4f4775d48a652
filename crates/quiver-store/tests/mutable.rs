//! The mutable graph index: model-based checks against a set of triples and a graph rebuilt
//! from scratch, and a stress test of readers running during writes and compactions.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use quiver_model::{Id, PredId};
use quiver_store::build::build_graph;
use quiver_store::mutable::{Change, List};
use quiver_store::{Direction, GraphIndex, Key, MutableGraph};

const VERTICES: Id = 24;
const PREDICATES: PredId = 4;

#[derive(Debug, Clone)]
enum Step {
    Insert(Id, PredId, Id),
    Delete(Id, PredId, Id),
    DeleteKey(Key),
    Batch(Vec<(bool, Id, PredId, Id)>),
    Compact,
}

fn triple() -> impl Strategy<Value = (Id, PredId, Id)> {
    (0..VERTICES + 4, 0..PREDICATES, 0..VERTICES + 4)
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => triple().prop_map(|(s, p, o)| Step::Insert(s, p, o)),
        3 => triple().prop_map(|(s, p, o)| Step::Delete(s, p, o)),
        1 => (0..VERTICES + 4, 0..PREDICATES, any::<bool>()).prop_map(|(v, p, out)| {
            Step::DeleteKey(Key {
                vertex: v,
                predicate: p,
                direction: if out { Direction::Out } else { Direction::In },
            })
        }),
        1 => prop::collection::vec((any::<bool>(), 0..VERTICES + 4, 0..PREDICATES, 0..VERTICES + 4), 0..12)
            .prop_map(Step::Batch),
        1 => Just(Step::Compact),
    ]
}

/// The list of `key` in a set of triples.
fn expected(model: &BTreeSet<(Id, PredId, Id)>, key: Key) -> Vec<Id> {
    let mut list: Vec<Id> = model
        .iter()
        .filter(|&&(s, p, o)| {
            p == key.predicate
                && match key.direction {
                    Direction::Out => s == key.vertex,
                    Direction::In => o == key.vertex,
                }
        })
        .map(|&(s, _, o)| match key.direction {
            Direction::Out => o,
            Direction::In => s,
        })
        .collect();
    list.sort_unstable();
    list
}

fn every_key() -> impl Iterator<Item = Key> {
    (0..VERTICES + 8).flat_map(|vertex| {
        (0..PREDICATES + 1).flat_map(move |predicate| {
            [Direction::Out, Direction::In].map(|direction| Key {
                vertex,
                predicate,
                direction,
            })
        })
    })
}

fn build(model: &BTreeSet<(Id, PredId, Id)>, dense: bool) -> GraphIndex {
    let triples = model.iter().map(|&(s, p, o)| [s, p as Id, o]).collect();
    let vertices = dense.then_some(u64::from(VERTICES));
    build_graph(triples, vertices, PREDICATES as usize).0
}

/// The graph index equals one rebuilt from scratch on `model`: every key's list, the
/// predicate index, the triple count.
fn assert_same_as_rebuilt(graph: &GraphIndex, model: &BTreeSet<(Id, PredId, Id)>, dense: bool) {
    let rebuilt = build(model, dense);
    for key in every_key() {
        assert_eq!(graph.get_key(key), rebuilt.get_key(key), "{key:?}");
    }
    for p in 0..PREDICATES {
        assert_eq!(graph.predicate_subjects(p), rebuilt.predicate_subjects(p));
        assert_eq!(graph.predicate_objects(p), rebuilt.predicate_objects(p));
    }
    assert_eq!(graph.triples(), rebuilt.triples());
    graph.validate().expect("a compacted index is well formed");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn updates_match_a_rebuilt_graph(
        initial in prop::collection::btree_set(
            (0..VERTICES, 0..PREDICATES, 0..VERTICES), 0..60),
        steps in prop::collection::vec(step(), 0..40),
        dense in any::<bool>(),
    ) {
        let mut model = initial.clone();
        let graph = MutableGraph::new(build(&model, dense));
        for step in steps {
            match step {
                Step::Insert(s, p, o) => {
                    prop_assert_eq!(graph.insert(s, p, o), model.insert((s, p, o)));
                }
                Step::Delete(s, p, o) => {
                    prop_assert_eq!(graph.delete(s, p, o), model.remove(&(s, p, o)));
                }
                Step::DeleteKey(key) => {
                    let gone: Vec<_> = model
                        .iter()
                        .copied()
                        .filter(|&(s, p, o)| p == key.predicate && match key.direction {
                            Direction::Out => s == key.vertex,
                            Direction::In => o == key.vertex,
                        })
                        .collect();
                    for t in &gone {
                        model.remove(t);
                    }
                    prop_assert_eq!(graph.delete_key(key), gone.len());
                }
                Step::Batch(changes) => {
                    let changes: Vec<Change> = changes
                        .into_iter()
                        .map(|(insert, s, p, o)| {
                            if insert {
                                model.insert((s, p, o));
                                Change::Insert(s, p, o)
                            } else {
                                model.remove(&(s, p, o));
                                Change::Delete(s, p, o)
                            }
                        })
                        .collect();
                    graph.apply(&changes);
                }
                Step::Compact => {
                    graph.compact();
                    prop_assert_eq!(graph.delta_len(), 0);
                }
            }
            let reader = graph.reader();
            for key in every_key() {
                let want = expected(&model, key);
                prop_assert_eq!(&*reader.get(key), want.as_slice(), "{:?}", key);
            }
            // The batched lookups (with or without a delta) agree with the model too.
            let keys: Vec<Key> = every_key().collect();
            let wants: Vec<Vec<Id>> = keys.iter().map(|&key| expected(&model, key)).collect();
            let mut batched = Vec::new();
            reader.with_many(&keys, |list| batched.push(list.to_vec()));
            prop_assert_eq!(&batched, &wants);
            let mut lists = Vec::new();
            reader.get_many(&keys, &mut lists);
            let lists: Vec<Vec<Id>> = lists.iter().map(|list| list.to_vec()).collect();
            prop_assert_eq!(&lists, &wants);
        }
        graph.compact();
        assert_same_as_rebuilt(graph.reader().base(), &model, dense);
    }
}

#[test]
fn replace_list_is_one_sided_and_batches_keep_order() {
    let graph = MutableGraph::new(build(&BTreeSet::from([(1, 0, 2)]), true));
    let key = Key::out(1, 0);
    assert!(graph.replace_list(key, List::from([3, 5])));
    assert_eq!(&*graph.get(key), &[3, 5]);
    assert_eq!(
        &*graph.get(Key::inn(2, 0)),
        &[1],
        "the reverse side is untouched"
    );
    // Within a batch the last change of a triple wins.
    graph.apply(&[
        Change::Insert(7, 1, 8),
        Change::Delete(7, 1, 8),
        Change::Delete(1, 0, 3),
        Change::Insert(1, 0, 4),
        Change::Replace(Key::out(9, 2), List::from([1, 2])),
        Change::Insert(9, 2, 0),
    ]);
    assert!(graph.get(Key::out(7, 1)).is_empty());
    assert_eq!(&*graph.get(key), &[4, 5]);
    assert_eq!(&*graph.get(Key::out(9, 2)), &[0, 1, 2]);
    let reader = graph.reader();
    let mut out = Vec::new();
    reader.get_many(&[key, Key::out(9, 2), Key::out(100, 0)], &mut out);
    let lists: Vec<&[Id]> = out.iter().map(|n| &**n).collect();
    assert_eq!(lists, vec![&[4, 5][..], &[0, 1, 2][..], &[][..]]);
    assert!(reader.contains(1, 0, 4) && !reader.contains(1, 0, 2));
}

/// Writers flip keys between two known lists (whole-key replaces, triple batches, single
/// triple updates) while compactions run; readers must only ever see one of the two.
#[test]
fn readers_never_see_a_torn_list() {
    let a: Vec<Id> = (0..64).collect();
    let b: Vec<Id> = (1000..1300).step_by(3).collect();
    let mut model = BTreeSet::new();
    for &o in &a {
        model.insert((0, 0, o));
    }
    model.insert((5, 1, 6));
    let graph = Arc::new(MutableGraph::new(build(&model, true)));
    let flip = Key::out(0, 0);
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));

    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (graph, stop, reads) = (graph.clone(), stop.clone(), reads.clone());
            let (a, b) = (a.clone(), b.clone());
            std::thread::spawn(move || {
                let mut reader = graph.reader();
                while !stop.load(Ordering::Relaxed) {
                    graph.refresh(&mut reader);
                    let mut out = Vec::new();
                    let list = reader.get(flip);
                    assert!(
                        *list == *a || *list == *b,
                        "torn list of {} ids",
                        list.len()
                    );
                    reader.get_many(&[flip, Key::out(5, 1), flip], &mut out);
                    for list in [&out[0], &out[2]] {
                        assert!(**list == *a || **list == *b, "torn batched list");
                    }
                    let single = &*out[1];
                    assert!(single == [6] || single == [6, 7], "{single:?}");
                    let owned = graph.get(Key::inn(6, 1));
                    assert!(*owned == [5], "{owned:?}");
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let compactor = {
        let (graph, stop) = (graph.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut compactions = 0;
            while !stop.load(Ordering::Relaxed) {
                if graph.compact().is_some() {
                    compactions += 1;
                }
                std::thread::yield_now();
            }
            compactions
        })
    };
    for round in 0..3000 {
        let target = if round % 2 == 0 { &b } else { &a };
        match round % 3 {
            0 => {
                graph.replace_list(flip, List::from(target.as_slice()));
            }
            1 => {
                let current = graph.get(flip);
                let mut changes: Vec<Change> =
                    current.iter().map(|&o| Change::Delete(0, 0, o)).collect();
                changes.extend(target.iter().map(|&o| Change::Insert(0, 0, o)));
                graph.apply(&changes);
            }
            _ => {
                graph.replace_list(flip, List::from(target.as_slice()));
            }
        }
        if round % 2 == 0 {
            graph.insert(5, 1, 7);
        } else {
            graph.delete(5, 1, 7);
        }
    }
    // Let the readers run past the last compaction too (unless one of them failed).
    let started = std::time::Instant::now();
    while reads.load(Ordering::Relaxed) < 1000
        && readers.iter().all(|r| !r.is_finished())
        && started.elapsed().as_secs() < 20
    {
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    for reader in readers {
        reader.join().expect("a reader saw a torn list");
    }
    let compactions = compactor.join().expect("compactions run");
    assert!(compactions > 0, "no compaction ran during the writes");
    graph.compact();
    assert_eq!(&*graph.get(flip), a.as_slice());
}
