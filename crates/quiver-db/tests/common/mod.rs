//! Helpers of the database tests: scratch directories, tagged commits, and a naive model
//! of the expected content (sets of quads as text) to compare stores against.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use oxrdf::{GraphNameRef, Literal, NamedNode, QuadRef, TermRef};
use quiver_db::{Database, DbOptions, SyncMode};
use quiver_store::{ChangeSet, Quad, Store};

pub const TAG: &str = "http://example.org/tag";

/// A fresh, empty directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "quiver-db-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn options(sync: SyncMode) -> DbOptions {
    DbOptions {
        sync,
        create: true,
        ..DbOptions::default()
    }
}

/// The `i`-th subject of commit `n`.
pub fn subject(n: u64, i: usize) -> NamedNode {
    NamedNode::new(format!("http://example.org/s{n}-{i}")).unwrap()
}

/// A change set inserting `batch` quads tagged `n` (`<s{n}-{i}> <tag> "n"`), in `graph`.
pub fn tagged(store: &Store, n: u64, batch: usize, graph: Option<&str>) -> ChangeSet {
    let mut set = ChangeSet::new(store);
    let tag = NamedNode::new(TAG).unwrap();
    let predicate = set.intern(store, TermRef::NamedNode(tag.as_ref())).unwrap();
    let literal = Literal::new_simple_literal(n.to_string());
    let object = set
        .intern(store, TermRef::Literal(literal.as_ref()))
        .unwrap();
    let graph = graph.map(|g| {
        let g = NamedNode::new(g).unwrap();
        set.intern(store, TermRef::NamedNode(g.as_ref())).unwrap()
    });
    for i in 0..batch {
        let s = subject(n, i);
        let subject = set.intern(store, TermRef::NamedNode(s.as_ref())).unwrap();
        set.inserts.push(Quad {
            subject,
            predicate,
            object,
            graph,
        });
    }
    set
}

/// Every quad of `store` as text (`s p o g`, `g` empty for the default graph).
pub fn quads(store: &Store) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    store.for_each_quad(|q| {
        let text = |id| store.term(id).unwrap().to_string();
        out.insert(format!(
            "{} {} {} {}",
            text(q.subject),
            text(q.predicate),
            text(q.object),
            q.graph.map(text).unwrap_or_default()
        ));
    });
    out
}

/// The text of a quad as [`quads`] writes it.
pub fn quad_text(quad: QuadRef<'_>) -> String {
    let graph = match quad.graph_name {
        GraphNameRef::DefaultGraph => String::new(),
        g => g.to_string(),
    };
    format!(
        "{} {} {} {graph}",
        quad.subject, quad.predicate, quad.object
    )
}

/// The quads `tagged(.., n, batch, graph)` inserts, as text.
pub fn tagged_text(n: u64, batch: usize, graph: Option<&str>) -> Vec<String> {
    let g = graph.map(|g| format!("<{g}>")).unwrap_or_default();
    (0..batch)
        .map(|i| format!("<{}> <{TAG}> \"{n}\" {g}", subject(n, i).as_str()))
        .collect()
}

/// How many quads carry each tag number.
pub fn tag_counts(store: &Store) -> BTreeMap<u64, usize> {
    let mut counts = BTreeMap::new();
    let Some(tag) = store.iri_id(TAG) else {
        return counts;
    };
    store.for_each_quad(|q| {
        if q.predicate == tag {
            let oxrdf::Term::Literal(literal) = store.term(q.object).unwrap() else {
                panic!("tag object is not a literal");
            };
            *counts.entry(literal.value().parse().unwrap()).or_insert(0) += 1;
        }
    });
    counts
}

/// Commits `tagged(.., n, batch, None)`.
pub fn commit_tagged(db: &Database, n: u64, batch: usize) -> quiver_db::UpdateReport {
    db.commit_changes(|store| Ok(vec![tagged(store, n, batch, None)]))
        .unwrap()
}

/// The log files of a store directory, by name.
pub fn log_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| quiver_db::is_log_file_name(p.file_name().unwrap().to_str().unwrap()))
        .collect();
    files.sort();
    files
}

/// Copies the files of `from` into the empty directory `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The test harness's name of the test `name` declared in the module `module` (its
/// `module_path!()`): the path past the crate's name, as `--exact` wants it when the test
/// binary runs itself as a child process for one test.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}
