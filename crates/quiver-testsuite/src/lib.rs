//! The W3C SPARQL 1.0 and 1.1 query and update test suites, run against Quiver.
//!
//! `manifests (manifest.rs) → one test at a time on its own thread (runner.rs): dataset
//! into a store, prepare, execute (evaluate.rs) → compare with the expected answer
//! (answer.rs, csv.rs, compare.rs) → report and ratchet (report.rs)`. Update evaluation
//! tests (update.rs) run the request on the test's dataset and compare the dataset after
//! it with the expected one. SERVICE tests call local servers of their endpoints' data
//! (endpoints.rs). Tests the engine does not aim at yet (entailment, protocol) are skipped
//! with a reason.

pub mod answer;
pub mod compare;
pub mod csv;
pub mod endpoints;
pub mod evaluate;
pub mod files;
pub mod manifest;
pub mod report;
pub mod runner;
pub mod update;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use manifest::{load_suite, TestCase, TestKind, UpdateCase, UpdateDataset};
pub use report::{Category, KnownFailures, Report, Totals};
pub use runner::{Status, TestResult};

/// Why the suite could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: invalid manifest: {message}", path.display())]
    Manifest { path: PathBuf, message: String },
    #[error("{0} is not a file IRI")]
    NotAFile(String),
}

/// Options of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only tests whose id, IRI or name contains this.
    pub filter: Option<String>,
    /// Time budget of one test.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            filter: None,
            timeout: Duration::from_secs(20),
        }
    }
}

/// Runs every (selected) test of the suite in `dir`, one after the other.
pub fn run_suite(dir: &Path, options: &Options) -> Result<Report, SuiteError> {
    let tests = load_suite(dir)?;
    let selected = tests.iter().filter(|t| match &options.filter {
        Some(f) => {
            t.id.contains(f.as_str()) || t.iri.contains(f.as_str()) || t.name.contains(f.as_str())
        }
        None => true,
    });
    let results = selected
        .map(|test| runner::run_one(test, options.timeout))
        .collect();
    Ok(Report { results })
}
