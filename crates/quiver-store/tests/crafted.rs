//! Crafted stores: sections rewritten with valid checksums but invalid contents must be
//! refused at open with an error naming the section, never accepted to panic or answer
//! wrongly later.

use std::collections::BTreeSet;
use std::path::Path;

use oxrdf::{Literal, NamedNode, TermRef};
use quiver_model::term::encode_term;
use quiver_model::{Dictionary, Id};
use quiver_snapshot::rewrite::{read_sections, write_sections, Section};
use quiver_store::{Direction, EncodedGraphs, LoadInfo, Store};

use crate::support;

use support::TempDir;

const RDF_TYPE: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";

/// A store of a few people, their types, names and friends, plus one named graph.
fn small_store() -> Store {
    let iri = |s: &str| NamedNode::new(format!("http://example.org/{s}")).unwrap();
    let mut terms: Vec<oxrdf::Term> = Vec::new();
    let people: Vec<NamedNode> = (0..6).map(|i| iri(&format!("person{i}"))).collect();
    let (knows, name, graph) = (iri("knows"), iri("name"), iri("graph"));
    let (rdf_type, person, student) = (
        NamedNode::new(RDF_TYPE).unwrap(),
        iri("Person"),
        iri("Student"),
    );
    let names: Vec<Literal> = (0..6)
        .map(|i| Literal::new_simple_literal(format!("name {i}")))
        .collect();
    terms.extend(people.iter().cloned().map(Into::into));
    terms.extend(names.iter().cloned().map(Into::into));
    for t in [&knows, &name, &graph, &rdf_type, &person, &student] {
        terms.push(t.clone().into());
    }
    let mut encoded: Vec<(Vec<u8>, oxrdf::Term)> = terms
        .into_iter()
        .map(|t| {
            let mut bytes = Vec::new();
            encode_term(t.as_ref(), &mut bytes);
            (bytes, t)
        })
        .collect();
    encoded.sort_by(|a, b| a.0.cmp(&b.0));
    let dictionary = Dictionary::from_sorted(encoded.iter().map(|(b, _)| b));
    let id = |t: TermRef<'_>| encoded.iter().position(|(_, x)| x.as_ref() == t).unwrap() as Id;
    let mut triples = Vec::new();
    for (i, p) in people.iter().enumerate() {
        let class = if i % 2 == 0 { &person } else { &student };
        triples.push([id(p.into()), id((&rdf_type).into()), id(class.into())]);
        triples.push([id(p.into()), id((&name).into()), id((&names[i]).into())]);
        for j in [i + 1, i + 2, i + 4] {
            let friend = &people[j % people.len()];
            triples.push([id(p.into()), id((&knows).into()), id(friend.into())]);
        }
    }
    let named = vec![(
        id((&graph).into()),
        vec![
            [
                id((&people[0]).into()),
                id((&knows).into()),
                id((&people[5]).into()),
            ],
            [
                id((&people[3]).into()),
                id((&knows).into()),
                id((&people[1]).into()),
            ],
            [
                id((&people[3]).into()),
                id((&knows).into()),
                id((&people[2]).into()),
            ],
        ],
    )];
    Store::build(
        dictionary,
        EncodedGraphs {
            default_graph: triples,
            named_graphs: named,
        },
        LoadInfo::default(),
    )
}

/// Everything a store answers, by term: triples of every graph, through the records and
/// through `get` in both directions, and the predicate index.
fn answers(store: &Store) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let term = |id: Id| format!("{:?}", store.term(id));
    let graphs = std::iter::once((None, store.graph())).chain(
        store
            .graph_names()
            .map(|n| (Some(n), store.named_graph(n).unwrap())),
    );
    for (name, graph) in graphs {
        let g = name.map(term);
        graph.for_each_triple(|s, p, o| {
            let pt = term(store.predicate_term(p));
            seen.insert(format!("{g:?} {} {pt} {}", term(s), term(o)));
            assert!(graph.get(s, p, Direction::Out).binary_search(&o).is_ok());
            assert!(graph.get(o, p, Direction::In).binary_search(&s).is_ok());
        });
        for p in 0..store.predicate_count() as u32 {
            let pt = term(store.predicate_term(p));
            for &s in graph.predicate_subjects(p) {
                seen.insert(format!("{g:?} subject {pt} {}", term(s)));
            }
            for &o in graph.predicate_objects(p) {
                seen.insert(format!("{g:?} object {pt} {}", term(o)));
            }
        }
    }
    for class in 0..store.class_count() as u32 {
        for &i in store.instances(class) {
            seen.insert(format!("instance {class} {}", term(i)));
        }
    }
    seen
}

fn open(dir: &Path) -> Result<Store, String> {
    std::panic::catch_unwind(|| Store::open(dir))
        .expect("Store::open panicked")
        .map(|(store, _)| store)
        .map_err(|e| e.to_string())
}

/// A saved small store and its sections, to rewrite.
struct Fixture {
    _dir: TempDir,
    sections: Vec<Section>,
    metadata: serde_json::Value,
    expected: BTreeSet<String>,
}

impl Fixture {
    fn new() -> Self {
        let dir = TempDir::new("fixture");
        let store = small_store();
        store.save(&dir.0).unwrap();
        let expected = answers(&open(&dir.0).unwrap());
        assert_eq!(expected, answers(&store), "a saved store reopens the same");
        let (sections, metadata) = read_sections(&dir.0).unwrap();
        Fixture {
            _dir: dir,
            sections,
            metadata,
            expected,
        }
    }

    fn words(&self, file: &str, name: &str) -> Vec<Id> {
        bytemuck::pod_collect_to_vec(&self.section(file, name).bytes)
    }

    fn offsets(&self, file: &str, name: &str) -> Vec<u64> {
        bytemuck::pod_collect_to_vec(&self.section(file, name).bytes)
    }

    fn section(&self, file: &str, name: &str) -> &Section {
        self.sections
            .iter()
            .find(|s| s.file == file && s.name == name)
            .unwrap_or_else(|| panic!("no section {file}/{name}"))
    }

    /// Writes the sections with `edit` applied to `file`/`name` and opens the result.
    fn open_with(
        &self,
        file: &str,
        name: &str,
        edit: impl FnOnce(&mut Vec<u8>),
        metadata: impl FnOnce(&mut serde_json::Value),
    ) -> Result<Store, String> {
        let dir = TempDir::new("crafted");
        let mut sections = self.sections.clone();
        let section = sections
            .iter_mut()
            .find(|s| s.file == file && s.name == name)
            .unwrap_or_else(|| panic!("no section {file}/{name}"));
        edit(&mut section.bytes);
        let mut meta = self.metadata.clone();
        metadata(&mut meta);
        write_sections(&dir.0, &sections, meta).unwrap();
        open(&dir.0)
    }

    /// Rewrites `file`/`name` as `values` (ids or offsets) and expects an error
    /// mentioning every one of `needles`.
    fn rejects<T: bytemuck::Pod>(&self, file: &str, name: &str, values: &[T], needles: &[&str]) {
        let bytes = bytemuck::cast_slice(values).to_vec();
        self.rejects_bytes(file, name, bytes, needles);
    }

    fn rejects_bytes(&self, file: &str, name: &str, bytes: Vec<u8>, needles: &[&str]) {
        match self.open_with(file, name, |b| *b = bytes, |_| {}) {
            Ok(_) => panic!("{file}/{name}: a crafted section was accepted ({needles:?})"),
            Err(message) => {
                for needle in needles {
                    assert!(
                        message.contains(needle),
                        "{file}/{name}: error {message:?} does not mention {needle:?}"
                    );
                }
            }
        }
    }
}

/// The first vertex whose OUT record has at least two predicates and a predicate with at
/// least two neighbours; returns its record's range in `words`.
fn rich_record(offsets: &[u64], words: &[Id]) -> std::ops::Range<usize> {
    offsets
        .windows(2)
        .map(|w| w[0] as usize..w[1] as usize)
        .find(|r| {
            let record = &words[r.clone()];
            !record.is_empty() && record[0] >= 2 && record[2] >= 2
        })
        .expect("the small store has a vertex with two predicates")
}

#[test]
fn untouched_sections_reopen() {
    let fixture = Fixture::new();
    let store = fixture.open_with("catalog", "predicates", |_| {}, |_| {});
    assert_eq!(answers(&store.unwrap()), fixture.expected);
}

#[test]
fn vertex_records_are_checked() {
    let f = Fixture::new();
    let g = "graph-default";
    let offsets = f.offsets(g, "out.offsets");
    let words = f.words(g, "out.words");
    let r = rich_record(&offsets, &words);
    let (k, base) = (
        words[r.start] as usize,
        r.start + 1 + 2 * words[r.start] as usize,
    );
    let edit = |change: &dyn Fn(&mut Vec<Id>)| {
        let mut w = words.clone();
        change(&mut w);
        w
    };
    let predicates = f.words("catalog", "predicates").len() as Id;
    let terms = f.metadata["terms"].as_u64().unwrap() as Id;
    let cases: Vec<(&str, Vec<Id>, &[&str])> = vec![
        (
            "predicate out of range",
            edit(&|w| w[r.start + 2 * k - 1] = predicates + 7),
            &["graph-default", "out.words", "out of range"],
        ),
        (
            "predicates not ascending",
            edit(&|w| w.swap(r.start + 1, r.start + 3)),
            &["out.words", "ascending"],
        ),
        (
            "neighbour out of range",
            edit(&|w| w[r.end - 1] = terms + 3),
            &["out.words", "neighbour", "out of range"],
        ),
        (
            "neighbours unsorted",
            edit(&|w| w.swap(base, base + 1)),
            &["out.words", "not sorted and distinct"],
        ),
        (
            "neighbours duplicated",
            edit(&|w| w[base + 1] = w[base]),
            &["out.words", "not sorted and distinct"],
        ),
        (
            "k larger than the record",
            edit(&|w| w[r.start] = (r.len() as Id) * 3),
            &["out.words", "header"],
        ),
        (
            "k zero",
            edit(&|w| w[r.start] = 0),
            &["out.words", "without predicates"],
        ),
        (
            "last end inconsistent",
            edit(&|w| w[r.start + 2 * k] -= 1),
            &["out.words", "header ends"],
        ),
        (
            "first end past the next",
            edit(&|w| w[r.start + 2] = w[r.start + 4] + 1),
            &["out.words", "predicate"],
        ),
        (
            "an empty neighbour range",
            edit(&|w| w[r.start + 2] = 0),
            &["out.words", "neighbour range"],
        ),
        (
            "a neighbour changed in one direction only",
            edit(&|w| {
                // Still sorted and in range, so only the OUT/IN comparison can tell.
                let (last, before) = (w[r.end - 1], w[r.end - 2]);
                w[r.end - 1] = if last + 1 < terms {
                    last + 1
                } else {
                    before + 1
                };
                assert_ne!(w[r.end - 1], last, "the crafted neighbour differs");
            }),
            &["do not hold the same triples"],
        ),
    ];
    for (what, values, needles) in cases {
        eprintln!("case: {what}");
        f.rejects(g, "out.words", &values, needles);
    }
    // The record words, shortened by one: the offsets no longer span them.
    f.rejects(g, "out.words", &words[..words.len() - 1], &["out.offsets"]);
}

#[test]
fn offsets_are_checked() {
    let f = Fixture::new();
    let g = "graph-default";
    let offsets = f.offsets(g, "out.offsets");
    let words = f.words(g, "out.words").len() as u64;
    let r = rich_record(&offsets, &f.words(g, "out.words"));
    let slot = offsets
        .iter()
        .rposition(|&o| o as usize == r.start)
        .unwrap();
    let mut beyond = offsets.clone();
    beyond[slot + 1] = words + 100;
    f.rejects(g, "out.offsets", &beyond, &["out.offsets", "not a range"]);
    let mut backwards = offsets.clone();
    backwards[slot + 1] = backwards[slot + 2] + 1;
    f.rejects(g, "out.offsets", &backwards, &["out.offsets"]);
    let mut shifted = offsets.clone();
    shifted[slot + 1] += 1; // Splits two records at a wrong word.
    f.rejects(g, "out.offsets", &shifted, &["out.words"]);
    f.rejects(
        g,
        "out.offsets",
        &offsets[..offsets.len() - 1],
        &["out.offsets", "entries"],
    );
    let mut first = offsets.clone();
    first[0] = 1;
    f.rejects(g, "out.offsets", &first, &["out.offsets"]);
    // Odd byte lengths cannot even be viewed as offsets.
    let mut bytes = f.section(g, "out.offsets").bytes.clone();
    bytes.pop();
    f.rejects_bytes(g, "out.offsets", bytes, &["out.offsets"]);
}

#[test]
fn named_graphs_are_checked() {
    let f = Fixture::new();
    // The small named graph is the only one of the first pack: its arrays are the pack's.
    let g = "graph-pack-0";
    let vertices = f.words(g, "out.vertices");
    assert!(vertices.len() >= 2, "the named graph has two subjects");
    let mut unsorted = vertices.clone();
    unsorted.swap(0, 1);
    f.rejects(
        g,
        "out.vertices",
        &unsorted,
        &["graph-pack-0, named graph 0", "out.vertices", "increasing"],
    );
    let mut out_of_range = vertices.clone();
    *out_of_range.last_mut().unwrap() = f.metadata["terms"].as_u64().unwrap() as Id;
    f.rejects(
        g,
        "out.vertices",
        &out_of_range,
        &["graph-pack-0", "out.vertices", "out of range"],
    );
    // One vertex short: the pack's entry counts more than the section holds.
    f.rejects(
        g,
        "out.vertices",
        &vertices[..1],
        &["graph-pack-0", "out.vertices"],
    );
    let words = f.words(g, "in.words");
    let mut bad = words.clone();
    bad[1] = 1000;
    f.rejects(
        g,
        "in.words",
        &bad,
        &["graph-pack-0", "in.words", "out of range"],
    );
    // A value no graph takes.
    let longer = [&words[..], &[0]].concat();
    f.rejects(
        g,
        "in.words",
        &longer,
        &["graph-pack-0.in.words", "its graphs take"],
    );
    // The pack's entries: [graph number, then a count of values per array].
    let entries = f.offsets(g, "graphs");
    assert_eq!(entries.len(), 10, "one graph's entry");
    let edit = |change: &dyn Fn(&mut Vec<u64>)| {
        let mut e = entries.clone();
        change(&mut e);
        e
    };
    let cases: Vec<(&str, Vec<u64>, &[&str])> = vec![
        (
            "no such graph",
            edit(&|e| e[0] = 1),
            &["graphs", "not a named graph"],
        ),
        ("a count too large", edit(&|e| e[3] += 1), &["out.words"]),
        (
            "a count too small",
            edit(&|e| e[3] -= 1),
            &["named graph 0"],
        ),
        (
            "offsets absent",
            edit(&|e| e[2] = u64::MAX),
            &["has no out.offsets"],
        ),
        (
            "a count past any memory",
            edit(&|e| e[8] = u64::MAX - 1),
            &["graph 0"],
        ),
        (
            "half an entry",
            entries[..5].to_vec(),
            &["graphs", "entries"],
        ),
        ("no entry", Vec::new(), &["graphs", "entries"]),
        (
            "twice the graph",
            [&entries[..], &entries[..]].concat(),
            &["graphs"],
        ),
    ];
    for (what, values, needles) in cases {
        let message = f
            .open_with(
                g,
                "graphs",
                |b| *b = bytemuck::cast_slice(&values).to_vec(),
                |_| {},
            )
            .map(|_| ())
            .expect_err(what);
        for needle in needles {
            assert!(
                message.contains(needle),
                "{what}: {message:?} lacks {needle:?}"
            );
        }
    }
    // A pack the metadata does not count is not read; one it counts must exist.
    let result = f.open_with(g, "graphs", |_| {}, |m| m["graph_packs"] = 2.into());
    let message = result.map(|_| ()).unwrap_err();
    assert!(message.contains("graph-pack-1"), "{message}");
    let result = f.open_with(g, "graphs", |_| {}, |m| m["graph_packs"] = 0.into());
    let message = result.map(|_| ()).unwrap_err();
    assert!(message.contains("graph-0"), "{message}");
}

/// A store whose default graph is large enough for its IN direction to be saved apart
/// (`graph_files.rs`: 1 MiB of records or more), with a small named graph, which is not.
fn large_store() -> Store {
    const VERTICES: usize = 150_000;
    let term = |i: usize| -> Vec<u8> {
        let iri = NamedNode::new(format!("http://example.org/v{i:07}")).unwrap();
        let mut bytes = Vec::new();
        encode_term(iri.as_ref().into(), &mut bytes);
        bytes
    };
    // Zero-padded, the IRIs sort as their numbers; the last three are the predicates and
    // the graph's name.
    let dictionary =
        Dictionary::from_sorted((0..VERTICES + 3).map(term).collect::<Vec<_>>().iter());
    let (p0, p1, graph) = (VERTICES as Id, VERTICES as Id + 1, VERTICES as Id + 2);
    let default_graph = (0..VERTICES)
        .flat_map(|i| {
            let v = i as Id;
            [
                [v, p0, ((i * 7 + 1) % VERTICES) as Id],
                [v, p1, ((i * 13 + 5) % VERTICES) as Id],
            ]
        })
        .collect();
    let named_graphs = vec![(graph, vec![[0, p0, 1], [2, p1, 3]])];
    let input = EncodedGraphs {
        default_graph,
        named_graphs,
    };
    Store::build(dictionary, input, LoadInfo::default())
}

#[test]
fn a_large_graph_saves_its_in_direction_apart_and_the_previous_formats_open() {
    let dir = TempDir::new("large");
    let store = large_store();
    let expected = answers(&store);
    store.save(&dir.0).unwrap();
    let files: BTreeSet<String> = std::fs::read_dir(&dir.0)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.contains("graph-default.in-1.qvs"), "{files:?}");
    assert!(files.contains("graph-pack-0-1.qvs") && !files.contains("graph-0-1.qvs"));
    assert_eq!(answers(&open(&dir.0).unwrap()), expected);

    // Format 3 held every named graph in files of its own, format 2 also each graph's IN
    // direction in the graph's own file.
    let (sections, metadata) = read_sections(&dir.0).unwrap();
    let (mut sections, metadata) = support::unpacked(&sections, &metadata);
    let with_format = |format: u64, sections: &[quiver_snapshot::rewrite::Section]| {
        let dir = TempDir::new("format");
        let mut metadata = metadata.clone();
        metadata["store_format"] = format.into();
        write_sections(&dir.0, sections, metadata).unwrap();
        open(&dir.0)
    };
    assert_eq!(answers(&with_format(3, &sections).unwrap()), expected);
    let mut moved = 0;
    for section in &mut sections {
        if let Some(graph) = section.file.strip_suffix(".in") {
            section.file = graph.to_owned();
            moved += 1;
        }
    }
    assert_eq!(moved, 2, "the default graph's in.offsets and in.words");
    assert_eq!(answers(&with_format(2, &sections).unwrap()), expected);
    for format in [1, 5] {
        let error = with_format(format, &sections).map(|_| ()).unwrap_err();
        assert!(error.contains(&format!("store format {format}")), "{error}");
    }
}

#[test]
fn predicate_index_is_checked() {
    let f = Fixture::new();
    let g = "graph-default";
    let members = f.words(g, "predicates.members");
    let offsets = f.offsets(g, "predicates.offsets");
    let terms = f.metadata["terms"].as_u64().unwrap() as Id;
    let mut out_of_range = members.clone();
    *out_of_range.last_mut().unwrap() = terms + 1;
    f.rejects(
        g,
        "predicates.members",
        &out_of_range,
        &["predicates.members", "out of range"],
    );
    let mut unsorted = members.clone();
    unsorted.swap(0, 1);
    f.rejects(g, "predicates.members", &unsorted, &["predicates.members"]);
    // A member replaced by another vertex, still sorted and in range: the index no longer
    // lists the records' subjects.
    let mut other = members.clone();
    let (start, end) = (offsets[0] as usize, offsets[1] as usize);
    assert!(end > start + 1);
    let last = other[end - 1];
    other[end - 1] = if last + 1 < terms {
        last + 1
    } else {
        other[end - 2] + 1
    };
    if other[end - 1] == last || other[end - 1] == other[end - 2] {
        panic!("no replacement vertex available in the small store");
    }
    f.rejects(
        g,
        "predicates.members",
        &other,
        &["predicate index does not list"],
    );
    f.rejects(
        g,
        "predicates.offsets",
        &offsets[..offsets.len() - 2],
        &["predicates.offsets"],
    );
    let mut beyond = offsets.clone();
    beyond[1] = members.len() as u64 + 5;
    f.rejects(g, "predicates.offsets", &beyond, &["predicates.offsets"]);
}

#[test]
fn catalog_is_checked() {
    let f = Fixture::new();
    let predicates = f.words("catalog", "predicates");
    let terms = f.metadata["terms"].as_u64().unwrap() as Id;
    let mut unsorted = predicates.clone();
    unsorted.swap(0, 1);
    f.rejects("catalog", "predicates", &unsorted, &["catalog.predicates"]);
    let mut out_of_range = predicates.clone();
    *out_of_range.last_mut().unwrap() = terms;
    f.rejects(
        "catalog",
        "predicates",
        &out_of_range,
        &["catalog.predicates", "out of range"],
    );
    // One predicate fewer: the records name a predicate that no longer exists.
    f.rejects("catalog", "predicates", &predicates[1..], &["catalog"]);
    let classes = f.words("catalog", "classes");
    assert!(classes.len() >= 2, "the small store has two classes");
    let mut wrong = classes.clone();
    wrong[0] = terms - 1;
    f.rejects("catalog", "classes", &wrong, &["catalog.classes"]);
    f.rejects("catalog", "classes", &classes[1..], &["catalog.classes"]);
    let mut counts = f.offsets("catalog", "class_instances");
    counts[0] += 1;
    f.rejects(
        "catalog",
        "class_instances",
        &counts,
        &["catalog.class_instances"],
    );
    let stats = f.offsets("catalog", "class_predicate");
    f.rejects(
        "catalog",
        "class_predicate",
        &stats[1..],
        &["catalog.class_predicate"],
    );
    let stats = f.offsets("catalog", "predicate_stats");
    f.rejects(
        "catalog",
        "predicate_stats",
        &stats[1..],
        &["catalog.predicate_stats"],
    );
}

#[test]
fn dictionary_is_checked() {
    let f = Fixture::new();
    let buckets = f.offsets("dictionary", "buckets");
    assert!(buckets.len() >= 2, "the small store has two buckets");
    let mut shifted = buckets.clone();
    shifted[1] += 1;
    f.rejects("dictionary", "buckets", &shifted, &["dictionary", "bucket"]);
    let mut first = buckets.clone();
    first[0] = 1;
    f.rejects(
        "dictionary",
        "buckets",
        &first,
        &["dictionary", "first bucket"],
    );
    let mut swapped = buckets.clone();
    swapped.swap(0, 1);
    f.rejects("dictionary", "buckets", &swapped, &["dictionary"]);
    f.rejects(
        "dictionary",
        "buckets",
        &buckets[1..],
        &["dictionary", "buckets for"],
    );
    let data = f.section("dictionary", "data").bytes.clone();
    // The first term's tag byte (after its length varint): an unknown tag.
    let mut bad_tag = data.clone();
    bad_tag[1] = 0xEE;
    f.rejects_bytes("dictionary", "data", bad_tag, &["dictionary", "term 0"]);
    // The first term made greater than the second: terms out of order.
    let mut unsorted = data.clone();
    unsorted[1] = 0x7F;
    f.rejects_bytes("dictionary", "data", unsorted, &["dictionary"]);
    let mut short = data.clone();
    short.pop();
    f.rejects_bytes("dictionary", "data", short, &["dictionary"]);
    let mut long = data.clone();
    long.push(0);
    f.rejects_bytes("dictionary", "data", long, &["dictionary"]);
}

#[test]
fn metadata_is_checked() {
    let f = Fixture::new();
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "terms",
            Box::new(|m| m["terms"] = (m["terms"].as_u64().unwrap() + 20).into()),
            "dictionary",
        ),
        (
            "triples",
            Box::new(|m| m["graph_triples"][0] = 3.into()),
            "triples recorded",
        ),
        (
            "graph counts",
            Box::new(|m| m["graph_triples"] = serde_json::json!([1])),
            "triple counts",
        ),
        (
            "graph names",
            Box::new(|m| m["named_graphs"] = serde_json::json!([100000])),
            "named graphs",
        ),
        (
            "terms too many",
            Box::new(|m| m["terms"] = u64::MAX.into()),
            "terms",
        ),
    ];
    for (what, edit, needle) in cases {
        match f.open_with("catalog", "predicates", |_| {}, edit) {
            Ok(_) => panic!("metadata {what}: accepted"),
            Err(message) => assert!(message.contains(needle), "metadata {what}: {message}"),
        }
    }
}

/// Every word of every index section, changed in a few ways: open refuses the store, or
/// the store answers exactly as before (a change that makes no difference), never a panic
/// or a different answer.
#[test]
fn every_word_changed_is_refused_or_harmless() {
    let f = Fixture::new();
    let mut refused = 0;
    for section in &f.sections {
        let index_section = section.file.starts_with("graph-");
        if !index_section {
            continue;
        }
        let wide = section.name.ends_with("offsets");
        let width = if wide { 8 } else { std::mem::size_of::<Id>() };
        let count = section.bytes.len() / width;
        for at in 0..count {
            for change in [1u64, u64::MAX] {
                let result = f.open_with(
                    &section.file,
                    &section.name,
                    |bytes| {
                        let word = &mut bytes[at * width..(at + 1) * width];
                        let mut value = [0u8; 8];
                        value[..width].copy_from_slice(word);
                        let changed = u64::from_le_bytes(value).wrapping_add(change);
                        word.copy_from_slice(&changed.to_le_bytes()[..width]);
                    },
                    |_| {},
                );
                match result {
                    Err(_) => refused += 1,
                    Ok(store) => assert_eq!(
                        answers(&store),
                        f.expected,
                        "{}/{} word {at} + {change}: accepted with different answers",
                        section.file,
                        section.name
                    ),
                }
            }
        }
    }
    assert!(refused > 100, "only {refused} changes were refused");
}
