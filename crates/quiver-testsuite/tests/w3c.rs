//! The whole W3C suite, checked against the ratchet in `known-failures.txt`: a listed test
//! that passes must be removed from the list, and a failing test that is not listed is a
//! regression.

use std::path::{Path, PathBuf};

use quiver_testsuite::{run_suite, Category, KnownFailures, Options};

#[test]
fn w3c_suite_matches_the_known_failures() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir.join("../../../shared"));
    let suite = shared.join("sparql-tests");
    assert!(
        suite.join("sparql11").is_dir(),
        "the W3C test suite is missing at {} (it lives in the shared data beside the \
         checkout; set QUIVER_SHARED to its directory)",
        suite.display()
    );
    let report = run_suite(&suite, &Options::default()).expect("the suite's manifests load");
    let known = std::fs::read_to_string(crate_dir.join("known-failures.txt"))
        .expect("known-failures.txt is readable");
    let known = KnownFailures::parse(&known);
    println!("{}", report.table());
    println!("{}", report.summary());
    let mut ids: Vec<&str> = report.results.iter().map(|r| r.test.id.as_str()).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "test ids must be unique for the ratchet");
    let totals = report.totals();
    assert!(
        totals.passed > 0,
        "no test passed: {}",
        report.summary_line()
    );
    for category in [Category::Syntax, Category::Evaluation, Category::Update] {
        let counted = report.category_totals(category);
        assert!(
            counted.passed > 0,
            "no {category:?} test passed: {}",
            report.summary()
        );
    }
    // Every update evaluation test runs (none is skipped).
    let updates = report.category_totals(Category::Update);
    assert_eq!(
        updates.skipped,
        0,
        "update evaluation tests skipped: {}",
        report.summary()
    );
    assert!(
        updates.passed + updates.failed >= 90,
        "the update evaluation suites were not all found: {}",
        report.summary()
    );
    // The federated query tests run, against local servers of their endpoints' data.
    let federated: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.test.group.ends_with("/service") || r.test.group.ends_with("/syntax-fed"))
        .collect();
    assert!(federated.len() >= 10, "the SERVICE suites were not found");
    let skipped: Vec<&str> = federated
        .iter()
        .filter(|r| matches!(r.status, quiver_testsuite::Status::Skipped(_)))
        .map(|r| r.test.id.as_str())
        .collect();
    assert!(skipped.is_empty(), "SERVICE tests skipped: {skipped:?}");
    // The entailment tests of the RDFS and OWL RDF-Based regimes run under a profile, and
    // most pass (the others are known failures with their reasons).
    let entailment: Vec<_> = report
        .results
        .iter()
        .filter(|r| r.test.group.ends_with("/entailment") && r.test.profile.is_some())
        .collect();
    let passed = entailment
        .iter()
        .filter(|r| matches!(r.status, quiver_testsuite::Status::Passed))
        .count();
    assert!(
        entailment.len() >= 40 && passed >= 35,
        "{passed} of {} entailment tests passed",
        entailment.len()
    );
    let violations = report.ratchet_violations(&known, true);
    assert!(
        violations.is_empty(),
        "{} ratchet violations (regenerate with `cargo run --release -p quiver-testsuite -- \
         ../shared/sparql-tests --write-known-failures crates/quiver-testsuite/known-failures.txt` \
         once the change is intended):\n{}",
        violations.len(),
        violations.join("\n")
    );
}
