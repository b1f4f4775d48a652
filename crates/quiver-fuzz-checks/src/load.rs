//! The loaders: bytes in one syntax → the bulk loader, differential against oxttl.
//!
//! The input is written to a file and loaded the way `quiver load` does (line-based
//! formats cut into blocks, parsed by the loader's own pipeline). The loader must return
//! a store or a clean error; oxttl's parser of the same syntax is the reference: if either
//! accepts a document with statements, both must, and the store must hold exactly the
//! distinct statements oxttl reads.

use std::cell::RefCell;
use std::collections::HashSet;
use std::path::PathBuf;

use quiver_loader::{load_files, Format, LoadOptions, NoProgress};

use crate::fixture::Scratch;

thread_local! {
    static SCRATCH: RefCell<Option<Scratch>> = const { RefCell::new(None) };
}

/// N-Triples.
pub fn ntriples(data: &[u8]) {
    let reference = oxttl::NTriplesParser::new()
        .for_slice(data)
        .map(|t| t.map(|t| t.to_string()).map_err(|e| e.to_string()))
        .collect();
    check(data, Format::NTriples, "nt", reference);
}

/// Turtle.
pub fn turtle(data: &[u8]) {
    let reference = oxttl::TurtleParser::new()
        .for_slice(data)
        .map(|t| t.map(|t| t.to_string()).map_err(|e| e.to_string()))
        .collect();
    check(data, Format::Turtle, "ttl", reference);
}

/// N-Quads.
pub fn nquads(data: &[u8]) {
    let reference = oxttl::NQuadsParser::new()
        .for_slice(data)
        .map(|q| q.map(|q| q.to_string()).map_err(|e| e.to_string()))
        .collect();
    check(data, Format::NQuads, "nq", reference);
}

/// Loads `data` as `format` and compares with `reference`, oxttl's statements (as text,
/// so that distinct statements can be counted) or its first error.
fn check(data: &[u8], format: Format, extension: &str, reference: Result<Vec<String>, String>) {
    let path = SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        let dir = scratch.get_or_insert_with(|| Scratch::new("load"));
        let path: PathBuf = dir.0.join(format!("input.{extension}"));
        std::fs::write(&path, data).expect("the scratch file is writable");
        path
    });
    let options = LoadOptions {
        format: Some(format),
        lenient: false,
        threads: 1,
    };
    let loaded = load_files(std::slice::from_ref(&path), &options, None, &NoProgress);
    match (loaded, reference) {
        (Ok((store, _)), Ok(statements)) => {
            let distinct: HashSet<&String> = statements.iter().collect();
            assert_eq!(
                store.triples(),
                distinct.len() as u64,
                "the loader's store and oxttl disagree on the number of distinct statements"
            );
        }
        (Ok((store, _)), Err(error)) => {
            panic!(
                "the loader accepted a document oxttl refuses ({error}); store of {} triples",
                store.triples()
            )
        }
        (Err(error), Ok(statements)) if !statements.is_empty() => {
            panic!(
                "the loader refused a document of {} statements oxttl accepts: {error}",
                statements.len()
            )
        }
        (Err(error), _) => {
            // A clean error names the input file.
            let message = error.to_string();
            assert!(
                message.contains("input."),
                "the loader's error does not name the file: {message}"
            );
        }
    }
}
