//! A cluster loaded by its workers holds exactly the quads of the single store loaded from
//! the same input, each term at one owner only, and no worker holds the whole dictionary.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use quiver_cluster::load::{load_cluster, LoadCluster, LoadInput};
use quiver_loader::{LoadOptions, NoProgress};
use quiver_sparql::partitions::BgpPartitions;
use quiver_store::partition::{open_partition, read_layout};
use quiver_store::Store;

use crate::common;

/// A fresh directory under the system's temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "quiver-distributed-load-{name}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Blank node labels without the per-load prefix the loader gives each file's labels
/// (`l<nonce in hex>f<file number>_`): what two loads of the same files agree on.
fn unscoped(text: String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("_:l") {
        out.push_str(&rest[..at + 2]);
        let label = &rest[at + 3..];
        let scope = label.find('_').map(|end| &label[..end]);
        match scope.and_then(|scope| scope.rfind('f').map(|f| (scope, f))) {
            Some((scope, f)) => {
                out.push_str(&scope[f..]);
                rest = &label[scope.len()..];
            }
            None => {
                out.push('l');
                rest = label;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The quads of a whole store, as sorted N-Quads lines.
fn whole_quads(store: &Store) -> Vec<String> {
    let mut quads = BTreeSet::new();
    store.for_each_quad(|q| {
        let term = |id| store.term(id).unwrap().to_string();
        let graph = q.graph.map_or(String::new(), |g| format!(" {}", term(g)));
        quads.insert(unscoped(format!(
            "{} {} {}{graph}",
            term(q.subject),
            term(q.predicate),
            term(q.object)
        )));
    });
    quads.into_iter().collect()
}

/// The quads of a partitioned store (each partition's OUT records), every id decoded at
/// its owner; checks each term lives at exactly one owner and none holds them all.
fn cluster_quads(dir: &Path) -> Vec<String> {
    let layout = read_layout(dir).unwrap().expect("a layout was written");
    let count = layout.partitions;
    let parts: Vec<Store> = (0..count)
        .map(|i| open_partition(dir, i, count).unwrap().0)
        .collect();
    let own: u64 = parts.iter().map(|p| p.dictionary().local_len()).sum();
    assert_eq!(own, layout.terms, "every term once, at its owner");
    for (i, part) in parts.iter().enumerate() {
        assert_eq!(part.dictionary().share(), Some((i as u32, count)));
        if count > 1 {
            assert!(
                part.dictionary().local_len() < layout.terms,
                "partition {i} holds the whole dictionary"
            );
        }
    }
    let term = |id: quiver_model::Id| {
        let at = (u64::from(id) % u64::from(count)) as u32;
        let owner = parts[at as usize].dictionary();
        assert_eq!(owner.share().map(|s| s.0), Some(at));
        let bytes = owner
            .term(id)
            .unwrap_or_else(|| panic!("id {id} at its owner"));
        quiver_model::decode_term(&bytes)
            .unwrap()
            .to_term()
            .to_string()
    };
    let mut quads = BTreeSet::new();
    let mut triples = 0;
    for part in &parts {
        triples += part.triples();
        part.for_each_quad(|q| {
            let graph = q.graph.map_or(String::new(), |g| format!(" {}", term(g)));
            let line = format!(
                "{} {} {}{graph}",
                term(q.subject),
                term(q.predicate),
                term(q.object)
            );
            assert!(quads.insert(unscoped(line)), "a triple at two owners");
        });
    }
    assert_eq!(triples, layout.triples);
    quads.into_iter().collect()
}

/// `paths` loaded into `location` by `workers` workers of this process (`piece_bytes`:
/// the byte ranges large line-based files are cut into, as the load takes it).
fn load_paths(
    location: &Path,
    paths: Vec<PathBuf>,
    piece_bytes: Option<u64>,
    workers: usize,
) -> Result<quiver_cluster::load::LoadedCluster, quiver_cluster::load::ClusterLoadError> {
    let input = LoadInput::Files {
        piece_bytes,
        paths,
        options: options(),
    };
    let cluster = LoadCluster::InProcess { workers };
    load_cluster(location, input, cluster, Arc::new(NoProgress))
}

fn options() -> LoadOptions {
    LoadOptions {
        format: None,
        lenient: false,
        threads: 1,
    }
}

/// Files with literals of every kind, language tags, blank nodes, named graphs and
/// duplicates, in three syntaxes.
fn write_files(dir: &Path) -> Vec<PathBuf> {
    let mut nquads = String::new();
    for quad in common::fixed_graph(7, 600) {
        nquads.push_str(&format!("{quad} .\n"));
    }
    nquads.push_str(concat!(
        "<http://ex/e1> <http://ex/name> \"plain\" .\n",
        "<http://ex/e1> <http://ex/name> \"plain\" .\n",
        "<http://ex/e1> <http://ex/name> \"chat\"@fr <http://ex/g1> .\n",
        "<http://ex/e1> <http://ex/name> \"chat\"@en-GB .\n",
        "<http://ex/e2> <http://ex/age> \"42\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n",
        "<http://ex/e2> <http://ex/age> \"4.2e1\"^^<http://www.w3.org/2001/XMLSchema#double> .\n",
        "<http://ex/e2> <http://ex/when> \"2024-01-01\"^^<http://www.w3.org/2001/XMLSchema#date> .\n",
        "_:x <http://ex/knows> _:y _:g .\n",
        "<http://ex/e3> <http://ex/text> \"line\\nbreak \\\"quoted\\\" \\u00e9\" .\n",
    ));
    let turtle = concat!(
        "@prefix ex: <http://ex/> .\n",
        "ex:e5 a ex:C9 ; ex:p1 ex:e6 , _:inner ; ex:flag true .\n",
        "_:inner ex:p2 \"inner\" .\n",
        "_:x ex:p3 ex:e1 .\n",
        "ex:e6 ex:p1 ex:e5 .\n",
    );
    let trig =
        "@prefix ex: <http://ex/> .\nex:g7 { ex:e7 ex:p4 ex:e8 , \"v\"@de . _:x ex:p4 ex:e7 }\n";
    let files = [
        ("data.nq", nquads.as_str()),
        ("more.ttl", turtle),
        ("named.trig", trig),
    ];
    files
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

#[test]
fn a_cluster_loaded_from_files_holds_the_single_stores_quads() {
    let dir = scratch("files");
    let files = write_files(&dir);
    let (whole, _) = quiver_loader::load_files(&files, &options(), None, &NoProgress).unwrap();
    let expected = whole_quads(&whole);
    assert!(expected.len() > 500);
    // Whole files as shares, then the N-Quads file cut into byte ranges of whole lines
    // (its blank nodes scoped alike in every piece).
    let runs = [
        (1, None),
        (2, None),
        (3, None),
        (4, None),
        (3, Some(2048)),
        (4, Some(700)),
    ];
    for (workers, piece_bytes) in runs {
        let location = dir.join(format!("cluster-{workers}-{piece_bytes:?}"));
        let loaded = load_paths(&location, files.clone(), piece_bytes, workers).unwrap();
        assert_eq!(loaded.partitions.len(), workers);
        assert_eq!(loaded.layout.triples, whole.triples(), "{workers} workers");
        assert_eq!(loaded.layout.terms, whole.terms(), "{workers} workers");
        let quads = cluster_quads(&location);
        let missing: Vec<&String> = expected.iter().filter(|q| !quads.contains(q)).collect();
        let extra: Vec<&String> = quads.iter().filter(|q| !expected.contains(q)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{workers} workers: missing {missing:?}, extra {extra:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cluster_generating_lubm_holds_the_single_stores_quads() {
    let dir = scratch("lubm");
    let config = quiver_lubm::LubmConfig::standard(2);
    let (whole, _) = quiver_loader::load_lubm(config, 2, None, &NoProgress).unwrap();
    let expected = whole_quads(&whole);
    for workers in [1, 3] {
        let location = dir.join(format!("cluster-{workers}"));
        let input = LoadInput::Lubm { config, threads: 1 };
        let loaded = load_cluster(
            &location,
            input,
            LoadCluster::InProcess { workers },
            Arc::new(NoProgress),
        )
        .unwrap();
        assert_eq!(loaded.layout.triples, whole.triples());
        assert_eq!(cluster_quads(&location), expected, "{workers} workers");
        // Each worker tells when it reached each step, in the order of the dataflow.
        for partition in &loaded.partitions {
            let steps: Vec<&str> = partition
                .milestones
                .iter()
                .map(|(s, _)| s.as_str())
                .collect();
            assert_eq!(
                steps,
                [
                    "parsed",
                    "terms sent",
                    "terms numbered",
                    "edges sent",
                    "edges received",
                    "built and saved"
                ],
                "partition {}",
                partition.index
            );
            let at: Vec<f64> = partition.milestones.iter().map(|m| m.1).collect();
            assert!(at.windows(2).all(|w| w[0] <= w[1]), "{at:?}");
            // Its process's processor time, the kernel's part within it.
            let times = partition.cpu.expect("processor seconds");
            let (cpu, kernel) = (times.total(), times.system);
            assert!(cpu > 0.0 && (0.0..=cpu).contains(&kernel), "{cpu} {kernel}");
        }
        // The merged statistics are the whole store's (whose ids differ), sampling aside.
        let statistics = loaded.layout.statistics.unwrap();
        let planner = whole.planner_statistics();
        let sorted = |mut v: Vec<u64>| {
            v.sort_unstable();
            v
        };
        assert_eq!(
            sorted(statistics.class_instances.clone()),
            sorted(planner.class_instances.clone())
        );
        let triples = |s: &quiver_store::partition_stats::PlannerStatistics| {
            sorted(s.predicates.iter().map(|p| p.triples).collect())
        };
        assert_eq!(triples(&statistics), triples(&planner));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_statement_stops_the_load_with_its_place_and_leaves_no_store() {
    let dir = scratch("malformed");
    // A malformed line in a large file cut into byte ranges: its place in the whole file.
    let mut big = String::new();
    for i in 0..500 {
        big.push_str(&format!("<http://ex/s{i}> <http://ex/p> \"value {i}\" .\n"));
    }
    big.push_str("<http://ex/s> <http://ex/p> <unterminated .\n");
    let big_file = dir.join("big-bad.nt");
    std::fs::write(&big_file, big).unwrap();
    let error = load_paths(&dir.join("pieces"), vec![big_file], Some(1000), 3)
        .unwrap_err()
        .to_string();
    assert!(error.contains("big-bad.nt:501:"), "{error}");
    let mut files = write_files(&dir);
    let bad = dir.join("bad.nt");
    std::fs::write(&bad, "<http://ex/a> <http://ex/b> <http://ex/c> .\n<http://ex/a> <http://ex/b> \"unterminated .\n").unwrap();
    files.push(bad);
    let location = dir.join("cluster");
    let error = load_paths(&location, files, None, 3)
        .unwrap_err()
        .to_string();
    assert!(error.contains("bad.nt:2:"), "{error}");
    assert!(
        read_layout(&location).unwrap().is_none(),
        "no layout written"
    );
    // A malformed file added to a loaded cluster stops the load and leaves the cluster as
    // it was; a whole store is refused.
    let good = dir.join("good");
    let more = || vec![dir.join("more.ttl")];
    load_paths(&good, more(), None, 2).unwrap();
    let before = std::fs::read(good.join(quiver_store::partition::LAYOUT_FILE)).unwrap();
    let quads = cluster_quads(&good);
    let error = load_paths(&good, vec![dir.join("bad.nt")], None, 2).unwrap_err();
    assert!(error.to_string().contains("bad.nt:2:"), "{error}");
    let after = std::fs::read(good.join(quiver_store::partition::LAYOUT_FILE)).unwrap();
    assert_eq!(before, after);
    assert_eq!(cluster_quads(&good), quads);
    let error = load_paths(&good, more(), None, 3).unwrap_err();
    assert!(
        error.to_string().contains("cluster of 2 partitions"),
        "{error}"
    );
    let (whole, _) =
        quiver_loader::load_files(&[dir.join("more.ttl")], &options(), None, &NoProgress).unwrap();
    let store_dir = dir.join("whole");
    whole.save(&store_dir).unwrap();
    let error = load_paths(&store_dir, more(), None, 2).unwrap_err();
    assert!(
        error.to_string().contains("already holds a store"),
        "{error}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn adding_to_a_loaded_cluster_equals_loading_all_at_once() {
    let dir = scratch("grow");
    // Two runs of universities, then a third: LUBM-3 in three loads.
    let whole = |n| {
        quiver_loader::load_lubm(quiver_lubm::LubmConfig::standard(n), 2, None, &NoProgress)
            .unwrap()
            .0
    };
    let part = |start, universities| LoadInput::Lubm {
        config: quiver_lubm::LubmConfig {
            universities,
            start_index: start,
            seed: 0,
        },
        threads: 1,
    };
    let location = dir.join("cluster");
    let cluster = LoadCluster::InProcess { workers: 3 };
    load_cluster(&location, part(0, 1), cluster.clone(), Arc::new(NoProgress)).unwrap();
    let first = read_layout(&location).unwrap().unwrap();
    assert_eq!(cluster_quads(&location), whole_quads(&whole(1)));
    let loaded = load_cluster(&location, part(1, 2), cluster, Arc::new(NoProgress)).unwrap();
    let everything = whole(3);
    assert_eq!(loaded.layout.triples, everything.triples());
    assert_eq!(loaded.layout.terms, everything.terms());
    assert!(loaded.layout.terms > first.terms);
    assert_eq!(cluster_quads(&location), whole_quads(&everything));
    // No partition is left beside the ones in use.
    let names: Vec<String> = std::fs::read_dir(&location)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("partition-"))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // Nor a commit record inside them.
    for name in &names {
        for record in [
            quiver_store::partition_commit::COMMITTED_FILE,
            quiver_store::partition_commit::SAVED_FOR_FILE,
        ] {
            assert!(
                !location.join(name).join(record).exists(),
                "{name}/{record}"
            );
        }
    }
    // And it answers like the single store.
    let (partitions, coordinator) = serve(&location);
    for query in common::lubm_queries() {
        check(&everything, &coordinator, &partitions, &query);
    }
    drop(partitions);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The sorted rows of `query` on `store` (with `partitions`: prepared `partitioned`, its
/// patterns run by them), blank node labels unscoped.
fn rows(
    store: &Store,
    query: &str,
    partitions: Option<Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
) -> Vec<String> {
    rows_calling(store, query, partitions, None)
}

/// [`rows`], the query's SERVICE calls answered by `service`.
fn rows_calling(
    store: &Store,
    query: &str,
    partitions: Option<Arc<dyn quiver_sparql::partitions::BgpPartitions>>,
    service: Option<Arc<dyn quiver_sparql::service::ServiceClient>>,
) -> Vec<String> {
    use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
    let prepare_options = PrepareOptions {
        partitions: partitions.clone(),
        ..PrepareOptions::default()
    };
    let prepared = prepare(store, query, &prepare_options).unwrap();
    let options = ExecOptions {
        partitions,
        service,
        ..ExecOptions::default()
    };
    let mut rows = Vec::new();
    match prepared.execute(store, &options).unwrap() {
        QueryResults::Solutions(solutions) => solutions.for_each_row(|row| {
            let row: Vec<String> = row
                .iter()
                .map(|t| t.map_or("UNDEF".to_owned(), |t| t.to_string()))
                .collect();
            rows.push(unscoped(row.join(" ")))
        }),
        QueryResults::Boolean(b) => rows.push(b.to_string()),
        QueryResults::Graph(triples) => {
            rows.extend(triples.iter().map(|t| unscoped(t.to_string())))
        }
    }
    rows.sort();
    rows
}

/// Checks the cluster's rows of `query` against the single store's: equal, or for a LIMIT
/// without ORDER BY, as many rows, each one of the unlimited query's.
fn check(
    whole: &Store,
    cluster: &Store,
    partitions: &Arc<quiver_cluster::TimelyPartitions>,
    query: &str,
) {
    let found = rows(cluster, query, Some(partitions.clone()));
    let expected = rows(whole, query, None);
    let upper = query.to_uppercase();
    match upper.rfind("LIMIT") {
        Some(at) if !upper.contains("ORDER BY") => {
            assert_eq!(found.len(), expected.len(), "{query}");
            let all = rows(whole, &query[..at], None);
            for row in &found {
                assert!(all.contains(row), "{query}: {row} is not an answer");
            }
        }
        _ => assert_eq!(found, expected, "{query}"),
    }
}

/// The endpoint the SERVICE queries call, answered by [`Remote`].
const REMOTE: &str = "http://remote.example/sparql";

/// A SPARQL endpoint answered by a store of this process.
#[derive(Debug)]
struct Remote(Store);

impl quiver_sparql::service::ServiceClient for Remote {
    fn select(
        &self,
        _endpoint: &oxrdf::NamedNode,
        queries: &[String],
        _state: &quiver_sparql::context::QueryState,
    ) -> Result<Vec<quiver_sparql::service::ServiceSolutions>, quiver_sparql::service::ServiceError>
    {
        use quiver_sparql::service::{ServiceError, ServiceSolutions};
        use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
        let failed = |e: quiver_sparql::QueryError| ServiceError::Failed(e.to_string());
        queries
            .iter()
            .map(|query| {
                let prepared =
                    prepare(&self.0, query, &PrepareOptions::default()).map_err(failed)?;
                match prepared
                    .execute(&self.0, &ExecOptions::default())
                    .map_err(failed)?
                {
                    QueryResults::Solutions(solutions) => Ok(ServiceSolutions {
                        variables: solutions.variables.to_vec(),
                        rows: (0..solutions.len()).map(|r| solutions.row(r)).collect(),
                        bytes: 0,
                    }),
                    _ => Err(ServiceError::Failed("not a SELECT".into())),
                }
            })
            .collect()
    }
}

/// The loaded cluster in `dir` served by this process's workers, and its coordinator's
/// store planning with the whole store's statistics.
fn serve(dir: &Path) -> (Arc<quiver_cluster::TimelyPartitions>, Store) {
    let layout = read_layout(dir).unwrap().unwrap();
    let mut ports = common::loopback_ports(1);
    let config = quiver_cluster::ClusterConfig {
        process: 0,
        addresses: ports.addresses().to_vec(),
        workers: layout.partitions as usize,
        listener: ports.take(0),
    };
    let cluster = Arc::new(quiver_cluster::TimelyPartitions::cluster(dir, config).unwrap());
    let mut coordinator = cluster.coordinator_store().unwrap();
    coordinator.use_statistics(layout.statistics.as_ref().unwrap());
    (cluster, coordinator)
}

#[test]
fn a_loaded_cluster_answers_every_query_like_the_single_store() {
    let dir = scratch("queries");
    // LUBM-1 and every query of `queries/`.
    let config = quiver_lubm::LubmConfig::standard(1);
    let (whole, _) = quiver_loader::load_lubm(config, 2, None, &NoProgress).unwrap();
    let location = dir.join("lubm");
    let input = LoadInput::Lubm { config, threads: 1 };
    let cluster = LoadCluster::InProcess { workers: 3 };
    load_cluster(&location, input, cluster, Arc::new(NoProgress)).unwrap();
    let (partitions, coordinator) = serve(&location);
    // A SERVICE's answers naming stored terms no row brought before (e-mail addresses
    // other owners hold) join with the cluster's rows; first, before any other query's
    // rows bring those terms to the coordinator.
    let service = format!(
        "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
         SELECT ?x WHERE {{ SERVICE <{REMOTE}> {{ VALUES ?s {{ {} }} ?s ub:emailAddress ?e }} \
         ?x ub:emailAddress ?e }}",
        (1..=8)
            .map(|s| format!("<http://www.Department3.University0.edu/GraduateStudent{s}>"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let remote: Arc<dyn quiver_sparql::service::ServiceClient> = Arc::new(Remote(whole.clone()));
    // Seeding an OPTIONAL pattern with the answers' terms (the answers come first there:
    // no row has brought those terms), then joined with a pattern.
    let seeding = service.replace("SELECT ?x", "SELECT ?e ?x").replace(
        "?x ub:emailAddress ?e }",
        "OPTIONAL { ?x ub:emailAddress ?e } }",
    );
    for query in [seeding, service] {
        let expected = rows_calling(&whole, &query, None, Some(Arc::clone(&remote)));
        assert_eq!(expected.len(), 8, "{expected:?}");
        assert!(
            expected.iter().all(|row| !row.contains("None")),
            "{expected:?}"
        );
        let found = rows_calling(
            &coordinator,
            &query,
            Some(partitions.clone()),
            Some(Arc::clone(&remote)),
        );
        assert_eq!(found, expected, "{query}");
    }
    // A VALUES row's terms and a property path's constant end, interned when the query
    // runs, must get the stored ids too; first, before other queries' rows bring those
    // terms to the coordinator.
    let interned = [
        "SELECT ?x WHERE { VALUES ?d { <http://www.Department7.University0.edu> \
         <http://www.Department11.University0.edu> } ?x ub:worksFor ?d }",
        "SELECT ?x WHERE { <http://www.Department5.University0.edu> ub:subOrganizationOf+ ?x }",
        "SELECT ?x WHERE { ?x ub:subOrganizationOf* <http://www.University0.edu> }",
    ];
    for query in interned {
        let query = format!("PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> {query}");
        assert!(!rows(&whole, &query, None).is_empty(), "{query}");
        check(&whole, &coordinator, &partitions, &query);
    }
    for query in common::lubm_queries() {
        check(&whole, &coordinator, &partitions, &query);
        // Planned as on the whole store: the constants resolved at their owners, then the
        // sizes of their records asked there.
        let asking: Arc<dyn BgpPartitions> = partitions.clone();
        assert_eq!(
            common::plan_shapes(&coordinator, &query, Some(Arc::clone(&asking))),
            common::plan_shapes(&whole, &query, Some(asking)),
            "{query}"
        );
    }
    // Terms a query computes row by row that name stored terms, which other owners may
    // hold and the coordinator has not seen (neither a constant of the query nor in rows
    // it got back): they must get the stored ids, or joins with the patterns' rows miss.
    let computed = [
        "SELECT ?x WHERE { VALUES ?i { 0 1 9 } BIND(IRI(CONCAT('http://www.Department', STR(?i), '.University0.edu')) AS ?d) ?x ub:worksFor ?d }",
        "SELECT ?x WHERE { VALUES ?i { 1 7 } BIND(CONCAT('GraduateStudent', STR(?i)) AS ?m) ?x ub:name ?m }",
        "SELECT ?x WHERE { VALUES ?i { 2 } BIND(STRDT(CONCAT('Course', STR(?i)), xsd:string) AS ?m) ?x ub:name ?m }",
        "SELECT ?x ?d WHERE { ?x ub:worksFor ?d0 BIND(IRI(STR(?d0)) AS ?d) ?d ub:subOrganizationOf ?u }",
        // An aggregate's values name stored literals no row brought before: they surface
        // through the SELECT expression that binds them, resolved as a BIND's are.
        "SELECT ?x WHERE { { SELECT ?g (GROUP_CONCAT(?part; separator='') AS ?m) WHERE { \
         VALUES (?g ?part) { (1 'GraduateStudent') (1 '1') (2 'GraduateStudent') (2 '2') \
         (3 'GraduateStudent') (3 '3') (4 'GraduateStudent') (4 '4') (5 'GraduateStudent') (5 '5') } \
         } GROUP BY ?g } ?x ub:name ?m }",
    ];
    for query in computed {
        let query = format!(
            "PREFIX ub: <http://swat.cse.lehigh.edu/onto/univ-bench.owl#> \
             PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> {query}"
        );
        assert!(!rows(&whole, &query, None).is_empty(), "{query}");
        check(&whole, &coordinator, &partitions, &query);
    }
    // Every triple: the terms of every row, of megabytes, come from their owners in
    // pieces (`dictionary::PIECE_BYTES`).
    check(
        &whole,
        &coordinator,
        &partitions,
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o }",
    );
    drop(partitions);
    // The random graph's shapes, with blank nodes, literals and named graphs.
    let files = write_files(&dir);
    let (whole, _) = quiver_loader::load_files(&files, &options(), None, &NoProgress).unwrap();
    let location = dir.join("files");
    load_paths(&location, files, None, 2).unwrap();
    let (partitions, coordinator) = serve(&location);
    let prefix = format!("PREFIX ex: <{}> ", common::EX);
    let extra = [
        "SELECT ?s ?o WHERE { ?s ex:name ?o FILTER(lang(?o) = 'fr') }",
        "SELECT ?s WHERE { ?s ex:age 42 }",
        "SELECT ?s WHERE { { SELECT (SUM(?v) AS ?a) WHERE { VALUES ?v { 40 2 } } } ?s ex:age ?a }",
        "SELECT ?g ?s WHERE { GRAPH ?g { ?s ?p ?o } }",
        "SELECT ?o WHERE { GRAPH ex:g7 { ex:e7 ex:p4 ?o } }",
        "SELECT ?s ?o WHERE { ?s ex:p1 ?o FILTER(STRSTARTS(STR(?o), 'http://ex/e1')) } ORDER BY ?o ?s",
        "SELECT ?x WHERE { ?x a ex:C9 }",
        "SELECT ?x ?y WHERE { ?x ex:knows ?y }",
        "SELECT * WHERE { _:x ex:p3 ?o }",
        "ASK { ex:e2 ex:when ?d }",
        "SELECT ?s WHERE { ?s ex:p1 ex:absent }",
        "CONSTRUCT { ?s ex:copy ?o } WHERE { ?s ex:p2 ?o }",
        "DESCRIBE ex:e5",
        "SELECT ?x ?y WHERE { ?x ex:p1+ ?y } ORDER BY ?x ?y LIMIT 50",
        // What a whole store decides on ids (their order, id ranges) over literals of
        // every kind, which a share of the dictionary must decide on terms.
        "SELECT ?o ?s ?p WHERE { ?s ?p ?o } ORDER BY ?o ?s ?p",
        "SELECT ?o ?s ?p WHERE { ?s ?p ?o } ORDER BY DESC(?o) ?s ?p LIMIT 9",
        "SELECT (MIN(?o) AS ?lo) (MAX(?o) AS ?hi) WHERE { ?s ?p ?o }",
        "SELECT ?p (MIN(?o) AS ?lo) (MAX(?o) AS ?hi) (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p",
        "SELECT ?s (MAX(?o) AS ?hi) WHERE { ?s ?p ?o } GROUP BY ?s ORDER BY ?s",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(STRSTARTS(?o, 'v')) }",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(REGEX(?o, '^ch')) }",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(?o = 'plain') }",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(?o > 'u') }",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(?o >= 40) }",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o) && !isNumeric(?o)) }",
        "SELECT (COUNT(DISTINCT ?o) AS ?n) WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }",
        "SELECT DISTINCT ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) } ORDER BY ?o",
        "SELECT ?s ?o WHERE { ?s ?p ?o FILTER(LANGMATCHES(LANG(?o), 'en')) }",
        "SELECT ?a ?b WHERE { ?a ?p ?o . ?b ?q ?o FILTER(?a != ?b) }",
        "SELECT ?s WHERE { ?s ?p ?o FILTER(sameTerm(?o, 42)) }",
    ];
    // The sum names a stored literal, which the aggregate must join with.
    let summed = extra.iter().find(|shape| shape.contains("SUM(")).unwrap();
    assert!(!rows(&whole, &format!("{prefix}{summed}"), None).is_empty());
    for shape in common::QUERIES.iter().chain(&extra) {
        check(
            &whole,
            &coordinator,
            &partitions,
            &format!("{prefix}{shape}"),
        );
    }
    drop(partitions);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Set when this test binary runs again as one process of a cluster load:
/// `dir|process|addresses|fate|listening descriptor`, the input being `write_files(dir)`'s.
const CHILD: &str = "QUIVER_TEST_LOAD_PROCESS";

/// What becomes of a process of a load as soon as it has parsed anything.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fate {
    /// It loads its share.
    Lives,
    /// It exits at once, as if killed.
    Dies,
    /// It stops itself (SIGSTOP): its connections stay open and its kernel answers for it.
    Stops,
}

impl Fate {
    fn parse(text: &str) -> Self {
        match text {
            "Dies" => Fate::Dies,
            "Stops" => Fate::Stops,
            _ => Fate::Lives,
        }
    }
}

impl quiver_loader::Progress for Fate {
    fn statements(&self, _: u64) {
        match self {
            Fate::Lives => {}
            Fate::Dies => std::process::exit(9),
            Fate::Stops => {
                let me = std::process::id().to_string();
                std::process::Command::new("kill")
                    .args(["-STOP", &me])
                    .status()
                    .unwrap();
            }
        }
    }
}

fn load_as_process(
    dir: &Path,
    process: usize,
    addresses: Vec<String>,
    listener: Option<Arc<std::net::TcpListener>>,
    fate: Fate,
) -> Result<(), String> {
    let files = write_files_list(dir);
    let config = quiver_cluster::ClusterConfig {
        process,
        addresses,
        workers: 1,
        listener,
    };
    let progress: Arc<dyn quiver_loader::Progress + Send + Sync> = Arc::new(fate);
    let input = LoadInput::Files {
        piece_bytes: None,
        paths: files,
        options: options(),
    };
    load_cluster(
        &dir.join("cluster"),
        input,
        LoadCluster::Processes(config),
        progress,
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

/// The input files `write_files` wrote in `dir`.
fn write_files_list(dir: &Path) -> Vec<PathBuf> {
    ["data.nq", "more.ttl", "named.trig"]
        .iter()
        .map(|name| dir.join(name))
        .collect()
}

/// Starts process `process` of a cluster load: this test binary, run again.
fn spawn(
    dir: &Path,
    process: usize,
    ports: &quiver_cluster::LoopbackPorts,
    fate: Fate,
) -> std::process::Child {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    let fd = ports.hand_over(process, &mut command).unwrap();
    let addresses = ports.addresses().join(",");
    command
        .args([
            "--exact",
            &common::test_name(module_path!(), "real_processes_load_a_cluster"),
            "--nocapture",
        ])
        .env(
            CHILD,
            format!("{}|{process}|{addresses}|{fate:?}|{fd}", dir.display()),
        )
        .spawn()
        .unwrap()
}

#[test]
fn real_processes_load_a_cluster() {
    if let Ok(spec) = std::env::var(CHILD) {
        let fields: Vec<&str> = spec.split('|').collect();
        let addresses = fields[2].split(',').map(str::to_owned).collect();
        let result = load_as_process(
            Path::new(fields[0]),
            fields[1].parse().unwrap(),
            addresses,
            common::inherited(fields[4]),
            Fate::parse(fields[3]),
        );
        // A process that could not finish its load says why and fails.
        if let Err(error) = result {
            eprintln!("child load failed: {error}");
            std::process::exit(3);
        }
        return;
    }
    let root = scratch("processes");
    let files = write_files(&root);
    let (whole, _) = quiver_loader::load_files(&files, &options(), None, &NoProgress).unwrap();
    let expected = whole_quads(&whole);
    for processes in [2, 4] {
        let dir = root.join(format!("{processes}"));
        std::fs::create_dir_all(&dir).unwrap();
        write_files(&dir);
        let mut ports = common::loopback_ports(processes);
        let mut children: Vec<_> = (1..processes)
            .map(|p| spawn(&dir, p, &ports, Fate::Lives))
            .collect();
        let addresses = ports.addresses().to_vec();
        load_as_process(&dir, 0, addresses, ports.take(0), Fate::Lives).unwrap();
        for child in &mut children {
            assert!(child.wait().unwrap().success());
        }
        assert_eq!(
            cluster_quads(&dir.join("cluster")),
            expected,
            "{processes} processes"
        );
    }
    // A process that dies while loading: the others stop with an error within seconds,
    // and no layout is written.
    let dir = root.join("killed");
    std::fs::create_dir_all(&dir).unwrap();
    write_files(&dir);
    let mut ports = common::loopback_ports(3);
    let fate = |p| if p == 2 { Fate::Dies } else { Fate::Lives };
    let mut children: Vec<_> = (1..3).map(|p| spawn(&dir, p, &ports, fate(p))).collect();
    let started = std::time::Instant::now();
    let addresses = ports.addresses().to_vec();
    let error = load_as_process(&dir, 0, addresses, ports.take(0), Fate::Lives).unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert!(
        error.contains("stopped") || error.contains("process"),
        "{error}"
    );
    for child in &mut children {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert!(read_layout(&dir.join("cluster")).unwrap().is_none());
    // A process that stops while loading (its connections open, its kernel answering for
    // it): the others stop with an error naming it once it has not been heard from for
    // `SILENT_AFTER`, where they waited for as long as it stayed stopped, and no layout
    // is written.
    let dir = root.join("stopped");
    std::fs::create_dir_all(&dir).unwrap();
    write_files(&dir);
    let mut ports = common::loopback_ports(2);
    let mut stopped = spawn(&dir, 1, &ports, Fate::Stops);
    let started = std::time::Instant::now();
    let addresses = ports.addresses().to_vec();
    let error = load_as_process(&dir, 0, addresses, ports.take(0), Fate::Lives).unwrap_err();
    let waited = started.elapsed();
    stopped.kill().unwrap();
    let _ = stopped.wait();
    assert!(
        waited >= quiver_cluster::load::SILENT_AFTER && waited < std::time::Duration::from_secs(20),
        "{waited:?}"
    );
    assert!(
        error.contains("process 1 of the cluster has not been heard from"),
        "{error}"
    );
    assert!(read_layout(&dir.join("cluster")).unwrap().is_none());
    let _ = std::fs::remove_dir_all(&root);
}

/// Set when this test binary runs again as a serving process of a cluster:
/// `dir|process|addresses|listening descriptor`.
const SERVING: &str = "QUIVER_TEST_SERVE_PROCESS";

#[test]
fn processes_serving_two_loads_refuse_to_start() {
    if let Ok(spec) = std::env::var(SERVING) {
        let fields: Vec<&str> = spec.split('|').collect();
        let config = quiver_cluster::ClusterConfig {
            process: fields[1].parse().unwrap(),
            addresses: fields[2].split(',').map(str::to_owned).collect(),
            workers: 1,
            listener: common::inherited(fields[3]),
        };
        if let Ok(cluster) = quiver_cluster::TimelyPartitions::cluster(Path::new(fields[0]), config)
        {
            let _ = cluster.wait();
        }
        return;
    }
    let dir = scratch("two-loads");
    let files = write_files(&dir);
    let load = |name: &str| {
        let location = dir.join(name);
        load_paths(&location, files.clone(), None, 2).unwrap();
        location
    };
    let (a, b) = (load("a"), load("b"));
    // One directory with a partition of another load in it.
    let mixed = load("mixed");
    std::fs::remove_dir_all(mixed.join("partition-1")).unwrap();
    std::fs::rename(b.join("partition-1"), mixed.join("partition-1")).unwrap();
    let error = open_partition(&mixed, 1, 2).unwrap_err().to_string();
    assert!(error.contains("another load"), "{error}");
    // Two processes, each with its own (complete) store, of two loads.
    let b = load("b2");
    let mut ports = common::loopback_ports(2);
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    let fd = ports.hand_over(1, &mut command).unwrap();
    let addresses = ports.addresses().to_vec();
    let mut child = command
        .args([
            "--exact",
            &common::test_name(
                module_path!(),
                "processes_serving_two_loads_refuse_to_start",
            ),
            "--nocapture",
        ])
        .env(
            SERVING,
            format!("{}|1|{}|{fd}", b.display(), addresses.join(",")),
        )
        .spawn()
        .unwrap();
    let config = quiver_cluster::ClusterConfig {
        process: 0,
        addresses,
        workers: 1,
        listener: ports.take(0),
    };
    let error = quiver_cluster::TimelyPartitions::cluster(&a, config).unwrap_err();
    assert!(error.contains("another load"), "{error}");
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(10) {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
