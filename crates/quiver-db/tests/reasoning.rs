//! A store with reasoning under transactions: commits keep its entailment current, and
//! after reopening (the log replayed: what a crash leaves), after a checkpoint and after a
//! process killed in the middle of its updates, the entailment equals the closure computed
//! from scratch over the asserted triples.

use crate::common;

use std::collections::BTreeSet;

use common::*;
use quiver_db::{Database, SyncMode};
use quiver_sparql::ExecOptions;
use quiver_store::{Profile, Store, View};

const DATA: &str = r#"@prefix e: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
e:Student rdfs:subClassOf e:Person .
e:teaches rdfs:domain e:Teacher .
e:Teacher rdfs:subClassOf e:Person .
e:taughtBy owl:inverseOf e:teaches .
e:partOf a owl:TransitiveProperty .
e:ann a e:Student ; e:partOf e:lab .
e:bob e:teaches e:course1 .
e:lab e:partOf e:dept .
"#;

/// The default graph's triples of `store` (a view) as text.
fn default_triples(store: &Store) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    store.for_each_quad(|quad| {
        if quad.graph.is_none() {
            let term = |id| store.term(id).unwrap().to_string();
            out.insert(format!(
                "{} {} {}",
                term(quad.subject),
                term(quad.predicate),
                term(quad.object)
            ));
        }
    });
    out
}

/// The entailment of `store` computed again from its asserted triples.
fn from_scratch(store: &Store) -> BTreeSet<String> {
    let (fresh, _) = store
        .without_entailment()
        .reasoned(Profile::OwlRl, &mut |_| {});
    default_triples(&fresh.with_view(View::Entailed).unwrap())
}

fn check(store: &Store, what: &str) -> BTreeSet<String> {
    let layer = store
        .entailment()
        .unwrap_or_else(|| panic!("{what}: no entailment"));
    assert_eq!(layer.profile(), Profile::OwlRl, "{what}");
    let entailed = default_triples(&store.entailed().unwrap());
    assert_eq!(entailed, from_scratch(store), "{what}");
    entailed
}

const UPDATES: [&str; 5] = [
    "INSERT DATA { <http://example.org/cy> a <http://example.org/Student> ; <http://example.org/partOf> <http://example.org/ann> }",
    "DELETE DATA { <http://example.org/lab> <http://example.org/partOf> <http://example.org/dept> }",
    "INSERT DATA { <http://example.org/dan> <http://example.org/teaches> <http://example.org/course2> }",
    "DELETE WHERE { <http://example.org/bob> ?p ?o }",
    "INSERT DATA { <http://example.org/dept> <http://example.org/partOf> <http://example.org/uni> . <http://example.org/lab> <http://example.org/partOf> <http://example.org/dept> }",
];

/// A store of `DATA` with its OWL 2 RL entailment, saved under `dir/store`.
fn reasoning_store(dir: &Scratch) -> std::path::PathBuf {
    let file = dir.path().join("data.ttl");
    std::fs::write(&file, DATA).unwrap();
    let (store, _) = quiver_loader::load_files(
        std::slice::from_ref(&file),
        &quiver_loader::LoadOptions {
            format: None,
            lenient: false,
            threads: 1,
        },
        None,
        &quiver_loader::NoProgress,
    )
    .unwrap();
    let store_dir = dir.path().join("store");
    let (store, _) = store.reasoned(Profile::OwlRl, &mut |_| {});
    store.save(&store_dir).unwrap();
    store_dir
}

#[test]
fn commits_replay_and_checkpoints_keep_the_entailment() {
    let dir = Scratch::new("reasoning");
    let store_dir = reasoning_store(&dir);

    let mut seen = Vec::new();
    {
        let db = Database::open(&store_dir, options(SyncMode::Always)).unwrap();
        seen.push(check(&db.snapshot(), "after loading"));
        for update in UPDATES {
            db.update(update, None, &ExecOptions::default()).unwrap();
            seen.push(check(&db.snapshot(), update));
        }
        // Dropped without a checkpoint: reopening replays the log.
    }
    // The entailment changed along the way (uni reached through the restored chain).
    assert!(seen
        .last()
        .unwrap()
        .contains("<http://example.org/ann> <http://example.org/partOf> <http://example.org/uni>"));
    assert!(!seen[2].contains(
        "<http://example.org/ann> <http://example.org/partOf> <http://example.org/dept>"
    ));
    let db = Database::open(&store_dir, options(SyncMode::Always)).unwrap();
    assert_eq!(&check(&db.snapshot(), "replayed"), seen.last().unwrap());
    db.checkpoint().unwrap();
    drop(db);
    let db = Database::open(&store_dir, options(SyncMode::Always)).unwrap();
    assert_eq!(db.log_stats().records, 0, "the checkpoint emptied the log");
    assert_eq!(&check(&db.snapshot(), "checkpointed"), seen.last().unwrap());
}

const KILL_CHILD: &str = "QUIVER_DB_TEST_REASONING_KILL_CHILD";

/// Updates the killed child cycles through: those of `UPDATES`, and equalities (an
/// `owl:sameAs`, a functional property), which compute the entailment again.
fn cycled_update(k: usize) -> String {
    let e = "http://example.org/";
    let owl = "http://www.w3.org/2002/07/owl#";
    match k % 8 {
        5 => format!("INSERT DATA {{ <{e}ann> <{owl}sameAs> <{e}cy{k}> . <{e}cy{k}> <{e}partOf> <{e}lab{k}> }}"),
        6 => format!("INSERT DATA {{ <{e}advisor> a <{owl}FunctionalProperty> . <{e}eve{k}> <{e}advisor> <{e}bob> , <{e}dan{k}> }}"),
        7 => format!("DELETE WHERE {{ <{e}ann> <{owl}sameAs> ?x }}"),
        i => UPDATES[i].to_owned(),
    }
}

#[test]
fn a_process_killed_amid_its_updates_leaves_a_consistent_entailment() {
    if let Some(dir) = std::env::var_os(KILL_CHILD) {
        // The child: updates committed one after another, with checkpoints every few
        // commits (which fold the entailed layer), until it is killed.
        let options = quiver_db::DbOptions {
            checkpoint_bytes: 2 << 10,
            ..options(SyncMode::Always)
        };
        let db = Database::open(std::path::Path::new(&dir), options).unwrap();
        println!("\n#ready");
        for k in 0.. {
            db.update(&cycled_update(k), None, &ExecOptions::default())
                .unwrap();
            println!("\n#ack {k}");
        }
        return;
    }
    let dir = Scratch::new("reasoning-kill");
    let store_dir = reasoning_store(&dir);
    let mut acknowledged = 0;
    for (trial, delay_ms) in [30u64, 120, 300, 70].into_iter().enumerate() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &test_name(
                    module_path!(),
                    "a_process_killed_amid_its_updates_leaves_a_consistent_entailment",
                ),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(KILL_CHILD, &store_dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let reader = std::thread::spawn(move || {
            use std::io::BufRead;
            stdout
                .lines()
                .map_while(Result::ok)
                .filter(|line| line.starts_with("#ack"))
                .count()
        });
        std::thread::sleep(std::time::Duration::from_millis(200 + delay_ms));
        child.kill().unwrap();
        child.wait().unwrap();
        let acks = reader.join().unwrap();
        acknowledged += acks;
        eprintln!("trial {trial}: killed after {acks} acknowledged updates");
        let db = Database::open(&store_dir, options(SyncMode::Always))
            .unwrap_or_else(|e| panic!("trial {trial}: reopening after the kill: {e}"));
        check(
            &db.snapshot(),
            &format!("trial {trial}, killed after {acks} updates"),
        );
    }
    assert!(
        acknowledged >= 8,
        "the children committed only {acknowledged} updates before being killed"
    );
}
