//! Full-text search as a user runs it: `quiver load --text-index`, queries with
//! `quiver:matches` from the command line, updates found at once, EXPLAIN naming the
//! search, `quiver text-index drop` and `build`.

use crate::serve_support;

use std::path::{Path, PathBuf};

use serve_support::{ok_at, quiver, run_at, tsv_rows};

const DATA: &str = r#"<http://example.org/a> <http://example.org/label> "The quick brown fox" .
<http://example.org/b> <http://example.org/label> "Un renard rapide"@fr .
<http://example.org/c> <http://example.org/label> "slow turtle" .
"#;

const SEARCH: &str = r#"PREFIX quiver: <https://quiver-rdf.github.io/ns#>
SELECT ?s { ?s <http://example.org/label> ?l . ?l quiver:matches "quick OR renards" } ORDER BY ?s"#;

fn setup(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("text-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.nt"), DATA).unwrap();
    dir
}

fn rows(location: &Path, query: &str) -> Vec<String> {
    tsv_rows(location, query, &[])
}

#[test]
fn load_search_update_explain_drop_and_build() {
    let dir = setup("cli");
    let store = dir.join("store");
    let output = quiver()
        .args(["load", "--text-index", "--location"])
        .arg(&store)
        .arg(dir.join("data.nt"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("text index: 3 literals"), "{stderr}");
    let info = String::from_utf8(ok_at(&["info"], &store).stdout).unwrap();
    assert!(info.contains("text index"), "{info}");
    // French stems: `renards` finds `renard`.
    assert_eq!(
        rows(&store, SEARCH),
        ["<http://example.org/a>", "<http://example.org/b>"]
    );
    ok_at(
        &[
            "update",
            "--update",
            r#"INSERT DATA { <http://example.org/d> <http://example.org/label> "Quick thinking" }"#,
        ],
        &store,
    );
    assert_eq!(
        rows(&store, SEARCH),
        [
            "<http://example.org/a>",
            "<http://example.org/b>",
            "<http://example.org/d>"
        ]
    );
    let explain = ok_at(&["query", "--explain", "--query", SEARCH], &store);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&explain.stdout),
        String::from_utf8_lossy(&explain.stderr)
    );
    assert!(text.contains("text search: 3 literals"), "{text}");
    ok_at(&["text-index", "drop"], &store);
    let info = String::from_utf8(ok_at(&["info"], &store).stdout).unwrap();
    assert!(!info.contains("text index"), "{info}");
    let output = run_at(&["query", "--query", SEARCH], &store);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("quiver text-index build"), "{stderr}");
    let built = ok_at(&["text-index", "build"], &store);
    assert!(String::from_utf8_lossy(&built.stderr).contains("4 literals"));
    assert_eq!(rows(&store, SEARCH).len(), 3);
}
