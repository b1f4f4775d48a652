//! The W3C RDF 1.2 and SPARQL 1.2 test suites (`shared/rdf12-tests`), checked against the
//! ratchet in `known-failures-12.txt`: a listed test that passes must be removed from the
//! list, and a failing test that is not listed is a regression. The RDF 1.2 tests load
//! their documents with Quiver's loader (triple terms, reifiers, annotations, directional
//! language-tagged literals, in N-Triples, N-Quads, Turtle, TriG and RDF/XML); the SPARQL
//! 1.2 tests run the SPARQL test types through the engine. The whole run takes seconds.

use std::path::{Path, PathBuf};
use std::time::Instant;

use quiver_testsuite::{run_suite, Category, KnownFailures, Options, RdfSyntax, Status, TestKind};

#[test]
fn w3c_12_suites_match_the_known_failures() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir.join("../../../shared"));
    let suite = shared.join("rdf12-tests");
    assert!(
        suite.join("rdf12").is_dir() && suite.join("sparql12").is_dir(),
        "the W3C RDF 1.2 and SPARQL 1.2 test suites are missing at {} (they live in the \
         shared data beside the checkout; set QUIVER_SHARED to its directory)",
        suite.display()
    );
    let started = Instant::now();
    let report = run_suite(&suite, &Options::default()).expect("the suites' manifests load");
    println!("ran in {:.1} s", started.elapsed().as_secs_f64());
    let known = std::fs::read_to_string(crate_dir.join("known-failures-12.txt"))
        .expect("known-failures-12.txt is readable");
    let known = KnownFailures::parse(&known);
    println!("{}", report.table());
    println!("{}", report.summary());
    let mut ids: Vec<&str> = report.results.iter().map(|r| r.test.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "test ids must be unique for the ratchet");
    // Only the RDF 1.1 suites the RDF 1.2 manifests include (`../../rdf11/…`) are not
    // in this copy.
    let unexpected: Vec<&String> = report
        .missing_manifests
        .iter()
        .filter(|m| !m.starts_with("rdf11/"))
        .collect();
    assert!(
        unexpected.is_empty(),
        "included manifests missing: {unexpected:?}"
    );
    // Each part of the suites was found and mostly passes.
    for (category, least) in [
        (Category::RdfSyntax, 150),
        (Category::RdfEvaluation, 140),
        (Category::Syntax, 150),
        (Category::Evaluation, 40),
        (Category::Update, 3),
    ] {
        let counted = report.category_totals(category);
        assert!(
            counted.passed >= least,
            "fewer than {least} {category:?} tests passed: {}",
            report.summary()
        );
    }
    // Every RDF syntax and evaluation test runs, in every syntax; only the RDF Semantics
    // (entailment) tests are skipped.
    for syntax in [
        RdfSyntax::NTriples,
        RdfSyntax::NQuads,
        RdfSyntax::Turtle,
        RdfSyntax::TriG,
        RdfSyntax::RdfXml,
    ] {
        let of_syntax = |r: &&quiver_testsuite::TestResult| match r.test.kind {
            TestKind::RdfSyntax { syntax: s, .. } | TestKind::RdfEvaluation(s) => s == syntax,
            _ => false,
        };
        let tests: Vec<_> = report.results.iter().filter(of_syntax).collect();
        let passed = tests.iter().filter(|r| r.status == Status::Passed).count();
        assert!(passed >= 20, "{passed} {syntax:?} tests passed");
        let skipped: Vec<&str> = tests
            .iter()
            .filter(|r| matches!(r.status, Status::Skipped(_)))
            .map(|r| r.test.id.as_str())
            .collect();
        assert!(skipped.is_empty(), "RDF tests skipped: {skipped:?}");
    }
    let skipped_elsewhere: Vec<&str> = report
        .results
        .iter()
        .filter(|r| matches!(r.status, Status::Skipped(_)))
        .filter(|r| r.test.group != "rdf12/rdf-semantics")
        .map(|r| r.test.id.as_str())
        .collect();
    assert!(
        skipped_elsewhere.is_empty(),
        "tests skipped outside the RDF Semantics suite: {skipped_elsewhere:?}"
    );
    let violations = report.ratchet_violations(&known, true);
    assert!(
        violations.is_empty(),
        "{} ratchet violations (regenerate with `cargo run --release -p quiver-testsuite -- \
         ../shared/rdf12-tests --write-known-failures \
         crates/quiver-testsuite/known-failures-12.txt` once the change is intended, and keep \
         the reasons):\n{}",
        violations.len(),
        violations.join("\n")
    );
}
