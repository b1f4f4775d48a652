//! The cache of prepared queries: a hit returns the query prepared before (the same
//! object) for the same text and options only; a new store version (an update) is never
//! answered with a query of the old one, and the cached query gives what a fresh one
//! gives; the least recently used entry makes room, for texts seen before only.

use crate::support;

use std::sync::Arc;

use quiver_sparql::{
    execute_update, parse_update, prepare, ExecOptions, NoLoad, PrepareOptions, QueryCache,
    QueryResults,
};
use quiver_store::Store;

const DATA: &str =
    "<http://x/a> <http://x/p> <http://x/b> .\n<http://x/b> <http://x/p> <http://x/c> .\n";
const QUERY: &str = "SELECT ?s ?o WHERE { ?s <http://x/p> ?o }";

fn rows(store: &Store, query: &quiver_sparql::PreparedQuery) -> Vec<Vec<Option<String>>> {
    let QueryResults::Solutions(solutions) = query.execute(store, &ExecOptions::default()).unwrap()
    else {
        panic!("not solutions");
    };
    let mut rows: Vec<_> = (0..solutions.len())
        .map(|r| {
            solutions
                .row(r)
                .into_iter()
                .map(|t| t.map(|t| t.to_string()))
                .collect()
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn hits_need_the_same_text_and_options() {
    let store = support::load(DATA);
    let cache = QueryCache::new(8);
    let options = PrepareOptions::default();
    let (first, hit) = cache.prepare(&store, QUERY, &options).unwrap();
    assert!(!hit);
    let (second, hit) = cache.prepare(&store, QUERY, &options).unwrap();
    assert!(hit);
    assert!(Arc::ptr_eq(&first, &second));
    assert_eq!(
        rows(&store, &second.query),
        rows(&store, &prepare(&store, QUERY, &options).unwrap())
    );

    // Another text, base IRI or dataset is another entry.
    let (other, hit) = cache
        .prepare(&store, &format!("{QUERY} "), &options)
        .unwrap();
    assert!(!hit && !Arc::ptr_eq(&first, &other));
    let based = PrepareOptions {
        base_iri: Some("http://x/".into()),
        ..PrepareOptions::default()
    };
    assert!(!cache.prepare(&store, QUERY, &based).unwrap().1);
    let dataset = spargebra::algebra::QueryDataset {
        default: vec![oxrdf::NamedNode::new("http://x/g").unwrap()],
        named: None,
    };
    let with_dataset = PrepareOptions {
        dataset: Some(dataset),
        ..PrepareOptions::default()
    };
    let (scoped, hit) = cache.prepare(&store, QUERY, &with_dataset).unwrap();
    assert!(!hit);
    assert!(
        rows(&store, &scoped.query).is_empty(),
        "the graph <http://x/g> is empty"
    );
    assert!(cache.prepare(&store, QUERY, &with_dataset).unwrap().1);
    assert!(cache.prepare(&store, QUERY, &options).unwrap().1);
    // Errors are not cached.
    assert!(cache.prepare(&store, "SELECT", &options).is_err());
    assert!(cache.prepare(&store, "SELECT", &options).is_err());
    assert_eq!(cache.len(), 4);
}

#[test]
fn an_update_makes_every_entry_stale() {
    let store = support::load(DATA);
    let cache = QueryCache::new(8);
    let options = PrepareOptions::default();
    let (before, _) = cache.prepare(&store, QUERY, &options).unwrap();
    let update = parse_update(
        "INSERT DATA { <http://x/c> <http://x/p> <http://x/new> }",
        None,
    )
    .unwrap();
    let next = execute_update(&store, &update, &ExecOptions::default(), &NoLoad)
        .unwrap()
        .store;
    assert_ne!(next.version(), store.version());
    assert!(cache.get(&next, QUERY, &options).is_none());
    let (after, hit) = cache.prepare(&next, QUERY, &options).unwrap();
    assert!(!hit && !Arc::ptr_eq(&before, &after));
    // The new entry answers like a query prepared afresh on the new version.
    let fresh = prepare(&next, QUERY, &options).unwrap();
    assert_eq!(rows(&next, &after.query), rows(&next, &fresh));
    assert_eq!(rows(&next, &after.query).len(), 3);
    // The old version's entries are gone; a request still reading the old version is
    // prepared afresh, not cached over the newer entries.
    assert_eq!(cache.len(), 1);
    let (old, hit) = cache.prepare(&store, QUERY, &options).unwrap();
    assert!(!hit);
    assert_eq!(rows(&store, &old.query).len(), 2);
    assert!(cache.prepare(&next, QUERY, &options).unwrap().1);
}

#[test]
fn the_least_recently_used_entry_makes_room() {
    let store = support::load(DATA);
    let cache = QueryCache::new(2);
    let options = PrepareOptions::default();
    let texts = [
        "ASK { ?s ?p ?o }",
        "ASK { ?s <http://x/p> ?o }",
        "ASK { ?s ?p <http://x/c> }",
    ];
    cache.prepare(&store, texts[0], &options).unwrap();
    cache.prepare(&store, texts[1], &options).unwrap();
    assert!(cache.prepare(&store, texts[0], &options).unwrap().1);
    // The cache is full: a text met for the first time is prepared, not cached; met
    // again, it is.
    cache.prepare(&store, texts[2], &options).unwrap();
    assert!(cache.get(&store, texts[2], &options).is_none());
    assert_eq!(cache.len(), 2);
    assert!(!cache.prepare(&store, texts[2], &options).unwrap().1);
    assert_eq!(cache.len(), 2);
    assert!(cache.get(&store, texts[0], &options).is_some());
    assert!(cache.get(&store, texts[1], &options).is_none());
    assert!(cache.get(&store, texts[2], &options).is_some());
    // A cache of no entries prepares every time.
    let none = QueryCache::new(0);
    assert!(!none.prepare(&store, texts[0], &options).unwrap().1);
    assert!(!none.prepare(&store, texts[0], &options).unwrap().1);
}

/// A full cache makes room one entry at a time, the least recently used: of eight, with
/// the two oldest used again, the third oldest goes, then the fourth.
#[test]
fn a_full_cache_drops_its_least_recently_used_entry() {
    let store = support::load(DATA);
    let cache = QueryCache::new(8);
    let options = PrepareOptions::default();
    let texts: Vec<String> = (0..12)
        .map(|i| format!("ASK {{ ?s <http://x/p> ?o }} LIMIT {}", i + 1))
        .collect();
    for text in &texts[..8] {
        assert!(!cache.prepare(&store, text, &options).unwrap().1);
    }
    assert_eq!(cache.len(), 8);
    // Entries 0 and 1 are used again: 2 and 3 are now the least recent.
    for text in &texts[..2] {
        assert!(cache.get(&store, text, &options).is_some());
    }
    // Met twice: the first is turned away, the second admitted in place of entry 2.
    cache.prepare(&store, &texts[8], &options).unwrap();
    assert!(cache.get(&store, &texts[8], &options).is_none());
    cache.prepare(&store, &texts[8], &options).unwrap();
    assert_eq!(cache.len(), 8);
    for (i, text) in texts[..9].iter().enumerate() {
        let held = cache.get(&store, text, &options).is_some();
        assert_eq!(held, i != 2, "entry {i}");
    }
    // Every get above used its entry again, in order: entry 0 is now the least recent.
    cache.prepare(&store, &texts[9], &options).unwrap();
    cache.prepare(&store, &texts[9], &options).unwrap();
    assert!(cache.get(&store, &texts[0], &options).is_none());
    assert!(cache.get(&store, &texts[9], &options).is_some());
    assert_eq!(cache.len(), 8);
}

/// A stream of texts met once each, as a server sees from a template, leaves a full cache
/// as it was: every entry still hits, and none of the new texts was cached.
#[test]
fn texts_met_once_leave_a_full_cache_alone() {
    let store = support::load(DATA);
    let cache = QueryCache::new(4);
    let options = PrepareOptions::default();
    let text = |i: usize| format!("ASK {{ ?s <http://x/p> ?o }} LIMIT {}", i + 1);
    for i in 0..4 {
        cache.prepare(&store, &text(i), &options).unwrap();
    }
    assert_eq!(cache.len(), 4);
    for i in 4..1_000 {
        let (_, hit) = cache.prepare(&store, &text(i), &options).unwrap();
        assert!(!hit);
    }
    assert_eq!(cache.len(), 4);
    for i in 0..4 {
        assert!(
            cache.prepare(&store, &text(i), &options).unwrap().1,
            "entry {i}"
        );
    }
    // One of the stream comes back while remembered: it is cached now.
    cache.prepare(&store, &text(999), &options).unwrap();
    assert!(cache.get(&store, &text(999), &options).is_some());
}
