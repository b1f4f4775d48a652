//! A cluster of real processes on loopback TCP (timely-dataflow's own connections): the
//! test binary runs itself again as the other processes, each serving its partitions of a
//! partitioned store, process 0 planning on its first partition. Every query of `queries/`
//! (Wukong's q1–q12, the SPARQL 1.1 and the analytics sets) over LUBM-1, and the query
//! shapes of the differential test over a random graph with named graphs, blank nodes and
//! literals, give the whole store's answers on 1, 2 and 3 processes (and 2 processes × 2
//! workers); a cluster of the wrong size refuses to start; a cross product is stopped on
//! every process by its memory budget and by its deadline; every process coordinates
//! queries (asked of processes 1 and 2 while process 0 asks, all answered as the whole
//! store does), and an idle coordinator's worker serves other processes' queries at once;
//! and when a process is killed, the next query fails within 2 s, long before its
//! timeout.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiver_cluster::{ClusterConfig, InPlaceRuns, LoopbackPorts, TimelyPartitions};
use quiver_sparql::partitions::BgpPartitions;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::partition::{open_partition, save_partitioned};
use quiver_store::Store;

/// Set in a child process: `DIR|PROCESS|WORKERS|ADDRESS,ADDRESS,…`.
const CHILD: &str = "QUIVER_CLUSTER_TEST_PROCESS";
/// Set in a child process that, once the cluster runs, asks every LUBM query itself (it
/// coordinates them) and checks its answers, then writes `DIR/asked-PROCESS`.
const ASK: &str = "QUIVER_CLUSTER_TEST_ASK";
const TEST: &str = "processes_on_loopback_answer_like_the_whole_store";

fn rows(
    store: &Store,
    query: &str,
    partitions: Option<Arc<dyn BgpPartitions>>,
    timeout: Option<Duration>,
) -> Result<Vec<String>, QueryError> {
    rows_within(store, query, partitions, timeout, None)
}

/// [`rows`] under a memory budget too.
fn rows_within(
    store: &Store,
    query: &str,
    partitions: Option<Arc<dyn BgpPartitions>>,
    timeout: Option<Duration>,
    max_memory: Option<usize>,
) -> Result<Vec<String>, QueryError> {
    let prepare_options = PrepareOptions {
        partitions: partitions.clone(),
        ..PrepareOptions::default()
    };
    let prepared = prepare(store, query, &prepare_options)?;
    let options = ExecOptions {
        partitions,
        timeout,
        max_memory,
        ..ExecOptions::default()
    };
    let mut rows = Vec::new();
    match prepared.execute(store, &options)? {
        QueryResults::Solutions(solutions) => {
            solutions.for_each_row(|row| rows.push(format!("{row:?}")))
        }
        QueryResults::Boolean(b) => rows.push(b.to_string()),
        QueryResults::Graph(triples) => rows.extend(triples.iter().map(|t| t.to_string())),
    }
    rows.sort();
    Ok(rows)
}

/// Checks that a cluster answered `query` as the whole store did: the same rows, or under
/// a LIMIT without ORDER BY (any rows may be kept) as many.
fn same_answers(query: &str, got: &[String], expected: &[String], cluster: &str) {
    if query.to_ascii_uppercase().contains("LIMIT") && !query.contains("ORDER BY") {
        assert_eq!(got.len(), expected.len(), "{cluster}: {query}");
    } else {
        assert_eq!(got, expected, "{cluster}: {query}");
    }
}

fn spawn(
    dir: &Path,
    process: usize,
    workers: usize,
    ports: &LoopbackPorts,
    addresses: &[String],
) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    let fd = ports.hand_over(process, &mut command).unwrap();
    spawn_with(command, dir, process, workers, addresses, &fd.to_string())
}

/// [`spawn`] for `command`, the listening socket given as descriptor `fd` (`-`: none).
fn spawn_with(
    mut command: Command,
    dir: &Path,
    process: usize,
    workers: usize,
    addresses: &[String],
    fd: &str,
) -> Child {
    command
        .args([
            "--exact",
            &common::test_name(module_path!(), TEST),
            "--nocapture",
        ])
        .env(
            CHILD,
            format!(
                "{}|{process}|{workers}|{}|{fd}",
                dir.display(),
                addresses.join(",")
            ),
        )
        .spawn()
        .unwrap()
}

/// Waits for `child` at most `limit`; kills it past that.
fn finished(child: &mut Child, limit: Duration) -> bool {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(Some(status)) = child.try_wait() {
            return status.success();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    false
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("quiver-cluster-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The test binary run again as process `PROCESS` of a cluster (`CHILD` set): it serves
/// its partitions until the coordinator ends; failing to, it panics and exits non-zero,
/// which the parent checks.
fn serve_as_process(spec: &str) {
    let fields: Vec<&str> = spec.split('|').collect();
    let config = ClusterConfig {
        process: fields[1].parse().unwrap(),
        workers: fields[2].parse().unwrap(),
        addresses: fields[3].split(',').map(str::to_owned).collect(),
        listener: common::inherited(fields[4]),
    };
    let dir = Path::new(fields[0]);
    let cluster = TimelyPartitions::cluster(dir, config).unwrap();
    let cluster = match std::env::var_os(ASK) {
        Some(_) => ask_as_process(dir, cluster, fields[1]),
        None => cluster,
    };
    // A process ends cleanly with its cluster (its exit status is checked by `stop`).
    cluster.wait().unwrap();
}

/// A process other than process 0 coordinating queries: each LUBM query asked of it gives
/// the whole store's answers, planned on its own first partition with the whole store's
/// statistics, and what left its partitions went through its own coordinator.
fn ask_as_process(dir: &Path, cluster: TimelyPartitions, process: &str) -> TimelyPartitions {
    let store = common::lubm1();
    let cluster = Arc::new(cluster);
    let mut coordinator = cluster.coordinator_store().unwrap();
    let layout = quiver_store::partition::read_layout(dir).unwrap().unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    for query in common::lubm_queries() {
        let expected = rows(&store, &query, None, None).unwrap();
        let got = rows(&coordinator, &query, Some(dynamic(&cluster)), None)
            .unwrap_or_else(|e| panic!("process {process}: {query}: {e}"));
        same_answers(&query, &got, &expected, &format!("process {process}"));
    }
    let runs = cluster.in_place();
    assert!(runs.handed_off > 0, "process {process}: {runs:?}");
    std::fs::write(dir.join(format!("asked-{process}")), "").unwrap();
    Arc::try_unwrap(cluster).unwrap()
}

#[test]
fn processes_on_loopback_answer_like_the_whole_store() {
    match std::env::var(CHILD) {
        Ok(spec) => serve_as_process(&spec),
        Err(_) => coordinate_clusters(),
    }
}

/// `store` cut for a cluster of `processes` × `workers`, the other processes started, and
/// every query answered as the whole store answers it; the processes end with the cluster.
/// Returns what the asking thread ran in place. `budget`: the replication budget recorded
/// in the layout (`None`: the default). With `same_plans`, each query is also planned on
/// process 0 as on the whole store (on LUBM: the random graphs' merged class samples may
/// order two steps of equal estimates otherwise).
fn check_cluster(
    store: &Store,
    queries: &[String],
    (processes, workers): (usize, usize),
    budget: Option<u64>,
    same_plans: bool,
) -> InPlaceRuns {
    check_cluster_hops(
        store,
        queries,
        (processes, workers),
        budget,
        same_plans,
        Hops::Direct,
    )
}

/// How light queries' hops to other processes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hops {
    /// Over connections of their own: Unix sockets, the processes listening on loopback.
    Direct,
    /// Over connections of their own, TCP: the processes' addresses given by name.
    DirectOverTcp,
    /// Through the dataflow.
    Dataflow,
}

/// [`check_cluster`], light queries' hops to other processes going as `hops` says.
fn check_cluster_hops(
    store: &Store,
    queries: &[String],
    (processes, workers): (usize, usize),
    budget: Option<u64>,
    same_plans: bool,
    hops: Hops,
) -> InPlaceRuns {
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| rows(store, q, None, None).unwrap_or_else(|e| panic!("{q}: {e}")))
        .collect();
    let dir = scratch(&format!("{processes}x{workers}"));
    save_partitioned(store, &dir, (processes * workers) as u32, |_, _| {}).unwrap();
    if budget.is_some() {
        quiver_store::partition::set_replication_budget(&dir, budget).unwrap();
    }
    let (cluster, children) = start_at(&dir, processes, workers, hops == Hops::DirectOverTcp);
    cluster.set_direct_hops(hops != Hops::Dataflow);
    // The coordinator plans on its own first partition, as the first process has it, with
    // the whole store's statistics.
    let total = (processes * workers) as u32;
    let (mut coordinator, layout) = open_partition(&dir, 0, total).unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    for (query, expected) in queries.iter().zip(&expected) {
        // Planned as on the whole store (compiled for partitions both): the sizes of the
        // records process 0 lacks are asked of the other processes.
        if same_plans {
            assert_eq!(
                common::plan_shapes(&coordinator, query, Some(dynamic(&cluster))),
                common::plan_shapes(store, query, Some(dynamic(&cluster))),
                "{processes} × {workers}: {query}"
            );
        }
        let got = rows(&coordinator, query, Some(dynamic(&cluster)), None)
            .unwrap_or_else(|e| panic!("{processes} × {workers}: {query}: {e}"));
        same_answers(query, &got, expected, &format!("{processes} × {workers}"));
    }
    let runs = cluster.in_place();
    // The plans of the runs over are forgotten in batches of 64: each of process 0's
    // workers holds those of a batch it was not told of yet and of one on its way at most,
    // however many ran.
    let held = cluster.plans_held();
    assert!(
        held <= 2 * 64 * workers,
        "{processes} × {workers}: {held} plans held after {} runs",
        runs.handed_off
    );
    // Process 0 holds the cluster's `rdf:type` memberships when they fit the budget (they
    // do, but for a budget of 0).
    assert_eq!(
        cluster.types().is_some(),
        budget != Some(0),
        "{processes} × {workers}"
    );
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
    runs
}

/// The cluster as the queries' options take it.
fn dynamic(cluster: &Arc<TimelyPartitions>) -> Arc<dyn BgpPartitions> {
    Arc::clone(cluster) as Arc<dyn BgpPartitions>
}

/// Process 0 of a cluster of `processes` × `workers` over the partitioned store in `dir`,
/// the other processes started.
fn start(dir: &Path, processes: usize, workers: usize) -> (Arc<TimelyPartitions>, Vec<Child>) {
    start_at(dir, processes, workers, false)
}

/// [`start`], the processes' addresses given by name (`localhost:PORT`, not loopback
/// addresses) with `by_name`: the light queries' hops then go over TCP, as between
/// machines.
fn start_at(
    dir: &Path,
    processes: usize,
    workers: usize,
    by_name: bool,
) -> (Arc<TimelyPartitions>, Vec<Child>) {
    let mut ports = common::loopback_ports(processes);
    let addresses: Vec<String> = match by_name {
        true => ports
            .addresses()
            .iter()
            .map(|address| address.replace("127.0.0.1:", "localhost:"))
            .collect(),
        false => ports.addresses().to_vec(),
    };
    let children = (1..processes)
        .map(|p| spawn(dir, p, workers, &ports, &addresses))
        .collect();
    let config = ClusterConfig {
        process: 0,
        addresses,
        workers,
        listener: ports.take(0),
    };
    let cluster = Arc::new(TimelyPartitions::cluster(dir, config).unwrap());
    (cluster, children)
}

/// Ends process 0's cluster and checks that the other processes end with it.
fn stop(cluster: Arc<TimelyPartitions>, mut children: Vec<Child>) {
    drop(cluster);
    for child in &mut children {
        assert!(
            finished(child, Duration::from_secs(20)),
            "a process did not end"
        );
    }
}

/// The parent: cuts the stores, starts the other processes and checks every cluster.
fn coordinate_clusters() {
    let store = common::lubm1();
    let (random, _) = quiver_loader::load_quads(common::fixed_graph(7, 300), None).unwrap();
    let shapes: Vec<String> = common::QUERIES
        .iter()
        .map(|q| format!("PREFIX ex: <{}> {q}", common::EX))
        .collect();
    let mut lubm = common::lubm_queries();
    // Every triple to the coordinator: rows of megabytes, which cross between processes
    // in pieces (`message::PIECE_BYTES`).
    lubm.push("SELECT ?s ?p ?o WHERE { ?s ?p ?o }".into());
    for (processes, workers) in [(1, 1), (2, 1), (3, 1), (2, 2)] {
        let runs = check_cluster(&store, &lubm, (processes, workers), None, true);
        // Both ways of running were taken: steps whose rows stayed on process 0 ran on the
        // asking thread (on one process, whole light queries), and the heavy queries (and
        // on more processes, what left process 0) went through the dataflow.
        assert!(runs.messages > 0, "{processes} × {workers}: {runs:?}");
        assert!(runs.handed_off > 0, "{processes} × {workers}: {runs:?}");
        if processes == 1 {
            assert!(runs.answered > 0, "{processes} × {workers}: {runs:?}");
        } else {
            // Light queries crossed processes without the dataflow, over Unix sockets
            // between these processes of one machine.
            assert!(runs.direct > 0 && runs.trips >= runs.direct, "{runs:?}");
            if cfg!(target_os = "linux") {
                assert_eq!(runs.unix_trips, runs.trips, "{runs:?}");
            }
        }
        // Every run through the dataflow, but for what stays on process 0.
        let shaped = check_cluster_hops(
            &random,
            &shapes,
            (processes, workers),
            None,
            false,
            Hops::Dataflow,
        );
        assert_eq!((shaped.direct, shaped.trips), (0, 0), "{shaped:?}");
        // More runs than the plans a process may hold went through the dataflow.
        if processes > 1 && workers == 1 {
            assert!(shaped.handed_off > 2 * 64, "{shaped:?}");
        }
        if processes > 1 {
            let direct = check_cluster(&random, &shapes, (processes, workers), None, false);
            assert!(direct.direct > 0, "{processes} × {workers}: {direct:?}");
        }
    }
    // Light queries through the dataflow, as the direct hops were not there.
    check_cluster_hops(&store, &lubm, (2, 1), None, true, Hops::Dataflow);
    // Processes known by name: the light queries' hops go over TCP, with the same answers.
    let tcp = check_cluster_hops(&store, &lubm, (3, 1), None, true, Hops::DirectOverTcp);
    assert!(tcp.direct > 0 && tcp.unix_trips == 0, "{tcp:?}");
    // A layout whose budget is 0 replicates nothing: the checks run at their owners, with
    // the same answers.
    check_cluster(&store, &lubm, (2, 1), Some(0), true);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../queries/lubm-basic");
    let queries: Vec<String> = (1..=2)
        .map(|q| std::fs::read_to_string(root.join(format!("q{q}.rq"))).unwrap())
        .collect();
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| rows(&store, q, None, None).unwrap())
        .collect();

    // A cluster of another size than the store's partitions refuses to start.
    let dir = scratch("size");
    save_partitioned(&store, &dir, 3, |_, _| {}).unwrap();
    let config = ClusterConfig {
        process: 0,
        addresses: common::loopback_ports(2).addresses().to_vec(),
        workers: 1,
        listener: None,
    };
    let error = TimelyPartitions::cluster(&dir, config).unwrap_err();
    assert!(error.contains("cut into 3 partitions"), "{error}");
    let _ = std::fs::remove_dir_all(&dir);

    governed_on_every_process(&store);
    limits_met_on_process_0(&store);
    learnt_records_answer_again(&store);
    idle_coordinators_serve_other_queries(&store);
    every_process_coordinates(&store, &lubm);
    replicas_kept_for_the_next_start(&store, &lubm);

    // Processes given only the addresses, as across machines, bind their own and connect
    // (the ports are found free and released first: a race the tests accept here alone).
    let dir = scratch("addresses");
    save_partitioned(&store, &dir, 2, |_, _| {}).unwrap();
    let addresses = common::loopback_ports(2).addresses().to_vec();
    let child = spawn_with(
        Command::new(std::env::current_exe().unwrap()),
        &dir,
        1,
        1,
        &addresses,
        "-",
    );
    let config = ClusterConfig {
        process: 0,
        addresses,
        workers: 1,
        listener: None,
    };
    let cluster = Arc::new(TimelyPartitions::cluster(&dir, config).unwrap());
    for (query, expected) in queries.iter().zip(&expected) {
        assert_eq!(
            &rows(&store, query, Some(dynamic(&cluster)), None).unwrap(),
            expected
        );
    }
    stop(cluster, vec![child]);
    let _ = std::fs::remove_dir_all(&dir);

    // A process of another build (this test's executable with one byte appended): both
    // refuse each other before any data moves, each naming the other.
    let dir = scratch("builds");
    save_partitioned(&store, &dir, 2, |_, _| {}).unwrap();
    let other = dir.join("other-build");
    std::fs::copy(std::env::current_exe().unwrap(), &other).unwrap();
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&other)
            .unwrap();
        file.write_all(b"x").unwrap();
    }
    let addresses = common::loopback_ports(2).addresses().to_vec();
    // Its own refusal fails its run of the test harness: kept out of this test's output.
    let mut quiet = Command::new(&other);
    quiet
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = spawn_with(quiet, &dir, 1, 1, &addresses, "-");
    let config = ClusterConfig {
        process: 0,
        addresses: addresses.clone(),
        workers: 1,
        listener: None,
    };
    let error = TimelyPartitions::cluster(&dir, config).unwrap_err();
    let named = format!("process 1 ({}) runs another build of quiver", addresses[1]);
    assert!(error.contains(&named), "{error}");
    assert!(
        !finished(&mut child, Duration::from_secs(30)),
        "the other build's process went on"
    );
    let _ = std::fs::remove_dir_all(&dir);

    // A process killed: the next query fails within 2 s, never hangs.
    let dir = scratch("killed");
    save_partitioned(&store, &dir, 2, |_, _| {}).unwrap();
    let (cluster, mut children) = start(&dir, 2, 1);
    let mut child = children.remove(0);
    assert_eq!(
        rows(&store, &queries[0], Some(dynamic(&cluster)), None).unwrap(),
        expected[0]
    );
    child.kill().unwrap();
    let _ = child.wait();
    // A query whose planning asks process 1 the sizes of two records (a student of
    // process 1 and a department, joined by any predicate) fails as fast.
    let (coordinator, _) = open_partition(&dir, 0, 2).unwrap();
    let (student, department) = (0..100)
        .map(|s| format!("http://www.Department0.University0.edu/UndergraduateStudent{s}"))
        .find_map(|iri| {
            let id = store.iri_id(&iri)?;
            (quiver_store::partition::owner(id, 2) == 1).then_some(iri)
        })
        .zip(Some("http://www.Department0.University0.edu"))
        .unwrap();
    let asking = format!("SELECT ?p WHERE {{ <{student}> ?p <{department}> }}");
    let started = Instant::now();
    let prepared = quiver_sparql::prepare(
        &coordinator,
        &asking,
        &PrepareOptions {
            partitions: Some(dynamic(&cluster)),
            ..PrepareOptions::default()
        },
    );
    match prepared {
        // The workers' end or the heartbeat's closed connection, whichever is first.
        Err(QueryError::Cluster(error)) => assert!(
            error.contains("stopped") || error.contains("process 1 of the cluster closed"),
            "{error}"
        ),
        Err(other) => panic!("planning without a process gave {other}"),
        Ok(_) => panic!("planning without a process asked nothing"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the planning's failure took {:?}",
        started.elapsed()
    );
    // A light query whose rows cross to process 1 (the students of one of its courses)
    // fails as fast: its connection of light hops is closed too.
    let course = (0..100)
        .map(|c| format!("http://www.Department0.University0.edu/Course{c}"))
        .find(|iri| {
            store
                .iri_id(iri)
                .is_some_and(|id| quiver_store::partition::owner(id, 2) == 1)
        })
        .unwrap();
    let light = format!(
        "SELECT ?x WHERE {{ ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#takesCourse> <{course}> }}"
    );
    fails_fast(&coordinator, &light, &cluster);
    // The query may run for a minute: the closed connection, not its deadline, ends it.
    fails_fast(&store, &queries[1], &cluster);
    drop(cluster);

    // A process killed with no query asked: the cluster says within 2 s that it cannot
    // answer, and its handle drops without a panic.
    let (cluster, mut children) = start(&dir, 2, 1);
    assert_eq!(cluster.unavailable(), None);
    children[0].kill().unwrap();
    let _ = children[0].wait();
    let started = Instant::now();
    while cluster.unavailable().is_none() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let noticed = started.elapsed();
    let reason = cluster.unavailable().expect("a killed process is noticed");
    assert!(reason.contains("restart the cluster"), "{reason}");
    assert!(
        noticed < Duration::from_secs(2),
        "noticed after {noticed:?}"
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(cluster)));
    assert!(dropped.is_ok(), "dropping the cluster's handle panicked");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks that `query`, asked of a cluster one of whose processes was killed, fails within
/// 2 s with an error that says so, though its timeout is a minute.
fn fails_fast(store: &Store, query: &str, cluster: &Arc<TimelyPartitions>) {
    let started = Instant::now();
    match rows(
        store,
        query,
        Some(dynamic(cluster)),
        Some(Duration::from_secs(60)),
    ) {
        Err(QueryError::Cluster(error)) => assert!(
            error.contains("stopped") || error.contains("process 1 of the cluster closed"),
            "{error}"
        ),
        other => panic!("{query} without a process gave {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{query}: the failure took {:?}",
        started.elapsed()
    );
}

/// A LIMIT in no order that process 0's partition meets alone is answered there, in
/// place, the other process never asked (any rows of the query will do: each is one of
/// the whole store's, groups with their whole counts); one it does not meet goes on to
/// the other process with the rows found so far, and each row comes once.
fn limits_met_on_process_0(store: &Store) {
    let dir = scratch("limits");
    save_partitioned(store, &dir, 2, |_, _| {}).unwrap();
    let (cluster, children) = start(&dir, 2, 1);
    let (coordinator, layout) = open_partition(&dir, 0, 2).unwrap();
    let mut coordinator = coordinator;
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    let ub = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let ask = |query: &str| {
        let before = cluster.in_place();
        let got = rows(&coordinator, query, Some(dynamic(&cluster)), None).unwrap();
        let after = cluster.in_place();
        let here = after.answered > before.answered && after.handed_off == before.handed_off;
        (got, here)
    };
    for (all, limit) in [
        ("SELECT * WHERE { ?s ?p ?o }".to_string(), 10),
        (
            format!("{ub}SELECT ?x WHERE {{ ?x a ub:GraduateStudent }}"),
            5,
        ),
        (
            format!("{ub}SELECT ?x ?n WHERE {{ ?x ub:advisor ?a . ?x ub:name ?n }}"),
            20,
        ),
        // Checked at the rows' owners: the first rows that pass are the answer, though
        // each step was asked for more.
        (
            format!(
                "{ub}SELECT ?x WHERE {{ ?x a ub:UndergraduateStudent \
                 FILTER NOT EXISTS {{ ?x ub:advisor ?a }} }}"
            ),
            10,
        ),
        (
            format!(
                "{ub}SELECT ?x WHERE {{ ?x a ub:UndergraduateStudent \
                 MINUS {{ ?x ub:advisor ?a }} }}"
            ),
            10,
        ),
        // Groups read from the index, each whole at its subject's owner: their counts are
        // the whole store's.
        (
            format!("{ub}SELECT DISTINCT ?x WHERE {{ ?x ub:takesCourse ?c }}"),
            10,
        ),
        (
            format!("{ub}SELECT ?x (COUNT(?c) AS ?n) WHERE {{ ?x ub:takesCourse ?c }} GROUP BY ?x"),
            10,
        ),
    ] {
        let whole = rows(store, &all, None, None).unwrap();
        let (got, here) = ask(&format!("{all} LIMIT {limit}"));
        assert!(here, "{all} LIMIT {limit} left process 0");
        assert_eq!(got.len(), limit, "{all} LIMIT {limit}");
        assert!(
            got.iter().all(|row| whole.binary_search(row).is_ok()),
            "{all} LIMIT {limit}: {got:?}"
        );
    }
    // The heads of LUBM-1's 15 departments: process 0's partition holds some of them.
    let heads = format!("{ub}SELECT ?x ?d WHERE {{ ?x ub:headOf ?d }}");
    let whole = rows(store, &heads, None, None).unwrap();
    assert_eq!(whole.len(), 15);
    let (got, here) = ask(&format!("{heads} LIMIT 100"));
    assert!(!here, "the heads were all found on process 0");
    assert_eq!(got, whole);
    let (got, _) = ask(&format!("{heads} LIMIT 12"));
    let mut distinct = got.clone();
    distinct.dedup();
    assert_eq!((got.len(), distinct.len()), (12, 12), "{got:?}");
    assert!(got.iter().all(|row| whole.binary_search(row).is_ok()));
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Light queries that cross to process 1 (the emulator's templates, from constants it
/// owns, and walks over a variable predicate: LUBM's q10, a resource's page, a check of
/// which predicates join two ends) are answered again with no round trip: the records
/// their walks read there came back with their rows and are walked on process 0 the next
/// time, with the whole store's answers both times. The records read ahead with them (of
/// the next instances of the same class: a department's next courses or professors, the
/// next departments) answer some queries of the first pass too.
fn learnt_records_answer_again(store: &Store) {
    let dir = scratch("learnt");
    save_partitioned(store, &dir, 2, |_, _| {}).unwrap();
    let (cluster, children) = start(&dir, 2, 1);
    let (mut coordinator, layout) = open_partition(&dir, 0, 2).unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    let ub = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> ";
    let templates = [
        (
            "GraduateCourse",
            "SELECT ?x WHERE { ?x ub:takesCourse <C> . ?x a ub:GraduateStudent }",
        ),
        (
            "AssistantProfessor",
            "SELECT ?x WHERE { ?x ub:publicationAuthor <C> . ?x a ub:Publication }",
        ),
        (
            "",
            "SELECT ?x WHERE { ?x ub:memberOf <C> . ?x a ub:GraduateStudent }",
        ),
        (
            "",
            "SELECT ?x ?n ?e ?t WHERE { ?x ub:worksFor <C> . ?x a ub:FullProfessor . \
             ?x ub:name ?n . ?x ub:emailAddress ?e . ?x ub:telephone ?t }",
        ),
        (
            "FullProfessor",
            "SELECT ?x ?p WHERE { ?x ?p <C> . ?x a ub:UndergraduateStudent }",
        ),
        ("AssociateProfessor", "SELECT ?p ?o WHERE { <C> ?p ?o }"),
        (
            "AssistantProfessor",
            "SELECT ?x ?p WHERE { ?x ub:advisor <C> . ?x ?p <C> }",
        ),
    ];
    let mut queries = Vec::new();
    for (kind, template) in templates {
        let iris: Vec<String> = match kind {
            "" => (0..15)
                .map(|d| format!("http://www.Department{d}.University0.edu"))
                .collect(),
            kind => (0..30)
                .map(|i| format!("http://www.Department0.University0.edu/{kind}{i}"))
                .collect(),
        };
        let owned_by_1 = iris.into_iter().filter(|iri| {
            store
                .iri_id(iri)
                .is_some_and(|id| quiver_store::partition::owner(id, 2) == 1)
        });
        for iri in owned_by_1.take(3) {
            queries.push(format!(
                "{ub}{}",
                template.replace("<C>", &format!("<{iri}>"))
            ));
        }
    }
    assert_eq!(queries.len(), 21, "{queries:?}");
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| rows(store, q, None, None).unwrap())
        .collect();
    assert!(expected.iter().filter(|rows| !rows.is_empty()).count() >= 16);
    let ask_all = || {
        for (query, expected) in queries.iter().zip(&expected) {
            let got = rows(&coordinator, query, Some(dynamic(&cluster)), None).unwrap();
            same_answers(query, &got, expected, "2 × 1, learnt records");
        }
    };
    // Runs that crossed to process 1 over the light queries' connections (a question of
    // record sizes while planning may or may not be asked, by the time planning takes).
    let n = queries.len() as u64;
    let first = cluster.in_place();
    ask_all();
    let second = cluster.in_place();
    // Each template's first query crosses (no two templates read records of one kind);
    // read ahead, some later ones do not.
    let crossed = second.direct - first.direct;
    assert!((7..n).contains(&crossed), "{crossed} of {n}: {second:?}");
    assert!(second.learnt_ids > 0, "{second:?}");
    ask_all();
    let third = cluster.in_place();
    assert_eq!(
        third.direct, second.direct,
        "runs that crossed the second time: {third:?}"
    );
    assert_eq!(third.answered, second.answered + n, "{third:?}");
    assert_eq!(third.handed_off, second.handed_off, "{third:?}");
    assert!(third.recalled >= second.recalled + n, "{third:?}");
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The resident memory of process `pid`, in bytes.
fn resident(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// On 3 processes, a cross product that would fill memory is stopped on every worker: by
/// its memory budget (the error says so, not a timeout), and by its deadline, after which
/// the processes hold their memory of before and the next query is answered (without the
/// deadline on the workers, they would go on with the cross product for minutes, and the
/// next query would wait for it).
fn governed_on_every_process(store: &Store) {
    let dir = scratch("governed");
    save_partitioned(store, &dir, 3, |_, _| {}).unwrap();
    let (cluster, children) = start(&dir, 3, 1);
    let light = "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#>
        SELECT ?x WHERE { ?x ub:worksFor <http://www.Department0.University0.edu> }";
    let expected = rows(store, light, None, None).unwrap();
    assert_eq!(
        rows(store, light, Some(dynamic(&cluster)), None).unwrap(),
        expected
    );
    let before: Vec<u64> = children.iter().map(|c| resident(c.id())).collect();
    let cross = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }";

    // The memory budget: the workers' steps charge it, and the error comes back.
    let started = Instant::now();
    let outcome = rows_within(
        store,
        cross,
        Some(dynamic(&cluster)),
        Some(Duration::from_secs(60)),
        Some(64 << 20),
    );
    match outcome {
        Err(QueryError::MemoryLimit { .. }) => {}
        other => panic!("a cross product under a 64 MiB budget gave {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );

    // The deadline: every worker stops within it, and the next query does not wait. The
    // budget is far above what the cross product can charge within the deadline (a fast
    // machine charged 1 GiB within 300 ms), so the deadline is what stops it.
    let started = Instant::now();
    let outcome = rows_within(
        store,
        cross,
        Some(dynamic(&cluster)),
        Some(Duration::from_millis(150)),
        Some(8 << 30),
    );
    assert!(
        matches!(outcome, Err(QueryError::Timeout(_))),
        "a cross product with 150 ms gave {:?}",
        outcome.map(|rows| rows.len())
    );
    let stopped = started.elapsed();
    assert!(
        stopped < Duration::from_secs(2),
        "stopped after {stopped:?}"
    );
    // The workers stop at their next check of the deadline: a step's copy of its rows (a
    // gather or a buffer's growth, hundreds of MB here) runs between two checks, so the
    // next query, and the memory's release, can wait for it.
    let started = Instant::now();
    assert_eq!(
        rows(store, light, Some(dynamic(&cluster)), None).unwrap(),
        expected
    );
    let next = started.elapsed();
    assert!(
        next < Duration::from_secs(3),
        "the next query took {next:?}"
    );
    for (child, before) in children.iter().zip(before) {
        let mut after = resident(child.id());
        while after >= before + (256 << 20) && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
            after = resident(child.id());
        }
        assert!(
            after < before + (256 << 20),
            "process {} holds {after} bytes, {before} before",
            child.id()
        );
    }
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cluster of 3 processes where processes 1 and 2 each ask every LUBM query while
/// process 0 asks them too: every process coordinates queries (its own lane of the
/// dataflows), and all of them answer as the whole store does, at the same time.
fn every_process_coordinates(store: &Store, queries: &[String]) {
    let dir = scratch("every");
    save_partitioned(store, &dir, 3, |_, _| {}).unwrap();
    let ports = common::loopback_ports(3);
    let mut children: Vec<Child> = (1..3)
        .map(|p| {
            let mut command = Command::new(std::env::current_exe().unwrap());
            command.env(ASK, "1");
            let fd = ports.hand_over(p, &mut command).unwrap();
            spawn_with(command, &dir, p, 1, ports.addresses(), &fd.to_string())
        })
        .collect();
    let mut ports = ports;
    let config = ClusterConfig {
        process: 0,
        addresses: ports.addresses().to_vec(),
        workers: 1,
        listener: ports.take(0),
    };
    let cluster = Arc::new(TimelyPartitions::cluster(&dir, config).unwrap());
    let (mut coordinator, layout) = open_partition(&dir, 0, 3).unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    for query in queries {
        let expected = rows(store, query, None, None).unwrap();
        let got = rows(&coordinator, query, Some(dynamic(&cluster)), None)
            .unwrap_or_else(|e| panic!("process 0: {query}: {e}"));
        same_answers(query, &got, &expected, "process 0");
    }
    // The cluster stops with process 0: it waits for the others' queries to be over (or
    // for one of them to fail: it exits).
    let started = Instant::now();
    let asked = |p: usize| dir.join(format!("asked-{p}")).exists();
    while !(1..3).all(asked)
        && !children
            .iter_mut()
            .any(|c| matches!(c.try_wait(), Ok(Some(_))))
        && started.elapsed() < Duration::from_secs(300)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    for p in 1..3 {
        assert!(asked(p), "process {p} did not answer its queries");
    }
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every process's first worker coordinates, and an idle one must still serve the other
/// processes' queries at once: 40 light queries asked of process 0 whose rows visit process
/// 1 (which asks nothing) take well under the 8 s they took when an idle coordinator
/// waited on its own requests alone (stepping timely every 100 ms).
fn idle_coordinators_serve_other_queries(store: &Store) {
    let dir = scratch("idle");
    save_partitioned(store, &dir, 2, |_, _| {}).unwrap();
    let (cluster, children) = start(&dir, 2, 1);
    // Each run crosses to process 1, none walking what an earlier one learnt there.
    cluster.set_learning(false);
    let (mut coordinator, layout) = open_partition(&dir, 0, 2).unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    // A department that process 1 owns: the query starts there (over a predicate too
    // large to be replicated on every process).
    let department = (0..15)
        .map(|d| format!("http://www.Department{d}.University0.edu"))
        .find(|iri| {
            let id = store.iri_id(iri).unwrap();
            quiver_store::partition::owner(id, 2) == 1
        })
        .unwrap();
    let query = format!(
        "SELECT ?x WHERE {{ ?x <http://swat.cse.lehigh.edu/onto/univ-bench.owl#memberOf> <{department}> }}"
    );
    let expected = rows(store, &query, None, None).unwrap();
    assert!(!expected.is_empty());
    let before = cluster.exchanged();
    let started = Instant::now();
    for _ in 0..40 {
        let got = rows(&coordinator, &query, Some(dynamic(&cluster)), None).unwrap();
        assert_eq!(got, expected);
    }
    let took = started.elapsed();
    let moved = cluster.exchanged() - before;
    assert!(
        moved.messages >= 40,
        "the rows did not visit process 1: {moved:?}"
    );
    assert!(
        took < Duration::from_millis(1500),
        "40 light queries took {took:?}"
    );
    stop(cluster, children);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The replicas a cluster of 2 processes exchanged at its first start are kept, one copy
/// per process: the next start over the same partitions reads them on every process, the
/// same replicas, with the same answers. A process whose copy is gone, or a partition
/// saved again since, makes every process exchange them again, and only the processes
/// whose copy did not match write one anew.
fn replicas_kept_for_the_next_start(store: &Store, queries: &[String]) {
    use quiver_cluster::kept_replicas::kept_dir;
    let expected: Vec<Vec<String>> = queries
        .iter()
        .map(|q| rows(store, q, None, None).unwrap())
        .collect();
    let dir = scratch("kept");
    save_partitioned(store, &dir, 2, |_, _| {}).unwrap();
    // Starts the cluster, checks how its replicas came and its answers; returns process
    // 0's memberships and how the writing of its copy ended (the copies it removed in
    // `removed`).
    let removed = std::cell::RefCell::new(Vec::new());
    let run = |read: bool| {
        let (cluster, children) = start(&dir, 2, 1);
        assert_eq!(cluster.replicas_read_from_kept(), read);
        let (mut coordinator, layout) = open_partition(&dir, 0, 2).unwrap();
        coordinator.use_statistics(layout.statistics.as_ref().unwrap());
        for (query, expected) in queries.iter().zip(&expected) {
            let got = rows(&coordinator, query, Some(dynamic(&cluster)), None)
                .unwrap_or_else(|e| panic!("kept replicas read: {read}: {query}: {e}"));
            same_answers(
                query,
                &got,
                expected,
                &format!("kept replicas read: {read}"),
            );
        }
        let types = cluster.types().unwrap().pairs().to_vec();
        let written = cluster.kept_replicas_written();
        removed.replace(cluster.removed_stray_copies().to_vec());
        stop(cluster, children);
        (types, written)
    };
    let (exchanged, written) = run(false);
    assert_eq!(written, Some(Ok(())));
    assert!(!exchanged.is_empty());
    assert!(kept_dir(&dir, 0).is_dir() && kept_dir(&dir, 1).is_dir());
    let (read, written) = run(true);
    assert_eq!(read, exchanged);
    assert_eq!(written, None);
    // Process 1's copy gone: both exchange, and process 1 alone writes a copy.
    std::fs::remove_dir_all(kept_dir(&dir, 1)).unwrap();
    assert_eq!(run(false).1, None);
    assert!(kept_dir(&dir, 1).is_dir());
    assert_eq!(run(true).0, exchanged);
    // Partition 1 saved again (the same triples, a new generation): neither copy is of
    // the partitions as they are now.
    let (part, _) = open_partition(&dir, 1, 2).unwrap();
    part.save(&quiver_store::partition::partition_dir(&dir, 1))
        .unwrap();
    assert_eq!(run(false), (exchanged.clone(), Some(Ok(()))));
    assert_eq!(run(true).0, exchanged);
    // Copies a cluster of another shape kept (a process whose first partition was 3, or
    // 9 of more partitions) are removed as this one starts; its own copies stay, and are
    // read.
    for stray in [3, 9] {
        copy_dir(&kept_dir(&dir, 1), &kept_dir(&dir, stray));
    }
    std::fs::create_dir_all(dir.join("replicas-notes")).unwrap();
    assert_eq!(run(true).0, exchanged);
    assert_eq!(*removed.borrow(), [kept_dir(&dir, 3), kept_dir(&dir, 9)]);
    assert!(!kept_dir(&dir, 3).exists() && !kept_dir(&dir, 9).exists());
    assert!(kept_dir(&dir, 0).is_dir() && kept_dir(&dir, 1).is_dir());
    assert!(
        dir.join("replicas-notes").is_dir(),
        "not a copy: left alone"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Copies the files of directory `from` (no subdirectories) into `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
