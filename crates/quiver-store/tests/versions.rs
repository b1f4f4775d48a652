//! Store versions made by `Store::apply`: model-based checks against a plain set of quads
//! (every lookup, the predicate and class indexes, counts), the old version left intact,
//! compaction and save/reopen giving the same store, malformed change sets refused, and a
//! fold of many change sets applying like the sets in order.

use std::collections::BTreeSet;

use oxrdf::{Literal, NamedNode, TermRef};
use proptest::prelude::*;
use quiver_model::Id;
use quiver_store::{ChangeSet, Direction, EncodedGraphs, LoadInfo, Quad, Store};

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// Vertex names: `e0…` (entities, some of them also used as classes and graph names).
fn iri(i: u32) -> NamedNode {
    NamedNode::new(format!("http://example.org/e{i}")).unwrap()
}

fn predicate(i: u32) -> NamedNode {
    if i == 0 {
        NamedNode::new(RDF_TYPE).unwrap()
    } else {
        NamedNode::new(format!("http://example.org/p{i}")).unwrap()
    }
}

/// A quad named by small numbers: (subject, predicate, object, graph), object ≥ 100 a
/// literal, graph 0 the default graph.
type Spec = (u32, u32, u32, u32);

fn quad_spec() -> impl Strategy<Value = Spec> {
    (
        0..12u32,
        0..5u32,
        prop_oneof![0..12u32, 100..104u32],
        0..4u32,
    )
}

fn object_term(o: u32) -> oxrdf::Term {
    if o >= 100 {
        Literal::new_simple_literal(format!("v{o}")).into()
    } else {
        iri(o).into()
    }
}

fn graph_term(g: u32) -> Option<NamedNode> {
    (g > 0).then(|| iri(20 + g))
}

/// The base store: quads of `specs` with the base vocabulary restricted to the first
/// entities and predicates, so that updates add terms and predicates.
fn base_store(specs: &[Spec]) -> Store {
    let mut terms: Vec<Vec<u8>> = Vec::new();
    let encode = |t: TermRef<'_>| {
        let mut bytes = Vec::new();
        quiver_model::term::encode_term(t, &mut bytes);
        bytes
    };
    let encoded: Vec<[Vec<u8>; 4]> = specs
        .iter()
        .map(|&(s, p, o, g)| {
            [
                encode(iri(s).as_ref().into()),
                encode(predicate(p).as_ref().into()),
                encode(object_term(o).as_ref()),
                graph_term(g).map_or(Vec::new(), |g| encode(g.as_ref().into())),
            ]
        })
        .collect();
    for quad in &encoded {
        for term in quad.iter().filter(|t| !t.is_empty()) {
            terms.push(term.clone());
        }
    }
    terms.sort();
    terms.dedup();
    let dictionary = quiver_model::Dictionary::from_sorted(&terms);
    let id = |t: &Vec<u8>| terms.binary_search(t).unwrap() as Id;
    let mut input = EncodedGraphs::default();
    for quad in &encoded {
        let triple = [id(&quad[0]), id(&quad[1]), id(&quad[2])];
        if quad[3].is_empty() {
            input.default_graph.push(triple);
        } else {
            input.named_graphs.push((id(&quad[3]), vec![triple]));
        }
    }
    Store::build(dictionary, input, LoadInfo::default())
}

/// A quad as terms, for comparisons independent of ids.
type TermQuad = (String, String, String, String);

fn term_quads(store: &Store) -> BTreeSet<TermQuad> {
    let mut quads = BTreeSet::new();
    store.for_each_quad(|q| {
        let name = |id: Id| store.term(id).unwrap().to_string();
        quads.insert((
            name(q.subject),
            name(q.predicate),
            name(q.object),
            q.graph.map_or(String::new(), name),
        ));
    });
    quads
}

fn spec_quad(spec: Spec) -> TermQuad {
    let (s, p, o, g) = spec;
    (
        iri(s).to_string(),
        predicate(p).to_string(),
        object_term(o).to_string(),
        graph_term(g).map_or(String::new(), |g| g.to_string()),
    )
}

/// Every lookup of `store` agrees with `quads`.
fn check_lookups(store: &Store, quads: &BTreeSet<TermQuad>) {
    assert_eq!(term_quads(store), *quads);
    assert_eq!(store.triples(), quads.len() as u64);
    let graphs: Vec<(String, &quiver_store::GraphIndex)> =
        std::iter::once((String::new(), store.graph()))
            .chain(store.graph_names().map(|g| {
                (
                    store.term(g).unwrap().to_string(),
                    store.named_graph(g).unwrap(),
                )
            }))
            .collect();
    for (name, index) in graphs {
        let in_graph: Vec<&TermQuad> = quads.iter().filter(|q| q.3 == name).collect();
        for p in 0..store.predicate_count() as quiver_model::PredId {
            let p_name = store.term(store.predicate_term(p)).unwrap().to_string();
            let with_p: Vec<&&TermQuad> = in_graph.iter().filter(|q| q.1 == p_name).collect();
            let mut subjects: Vec<Id> = with_p
                .iter()
                .map(|q| id_of(store, &q.0))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            subjects.sort();
            assert_eq!(
                index.predicate_subjects(p),
                subjects,
                "subjects of {p_name} in <{name}>"
            );
            let objects: Vec<Id> = with_p
                .iter()
                .map(|q| id_of(store, &q.2))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            assert_eq!(
                index.predicate_objects(p),
                objects,
                "objects of {p_name} in <{name}>"
            );
            for &s in &subjects {
                let expected: Vec<Id> = with_p
                    .iter()
                    .filter(|q| id_of(store, &q.0) == s)
                    .map(|q| id_of(store, &q.2))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                assert_eq!(index.get(s, p, Direction::Out), expected);
            }
            for &o in &objects {
                let expected: Vec<Id> = with_p
                    .iter()
                    .filter(|q| id_of(store, &q.2) == o)
                    .map(|q| id_of(store, &q.0))
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                assert_eq!(index.get(o, p, Direction::In), expected);
            }
            if name.is_empty() {
                let stats = store.predicate_stats(p);
                assert_eq!(stats.triples, with_p.len() as u64, "triples of {p_name}");
                assert_eq!(stats.subjects, subjects.len() as u64);
                assert_eq!(stats.objects, objects.len() as u64);
            }
        }
    }
    // The class index: every object of rdf:type in the default graph, with its instances.
    let rdf_type = format!("<{RDF_TYPE}>");
    let classes: BTreeSet<Id> = quads
        .iter()
        .filter(|q| q.3.is_empty() && q.1 == rdf_type)
        .map(|q| id_of(store, &q.2))
        .collect();
    let catalog: BTreeSet<Id> = store.class_stats().map(|c| c.class).collect();
    assert_eq!(catalog, classes);
    for c in 0..store.class_count() as quiver_model::ClassId {
        let term = store
            .term(store.class_stats().nth(c as usize).unwrap().class)
            .unwrap();
        let expected = quads
            .iter()
            .filter(|q| q.3.is_empty() && q.1 == rdf_type && q.2 == term.to_string())
            .count();
        assert_eq!(store.instances(c).len(), expected);
        assert_eq!(store.class_size(c), expected as u64);
    }
}

fn id_of(store: &Store, name: &str) -> Id {
    let term: oxrdf::Term = if let Some(iri) = name.strip_prefix('<') {
        NamedNode::new(iri.trim_end_matches('>')).unwrap().into()
    } else {
        Literal::new_simple_literal(name.trim_matches('"')).into()
    };
    store.term_id(term.as_ref()).unwrap()
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<Spec>),
    Delete(Vec<Spec>),
    DeleteInsert(Vec<Spec>, Vec<Spec>),
    Drop(u32),
    Create(u32),
}

fn op() -> impl Strategy<Value = Op> {
    let quads = || proptest::collection::vec(quad_spec(), 0..6);
    prop_oneof![
        4 => quads().prop_map(Op::Insert),
        3 => quads().prop_map(Op::Delete),
        2 => (quads(), quads()).prop_map(|(d, i)| Op::DeleteInsert(d, i)),
        1 => (1..4u32).prop_map(Op::Drop),
        1 => (1..6u32).prop_map(Op::Create),
    ]
}

fn change_set(store: &Store, op: &Op) -> ChangeSet {
    let mut changes = ChangeSet::new(store);
    let quad = |changes: &mut ChangeSet, (s, p, o, g): Spec| Quad {
        subject: changes.intern(store, iri(s).as_ref().into()).unwrap(),
        predicate: changes.intern(store, predicate(p).as_ref().into()).unwrap(),
        object: changes.intern(store, object_term(o).as_ref()).unwrap(),
        graph: graph_term(g).map(|g| changes.intern(store, g.as_ref().into()).unwrap()),
    };
    match op {
        Op::Insert(specs) => {
            changes.inserts = specs.iter().map(|&s| quad(&mut changes, s)).collect()
        }
        Op::Delete(specs) => {
            changes.deletes = specs.iter().map(|&s| quad(&mut changes, s)).collect()
        }
        Op::DeleteInsert(d, i) => {
            changes.deletes = d.iter().map(|&s| quad(&mut changes, s)).collect();
            changes.inserts = i.iter().map(|&s| quad(&mut changes, s)).collect();
        }
        Op::Drop(g) | Op::Create(g) => {
            let name = changes.intern(store, iri(20 + g).as_ref().into()).unwrap();
            if matches!(op, Op::Drop(_)) {
                changes.dropped_graphs.push(name);
            } else {
                changes.created_graphs.push(name);
            }
        }
    }
    changes
}

fn apply_model(quads: &mut BTreeSet<TermQuad>, graphs: &mut BTreeSet<u32>, op: &Op) {
    match op {
        Op::Insert(specs) => {
            for &s in specs {
                quads.insert(spec_quad(s));
                if s.3 > 0 {
                    graphs.insert(s.3);
                }
            }
        }
        Op::Delete(specs) => {
            for &s in specs {
                quads.remove(&spec_quad(s));
            }
        }
        Op::DeleteInsert(d, i) => {
            apply_model(quads, graphs, &Op::Delete(d.clone()));
            apply_model(quads, graphs, &Op::Insert(i.clone()));
        }
        Op::Drop(g) => {
            let name = iri(20 + g).to_string();
            quads.retain(|q| q.3 != name);
            graphs.remove(g);
        }
        Op::Create(g) => {
            graphs.insert(*g);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn versions_agree_with_a_set_of_quads(
        delta_records in any::<bool>(),
        base in proptest::collection::vec((0..6u32, 0..3u32, prop_oneof![0..6u32, 100..102u32], 0..3u32), 0..20),
        ops in proptest::collection::vec(op(), 1..12),
    ) {
        // Long records are patched as deltas; with the threshold at 0 every record is.
        quiver_store::set_delta_record_words(if delta_records { 0 } else { 1024 });
        let mut store = base_store(&base);
        let mut quads: BTreeSet<TermQuad> = base.iter().map(|&s| spec_quad(s)).collect();
        let mut graphs: BTreeSet<u32> = base.iter().map(|s| s.3).filter(|&g| g > 0).collect();
        check_lookups(&store, &quads);
        for op in &ops {
            let before = term_quads(&store);
            let changes = change_set(&store, op);
            let next = store.apply(&changes).unwrap();
            // The old version is untouched.
            prop_assert_eq!(term_quads(&store), before);
            apply_model(&mut quads, &mut graphs, op);
            check_lookups(&next, &quads);
            let names: BTreeSet<String> =
                next.graph_names().map(|g| next.term(g).unwrap().to_string()).collect();
            let expected: BTreeSet<String> = graphs.iter().map(|&g| iri(20 + g).to_string()).collect();
            prop_assert_eq!(names, expected);
            store = next;
        }
        let compacted = store.compacted();
        prop_assert!(compacted.is_compact());
        check_lookups(&compacted, &quads);
        let dir = tempdir();
        store.save(&dir).unwrap();
        let (reopened, _) = Store::open(&dir).unwrap();
        check_lookups(&reopened, &quads);
        prop_assert_eq!(reopened.terms(), store.terms());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Folding the change sets of a run of commits (as log replay does) and applying the
    /// fold once gives the store that applying them one by one gives: the same quads, named
    /// graphs, terms and ids, with every lookup agreeing with the model.
    #[test]
    fn a_fold_of_change_sets_applies_like_the_sets_in_order(
        base in proptest::collection::vec((0..6u32, 0..3u32, prop_oneof![0..6u32, 100..102u32], 0..3u32), 0..20),
        ops in proptest::collection::vec(op(), 1..16),
    ) {
        let first = base_store(&base);
        let mut quads: BTreeSet<TermQuad> = base.iter().map(|&s| spec_quad(s)).collect();
        let mut graphs: BTreeSet<u32> = base.iter().map(|s| s.3).filter(|&g| g > 0).collect();
        let mut store = first.clone();
        let mut fold = quiver_store::ChangeFold::new(first.terms());
        for op in &ops {
            let changes = change_set(&store, op);
            fold.push(&changes).unwrap();
            store = store.apply(&changes).unwrap();
            apply_model(&mut quads, &mut graphs, op);
        }
        prop_assert_eq!(fold.sets(), ops.len());
        prop_assert_eq!(fold.terms(), store.terms());
        let folded = first.apply(&fold.finish()).unwrap();
        check_lookups(&folded, &quads);
        prop_assert_eq!(term_quads(&folded), term_quads(&store));
        let names = |s: &Store| -> BTreeSet<String> {
            s.graph_names().map(|g| s.term(g).unwrap().to_string()).collect()
        };
        let expected: BTreeSet<String> = graphs.iter().map(|&g| iri(20 + g).to_string()).collect();
        prop_assert_eq!(names(&folded), expected);
        prop_assert_eq!(folded.terms(), store.terms());
        for id in 0..store.terms() as Id {
            prop_assert_eq!(folded.term(id), store.term(id));
        }
    }
}

#[test]
fn a_fold_refuses_a_set_built_against_another_store() {
    let store = base_store(&[(0, 1, 2, 0)]);
    let mut fold = quiver_store::ChangeFold::new(store.terms());
    let mut changes = change_set(&store, &Op::Insert(vec![(7, 3, 9, 1)]));
    fold.push(&changes).unwrap();
    // Built against the same store again: its new terms would take ids already given.
    assert!(fold.push(&changes).is_err());
    // An id past the set's own terms.
    changes.base_terms = fold.terms();
    changes.new_terms.clear();
    changes.inserts[0].object = fold.terms() as Id;
    assert!(fold.push(&changes).is_err());
    assert_eq!(fold.sets(), 1);
}

fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "quiver-versions-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn malformed_change_sets_are_refused() {
    let store = base_store(&[(0, 1, 1, 0)]);
    let mut changes = ChangeSet::new(&store);
    changes.base_terms += 1;
    assert!(store.apply(&changes).is_err());
    let mut changes = ChangeSet::new(&store);
    let literal = changes
        .intern(&store, Literal::new_simple_literal("x").as_ref().into())
        .unwrap();
    changes.inserts.push(Quad {
        subject: literal,
        predicate: literal,
        object: literal,
        graph: None,
    });
    let error = store.apply(&changes).unwrap_err();
    assert!(error.to_string().contains("literal"), "{error}");
    let mut changes = ChangeSet::new(&store);
    changes.inserts.push(Quad {
        subject: 0,
        predicate: 0,
        object: 999,
        graph: None,
    });
    assert!(store.apply(&changes).is_err());
    let mut changes = ChangeSet::new(&store);
    changes.new_terms.push(vec![0xff, 0x00].into());
    assert!(store.apply(&changes).is_err());
    // A term the store has, pushed as new after an interned one: refused, not duplicated.
    let mut changes = ChangeSet::new(&store);
    changes.intern(&store, iri(90).as_ref().into()).unwrap();
    changes
        .new_terms
        .push(store.dictionary().term(0).unwrap().into());
    let error = store.apply(&changes).unwrap_err();
    assert!(error.to_string().contains("new term 1"), "{error}");
}

#[test]
fn new_terms_keep_existing_ids_and_decode() {
    let store = base_store(&[(0, 1, 1, 0), (1, 2, 100, 0)]);
    let ids: Vec<(Id, String)> = (0..store.terms() as Id)
        .map(|id| (id, store.term(id).unwrap().to_string()))
        .collect();
    let mut changes = ChangeSet::new(&store);
    let s = changes.intern(&store, iri(77).as_ref().into()).unwrap();
    let p = changes
        .intern(&store, predicate(4).as_ref().into())
        .unwrap();
    let o = changes
        .intern(&store, Literal::new_simple_literal("new").as_ref().into())
        .unwrap();
    changes.inserts.push(Quad {
        subject: s,
        predicate: p,
        object: o,
        graph: None,
    });
    let next = store.apply(&changes).unwrap();
    for (id, name) in ids {
        assert_eq!(next.term(id).unwrap().to_string(), name);
    }
    assert_eq!(next.term(s).unwrap(), iri(77).into());
    assert_eq!(next.term_id(iri(77).as_ref().into()), Some(s));
    assert_eq!(store.term_id(iri(77).as_ref().into()), None);
    let mut cursor = next.dictionary().cursor();
    assert_eq!(
        cursor.term(o).map(<[u8]>::to_vec),
        next.dictionary().term(o)
    );
    assert_ne!(next.version(), store.version());
}

#[test]
fn interning_stops_before_the_reserved_largest_id() {
    let store = base_store(&[(0, 1, 2, 0)]);
    let known = store.term_id(TermRef::NamedNode(iri(0).as_ref())).unwrap();
    let mut changes = ChangeSet::new(&store);
    // As if the store held every id but one: the next new term takes the last.
    changes.base_terms = quiver_model::MAX_TERMS - 1;
    let new = iri(100);
    let last = changes.intern(&store, TermRef::NamedNode(new.as_ref()));
    assert_eq!(last, Ok(Id::MAX - 1));
    assert_eq!(
        changes.intern(&store, TermRef::NamedNode(new.as_ref())),
        last
    );
    let refused = changes.intern(&store, TermRef::NamedNode(iri(101).as_ref()));
    assert_eq!(refused, Err(quiver_model::IdsExhausted));
    assert_eq!(changes.new_terms.len(), 1);
    assert_eq!(
        changes.intern(&store, TermRef::NamedNode(iri(0).as_ref())),
        Ok(known)
    );
}

/// A named graph dropped and created again in later versions saves and reopens: its empty
/// index carries the store's predicates like any other graph's.
#[test]
fn a_graph_dropped_then_created_again_saves_and_reopens() {
    let mut store = base_store(&[(0, 0, 0, 2)]);
    for op in [Op::Drop(2), Op::Create(2)] {
        let changes = change_set(&store, &op);
        store = store.apply(&changes).unwrap();
    }
    let quads = BTreeSet::new();
    check_lookups(&store, &quads);
    let dir = tempdir();
    store.save(&dir).unwrap();
    let (reopened, _) = Store::open(&dir).unwrap();
    check_lookups(&reopened, &quads);
    assert_eq!(reopened.graph_names().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}
