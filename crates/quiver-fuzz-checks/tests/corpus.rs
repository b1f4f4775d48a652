//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`) through the same checks
//! the fuzz targets run, on stable Rust, so every input once found interesting (or
//! crashing, then fixed) is checked on every test run.

use std::path::PathBuf;

fn corpus_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn every_target_has_a_corpus_and_every_input_passes() {
    let root = corpus_root();
    for &(target, check) in quiver_fuzz_checks::TARGETS {
        let dir = root.join(target);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; the corpus of target {target} must be checked in (scripts/fuzz creates it)",
                dir.display()
            )
        });
        let mut files: Vec<PathBuf> = entries
            .map(|e| e.expect("a corpus entry").path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(
            !files.is_empty(),
            "{}: no inputs; seed the corpus of target {target} (see README, Fuzzing)",
            dir.display()
        );
        for file in &files {
            let data = std::fs::read(file).expect("a corpus file reads");
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "{target}: {} fails its check",
                file.display()
            );
        }
        eprintln!("{target}: {} inputs replayed", files.len());
    }
}

#[test]
fn no_corpus_directory_lacks_a_target() {
    for entry in std::fs::read_dir(corpus_root()).expect("fuzz/corpus exists") {
        let name = entry.expect("a corpus entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            quiver_fuzz_checks::target(&name).is_some(),
            "fuzz/corpus/{name} belongs to no target"
        );
    }
}
