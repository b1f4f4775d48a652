//! `quiver serve` with real clients: Python's SPARQLWrapper and rdflib (the script
//! `tests/python/sparql_clients.py` compares their rows with `quiver query`), rdflib's
//! SPARQLUpdateStore writing to `quiver serve --writable`
//! (`tests/python/sparql_update_client.py`), and headless Chromium running the query page.
//!
//! `scripts/test` installs both (the Python packages in a virtual environment whose `bin`
//! comes first on PATH). A test whose client is missing fails, saying how to install it.

mod serve_support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serve_support::{encode, queries_dir, small_store, store, Server};

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

/// The Chromium binary, if any.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| found(name, &["--version"]))
}

/// Runs headless Chromium on `url` and returns the DOM after the page's scripts ran.
fn dump_dom(browser: &str, url: &str) -> String {
    let profile = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "chromium-profile-{}-{}",
        std::process::id(),
        url.len()
    ));
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=15000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut dom).ok();
        dom
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 90 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = std::fs::remove_dir_all(&profile);
    reader.join().expect("reader")
}

#[test]
fn headless_chromium_runs_the_query_page() {
    let browser = chromium().expect(
        "this test needs a headless Chromium (chromium, chromium-browser or google-chrome) on \
         PATH: run the tests through scripts/test (it installs it as root), or \
         `sudo apt-get install chromium`",
    );
    let server = Server::start(lubm(), &[]);
    let q5 = std::fs::read_to_string(queries_dir().join("lubm-basic/q5.rq")).unwrap();
    let dom = dump_dom(
        browser,
        &server.url(&format!("/?query={}&run=1", encode(&q5))),
    );
    assert!(
        dom.contains("data-state=\"done\""),
        "page did not finish:\n{dom}"
    );
    assert_eq!(dom.matches("<tr class=\"row\">").count(), 10, "{dom}");
    for group in 0..10 {
        let iri = format!("&lt;http://www.Department0.University0.edu/ResearchGroup{group}&gt;");
        assert!(dom.contains(&iri), "missing {iri}");
    }
    assert!(dom.contains("<th>?X</th>"));
    assert!(dom.contains("10 rows in"), "timing and row count shown");
    assert!(dom.contains("100,543 triples"), "store size from /status");

    // A malformed query shows the server's message with its position.
    let dom = dump_dom(
        browser,
        &server.url(&format!("/?query={}&run=1", encode("SELECT ?x {"))),
    );
    assert!(dom.contains("data-state=\"error\""), "{dom}");
    assert!(
        dom.contains("400") && dom.contains("invalid query"),
        "{dom}"
    );
    assert!(server.logged("method=POST path=/query dataset=default status=400"));
}
