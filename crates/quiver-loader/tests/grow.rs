//! A load on top of an existing store equals one load of everything: the store in memory,
//! reopened from its snapshot (mapped), or changed by updates (terms appended after its
//! sorted dictionary, records patched), against a fresh load of the same quads.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use oxrdf::{BlankNode, GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use proptest::prelude::*;
use quiver_loader::load_quads;
use quiver_model::Id;
use quiver_store::{ChangeSet, GraphIndex, Store};

/// (subject, predicate, object, graph) picked from small pools, so that the two loads
/// share terms, triples and graphs.
type Spec = (u8, u8, u8, u8);

fn iri(kind: &str, i: u8) -> NamedNode {
    NamedNode::new(format!("http://example.org/{kind}/{i}")).unwrap()
}

fn quad((s, p, o, g): Spec) -> Quad {
    let subject: NamedOrBlankNode = if s % 5 == 4 {
        BlankNode::new(format!("b{}", s % 3)).unwrap().into()
    } else {
        iri("e", s).into()
    };
    let object: Term = match o % 6 {
        0 | 1 => iri("e", o).into(),
        2 => Literal::new_simple_literal(format!("x{o}")).into(),
        3 => Literal::new_language_tagged_literal(format!("x{o}"), "en")
            .unwrap()
            .into(),
        4 => Literal::from(i64::from(o)).into(),
        _ => BlankNode::new(format!("b{}", o % 3)).unwrap().into(),
    };
    let graph = match g % 4 {
        0 | 1 => GraphName::DefaultGraph,
        n => iri("g", n).into(),
    };
    Quad::new(subject, iri("p", p), object, graph)
}

fn spec(terms: u8) -> impl Strategy<Value = Spec> {
    (0..terms, 0..5u8, 0..terms, 0..4u8)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-grow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every quad of the store, decoded, as N-Quads lines.
fn decoded(store: &Store) -> BTreeSet<String> {
    let term = |id: Id| store.term(id).expect("stored id decodes");
    let mut quads = BTreeSet::new();
    let mut add = |graph: &GraphIndex, name: Option<Id>| {
        graph.for_each_triple(|s, p, o| {
            let name = name.map_or(String::new(), |n| term(n).to_string());
            let predicate = term(store.predicate_term(p));
            quads.insert(format!("{} {predicate} {} {name}", term(s), term(o)));
        });
    };
    add(store.graph(), None);
    for name in store.graph_names() {
        add(store.named_graph(name).unwrap(), Some(name));
    }
    quads
}

/// Every term of the store's dictionary, sorted part and appended ones.
fn terms(store: &Store) -> BTreeSet<Vec<u8>> {
    let mut terms = BTreeSet::new();
    store.dictionary().for_each(|_, term| {
        terms.insert(term.to_vec());
    });
    terms.extend(store.dictionary().appended().map(<[u8]>::to_vec));
    terms
}

/// The data files of the store saved in a fresh directory (the manifest, which records
/// the loads' sources and times, left out), by name.
fn saved_files(store: &Store, dir: &Path) -> Vec<(String, Vec<u8>)> {
    store.save(dir).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "qvs"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    std::fs::remove_dir_all(dir).unwrap();
    files
}

/// Applies `inserts` and the deletion of `deletes` to `store`, as an update would: the
/// inserts' new terms are appended after the sorted dictionary, and the records patched.
fn updated(store: &Store, deletes: &[Quad], inserts: &[Quad]) -> Store {
    let mut changes = ChangeSet::new(store);
    let ids = |changes: &mut ChangeSet, quad: &Quad| quiver_store::Quad {
        subject: changes.intern(store, quad.subject.as_ref().into()).unwrap(),
        predicate: changes
            .intern(store, quad.predicate.as_ref().into())
            .unwrap(),
        object: changes.intern(store, quad.object.as_ref()).unwrap(),
        graph: match &quad.graph_name {
            GraphName::DefaultGraph => None,
            GraphName::NamedNode(name) => {
                Some(changes.intern(store, name.as_ref().into()).unwrap())
            }
            GraphName::BlankNode(_) => unreachable!("no blank graph names are made"),
        },
    };
    changes.deletes = deletes.iter().map(|q| ids(&mut changes, q)).collect();
    changes.inserts = inserts.iter().map(|q| ids(&mut changes, q)).collect();
    store.apply(&changes).unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Base {
    InMemory,
    Reopened,
    Updated,
}

fn check_growth(
    first: &[Spec],
    second: &[Spec],
    deleted: &[Spec],
    inserted: &[Spec],
    base: Base,
    case: &str,
) -> Result<(), TestCaseError> {
    let first: Vec<Quad> = first.iter().copied().map(quad).collect();
    let second: Vec<Quad> = second.iter().copied().map(quad).collect();
    let (loaded, _) = load_quads(first.clone(), None).unwrap();
    let mut model: HashSet<Quad> = first.iter().cloned().collect();
    let dir = scratch(case);
    let existing = match base {
        Base::InMemory => loaded,
        Base::Reopened => {
            loaded.save(&dir.join("first")).unwrap();
            Store::open(&dir.join("first")).unwrap().0
        }
        Base::Updated => {
            let deletes: Vec<Quad> = deleted.iter().copied().map(quad).collect();
            let inserts: Vec<Quad> = inserted.iter().copied().map(quad).collect();
            deletes.iter().for_each(|q| {
                model.remove(q);
            });
            model.extend(inserts.iter().cloned());
            updated(&loaded, &deletes, &inserts)
        }
    };
    model.extend(second.iter().cloned());
    let (grown, report) = load_quads(second.clone(), Some(&existing)).unwrap();
    prop_assert_eq!(report.statements, second.len() as u64);
    let (whole, _) = load_quads(model, None).unwrap();
    prop_assert_eq!(decoded(&grown), decoded(&whole));
    prop_assert_eq!(grown.triples(), whole.triples());
    let names = |store: &Store| -> Vec<String> {
        let names = store
            .graph_names()
            .map(|name| store.term(name).unwrap().to_string());
        names.collect()
    };
    prop_assert_eq!(names(&grown), names(&whole));
    // The grown store keeps every term the store it grew from held (an update's deletes
    // may leave some without triples), and adds those of the new quads.
    let mut expected_terms = terms(&whole);
    expected_terms.extend(terms(&existing));
    prop_assert_eq!(terms(&grown), expected_terms);
    if !matches!(base, Base::Updated) {
        // Same terms, same triples: the same store, byte for byte, indexes and statistics
        // included.
        let grown_files = saved_files(&grown, &dir.join("grown"));
        let whole_files = saved_files(&whole, &dir.join("whole"));
        prop_assert!(grown_files == whole_files, "the saved stores differ");
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_load_on_top_equals_one_load_of_everything(
        first in proptest::collection::vec(spec(24), 0..60),
        second in proptest::collection::vec(spec(32), 0..40),
        deleted in proptest::collection::vec(spec(24), 0..10),
        inserted in proptest::collection::vec(spec(40), 0..20),
        base in prop_oneof![Just(Base::InMemory), Just(Base::Reopened), Just(Base::Updated)],
    ) {
        check_growth(&first, &second, &deleted, &inserted, base, "prop")?;
    }

    /// A few quads on top of many: the store's triples, read in order, are merged with the
    /// new ones rather than sorted again (see `quiver-store/src/sorted_tail.rs`), in both
    /// directions; after updates, whose appended terms take merged ids out of order, they
    /// are sorted first.
    #[test]
    fn a_few_quads_on_top_of_many_merge_into_the_stores_order(
        first in proptest::collection::vec(spec(48), 300..500),
        second in proptest::collection::vec(spec(64), 0..8),
        deleted in proptest::collection::vec(spec(48), 0..10),
        inserted in proptest::collection::vec(spec(80), 0..8),
        base in prop_oneof![Just(Base::InMemory), Just(Base::Reopened), Just(Base::Updated)],
    ) {
        check_growth(&first, &second, &deleted, &inserted, base, "few")?;
    }
}

#[test]
fn a_large_store_reopened_grows_by_stretches_on_every_core() {
    // Enough subjects that the existing store is cut into many stretches of its subjects,
    // and terms enough that the merge cuts the dictionary into ranges.
    let first: Vec<Spec> = (0..=255u8)
        .flat_map(|s| (0..5u8).map(move |p| (s, p, s.wrapping_mul(7).wrapping_add(p), s % 4)))
        .collect();
    let second: Vec<Spec> = (0..=255u8).map(|s| (s, 4, s.wrapping_add(1), 0)).collect();
    for base in [Base::InMemory, Base::Reopened] {
        check_growth(&first, &second, &[], &[], base, "large").unwrap();
    }
    let deleted: Vec<Spec> = first.iter().copied().step_by(3).collect();
    let inserted: Vec<Spec> = (0..=255u8).map(|s| (s, 3, 255 - s, 2)).collect();
    check_growth(&first, &second, &deleted, &inserted, Base::Updated, "large").unwrap();
}

#[test]
fn a_named_graph_emptied_by_updates_is_not_kept() {
    let first: Vec<Spec> = vec![(1, 0, 1, 0), (1, 1, 2, 2), (2, 1, 3, 2), (3, 2, 4, 3)];
    let deleted: Vec<Spec> = vec![(1, 1, 2, 2), (2, 1, 3, 2)];
    check_growth(
        &first,
        &[(5, 0, 6, 3)],
        &deleted,
        &[],
        Base::Updated,
        "emptied",
    )
    .unwrap();
}
