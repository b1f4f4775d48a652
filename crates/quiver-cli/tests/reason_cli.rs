//! Reasoning as a user runs it: `quiver load --reasoning --ontology`, `quiver query
//! --reasoning` (and EXPLAIN saying which graph it read), updates that keep the
//! entailment current, `quiver reason` to change or drop it, and `quiver serve` choosing
//! per request.

use crate::serve_support;

use std::path::{Path, PathBuf};

use serve_support::{encode, ok_at, quiver, run_at, tsv_rows, Server};

const ONTOLOGY: &str = r#"@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:Student rdfs:subClassOf ex:Person .
ex:advises owl:inverseOf ex:advisor .
ex:partOf a owl:TransitiveProperty .
"#;

const DATA: &str = "<http://example.org/ann> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://example.org/Student> .
<http://example.org/ann> <http://example.org/advisor> <http://example.org/bob> .
<http://example.org/lab> <http://example.org/partOf> <http://example.org/dept> .
<http://example.org/dept> <http://example.org/partOf> <http://example.org/uni> .
";

const PERSONS: &str = "SELECT ?x WHERE { ?x a <http://example.org/Person> } ORDER BY ?x";

/// Whom bob advises: the inverse of `ex:advisor`.
const ADVISEES: &str = "SELECT ?x { <http://example.org/bob> <http://example.org/advises> ?x }";

/// A scratch directory with the ontology and the data; the store goes to `store`.
fn setup(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("reason-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ontology.ttl"), ONTOLOGY).unwrap();
    std::fs::write(dir.join("data.nt"), DATA).unwrap();
    dir
}

/// The rows of `query` as TSV lines without the header.
fn rows(location: &Path, query: &str, reasoning: bool) -> Vec<String> {
    let flags: &[&str] = if reasoning { &["--reasoning"] } else { &[] };
    tsv_rows(location, query, flags)
}

fn load_with_reasoning(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--reasoning", "owl-rl", "--ontology"])
        .arg(dir.join("ontology.ttl"))
        .arg("--location")
        .arg(&store)
        .arg(dir.join("data.nt"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("entailment (owl-rl)"), "{stderr}");
    store
}

#[test]
fn load_query_update_and_reason_from_the_command_line() {
    let dir = setup("cli");
    let store = load_with_reasoning(&dir);
    assert!(
        rows(&store, PERSONS, false).is_empty(),
        "asserted: no Person"
    );
    assert_eq!(
        rows(&store, PERSONS, true),
        vec!["<http://example.org/ann>"]
    );
    // The inverse and the transitive closure.
    assert_eq!(
        rows(&store, ADVISEES, true),
        vec!["<http://example.org/ann>"]
    );
    assert_eq!(
        rows(
            &store,
            "SELECT ?x { <http://example.org/lab> <http://example.org/partOf> ?x } ORDER BY ?x",
            true
        ),
        vec!["<http://example.org/dept>", "<http://example.org/uni>"]
    );
    let info = ok_at(&["info"], &store);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("reasoning    owl-rl:"), "{info}");
    let explain = ok_at(
        &["query", "--reasoning", "--explain", "--query", PERSONS],
        &store,
    );
    let stderr = String::from_utf8_lossy(&explain.stderr);
    assert!(
        stderr.contains("the default graph is entailed under owl-rl"),
        "{stderr}"
    );

    // An update keeps the entailment current.
    ok_at(
        &[
            "update",
            "--update",
            "INSERT DATA { <http://example.org/cy> a <http://example.org/Student> }",
        ],
        &store,
    );
    assert_eq!(
        rows(&store, PERSONS, true),
        vec!["<http://example.org/ann>", "<http://example.org/cy>"]
    );
    ok_at(
        &[
            "update",
            "--update",
            "DELETE DATA { <http://example.org/ann> a <http://example.org/Student> }",
        ],
        &store,
    );
    assert_eq!(rows(&store, PERSONS, true), vec!["<http://example.org/cy>"]);
    // A checkpoint folds the maintained entailment into the snapshot.
    ok_at(&["checkpoint"], &store);
    assert_eq!(rows(&store, PERSONS, true), vec!["<http://example.org/cy>"]);
    assert_eq!(
        rows(&store, ADVISEES, true),
        vec!["<http://example.org/ann>"]
    );

    // RDFS has no inverses; dropping the entailment makes --reasoning an error.
    ok_at(&["reason", "--profile", "rdfs"], &store);
    assert_eq!(rows(&store, PERSONS, true), vec!["<http://example.org/cy>"]);
    assert!(rows(
        &store,
        "SELECT ?x { ?x <http://example.org/advises> ?y }",
        true
    )
    .is_empty());
    ok_at(&["reason", "--off"], &store);
    let refused = run_at(&["query", "--reasoning", "--query", PERSONS], &store);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("no entailment"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_answers_from_the_entailment_per_request() {
    let dir = setup("serve");
    let store = load_with_reasoning(&dir);
    let server = Server::start(&store, &["--reasoning"]);
    let count = |extra: &str| {
        let reply = server.get(
            &format!("/query?query={}{extra}", encode(PERSONS)),
            &[("Accept", "text/tab-separated-values")],
        );
        assert_eq!(reply.status, 200, "{}", reply.text());
        reply.text().lines().count() - 1
    };
    assert_eq!(count(""), 1);
    assert_eq!(count("&reasoning=off"), 0);
    assert_eq!(count("&reasoning=on"), 1);
    let bad = server.get(
        &format!("/query?query={}&reasoning=maybe", encode(PERSONS)),
        &[],
    );
    assert_eq!(bad.status, 400, "{}", bad.text());
    let status = server.status();
    assert_eq!(status["reasoning"]["profile"], "owl-rl");
    assert_eq!(status["reasoning"]["default"], true);
    drop(server);

    // Without an entailment, --reasoning is refused at start and reasoning=on per request.
    let plain = dir.join("plain");
    ok_at(&["load", dir.join("data.nt").to_str().unwrap()], &plain);
    let refused = quiver()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--reasoning",
            "--location",
        ])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("holds no entailment"));
    let server = Server::start(&plain, &[]);
    let reply = server.get(
        &format!("/query?query={}&reasoning=on", encode(PERSONS)),
        &[],
    );
    assert_eq!(reply.status, 400, "{}", reply.text());
    assert!(reply.text().contains("no entailment"), "{}", reply.text());
    let _ = std::fs::remove_dir_all(&dir);
}
