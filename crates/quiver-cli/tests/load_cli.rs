//! `quiver load` and `quiver info` as a user runs them: what ends up in the store, exit
//! codes, error messages, and what is left on disk when something goes wrong.

use crate::temp_dir;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use temp_dir::TempDir;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `quiver load --location <store> <flags...> <paths...>`.
fn load(store: &Path, flags: &[&str], paths: &[&Path]) -> Output {
    quiver()
        .arg("load")
        .arg("--location")
        .arg(store)
        .args(flags)
        .args(paths)
        .output()
        .expect("quiver runs")
}

/// Like [`load`], and the load must succeed.
fn load_ok(store: &Path, flags: &[&str], paths: &[&Path]) -> Output {
    let output = load(store, flags, paths);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    output
}

/// `quiver info --location <store>`, with `--json` if `json`.
fn run_info(store: &Path, json: bool) -> Output {
    let mut command = quiver();
    command.arg("info").arg("--location").arg(store);
    if json {
        command.arg("--json");
    }
    command.output().expect("quiver runs")
}

/// `quiver info --location <store> --json`, which must succeed, parsed.
fn info(store: &Path) -> Value {
    let output = run_info(store, true);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    serde_json::from_slice(&output.stdout).expect("info --json prints JSON")
}

/// `quiver info --location <store>`, which must fail.
fn info_err(store: &Path) -> Output {
    let output = run_info(store, false);
    assert!(output.stdout.is_empty(), "stdout of a failed info");
    output
}

fn number(info: &Value, key: &str) -> u64 {
    info[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no number {key:?} in {info:#}"))
}

/// The counts a store reports: triples, terms, predicates, classes, named graphs.
#[derive(Debug, PartialEq, Eq)]
struct Counts {
    triples: u64,
    terms: u64,
    predicates: u64,
    classes: u64,
    named_graphs: u64,
}

fn counts(info: &Value) -> Counts {
    Counts {
        triples: number(info, "triples"),
        terms: number(info, "terms"),
        predicates: number(info, "predicates"),
        classes: number(info, "classes"),
        named_graphs: number(info, "named_graphs"),
    }
}

/// Checks the reported sizes: on disk, exactly the files of the store directory; in
/// memory, at least the dictionary and the default graph's index.
fn assert_sizes(store: &Path, info: &Value) {
    assert_eq!(
        number(info, "bytes_on_disk"),
        directory_bytes(store),
        "{info:#}"
    );
    let in_memory = number(info, "bytes_in_memory");
    let parts = number(info, "dictionary_bytes") + number(info, "index_bytes");
    assert!(parts > 0 && in_memory > parts, "{info:#}");
}

/// A runtime error: exit code 1, one line on stderr starting with `error:` that contains
/// `needle`, no panic, nothing on stdout.
fn assert_clean_error(output: &Output, needle: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {message}");
    assert!(message.starts_with("error:"), "stderr: {message}");
    assert!(message.contains(needle), "{needle:?} not in: {message}");
    assert!(!message.contains("panicked"), "stderr: {message}");
    assert_eq!(message.lines().count(), 1, "stderr: {message}");
    assert!(output.stdout.is_empty(), "stdout of a failed run");
}

/// Checks a one-line `error: <path>:<line>:<column>: <message>` and returns the column.
fn assert_syntax_error(output: &Output, path: &Path, line: u64) -> u64 {
    let prefix = format!("error: {}:{line}:", path.display());
    assert_clean_error(output, &prefix);
    let message = stderr(output);
    let rest = message
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{prefix:?} does not start: {message}"));
    let (column, text) = rest
        .split_once(": ")
        .unwrap_or_else(|| panic!("no column in: {message}"));
    let column: u64 = column
        .parse()
        .unwrap_or_else(|_| panic!("no column in: {message}"));
    assert!(column >= 1, "{message}");
    assert!(!text.trim().is_empty(), "no message in: {message}");
    column
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// Names of the entries of `dir`, sorted.
fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for name in file_names(from) {
        std::fs::copy(from.join(&name), to.join(&name)).unwrap();
    }
}

// ---------------------------------------------------------------------------------------
// Inputs whose content is known exactly
// ---------------------------------------------------------------------------------------

/// 5 statements, 4 distinct triples (one repeated), 7 terms, 3 predicates, 1 class.
const PEOPLE_NT: &str = "\
<http://ex.org/alice> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Person> .
<http://ex.org/bob> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Person> .
<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .
<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .
<http://ex.org/alice> <http://ex.org/name> \"Alice\" .
";

fn people_counts() -> Counts {
    Counts {
        triples: 4,
        terms: 7,
        predicates: 3,
        classes: 1,
        named_graphs: 0,
    }
}

/// Two named graphs and the default graph: 6 statements, 5 distinct quads (the same
/// triple in the default graph and in g1 counts twice; the repeat in g1 once), 10 terms
/// (a b c d, p, rdf:type, Person, Place, g1, g2), 2 predicates. Classes are the objects
/// of `rdf:type` in the default graph: Person only (Place is typed in g2).
const GRAPHS_NQ: &str = "\
<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> .
<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Person> .
<http://ex.org/a> <http://ex.org/p> <http://ex.org/b> <http://ex.org/g1> .
<http://ex.org/a> <http://ex.org/p> <http://ex.org/c> <http://ex.org/g1> .
<http://ex.org/a> <http://ex.org/p> <http://ex.org/c> <http://ex.org/g1> .
<http://ex.org/d> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/Place> <http://ex.org/g2> .
";

/// The same dataset as [`GRAPHS_NQ`], in TriG.
const GRAPHS_TRIG: &str = "\
@prefix ex: <http://ex.org/> .
ex:a ex:p ex:b ; a ex:Person .
ex:g1 { ex:a ex:p ex:b , ex:c . ex:a ex:p ex:c . }
GRAPH ex:g2 { ex:d a ex:Place }
";

fn graphs_counts() -> Counts {
    Counts {
        triples: 5,
        terms: 10,
        predicates: 2,
        classes: 1,
        named_graphs: 2,
    }
}

/// A 5-line N-Triples file whose line 3 holds an IRI with a space.
const BROKEN_LINE_3_NT: &str = "\
<http://ex.org/s> <http://ex.org/p> <http://ex.org/o1> .
<http://ex.org/s> <http://ex.org/p> <http://ex.org/o2> .
<http://ex.org/s> <http://ex.org/p> <http://ex .org/o3> .
<http://ex.org/s> <http://ex.org/p> <http://ex.org/o4> .
<http://ex.org/s> <http://ex.org/p> <http://ex.org/o5> .
";

const BROKEN_STATEMENT: &str = "<http://ex.org/s> <http://ex .org/p> <http://ex.org/o> .\n";

// ---------------------------------------------------------------------------------------
// Happy paths
// ---------------------------------------------------------------------------------------

#[test]
fn loads_ntriples_counting_duplicates_once() {
    let dir = TempDir::new("nt");
    let input = dir.file("people.nt", PEOPLE_NT);
    let store = dir.join("store");
    let output = load_ok(&store, &[], &[&input]);
    let summary = stderr(&output);
    assert!(
        summary.contains("loaded 5 statements") && summary.contains("store: 4 triples, 7 terms"),
        "{summary}"
    );
    // Then where the time went, the save last (phases this short are left out).
    let phases = summary
        .lines()
        .find_map(|l| l.strip_prefix("where the time went: "))
        .unwrap_or_else(|| panic!("no phases line: {summary}"));
    assert!(phases.contains("save "), "{phases}");
    let info = info(&store);
    assert_eq!(counts(&info), people_counts());
    assert_sizes(&store, &info);
    assert_eq!(info["load"]["statements"], 5);
    assert_eq!(info["load"]["skipped"], 0);
    assert_eq!(
        info["class_statistics"][0]["class"],
        "<http://ex.org/Person>"
    );
    assert_eq!(info["class_statistics"][0]["instances"], 2);

    // The text form reports the same numbers.
    let text = run_info(&store, false);
    assert_eq!(text.status.code(), Some(0), "stderr: {}", stderr(&text));
    let text = String::from_utf8(text.stdout).unwrap();
    for line in ["triples      4", "terms        7", "predicates   3"] {
        assert!(text.lines().any(|l| l == line), "{line:?} not in:\n{text}");
    }
}

#[test]
fn loads_turtle_with_prefixes() {
    let dir = TempDir::new("ttl");
    let input = dir.file(
        "people.ttl",
        "@prefix ex: <http://ex.org/> .\n\
         PREFIX foaf: <http://xmlns.com/foaf/0.1/>\n\
         # alice, with a repeated triple\n\
         ex:alice a foaf:Person ;\n\
         \x20   foaf:name \"Alice\"@en ;\n\
         \x20   foaf:knows ex:bob , ex:carol .\n\
         ex:bob a foaf:Person ; foaf:age 42 .\n\
         ex:alice foaf:knows ex:bob .\n",
    );
    let store = dir.join("store");
    load_ok(&store, &[], &[&input]);
    let info = info(&store);
    // alice, bob, carol, Person, "Alice"@en, 42, rdf:type, name, knows, age.
    let expected = Counts {
        triples: 6,
        terms: 10,
        predicates: 4,
        classes: 1,
        named_graphs: 0,
    };
    assert_eq!(counts(&info), expected);
    assert_eq!(info["load"]["statements"], 7);
    assert_eq!(
        info["class_statistics"][0]["class"],
        "<http://xmlns.com/foaf/0.1/Person>"
    );
    assert_sizes(&store, &info);
}

#[test]
fn loads_gzip_ntriples() {
    let dir = TempDir::new("gz");
    let input = dir.join("people.nt.gz");
    std::fs::write(&input, gzip(PEOPLE_NT.as_bytes())).unwrap();
    let store = dir.join("store");
    load_ok(&store, &[], &[&input]);
    let info = info(&store);
    assert_eq!(counts(&info), people_counts());
    assert_eq!(info["load"]["statements"], 5);
}

#[test]
fn loads_every_rdf_file_of_a_directory() {
    let dir = TempDir::new("directory");
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    // N-Triples, Turtle and gzip'd N-Triples; alice knows bob is in all three.
    std::fs::write(data.join("1.nt"), PEOPLE_NT).unwrap();
    std::fs::write(
        data.join("2.ttl"),
        "@prefix ex: <http://ex.org/> .\nex:alice ex:knows ex:bob , ex:carol .\n",
    )
    .unwrap();
    let third = "<http://ex.org/alice> <http://ex.org/knows> <http://ex.org/bob> .\n\
                 <http://ex.org/carol> <http://ex.org/knows> <http://ex.org/dave> .\n";
    std::fs::write(data.join("3.nt.gz"), gzip(third.as_bytes())).unwrap();
    // Neither hidden files nor files of other extensions are read (both would fail).
    std::fs::write(data.join(".hidden.nt"), BROKEN_STATEMENT).unwrap();
    std::fs::write(data.join("README.txt"), "not RDF").unwrap();
    let store = dir.join("store");
    load_ok(&store, &[], &[&data]);
    let info = info(&store);
    // PEOPLE_NT plus alice knows carol and carol knows dave: 2 more triples, 2 more terms.
    let expected = Counts {
        triples: 6,
        terms: 9,
        ..people_counts()
    };
    assert_eq!(counts(&info), expected);
    assert_eq!(info["load"]["statements"], 5 + 2 + 2);
    let sources: Vec<&str> = info["load"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(sources.len(), 3, "{sources:?}");
    for (source, name) in sources.iter().zip(["1.nt", "2.ttl", "3.nt.gz"]) {
        assert!(source.ends_with(name), "{sources:?}");
    }
}

#[test]
fn format_flag_reads_a_file_of_any_extension() {
    let dir = TempDir::new("format");
    let input = dir.file("people.data", PEOPLE_NT);
    let store = dir.join("store");
    // Without --format the extension says nothing.
    assert_clean_error(&load(&store, &[], &[&input]), "people.data");
    load_ok(&store, &["--format", "nt"], &[&input]);
    assert_eq!(counts(&info(&store)), people_counts());
    // An unknown format name is a usage error.
    let output = load(&store, &["--format", "csv"], &[Path::new("x")]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("unknown format 'csv'"));
}

#[test]
fn loads_named_graphs_from_nquads() {
    let dir = TempDir::new("nq");
    let input = dir.file("graphs.nq", GRAPHS_NQ);
    let store = dir.join("store");
    load_ok(&store, &[], &[&input]);
    let info = info(&store);
    assert_eq!(counts(&info), graphs_counts());
    assert_eq!(info["load"]["statements"], 6);
    assert_sizes(&store, &info);
}

#[test]
fn loads_named_graphs_from_trig() {
    let dir = TempDir::new("trig");
    let input = dir.file("graphs.trig", GRAPHS_TRIG);
    let store = dir.join("store");
    load_ok(&store, &[], &[&input]);
    let info = info(&store);
    assert_eq!(counts(&info), graphs_counts());
    assert_sizes(&store, &info);
}

#[test]
fn loading_into_an_existing_store_adds_to_it() {
    let dir = TempDir::new("add");
    let store = dir.join("store");
    load_ok(&store, &[], &[&dir.file("people.nt", PEOPLE_NT)]);
    // One triple already in the store, two new ones, one new term (carol).
    let more = dir.file(
        "more.ttl",
        "@prefix ex: <http://ex.org/> .\n\
         ex:alice ex:knows ex:bob .\n\
         ex:carol a ex:Person ; ex:knows ex:alice .\n",
    );
    load_ok(&store, &[], &[&more]);
    let info = info(&store);
    let expected = Counts {
        triples: 6,
        terms: 8,
        ..people_counts()
    };
    assert_eq!(counts(&info), expected);
    assert_eq!(info["class_statistics"][0]["instances"], 3);
    assert_eq!(info["load"]["statements"], 5 + 3);
    assert_eq!(info["load"]["sources"].as_array().unwrap().len(), 2);
    // The old generation's files are gone: the directory holds exactly one generation.
    assert_sizes(&store, &info);

    // Named graphs join too.
    load_ok(&store, &[], &[&dir.file("graphs.nq", GRAPHS_NQ)]);
    let info = self::info(&store);
    assert_eq!(number(&info, "triples"), 6 + 5);
    assert_eq!(number(&info, "named_graphs"), 2);
}

#[test]
fn lubm_1_loads_from_the_generator() {
    let dir = TempDir::new("lubm");
    let store = dir.join("store");
    load_ok(&store, &["--lubm", "1"], &[]);
    let info = info(&store);
    assert_eq!(number(&info, "triples"), 100_543);
    assert_eq!(number(&info, "classes"), 14);
    assert_eq!(number(&info, "named_graphs"), 0);
    assert_sizes(&store, &info);
    // --lubm excludes files.
    let output = load(
        &store,
        &["--lubm", "1"],
        &[&dir.file("people.nt", PEOPLE_NT)],
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}

/// A figure in MiB of the load's summary line (`…; store: …, 134.5 MiB on disk; peak memory
/// 166.7 MiB`): the number just before ` MiB{after}`.
fn summary_mib(summary: &str, after: &str) -> f64 {
    let end = summary
        .find(&format!(" MiB{after}"))
        .unwrap_or_else(|| panic!("no ` MiB{after}` in {summary}"));
    let start = summary[..end].rfind(' ').map_or(0, |i| i + 1);
    summary[start..end]
        .parse()
        .unwrap_or_else(|_| panic!("no figure before ` MiB{after}` in {summary}"))
}

/// The loader's peak stays within 1.5× the store it builds plus a fixed 24 MiB (the
/// process, its threads and their blocks): LUBM-40 loads at ~1.24× (167 MiB for a 134.5 MiB
/// store) on two threads. Before the phases gave their memory back it peaked at 1.9–2.0×
/// (250–270 MiB), which this bound refuses.
#[test]
fn the_loaders_peak_stays_within_one_and_a_half_times_the_store() {
    let dir = TempDir::new("peak");
    let store = dir.join("store");
    let output = load_ok(&store, &["--lubm", "40", "--threads", "2"], &[]);
    let text = stderr(&output);
    let summary = text
        .lines()
        .find(|line| line.starts_with("loaded "))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let stored = summary_mib(summary, " on disk");
    let peak = summary_mib(&format!("{summary}\n"), "\n");
    assert!(stored > 100.0, "{summary}");
    assert!(
        peak <= 1.5 * stored + 24.0,
        "the load peaked at {peak} MiB for a {stored} MiB store: {summary}"
    );
}

// ---------------------------------------------------------------------------------------
// Bad input
// ---------------------------------------------------------------------------------------

#[test]
fn a_malformed_line_is_an_error_at_its_line_and_column() {
    let dir = TempDir::new("malformed");
    let input = dir.file("broken.nt", BROKEN_LINE_3_NT);
    let store = dir.join("store");
    let column = assert_syntax_error(&load(&store, &[], &[&input]), &input, 3);
    // The broken IRI is the object; its column is past subject and predicate.
    assert!(column > 36 && column <= 57, "column {column}");
    assert!(!store.exists(), "a failed load created the store");
    // The same for the N-Quads and Turtle parsers.
    let input = dir.file("broken.nq", BROKEN_LINE_3_NT);
    assert_syntax_error(&load(&store, &[], &[&input]), &input, 3);
    let input = dir.file("broken.ttl", BROKEN_LINE_3_NT);
    assert_syntax_error(&load(&store, &[], &[&input]), &input, 3);
}

#[test]
fn a_failed_load_leaves_the_existing_store_intact() {
    let dir = TempDir::new("intact");
    let store = dir.join("store");
    load_ok(&store, &[], &[&dir.file("people.nt", PEOPLE_NT)]);
    let files = file_names(&store);
    let manifest = std::fs::read(store.join("manifest.json")).unwrap();

    let input = dir.file("broken.nt", BROKEN_LINE_3_NT);
    assert_syntax_error(&load(&store, &[], &[&input]), &input, 3);
    assert_eq!(file_names(&store), files);
    assert_eq!(
        std::fs::read(store.join("manifest.json")).unwrap(),
        manifest
    );
    assert_eq!(counts(&info(&store)), people_counts());
}

/// LUBM-1 as N-Triples (17 MB), from `quiver gen lubm`.
fn lubm_1_text(dir: &TempDir) -> String {
    let path = dir.join("lubm1.nt");
    let output = quiver()
        .args(["gen", "lubm", "-u", "1", "--output"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    text
}

/// Two copies of LUBM-1 (34 MB, several 8 MiB parsing blocks) with a broken statement
/// inserted as line `bad_line` (1-based); returns the text.
fn large_file_with_error(lubm: &str, bad_line: usize) -> String {
    let mut text = String::with_capacity(2 * lubm.len() + BROKEN_STATEMENT.len());
    let lines = lubm.lines().chain(lubm.lines());
    for (index, line) in lines.enumerate() {
        if index + 1 == bad_line {
            text.push_str(BROKEN_STATEMENT);
        }
        text.push_str(line);
        text.push('\n');
    }
    assert!(text.len() > 4 * BLOCK);
    text
}

/// The loader's parallel parsing unit of line-based files.
const BLOCK: usize = 8 << 20;

/// The number (1-based) of the first line of `lubm` twice that starts at `offset` or later.
fn line_at_offset(lubm: &str, offset: usize) -> usize {
    let mut start = 0;
    for (index, line) in lubm.lines().chain(lubm.lines()).enumerate() {
        if start >= offset {
            return index + 1;
        }
        start += line.len() + 1;
    }
    panic!("offset {offset} is past the end");
}

#[test]
fn a_malformed_line_deep_in_a_large_file_is_reported_at_its_true_line() {
    let dir = TempDir::new("deep");
    let lubm = lubm_1_text(&dir);
    assert_eq!(lubm.lines().count(), 100_543);
    let store = dir.join("store");
    load_ok(&store, &["--lubm", "1"], &[]);
    let manifest = std::fs::read(store.join("manifest.json")).unwrap();

    // In the middle of the fourth block, and in the first block.
    let deep_line = line_at_offset(&lubm, 3 * BLOCK + BLOCK / 2);
    assert!(deep_line > 150_000, "{deep_line}");
    for bad_line in [deep_line, 7] {
        let text = large_file_with_error(&lubm, bad_line);
        let plain = dir.join("large.nt");
        std::fs::write(&plain, &text).unwrap();
        let gzipped = dir.join("large.nt.gz");
        std::fs::write(&gzipped, gzip(text.as_bytes())).unwrap();
        for (input, threads) in [(&plain, "1"), (&plain, "4"), (&gzipped, "2")] {
            let output = load(&store, &["--threads", threads], &[input]);
            assert_syntax_error(&output, input, bad_line as u64);
        }
    }
    assert_eq!(
        std::fs::read(store.join("manifest.json")).unwrap(),
        manifest
    );
    assert_eq!(number(&info(&store), "triples"), 100_543);

    // Lenient: the one bad statement is skipped, everything else is loaded.
    let text = large_file_with_error(&lubm, deep_line);
    let input = dir.join("large.nt");
    std::fs::write(&input, &text).unwrap();
    let fresh = dir.join("fresh");
    let output = load_ok(&fresh, &["--lenient"], &[&input]);
    let message = stderr(&output);
    assert!(
        message.contains("skipped 1 malformed statements"),
        "{message}"
    );
    let location = format!("  {}:{deep_line}:", input.display());
    assert!(
        message.lines().any(|l| l.starts_with(&location)),
        "{message}"
    );
    let info = info(&fresh);
    assert_eq!(number(&info, "triples"), 100_543);
    assert_eq!(info["load"]["statements"], 2 * 100_543);
    assert_eq!(info["load"]["skipped"], 1);
}

#[test]
fn lenient_skips_malformed_statements_and_loads_the_rest() {
    let dir = TempDir::new("lenient");
    // Line 2: an IRI with a space; line 4: a literal that is never closed.
    let input = dir.file(
        "mixed.nt",
        "<http://ex.org/s> <http://ex.org/p> <http://ex.org/o1> .\n\
         <http://ex.org/s> <http://ex .org/p> <http://ex.org/o2> .\n\
         <http://ex.org/s> <http://ex.org/p> <http://ex.org/o3> .\n\
         <http://ex.org/s> <http://ex.org/p> \"open .\n\
         <http://ex.org/s> <http://ex.org/p> <http://ex.org/o5> .\n\
         <http://ex.org/s> <http://ex.org/p> \"closed\" .\n",
    );
    let store = dir.join("store");
    let output = load_ok(&store, &["--lenient"], &[&input]);
    let message = stderr(&output);
    assert!(message.contains("loaded 4 statements"), "{message}");
    assert!(
        message.contains("skipped 2 malformed statements"),
        "{message}"
    );
    for line in [2, 4] {
        let location = format!("  {}:{line}:", input.display());
        assert!(
            message.lines().any(|l| l.starts_with(&location)),
            "{message}"
        );
    }
    let info = info(&store);
    // s, p, o1, o3, o5, "closed".
    assert_eq!(number(&info, "triples"), 4);
    assert_eq!(number(&info, "terms"), 6);
    assert_eq!(info["load"]["skipped"], 2);

    // The same file without --lenient stops at the first error.
    assert_syntax_error(&load(&dir.join("strict"), &[], &[&input]), &input, 2);
}

#[test]
fn an_empty_file_is_an_error_naming_it() {
    let dir = TempDir::new("empty");
    let input = dir.file("empty.nt", "");
    let store = dir.join("store");
    let output = load(&store, &[], &[&input]);
    assert_clean_error(&output, &format!("{}: empty file", input.display()));
    // A file of comments only holds no triples either.
    let input = dir.file("comments.nt", "# nothing here\n\n");
    let output = load(&store, &[], &[&input]);
    assert_clean_error(&output, &format!("{}: no triples", input.display()));
    assert!(!store.exists());
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let dir = TempDir::new("missing");
    let input = dir.join("absent.nt");
    let output = load(&dir.join("store"), &[], &[&input]);
    assert_clean_error(&output, &format!("{}: No such file", input.display()));
    // The operating system's reason is given once.
    assert_eq!(stderr(&output).matches("No such file").count(), 1);
}

#[test]
fn an_unsupported_extension_is_an_error() {
    let dir = TempDir::new("extension");
    let input = dir.file("table.csv", "a,b\n");
    let output = load(&dir.join("store"), &[], &[&input]);
    assert_clean_error(
        &output,
        &format!("{}: unsupported file extension", input.display()),
    );
}

#[test]
fn nothing_to_load_is_an_error() {
    let dir = TempDir::new("nothing");
    let store = dir.join("store");
    assert_clean_error(&load(&store, &[], &[]), "nothing to load");
    let empty = dir.join("empty-dir");
    std::fs::create_dir(&empty).unwrap();
    assert_clean_error(
        &load(&store, &[], &[&empty]),
        &format!("{}: directory holds no RDF file", empty.display()),
    );
    assert!(!store.exists());
}

// ---------------------------------------------------------------------------------------
// A full disk
// ---------------------------------------------------------------------------------------

/// The snapshot writer's test hook: writes beyond this many bytes fail as on a full disk.
const FAULT_WRITE_LIMIT: &str = "QUIVER_FAULT_WRITE_LIMIT";

/// `quiver load` whose store writes may use only `limit` bytes.
fn load_with_write_limit(store: &Path, limit: u64, flags: &[&str], paths: &[&Path]) -> Output {
    quiver()
        .env(FAULT_WRITE_LIMIT, limit.to_string())
        .arg("load")
        .arg("--location")
        .arg(store)
        .args(flags)
        .args(paths)
        .output()
        .expect("quiver runs")
}

/// One clean `error:` line naming the store and the full disk, once.
fn assert_disk_full_error(output: &Output, store: &Path) {
    assert_clean_error(output, "No space left on device");
    let message = stderr(output);
    assert_eq!(message.matches("No space left").count(), 1, "{message}");
    assert!(message.contains(&store.display().to_string()), "{message}");
}

/// The names of `rdf:type` subjects in the store, through `quiver query`, sorted.
fn typed_subjects(store: &Path) -> Vec<String> {
    let output = quiver()
        .args(["query", "--results-format", "tsv", "--location"])
        .arg(store)
        .args(["--query", "SELECT ?s WHERE { ?s a ?c }"])
        .output()
        .expect("quiver runs");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    let text = String::from_utf8(output.stdout).unwrap();
    let mut rows: Vec<String> = text.lines().skip(1).map(str::to_owned).collect();
    rows.sort();
    rows
}

#[test]
fn a_full_disk_at_any_point_of_a_save_leaves_the_previous_store_intact() {
    let dir = TempDir::new("full-any-point");
    let people = dir.file("people.nt", PEOPLE_NT);
    let graphs = dir.file("graphs.nq", GRAPHS_NQ);
    // The size of the generation the failing loads try to write: everything they write
    // is at least this many bytes, so any smaller budget runs out before the commit.
    let reference = dir.join("reference");
    load_ok(&reference, &[], &[&people, &graphs]);
    let size = directory_bytes(&reference);
    let both = counts(&info(&reference));
    assert!(size > 1000, "{size} bytes");

    let store = dir.join("store");
    load_ok(&store, &[], &[&people]);
    let files = file_names(&store);
    let manifest = std::fs::read(store.join("manifest.json")).unwrap();
    let subjects = typed_subjects(&store);
    assert_eq!(subjects, ["<http://ex.org/alice>", "<http://ex.org/bob>"]);

    let mut limits: Vec<u64> = (0..16).map(|i| size * i / 16).collect();
    limits.extend([1, 63, 64, 65, size - 64, size - 1]);
    for limit in limits {
        let output = load_with_write_limit(&store, limit, &[], &[&graphs]);
        assert_disk_full_error(&output, &store);
        assert_eq!(file_names(&store), files, "write limit {limit}");
        let now = std::fs::read(store.join("manifest.json")).unwrap();
        assert_eq!(now, manifest, "write limit {limit}");
        assert_eq!(
            counts(&info(&store)),
            people_counts(),
            "write limit {limit}"
        );
        assert_eq!(typed_subjects(&store), subjects, "write limit {limit}");
    }

    // With room enough, the same load through the hook succeeds.
    let output = load_with_write_limit(&store, 4 * size, &[], &[&graphs]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    assert_eq!(counts(&info(&store)), both);
}

#[test]
fn a_full_disk_fails_cleanly_and_leaves_no_store() {
    let dir = TempDir::new("full");
    let store = dir.join("store");
    let output = load_with_write_limit(&store, 64 * 1024, &["--lubm", "1"], &[]);
    assert_disk_full_error(&output, &store);
    assert!(!store.join("manifest.json").exists());
    if store.exists() {
        assert_eq!(file_names(&store), Vec::<String>::new());
    }
}

#[test]
fn a_bad_write_limit_is_an_error_not_a_panic() {
    let dir = TempDir::new("bad-limit");
    let store = dir.join("store");
    let output = quiver()
        .env(FAULT_WRITE_LIMIT, "lots")
        .arg("load")
        .arg("--location")
        .arg(&store)
        .arg(dir.file("people.nt", PEOPLE_NT))
        .output()
        .expect("quiver runs");
    assert_clean_error(&output, "QUIVER_FAULT_WRITE_LIMIT=\"lots\" is not a number");
    assert!(!store.join("manifest.json").exists());
}

/// A tiny tmpfs mounted at a directory, unmounted when dropped.
struct TinyFs(PathBuf);

impl TinyFs {
    /// Mounts a 64 KiB tmpfs at `dir`; panics, saying what it needs, when it cannot.
    fn mount(dir: PathBuf) -> Self {
        std::fs::create_dir_all(&dir).unwrap();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&dir)
            .output();
        match output {
            Ok(output) if output.status.success() => TinyFs(dir),
            Ok(output) => panic!(
                "this test mounts a 64 KiB tmpfs and needs root (or CAP_SYS_ADMIN): \
                 `mount -t tmpfs` failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
            Err(error) => panic!(
                "this test mounts a 64 KiB tmpfs and needs the `mount` command \
                 (util-linux) and root: {error}"
            ),
        }
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_real_full_disk_fails_cleanly_and_leaves_no_store() {
    let dir = TempDir::new("full-tmpfs");
    let tiny = TinyFs::mount(dir.join("tiny"));
    let store = tiny.0.join("store");
    let output = load(&store, &["--lubm", "1"], &[]);
    assert_disk_full_error(&output, &store);
    assert!(!store.join("manifest.json").exists());
    if store.exists() {
        assert_eq!(file_names(&store), Vec::<String>::new());
    }
}

// ---------------------------------------------------------------------------------------
// Damaged stores
// ---------------------------------------------------------------------------------------

/// Makes a small store, then for each of its files damages a copy of the store with
/// `damage` and checks that `info` refuses it, naming the file.
fn each_damaged_file_is_refused(name: &str, damage: impl Fn(&mut Vec<u8>)) {
    let dir = TempDir::new(name);
    let store = dir.join("store");
    load_ok(&store, &[], &[&dir.file("graphs.nq", GRAPHS_NQ)]);
    let files = file_names(&store);
    assert!(files.contains(&"manifest.json".to_owned()), "{files:?}");
    assert!(files.iter().filter(|f| f.ends_with(".qvs")).count() >= 3);
    for file in &files {
        let copy = dir.join(&format!("copy-{file}"));
        copy_dir(&store, &copy);
        let mut bytes = std::fs::read(copy.join(file)).unwrap();
        damage(&mut bytes);
        std::fs::write(copy.join(file), bytes).unwrap();
        let output = info_err(&copy);
        assert_clean_error(&output, &copy.join(file).display().to_string());
        std::fs::remove_dir_all(&copy).unwrap();
    }
}

#[test]
fn a_store_file_with_a_flipped_byte_is_refused() {
    each_damaged_file_is_refused("flipped", |bytes| {
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x20;
    });
}

#[test]
fn a_truncated_store_file_is_refused() {
    each_damaged_file_is_refused("truncated", |bytes| bytes.truncate(bytes.len() / 2));
}

#[test]
fn info_without_a_store_is_an_error() {
    let dir = TempDir::new("no-store");
    let output = info_err(&dir.0);
    assert_clean_error(
        &output,
        &format!("{}: no Quiver store here", dir.0.display()),
    );
    let absent = dir.join("absent");
    assert_clean_error(&info_err(&absent), "no Quiver store here");
    // Data files without their manifest are no store either.
    let store = dir.join("store");
    load_ok(&store, &[], &[&dir.file("people.nt", PEOPLE_NT)]);
    std::fs::remove_file(store.join("manifest.json")).unwrap();
    assert_clean_error(&info_err(&store), "no Quiver store here");
}

#[test]
fn info_aligns_its_tables_and_abbreviates_with_a_legend() {
    let long = format!(
        "http://example.org/{}/vocabulary#",
        "very-long-path".repeat(6)
    );
    let mut data = String::new();
    for (s, p, o) in [
        ("a", "worksFor", "<http://ex.org/b>"),
        ("a", "name", "\"A\""),
        ("b", "name", "\"B\""),
        ("b", "aVeryLongPredicateNameIndeed", "\"x\""),
        ("c", "x", "\"y\""),
    ] {
        data.push_str(&format!("<http://ex.org/{s}> <{long}{p}> {o} .\n"));
    }
    data.push_str(&format!(
        "<http://ex.org/a> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{long}Person> .\n\
         <http://ex.org/b> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{long}Person> .\n\
         <http://ex.org/c> <http://other.example/one#p> \"z\" .\n"
    ));
    let dir = TempDir::new("info-table");
    let input = dir.file("data.nt", &data);
    let store = dir.join("store");
    load_ok(&store, &[], &[&input]);
    let json = info(&store);
    let text = run_info(&store, false);
    assert_eq!(text.status.code(), Some(0), "stderr: {}", stderr(&text));
    let text = String::from_utf8(text.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();

    // The legend: PREFIX name: <namespace>.
    let mut legend = std::collections::HashMap::new();
    for line in lines.iter().filter(|l| l.starts_with("PREFIX ")) {
        let mut words = line.split_whitespace().skip(1);
        let name = words.next().unwrap().trim_end_matches(':').to_owned();
        let namespace = words.next().unwrap();
        legend.insert(name, namespace[1..namespace.len() - 1].to_owned());
    }
    assert!(legend.values().any(|ns| *ns == long), "{text}");
    let expand = |cell: &str| -> String {
        if let Some(iri) = cell.strip_prefix('<') {
            return iri.trim_end_matches('>').to_owned();
        }
        let (name, local) = cell.split_once(':').unwrap_or_else(|| panic!("{cell}"));
        format!(
            "{}{local}",
            legend.get(name).unwrap_or_else(|| panic!("{cell}"))
        )
    };

    // The predicate table: a header, a rule, one row per predicate; numbers right-aligned,
    // so every row ends where the rule does, and each cell starts where its header does.
    let header = lines
        .iter()
        .position(|l| l.starts_with("predicate "))
        .unwrap_or_else(|| panic!("no predicate table in\n{text}"));
    let rule = lines[header + 1];
    assert!(rule.chars().all(|c| c == '-' || c == ' '), "{text}");
    let predicates = json["predicate_statistics"].as_array().unwrap();
    let rows = &lines[header + 2..header + 2 + predicates.len()];
    for row in rows {
        assert_eq!(row.chars().count(), rule.chars().count(), "{text}");
        let start = lines[header].find("triples").unwrap();
        assert_eq!(&row[start - 2..start], "  ", "{text}");
    }
    // The same predicates and numbers as the JSON report, after expanding the prefixes.
    let mut from_text: Vec<(String, u64)> = rows
        .iter()
        .map(|row| {
            let words: Vec<&str> = row.split_whitespace().collect();
            (expand(words[0]), words[1].parse().unwrap())
        })
        .collect();
    let mut from_json: Vec<(String, u64)> = predicates
        .iter()
        .map(|p| {
            let term = p["predicate"].as_str().unwrap();
            (
                term[1..term.len() - 1].to_owned(),
                p["triples"].as_u64().unwrap(),
            )
        })
        .collect();
    from_text.sort();
    from_json.sort();
    assert_eq!(from_text, from_json, "{text}");
    // The long namespace was abbreviated, the one-off one kept whole.
    assert!(!rows.iter().any(|r| r.contains(&long)), "{text}");
    assert!(
        rows.iter()
            .any(|r| r.starts_with("<http://other.example/one#p>")),
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.split_whitespace().eq(["class", "instances"])),
        "{text}"
    );
}

/// The quads of an RDF document in `format`, read by Oxigraph's parser (`oxrdfio`), blank
/// nodes canonicalised, so that two documents compare as datasets.
fn oxigraph_dataset(bytes: &[u8], format: oxrdfio::RdfFormat) -> oxrdf::Dataset {
    let mut dataset = oxrdf::Dataset::new();
    for quad in oxrdfio::RdfParser::from_format(format).for_slice(bytes) {
        dataset.insert(&quad.expect("Oxigraph reads it"));
    }
    dataset.canonicalize(oxrdf::dataset::CanonicalizationAlgorithm::Unstable);
    dataset
}

#[test]
fn json_ld_round_trips_through_load_and_dump_like_oxigraph_reads_it() {
    let dir = TempDir::new("jsonld");
    // Every kind of term, in the default graph and two named ones.
    let nquads = r#"<http://e/alice> <http://e/name> "Alice" .
<http://e/alice> <http://e/name> "Alicia"@es .
<http://e/alice> <http://e/age> "42"^^<http://www.w3.org/2001/XMLSchema#integer> .
<http://e/alice> <http://e/knows> _:b1 .
_:b1 <http://e/name> "Bob" <http://e/g1> .
<http://e/alice> <http://e/seen> "2024-05-01T10:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> <http://e/g1> .
<http://e/carol> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://e/Person> <http://e/g2> .
<http://e/carol> <http://e/note> "line one\nline \"two\"" <http://e/g2> .
"#;
    let expected = oxigraph_dataset(nquads.as_bytes(), oxrdfio::RdfFormat::NQuads);
    // The document: the same quads written as JSON-LD by Oxigraph's serializer.
    let json_ld = oxrdfio::RdfFormat::JsonLd {
        profile: oxrdfio::JsonLdProfileSet::empty(),
    };
    let mut serializer = oxrdfio::RdfSerializer::from_format(json_ld).for_writer(Vec::new());
    for quad in expected.iter() {
        serializer.serialize_quad(quad).unwrap();
    }
    let document = serializer.finish().unwrap();
    let file = dir.0.join("people.jsonld");
    std::fs::write(&file, &document).unwrap();
    let store = dir.0.join("store");
    load_ok(&store, &[], &[&file]);
    let info = info(&store);
    assert_eq!(number(&info, "triples"), 8, "{info}");
    // Dumped as JSON-LD and as N-Quads, both equal the original for Oxigraph's parsers.
    for (name, format) in [("jsonld", json_ld), ("nquads", oxrdfio::RdfFormat::NQuads)] {
        let output = quiver()
            .args(["dump", "--format", name, "--location"])
            .arg(&store)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        assert_eq!(
            oxigraph_dataset(&output.stdout, format),
            expected,
            "dump as {name}"
        );
    }
    // `--format jsonld` on a file without the extension; a broken document's error.
    let renamed = dir.0.join("people.data");
    std::fs::copy(&file, &renamed).unwrap();
    let again = dir.0.join("again");
    load_ok(&again, &["--format", "jsonld"], &[&renamed]);
    let broken = dir.0.join("broken.jsonld");
    std::fs::write(
        &broken,
        b"[{\"@id\": \"http://e/x\", \"http://e/p\": [{\"@value\": }]}]",
    )
    .unwrap();
    let output = load(&dir.0.join("broken"), &[], &[&broken]);
    assert_clean_error(&output, "broken.jsonld");
    // A CONSTRUCT in JSON-LD.
    let output = quiver()
        .args(["query", "--results-format", "jsonld", "--location"])
        .arg(&store)
        .args(["--query", "CONSTRUCT WHERE { ?s <http://e/name> ?o }"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let constructed = oxigraph_dataset(&output.stdout, json_ld);
    assert_eq!(constructed.len(), 2, "the default graph's names");
}
