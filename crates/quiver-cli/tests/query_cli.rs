//! `quiver query` as a user runs it, on a LUBM-1 store: the rows in every results format,
//! ASK and CONSTRUCT, EXPLAIN, user plans, and the errors (exit codes, one-line messages,
//! never a panic).

use crate::temp_dir;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

use oxrdf::{BlankNode, Literal, NamedNode, Term};
use serde_json::Value;
use sparesults::{QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput};
use temp_dir::TempDir;

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

const UB: &str = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
const DEPARTMENT0: &str = "http://www.Department0.University0.edu";

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn shared() -> PathBuf {
    std::env::var_os("QUIVER_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// `queries/lubm-basic/qN.rq`.
fn query_file(n: usize) -> PathBuf {
    shared().join(format!("queries/lubm-basic/q{n}.rq"))
}

/// `queries/lubm-basic/plans/qN.fmt`.
fn plan_file(n: usize) -> PathBuf {
    shared().join(format!("queries/lubm-basic/plans/q{n}.fmt"))
}

/// Row counts of q1…q12 on LUBM-1, from `lubm/expected-counts.tsv`.
fn expected_counts() -> Vec<usize> {
    let text = std::fs::read_to_string(shared().join("lubm/expected-counts.tsv")).unwrap();
    let counts = quiver_lubm::expected::query_counts(&text, "lubm1").expect("counts of lubm1");
    counts.into_iter().map(|c| c as usize).collect()
}

/// A temporary directory holding a LUBM-1 store in `store/` (loading it takes a blink).
struct Lubm1 {
    dir: TempDir,
}

impl Lubm1 {
    fn new(name: &str) -> Self {
        let dir = TempDir::new(name);
        let output = quiver()
            .arg("load")
            .arg("--location")
            .arg(dir.join("store"))
            .args(["--lubm", "1"])
            .output()
            .expect("quiver runs");
        assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
        Lubm1 { dir }
    }

    fn store(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// `quiver query --location <store> <args…>`.
    fn query<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let output = quiver()
            .arg("query")
            .arg("--location")
            .arg(self.store())
            .args(args)
            .output()
            .expect("quiver runs");
        assert_no_panic(&output);
        output
    }

    /// Like [`Lubm1::query`], and the query must succeed; returns standard output.
    fn query_ok<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let output = self.query(args);
        assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
        String::from_utf8(output.stdout).expect("UTF-8 results")
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_no_panic(output: &Output) {
    let (out, err) = (String::from_utf8_lossy(&output.stdout), stderr(output));
    assert!(
        !out.contains("panicked") && !err.contains("panicked"),
        "stderr: {err}"
    );
}

/// A runtime error: exit code 1, one line on stderr starting with `error:` that contains
/// every needle, nothing on stdout. Returns the message.
fn assert_clean_error(output: &Output, needles: &[&str]) -> String {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(1), "stderr: {message}");
    assert!(message.starts_with("error:"), "stderr: {message}");
    for needle in needles {
        assert!(message.contains(needle), "{needle:?} not in: {message}");
    }
    assert_eq!(message.lines().count(), 1, "not one line: {message}");
    assert!(output.stdout.is_empty(), "stdout of a failed run");
    message
}

/// A usage error (clap): exit code 2, the message on stderr, nothing on stdout.
fn assert_usage_error(output: &Output, needle: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(2), "stderr: {message}");
    assert!(message.contains(needle), "{needle:?} not in: {message}");
    assert!(output.stdout.is_empty(), "stdout of a failed run");
}

/// A row of terms in N-Triples syntax (`None` when unbound).
type Row = Vec<Option<String>>;

/// The variables and rows of SPARQL JSON results, parsed with serde_json.
fn parse_json(text: &str) -> (Vec<String>, Vec<Row>) {
    let json: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let vars: Vec<String> = json["head"]["vars"]
        .as_array()
        .expect("head.vars")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    let rows = json["results"]["bindings"]
        .as_array()
        .expect("results.bindings")
        .iter()
        .map(|binding| {
            vars.iter()
                .map(|v| {
                    let value = &binding[v];
                    if value.is_null() {
                        return None;
                    }
                    let text = value["value"].as_str().unwrap();
                    let term: Term = match value["type"].as_str().unwrap() {
                        "uri" => NamedNode::new(text).unwrap().into(),
                        "bnode" => BlankNode::new(text).unwrap().into(),
                        "literal" | "typed-literal" => {
                            if let Some(language) = value["xml:lang"].as_str() {
                                Literal::new_language_tagged_literal(text, language)
                                    .unwrap()
                                    .into()
                            } else if let Some(datatype) = value["datatype"].as_str() {
                                Literal::new_typed_literal(text, NamedNode::new(datatype).unwrap())
                                    .into()
                            } else {
                                Literal::new_simple_literal(text).into()
                            }
                        }
                        other => panic!("unknown term type {other}"),
                    };
                    Some(term.to_string())
                })
                .collect()
        })
        .collect();
    (vars, rows)
}

/// The variables and rows of XML or TSV results, parsed with sparesults.
fn parse_with_sparesults(format: QueryResultsFormat, text: &str) -> (Vec<String>, Vec<Row>) {
    let parsed = QueryResultsParser::from_format(format)
        .for_slice(text)
        .unwrap_or_else(|e| panic!("{e}: {text}"));
    let SliceQueryResultsParserOutput::Solutions(solutions) = parsed else {
        panic!("not solutions: {text}")
    };
    let vars: Vec<String> = solutions
        .variables()
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect();
    let rows = solutions
        .map(|solution| {
            let solution = solution.unwrap();
            vars.iter()
                .map(|v| solution.get(v.as_str()).map(Term::to_string))
                .collect()
        })
        .collect();
    (vars, rows)
}

/// The header and rows of CSV results (RFC 4180: fields may be quoted, `""` is a quote).
fn parse_csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        field.is_empty() && record.is_empty(),
        "unterminated CSV: {text}"
    );
    let mut records = records.into_iter();
    let header = records.next().expect("a CSV header");
    (header, records.collect())
}

/// A row as CSV writes it: IRIs and literals by their string, blank nodes as `_:id`,
/// unbound as an empty field.
fn plain(row: &Row) -> Vec<String> {
    row.iter()
        .map(|term| match term {
            None => String::new(),
            Some(text) => {
                if let Some(iri) = text.strip_prefix('<') {
                    iri.trim_end_matches('>').to_owned()
                } else if let Some(literal) = text.strip_prefix('"') {
                    // The lexical form, up to the closing quote (LUBM strings have no
                    // escapes).
                    literal[..literal.rfind('"').unwrap()].to_owned()
                } else {
                    text.clone()
                }
            }
        })
        .collect()
}

fn sorted<T: Ord + Clone>(rows: &[T]) -> Vec<T> {
    let mut rows = rows.to_vec();
    rows.sort();
    rows
}

/// The variables and rows of `quiver query <args…>` in JSON (the default format).
fn json_rows(lubm: &Lubm1, args: &[&OsStr]) -> (Vec<String>, Vec<Row>) {
    parse_json(&lubm.query_ok(args))
}

// ---------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------

/// q4 lists the ten full professors of Department0 with their name, email and telephone;
/// LUBM names the i-th one `FullProfessor<i>` throughout.
fn assert_q4_rows(vars: &[String], rows: &[Row]) {
    assert_eq!(vars, ["X", "Y1", "Y2", "Y3"]);
    let mut expected: Vec<Row> = (0..10)
        .map(|i| {
            vec![
                Some(format!("<{DEPARTMENT0}/FullProfessor{i}>")),
                Some(format!("\"FullProfessor{i}\"")),
                Some(format!("\"FullProfessor{i}@Department0.University0.edu\"")),
                Some("\"xxx-xxx-xxxx\"".to_owned()),
            ]
        })
        .collect();
    expected.sort();
    assert_eq!(sorted(rows), expected);
}

#[test]
fn select_gives_the_same_rows_in_every_results_format() {
    let lubm = Lubm1::new("formats");
    let q4 = query_file(4);
    let q4 = q4.as_os_str();

    let (vars, json) = json_rows(&lubm, &["--query-file".as_ref(), q4]);
    assert_q4_rows(&vars, &json);
    // The explicit name gives the same.
    let (_, again) = json_rows(
        &lubm,
        &[
            "--query-file".as_ref(),
            q4,
            "--results-format".as_ref(),
            "json".as_ref(),
        ],
    );
    assert_eq!(sorted(&again), sorted(&json));

    for (name, format) in [
        ("xml", QueryResultsFormat::Xml),
        ("tsv", QueryResultsFormat::Tsv),
    ] {
        let text = lubm.query_ok([
            "--query-file".as_ref(),
            q4,
            "--results-format".as_ref(),
            OsStr::new(name),
        ]);
        let (vars, rows) = parse_with_sparesults(format, &text);
        assert_eq!(vars, ["X", "Y1", "Y2", "Y3"], "{name}");
        assert_eq!(sorted(&rows), sorted(&json), "{name}");
    }

    let text = lubm.query_ok([
        "--query-file".as_ref(),
        q4,
        "--results-format".as_ref(),
        OsStr::new("csv"),
    ]);
    let (header, rows) = parse_csv(&text);
    assert_eq!(header, ["X", "Y1", "Y2", "Y3"]);
    let expected: Vec<Vec<String>> = json.iter().map(plain).collect();
    assert_eq!(sorted(&rows), sorted(&expected));

    // A larger result (q6: 125 rows, two IRIs each) and one with a variable predicate
    // (q9) agree across formats too, with the published counts.
    let counts = expected_counts();
    for n in [6, 9] {
        let file = query_file(n);
        let file = file.as_os_str();
        let (_, json) = json_rows(&lubm, &["--query-file".as_ref(), file]);
        assert_eq!(json.len(), counts[n - 1], "q{n}");
        for (name, format) in [
            ("xml", QueryResultsFormat::Xml),
            ("tsv", QueryResultsFormat::Tsv),
        ] {
            let text = lubm.query_ok([
                "--query-file".as_ref(),
                file,
                "--results-format".as_ref(),
                OsStr::new(name),
            ]);
            let (_, rows) = parse_with_sparesults(format, &text);
            assert_eq!(sorted(&rows), sorted(&json), "q{n} {name}");
        }
        let text = lubm.query_ok([
            "--query-file".as_ref(),
            file,
            "--results-format".as_ref(),
            OsStr::new("csv"),
        ]);
        let (_, rows) = parse_csv(&text);
        let expected: Vec<Vec<String>> = json.iter().map(plain).collect();
        assert_eq!(sorted(&rows), sorted(&expected), "q{n} csv");
    }
}

#[test]
fn ask_gives_true_or_false() {
    let lubm = Lubm1::new("ask");
    let ask = |class: &str| format!("ASK {{ <{DEPARTMENT0}/FullProfessor1> a <{UB}{class}> }}");
    for (class, expected) in [("FullProfessor", true), ("Course", false)] {
        let text = lubm.query_ok(["--query", &ask(class)]);
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["boolean"], Value::Bool(expected), "{text}");
        for format in ["csv", "tsv"] {
            let text = lubm.query_ok(["--query", &ask(class), "--results-format", format]);
            assert_eq!(text.trim(), expected.to_string(), "{format}");
        }
        let text = lubm.query_ok(["--query", &ask(class), "--results-format", "xml"]);
        assert!(
            text.contains(&format!("<boolean>{expected}</boolean>")),
            "{text}"
        );
    }
}

#[test]
fn construct_gives_ntriples() {
    let lubm = Lubm1::new("construct");
    let query = format!(
        "PREFIX ub: <{UB}>
         CONSTRUCT {{ ?x <http://example.org/named> ?n }}
         WHERE {{ ?x ub:worksFor <{DEPARTMENT0}> ; a ub:FullProfessor ; ub:name ?n }}"
    );
    let text = lubm.query_ok(["--query", &query, "--results-format", "nt"]);
    let lines: BTreeSet<&str> = text.lines().collect();
    let expected: BTreeSet<String> = (0..10)
        .map(|i| {
            format!(
                "<{DEPARTMENT0}/FullProfessor{i}> <http://example.org/named> \"FullProfessor{i}\" ."
            )
        })
        .collect();
    assert_eq!(text.lines().count(), 10, "{text}");
    assert_eq!(
        lines,
        expected.iter().map(String::as_str).collect::<BTreeSet<_>>()
    );
}

#[test]
fn explain_prints_the_plan_with_estimated_and_actual_rows() {
    let lubm = Lubm1::new("explain");
    let output = lubm.query([
        "--query-file".as_ref(),
        query_file(4).as_os_str(),
        "--explain".as_ref(),
        "--threads".as_ref(),
        OsStr::new("1"),
    ]);
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    // The results still go to standard output.
    let (vars, rows) = parse_json(&String::from_utf8(output.stdout.clone()).unwrap());
    assert_q4_rows(&vars, &rows);

    let plan = stderr(&output);
    let header = plan
        .lines()
        .position(|l| l.contains("estimated") && l.contains("actual"))
        .unwrap_or_else(|| panic!("no step table in: {plan}"));
    // Step lines: number, operation, estimated rows, actual rows, time.
    let steps: Vec<(f64, usize)> = plan
        .lines()
        .skip(header + 1)
        .take_while(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let n = fields.len();
            let estimated: f64 = fields[n - 3]
                .parse()
                .unwrap_or_else(|_| panic!("no estimate in {line:?}"));
            let actual: usize = fields[n - 2]
                .parse()
                .unwrap_or_else(|_| panic!("no actual rows in {line:?}"));
            fields[n - 1]
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("no time in {line:?}"));
            (estimated, actual)
        })
        .collect();
    // q4 has five patterns: at least one step per pattern unless steps were fused.
    assert!(steps.len() >= 3, "{plan}");
    assert_eq!(
        steps.last().unwrap().1,
        10,
        "the last step has the ten rows: {plan}"
    );
    assert!(
        plan.contains("planning") && plan.contains("execution"),
        "{plan}"
    );
    assert!(plan.contains("univ-bench.owl#worksFor"), "{plan}");
}

#[test]
fn user_plans_give_the_same_rows() {
    let lubm = Lubm1::new("plans");
    let counts = expected_counts();
    for n in 1..=7 {
        let file = query_file(n);
        let plan = plan_file(n);
        let (vars, ours) = json_rows(&lubm, &["--query-file".as_ref(), file.as_os_str()]);
        assert_eq!(ours.len(), counts[n - 1], "q{n}");
        let output = lubm.query([
            "--query-file".as_ref(),
            file.as_os_str(),
            "--plan".as_ref(),
            plan.as_os_str(),
            "--explain".as_ref(),
        ]);
        assert_eq!(output.status.code(), Some(0), "q{n}: {}", stderr(&output));
        let (plan_vars, planned) = parse_json(&String::from_utf8(output.stdout.clone()).unwrap());
        assert_eq!(plan_vars, vars, "q{n}");
        assert_eq!(sorted(&planned), sorted(&ours), "q{n} with its plan");
        // EXPLAIN shows the user's steps, which carry no estimate.
        assert!(
            stderr(&output).contains("user plan"),
            "q{n}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn bad_plans_are_refused_with_a_clear_message() {
    let lubm = Lubm1::new("bad-plans");
    let q2 = query_file(2);
    let cases = [
        ("9 <\n", vec!["invalid plan", "pattern 9 does not exist"]),
        ("1 ^\n", vec!["invalid plan", "line 1"]),
        ("# nothing\n", vec!["invalid plan", "no steps"]),
        // Pattern 2 (?X ub:name ?Y) walked from ?X before anything binds it.
        ("2 >\n1 <\n", vec!["invalid plan", "unbound variable"]),
        // Pattern 2 is never walked.
        ("1 <\n", vec!["invalid plan", "never walked"]),
    ];
    for (i, (plan, needles)) in cases.iter().enumerate() {
        let path = lubm.dir.file(&format!("plan{i}.fmt"), plan);
        let output = lubm.query([
            "--query-file".as_ref(),
            q2.as_os_str(),
            "--plan".as_ref(),
            path.as_os_str(),
        ]);
        assert_clean_error(&output, needles);
    }
    let missing = lubm.dir.join("missing.fmt");
    let output = lubm.query([
        "--query-file".as_ref(),
        q2.as_os_str(),
        "--plan".as_ref(),
        missing.as_os_str(),
    ]);
    assert_clean_error(&output, &["cannot read", "missing.fmt"]);
}

/// The `line:column` after "error at" in a syntax error message.
fn syntax_position(message: &str) -> (u32, u32) {
    let rest = message
        .split_once("error at ")
        .unwrap_or_else(|| panic!("no position in: {message}"))
        .1;
    let position = rest.split(':').take(2).collect::<Vec<_>>();
    let line = position[0].parse().unwrap_or_else(|_| panic!("{message}"));
    let column = position[1].parse().unwrap_or_else(|_| panic!("{message}"));
    (line, column)
}

#[test]
fn invalid_sparql_is_reported_on_one_line_with_its_position() {
    let lubm = Lubm1::new("syntax");
    // A missing '.' between two triple patterns: spargebra stops on line 3.
    let text = "SELECT ?x WHERE {\n  ?x ?y ?z\n  ?x ?y ?z .\n}\n";
    let output = lubm.query(["--query", text]);
    let message = assert_clean_error(&output, &["invalid query"]);
    let (line, column) = syntax_position(&message);
    assert_eq!(line, 3, "{message}");
    assert!(column >= 1, "{message}");

    // The same from a file.
    let path = lubm.dir.file("bad.rq", text);
    let output = lubm.query(["--query-file".as_ref(), path.as_os_str()]);
    let from_file = assert_clean_error(&output, &["invalid query"]);
    assert_eq!(from_file, message);

    // spargebra reports the furthest position it reached (here after the closing brace,
    // line 5): still one line with a position.
    let output = lubm.query([
        "--query",
        "SELECT ?x\nWHERE {\n  ?x ?y ?z .\n  FILTER(?x = )\n}",
    ]);
    let message = assert_clean_error(&output, &["invalid query"]);
    let (line, _) = syntax_position(&message);
    assert!((4..=5).contains(&line), "{message}");

    // Not SPARQL at all.
    let output = lubm.query(["--query", "DROP EVERYTHING"]);
    let message = assert_clean_error(&output, &["invalid query"]);
    assert_eq!(syntax_position(&message).0, 1, "{message}");
}

#[test]
fn an_undeclared_prefix_is_named() {
    let lubm = Lubm1::new("prefix");
    let output = lubm.query(["--query", "SELECT ?x WHERE { ?x a foo:Bar }"]);
    let message = assert_clean_error(&output, &["invalid query", "undeclared prefix 'foo:'"]);
    // The position of the prefixed name.
    assert_eq!(syntax_position(&message), (1, 24), "{message}");

    // As a predicate (where spargebra's own message does not mention the prefix), on a
    // later line, with another prefix declared and used, and prefix-like text in a
    // comment, a string and an IRI.
    let text = format!(
        "PREFIX ub: <{UB}>\n# bad:comment\nSELECT ?x WHERE {{\n  ?x a ub:Course ; ub:name \"x:y\" .\n  ?x unknown:name <http://a.example/b:c> .\n}}"
    );
    let output = lubm.query(["--query", &text]);
    let message = assert_clean_error(&output, &["invalid query", "undeclared prefix 'unknown:'"]);
    assert_eq!(syntax_position(&message), (5, 6), "{message}");
}

#[test]
fn max_results_refuses_larger_results() {
    let lubm = Lubm1::new("max-results");
    let q6 = query_file(6); // 125 rows
    let output = lubm.query([
        "--query-file".as_ref(),
        q6.as_os_str(),
        "--max-results".as_ref(),
        OsStr::new("5"),
    ]);
    assert_clean_error(&output, &["exceeds", "5"]);
    // At the limit, the rows come.
    let (_, rows) = json_rows(
        &lubm,
        &[
            "--query-file".as_ref(),
            q6.as_os_str(),
            "--max-results".as_ref(),
            "125".as_ref(),
        ],
    );
    assert_eq!(rows.len(), 125);
}

#[test]
fn timeout_stops_a_heavy_query() {
    let lubm = Lubm1::new("timeout");
    // q2 (828 rows) is usually past a microsecond's deadline at the executor's first
    // check; if it is not, a cross product of the courses with themselves (685,584 rows)
    // passes several checks (one every 4,096 rows). --max-results keeps a run that would
    // not time out from printing it.
    let cross = format!("SELECT * WHERE {{ ?x a <{UB}Course> . ?y a <{UB}Course> }}");
    let q2 = std::fs::read_to_string(query_file(2)).unwrap();
    let mut outcomes = Vec::new();
    for query in [q2.as_str(), cross.as_str()] {
        let output = lubm.query([
            "--query",
            query,
            "--timeout",
            "0.000001",
            "--max-results",
            "1000",
        ]);
        if output.status.code() == Some(1) && stderr(&output).contains("timed out") {
            assert_clean_error(&output, &["timed out"]);
            return;
        }
        outcomes.push(format!("{:?}: {}", output.status.code(), stderr(&output)));
    }
    panic!("no query timed out: {outcomes:?}");
}

#[test]
fn usage_errors_exit_with_2() {
    let lubm = Lubm1::new("usage");
    let q2 = query_file(2);
    let output = lubm.query([
        "--query".as_ref(),
        OsStr::new("ASK {}"),
        "--query-file".as_ref(),
        q2.as_os_str(),
    ]);
    assert_usage_error(&output, "cannot be used with");
    // Neither a query nor a file.
    let output = lubm.query(["--explain"]);
    assert_usage_error(&output, "required");
    let output = lubm.query(["--query", "ASK {}", "--results-format", "yaml"]);
    assert_usage_error(&output, "unknown results format 'yaml'");
    // A timeout, row cap, memory limit or thread count out of range is a usage error
    // naming the flag and the range, before anything runs.
    for (flag, value, range) in [
        ("--timeout", "-1", "at most 31536000"),
        ("--timeout", "NaN", "at most 31536000"),
        ("--timeout", "1e300", "at most 31536000"),
        ("--max-results", "-5", "whole number of rows"),
        ("--max-memory", "12 parsecs", "such as 512M"),
        ("--threads", "4096", "from 1 to"),
    ] {
        let output = lubm.query(["--query", "ASK {}", flag, value]);
        assert_usage_error(&output, flag);
        assert_usage_error(&output, range);
    }
    // `0` or `none` means no limit.
    for value in ["0", "none"] {
        let output = lubm.query([
            "--query",
            "ASK {}",
            "--timeout",
            value,
            "--max-memory",
            value,
        ]);
        assert!(output.status.success(), "{output:?}");
    }
}

#[test]
fn a_missing_store_is_an_error() {
    let dir = TempDir::new("missing-store");
    let missing = dir.join("no-store-here");
    let output = quiver()
        .arg("query")
        .arg("--location")
        .arg(&missing)
        .args(["--query", "ASK {}"])
        .output()
        .expect("quiver runs");
    assert_no_panic(&output);
    assert_clean_error(&output, &["store", &missing.display().to_string()]);
    assert!(!missing.exists(), "a query must not create a store");
}

/// Runs `quiver query --location <store> <args…>` with its standard output on a
/// pseudo-terminal (through util-linux `script`), and returns what the terminal showed.
fn query_on_terminal(lubm: &Lubm1, args: &str) -> String {
    let command = format!(
        "{} query --location {} {args}",
        env!("CARGO_BIN_EXE_quiver"),
        lubm.store().display()
    );
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .output()
        .expect("util-linux `script` runs");
    assert_eq!(output.status.code(), Some(0), "stderr: {}", stderr(&output));
    String::from_utf8(output.stdout)
        .unwrap()
        .replace("\r\n", "\n")
}

#[test]
fn a_terminal_gets_an_aligned_table_unless_a_format_is_given() {
    let lubm = Lubm1::new("terminal");
    let file = query_file(4);
    let text = query_on_terminal(&lubm, &format!("--query-file {}", file.display()));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["?X", "?Y1", "?Y2", "?Y3"],
        "{text}"
    );
    assert!(lines[1].chars().all(|c| c == '-' || c == ' '), "{text}");
    // Every cell starts where its column's header does.
    let starts: Vec<usize> = ["?X", "?Y1", "?Y2", "?Y3"]
        .iter()
        .map(|h| lines[0].find(h).unwrap())
        .collect();
    let rows: Vec<Row> = lines[2..12]
        .iter()
        .map(|line| {
            let mut cells = Vec::new();
            for (i, &start) in starts.iter().enumerate() {
                let end = starts.get(i + 1).map_or(line.len(), |&next| next);
                assert!(start == 0 || &line[start - 1..start] == " ", "{text}");
                assert_ne!(&line[start..start + 1], " ", "{text}");
                cells.push(Some(line[start..end].trim_end().to_owned()));
            }
            cells
        })
        .collect();
    assert_q4_rows(&["X".into(), "Y1".into(), "Y2".into(), "Y3".into()], &rows);
    assert_eq!(lines[12], "10 rows", "{text}");
    assert_eq!(lines.len(), 13, "{text}");

    // An explicit format is written as asked, terminal or not.
    let text = query_on_terminal(
        &lubm,
        &format!("--query-file {} --results-format json", file.display()),
    );
    let (vars, rows) = parse_json(&text);
    assert_q4_rows(&vars, &rows);
}
