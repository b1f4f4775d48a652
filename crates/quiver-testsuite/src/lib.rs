//! The W3C test suites, run against Quiver: the SPARQL 1.0 and 1.1 query and update suites
//! (`shared/sparql-tests`), and the SPARQL 1.2 and RDF 1.2 suites (`shared/rdf12-tests`:
//! triple terms, reifiers, annotations, directional language-tagged literals, in queries,
//! results formats and the N-Triples, N-Quads, Turtle, TriG and RDF/XML syntaxes).
//!
//! `manifests (manifest.rs) → one test at a time on its own thread (runner.rs): dataset
//! into a store, prepare, execute (evaluate.rs) → compare with the expected answer
//! (answer.rs, csv.rs, compare.rs) → report and ratchet (report.rs)`. Update evaluation
//! tests (update.rs) run the request on the test's dataset and compare the dataset after
//! it with the expected one (dataset.rs). SERVICE tests call local servers of their
//! endpoints' data (endpoints.rs). The RDF 1.2 syntax and evaluation tests load their
//! document with Quiver's loader and compare the store's quads with the expected ones
//! (rdf_syntax.rs). SPARQL 1.2 tests use the SPARQL test types and run as SPARQL 1.1 ones
//! do. Tests the engine does not aim at yet (entailment regimes it lacks, RDF entailment,
//! protocol) are skipped with a reason.

pub mod answer;
pub mod compare;
pub mod csv;
pub mod dataset;
pub mod deployment;
pub mod endpoints;
pub mod evaluate;
pub mod expected;
pub mod files;
pub mod manifest;
pub mod rdf_syntax;
pub mod report;
pub mod runner;
pub mod update;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use deployment::{Deployed, Deployment};

pub use manifest::RdfSyntax;
pub use manifest::{
    load_suite, read_suite, Suite, TestCase, TestKind, UpdateCase, UpdateDataset, ROOT_MANIFESTS,
};
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
    #[error("{}: no test suite here (none of {roots})", path.display())]
    NoSuite { path: PathBuf, roots: String },
}

/// Options of a run.
#[derive(Clone)]
pub struct Options {
    /// Only tests whose id, IRI or name contains this.
    pub filter: Option<String>,
    /// Time budget of one test.
    pub timeout: Duration,
    /// Where evaluation tests run (`None`: a store of their dataset); the tests a
    /// deployment does not run ([`deployment::runs_on_a_deployment`]) are skipped.
    pub deployment: Option<Arc<dyn Deployment>>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            filter: None,
            timeout: Duration::from_secs(20),
            deployment: None,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("filter", &self.filter)
            .field("timeout", &self.timeout)
            .field("deployment", &self.deployment.as_ref().map(|d| d.name()))
            .finish()
    }
}

/// Runs every (selected) test of the suites in `dir` (those of [`ROOT_MANIFESTS`] it
/// holds), one after the other.
pub fn run_suite(dir: &Path, options: &Options) -> Result<Report, SuiteError> {
    let Suite { tests, missing } = read_suite(dir)?;
    let selected = tests.iter().filter(|t| match &options.filter {
        Some(f) => {
            t.id.contains(f.as_str()) || t.iri.contains(f.as_str()) || t.name.contains(f.as_str())
        }
        None => true,
    });
    let results = selected
        .map(|test| runner::run_one(test, options))
        .collect();
    Ok(Report {
        results,
        missing_manifests: missing,
    })
}
