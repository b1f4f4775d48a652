//! A store of thousands of named graphs, as a user loads, grows and queries it on a system
//! whose limit on open files is low (1,024 is the usual default; 256 here): every command
//! works, whatever the number of graphs.

use crate::temp_dir;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Output};

use temp_dir::TempDir;

/// Named graphs of the first file, each of a few triples.
const GRAPHS: usize = 2_000;

/// `quiver ARGS` with at most 256 open files, as a shell sets it.
fn quiver_limited(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 256 && exec "$@""#)
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_quiver"))
        .args(args)
        .output()
        .expect("sh runs")
}

fn ok(output: Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// N-Quads of the graphs `graphs`, graph `g` holding `1 + g % 4` triples.
fn nquads(graphs: std::ops::Range<usize>) -> String {
    let mut text = String::new();
    for g in graphs {
        for i in 0..1 + g % 4 {
            writeln!(
                text,
                "<http://example.org/s{g}> <http://example.org/p{i}> \"{g} {i}\" <http://example.org/g{g}> ."
            )
            .unwrap();
        }
    }
    text
}

/// The number of graphs and of quads in them, as the store answers.
fn graphs_and_quads(store: &Path) -> (usize, usize) {
    let store = store.to_str().unwrap();
    let query =
        "SELECT (COUNT(DISTINCT ?g) AS ?graphs) (COUNT(*) AS ?quads) { GRAPH ?g { ?s ?p ?o } }";
    let tsv = ok(quiver_limited(&[
        "query",
        "--location",
        store,
        "--query",
        query,
        "--results-format",
        "tsv",
    ]));
    let row = tsv.lines().nth(1).expect("one row");
    let numbers: Vec<usize> = row
        .split('\t')
        // A plain number, or a typed literal `"n"^^<…integer>`.
        .map(|n| n.trim().split('"').find(|part| !part.is_empty()).unwrap())
        .map(|n| n.parse().unwrap_or_else(|_| panic!("{row}")))
        .collect();
    (numbers[0], numbers[1])
}

fn quads(graphs: std::ops::Range<usize>) -> usize {
    graphs.map(|g| 1 + g % 4).sum()
}

#[test]
fn thousands_of_named_graphs_load_grow_and_answer_under_a_low_open_file_limit() {
    let dir = TempDir::new("many-graphs");
    let first = dir.file("first.nq", &nquads(0..GRAPHS));
    let more = dir.file("more.nq", &nquads(GRAPHS..GRAPHS + 500));
    let store = dir.join("store");
    let location = store.to_str().unwrap();
    ok(quiver_limited(&[
        "load",
        "--location",
        location,
        first.to_str().unwrap(),
    ]));
    assert_eq!(graphs_and_quads(&store), (GRAPHS, quads(0..GRAPHS)));
    // A few files, not one or two per graph.
    let files = std::fs::read_dir(&store).unwrap().count();
    assert!(files < 20, "{files} files for {GRAPHS} named graphs");

    // Loaded on top: the store is saved again, with more graphs.
    ok(quiver_limited(&[
        "load",
        "--location",
        location,
        more.to_str().unwrap(),
    ]));
    let total = GRAPHS + 500;
    assert_eq!(graphs_and_quads(&store), (total, quads(0..total)));

    // An update, then the store's graph 7 as the update left it.
    let update = "DELETE WHERE { GRAPH <http://example.org/g7> { ?s ?p ?o } } ; \
                  INSERT DATA { GRAPH <http://example.org/new> { <http://example.org/a> <http://example.org/b> 1 } }";
    ok(quiver_limited(&[
        "update",
        "--location",
        location,
        "--update",
        update,
    ]));
    let expected = (total, quads(0..total) - (1 + 7 % 4) + 1);
    assert_eq!(graphs_and_quads(&store), expected);
}
