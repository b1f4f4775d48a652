//! Workload files: every key, every error, the built-ins and Wiscer's own files.

use std::path::PathBuf;

use quiver_kv::workload::{self, builtin, parse, KeyOrder, KeyPattern, WorkloadError, BUILTIN};
use quiver_kv::EngineKind;

const BASE: &str = "zipf=1\ninitialSize=100\noperationCount=1000\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\n";

#[test]
fn every_key_is_read() {
    let text = "# a comment\n\n  zipf = 1.25 \ninitialSize=1048576\noperationCount=500000000\n\
        fetchProportion=0.5\ninsertProportion=0.2\ndeleteProportion=0.2\nupdateProportion=0.1\n\
        distShiftFreq=100000001\ndistShiftPrct=20\nkeyPattern=sequential\nkeyOrder=sorted\n\
        storageEngine=VIPHashing\noutputFile=out/run.csv\n";
    let w = parse("mine", text).expect("valid");
    assert_eq!(w.name, "mine");
    assert_eq!(w.zipf, 1.25);
    assert_eq!(w.initial_size, 1 << 20);
    assert_eq!(w.operation_count, 500_000_000);
    assert_eq!(
        (w.fetch, w.insert, w.delete, w.update),
        (0.5, 0.2, 0.2, 0.1)
    );
    assert_eq!(w.dist_shift_freq, Some(100_000_001));
    assert_eq!(w.dist_shift_prct, 20.0);
    assert_eq!(w.key_pattern, KeyPattern::Sequential);
    assert_eq!(w.key_order, KeyOrder::Sorted);
    assert_eq!(w.engines, Some(vec![EngineKind::ChainedVip]));
    assert_eq!(w.output_file, Some(PathBuf::from("out/run.csv")));
}

#[test]
fn defaults_of_optional_keys() {
    let w = parse("base", BASE).expect("valid");
    assert_eq!(w.update, 0.0);
    assert_eq!(w.dist_shift_freq, None);
    assert_eq!(w.dist_shift_prct, 0.0);
    assert_eq!(w.key_pattern, KeyPattern::Random);
    assert_eq!(w.key_order, KeyOrder::Random);
    assert_eq!(w.engines, None);
    assert_eq!(w.output_file, None);
}

#[test]
fn wiscer_files_parse() {
    // Wiscer's medium-churn file, as shipped (lower-case `keyorder`, its engine names).
    let text = "zipf=1\ninitialSize=1000000\noperationCount=500000000\ndistShiftFreq=100000001\n\
        distShiftPrct=20\nfetchProportion=1\ninsertProportion=0\ndeleteProportion=0\n\
        updateProportion=0\nstorageEngine=chainedAdaptive\nkeyorder=random\n\
        outputFile=output/medium_churn_adaptive\n";
    let w = parse("medium_churn_adaptive", text).expect("Wiscer's file");
    assert_eq!(w.engines, Some(vec![EngineKind::ChainedVip]));
    let w = parse(
        "x",
        &BASE.replace("zipf=1\n", "zipf=1\nstorageEngine=chained\n"),
    )
    .unwrap();
    assert_eq!(w.engines, Some(vec![EngineKind::Chained]));
    let w = parse("x", &format!("{BASE}storageEngine=all\n")).unwrap();
    assert_eq!(w.engines, Some(EngineKind::ALL.to_vec()));
    let w = parse("x", &format!("{BASE}storageEngine=hashbrown,quiver\n")).unwrap();
    assert_eq!(
        w.engines,
        Some(vec![EngineKind::Quiver, EngineKind::Hashbrown])
    );
}

fn error(text: &str) -> WorkloadError {
    parse("bad", text).expect_err("invalid")
}

#[test]
fn every_error_names_its_key() {
    let cases: Vec<(String, &str)> = vec![
        (format!("{BASE}colour=red\n"), "unknown key 'colour'"),
        (format!("{BASE}zipf=2\n"), "line 7: zipf is given twice"),
        (
            format!("{BASE}justtext\n"),
            "line 7: expected key=value, found 'justtext'",
        ),
        (BASE.replace("zipf=1\n", ""), "missing key zipf"),
        (
            BASE.replace("initialSize=100\n", ""),
            "missing key initialSize",
        ),
        (
            BASE.replace("operationCount=1000\n", ""),
            "missing key operationCount",
        ),
        (
            BASE.replace("fetchProportion=1\n", ""),
            "missing key fetchProportion",
        ),
        (
            BASE.replace("insertProportion=0\n", ""),
            "missing key insertProportion",
        ),
        (
            BASE.replace("deleteProportion=0\n", ""),
            "missing key deleteProportion",
        ),
        (
            BASE.replace("zipf=1", "zipf=-1"),
            "zipf must not be negative",
        ),
        (
            BASE.replace("zipf=1", "zipf=abc"),
            "zipf: 'abc' is not a finite number",
        ),
        (
            BASE.replace("zipf=1", "zipf=inf"),
            "zipf: 'inf' is not a finite number",
        ),
        (
            BASE.replace("initialSize=100", "initialSize=-5"),
            "initialSize must not be negative",
        ),
        (
            BASE.replace("initialSize=100", "initialSize=1.5"),
            "initialSize: '1.5' is not a whole number",
        ),
        (
            BASE.replace("operationCount=1000", "operationCount=-1"),
            "operationCount must not be negative",
        ),
        (
            BASE.replace("fetchProportion=1", "fetchProportion=-0.5"),
            "fetchProportion must not be negative",
        ),
        (
            BASE.replace("insertProportion=0", "insertProportion=-0.1"),
            "insertProportion must not be negative",
        ),
        (
            BASE.replace("deleteProportion=0", "deleteProportion=-1"),
            "deleteProportion must not be negative",
        ),
        (
            format!("{BASE}updateProportion=-0.2\n"),
            "updateProportion must not be negative",
        ),
        (
            BASE.replace("fetchProportion=1", "fetchProportion=0.9"),
            "= 0.9, not 1",
        ),
        (format!("{BASE}updateProportion=0.5\n"), "= 1.5, not 1"),
        (
            format!("{BASE}distShiftFreq=-3\n"),
            "distShiftFreq must not be negative",
        ),
        (
            format!("{BASE}distShiftFreq=0\n"),
            "distShiftFreq: must be at least 1",
        ),
        (
            format!("{BASE}distShiftPrct=-20\n"),
            "distShiftPrct must not be negative",
        ),
        (
            format!("{BASE}distShiftPrct=150\n"),
            "distShiftPrct: 150 is above 100",
        ),
        (
            format!("{BASE}keyPattern=zigzag\n"),
            "keyPattern: 'zigzag' is not random or sequential",
        ),
        (
            format!("{BASE}keyOrder=reverse\n"),
            "keyOrder: 'reverse' is not random or sorted",
        ),
        (
            format!("{BASE}storageEngine=btree\n"),
            "storageEngine: 'btree' is not an engine",
        ),
        (
            format!("{BASE}outputFile=\n"),
            "outputFile: '' is not a file name",
        ),
        (
            BASE.replace("initialSize=100", "initialSize=0"),
            "initialSize: is 0 and nothing is inserted",
        ),
    ];
    for (text, expected) in cases {
        let message = error(&text).to_string();
        assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    }
    assert!(matches!(
        error(
            &BASE
                .replace("zipf=1", "ZIPF=1")
                .replace("initialSize", "zipf")
        ),
        WorkloadError::Repeated { key: "zipf", .. }
    ));
}

#[test]
fn builtins_parse_and_differ_as_promised() {
    let all: Vec<_> = BUILTIN.iter().map(|n| builtin(n).expect(n)).collect();
    assert_eq!(all.len(), 7);
    assert!(all.iter().all(|w| w.initial_size == 1 << 20));
    let by = |name| builtin(name).unwrap();
    assert_eq!(by("static-uniform").zipf, 0.0);
    assert_eq!(by("static-low-skew").zipf, 1.0);
    assert!(by("static-medium-skew").zipf > 1.0);
    let (medium, high) = (by("churn-medium"), by("churn-high"));
    assert!(medium.dist_shift_prct > 0.0 && high.dist_shift_prct > 0.0);
    assert!(high.dist_shift_freq.unwrap() < medium.dist_shift_freq.unwrap());
    let steady = by("steady-state");
    assert!(steady.insert > 0.0 && steady.insert == steady.delete);
    let read_mostly = by("read-mostly");
    assert!(read_mostly.insert > 0.0 && read_mostly.insert < 0.1 && read_mostly.delete == 0.0);
    assert!(builtin("nope").is_none());
}

#[test]
fn load_reads_files_and_names_unknown_workloads() {
    let dir = std::env::temp_dir().join(format!("quiver-kv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.workload");
    std::fs::write(&path, BASE).unwrap();
    let w = workload::load(path.to_str().unwrap()).expect("a file");
    assert_eq!(w.name, "mine.workload");
    assert_eq!(workload::load("churn-high").unwrap().name, "churn-high");
    let message = workload::load("no-such-workload").unwrap_err().to_string();
    assert!(message.contains("no-such-workload") && message.contains("static-uniform"));
    std::fs::remove_dir_all(&dir).unwrap();
}
