//! The RDF 1.2 syntax tests (`rdf12/` of the suite, types of the `rdft:` vocabulary):
//! N-Triples, N-Quads, Turtle, TriG and RDF/XML documents, run through Quiver's loader.
//!
//! Why through Quiver and not through the parser alone: what a document means to Quiver is
//! what its loader (`quiver_loader::load_files`) makes of it: its fast N-Triples/N-Quads
//! line parser, the oxttl/oxrdfxml fallback, the encoding of every term (triple terms and
//! directional language-tagged literals included) into the store's dictionary, and the
//! decoding back. So:
//!
//! - a positive syntax test (`rdft:TestTurtlePositiveSyntax` …) loads the action into a
//!   store, strictly (not lenient: any malformed statement fails the load), and passes
//!   when the load succeeds;
//! - a negative syntax test (`rdft:TestTurtleNegativeSyntax` …, `rdft:TestXMLNegativeSyntax`)
//!   passes only when the load fails with a syntax error;
//! - an evaluation test (`rdft:TestTurtleEval` …) loads the action, takes the store's quads
//!   back out (every id decoded with `Store::term`) and compares them with the expected
//!   N-Triples/N-Quads file (parsed by oxttl) as datasets up to blank node renaming, blank
//!   nodes inside triple terms included (`dataset.rs`). The C14N tests
//!   (`rdft:TestNTriplesPositiveC14N`) run the same way: the result is the canonical form
//!   of the action, so the store must hold the same quads (what is compared is the data,
//!   not the canonical text, which Quiver does not write here).
//!
//! Base IRIs are those the W3C runners use: the manifest's `mf:assumedTestBase` with the
//! action's file name appended (`TestCase::base`). The loader takes no base IRI, so a
//! Turtle or TriG action is loaded from a copy that starts with a `BASE` directive of it,
//! which resolves relative IRIs as a retrieval base does (error positions are given in
//! the original file's lines). N-Triples and N-Quads admit absolute IRIs only; RDF/XML
//! actions are loaded as they are, without a base (those of the RDF 1.2 suite that use
//! relative IRIs set `xml:base`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use oxrdf::GraphName;
use quiver_loader::{load_files, LoadError, LoadOptions, NoProgress};
use quiver_store::Store;

use crate::dataset::{compare_datasets, store_quads};
use crate::files::{iri_to_path, read_quads};
use crate::manifest::{RdfSyntax, TestCase, TestKind};

/// Runs an RDF test: `Ok` when it passes, else why it fails.
pub fn run(test: &TestCase) -> Result<(), String> {
    match test.kind {
        TestKind::RdfSyntax { syntax, positive } => judge_syntax(load(test, syntax)?, positive),
        TestKind::RdfEvaluation(syntax) => evaluate(test, syntax),
        _ => Err("not an RDF syntax test".into()),
    }
}

/// The verdict of a syntax test on the loader's outcome: a negative test passes on a
/// syntax error only (another error, such as a document without triples, means the
/// document parsed).
fn judge_syntax(outcome: Result<Store, Rejection>, positive: bool) -> Result<(), String> {
    match (outcome, positive) {
        (Ok(_), true) | (Err(Rejection::Syntax(_)), false) => Ok(()),
        (Err(Rejection::Syntax(error) | Rejection::Other(error)), true) => {
            Err(format!("rejected: {error}"))
        }
        (Ok(store), false) => Err(format!(
            "accepted an invalid document ({} quads loaded)",
            store_quads(&store).map_or(0, |quads| quads.len())
        )),
        (Err(Rejection::Other(error)), false) => Err(format!(
            "accepted an invalid document (no syntax error; then the load failed: {error})"
        )),
    }
}

/// An evaluation test: the store of the action must hold the result's quads.
fn evaluate(test: &TestCase, syntax: RdfSyntax) -> Result<(), String> {
    let result = test.result.as_deref().ok_or("the test names no result")?;
    let store = match load(test, syntax)? {
        Ok(store) => store,
        Err(Rejection::Syntax(error) | Rejection::Other(error)) => {
            return Err(format!("rejected: {error}"))
        }
    };
    let expected = read_quads(result, &GraphName::DefaultGraph, "")
        .map_err(|e| format!("cannot read the expected result: {e}"))?;
    compare_datasets(&expected, &store_quads(&store)?, "the loaded dataset")
}

/// Why the loader refused a document.
#[derive(Debug)]
enum Rejection {
    /// A syntax error (malformed statement), with its position in the document.
    Syntax(String),
    /// Any other refusal (no triples in the document, too many terms …).
    Other(String),
}

/// Temporary copies made so far (each in a directory of its own).
static COPIES: AtomicU64 = AtomicU64::new(0);

/// Loads the test's document with Quiver's loader, strictly. The outer error is the
/// runner's own trouble (no document, unreadable file); the inner result is the loader's
/// verdict.
fn load(test: &TestCase, syntax: RdfSyntax) -> Result<Result<Store, Rejection>, String> {
    let iri = test.query.as_deref().ok_or("the test names no document")?;
    let path = iri_to_path(iri).map_err(|e| e.to_string())?;
    let bytes =
        std::fs::read(&path).map_err(|e| format!("cannot read the test's document: {e}"))?;
    let name = path
        .file_name()
        .map_or_else(|| iri.to_owned(), |n| n.to_string_lossy().into_owned());
    let base = test.base.as_deref().filter(|_| syntax.has_base_directive());
    let copy = match base {
        Some(base) => Some(DocumentCopy::new(&name, &with_base(&bytes, base))?),
        None => None,
    };
    let options = LoadOptions {
        format: Some(syntax.format()),
        lenient: false,
        threads: 1,
    };
    let source = copy.as_ref().map_or(path.clone(), |c| c.path.clone());
    let outcome = load_files(&[source], &options, None, &NoProgress);
    let shift = u64::from(copy.is_some());
    Ok(outcome
        .map(|(store, _)| store)
        .map_err(|error| rejection(error, &name, shift)))
}

/// `bytes` with a `BASE <base>` line before its first statement (after a byte order mark).
fn with_base(bytes: &[u8], base: &str) -> Vec<u8> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let (bom, rest) = match bytes.strip_prefix(BOM) {
        Some(rest) => (BOM, rest),
        None => (&[][..], bytes),
    };
    let mut out = Vec::with_capacity(bytes.len() + base.len() + 8);
    out.extend_from_slice(bom);
    out.extend_from_slice(format!("BASE <{base}>\n").as_bytes());
    out.extend_from_slice(rest);
    out
}

/// The loader's error, told with the document's file name and its own line numbers (the
/// copy's `BASE` line, `shift`, taken off).
fn rejection(error: LoadError, name: &str, shift: u64) -> Rejection {
    match error {
        LoadError::Syntax {
            line,
            column,
            message,
            ..
        } => {
            let line = line.saturating_sub(shift).max(1);
            Rejection::Syntax(format!("{name}:{line}:{column}: {message}"))
        }
        LoadError::Io { error, .. } => Rejection::Other(format!("{name}: {error}")),
        LoadError::Input { message, .. } => Rejection::Other(format!("{name}: {message}")),
        other => Rejection::Other(other.to_string()),
    }
}

/// A document written to a directory of its own under the system's temporary directory,
/// removed when dropped.
struct DocumentCopy {
    path: PathBuf,
}

impl DocumentCopy {
    fn new(name: &str, bytes: &[u8]) -> Result<Self, String> {
        let number = COPIES.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "quiver-testsuite-rdf-{}-{number}",
            std::process::id()
        ));
        let path = dir.join(name);
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, bytes))
            .map_err(|e| format!("cannot write a copy of the document: {e}"))?;
        Ok(Self { path })
    }
}

impl Drop for DocumentCopy {
    fn drop(&mut self) {
        if let Some(dir) = self.path.parent().filter(|d| d != &Path::new("")) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RDF test of `kind` on a document of `text` named `name`, with `result` as its
    /// expected N-Quads, in a directory of its own.
    fn run_case(kind: TestKind, name: &str, text: &str, result: &str) -> Result<(), String> {
        let dir = std::env::temp_dir().join(format!(
            "quiver-testsuite-rdf-unit-{}-{name}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            crate::files::file_iri(&path).unwrap()
        };
        let test = TestCase {
            id: format!("unit/manifest.ttl#{name}"),
            iri: String::new(),
            name: name.into(),
            group: "unit".into(),
            kind,
            query: Some(write(name, text)),
            data: Vec::new(),
            graph_data: Vec::new(),
            result: Some(write("result.nq", result)),
            skip: None,
            update: None,
            service_data: Vec::new(),
            profile: None,
            base: Some(format!("http://example.org/tests/{name}")),
        };
        let outcome = run(&test);
        std::fs::remove_dir_all(&dir).unwrap();
        outcome
    }

    #[test]
    fn syntax_tests_pass_on_the_right_verdict_only() {
        let turtle = |positive| TestKind::RdfSyntax {
            syntax: RdfSyntax::Turtle,
            positive,
        };
        let good = "<http://a> <http://b> <http://c> .\n";
        let bad = "<http://a> <http://b> .\n";
        assert_eq!(run_case(turtle(true), "good.ttl", good, ""), Ok(()));
        assert_eq!(run_case(turtle(false), "bad.ttl", bad, ""), Ok(()));
        let error = run_case(turtle(true), "bad1.ttl", bad, "").unwrap_err();
        // The position is in the document's own lines, not the copy's.
        assert!(error.starts_with("rejected: bad1.ttl:1:"), "{error}");
        let error = run_case(turtle(false), "good1.ttl", good, "").unwrap_err();
        assert_eq!(error, "accepted an invalid document (1 quads loaded)");
    }

    #[test]
    fn evaluation_resolves_against_the_assumed_base_and_compares_triple_terms() {
        let eval = TestKind::RdfEvaluation(RdfSyntax::Turtle);
        let text = "<s> <http://p> <<( _:b <http://q> \"x\"@en--ltr )>> .\n";
        let result = "<http://example.org/tests/s> <http://p> \
                      <<( _:z <http://q> \"x\"@en--ltr )>> .\n";
        assert_eq!(run_case(eval.clone(), "doc.ttl", text, result), Ok(()));
        let other = "<http://example.org/tests/s> <http://p> \
                     <<( _:z <http://q> \"x\"@en--rtl )>> .\n";
        let error = run_case(eval, "doc2.ttl", text, other).unwrap_err();
        assert!(error.contains("the loaded dataset differs"), "{error}");
    }

    #[test]
    fn the_base_goes_after_a_byte_order_mark() {
        assert_eq!(
            with_base(b"\xEF\xBB\xBF<a> <b> <c> .", "http://x/"),
            b"\xEF\xBB\xBFBASE <http://x/>\n<a> <b> <c> .".to_vec()
        );
    }
}
