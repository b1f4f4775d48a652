//! Opening damaged stores: a valid small store, one section or file changed by the input.
//!
//! The first input byte chooses the section or file and the mode; the rest are edits,
//! three bytes each (a position, little-endian 16 bits, and the byte written there). In
//! the rewriting modes the store is written again through the snapshot writer, so the
//! checksums are valid and the structural validation is what stands between the bytes
//! and the engine (one mode also truncates the section at the first edit's position):
//! open may refuse the store, and when it accepts it, lookups, term decoding and
//! `SELECT * { ?s ?p ?o }` must not panic. In the in-place mode a file is changed without
//! fixing any checksum, and any actual change must be refused.

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use quiver_snapshot::rewrite::{read_sections, write_sections, Section};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::{Direction, Store};

use crate::fixture::Scratch;

struct Saved {
    /// The valid store's files, sorted by name, with their bytes: the in-place mode writes
    /// them to its scratch directory. Held in memory, so no directory outlives the process
    /// (a static is never dropped).
    files: Vec<(OsString, Vec<u8>)>,
    sections: Vec<Section>,
    metadata: serde_json::Value,
}

fn saved() -> &'static Saved {
    static SAVED: OnceLock<Saved> = OnceLock::new();
    SAVED.get_or_init(|| {
        let triples: Vec<oxrdf::Quad> = oxttl::NQuadsParser::new()
            .for_slice(STORE)
            .collect::<Result<_, _>>()
            .expect("the fixture parses");
        let (store, _) = quiver_loader::load_quads(triples, None).expect("the fixture loads");
        let dir = Scratch::new("snapshot-base");
        store.save(&dir.0).expect("the fixture saves");
        let (sections, metadata) = read_sections(&dir.0).expect("the fixture reopens");
        let mut files: Vec<(OsString, Vec<u8>)> = std::fs::read_dir(&dir.0)
            .expect("the fixture's directory lists")
            .map(|e| {
                let path = e.expect("a directory entry").path();
                let bytes = std::fs::read(&path).expect("the fixture's file reads");
                (path.file_name().expect("a file name").to_owned(), bytes)
            })
            .collect();
        files.sort();
        Saved {
            files,
            sections,
            metadata,
        }
    })
}

/// A small store with a named graph, so that every kind of section exists.
const STORE: &str = r#"
<http://example.org/a> <http://example.org/p> <http://example.org/b> .
<http://example.org/a> <http://example.org/p> <http://example.org/c> .
<http://example.org/a> <http://example.org/q> "x" .
<http://example.org/b> <http://example.org/p> <http://example.org/c> .
<http://example.org/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/C> .
<http://example.org/c> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/C> .
<http://example.org/c> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/D> .
<http://example.org/c> <http://example.org/q> "y"@en .
<http://example.org/c> <http://example.org/r> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .
_:n <http://example.org/p> <http://example.org/a> .
<http://example.org/a> <http://example.org/p> <http://example.org/c> <http://example.org/g> .
<http://example.org/b> <http://example.org/q> "z" <http://example.org/g> .
<http://example.org/c> <http://example.org/p> <http://example.org/a> <http://example.org/g> .
"#;

thread_local! {
    static WORK: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// The check of the `snapshot_open` target.
pub fn open(data: &[u8]) {
    let Some((&selector, edits)) = data.split_first() else {
        return;
    };
    let saved = saved();
    WORK.with(|work| {
        let mut work = work.borrow_mut();
        let dir = &work.get_or_insert_with(|| Scratch::new("snapshot")).0;
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).expect("the scratch dir is writable");
        match selector % 4 {
            0 | 1 => rewritten(saved, dir, selector, edits, false),
            2 => rewritten(saved, dir, selector, edits, true),
            _ => in_place(saved, dir, selector, edits),
        }
    });
}

/// Applies `edits` to `bytes`; returns whether the bytes differ afterwards (a later edit
/// may restore what an earlier one changed).
fn apply(bytes: &mut [u8], edits: &[u8]) -> bool {
    if bytes.is_empty() {
        return false;
    }
    let original = bytes.to_vec();
    for edit in edits.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([edit[0], edit[1]])) % bytes.len();
        bytes[at] = edit[2];
    }
    *bytes != original[..]
}

fn rewritten(saved: &Saved, dir: &Path, selector: u8, edits: &[u8], truncate: bool) {
    let mut sections = saved.sections.clone();
    let index = usize::from(selector / 4) % sections.len();
    let section = &mut sections[index];
    if truncate {
        let keep = edits
            .get(..2)
            .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
        section.bytes.truncate(keep);
        apply(&mut section.bytes, edits.get(2..).unwrap_or(&[]));
    } else {
        apply(&mut section.bytes, edits);
    }
    write_sections(dir, &sections, saved.metadata.clone()).expect("the scratch store writes");
    let opened = std::panic::catch_unwind(|| Store::open(dir));
    let Ok(opened) = opened else {
        panic!(
            "Store::open panicked on section {}/{}",
            sections[index].file, sections[index].name
        );
    };
    if let Ok((store, _)) = opened {
        exercise(&store);
    }
}

fn in_place(saved: &Saved, dir: &Path, selector: u8, edits: &[u8]) {
    let mut changed = false;
    let target = usize::from(selector / 4) % saved.files.len();
    for (i, (name, bytes)) in saved.files.iter().enumerate() {
        let mut bytes = bytes.clone();
        if i == target {
            changed = apply(&mut bytes, edits);
        }
        std::fs::write(dir.join(name), bytes).expect("the scratch file writes");
    }
    match Store::open(dir) {
        Ok((store, _)) => {
            assert!(
                !changed,
                "{} changed in place, but the store opened",
                saved.files[target].0.to_string_lossy()
            );
            exercise(&store);
        }
        Err(error) => assert!(changed, "the untouched store does not open: {error}"),
    }
}

/// What a user of an opened store does: lookups, term decoding, a query.
fn exercise(store: &Store) {
    let graphs = std::iter::once(store.graph()).chain(
        store
            .graph_names()
            .filter_map(|name| store.named_graph(name)),
    );
    for graph in graphs {
        graph.for_each_triple(|s, p, o| {
            let _ = graph.get(o, p, Direction::In);
            let _ = store.term(s);
            let _ = store.term(o);
            let _ = store.predicate_term(p);
        });
        for p in 0..store.predicate_count() as u32 {
            let _ = graph.predicate_subjects(p).len() + graph.predicate_objects(p).len();
        }
    }
    for class in 0..store.class_count() as u32 {
        let _ = store.instances(class);
    }
    let prepared = prepare(store, "SELECT * { ?s ?p ?o }", &PrepareOptions::default())
        .expect("a constant query prepares");
    let options = ExecOptions {
        timeout: Some(Duration::from_secs(2)),
        ..ExecOptions::default()
    };
    if let Ok(QueryResults::Solutions(solutions)) = prepared.execute(store, &options) {
        for row in 0..solutions.len() {
            let _ = solutions.row(row);
        }
    }
}
