//! The crate's module structure: no module cycle, and the layers of ARCHITECTURE.md.
//!
//! Reads every source file under `src/`, collects the top-level modules it names through
//! `crate::` paths (in `use` items and inline), and checks that the graph of those edges is
//! acyclic, that `compile` and `exec` never name each other, and that the operator types
//! name neither. A check of the reader itself (a cycle it must find, edges it must see in
//! the real sources) keeps the test from passing on a reader that finds nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level module → the top-level modules it names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The top-level module a source file belongs to (`exec/bgp/explore.rs` → `exec`); `None`
/// for the crate root.
fn top_module(relative: &Path) -> Option<String> {
    let first = relative
        .components()
        .next()?
        .as_os_str()
        .to_str()?
        .to_owned();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_owned())
}

/// The top-level modules `source` names through `crate::` paths, comments left out.
fn crate_references(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in source.lines() {
        let code = match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        };
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let preceded_by_ident = rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            rest = &rest[at + "crate::".len()..];
            if preceded_by_ident {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                found.extend(group_heads(group));
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        }
    }
    found
}

/// The first segment of each path of a `{a::B, c, d::{e, f}}` group (its text after `{`,
/// on the same line).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut at_start = true;
    let mut current = String::new();
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                if !current.is_empty() {
                    heads.push(std::mem::take(&mut current));
                }
                at_start = true;
            }
            c if depth == 0 && at_start && (c.is_alphanumeric() || c == '_') => current.push(c),
            _ if depth == 0 && at_start && !current.is_empty() => {
                heads.push(std::mem::take(&mut current));
                at_start = false;
            }
            _ => {}
        }
    }
    if !current.is_empty() {
        heads.push(current);
    }
    heads
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module graph of the crate's sources, and the references of each file.
fn crate_graph() -> (Graph, BTreeMap<PathBuf, BTreeSet<String>>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    assert!(
        files.len() > 20,
        "found only {} files under {}",
        files.len(),
        src.display()
    );
    let mut graph = Graph::new();
    let mut per_file = BTreeMap::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap().to_path_buf();
        let references = crate_references(&std::fs::read_to_string(&file).unwrap());
        if let Some(module) = top_module(&relative) {
            let edges = graph.entry(module.clone()).or_default();
            edges.extend(references.iter().filter(|r| **r != module).cloned());
        }
        per_file.insert(relative, references);
    }
    (graph, per_file)
}

/// A cycle of `graph` as the modules along it, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = stack.iter().position(|n| n == node).unwrap();
                let mut cycle = stack[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

#[test]
fn the_reader_sees_paths_groups_and_cycles() {
    let source = "use crate::a::B;\nuse crate::{c::D, e, f::{g, h}};\n\
                  // crate::comment\nlet x = crate::i::j(); mycrate::k();";
    let found: Vec<String> = crate_references(source).into_iter().collect();
    assert_eq!(found, ["a", "c", "e", "f", "i"]);
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
        .into_iter()
        .fold(Graph::new(), |mut graph, (from, to)| {
            graph.entry(from.into()).or_default().insert(to.into());
            graph
        });
    assert_eq!(find_cycle(&graph).unwrap(), ["a", "b", "c", "a"]);
    let mut acyclic = graph.clone();
    acyclic.get_mut("c").unwrap().remove("a");
    assert_eq!(find_cycle(&acyclic), None);
}

#[test]
fn the_modules_form_no_cycle() {
    let (graph, _) = crate_graph();
    // Edges the sources certainly have: a reader that saw none would find no cycle either.
    for (from, to) in [
        ("engine", "compile"),
        ("engine", "exec"),
        ("exec", "operator"),
        ("compile", "operator"),
    ] {
        assert!(
            graph.get(from).is_some_and(|edges| edges.contains(to)),
            "the reader missed {from} → {to}: {graph:?}"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("module cycle: {}", cycle.join(" → "));
    }
}

#[test]
fn compile_and_exec_never_name_each_other_and_operators_name_neither() {
    let (_, per_file) = crate_graph();
    let forbidden = [
        ("exec", "compile"),
        ("compile", "exec"),
        ("operator", "compile"),
        ("operator", "exec"),
    ];
    let mut seen = BTreeSet::new();
    for (file, references) in &per_file {
        let Some(module) = top_module(file) else {
            continue;
        };
        for (from, to) in forbidden {
            if module == from {
                seen.insert(from);
                assert!(
                    !references.contains(to),
                    "{} ({from}) names crate::{to}",
                    file.display()
                );
            }
        }
    }
    assert_eq!(
        seen.len(),
        3,
        "some of exec/, compile/, operator/ have no file"
    );
}
