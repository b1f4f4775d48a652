//! `quiver serve` with real clients: Python's SPARQLWrapper and rdflib (the script
//! `tests/python/sparql_clients.py` compares their rows with `quiver query`), rdflib's
//! SPARQLUpdateStore writing to `quiver serve --writable`
//! (`tests/python/sparql_update_client.py`), and headless Chromium running the query page
//! as a user would (`web/test/page.mjs`, driven by Playwright).
//!
//! `scripts/test` installs both (the Python packages in a virtual environment whose `bin`
//! comes first on PATH). A test whose client is missing fails, saying how to install it.

use crate::serve_support;

use std::path::Path;
use std::process::{Command, Stdio};

use serve_support::{queries_dir, small_store, store, Server};

fn lubm() -> &'static Path {
    store("clients")
}

/// Whether `program ARGS…` runs and succeeds.
fn found(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn sparqlwrapper_and_rdflib_see_what_quiver_query_prints() {
    assert!(
        found("python3", &["-c", "import SPARQLWrapper, rdflib"]),
        "this test needs python3 with SPARQLWrapper and rdflib on PATH: run the tests through \
         scripts/test (it installs them in a virtual environment), or \
         `pip install SPARQLWrapper rdflib`"
    );
    let server = Server::start(lubm(), &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/sparql_clients.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(["--endpoint", &server.url("/sparql")])
        .args(["--quiver", env!("CARGO_BIN_EXE_quiver")])
        .arg("--location")
        .arg(lubm())
        .arg("--queries")
        .arg(queries_dir().join("lubm-basic"))
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "python clients failed:\n{stdout}\n{stderr}\nserver log:\n{}",
        server.log()
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    // Every check did reach the server.
    assert!(server.status()["queries_served"].as_u64().unwrap() > 80);
}

#[test]
fn rdflib_sparql_update_store_writes_and_reads_back() {
    assert!(
        found("python3", &["-c", "import rdflib"]),
        "this test needs python3 with rdflib on PATH: run the tests through scripts/test (it \
         installs it in a virtual environment), or `pip install rdflib`"
    );
    let dir = small_store(
        "rdflib-update",
        "<http://e/s> <http://e/p> <http://e/o> .\n",
    );
    let server = Server::start(&dir, &["--writable", "--update-token", "rdflib-token"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/sparql_update_client.py");
    let output = Command::new("python3")
        .arg(&script)
        .args(["--query", &server.url("/sparql")])
        .args(["--update", &server.url("/update")])
        .args(["--token", "rdflib-token"])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "rdflib failed:\n{stdout}\n{stderr}\nserver log:\n{}",
        server.log()
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
    assert!(server.status()["writes_committed"].as_u64().unwrap() >= 6);
}

/// The Chromium binary, if any, as a path (the page driver needs one).
fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| found(&candidate.to_string_lossy(), &["--version"]))
}

/// Copies the files of directory `from` (a store) into `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The repository's `web/` directory: the page driver and its npm packages.
fn web_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web")
}

/// Runs `web/test/page.mjs` on the page at `url` (a user typing, running, explaining,
/// completing) and returns what it saw.
fn drive_page(
    browser: &Path,
    url: &str,
    query: &str,
    class_prefix: &str,
    env: &[(&str, &str)],
) -> serde_json::Value {
    let output = Command::new("node")
        .arg(web_dir().join("test/page.mjs"))
        .arg(url)
        .env("CHROMIUM", browser)
        .env("QUERY", query)
        .env("CLASS_PREFIX", class_prefix)
        .envs(env.iter().copied())
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the page driver failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

#[test]
fn a_user_types_runs_explains_and_completes_in_the_query_page() {
    let browser = chromium().expect(
        "this test needs a headless Chromium (chromium, chromium-browser or google-chrome) on \
         PATH: run the tests through scripts/test (it installs it as root), or \
         `sudo apt-get install chromium`",
    );
    assert!(
        found("node", &["--version"]) && web_dir().join("node_modules/playwright-core").is_dir(),
        "this test needs Node.js and web/'s npm packages: run the tests through scripts/test \
         (it runs scripts/web, which installs them from web/package-lock.json), or \
         `(cd web && npm ci)`"
    );
    let ub = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#";
    // A writable copy of the LUBM store behind an update token.
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("page-writable");
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(lubm(), &copy);
    let server = Server::start(&copy, &["--writable", "--update-token", "page-token"]);
    // LUBM q5 on one line, as typed (the editor closes brackets itself).
    let query = format!(
        "SELECT ?X WHERE {{ ?X <{ub}subOrganizationOf> <http://www.Department0.University0.edu> . ?X a <{ub}ResearchGroup> }}"
    );
    let seen = drive_page(
        &browser,
        &server.url("/"),
        &query,
        "SELECT * WHERE { ?x a univ-bench:Grad",
        &[
            ("UPDATE_TOKEN", "page-token"),
            (
                "UPDATE",
                "INSERT DATA { <urn:page:s> <urn:page:p> \"typed in the page\" }",
            ),
            (
                "UPDATE_CHECK",
                "SELECT ?o WHERE { <urn:page:s> <urn:page:p> ?o }",
            ),
        ],
    );
    let report = serde_json::to_string_pretty(&seen).unwrap();
    assert!(
        seen["failure"].is_null(),
        "{report}\nserver log:\n{}",
        server.log()
    );

    // The page knows the store: its size, and examples from its own classes.
    assert_eq!(seen["title"], "Quiver SPARQL");
    assert!(
        seen["store"].as_str().unwrap().contains("100,543 triples"),
        "{report}"
    );
    let examples = seen["examples"].to_string();
    assert!(
        examples.contains("univ-bench:"),
        "examples use the store's classes: {report}"
    );
    assert!(
        examples.contains("Insert"),
        "an update example on a writable server"
    );

    // The typed query ran: ten research groups in the results table.
    assert_eq!(seen["state"], "done", "{report}");
    let rows = seen["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10, "{report}");
    let cells = seen["rows"].to_string();
    for group in 0..10 {
        let iri = format!("http://www.Department0.University0.edu/ResearchGroup{group}");
        assert!(cells.contains(&iri), "missing {iri}: {report}");
    }
    assert!(
        seen["summary"].as_str().unwrap().starts_with("10 rows"),
        "{report}"
    );

    // The Explain tab: the plan with estimated and actual rows.
    let explain = seen["explain"].as_str().unwrap();
    assert!(
        explain.contains("estimated")
            && explain.contains("actual")
            && explain.contains("answered 10 rows"),
        "{report}"
    );

    // A malformed query: the server's message with its line and column.
    assert_eq!(seen["error_state"], "error", "{report}");
    let error = format!("{} {}", seen["error_summary"], seen["error_shown"]);
    assert!(error.contains("invalid query"), "{report}");
    // `error at LINE:COLUMN`: the query was typed on two lines (the editor closes the brace
    // on a third), its error at the end.
    let position = error
        .split("error at ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| c != ':' && !c.is_ascii_digit()).next())
        .unwrap_or("");
    let (line, column) = position
        .trim_end_matches(':')
        .split_once(':')
        .unwrap_or(("", ""));
    assert!(
        matches!(line, "2" | "3") && column.parse::<u32>().is_ok(),
        "line and column shown ({position:?}): {report}"
    );

    // Completion offers the store's own prefix and classes.
    let prefixes = seen["prefix_hints"].to_string();
    assert!(
        prefixes.contains(&format!("univ-bench: <{ub}>")),
        "the store's prefix offered: {report}"
    );
    let classes = seen["class_hints"].to_string();
    assert!(classes.contains("univ-bench:GraduateStudent"), "{report}");
    assert!(classes.contains("univ-bench:GraduateCourse"), "{report}");
    assert!(
        !classes.contains("univ-bench:Professor\""),
        "only classes starting with Grad: {report}"
    );

    // An update typed with the token, and a query that sees what it wrote.
    assert_eq!(seen["token_box"], true, "{report}");
    assert_eq!(seen["update_state"], "done", "{report}");
    assert!(
        seen["update_summary"]
            .as_str()
            .unwrap()
            .starts_with("update applied"),
        "{report}"
    );
    assert_eq!(seen["check_state"], "done", "{report}");
    assert!(
        seen["check_rows"].to_string().contains("typed in the page"),
        "{report}"
    );
    assert_eq!(server.status()["writes_committed"].as_u64(), Some(1));

    // Nothing came from another host, and the page's scripts raised no error.
    assert_eq!(seen["foreign_requests"], serde_json::json!([]), "{report}");
    assert_eq!(seen["console"], serde_json::json!([]), "{report}");
    assert!(server.logged("method=POST path=/query dataset=default status=400"));
}
