//! Load → index → the same triples; save → reopen → the same answers; the graph index
//! checked against a naive scan of the triple list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use oxrdf::vocab::{rdf, xsd};
use oxrdf::{BlankNode, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use oxttl::NTriplesSerializer;
use proptest::prelude::*;
use quiver_loader::{load_files, load_lubm, LoadOptions, NoProgress};
use quiver_lubm::LubmConfig;
use quiver_model::Id;
use quiver_store::{Direction, Store};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-roundtrip-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_ntriples(path: &Path, triples: &[Triple]) {
    let mut serializer = NTriplesSerializer::new().for_writer(Vec::new());
    for triple in triples {
        serializer.serialize_triple(triple).unwrap();
    }
    std::fs::write(path, serializer.finish()).unwrap();
}

/// Every triple of the store's default graph, decoded.
fn decoded(store: &Store) -> BTreeSet<String> {
    let mut triples = BTreeSet::new();
    store.graph().for_each_triple(|s, p, o| {
        let term = |id: Id| store.term(id).expect("stored id decodes");
        let subject = match term(s) {
            Term::NamedNode(n) => NamedOrBlankNode::from(n),
            Term::BlankNode(b) => NamedOrBlankNode::from(b),
            other => panic!("literal subject {other}"),
        };
        let Term::NamedNode(predicate) = term(store.predicate_term(p)) else {
            panic!("predicate is not an IRI")
        };
        triples.insert(Triple::new(subject, predicate, term(o)).to_string());
    });
    triples
}

/// Checks every lookup of the index against a naive scan of `triples`.
fn check_index(store: &Store, triples: &[Triple]) {
    let id = |t: &Term| store.term_id(t.as_ref()).expect("term stored");
    let mut out: BTreeMap<(Id, Id), BTreeSet<Id>> = BTreeMap::new();
    let mut inn: BTreeMap<(Id, Id), BTreeSet<Id>> = BTreeMap::new();
    for t in triples {
        let (s, p, o) = (
            id(&t.subject.clone().into()),
            id(&t.predicate.clone().into()),
            id(&t.object),
        );
        out.entry((s, p)).or_default().insert(o);
        inn.entry((o, p)).or_default().insert(s);
    }
    let graph = store.graph();
    for ((s, p), objects) in &out {
        let predicate = store.predicate_of_term(*p).unwrap();
        let expected: Vec<Id> = objects.iter().copied().collect();
        assert_eq!(
            graph.get(*s, predicate, Direction::Out),
            expected.as_slice()
        );
        assert!(graph.predicate_subjects(predicate).binary_search(s).is_ok());
    }
    for ((o, p), subjects) in &inn {
        let predicate = store.predicate_of_term(*p).unwrap();
        let expected: Vec<Id> = subjects.iter().copied().collect();
        assert_eq!(graph.get(*o, predicate, Direction::In), expected.as_slice());
        assert!(graph.predicate_objects(predicate).binary_search(o).is_ok());
    }
    // Variable predicate: all edges of a vertex, both directions.
    for vertex in out.keys().map(|(s, _)| *s).collect::<BTreeSet<_>>() {
        let edges: usize = graph
            .edges(vertex, Direction::Out)
            .iter()
            .map(|(_, n)| n.len())
            .sum();
        let expected: usize = out
            .range((vertex, 0)..=(vertex, Id::MAX))
            .map(|(_, v)| v.len())
            .sum();
        assert_eq!(edges, expected);
    }
    // Predicate index sizes and statistics.
    for predicate in 0..store.predicate_count() as u32 {
        let p = store.predicate_term(predicate);
        let subjects = out.keys().filter(|(_, q)| *q == p).count();
        let objects = inn.keys().filter(|(_, q)| *q == p).count();
        assert_eq!(graph.predicate_subjects(predicate).len(), subjects);
        assert_eq!(graph.predicate_objects(predicate).len(), objects);
        let stats = store.predicate_stats(predicate);
        assert_eq!(stats.subjects as usize, subjects);
        let count: usize = out
            .iter()
            .filter(|((_, q), _)| *q == p)
            .map(|(_, v)| v.len())
            .sum();
        assert_eq!(stats.triples as usize, count);
    }
    // Type index: instances of each class.
    for class in store.class_stats() {
        let class_id = store.class_of_term(class.class).unwrap();
        let rdf_type = store.predicate_id(rdf::TYPE.as_str()).unwrap();
        let expected = &inn[&(class.class, store.predicate_term(rdf_type))];
        assert_eq!(store.instances(class_id).len(), expected.len());
        assert_eq!(class.instances as usize, expected.len());
    }
}

fn subject() -> impl Strategy<Value = NamedOrBlankNode> {
    prop_oneof![
        (0u8..40).prop_map(|i| NamedNode::new_unchecked(format!("http://example.org/r{i}")).into()),
        (0u8..6)
            .prop_map(|i| NamedNode::new_unchecked(format!("http://example.org/ü/ç{i}")).into()),
        (0u8..10).prop_map(|i| BlankNode::new_unchecked(format!("b{i}")).into()),
    ]
}

fn object() -> impl Strategy<Value = Term> {
    prop_oneof![
        subject().prop_map(Term::from),
        (0u8..4).prop_map(|i| NamedNode::new_unchecked(format!("http://example.org/C{i}")).into()),
        "[a-z\"\\\\\n\té😀 ]{0,8}".prop_map(|s| Literal::new_simple_literal(s).into()),
        (
            "[a-z]{0,6}",
            prop_oneof![Just("en"), Just("fr-be"), Just("de")]
        )
            .prop_map(|(s, l)| Literal::new_language_tagged_literal_unchecked(s, l).into()),
        (-50i64..50).prop_map(|i| Literal::new_typed_literal(i.to_string(), xsd::INTEGER).into()),
        any::<bool>().prop_map(|b| Literal::new_typed_literal(b.to_string(), xsd::BOOLEAN).into()),
    ]
}

fn triple() -> impl Strategy<Value = Triple> {
    let predicate = prop_oneof![
        (0u8..5).prop_map(|i| NamedNode::new_unchecked(format!("http://example.org/p{i}"))),
        Just(rdf::TYPE.into_owned()),
    ];
    (subject(), predicate, object()).prop_map(|(s, p, o)| {
        if p == rdf::TYPE {
            let class = match &o {
                Term::NamedNode(n) => n.clone(),
                _ => NamedNode::new_unchecked("http://example.org/C0"),
            };
            Triple::new(s, p, class)
        } else {
            Triple::new(s, p, o)
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn load_index_snapshot_round_trip(triples in proptest::collection::vec(triple(), 1..120), threads in 1usize..3) {
        let dir = temp_dir("prop");
        let file = dir.join("data.nt");
        write_ntriples(&file, &triples);
        let options = LoadOptions { format: None, lenient: false, threads };
        let (store, report) = load_files(&[file], &options, None, &NoProgress).unwrap();
        prop_assert_eq!(report.statements, triples.len() as u64);

        let expected: BTreeSet<String> = triples.iter().map(Triple::to_string).collect();
        prop_assert_eq!(store.triples(), expected.len() as u64);
        prop_assert_eq!(&decoded(&store), &expected);
        check_index(&store, &triples);

        let location = dir.join("store");
        store.save(&location).unwrap();
        let (reopened, _) = Store::open(&location).unwrap();
        prop_assert_eq!(&decoded(&reopened), &expected);
        check_index(&reopened, &triples);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn adding_a_file_to_a_store_gives_the_union() {
    let dir = temp_dir("union");
    let a = dir.join("a.nt");
    let b = dir.join("b.ttl");
    std::fs::write(
        &a,
        "<http://e/s> <http://e/p> <http://e/o> .\n<http://e/s> <http://e/p> \"x\" .\n",
    )
    .unwrap();
    std::fs::write(
        &b,
        "@prefix e: <http://e/> .\ne:s e:p e:o2 , \"x\" .\ne:t a e:C .\n",
    )
    .unwrap();
    let options = LoadOptions {
        format: None,
        lenient: false,
        threads: 2,
    };
    let (first, _) = load_files(&[a], &options, None, &NoProgress).unwrap();
    let (both, _) = load_files(&[b], &options, Some(&first), &NoProgress).unwrap();
    assert_eq!(both.triples(), 4);
    let decoded = decoded(&both);
    assert!(decoded.contains("<http://e/s> <http://e/p> <http://e/o2>"));
    assert!(decoded
        .contains("<http://e/t> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/C>"));
    assert_eq!(both.class_count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lubm1_from_the_reference_file_equals_lubm1_from_the_generator() {
    let shared = std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    let reference = shared.join("lubm/lubm1-uba-sorted.nt.gz");
    assert!(reference.exists(), "missing {}", reference.display());
    let options = LoadOptions {
        format: None,
        lenient: false,
        threads: 2,
    };
    let (from_file, _) = load_files(&[reference], &options, None, &NoProgress).unwrap();
    let (generated, report) = load_lubm(LubmConfig::standard(1), 2, None, &NoProgress).unwrap();
    assert_eq!(report.statements, 100_543);
    assert_eq!(from_file.triples(), 100_543);
    assert_eq!(generated.triples(), 100_543);
    assert_eq!(from_file.terms(), generated.terms());
    let mut a = Vec::new();
    let mut b = Vec::new();
    from_file.dictionary().for_each(|_, t| a.push(t.to_vec()));
    generated.dictionary().for_each(|_, t| b.push(t.to_vec()));
    assert!(a == b, "dictionaries differ");
    let mut ta = Vec::new();
    let mut tb = Vec::new();
    from_file
        .graph()
        .for_each_triple(|s, p, o| ta.push((s, p, o)));
    generated
        .graph()
        .for_each_triple(|s, p, o| tb.push((s, p, o)));
    assert!(ta == tb, "triples differ");
}
