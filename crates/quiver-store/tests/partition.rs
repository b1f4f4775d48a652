//! A store cut into partitions (`partition.rs`), on random graphs with named graphs, blank
//! nodes, literals and classes, and on versions made by updates: every triple's OUT edge
//! lands in its subject's owner only and its IN edge in its object's owner only (the
//! instance's owner for `rdf:type`), the union of the partitions is the store, the
//! predicate and class indexes list only owned vertices and together the store's, and a
//! saved layout reopens only as the layout it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use oxrdf::{BlankNode, Literal, NamedNode, Term};
use proptest::prelude::*;
use quiver_model::{Id, PredId};
use quiver_store::partition::{
    open_partition, owner, partition_dir, read_layout, save_partitioned, LAYOUT_FILE,
};
use quiver_store::partition_stats::StatisticsMerger;
use quiver_store::{ChangeSet, Direction, EncodedGraphs, GraphIndex, LoadInfo, Quad, Store};

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// (subject, predicate, object, graph) by small numbers: subjects ≥ 30 are blank nodes,
/// objects ≥ 100 literals, predicate 0 `rdf:type` (objects 40–43 are then classes), graph
/// 0 the default graph.
type Spec = (u32, u32, u32, u32);

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop_oneof![0..20u32, 30..34u32],
        0..6u32,
        prop_oneof![0..20u32, 40..44u32, 100..110u32],
        prop_oneof![Just(0u32), 0..3u32],
    )
}

fn subject(s: u32) -> Term {
    if s >= 30 {
        BlankNode::new(format!("b{s}")).unwrap().into()
    } else {
        NamedNode::new(format!("http://ex/e{s}")).unwrap().into()
    }
}

fn predicate(p: u32) -> Term {
    match p {
        0 => NamedNode::new(RDF_TYPE).unwrap().into(),
        p => NamedNode::new(format!("http://ex/p{p}")).unwrap().into(),
    }
}

fn object(o: u32) -> Term {
    match o {
        100.. => Literal::new_language_tagged_literal(format!("v{o}"), "en")
            .unwrap()
            .into(),
        40..=43 => NamedNode::new(format!("http://ex/C{o}")).unwrap().into(),
        o => NamedNode::new(format!("http://ex/e{o}")).unwrap().into(),
    }
}

fn graph(g: u32) -> Option<Term> {
    (g > 0).then(|| NamedNode::new(format!("http://ex/g{g}")).unwrap().into())
}

fn encode(term: &Term) -> Vec<u8> {
    let mut bytes = Vec::new();
    quiver_model::term::encode_term(term.as_ref(), &mut bytes);
    bytes
}

fn build(specs: &[Spec]) -> Store {
    let terms_of = |&(s, p, o, g): &Spec| {
        [
            Some(subject(s)),
            Some(predicate(p)),
            Some(object(o)),
            graph(g),
        ]
    };
    let mut terms: Vec<Vec<u8>> = specs
        .iter()
        .flat_map(terms_of)
        .flatten()
        .map(|t| encode(&t))
        .collect();
    terms.sort();
    terms.dedup();
    let dictionary = quiver_model::Dictionary::from_sorted(&terms);
    let id = |t: &Term| dictionary.lookup(&encode(t)).unwrap() as Id;
    let mut input = EncodedGraphs::default();
    for spec in specs {
        let [s, p, o, g] = terms_of(spec);
        let triple = [id(&s.unwrap()), id(&p.unwrap()), id(&o.unwrap())];
        match g {
            None => input.default_graph.push(triple),
            Some(g) => input.named_graphs.push((id(&g), vec![triple])),
        }
    }
    Store::build(dictionary, input, LoadInfo::default())
}

/// Every OUT edge of a graph index as (subject, predicate term, object).
fn out_edges(store: &Store, graph: &GraphIndex) -> Vec<(Id, Id, Id)> {
    let mut edges = Vec::new();
    graph.for_each_vertex(Direction::Out, |s, record| {
        for (p, objects) in record.iter() {
            edges.extend(objects.iter().map(|&o| (s, store.predicate_term(p), o)));
        }
    });
    edges
}

/// Every IN edge as (subject, predicate term, object).
fn in_edges(store: &Store, graph: &GraphIndex) -> Vec<(Id, Id, Id)> {
    let mut edges = Vec::new();
    graph.for_each_vertex(Direction::In, |o, record| {
        for (p, subjects) in record.iter() {
            edges.extend(subjects.iter().map(|&s| (s, store.predicate_term(p), o)));
        }
    });
    edges
}

fn graphs(store: &Store) -> Vec<(Option<Id>, &GraphIndex)> {
    std::iter::once((None, store.graph()))
        .chain(
            store
                .graph_names()
                .map(|name| (Some(name), store.named_graph(name).unwrap())),
        )
        .collect()
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

fn check_partitions(store: &Store, count: u32) -> Result<(), TestCaseError> {
    let parts: Vec<Store> = (0..count).map(|i| store.partition(i, count)).collect();
    let rdf_type = store.iri_id(RDF_TYPE);
    let names: Vec<Id> = store.graph_names().collect();
    for (i, part) in parts.iter().enumerate() {
        let info = part.partition_info().expect("a partition says so");
        prop_assert_eq!((info.index, info.count), (i as u32, count));
        prop_assert_eq!(part.terms(), store.terms());
        prop_assert_eq!(part.predicate_count(), store.predicate_count());
        for p in 0..store.predicate_count() as PredId {
            prop_assert_eq!(part.predicate_term(p), store.predicate_term(p));
        }
        prop_assert_eq!(part.graph_names().collect::<Vec<_>>(), names.clone());
    }
    for (name, whole) in graphs(store) {
        let in_part = |part: &Store| match name {
            None => part.graph().clone(),
            Some(name) => part.named_graph(name).unwrap().clone(),
        };
        let mut all_out = Vec::new();
        let mut all_in = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let graph = in_part(part);
            let out = out_edges(part, &graph);
            let inn = in_edges(part, &graph);
            for &(s, _, _) in &out {
                prop_assert_eq!(owner(s, count), i as u32, "OUT edge away from its owner");
            }
            for &(s, p, o) in &inn {
                let keeper = if Some(p) == rdf_type { s } else { o };
                prop_assert_eq!(
                    owner(keeper, count),
                    i as u32,
                    "IN edge away from its owner"
                );
            }
            prop_assert_eq!(graph.triples(), out.len() as u64);
            // A named graph's share is indexed for the predicates of its edges, no others.
            if name.is_some() {
                let id_of = |term: Id| {
                    (0..store.predicate_count() as PredId)
                        .find(|&p| store.predicate_term(p) == term)
                        .unwrap()
                };
                let mut used: Vec<PredId> = out.iter().chain(&inn).map(|e| id_of(e.1)).collect();
                used.sort_unstable();
                used.dedup();
                let ids = graph.predicate_ids().map(|ids| ids.to_vec());
                prop_assert_eq!(ids, Some(used.clone()), "predicate ids of a named share");
            }
            for p in 0..store.predicate_count() as PredId {
                for &s in graph.predicate_subjects(p) {
                    prop_assert_eq!(owner(s, count), i as u32);
                }
            }
            all_out.extend(out);
            all_in.extend(inn);
        }
        let triples = sorted(out_edges(store, whole));
        prop_assert_eq!(
            sorted(all_out),
            triples.clone(),
            "the partitions' OUT edges"
        );
        prop_assert_eq!(sorted(all_in), triples, "the partitions' IN edges");
        for p in 0..store.predicate_count() as PredId {
            let union: Vec<Id> = sorted(
                parts
                    .iter()
                    .flat_map(|part| in_part(part).predicate_subjects(p).to_vec())
                    .collect(),
            );
            prop_assert_eq!(union, whole.predicate_subjects(p).to_vec());
        }
    }
    // The class index: each partition lists the instances it owns.
    let mut instances: BTreeMap<Id, BTreeSet<Id>> = BTreeMap::new();
    for (i, part) in parts.iter().enumerate() {
        for (class, stats) in part.class_stats().enumerate() {
            let members = part.instances(class as quiver_model::ClassId);
            prop_assert_eq!(members.len() as u64, stats.instances);
            for &x in members {
                prop_assert_eq!(owner(x, count), i as u32, "an instance away from its owner");
                prop_assert!(instances.entry(stats.class).or_default().insert(x));
            }
        }
    }
    let expected: BTreeMap<Id, BTreeSet<Id>> = store
        .class_stats()
        .enumerate()
        .map(|(class, stats)| {
            let members = store.instances(class as quiver_model::ClassId);
            (stats.class, members.iter().copied().collect())
        })
        .collect();
    prop_assert_eq!(instances, expected);
    // The planner's statistics merged from the partitions are the whole store's (these
    // graphs are small enough that the class sampling takes every instance), except how
    // many of a class's instances are classes themselves, which no partition knows.
    let mut merger = StatisticsMerger::default();
    for part in &parts {
        merger.add(part);
    }
    let merged = merger.finish(store.rdf_type());
    // An updated store's statistics lag until it is compacted, as a cut compacts it.
    let store = &store.compacted();
    let whole = store.planner_statistics();
    prop_assert_eq!(&merged.predicates, &whole.predicates);
    prop_assert_eq!(&merged.classes, &whole.classes);
    prop_assert_eq!(&merged.class_instances, &whole.class_instances);
    let mut coordinator = parts[0].clone();
    coordinator.use_statistics(&merged);
    for p in 0..store.predicate_count() as PredId {
        prop_assert_eq!(coordinator.predicate_stats(p), store.predicate_stats(p));
    }
    for (class, stats) in store.class_stats().enumerate() {
        let class = class as quiver_model::ClassId;
        let at = coordinator
            .class_of_term(stats.class)
            .expect("every class is known");
        prop_assert_eq!(coordinator.class_size(at), store.class_size(class));
        for p in 0..store.predicate_count() as PredId {
            for side in [Direction::Out, Direction::In] {
                if side == Direction::In && Some(p) == store.rdf_type() {
                    continue;
                }
                prop_assert_eq!(
                    coordinator.class_predicate_count(at, p, side),
                    store.class_predicate_count(class, p, side)
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn partitions_hold_each_edge_at_its_owner_and_together_the_store(
        specs in prop::collection::vec(spec(), 0..80),
        count in 1..5u32,
    ) {
        check_partitions(&build(&specs), count)?;
    }

    /// A version made by updates (patched records, appended terms and predicates) cuts as
    /// its compacted self does.
    #[test]
    fn an_updated_version_partitions_like_a_built_one(
        specs in prop::collection::vec(spec(), 1..40),
        added in prop::collection::vec(spec(), 1..20),
        count in 2..4u32,
    ) {
        let store = build(&specs);
        let mut changes = ChangeSet::new(&store);
        for &(s, p, o, g) in &added {
            let (s, p, o) = (subject(s + 50), predicate(p + 3), object(o));
            let quad = Quad {
                subject: changes.intern(&store, s.as_ref()).unwrap(),
                predicate: changes.intern(&store, p.as_ref()).unwrap(),
                object: changes.intern(&store, o.as_ref()).unwrap(),
                graph: graph(g).map(|g| changes.intern(&store, g.as_ref()).unwrap()),
            };
            changes.inserts.push(quad);
        }
        let next = store.apply(&changes).expect("the update applies");
        check_partitions(&next, count)?;
    }
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "quiver-partition-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[test]
fn a_saved_layout_reopens_only_as_itself() {
    let specs: Vec<Spec> = (0..60)
        .map(|i| (i % 20, i % 6, (i * 7) % 110, i % 3))
        .collect();
    let store = build(&specs);
    let dir = scratch();
    let mut saved = Vec::new();
    let (layout, bytes) = save_partitioned(&store, &dir, 3, |part, _| {
        saved.push(part.partition_info().unwrap().index)
    })
    .unwrap();
    assert_eq!(saved, [0, 1, 2]);
    assert!(bytes > 0);
    assert_eq!((layout.partitions, layout.triples), (3, store.triples()));
    let rdf_type = store.rdf_type().unwrap();
    let classes: Vec<(Option<Id>, Vec<Id>)> = layout
        .classes
        .iter()
        .map(|g| (g.graph, g.classes.clone()))
        .collect();
    let expected: Vec<(Option<Id>, Vec<Id>)> = graphs(&store)
        .into_iter()
        .map(|(name, graph)| (name, graph.predicate_objects(rdf_type).to_vec()))
        .collect();
    assert_eq!(classes, expected);
    assert!(classes.iter().any(|(_, c)| !c.is_empty()));
    assert_eq!(read_layout(&dir).unwrap(), Some(layout));
    for i in 0..3 {
        let (part, _) = open_partition(&dir, i, 3).unwrap();
        let expected = store.partition(i, 3);
        assert_eq!(
            sorted(out_edges(&part, part.graph())),
            sorted(out_edges(&expected, expected.graph()))
        );
        assert_eq!(
            sorted(in_edges(&part, part.graph())),
            sorted(in_edges(&expected, expected.graph()))
        );
    }
    let error = open_partition(&dir, 0, 2).unwrap_err().to_string();
    assert!(error.contains("cut into 3 partitions"), "{error}");
    assert!(open_partition(&dir, 3, 3).is_err());
    // A partition moved to another's place is refused.
    std::fs::rename(partition_dir(&dir, 0), dir.join("spare")).unwrap();
    std::fs::rename(partition_dir(&dir, 1), partition_dir(&dir, 0)).unwrap();
    let error = open_partition(&dir, 0, 3).unwrap_err().to_string();
    assert!(error.contains("partition 1 of 3"), "{error}");
    // Saving over a layout is refused; so is a whole store opened as a partition.
    assert!(save_partitioned(&store, &dir, 2, |_, _| {}).is_err());
    let whole = scratch();
    store.save(&whole).unwrap();
    assert!(open_partition(&whole, 0, 1).is_err());
    std::fs::write(whole.join(LAYOUT_FILE), b"{not json").unwrap();
    assert!(read_layout(&whole).is_err());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&whole);
}
