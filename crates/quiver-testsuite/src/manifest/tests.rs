//! Walking manifests of both styles, in a suite directory written for the test.

use std::path::{Path, PathBuf};

use super::*;

/// A suite directory of its own under the system's temporary directory, with `files`.
fn suite(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "quiver-testsuite-manifest-{}-{name}",
        std::process::id()
    ));
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

const PREFIXES: &str = "\
PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#>
PREFIX rdft: <http://www.w3.org/ns/rdftest#>
PREFIX qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#>
PREFIX trs: <https://example.org/tests#>
";

#[test]
fn rdf_manifests_name_themselves_and_give_a_base() {
    let root = format!(
        "{PREFIXES}trs:manifest a mf:Manifest ;
           mf:include (<a/manifest.ttl> <../rdf11/a/manifest.ttl>) ."
    );
    let a = format!(
        "{PREFIXES}trs:manifest a mf:Manifest ;
           mf:assumedTestBase <https://example.org/rdf12/a/> ;
           mf:entries (trs:t1 trs:t2 trs:t3) .
         trs:t1 a rdft:TestTurtleEval ; mf:name \"one\" ;
           mf:action <t1.ttl> ; mf:result <t1.nt> .
         trs:t2 a rdft:TestNTriplesNegativeSyntax ; mf:action <t2.nt> .
         trs:t3 a mf:PositiveEntailmentTest ; mf:action <t3.ttl> ."
    );
    let sparql = format!(
        "{PREFIXES}<> a mf:Manifest ; mf:entries (<#u>) .
         <#u> a mf:PositiveUpdateSyntaxTest ; mf:action <u.ru> ."
    );
    let dir = suite(
        "rdf",
        &[
            ("rdf12/manifest.ttl", &root),
            ("rdf12/a/manifest.ttl", &a),
            ("sparql12/manifest.ttl", &sparql),
        ],
    );
    let read = read_suite(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    // The included RDF 1.1 manifest is missing: left out, and listed.
    assert_eq!(read.missing, vec!["rdf11/a/manifest.ttl".to_owned()]);
    let ids: Vec<&str> = read.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "sparql12/manifest.ttl#u",
            "rdf12/a/manifest.ttl#t1",
            "rdf12/a/manifest.ttl#t2",
            "rdf12/a/manifest.ttl#t3"
        ]
    );
    let [u, t1, t2, t3] = &read.tests[..] else {
        unreachable!()
    };
    assert_eq!(u.kind, TestKind::PositiveUpdateSyntax);
    assert_eq!(t1.kind, TestKind::RdfEvaluation(RdfSyntax::Turtle));
    assert_eq!((t1.name.as_str(), t1.group.as_str()), ("one", "rdf12/a"));
    assert_eq!(
        t1.base.as_deref(),
        Some("https://example.org/rdf12/a/t1.ttl")
    );
    assert!(t1.query.as_deref().unwrap().ends_with("/rdf12/a/t1.ttl"));
    assert!(t1.result.as_deref().unwrap().ends_with("/rdf12/a/t1.nt"));
    assert_eq!(t1.skip, None);
    assert_eq!(
        t2.kind,
        TestKind::RdfSyntax {
            syntax: RdfSyntax::NTriples,
            positive: false
        }
    );
    assert!(
        t3.skip.as_deref().unwrap().contains("entailment"),
        "{:?}",
        t3.skip
    );
}

#[test]
fn a_directory_without_any_root_manifest_is_an_error() {
    let dir = suite("none", &[("README", "nothing")]);
    let error = read_suite(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(matches!(error, SuiteError::NoSuite { .. }), "{error}");
    assert!(error.to_string().contains("rdf12/manifest.ttl"), "{error}");
    assert!(read_suite(Path::new("/no/such/dir")).is_err());
}
