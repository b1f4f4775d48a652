//! Full-text search through SPARQL on a live database: `quiver:matches` and `quiver:score`,
//! `CONTAINS` and `REGEX` through the index against the same filters without it, and the
//! index kept in step with updates, checkpoints and reopening.

use crate::common;

use std::collections::BTreeSet;

use common::*;
use proptest::prelude::*;
use quiver_db::{Database, SyncMode};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

const PREFIXES: &str =
    "PREFIX ex: <http://example.org/> PREFIX quiver: <https://quiver-rdf.github.io/ns#> ";

/// The rows of `query` on `store`, each as its terms joined by spaces, sorted.
fn rows(store: &Store, query: &str) -> Result<Vec<String>, String> {
    let query = format!("{PREFIXES}{query}");
    let prepared = prepare(store, &query, &PrepareOptions::default()).map_err(|e| e.to_string())?;
    let QueryResults::Solutions(solutions) = prepared
        .execute(store, &ExecOptions::default())
        .map_err(|e| e.to_string())?
    else {
        return Err("not solutions".into());
    };
    let mut rows = Vec::new();
    for i in 0..solutions.len() {
        let row: Vec<String> = solutions
            .row(i)
            .into_iter()
            .map(|t| t.map_or("UNDEF".to_owned(), |t| t.to_string()))
            .collect();
        rows.push(row.join(" "));
    }
    rows.sort();
    Ok(rows)
}

/// The plan of `query` (to see whether it reads the text index).
fn plan(store: &Store, query: &str) -> String {
    let query = format!("{PREFIXES}{query}");
    prepare(store, &query, &PrepareOptions::default())
        .unwrap()
        .plan_summary()
}

fn insert(db: &Database, triples: &str) {
    db.update(
        &format!("{PREFIXES} INSERT DATA {{ {triples} }}"),
        None,
        &ExecOptions::default(),
    )
    .unwrap();
}

const DATA: &str = r#"
    ex:a ex:label "The quick brown fox" .
    ex:b ex:label "A quick red car" .
    ex:c ex:label "running shoes"@en .
    ex:d ex:name "Quick Silver" .
    ex:e ex:label "slow turtle" .
"#;

#[test]
fn matches_binds_literals_and_scores_and_follows_updates() {
    let dir = Scratch::new("text-matches");
    let db = Database::open(
        dir.path(),
        quiver_db::DbOptions {
            create: true,
            ..options(SyncMode::Always)
        },
    )
    .unwrap();
    insert(&db, DATA);
    // No index yet: a clear error naming the command that builds one.
    let error = rows(&db.snapshot(), r#"SELECT ?l { ?l quiver:matches "quick" }"#).unwrap_err();
    assert!(error.contains("quiver text-index build"), "{error}");
    let report = db.build_text_index(2).unwrap();
    assert_eq!(report.literals, 5);
    let store = db.snapshot();
    assert_eq!(
        rows(
            &store,
            r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "quick" }"#
        )
        .unwrap(),
        ["<http://example.org/a>", "<http://example.org/b>"]
    );
    // Only the graph's patterns restrict the literals: ex:name too when asked.
    assert_eq!(
        rows(
            &store,
            r#"SELECT ?s ?p { ?s ?p ?l . ?l quiver:matches "quick" }"#
        )
        .unwrap(),
        [
            "<http://example.org/a> <http://example.org/label>",
            "<http://example.org/b> <http://example.org/label>",
            "<http://example.org/d> <http://example.org/name>",
        ]
    );
    // Stems of tagged literals; scores as doubles, higher for the closer match.
    assert_eq!(
        rows(
            &store,
            r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "run" }"#
        )
        .unwrap(),
        ["<http://example.org/c>"]
    );
    let scored = rows(
        &store,
        r#"SELECT ?s ?score { ?s ex:label ?l . ?l quiver:matches "quick OR fox" . ?l quiver:score ?score } ORDER BY DESC(?score)"#,
    )
    .unwrap();
    assert_eq!(scored.len(), 2);
    assert!(
        scored.iter().all(|r| r.contains("XMLSchema#double")),
        "{scored:?}"
    );
    let best = rows(
        &store,
        r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "quick OR fox" . ?l quiver:score ?score } ORDER BY DESC(?score) LIMIT 1"#,
    )
    .unwrap();
    assert_eq!(best, ["<http://example.org/a>"]);
    // Updates: a new literal is found at once, a deleted one is gone (its term stays in the
    // dictionary, but no triple holds it).
    insert(&db, r#"ex:f ex:label "quick thinking" ."#);
    db.update(
        &format!(r#"{PREFIXES} DELETE DATA {{ ex:b ex:label "A quick red car" }}"#),
        None,
        &ExecOptions::default(),
    )
    .unwrap();
    let store = db.snapshot();
    assert_eq!(
        rows(&store, r#"SELECT ?l { ?l quiver:matches "quick" }"#).unwrap(),
        [
            "\"Quick Silver\"",
            "\"The quick brown fox\"",
            "\"quick thinking\""
        ]
    );
    // Reopened: the commits since the build come back from the log; after a checkpoint,
    // from the saved index.
    drop(store);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(
        rows(
            &db.snapshot(),
            r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "thinking" }"#
        )
        .unwrap(),
        ["<http://example.org/f>"]
    );
    db.checkpoint().unwrap();
    insert(&db, r#"ex:g ex:label "thinking fast and slow" ."#);
    drop(db);
    let db = Database::open(dir.path(), options(SyncMode::Always)).unwrap();
    assert_eq!(
        rows(
            &db.snapshot(),
            r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "thinking" }"#
        )
        .unwrap(),
        ["<http://example.org/f>", "<http://example.org/g>"]
    );
    // A backup carries the index: its saved part, and on opening the copy, the literals
    // committed after the last checkpoint.
    let backups = Scratch::new("text-backup");
    let copy = backups.path().join("copy");
    db.backup(&copy).unwrap();
    let backup = Database::open(&copy, options(SyncMode::Always)).unwrap();
    assert!(copy.join("text").join("meta.json").exists());
    assert_eq!(
        rows(
            &backup.snapshot(),
            r#"SELECT ?s { ?s ex:label ?l . ?l quiver:matches "thinking" }"#
        )
        .unwrap(),
        ["<http://example.org/f>", "<http://example.org/g>"]
    );
    drop(backup);
    // Misuse is an error that says how to write it.
    let error = rows(&db.snapshot(), r#"SELECT ?l { ?l quiver:matches ?q }"#).unwrap_err();
    assert!(error.contains("string literal"), "{error}");
    let error = rows(
        &db.snapshot(),
        r#"SELECT ?l { ?l quiver:matches "-quick" }"#,
    )
    .unwrap_err();
    assert!(error.contains("only excludes"), "{error}");
}

#[test]
fn contains_and_regex_through_the_index_equal_the_scan() {
    let mut data = String::new();
    for i in 0..400 {
        let label = match i % 7 {
            0 => format!("Widget number {i}"),
            1 => format!("gadget-{i}"),
            2 => format!("WIDGETRY {i}"),
            3 => format!("Ｗidget {i}"),
            4 => format!("s\u{17F}idget {i}"),
            _ => format!("thing {i}"),
        };
        data.push_str(&format!(
            "ex:s{i} ex:label \"{label}\" . ex:s{i} ex:n {i} .\n"
        ));
    }
    let db = Database::in_memory(
        quiver_loader::load_quads(std::iter::empty(), None)
            .unwrap()
            .0,
    );
    insert(&db, &data);
    let without = db.snapshot();
    db.build_text_index(1).unwrap();
    let with = db.snapshot();
    for query in [
        r#"SELECT ?s ?l { ?s ex:label ?l FILTER(CONTAINS(?l, "idget")) }"#,
        r#"SELECT ?s ?l { ?s ex:label ?l FILTER(CONTAINS(?l, "Widget")) }"#,
        r#"SELECT ?s ?l { ?s ex:label ?l FILTER(REGEX(?l, "widget", "i")) }"#,
        r#"SELECT ?s ?l { ?s ex:label ?l FILTER(REGEX(?l, "SIDGET", "i")) }"#,
        r#"SELECT ?s ?l { ?s ex:label ?l FILTER(REGEX(?l, "get 1")) }"#,
        r#"SELECT ?s ?n { ?s ex:label ?l ; ex:n ?n FILTER(CONTAINS(?l, "adget-3") && ?n > 100) }"#,
    ] {
        let expected = rows(&without, query).unwrap();
        assert!(!expected.is_empty(), "{query}");
        assert_eq!(rows(&with, query).unwrap(), expected, "{query}");
        assert!(
            plan(&with, query).contains("Text"),
            "{query}: {}",
            plan(&with, query)
        );
        assert!(!plan(&without, query).contains("Text"), "{query}");
    }
    // A needle every literal holds reads no fewer literals through the index: the scan.
    let query = r#"SELECT ?s { ?s ex:label ?l FILTER(CONTAINS(?l, "i")) }"#;
    assert!(!plan(&with, query).contains("Text"));
    assert_eq!(rows(&with, query).unwrap(), rows(&without, query).unwrap());
}

fn word() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "alpha", "Beta", "gamma", "delta", "alphabet", "BETA", "eps",
    ])
}

fn label() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..4).prop_map(|w| w.join(" "))
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u8, String),
    Delete(u8),
    Checkpoint,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0u8..12, label()).prop_map(|(s, l)| Step::Insert(s, l)),
        1 => (0u8..12).prop_map(Step::Delete),
        1 => Just(Step::Checkpoint),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// After every step, a word search gives the subjects a scan of the current labels
    /// gives, and `CONTAINS` gives the same rows with the index as without it.
    #[test]
    fn searches_equal_a_scan_under_updates(steps in prop::collection::vec(step(), 1..10), needle in word()) {
        let dir = Scratch::new("text-model");
        let db = Database::open(dir.path(), quiver_db::DbOptions { create: true, ..options(SyncMode::None) }).unwrap();
        db.build_text_index(1).unwrap();
        let mut model: std::collections::BTreeMap<u8, BTreeSet<String>> = Default::default();
        for step in steps {
            match step {
                Step::Insert(s, label) => {
                    insert(&db, &format!("ex:s{s} ex:label \"{label}\" ."));
                    model.entry(s).or_default().insert(label);
                }
                Step::Delete(s) => {
                    db.update(&format!("{PREFIXES} DELETE WHERE {{ ex:s{s} ex:label ?l }}"), None, &ExecOptions::default()).unwrap();
                    model.remove(&s);
                }
                Step::Checkpoint => {
                    db.checkpoint().unwrap();
                }
            }
            let store = db.snapshot();
            let mut expected: Vec<String> = model
                .iter()
                .filter(|(_, labels)| labels.iter().any(|l| l.split(' ').any(|w| w.eq_ignore_ascii_case(needle))))
                .map(|(s, _)| format!("<http://example.org/s{s}>"))
                .collect();
            expected.sort();
            let found = rows(&store, &format!("SELECT DISTINCT ?s {{ ?s ex:label ?l . ?l quiver:matches \"{needle}\" }}")).unwrap();
            prop_assert_eq!(found, expected);
            let contains = format!("SELECT ?s ?l {{ ?s ex:label ?l FILTER(CONTAINS(?l, \"{}\")) }}", &needle[1..]);
            let plain = store.with_text_index(None);
            prop_assert_eq!(rows(&store, &contains).unwrap(), rows(&plain, &contains).unwrap());
        }
    }
}
