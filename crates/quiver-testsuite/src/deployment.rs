//! Where an evaluation test's query runs: by default a store of the test's dataset; with
//! a [`Deployment`], whatever its caller builds from the dataset's quads, such as a
//! cluster loaded by its workers, whose coordinator prepares and runs the query with its
//! basic graph patterns explored over the partitions. The suite then checks the deployed
//! engine against the W3C's expected answers, as it checks the single store.
//!
//! The testsuite knows nothing of the cluster: a deployment hands back the coordinator's
//! store and the [`BgpPartitions`] its queries run on, the shapes the engine already takes
//! (`PrepareOptions::partitions`, `ExecOptions::partitions`).

use std::sync::Arc;

use oxrdf::Quad;
use quiver_sparql::partitions::BgpPartitions;
use quiver_store::Store;

/// Builds the engine a test's query runs on from the test's dataset.
pub trait Deployment: Send + Sync {
    /// A name for reports (`cluster of 3 workers`).
    fn name(&self) -> String;

    /// The engine holding `quads` (each file's blank nodes scoped apart already).
    fn deploy(&self, quads: Vec<Quad>) -> Result<Deployed, String>;
}

/// An engine a [`Deployment`] built.
pub struct Deployed {
    /// The store the query is prepared and run on (a cluster's coordinator).
    pub store: Store,
    /// Where its basic graph patterns run; `None`: on `store` itself.
    pub partitions: Option<Arc<dyn BgpPartitions>>,
    /// Kept until the query's answer is read, then dropped (the cluster's workers, its
    /// files).
    pub keep: Box<dyn Send>,
}

/// Whether a deployment runs `test`: query evaluation tests (the result formats' too)
/// without an entailment regime. Syntax tests never read a store, update tests change
/// one (a deployed cluster is read-only), and entailment reads a reasoned store.
pub fn runs_on_a_deployment(test: &crate::TestCase) -> bool {
    use crate::TestKind;
    matches!(
        test.kind,
        TestKind::QueryEvaluation | TestKind::CsvResultFormat
    ) && test.profile.is_none()
}
