//! The benchmark commands on LUBM-1 as a user runs them: `bench lubm --json` (its schema
//! and the published row counts), `bench lubm --compare-oxigraph` (beside pyoxigraph, and
//! its failure when the row counts differ), `bench scale` (its CSV and PNG), `bench
//! emulate` (the throughput line, the JSON figures, the mix file, the CDF plot), `bench
//! update` (every figure of its JSON), `bench log` (statuses, errors and row counts beside
//! pyoxigraph's).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn temp_dir(name: &str) -> PathBuf {
    // Under the target directory, one name per test: the next run starts by removing what
    // this one leaves (the stores shared by a file's tests live as long as the process).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn shared() -> PathBuf {
    std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn run_ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    output
}

/// A LUBM-1 store shared by the tests of this file.
fn lubm1() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = temp_dir("lubm1").join("store");
        run_ok(
            quiver()
                .args(["load", "--lubm", "1", "--location"])
                .arg(&dir),
        );
        dir
    })
}

/// Row counts of q1…q12 on `dataset`, from `expected-counts.tsv`.
fn expected_counts(dataset: &str) -> Vec<u64> {
    let path = shared().join("lubm/expected-counts.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    quiver_lubm::expected::query_counts(&text, dataset)
        .unwrap_or_else(|| panic!("no counts for {dataset}"))
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("no number {key:?} in {value}"))
}

/// Checks that `bytes` is a PNG: signature, chunks with valid checksums, an RGB header,
/// and image data that inflate to exactly the rows the header announces.
fn assert_valid_png(bytes: &[u8]) -> (u32, u32) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let mut at = 8;
    let (mut width, mut height, mut idat, mut ended) = (0, 0, Vec::new(), false);
    while at + 12 <= bytes.len() {
        let length = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        let kind = &bytes[at + 4..at + 8];
        let data = &bytes[at + 8..at + 8 + length];
        let crc = u32::from_be_bytes(bytes[at + 8 + length..at + 12 + length].try_into().unwrap());
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(kind);
        hasher.update(data);
        assert_eq!(hasher.finalize(), crc, "checksum of chunk {kind:?}");
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(data[0..4].try_into().unwrap());
                height = u32::from_be_bytes(data[4..8].try_into().unwrap());
                assert_eq!(&data[8..10], &[8, 2], "8-bit RGB");
            }
            b"IDAT" => idat.extend_from_slice(data),
            b"IEND" => ended = true,
            _ => {}
        }
        at += 12 + length;
    }
    assert!(ended && at == bytes.len(), "IEND ends the file");
    let mut pixels = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut pixels)
        .unwrap();
    assert!(width > 0 && height > 0);
    assert_eq!(pixels.len(), height as usize * (1 + 3 * width as usize));
    // Something was drawn: not every pixel is white.
    assert!(pixels.iter().any(|&b| b < 200), "an empty picture");
    (width, height)
}

#[test]
fn bench_lubm_json_has_the_schema_and_the_published_rows() {
    let dir = temp_dir("lubm");
    let json = dir.join("lubm1.json");
    run_ok(
        quiver()
            .args([
                "bench",
                "lubm",
                "--universities",
                "1",
                "--runs",
                "2",
                "--cache",
            ])
            .arg(dir.join("cache"))
            .arg("--json")
            .arg(&json),
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["dataset"], "LUBM-1");
    assert!(number(&report["load"], "load_seconds") >= 0.0, "{report}");
    let queries = report["queries"].as_array().expect("queries");
    let names: Vec<&str> = queries
        .iter()
        .map(|q| q["query"].as_str().unwrap())
        .collect();
    let mut expected_names: Vec<String> = (1..=12).map(|n| format!("q{n}")).collect();
    expected_names.extend(["opt1", "agg1", "path1"].map(String::from));
    assert_eq!(names, expected_names);
    let rows: Vec<u64> = queries
        .iter()
        .map(|q| q["rows"].as_u64().unwrap())
        .collect();
    let mut expected_rows = expected_counts("lubm1");
    // opt1, agg1, path1 (queries/lubm-sparql11): the row counts Oxigraph 0.5 gives on the
    // reference LUBM-1 data (shared/lubm/lubm1-uba-sorted.nt.gz).
    expected_rows.extend([3738, 15, 239]);
    assert_eq!(rows, expected_rows);
    for q in queries {
        let (median, min, max) = (
            number(q, "median_us"),
            number(q, "min_us"),
            number(q, "max_us"),
        );
        assert!(0.0 < min && min <= median && median <= max, "{q}");
        assert!(number(q, "plan_us") > 0.0, "{q}");
        // The kernel's share of the runs to TSV: a fraction, or null where the runs were
        // too short for the system to count any processor time.
        let kernel = &q["query_tsv_kernel_share"];
        assert!(
            kernel.is_null() || (0.0..=1.0).contains(&kernel.as_f64().unwrap_or(-1.0)),
            "{q}"
        );
    }
}

/// The Python that `bench lubm --compare-oxigraph` runs (PYTHON, else `python3`); fails,
/// saying how to install it, when it lacks pyoxigraph.
fn require_pyoxigraph() {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python)
        .args(["-c", "import pyoxigraph"])
        .output();
    assert!(
        probe.is_ok_and(|o| o.status.success()),
        "this test needs pyoxigraph for {python}: `pip install pyoxigraph`, or run the tests \
         through scripts/test, which installs it in a virtual environment"
    );
}

/// `bench lubm -u 1 --runs 1 --compare-oxigraph` with its cache in `cache`.
fn compare_oxigraph(cache: &Path, json: &Path) -> Output {
    quiver()
        .args([
            "bench",
            "lubm",
            "-u",
            "1",
            "--runs",
            "1",
            "--compare-oxigraph",
        ])
        .arg("--cache")
        .arg(cache)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap()
}

#[test]
fn bench_lubm_beside_oxigraph_agrees_on_every_row_count() {
    require_pyoxigraph();
    let dir = temp_dir("oxigraph");
    let json = dir.join("report.json");
    let output = compare_oxigraph(&dir.join("cache"), &json);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["oxigraph"]["triples"], report["triples"], "{report}");
    let queries = report["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 15);
    for q in queries {
        assert_eq!(q["oxigraph_rows"], q["rows"], "{q}");
        assert!(number(q, "query_tsv_median_us") > 0.0, "{q}");
        assert!(number(q, "oxigraph_median_us") > 0.0, "{q}");
    }
    let table = String::from_utf8(output.stdout).unwrap();
    assert!(
        table.contains("| Oxigraph query→TSV µs | speedup |"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_lubm_fails_naming_the_queries_whose_row_counts_differ_from_oxigraph() {
    require_pyoxigraph();
    let dir = temp_dir("oxigraph-differs");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    // Oxigraph reads the cached N-Triples of LUBM-1; here they hold the courses of one
    // department only, so every query that finds anything else counts differently.
    let lubm = quiver().args(["gen", "lubm", "-u", "1"]).output().unwrap();
    assert!(lubm.status.success(), "{}", stderr(&lubm));
    let text = String::from_utf8(lubm.stdout).unwrap();
    let courses: String = text
        .lines()
        .filter(|line| line.starts_with("<http://www.Department0.University0.edu/Course"))
        .map(|line| format!("{line}\n"))
        .collect();
    assert!(!courses.is_empty());
    std::fs::write(cache.join("lubm-1.nt"), courses).unwrap();
    let json = dir.join("report.json");
    let output = compare_oxigraph(&cache, &json);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "stderr: {message}");
    assert!(!message.contains("panicked"), "{message}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let mut differing = Vec::new();
    for q in report["queries"].as_array().unwrap() {
        let name = q["query"].as_str().unwrap();
        if q["oxigraph_rows"] != q["rows"] {
            differing.push(name);
            let line = format!(
                "{name}: Quiver {} rows, Oxigraph {}",
                q["rows"], q["oxigraph_rows"]
            );
            assert!(message.contains(&line), "{line:?} not in: {message}");
        }
    }
    // q2 and q8 find students and departments, which the cached data lacks.
    assert!(
        differing.contains(&"q2") && differing.contains(&"q8"),
        "{differing:?}"
    );
    assert!(
        message.contains("error: row counts differ between Quiver and Oxigraph"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_scale_writes_a_csv_row_per_query_and_thread_count_and_a_png() {
    let dir = temp_dir("scale");
    let (csv, png) = (dir.join("scale.csv"), dir.join("scale.png"));
    let output = run_ok(
        quiver()
            .args([
                "bench",
                "scale",
                "--threads",
                "2,1",
                "--runs",
                "1",
                "--location",
            ])
            .arg(lubm1())
            .arg("--csv")
            .arg(&csv)
            .arg("--plot")
            .arg(&png),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("logical CPU(s)"), "{stdout}");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("query,threads,median_us,min_us,max_us,rows,speedup,beyond_physical_cores")
    );
    let counts = expected_counts("lubm1");
    let mut seen = Vec::new();
    let mut machine = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 8, "{line}");
        let query = fields[0].to_owned();
        let threads: usize = fields[1].parse().unwrap();
        // The machine's own kernels at the same thread counts: a time and a speedup each.
        if let Some(kernel) = query.strip_prefix("machine: ") {
            let wall: f64 = fields[2].parse().unwrap();
            let speedup: f64 = fields[6].parse().unwrap();
            assert!(wall > 0.0 && speedup > 0.0, "{line}");
            assert_eq!(fields[5], "", "a kernel has no rows: {line}");
            machine.push((kernel.to_owned(), threads));
            continue;
        }
        let n: usize = query[1..].parse().unwrap();
        assert_eq!(fields[5].parse::<u64>().unwrap(), counts[n - 1], "{line}");
        let speedup: f64 = fields[6].parse().unwrap();
        assert!(speedup > 0.0, "{line}");
        if threads == 1 {
            assert_eq!(speedup, 1.0, "the baseline is 1 thread: {line}");
        }
        seen.push((query, threads));
    }
    let expected: Vec<(String, usize)> = ["q1", "q2", "q3", "q7"]
        .iter()
        .flat_map(|q| [(q.to_string(), 1), (q.to_string(), 2)])
        .collect();
    assert_eq!(seen, expected);
    let kernels: Vec<(String, usize)> = ["alu", "random reads", "fresh pages"]
        .iter()
        .flat_map(|k| [(k.to_string(), 1), (k.to_string(), 2)])
        .collect();
    assert_eq!(machine, kernels);
    assert!(stdout.contains("core(s) measured"), "{stdout}");
    assert_eq!(assert_valid_png(&std::fs::read(&png).unwrap()), (960, 600));
}

#[test]
fn bench_scale_runs_the_queries_of_a_directory() {
    let dir = temp_dir("scale-dir");
    std::fs::write(
        dir.join("only.rq"),
        "SELECT ?s WHERE { ?s a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#Department> }",
    )
    .unwrap();
    let csv = dir.join("out.csv");
    run_ok(
        quiver()
            .args([
                "bench",
                "scale",
                "--threads",
                "1",
                "--runs",
                "1",
                "--location",
            ])
            .arg(lubm1())
            .arg("--queries")
            .arg(&dir)
            .arg("--csv")
            .arg(&csv)
            .arg("--no-ceiling"),
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().skip(1).collect();
    // The query's row alone: `--no-ceiling` leaves the machine's kernels out.
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].starts_with("only,1,"), "{text}");
    assert_eq!(
        rows[0].split(',').nth(5),
        Some("15"),
        "15 departments: {text}"
    );
}

#[test]
fn bench_emulate_reports_throughput_and_percentiles() {
    let dir = temp_dir("emulate");
    let (json, png) = (dir.join("emu.json"), dir.join("cdf.png"));
    let output = run_ok(
        quiver()
            .args(["bench", "emulate", "--clients", "2", "--duration", "0.5"])
            .arg("--location")
            .arg(lubm1())
            .arg("--json")
            .arg(&json)
            .arg("--cdf")
            .arg(&png),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("throughput: "))
        .unwrap_or_else(|| panic!("no throughput line: {stdout}"));
    let figure = line
        .strip_prefix("throughput: ")
        .and_then(|l| l.strip_suffix(" queries/s"))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(figure.parse::<u64>().unwrap() > 0, "{line}");

    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["clients"], 2);
    let templates = report["templates"].as_array().unwrap();
    let names: Vec<&str> = templates
        .iter()
        .map(|t| t["template"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["t1", "t2", "t3", "t4", "t5", "t6"]);
    let total: f64 = templates.iter().map(|t| number(t, "queries")).sum();
    assert_eq!(total, number(&report, "queries"));
    assert_eq!(total, number(&report["overall"], "queries"));
    assert!(total > 100.0, "{report}");
    for summary in templates.iter().chain([&report["overall"]]) {
        if number(summary, "queries") == 0.0 {
            continue;
        }
        let ladder: Vec<f64> = ["p50_us", "p90_us", "p99_us", "p999_us", "max_us"]
            .iter()
            .map(|k| number(summary, k))
            .collect();
        assert!(
            ladder[0] > 0.0 && ladder.windows(2).all(|w| w[0] <= w[1]),
            "{summary}"
        );
    }
    assert_valid_png(&std::fs::read(&png).unwrap());
}

#[test]
fn bench_update_reports_every_figure_and_reopens_with_the_log_asked_for() {
    let dir = temp_dir("update");
    let json = dir.join("update.json");
    run_ok(
        quiver()
            .args(["bench", "update", "-u", "1", "--seconds", "0.05"])
            .args(["--log-mib", "3", "--cache"])
            .arg(&dir)
            .arg("--json")
            .arg(&json),
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let inserts = report["insert_data"].as_array().unwrap();
    assert_eq!(inserts.len(), 6, "{report}");
    for figure in inserts {
        assert!(number(figure, "triples_per_second") > 0.0, "{figure}");
        assert!(number(figure, "commits") >= 3.0, "{figure}");
    }
    assert!(number(&report["group_commit"], "commits_per_second") > 0.0);
    for phase in ["idle", "under_ingest"] {
        let queries = if phase == "idle" {
            &report[phase]
        } else {
            &report[phase]["queries"]
        };
        for heavy in ["q1", "q7"] {
            assert!(number(&queries[heavy], "runs") >= 10.0, "{report}");
            assert!(number(&queries[heavy], "median_us") > 0.0, "{report}");
        }
        for light in ["q4", "q5"] {
            let (p50, p99) = (
                number(&queries[light], "p50_us"),
                number(&queries[light], "p99_us"),
            );
            assert!(p50 > 0.0 && p50 <= p99, "{report}");
        }
    }
    assert_eq!(number(&report["checkpoint"], "log_bytes_after"), 32.0);
    // The log grows to the size asked for, past any automatic checkpoint.
    assert!(
        number(&report["reopen"], "log_bytes") >= (3 << 20) as f64,
        "{report}"
    );
    assert!(number(&report["reopen"], "triples") > 100_000.0, "{report}");
}

#[test]
fn bench_emulate_follows_a_mix_file() {
    let dir = temp_dir("mix");
    std::fs::create_dir_all(dir.join("t")).unwrap();
    let emulator = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../queries/lubm-emulator");
    for name in ["t1.rq", "t4.rq"] {
        std::fs::copy(emulator.join(name), dir.join("t").join(name)).unwrap();
    }
    std::fs::write(dir.join("t/mix.txt"), "# only t4\nt1.rq 0\nt4.rq 1\n").unwrap();
    let json = dir.join("emu.json");
    run_ok(
        quiver()
            .args(["bench", "emulate", "--duration", "0.3", "--location"])
            .arg(lubm1())
            .arg("--mix")
            .arg(dir.join("t/mix.txt"))
            .arg("--json")
            .arg(&json),
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let templates = report["templates"].as_array().unwrap();
    assert_eq!(templates[0]["template"], "t1");
    assert_eq!(templates[0]["queries"], 0);
    assert!(number(&templates[1], "queries") > 0.0);

    // A broken mix is a runtime error naming the line.
    std::fs::write(dir.join("t/bad.txt"), "t4.rq 1\nt1.rq many\n").unwrap();
    let output = quiver()
        .args(["bench", "emulate", "--duration", "0.1", "--location"])
        .arg(lubm1())
        .arg("--mix")
        .arg(dir.join("t/bad.txt"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("bad.txt:2"), "{}", stderr(&output));
}

/// `bench lubm --processes 2` runs every query on a cluster of two processes beside the
/// whole store, with the published rows, and reports what moved between the workers;
/// `bench emulate --processes 2` sends its clients' queries to such a cluster.
#[test]
fn the_benchmarks_run_on_a_cluster_and_report_the_exchange() {
    let dir = temp_dir("cluster");
    let json = dir.join("lubm1.json");
    run_ok(
        quiver()
            .args([
                "bench",
                "lubm",
                "-u",
                "1",
                "--runs",
                "1",
                "--processes",
                "2",
            ])
            .arg("--cache")
            .arg(dir.join("cache"))
            .arg("--json")
            .arg(&json),
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let cluster = &report["cluster"];
    assert_eq!(cluster["processes"], 2, "{report}");
    let on_cluster = cluster["queries"]
        .as_array()
        .expect("the cluster's queries");
    let whole = report["queries"].as_array().unwrap();
    assert_eq!(on_cluster.len(), whole.len());
    for (c, w) in on_cluster.iter().zip(whole) {
        assert_eq!(c["query"], w["query"]);
        assert_eq!(c["rows"], w["rows"]);
        assert!(number(c, "median_us") > 0.0, "{c}");
    }
    let q2 = on_cluster.iter().find(|q| q["query"] == "q2").unwrap();
    // A query whose rows stay on process 0 runs there, in place; q2 starts on every
    // partition: the start and the rows sent back at least.
    assert!(number(q2, "messages_per_run") >= 2.0, "{q2}");
    // q2 starts on every partition and returns the other partition's share of its rows.
    assert!(number(q2, "rows_exchanged_per_run") > 100.0, "{q2}");
    assert!(
        number(q2, "bytes_exchanged_per_run") > 4.0 * number(q2, "rows_exchanged_per_run"),
        "{q2}"
    );

    let json = dir.join("emulate.json");
    run_ok(
        quiver()
            .args(["bench", "emulate", "--location"])
            .arg(lubm1())
            .args([
                "--clients",
                "2",
                "--duration",
                "1",
                "--processes",
                "2",
                "--json",
            ])
            .arg(&json),
    );
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(number(&report, "queries") > 0.0, "{report}");
    // Queries that leave process 0 exchange messages (those that stay run in place).
    assert!(
        number(&report["cluster"], "messages_per_query") > 0.0,
        "{report}"
    );
}

#[test]
fn bench_log_reports_statuses_errors_and_oxigraph_side_by_side() {
    require_pyoxigraph();
    let dir = temp_dir("log");
    let data = dir.join("data.nt");
    let mut nt = String::new();
    for i in 0..200 {
        nt += &format!("<http://ex/s{i}> <http://ex/p> <http://ex/o{}> .\n", i % 7);
        nt += &format!("<http://ex/s{i}> <http://ex/name> \"name {i}\" .\n");
    }
    std::fs::write(&data, nt).unwrap();
    let log = dir.join("log.json");
    let queries = [
        "SELECT * WHERE { ?s <http://ex/p> ?o }",
        "SELECT * WHERE { ?s <http://ex/p> ?o . ?t <http://ex/p> ?o . VALUES ?s { <http://ex/s3> } }",
        "SELECT * WHERE { { ?a <http://ex/p> ?b } { ?c <http://ex/name> ?d } } LIMIT 7",
        "SELECT * WHERE { ?s <http://ex/p> ?o } ORDR BY ?s",
        "ASK { ?s <http://ex/name> \"name 5\" }",
    ];
    std::fs::write(&log, serde_json::to_string(&queries).unwrap()).unwrap();
    let json = dir.join("log-report.json");
    let csv = dir.join("log.csv");
    let output = run_ok(
        quiver()
            .args(["bench", "log"])
            .arg(&log)
            .arg("--data")
            .arg(&data)
            .args(["--compare-oxigraph", "--runs", "2", "--timeout", "5s"])
            .arg("--json")
            .arg(&json)
            .arg("--csv")
            .arg(&csv),
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("Quiver: 4 ok, 1 syntax"), "{text}");
    assert!(text.contains("Oxigraph: 4 ok, 1 syntax"), "{text}");
    assert!(text.contains("did you mean ORDER?"), "{text}");
    assert!(text.contains("row counts that differ: 0"), "{text}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let entries = report["queries"].as_array().unwrap();
    assert_eq!(entries.len(), queries.len());
    // Each engine's rows, computed independently, agree; the LIMIT's count is exact.
    let rows: Vec<u64> = entries
        .iter()
        .map(|q| q["quiver"]["rows"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, [200, 29, 7, 0, 1], "{report}");
    for q in entries {
        assert_eq!(q["quiver"]["rows"], q["oxigraph"]["rows"], "{q}");
        assert_eq!(q["quiver"]["status"], q["oxigraph"]["status"], "{q}");
    }
    assert!(number(&report["quiver"], "median_us") > 0.0, "{report}");
    let lines = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(lines.lines().count(), queries.len() + 1, "{lines}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_log_sends_a_log_to_an_endpoint() {
    let dir = temp_dir("log-endpoint");
    let data = dir.join("data.nt");
    let mut nt = String::new();
    for i in 0..50 {
        nt += &format!("<http://ex/s{i}> <http://ex/p> <http://ex/o{}> .\n", i % 5);
    }
    std::fs::write(&data, nt).unwrap();
    let store = dir.join("store");
    run_ok(
        quiver()
            .arg("load")
            .arg(&data)
            .arg("--location")
            .arg(&store),
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = quiver()
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--location",
        ])
        .arg(&store)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed().as_secs() < 30, "the server did not start");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let log = dir.join("log.txt");
    std::fs::write(
        &log,
        "SELECT * WHERE { ?s <http://ex/p> <http://ex/o1> }\n\
         ASK { ?s <http://ex/p> ?o }\n\
         SELECT * WHERE { ?s ?p ?o } ORDR BY ?s\n",
    )
    .unwrap();
    let json = dir.join("report.json");
    let output = quiver()
        .args(["bench", "log"])
        .arg(&log)
        .args(["--endpoint", &format!("http://127.0.0.1:{port}/query")])
        .args(["--runs", "2", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("Quiver: 2 ok, 1 syntax"), "{text}");
    let report: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let rows: Vec<u64> = report["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["quiver"]["rows"].as_u64().unwrap())
        .collect();
    assert_eq!(rows, [10, 1, 0], "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}
