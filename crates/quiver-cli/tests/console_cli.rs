//! `quiver console` as a script drives it: commands on standard input (not a terminal, so
//! no line editor), expected lines on standard output, `error: …` on standard error, and
//! the session going on after every error.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn temp_dir(name: &str) -> PathBuf {
    // Under the target directory, one name per test: the next run starts by removing what
    // this one leaves (the stores shared by a file's tests live as long as the process).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("console-cli-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A LUBM-1 store shared by the tests of this file.
fn lubm1() -> &'static Path {
    static STORE: OnceLock<PathBuf> = OnceLock::new();
    STORE.get_or_init(|| {
        let dir = temp_dir("lubm1").join("store");
        let output = quiver()
            .args(["load", "--lubm", "1", "--location"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", text(&output.stderr));
        dir
    })
}

/// A query of the repository's LUBM set.
fn query(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../queries/lubm-basic/{name}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a console session on `store` with `script` as standard input.
fn session(store: &Path, script: &str) -> Output {
    session_bytes(store, script.as_bytes())
}

/// Like [`session`], with any bytes as standard input.
fn session_bytes(store: &Path, script: &[u8]) -> Output {
    let mut child = quiver()
        .args(["console", "--threads", "2", "--location"])
        .arg(store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(script).unwrap();
    child.wait_with_output().unwrap()
}

fn lines(bytes: &[u8]) -> Vec<String> {
    text(bytes).lines().map(str::to_owned).collect()
}

fn count(lines: &[String], exact: &str) -> usize {
    lines.iter().filter(|l| l.as_str() == exact).count()
}

/// Lines whose words (split at runs of spaces) are `words`: a row of an aligned table.
fn count_words(lines: &[String], words: &[&str]) -> usize {
    lines
        .iter()
        .filter(|l| l.split_whitespace().eq(words.iter().copied()))
        .count()
}

fn has_prefix(lines: &[String], prefix: &str) -> bool {
    lines.iter().any(|l| l.starts_with(prefix))
}

#[test]
fn a_scripted_session_runs_commands_and_goes_on_after_errors() {
    let q7 = query("q7.rq");
    let bad = temp_dir("bad").join("bad.rq");
    std::fs::write(&bad, "SELECT ?x WHERE { ?x ").unwrap();
    let script = format!(
        "stats\n\
         frobnicate now\n\
         sparql -f {missing}\n\
         sparql -f {q7} -n 3 -N 2 -v 2\n\
         config threads 0\n\
         sparql -f {bad}\n\
         sparql -q\n\
         SELECT ?u WHERE {{\n  ?u a <http://swat.cse.lehigh.edu/onto/univ-bench.owl#University>\n}} LIMIT 2\n\
         \n\
         # a comment line\n\
         stats\n\
         quit\n\
         sparql -f {q7}\n",
        missing = "/nonexistent/q.rq",
        q7 = q7.display(),
        bad = bad.display(),
    );
    let output = session(lubm1(), &script);
    let out = lines(&output.stdout);
    let err = lines(&output.stderr);
    // Both `stats` ran: the second one after five failed commands.
    assert_eq!(count(&out, "triples      100543"), 2, "{out:#?}");
    // q7 ran once (not after `quit`), with its options.
    assert_eq!(count(&out, "30 rows"), 1, "{out:#?}");
    assert_eq!(count_words(&out, &["?X", "?Y", "?Z"]), 1, "{out:#?}");
    assert_eq!(count(&out, "… 28 more row(s)"), 1, "{out:#?}");
    assert!(
        out.iter()
            .any(|l| l.starts_with("latency: average ") && l.ends_with(" over 3 run(s)")),
        "{out:#?}"
    );
    assert!(
        out.iter()
            .any(|l| l.starts_with("planning: average ") && l.ends_with(" over 2 run(s)")),
        "{out:#?}"
    );
    // The inline query: a header, two rows, the count.
    assert_eq!(count(&out, "?u"), 1, "{out:#?}");
    assert_eq!(count(&out, "2 rows"), 1, "{out:#?}");
    // Every error was reported and the script's status says so.
    assert!(
        has_prefix(&err, "error: unknown command `frobnicate`"),
        "{err:#?}"
    );
    assert!(
        has_prefix(&err, "error: cannot read /nonexistent/q.rq"),
        "{err:#?}"
    );
    assert!(
        has_prefix(&err, "error: config: threads must be"),
        "{err:#?}"
    );
    assert!(has_prefix(&err, "error: invalid query"), "{err:#?}");
    assert!(
        has_prefix(&err, "error: sparql: unknown option `-q`"),
        "{err:#?}"
    );
    assert!(has_prefix(&err, "error: 5 command(s) failed"), "{err:#?}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_clean_script_ends_at_end_of_input_with_status_zero() {
    let output = session(lubm1(), "help\nconfig\nconfig rows=3\nconfig timeout 2.5\n");
    let out = lines(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(has_prefix(&out, "commands:"), "{out:#?}");
    assert_eq!(count(&out, "rows         10"), 1, "{out:#?}");
    assert_eq!(count(&out, "rows         3"), 2, "{out:#?}");
    assert_eq!(count(&out, "timeout      2.5 s"), 1, "{out:#?}");
    assert!(output.stderr.is_empty(), "{}", text(&output.stderr));
}

#[test]
fn max_results_and_explain_and_plan_files_apply_to_queries() {
    let q7 = query("q7.rq");
    let plan = query("plans/q7.fmt");
    let script = format!(
        "config max-results 5\n\
         sparql -f {q7}\n\
         config max-results off\n\
         sparql -f {q7} -p {plan} --explain\n\
         sparql -f {q7} -p /nonexistent.fmt\n",
        q7 = q7.display(),
        plan = plan.display()
    );
    let output = session(lubm1(), &script);
    let out = lines(&output.stdout);
    let err = text(&output.stderr);
    assert!(
        err.contains("error: result exceeds the limit of 5 rows"),
        "{err}"
    );
    assert_eq!(count(&out, "30 rows"), 1, "{out:#?}");
    assert!(out.iter().any(|l| l.contains("user plan")), "{out:#?}");
    assert!(err.contains("error: cannot read /nonexistent.fmt"), "{err}");
    assert!(err.contains("2 command(s) failed"), "{err}");
}

#[test]
fn results_are_written_in_the_format_of_the_extension() {
    let dir = temp_dir("out");
    let (tsv, json) = (dir.join("q7.tsv"), dir.join("q7.srj"));
    let script = format!(
        "sparql -f {q7} -o {tsv}\nsparql -f {q7} -o {json}\nsparql -f {q7} -o {dir}/no/such/dir.tsv\n",
        q7 = query("q7.rq").display(),
        tsv = tsv.display(),
        json = json.display(),
        dir = dir.display()
    );
    let output = session(lubm1(), &script);
    assert_eq!(output.status.code(), Some(1), "the third -o fails");
    let tsv = std::fs::read_to_string(&tsv).unwrap();
    assert_eq!(tsv.lines().count(), 31, "header and 30 rows");
    assert_eq!(tsv.lines().next(), Some("?X\t?Y\t?Z"));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(
        json["results"]["bindings"].as_array().map(Vec::len),
        Some(30)
    );
    assert!(text(&output.stderr).contains("cannot create"));
}

#[test]
fn a_batch_runs_files_relative_to_it_and_reports_failures() {
    let dir = temp_dir("batch");
    std::fs::create_dir_all(dir.join("list")).unwrap();
    for name in ["q7.rq", "q1.rq"] {
        std::fs::copy(query(name), dir.join("list").join(name)).unwrap();
    }
    std::fs::write(
        dir.join("list/batch.txt"),
        "# the heavy ones\nq7.rq -n 2\n\nmissing.rq\nq1.rq\n",
    )
    .unwrap();
    let script = format!(
        "sparql -b {}\nsparql -b {}/none.txt\nstats\n",
        dir.join("list/batch.txt").display(),
        dir.display()
    );
    let output = session(lubm1(), &script);
    let out = lines(&output.stdout);
    let err = text(&output.stderr);
    let q7 = dir.join("list/q7.rq");
    let q1 = dir.join("list/q1.rq");
    assert_eq!(
        count(&out, &format!("{}: 30 rows", q7.display())),
        1,
        "{out:#?}"
    );
    assert_eq!(
        count(&out, &format!("{}: 0 rows", q1.display())),
        1,
        "{out:#?}"
    );
    assert_eq!(count(&out, "batch: 3 queries, 1 failed"), 1, "{out:#?}");
    assert!(err.contains("batch.txt:4: cannot read"), "{err}");
    assert!(err.contains("none.txt"), "{err}");
    assert_eq!(
        count(&out, "triples      100543"),
        1,
        "stats still ran: {out:#?}"
    );
}

#[test]
fn load_creates_and_grows_the_store_and_survives_bad_files() {
    let dir = temp_dir("load");
    let store = dir.join("store");
    let people = dir.join("people.nt");
    std::fs::write(
        &people,
        "<http://ex.org/a> <http://ex.org/knows> <http://ex.org/b> .\n\
         <http://ex.org/b> <http://ex.org/knows> <http://ex.org/c> .\n",
    )
    .unwrap();
    let more = dir.join("more.ttl");
    std::fs::write(
        &more,
        "@prefix ex: <http://ex.org/> .\nex:c ex:knows ex:a .\n",
    )
    .unwrap();
    let bad = dir.join("bad.nt");
    std::fs::write(&bad, "<http://ex.org/x> <http://ex.org/p> .\n").unwrap();
    let script = format!(
        "stats\n\
         load {people}\n\
         load {bad}\n\
         load {missing}\n\
         load\n\
         SELECT ?s ?o WHERE {{ ?s <http://ex.org/knows> ?o }}\n\
         \n\
         load {more}\n\
         stats\n",
        people = people.display(),
        bad = bad.display(),
        more = more.display(),
        missing = dir.join("missing.nt").display(),
    );
    let output = session(&store, &script);
    let out = lines(&output.stdout);
    let err = text(&output.stderr);
    assert!(err.contains("error: no store at"), "{err}");
    assert!(err.contains("bad.nt:1:"), "{err}");
    assert!(err.contains("missing.nt"), "{err}");
    assert!(err.contains("load: name files"), "{err}");
    assert!(err.contains("4 command(s) failed"), "{err}");
    // The bad file left the two triples; the inline query found them.
    assert_eq!(
        count_words(&out, &["<http://ex.org/a>", "<http://ex.org/b>"]),
        1,
        "{out:#?}"
    );
    assert_eq!(count(&out, "2 rows"), 1, "{out:#?}");
    assert_eq!(count(&out, "triples      3"), 1, "{out:#?}");
    // The data were saved: a new process sees them.
    let info = quiver()
        .args(["info", "--json", "--location"])
        .arg(&store)
        .output()
        .unwrap();
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["triples"], 3);
}

#[test]
fn a_line_that_is_not_utf8_is_one_failing_command() {
    let output = session_bytes(lubm1(), b"stats\xff\nconfig rows 4\n");
    let out = lines(&output.stdout);
    assert_eq!(count(&out, "rows         4"), 1, "{out:#?}");
    let err = text(&output.stderr);
    assert!(err.contains("error: unknown command `stats"), "{err}");
    assert!(err.contains("1 command(s) failed"), "{err}");
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_missing_location_value_is_a_usage_error() {
    let output = quiver().arg("console").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}
