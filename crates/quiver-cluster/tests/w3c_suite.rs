//! The W3C SPARQL 1.0, 1.1 and 1.2 query evaluation tests (1.2's triple terms and
//! reifiers, directional language tags) on a cluster, in its two layouts:
//! loaded by its workers (each test's dataset written as N-Quads and loaded by 3 workers of
//! this process, each parsing its share, each term numbered at its owner, no worker
//! holding the whole dictionary; the cluster then started on the partitions), and cut from
//! a whole store into 3 partitions (`quiver partition`'s layout, every partition holding
//! the whole dictionary). The test's query is prepared and run by the coordinator with
//! every basic graph pattern explored over the partitions.
//! The answers are checked against the W3C's expected ones, an independent reference for
//! every SPARQL feature the coordinator evaluates over the partitions' rows (filters,
//! functions over terms decoded at their owners, ORDER BY, aggregates, property paths,
//! negation, GRAPH and FROM, SERVICE), not only the patterns the cluster's own tests write.
//!
//! A ratchet per layout (`w3c-cluster-failures-{loaded,cut}.txt` beside this file, with
//! each failure's reason) lists the tests that fail on it: a listed test that passes must
//! be removed, and a failing test not listed is a regression.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use oxrdf::Quad;
use quiver_cluster::load::{load_cluster, LoadCluster, LoadInput};
use quiver_cluster::TimelyPartitions;
use quiver_loader::{LoadOptions, NoProgress};
use quiver_store::partition::read_layout;
use quiver_store::partition_stats::StatisticsMerger;
use quiver_testsuite::{
    run_suite, Category, Deployed, Deployment, KnownFailures, Options, Report, Status,
};

use crate::common;

/// Workers, one partition each: three, so that a pattern's rows cross between owners and
/// none of them is the coordinator's alone.
const WORKERS: usize = 3;

/// A cluster of [`WORKERS`] workers of this process, loaded from a test's dataset by
/// them.
struct LoadedCluster;

/// A cluster of [`WORKERS`] workers of this process over a store of a test's dataset cut
/// into as many partitions, the coordinator holding the first, planning with the whole
/// store's statistics merged from the partitions'.
struct CutCluster;

impl Deployment for CutCluster {
    fn name(&self) -> String {
        format!("cluster of {WORKERS} partitions cut from a store")
    }

    fn deploy(&self, quads: Vec<Quad>) -> Result<Deployed, String> {
        let (whole, _) = quiver_loader::load_quads(quads, None).map_err(|e| e.to_string())?;
        cut(&whole)
    }
}

/// `whole` cut into [`WORKERS`] partitions served by as many workers of this process.
fn cut(whole: &quiver_store::Store) -> Result<Deployed, String> {
    let partitions = Arc::new(TimelyPartitions::in_process(whole, WORKERS as u32)?);
    let parts: Vec<quiver_store::Store> = (0..WORKERS as u32)
        .map(|index| whole.partition(index, WORKERS as u32))
        .collect();
    let mut statistics = StatisticsMerger::default();
    for part in &parts {
        statistics.add(part);
    }
    let mut coordinator = parts.into_iter().next().ok_or("no partition")?;
    coordinator.use_statistics(&statistics.finish(whole.rdf_type()));
    Ok(Deployed {
        store: coordinator,
        partitions: Some(partitions.clone()),
        keep: Box::new(partitions),
    })
}

/// A directory removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Deployment for LoadedCluster {
    fn name(&self) -> String {
        format!("cluster of {WORKERS} workers")
    }

    fn deploy(&self, quads: Vec<Quad>) -> Result<Deployed, String> {
        if quads.is_empty() {
            return empty_cluster();
        }
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let scratch = Scratch(std::env::temp_dir().join(format!(
            "quiver-w3c-cluster-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        )));
        let _ = std::fs::remove_dir_all(&scratch.0);
        std::fs::create_dir_all(&scratch.0).map_err(|e| e.to_string())?;
        let data = write_nquads(&scratch.0, &quads)?;
        let location = scratch.0.join("cluster");
        let input = LoadInput::Files {
            paths: vec![data],
            options: LoadOptions {
                format: None,
                lenient: false,
                threads: 1,
            },
            piece_bytes: None,
        };
        let cluster = LoadCluster::InProcess { workers: WORKERS };
        load_cluster(&location, input, cluster, Arc::new(NoProgress))
            .map_err(|e| format!("the cluster's load: {e}"))?;
        let (partitions, store) = serve(&location)?;
        Ok(Deployed {
            store,
            partitions: Some(partitions.clone()),
            // The workers stop before their files are removed.
            keep: Box::new((partitions, scratch)),
        })
    }
}

/// A test without data (its query's rows come from VALUES, BIND or SERVICE): the loader
/// refuses a file without statements, so the cluster is an empty store cut into
/// [`WORKERS`] partitions.
fn empty_cluster() -> Result<Deployed, String> {
    let (whole, _) = quiver_loader::load_quads(Vec::new(), None).map_err(|e| e.to_string())?;
    cut(&whole)
}

/// `quads` as an N-Quads file in `dir`.
fn write_nquads(dir: &Path, quads: &[Quad]) -> Result<PathBuf, String> {
    let path = dir.join("data.nq");
    let mut serializer =
        oxrdfio::RdfSerializer::from_format(oxrdfio::RdfFormat::NQuads).for_writer(Vec::new());
    for quad in quads {
        serializer.serialize_quad(quad).map_err(|e| e.to_string())?;
    }
    let bytes = serializer.finish().map_err(|e| e.to_string())?;
    std::fs::write(&path, bytes).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The loaded cluster in `dir` served by this process's workers, and its coordinator's
/// store planning with the whole store's statistics, as `quiver serve` opens one.
fn serve(dir: &Path) -> Result<(Arc<TimelyPartitions>, quiver_store::Store), String> {
    let layout = read_layout(dir)
        .map_err(|e| e.to_string())?
        .ok_or("the load wrote no layout")?;
    let mut ports = common::loopback_ports(1);
    let config = quiver_cluster::ClusterConfig {
        process: 0,
        addresses: ports.addresses().to_vec(),
        workers: layout.partitions as usize,
        listener: ports.take(0),
    };
    let cluster = Arc::new(TimelyPartitions::cluster(dir, config)?);
    let mut coordinator = cluster
        .coordinator_store()
        .ok_or("the cluster has no coordinator store")?;
    if let Some(statistics) = layout.statistics.as_ref() {
        coordinator.use_statistics(statistics);
    }
    Ok((cluster, coordinator))
}

/// The shared data's W3C suites: SPARQL 1.0 and 1.1's, and RDF and SPARQL 1.2's.
fn suites() -> [PathBuf; 2] {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate_dir.join("../../../shared"));
    let suites = [shared.join("sparql-tests"), shared.join("rdf12-tests")];
    for (suite, inside) in suites.iter().zip(["sparql11", "sparql12"]) {
        assert!(
            suite.join(inside).is_dir(),
            "a W3C test suite is missing at {} (it lives in the shared data beside the \
             checkout; set QUIVER_SHARED to its directory)",
            suite.display()
        );
    }
    suites
}

#[test]
fn w3c_query_evaluation_on_a_loaded_cluster_matches_its_known_failures() {
    check_layout(Arc::new(LoadedCluster), "loaded");
}

#[test]
fn w3c_query_evaluation_on_a_cut_cluster_matches_its_known_failures() {
    check_layout(Arc::new(CutCluster), "cut");
}

/// Runs the suite on `deployment` and checks it against the ratchet of `layout`.
fn check_layout(deployment: Arc<dyn Deployment>, layout: &str) {
    // QUIVER_W3C_FILTER runs only the tests whose id, IRI or name contains it (the ratchet
    // then checks those alone); QUIVER_WRITE_KNOWN_FAILURES writes the ratchet anew.
    let filter = std::env::var("QUIVER_W3C_FILTER").ok();
    let options = Options {
        deployment: Some(deployment),
        filter: filter.clone(),
        ..Options::default()
    };
    let mut report = Report {
        results: Vec::new(),
        missing_manifests: Vec::new(),
    };
    for suite in suites() {
        let run = run_suite(&suite, &options).expect("the suite's manifests load");
        report.results.extend(run.results);
        report.missing_manifests.extend(run.missing_manifests);
    }

    let evaluation = report.category_totals(Category::Evaluation);
    println!("{}", report.summary());
    // The query evaluation suites ran on the cluster, not skipped: SPARQL 1.0's, 1.1's and
    // 1.2's have some 590 tests without an entailment regime.
    assert!(
        filter.is_some() || evaluation.passed + evaluation.failed >= 560,
        "the evaluation tests did not run on the cluster: {}",
        report.summary()
    );
    // Every evaluation test the suite runs on the single store ran on the cluster too: only
    // those under an entailment regime are left to the single store.
    let not_run: Vec<String> = report
        .results
        .iter()
        .filter(|r| Category::of(&r.test.kind) == Category::Evaluation && r.test.skip.is_none())
        .filter(|r| matches!(r.status, Status::Skipped(_)))
        .filter(|r| r.test.profile.is_none())
        .map(|r| r.test.id.clone())
        .collect();
    assert!(not_run.is_empty(), "not run on the cluster: {not_run:?}");
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/w3c-cluster-failures-{layout}.txt"));
    if std::env::var_os("QUIVER_WRITE_KNOWN_FAILURES").is_some() {
        std::fs::write(&path, report.known_failures_text()).unwrap();
    }
    let known = std::fs::read_to_string(&path).expect("the cluster's known failures");
    let violations = report.ratchet_violations(&KnownFailures::parse(&known), filter.is_none());
    assert!(
        violations.is_empty(),
        "the cluster's W3C ratchet ({}):\n{}",
        path.display(),
        violations.join("\n")
    );
}
