//! `quiver gen lubm` and `quiver gen bsbm` as a user runs them: outputs, exit codes and
//! error messages.

use crate::temp_dir;

use std::io::Read;
use std::process::{Command, Output, Stdio};

use temp_dir::TempDir;

fn quiver() -> Command {
    Command::new(env!("CARGO_BIN_EXE_quiver"))
}

fn run(args: &[&str]) -> Output {
    quiver().args(args).output().expect("quiver runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_clean_error(output: &Output, code: i32, needle: &str) {
    let message = stderr(output);
    assert_eq!(output.status.code(), Some(code), "stderr: {message}");
    assert!(message.starts_with("error:"), "stderr: {message}");
    assert!(message.contains(needle), "{needle:?} not in: {message}");
    assert!(!message.contains("panicked"), "stderr: {message}");
}

#[test]
fn help_is_available_on_every_subcommand() {
    for args in [
        &["--help"][..],
        &["gen", "--help"],
        &["gen", "lubm", "--help"],
        &["gen", "bsbm", "--help"],
        &["demo", "--help"],
    ] {
        let output = run(args);
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("Usage"));
    }
}

#[test]
fn bad_university_counts_are_usage_errors() {
    for value in ["0", "-3", "ten", ""] {
        let output = run(&["gen", "lubm", "--universities", value]);
        assert_clean_error(&output, 2, "universities");
        assert!(output.stdout.is_empty());
    }
    assert_clean_error(&run(&["gen", "lubm"]), 2, "--universities");
    assert_clean_error(
        &run(&["gen", "lubm", "-u", "1", "--threads", "0"]),
        2,
        "threads",
    );
}

#[test]
fn an_unwritable_path_is_a_runtime_error_and_leaves_nothing() {
    let dir = TempDir::new("unwritable");
    let blocker = dir.file("file", "x");
    let target = blocker.join("out.nt");
    let output = run(&[
        "gen",
        "lubm",
        "-u",
        "1",
        "--output",
        target.to_str().unwrap(),
    ]);
    assert_clean_error(&output, 1, "out.nt");
    assert_eq!(stderr(&output).lines().count(), 1);
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 1);
}

#[test]
fn a_full_disk_is_a_runtime_error() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("this test writes to /dev/full, the Linux device that is always full");
    let output = quiver()
        .args(["gen", "lubm", "-u", "1"])
        .stdout(Stdio::from(full))
        .output()
        .unwrap();
    assert_clean_error(&output, 1, "No space left");
    assert_eq!(stderr(&output).lines().count(), 1);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = quiver()
        .args(["gen", "lubm", "-u", "20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 4096];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut head)
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(141));
    assert!(output.stderr.is_empty(), "stderr: {}", stderr(&output));
}

#[test]
fn file_and_gzip_outputs_hold_the_same_triples_as_stdout() {
    let dir = TempDir::new("outputs");
    let plain = dir.join("lubm.nt");
    let gzip = dir.join("lubm.nt.gz");
    let args = [
        "gen",
        "lubm",
        "-u",
        "2",
        "--start-index",
        "7",
        "--seed",
        "-5",
    ];
    let stdout = run(&args);
    assert!(stdout.status.success(), "{}", stderr(&stdout));
    for path in [&plain, &gzip] {
        let output = run(&[&args[..], &["--output", path.to_str().unwrap()]].concat());
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let mut unzipped = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&gzip).unwrap())
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(std::fs::read(&plain).unwrap(), stdout.stdout);
    assert_eq!(unzipped, stdout.stdout);
    assert!(stdout.stdout.starts_with(b"<http://www.University7.edu> "));
    // Only the two outputs: no temporary file left behind.
    assert_eq!(std::fs::read_dir(&dir.0).unwrap().count(), 2);
}

#[test]
fn bsbm_writes_n_triples_the_same_for_a_seed_plain_or_gzip() {
    let dir = TempDir::new("bsbm");
    let args = ["gen", "bsbm", "--products", "100", "--seed", "9"];
    let stdout = run(&args);
    assert!(stdout.status.success(), "{}", stderr(&stdout));
    let triples = oxttl::NTriplesParser::new()
        .for_slice(&stdout.stdout)
        .collect::<Result<Vec<_>, _>>()
        .expect("N-Triples");
    // About 400 triples a product at this scale (offers 200, reviews 108, features …).
    assert!(
        (30_000..60_000).contains(&triples.len()),
        "{}",
        triples.len()
    );
    let product =
        "<http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/dataFromProducer1/Product1> ";
    assert!(String::from_utf8_lossy(&stdout.stdout).contains(product));

    let again = run(&[&args[..], &["--threads", "1"]].concat());
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(again.stdout, stdout.stdout, "same seed, other thread count");
    let other = run(&["gen", "bsbm", "--products", "100", "--seed", "10"]);
    assert_ne!(other.stdout, stdout.stdout, "another seed");

    let gzip = dir.join("bsbm.nt.gz");
    let output = run(&[&args[..], &["--output", gzip.to_str().unwrap()]].concat());
    assert!(output.status.success(), "{}", stderr(&output));
    let compressed = std::fs::read(&gzip).unwrap();
    assert_eq!(compressed[..2], [0x1f, 0x8b], "gzip magic");
    let mut unzipped = Vec::new();
    flate2::read::MultiGzDecoder::new(&compressed[..])
        .read_to_end(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, stdout.stdout);
}

#[test]
fn bad_product_counts_are_usage_errors() {
    for value in ["0", "-3", "many", ""] {
        let output = run(&["gen", "bsbm", "--products", value]);
        assert_clean_error(&output, 2, "products");
        assert!(output.stdout.is_empty());
    }
    assert_clean_error(&run(&["gen", "bsbm"]), 2, "--products");
    assert_clean_error(
        &run(&["gen", "bsbm", "-p", "1", "--threads", "0"]),
        2,
        "threads",
    );
}
