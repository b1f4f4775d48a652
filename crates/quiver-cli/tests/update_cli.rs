//! `quiver update` and `quiver dump` as a user runs them: updates seen by the next
//! `quiver query` (no checkpoint in between), syntax errors reported like a query's, dumps
//! in every format that load back into the same quads, and console sessions that update.

use crate::temp_dir;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use oxrdf::{GraphName, NamedOrBlankNode, Quad, Term};
use oxrdfio::{RdfFormat, RdfParser};
use temp_dir::TempDir;

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Runs `quiver ARGS…`; no run may panic.
fn run(args: &[&str], location: &Path) -> Output {
    let output = quiver()
        .args(args)
        .arg("--location")
        .arg(location)
        .output()
        .expect("quiver runs");
    assert!(
        !stderr(&output).contains("panicked"),
        "stderr: {}",
        stderr(&output)
    );
    output
}

fn run_ok(args: &[&str], location: &Path) -> Output {
    let output = run(args, location);
    assert_eq!(
        output.status.code(),
        Some(0),
        "quiver {args:?}: {}",
        stderr(&output)
    );
    output
}

/// The data of the tests: triples in the default graph, a named graph, a blank node.
const DATA: &str = r#"
@prefix ex: <http://example.org/> .
ex:alice ex:knows ex:bob ; ex:name "Alice"@en ; ex:age 42 .
ex:bob ex:knows ex:carol ; ex:address _:home .
_:home ex:city "Paris" .
ex:g1 { ex:alice ex:likes ex:tea . ex:bob ex:likes "cof\"fee" . }
"#;

/// A store at `dir/store` loaded with [`DATA`].
fn loaded(dir: &TempDir) -> std::path::PathBuf {
    let file = dir.file("data.trig", DATA);
    let store = dir.join("store");
    let output = quiver()
        .arg("load")
        .arg("--location")
        .arg(&store)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    store
}

/// A quad as a comparable key; every blank node reads `_:b` (the data have one, so the
/// multiset of keys still tells the graphs apart).
fn key(quad: &Quad) -> String {
    let subject = match &quad.subject {
        NamedOrBlankNode::BlankNode(_) => "_:b".to_owned(),
        other => other.to_string(),
    };
    let object = match &quad.object {
        Term::BlankNode(_) => "_:b".to_owned(),
        other => other.to_string(),
    };
    let graph = match &quad.graph_name {
        GraphName::DefaultGraph => String::new(),
        other => other.to_string(),
    };
    format!("{subject} {} {object} {graph}", quad.predicate)
}

/// The multiset of quads in `text`, parsed with oxrdfio (an independent parser).
fn quads(text: &str, format: RdfFormat) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for quad in RdfParser::from_format(format).for_slice(text.as_bytes()) {
        let quad = quad.unwrap_or_else(|e| panic!("{e} in:\n{text}"));
        *counts.entry(key(&quad)).or_insert(0) += 1;
    }
    counts
}

/// Every quad of the store at `location`, through `quiver dump`.
fn dumped(location: &Path) -> BTreeMap<String, usize> {
    let output = run_ok(&["dump"], location);
    quads(&stdout(&output), RdfFormat::NQuads)
}

/// The rows of a SELECT through `quiver query --results-format tsv`, without the header,
/// sorted.
fn select(location: &Path, query: &str) -> Vec<String> {
    let output = run_ok(
        &["query", "--results-format", "tsv", "--query", query],
        location,
    );
    let mut rows: Vec<String> = stdout(&output).lines().skip(1).map(str::to_owned).collect();
    rows.sort();
    rows
}

#[test]
fn dump_loads_back_into_the_same_quads_in_every_format() {
    let dir = TempDir::new("dump-round-trip");
    let store = loaded(&dir);
    let expected = quads(DATA, RdfFormat::TriG);
    assert_eq!(expected.values().sum::<usize>(), 8);
    assert_eq!(dumped(&store), expected);

    for (format, extension) in [("nquads", "nq"), ("trig", "trig")] {
        let file = dir.join(&format!("dump.{extension}"));
        let output = quiver()
            .args(["dump", "--format", format, "--output"])
            .arg(&file)
            .arg("--location")
            .arg(&store)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert!(
            stdout(&output).is_empty(),
            "a dump to a file prints nothing"
        );
        let fresh = dir.join(&format!("fresh-{format}"));
        let output = quiver()
            .arg("load")
            .arg("--location")
            .arg(&fresh)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        assert_eq!(dumped(&fresh), expected, "{format}");
        // The output file was renamed into place: no temporary file is left beside it.
        let leftovers: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}

#[test]
fn one_graph_dumps_as_triples_and_many_graphs_need_a_choice() {
    let dir = TempDir::new("dump-graphs");
    let store = loaded(&dir);
    let all = quads(DATA, RdfFormat::TriG);
    let in_graph = |graph: &str| -> BTreeMap<String, usize> {
        all.iter()
            .filter(|(k, _)| k.ends_with(&format!(" {graph}")))
            .map(|(k, v)| (format!("{} ", &k[..k.len() - graph.len() - 1]), *v))
            .collect()
    };

    for format in ["ntriples", "turtle"] {
        let output = run(&["dump", "--format", format], &store);
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let message = stderr(&output);
        assert!(
            message.starts_with("error:") && message.contains("--graph"),
            "{message}"
        );
        assert!(stdout(&output).is_empty());

        let syntax = if format == "ntriples" {
            RdfFormat::NTriples
        } else {
            RdfFormat::Turtle
        };
        let output = run_ok(&["dump", "--format", format, "--graph", "default"], &store);
        assert_eq!(quads(&stdout(&output), syntax), in_graph(""), "{format}");
        assert_eq!(in_graph("").values().sum::<usize>(), 6);
        let output = run_ok(
            &[
                "dump",
                "--format",
                format,
                "--graph",
                "http://example.org/g1",
            ],
            &store,
        );
        assert_eq!(
            quads(&stdout(&output), syntax),
            in_graph("<http://example.org/g1>"),
            "{format}"
        );
    }
    // N-Quads of one graph keep its name.
    let output = run_ok(&["dump", "--graph", "http://example.org/g1"], &store);
    let g1 = quads(&stdout(&output), RdfFormat::NQuads);
    assert_eq!(g1.values().sum::<usize>(), 2);
    assert!(
        g1.keys().all(|k| k.ends_with(" <http://example.org/g1>")),
        "{g1:?}"
    );

    let output = run(&["dump", "--graph", "http://example.org/none"], &store);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("no graph <http://example.org/none>"),
        "{}",
        stderr(&output)
    );
    let output = run(&["dump", "--graph", "not an iri"], &store);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("--graph"), "{}", stderr(&output));
    let output = run(&["dump", "--format", "json"], &store);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("nquads, trig, ntriples, turtle"));
    let output = run(&["dump"], &dir.join("missing"));
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("missing"), "{}", stderr(&output));
}

#[test]
fn an_invalid_update_is_a_syntax_error_like_a_querys_and_changes_nothing() {
    let dir = TempDir::new("update-syntax");
    let store = loaded(&dir);
    let before = dumped(&store);
    let bad_query = run(&["query", "--query", "SELECT * WHERE {\n  ?s ?p }"], &store);
    let bad_update = run(
        &[
            "update",
            "--update",
            "INSERT DATA {\n  <http://e/a> <http://e/b> ?c }",
        ],
        &store,
    );
    assert_eq!(bad_query.status.code(), Some(1), "{}", stderr(&bad_query));
    assert_eq!(bad_update.status.code(), bad_query.status.code());
    let message = stderr(&bad_update);
    assert!(message.starts_with("error:"), "{message}");
    assert!(message.contains("2:"), "no line:column in {message}");
    assert_eq!(message.lines().count(), 1, "{message}");
    assert_eq!(dumped(&store), before);

    // Not even a store is created for an invalid request.
    let fresh = dir.join("never");
    let output = run(&["update", "--update", "INSERT DATA { ?x }"], &fresh);
    assert_eq!(output.status.code(), Some(1));
    assert!(!fresh.exists());
    // A file that is not there, and usage errors.
    let output = quiver()
        .args(["update", "--update-file"])
        .arg(dir.join("none.ru"))
        .arg("--location")
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("none.ru"), "{}", stderr(&output));
    let output = run(&["update"], &store);
    assert_eq!(output.status.code(), Some(2));
    let output = run(
        &["update", "--update", "CLEAR ALL", "--sync", "sometimes"],
        &store,
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("always, batch, none"));
    assert_eq!(dumped(&store), before);
}

#[test]
fn updates_are_seen_by_the_next_query_and_dump() {
    let dir = TempDir::new("update-query");
    let store = loaded(&dir);
    let people = "SELECT ?s ?o WHERE { ?s <http://example.org/knows> ?o }";
    assert_eq!(
        select(&store, people),
        [
            "<http://example.org/alice>\t<http://example.org/bob>",
            "<http://example.org/bob>\t<http://example.org/carol>"
        ]
    );
    for sync in ["always", "batch", "none"] {
        let output = run_ok(
            &[
                "update",
                "--sync",
                sync,
                "--update",
                &format!(
                    "PREFIX ex: <http://example.org/> INSERT DATA {{ ex:carol ex:knows ex:{sync} }}"
                ),
            ],
            &store,
        );
        assert!(
            stderr(&output).contains("1 quads inserted"),
            "{}",
            stderr(&output)
        );
    }
    run_ok(
        &[
            "update",
            "--base",
            "http://example.org/",
            "--update",
            "DELETE DATA { <alice> <knows> <bob> } ; INSERT DATA { GRAPH <g2> { <dave> <knows> <erin> } }",
        ],
        &store,
    );
    assert_eq!(
        select(&store, people),
        [
            "<http://example.org/bob>\t<http://example.org/carol>",
            "<http://example.org/carol>\t<http://example.org/always>",
            "<http://example.org/carol>\t<http://example.org/batch>",
            "<http://example.org/carol>\t<http://example.org/none>",
        ]
    );
    assert_eq!(
        select(
            &store,
            "SELECT ?s { GRAPH <http://example.org/g2> { ?s ?p ?o } }"
        ),
        ["<http://example.org/dave>"]
    );

    // The dump holds the updates, and loads back into the same quads.
    let mut expected = quads(DATA, RdfFormat::TriG);
    expected
        .remove("<http://example.org/alice> <http://example.org/knows> <http://example.org/bob> ");
    for sync in ["always", "batch", "none"] {
        expected.insert(
            format!("<http://example.org/carol> <http://example.org/knows> <http://example.org/{sync}> "),
            1,
        );
    }
    expected.insert(
        "<http://example.org/dave> <http://example.org/knows> <http://example.org/erin> <http://example.org/g2>".into(),
        1,
    );
    assert_eq!(dumped(&store), expected);
    let file = dir.join("dump.nq");
    run_ok(&["dump", "--output", file.to_str().unwrap()], &store);
    let fresh = dir.join("fresh");
    let output = quiver()
        .arg("load")
        .arg("--location")
        .arg(&fresh)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(dumped(&fresh), expected);

    // A failing request (a graph that exists cannot be created) changes nothing.
    let output = run(
        &["update", "--update", "INSERT DATA { <http://e/x> <http://e/y> <http://e/z> } ; CREATE GRAPH <http://example.org/g2>"],
        &store,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(dumped(&store), expected);

    // An update into an empty location creates the store.
    let created = dir.join("created");
    run_ok(
        &[
            "update",
            "--update",
            "INSERT DATA { <http://e/x> <http://e/y> 1 }",
        ],
        &created,
    );
    assert_eq!(select(&created, "SELECT ?o { ?s ?p ?o }"), ["1"]);
}

/// Runs a console session on `location` with `script` as standard input.
fn console(location: &Path, script: &str) -> Output {
    let mut child = quiver()
        .args(["console", "--threads", "1", "--sync", "batch", "--location"])
        .arg(location)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn a_console_session_updates_and_its_queries_see_it() {
    let dir = TempDir::new("console-update");
    let store = loaded(&dir);
    let file = dir.file(
        "more.ru",
        "PREFIX ex: <http://example.org/>\nINSERT DATA { ex:erin ex:knows ex:frank }",
    );
    let script = format!(
        "PREFIX ex: <http://example.org/>\n\
         # a comment\n\
         INSERT DATA {{ ex:dave ex:knows ex:erin }}\n\
         \n\
         SELECT (COUNT(*) AS ?n) {{ ?s <http://example.org/knows> ?o }}\n\
         \n\
         update -f {}\n\
         delete where {{ <http://example.org/alice> ?p ?o }}\n\
         \n\
         ASK {{ <http://example.org/alice> ?p ?o }}\n\
         \n\
         INSERT DATA {{ ?x }}\n\
         \n\
         stats\n",
        file.display()
    );
    let output = console(&store, &script);
    let out = stdout(&output);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "one command failed: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 2, "{err}");
    assert!(errors[0].contains("error at 1:"), "{err}");
    assert_eq!(errors[1], "error: 1 command(s) failed");
    let updates: Vec<&str> = out.lines().filter(|l| l.starts_with("update:")).collect();
    assert_eq!(updates.len(), 3, "{out}");
    assert!(updates[0].contains("1 quads inserted"), "{out}");
    assert!(
        out.contains("\"3\"^^<http://www.w3.org/2001/XMLSchema#integer>"),
        "{out}"
    );
    assert!(out.contains("answer: false"), "{out}");
    // After the session the location holds what the session did.
    let expected_knows = [
        "<http://example.org/bob>\t<http://example.org/carol>",
        "<http://example.org/dave>\t<http://example.org/erin>",
        "<http://example.org/erin>\t<http://example.org/frank>",
    ];
    assert_eq!(
        select(
            &store,
            "SELECT ?s ?o WHERE { ?s <http://example.org/knows> ?o }"
        ),
        expected_knows
    );

    // A session on an empty location: an update creates the store.
    let empty = dir.join("empty");
    let output = console(
        &empty,
        "INSERT DATA { <http://e/a> <http://e/b> <http://e/c> }\n\nstats\n",
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("triples      1"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_load_after_updates_keeps_them_and_later_updates_continue() {
    let dir = TempDir::new("load-after-update");
    let store = loaded(&dir);
    run_ok(
        &[
            "update",
            "--update",
            "INSERT DATA { <http://e/u1> <http://e/p> <http://e/o> }",
        ],
        &store,
    );
    let more = dir.file("more.nt", "<http://e/l1> <http://e/p> <http://e/o> .\n");
    let output = quiver()
        .args(["load", "--sync", "none", "--location"])
        .arg(&store)
        .arg(&more)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    run_ok(
        &[
            "update",
            "--update",
            "INSERT DATA { <http://e/u2> <http://e/p> <http://e/o> }",
        ],
        &store,
    );
    assert_eq!(
        select(&store, "SELECT ?s { ?s <http://e/p> <http://e/o> }"),
        ["<http://e/l1>", "<http://e/u1>", "<http://e/u2>"]
    );
    let mut expected = quads(DATA, RdfFormat::TriG);
    for s in ["l1", "u1", "u2"] {
        expected.insert(format!("<http://e/{s}> <http://e/p> <http://e/o> "), 1);
    }
    assert_eq!(dumped(&store), expected);
}

#[test]
fn an_update_over_its_limits_stops_and_changes_nothing() {
    let dir = TempDir::new("update-limits");
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--lubm", "1", "--location"])
        .arg(&store)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let count = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }";
    let before = select(&store, count);
    assert_eq!(before, ["100543"]);
    let reverse = "INSERT { ?o <http://e/reverse> ?s } WHERE { ?s ?p ?o }";
    let output = run(&["update", "--timeout", "1ms", "--update", reverse], &store);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("timed out"), "{}", stderr(&output));
    let output = run(
        &["update", "--max-memory", "1M", "--update", reverse],
        &store,
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("memory limit"),
        "{}",
        stderr(&output)
    );
    assert_eq!(select(&store, count), before);
    // Within its limits the same request runs: one new triple per distinct pair of a
    // subject and a non-literal object (a literal cannot be a subject).
    let pairs =
        "SELECT (COUNT(*) AS ?n) { SELECT DISTINCT ?s ?o { ?s ?p ?o FILTER(!isLiteral(?o)) } }";
    let pairs: u64 = select(&store, pairs)[0].parse().unwrap();
    assert!(pairs > 10_000, "{pairs}");
    run_ok(&["update", "--timeout", "60", "--update", reverse], &store);
    assert_eq!(select(&store, count), [(100_543 + pairs).to_string()]);
}

/// Bytes of the log files in `location`.
fn log_bytes(location: &Path) -> u64 {
    std::fs::read_dir(location)
        .unwrap()
        .filter_map(|entry| entry.ok())
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with("wal-"))
        })
        .map(|entry| entry.metadata().unwrap().len())
        .sum()
}

#[test]
fn a_checkpoint_folds_the_log_into_the_snapshot() {
    let dir = TempDir::new("checkpoint");
    let store = loaded(&dir);
    let before = dumped(&store);
    run_ok(
        &[
            "update",
            "--update",
            "PREFIX ex: <http://example.org/> INSERT DATA { ex:dave ex:knows ex:alice } ; \
             DELETE DATA { ex:alice ex:age 42 }",
        ],
        &store,
    );
    let updated = dumped(&store);
    assert_ne!(updated, before);
    let logged = log_bytes(&store);
    assert!(logged > 100, "the update is in the log: {logged} bytes");
    let output = run_ok(&["checkpoint"], &store);
    assert!(
        stderr(&output).contains("checkpoint of"),
        "{}",
        stderr(&output)
    );
    assert!(
        log_bytes(&store) < logged,
        "the log shrank: {} → {}",
        logged,
        log_bytes(&store)
    );
    // The snapshot alone now holds the update: the same quads, also with the log removed.
    assert_eq!(dumped(&store), updated);
    for entry in std::fs::read_dir(&store).unwrap().filter_map(|e| e.ok()) {
        if entry.file_name().to_string_lossy().starts_with("wal-") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    assert_eq!(dumped(&store), updated);
    let missing = run(&["checkpoint"], &dir.join("nothing-here"));
    assert_ne!(missing.status.code(), Some(0));
    assert!(!stderr(&missing).is_empty());
}

/// RDF 1.2 data: triple terms (nested, with blank nodes inside), reifiers, annotations and
/// base directions, in the default graph and a named one.
const DATA_12: &str = r#"
PREFIX ex: <http://example.org/>
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
ex:alice ex:knows ex:bob {| ex:since 2020 |} ; ex:said <<( ex:bob ex:age 23 )>> .
ex:bob ex:name "بوب"@ar--rtl , "Bob"@en--ltr .
ex:carol ex:claims <<( _:x ex:says <<( ex:alice ex:name "Alice"@en )>> )>> .
_:x ex:name "someone" .
ex:g1 { << ex:bob ex:knows ex:carol ~ ex:r1 >> ex:source ex:news . }
"#;

/// The quads of `text`, blank nodes renamed canonically (isomorphic datasets compare
/// equal), as sorted N-Quads lines.
fn canonical_quads(text: &str, format: RdfFormat) -> Vec<String> {
    let mut dataset: oxrdf::Dataset = RdfParser::from_format(format)
        .for_slice(text.as_bytes())
        .map(|q| q.unwrap_or_else(|e| panic!("{e} in:\n{text}")))
        .collect();
    dataset.canonicalize(oxrdf::dataset::CanonicalizationAlgorithm::Unstable);
    let mut lines: Vec<String> = dataset.iter().map(|q| q.to_string()).collect();
    lines.sort();
    lines
}

#[test]
fn rdf_12_dumps_load_back_into_the_same_quads() {
    let dir = TempDir::new("dump-rdf12");
    let file = dir.file("data.trig", DATA_12);
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--location"])
        .arg(&store)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let expected = canonical_quads(DATA_12, RdfFormat::TriG);
    assert_eq!(expected.len(), 10, "{expected:#?}");
    let dump = stdout(&run_ok(&["dump"], &store));
    assert_eq!(canonical_quads(&dump, RdfFormat::NQuads), expected);
    for (format, extension) in [("nquads", "nq"), ("trig", "trig")] {
        let dump = stdout(&run_ok(&["dump", "--format", format], &store));
        let file = dir.file(&format!("dump.{extension}"), &dump);
        let fresh = dir.join(&format!("fresh-{format}"));
        let output = quiver()
            .args(["load", "--location"])
            .arg(&fresh)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
        let again = stdout(&run_ok(&["dump"], &fresh));
        assert_eq!(
            canonical_quads(&again, RdfFormat::NQuads),
            expected,
            "{format}"
        );
    }
    // One graph at a time in the syntaxes of triples.
    let default_graph: Vec<String> = expected
        .iter()
        .filter(|q| !q.ends_with(" <http://example.org/g1>"))
        .cloned()
        .collect();
    for (format, syntax) in [
        ("ntriples", RdfFormat::NTriples),
        ("turtle", RdfFormat::Turtle),
    ] {
        let dump = stdout(&run_ok(
            &["dump", "--format", format, "--graph", "default"],
            &store,
        ));
        assert_eq!(canonical_quads(&dump, syntax), default_graph, "{format}");
    }
    // JSON-LD has no triple terms: refused with a clear error, before any output.
    let output = run(&["dump", "--format", "jsonld"], &store);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("triple terms"),
        "{}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty(), "{}", stdout(&output));
}

#[test]
fn triple_terms_nested_too_deeply_are_refused_with_their_line() {
    let dir = TempDir::new("deep-triple-terms");
    let levels = 5_000;
    let term = format!(
        "{}<http://example.org/o>{}",
        "<<( <http://example.org/s> <http://example.org/p> ".repeat(levels),
        " )>>".repeat(levels)
    );
    let text = format!(
        "<http://example.org/a> <http://example.org/b> <http://example.org/c> .\n\
         <http://example.org/a> <http://example.org/b> {term} .\n"
    );
    let file = dir.file("deep.nt", &text);
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--location"])
        .arg(&store)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(
        message.contains("deep.nt:2:") && message.contains("nested more than 64 deep"),
        "{message}"
    );
}
