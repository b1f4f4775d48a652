//! Update evaluation tests (`mf:UpdateEvaluationTest`): the test's dataset (`ut:data` files
//! in the default graph, each `ut:graphData` file in the named graph its label names) goes
//! into a store, the request runs through Quiver's update evaluation, and the final version
//! must hold the expected dataset's quads, blank nodes compared up to renaming
//! (`dataset.rs`). Every listed graph exists before the request, even an empty one (so
//! `CLEAR GRAPH` of it succeeds); afterwards only quads are compared, since a store may or
//! may not keep a graph that became empty. `LOAD` reads `file:` IRIs only.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use oxrdf::{GraphName, NamedNode, Quad};
use quiver_sparql::update::{execute_update, LoadHandler};
use quiver_sparql::{parse_update, ExecOptions};
use quiver_store::{ChangeSet, Store};

use crate::dataset::{compare_datasets, store_quads};
use crate::files::{read_quads, read_text};
use crate::manifest::{TestCase, UpdateDataset};

/// Runs an update evaluation test: `Ok` when the dataset after the request is the
/// expected one.
pub fn run(test: &TestCase, timeout: Duration, cancel: Arc<AtomicBool>) -> Result<(), String> {
    let case = test
        .update
        .as_ref()
        .ok_or("the test describes no datasets")?;
    let request = test.query.as_deref().ok_or("the test names no request")?;
    let text = read_text(request)?;
    let update =
        parse_update(&text, Some(request)).map_err(|e| format!("request does not parse: {e}"))?;
    let store = store_of(&case.before)?;
    let options = ExecOptions {
        threads: 1,
        timeout: Some(timeout),
        cancel: Some(cancel),
        ..ExecOptions::default()
    };
    let outcome = execute_update(&store, &update, &options, &FileLoader)
        .map_err(|e| format!("update failed: {e}"))?;
    compare_datasets(
        &quads_of(&case.after, "e")?,
        &store_quads(&outcome.store)?,
        "the dataset after the update",
    )
}

/// Loads `file:` IRIs through the test files' parsers.
struct FileLoader;

impl LoadHandler for FileLoader {
    fn load(&self, source_iri: &str) -> Result<Vec<Quad>, String> {
        if !source_iri.starts_with("file:") {
            return Err(format!(
                "cannot load {source_iri}: only file: IRIs are read"
            ));
        }
        read_quads(source_iri, &GraphName::DefaultGraph, "")
    }
}

/// The quads of a test dataset; `prefix` scopes the blank nodes of each file.
fn quads_of(dataset: &UpdateDataset, prefix: &str) -> Result<Vec<Quad>, String> {
    let mut quads = Vec::new();
    for (i, file) in dataset.data.iter().enumerate() {
        quads.extend(read_quads(
            file,
            &GraphName::DefaultGraph,
            &format!("{prefix}d{i}_"),
        )?);
    }
    for (i, (name, file)) in dataset.graphs.iter().enumerate() {
        let name = NamedNode::new(name.as_str()).map_err(|e| format!("graph {name}: {e}"))?;
        quads.extend(read_quads(file, &name.into(), &format!("{prefix}g{i}_"))?);
    }
    Ok(quads)
}

/// The store of a test dataset, every listed named graph existing.
fn store_of(dataset: &UpdateDataset) -> Result<Store, String> {
    let (store, _) =
        quiver_loader::load_quads(quads_of(dataset, "")?, None).map_err(|e| e.to_string())?;
    let mut changes = ChangeSet::new(&store);
    for (name, _) in &dataset.graphs {
        let name = NamedNode::new(name.as_str()).map_err(|e| format!("graph {name}: {e}"))?;
        let id = changes
            .intern(&store, name.as_ref().into())
            .map_err(|e| e.to_string())?;
        changes.created_graphs.push(id);
    }
    store.apply(&changes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An update test of `request` on a default graph file, expecting `after`.
    fn run_case(request: &str, before: &str, after: &str) -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!(
            "quiver-testsuite-update-{}-{}",
            std::process::id(),
            after.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            crate::files::file_iri(&path).unwrap()
        };
        let test = TestCase {
            id: "unit/manifest.ttl#u".into(),
            iri: String::new(),
            name: "u".into(),
            group: "unit".into(),
            kind: crate::TestKind::UpdateEvaluation,
            query: Some(write("request.ru", request)),
            data: Vec::new(),
            graph_data: Vec::new(),
            result: None,
            skip: None,
            update: Some(crate::UpdateCase {
                before: UpdateDataset {
                    data: vec![write("before.nt", before)],
                    graphs: vec![("http://g".into(), write("empty.nt", ""))],
                },
                after: UpdateDataset {
                    data: vec![write("after.nt", after)],
                    graphs: Vec::new(),
                },
            }),
            service_data: Vec::new(),
            profile: None,
            base: None,
        };
        let outcome = run(
            &test,
            Duration::from_secs(10),
            Arc::new(AtomicBool::new(false)),
        );
        std::fs::remove_dir_all(&dir).unwrap();
        outcome
    }

    #[test]
    fn an_update_test_passes_only_on_the_expected_dataset() {
        let before = "<http://s> <http://p> <http://o> .\n";
        let after = "<http://s> <http://p> <http://o> .\n<http://s> <http://p> <http://o2> .\n";
        let request = "INSERT DATA { <http://s> <http://p> <http://o2> }";
        assert_eq!(run_case(request, before, after), Ok(()));
        let error = run_case(request, before, before).unwrap_err();
        assert!(error.contains("differs"), "{error}");
        // The listed graph exists before the request, though its file is empty.
        assert_eq!(run_case("CLEAR GRAPH <http://g>", before, before), Ok(()));
        let error = run_case("DROP GRAPH <http://nowhere>", before, before).unwrap_err();
        assert!(error.contains("does not exist"), "{error}");
    }
}
