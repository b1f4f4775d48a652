//! Stores of many named graphs: the small ones share packs (`graph-pack-<k>`), so that a
//! store of thousands of graphs saves in a few files and reopens with the same answers, and
//! a store of the previous format, a file per named graph, still opens.

use std::collections::BTreeSet;

use oxrdf::NamedNode;
use quiver_model::term::encode_term;
use quiver_model::{Dictionary, Id};
use quiver_snapshot::rewrite::{read_sections, write_sections};
use quiver_store::{Direction, EncodedGraphs, LoadInfo, Store};

use crate::support;

use support::TempDir;

/// Small named graphs; the graph after them is large (over 1 MiB of arrays).
const SMALL_GRAPHS: usize = 3_000;
const LARGE_GRAPH_TRIPLES: usize = 100_000;
const VERTICES: usize = 60_000;
const PREDICATES: usize = 5;

/// A store of a default graph, `SMALL_GRAPHS` named graphs of 1 to 6 triples each and one
/// large named graph between them. Terms: vertices, predicates, graph names (zero-padded
/// IRIs sort as their numbers).
fn many_graphs_store() -> Store {
    let graphs = SMALL_GRAPHS + 1;
    let term = |i: usize| -> Vec<u8> {
        let iri = NamedNode::new(format!("http://example.org/t{i:07}")).unwrap();
        let mut bytes = Vec::new();
        encode_term(iri.as_ref().into(), &mut bytes);
        bytes
    };
    let terms = VERTICES + PREDICATES + graphs;
    let dictionary = Dictionary::from_sorted((0..terms).map(term).collect::<Vec<_>>().iter());
    let predicate = |i: usize| (VERTICES + i % PREDICATES) as Id;
    let graph_name = |g: usize| (VERTICES + PREDICATES + g) as Id;
    let vertex = |i: usize| (i % VERTICES) as Id;
    let default_graph = (0..1_000)
        .map(|i| [vertex(i * 7), predicate(i), vertex(i * 13 + 1)])
        .collect();
    // The large graph sits in the middle, so that packs hold graphs on both sides of it.
    let large = SMALL_GRAPHS / 2;
    let named_graphs = (0..graphs)
        .map(|g| {
            let triples = if g == large {
                (0..LARGE_GRAPH_TRIPLES)
                    .map(|i| [vertex(i), predicate(i), vertex(i * 31 + 7)])
                    .collect()
            } else {
                (0..1 + g % 6)
                    .map(|i| [vertex(g * 11 + i), predicate(g + i), vertex(g * 5 + 3 * i)])
                    .collect()
            };
            (graph_name(g), triples)
        })
        .collect();
    let input = EncodedGraphs {
        default_graph,
        named_graphs,
    };
    Store::build(dictionary, input, LoadInfo::default())
}

/// Everything the store answers, by id: quads, both directions' lookups and the predicate
/// index of every graph.
fn answers(store: &Store) -> BTreeSet<(Option<Id>, u8, u64, u64, u64)> {
    let mut seen = BTreeSet::new();
    store.for_each_quad(|quad| {
        // Ids widened to `u64`, whatever `Id` is.
        let (s, p, o) = (
            quad.subject as u64,
            quad.predicate as u64,
            quad.object as u64,
        );
        seen.insert((quad.graph, 0, s, p, o));
    });
    let graphs = std::iter::once((None, store.graph())).chain(
        store
            .graph_names()
            .map(|name| (Some(name), store.named_graph(name).unwrap())),
    );
    for (name, graph) in graphs {
        graph.for_each_triple(|s, p, o| {
            assert!(graph.get(s, p, Direction::Out).binary_search(&o).is_ok());
            assert!(graph.get(o, p, Direction::In).binary_search(&s).is_ok());
        });
        for p in 0..store.predicate_count() as u32 {
            for &s in graph.predicate_subjects(p) {
                seen.insert((name, 1, p as u64, s as u64, 0));
            }
            for &o in graph.predicate_objects(p) {
                seen.insert((name, 2, p as u64, o as u64, 0));
            }
        }
    }
    seen
}

#[test]
fn many_named_graphs_share_a_few_files_and_reopen_the_same() {
    let store = many_graphs_store();
    let expected = answers(&store);
    assert_eq!(store.graph_names().count(), SMALL_GRAPHS + 1);
    let dir = TempDir::new("many");
    store.save(&dir.0).unwrap();
    let files = dir.files();
    // The manifest, the dictionary, the catalog, the default graph, the large named graph
    // in files of its own (its IN direction apart), and one pack for the small ones.
    let large = SMALL_GRAPHS / 2;
    for file in [
        format!("graph-{large}-1.qvs"),
        format!("graph-{large}.in-1.qvs"),
    ] {
        assert!(files.contains(&file), "{files:?}");
    }
    assert!(files.contains("graph-pack-0-1.qvs"), "{files:?}");
    assert_eq!(files.len(), 7, "{files:?}");
    let (reopened, _) = Store::open(&dir.0).unwrap();
    assert_eq!(answers(&reopened), expected);

    // Saved again from the reopened store, whose graphs are views of the packs.
    let again = TempDir::new("again");
    reopened.save(&again.0).unwrap();
    assert_eq!(again.files(), files);
    assert_eq!(answers(&Store::open(&again.0).unwrap().0), expected);

    // Format 3: a file per named graph.
    let (sections, metadata) = read_sections(&dir.0).unwrap();
    let (sections, metadata) = support::unpacked(&sections, &metadata);
    let old = TempDir::new("format-3");
    write_sections(&old.0, &sections, metadata).unwrap();
    assert_eq!(old.files().len(), SMALL_GRAPHS + 6);
    let (old_store, _) = Store::open(&old.0).unwrap();
    assert_eq!(answers(&old_store), expected);
    // Its named graphs' predicate indexes have a slot for every predicate of the store.
    let first = old_store.graph_names().next().unwrap();
    let graph = old_store.named_graph(first).unwrap();
    assert!(graph.predicate_ids().is_none());
    // Saved again, in this format, as it is.
    let resaved = TempDir::new("resaved");
    old_store.save(&resaved.0).unwrap();
    assert_eq!(resaved.files(), files);
    let (resaved_store, _) = Store::open(&resaved.0).unwrap();
    assert_eq!(answers(&resaved_store), expected);
    // Once updated, each named graph's predicate index is compacted for its own predicates.
    let mut changes = quiver_store::ChangeSet::new(&old_store);
    changes.inserts = vec![quiver_store::Quad {
        subject: 3,
        predicate: VERTICES as Id + 2,
        object: 4,
        graph: Some(first),
    }];
    let updated = old_store.apply(&changes).unwrap();
    let expected = answers(&updated);
    let compacted = TempDir::new("compacted");
    updated.save(&compacted.0).unwrap();
    let (compacted_store, _) = Store::open(&compacted.0).unwrap();
    assert_eq!(answers(&compacted_store), expected);
    let graph = compacted_store.named_graph(first).unwrap();
    // Graph 0's one triple, over the first predicate, and the one added over the third.
    assert_eq!(graph.predicate_ids(), Some(&[0, 2][..]));
}

#[test]
fn an_update_to_a_packed_graph_saves_and_reopens() {
    let store = many_graphs_store();
    let dir = TempDir::new("update");
    store.save(&dir.0).unwrap();
    let (reopened, _) = Store::open(&dir.0).unwrap();
    // Move a triple from one small graph to another and empty a third.
    let quad = |graph: usize, s: Id, p: usize, o: Id| quiver_store::Quad {
        subject: s,
        predicate: (VERTICES + p % PREDICATES) as Id,
        object: o,
        graph: Some((VERTICES + PREDICATES + graph) as Id),
    };
    let mut seen = Vec::new();
    reopened.for_each_quad(|q| {
        if q.graph == Some((VERTICES + PREDICATES + 7) as Id) {
            seen.push(q);
        }
    });
    assert_eq!(seen.len(), 2, "graph 7 holds 1 + 7 % 6 triples");
    let mut changes = quiver_store::ChangeSet::new(&reopened);
    changes.deletes = seen;
    changes.inserts = vec![quad(8, 1, 1, 2)];
    let updated = reopened.apply(&changes).unwrap();
    let expected = answers(&updated);
    assert_ne!(
        expected,
        answers(&reopened),
        "the update changed the graphs"
    );
    let after = TempDir::new("after");
    updated.save(&after.0).unwrap();
    assert_eq!(answers(&Store::open(&after.0).unwrap().0), expected);
}

#[test]
fn a_named_graphs_index_tells_its_name() {
    let store = many_graphs_store();
    for name in store.graph_names() {
        let graph = store.named_graph(name).unwrap();
        assert_eq!(store.named_graph_name(graph), Some(name));
    }
    // Not a named graph's own index: the default graph, a copy, another store's.
    assert_eq!(store.named_graph_name(store.graph()), None);
    let first = store.graph_names().next().unwrap();
    let copy = store.named_graph(first).unwrap().clone();
    assert_eq!(store.named_graph_name(&copy), None);
    let other = many_graphs_store();
    assert_eq!(
        store.named_graph_name(other.named_graph(first).unwrap()),
        None
    );
}
