//! Quiver's parallel bulk loader.
//!
//! `files → parse (parallel, per file and per block of a large line-based file) → encode
//! each chunk locally → merge into one sorted dictionary → id triples → build the store`.
//! Parsing uses Oxigraph's parsers (`oxrdfio`/`oxttl`); the LUBM generator can feed the
//! same pipeline directly ([`load_lubm`]). Loading into an existing store merges its
//! content with the new data and rebuilds the index.

mod chunk;
mod fast_lines;
mod id_map;
mod insert_data;
mod lubm;
mod merge;
mod parse;
pub mod source;
mod turtle_split;

use std::path::{Path, PathBuf};
use std::time::Instant;

use quiver_lubm::LubmConfig;
use quiver_store::{LoadInfo, Store};

pub use chunk::{Chunk, DEFAULT_GRAPH};
pub use insert_data::{parse_insert_data, InsertData};
pub use source::{collect_sources, Format, Source};

/// Errors of a load. Each names the file (and position) concerned.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    // The I/O error is part of the message, so it is deliberately not exposed as the
    // `source()` too (a field named `source` would be, and `{:#}` would print it twice).
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        path: PathBuf,
        line: u64,
        column: u64,
        message: String,
    },
    #[error("no input: name files or directories to load")]
    NoInput,
    #[error(
        "more distinct terms than 32-bit ids can number; use a build with the wide-ids feature"
    )]
    TooManyTerms,
}

impl LoadError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        LoadError::Io {
            path: path.to_owned(),
            error: source,
        }
    }
}

/// Receives progress while loading (called from several threads).
pub trait Progress: Sync {
    /// Input bytes read (or generated units done, for LUBM).
    fn bytes(&self, _bytes: u64) {}
    /// Statements parsed.
    fn statements(&self, _statements: u64) {}
}

/// Ignores progress.
pub struct NoProgress;
impl Progress for NoProgress {}

/// Options of a file load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Force one syntax for every file (else detected from extensions).
    pub format: Option<Format>,
    /// Skip malformed statements instead of aborting.
    pub lenient: bool,
    pub threads: usize,
}

/// What a load did.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Statements read (duplicates included).
    pub statements: u64,
    /// Malformed statements skipped (`lenient`).
    pub skipped: u64,
    /// The first skipped statements, as `file:line:column: message`.
    pub first_errors: Vec<String>,
    pub seconds: f64,
    /// Where the time went: each phase's wall and processor seconds, in order.
    pub phases: Vec<quiver_model::phases::Phase>,
}

/// Loads `paths` (files or directories), on top of `existing` if given.
pub fn load_files(
    paths: &[PathBuf],
    options: &LoadOptions,
    existing: Option<&Store>,
    progress: &dyn Progress,
) -> Result<(Store, LoadReport), LoadError> {
    with_phases(|| load_files_timed(paths, options, existing, progress))
}

/// Runs a load, its report given the phases it marked.
fn with_phases(
    load: impl FnOnce() -> Result<(Store, LoadReport), LoadError>,
) -> Result<(Store, LoadReport), LoadError> {
    let (loaded, phases) = quiver_model::phases::collect(load);
    loaded.map(|(store, mut report)| {
        report.phases = phases;
        (store, report)
    })
}

fn load_files_timed(
    paths: &[PathBuf],
    options: &LoadOptions,
    existing: Option<&Store>,
    progress: &dyn Progress,
) -> Result<(Store, LoadReport), LoadError> {
    let started = Instant::now();
    let sources = collect_sources(paths, options.format)?;
    // Blank node labels are scoped to their document: with several documents (or data
    // already in the store) each document's labels get a prefix of their own.
    let scoped = sources.len() > 1 || existing.is_some_and(|s| s.triples() > 0);
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id());
    let prefixes: Vec<Option<String>> = (0..sources.len())
        .map(|i| scoped.then(|| format!("l{nonce:x}f{i}_")))
        .collect();
    let (chunks, report) = quiver_model::phases::time("parse", || {
        parse_chunks(&sources, &prefixes, options, progress)
    })?;
    let names = sources
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    finish(chunks, existing, report, names, started)
}

/// Parses `sources` into encoded chunks (each its own local dictionary and statements),
/// as [`load_files`] does before merging them: what a cluster's process parses of its
/// share before sending each term to its owner. `prefixes[i]` scopes the blank node
/// labels of source `i`.
pub fn parse_chunks(
    sources: &[Source],
    prefixes: &[Option<String>],
    options: &LoadOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Chunk>, LoadReport), LoadError> {
    let results = parse::parse_sources(
        sources,
        prefixes,
        options.lenient,
        options.threads,
        progress,
    )?;
    let mut report = LoadReport::default();
    let mut lines_before = vec![0u64; sources.len()];
    let mut statements_per_source = vec![0u64; sources.len()];
    let mut chunks = Vec::with_capacity(results.len() + 1);
    for result in results {
        let source = &sources[result.source];
        if let Some(error) = result.io_error {
            return Err(LoadError::io(&source.path, error));
        }
        for issue in &result.issues {
            // A range of a file numbers its lines from its start: the lines before it are
            // counted only when one of its statements is reported.
            let offset = match source.range {
                Some(range) => {
                    let mut file = std::fs::File::open(&source.path)
                        .map_err(|e| LoadError::io(&source.path, e))?;
                    let (start, _) = parse::line_bounds(&mut file, range)
                        .map_err(|e| LoadError::io(&source.path, e))?;
                    parse::lines_before(&source.path, start)
                        .map_err(|e| LoadError::io(&source.path, e))?
                }
                None => 0,
            };
            let line = offset + lines_before[result.source] + issue.line + 1;
            let error = LoadError::Syntax {
                path: source.path.clone(),
                line,
                column: issue.column + 1,
                message: issue.message.clone(),
            };
            if !options.lenient {
                return Err(error);
            }
            if report.first_errors.len() < 5 {
                report.first_errors.push(error.to_string());
            }
        }
        report.skipped += result.malformed;
        report.statements += result.statements;
        statements_per_source[result.source] += result.statements;
        lines_before[result.source] += result.newlines;
        chunks.push(result.chunk);
        chunks.extend(result.pieces);
    }
    if let Some((source, _)) = sources
        .iter()
        .zip(&statements_per_source)
        .find(|(s, &n)| n == 0 && !options.lenient && s.bytes > 0 && s.range.is_none())
    {
        return Err(LoadError::Input {
            path: source.path.clone(),
            message: "no triples in file".into(),
        });
    }
    Ok((chunks, report))
}

/// The chunks of LUBM-N as the generator makes them (`config` names the universities):
/// what a cluster's process generates of its share.
pub fn lubm_chunks(config: LubmConfig, threads: usize, progress: &dyn Progress) -> Vec<Chunk> {
    lubm::generate_chunks(config, threads, progress)
}

/// Loads LUBM-N straight from the generator, on top of `existing` if given.
pub fn load_lubm(
    config: LubmConfig,
    threads: usize,
    existing: Option<&Store>,
    progress: &dyn Progress,
) -> Result<(Store, LoadReport), LoadError> {
    with_phases(|| {
        let started = Instant::now();
        let chunks = quiver_model::phases::time("generate", || {
            lubm::generate_chunks(config, threads, progress)
        });
        let report = LoadReport {
            statements: chunks.iter().map(|c| c.quads.len() as u64).sum(),
            ..LoadReport::default()
        };
        let name = format!(
            "lubm:{} (seed {}, start {})",
            config.universities, config.seed, config.start_index
        );
        finish(chunks, existing, report, vec![name], started)
    })
}

/// Builds a store from quads already in memory (on top of `existing` if given), through the
/// same merge as a file load. Blank node labels are taken as they are: the caller scopes
/// them when the quads come from several documents.
pub fn load_quads(
    quads: impl IntoIterator<Item = oxrdf::Quad>,
    existing: Option<&Store>,
) -> Result<(Store, LoadReport), LoadError> {
    let started = Instant::now();
    let mut chunk = chunk::Chunk::new();
    for (i, quad) in quads.into_iter().enumerate() {
        chunk.add_quad(quad, None).map_err(|e| LoadError::Input {
            path: "quads".into(),
            message: format!("statement {}: {e}", i + 1),
        })?;
    }
    chunk.seal();
    let report = LoadReport {
        statements: chunk.quads.len() as u64,
        ..LoadReport::default()
    };
    finish(vec![chunk], existing, report, vec!["quads".into()], started)
}

fn finish(
    chunks: Vec<chunk::Chunk>,
    existing: Option<&Store>,
    mut report: LoadReport,
    sources: Vec<String>,
    started: Instant,
) -> Result<(Store, LoadReport), LoadError> {
    let mut info = LoadInfo {
        statements: report.statements,
        skipped: report.skipped,
        seconds: 0.0,
        sources,
        log_sequence: 0,
        partition: None,
    };
    if let Some(existing) = existing {
        let previous = existing.info();
        info.statements += previous.statements;
        info.skipped += previous.skipped;
        let mut all = previous.sources.clone();
        all.append(&mut info.sources);
        info.sources = all;
    }
    let (dictionary, graphs, presorted) = merge::merge(chunks, existing)?;
    // Each phase returns what it freed, so the next one's peak starts from what is live.
    let trim =
        || quiver_model::phases::time("give freed memory back", quiver_model::memory::trim_heap);
    trim();
    let mut store = match presorted {
        Some(presorted) => Store::build_presorted(dictionary, graphs, presorted, info.clone()),
        None => Store::build(dictionary, graphs, info.clone()),
    };
    trim();
    report.seconds = started.elapsed().as_secs_f64();
    info.seconds = report.seconds;
    store.set_info(info);
    Ok((store, report))
}

#[cfg(test)]
mod tests {
    use oxrdf::{BlankNode, GraphName, Literal, NamedNode, Quad};

    use super::*;

    #[test]
    fn load_quads_builds_default_and_named_graphs() {
        let iri = |s: &str| NamedNode::new(format!("http://example.org/{s}")).unwrap();
        let graph = GraphName::NamedNode(iri("g"));
        let quads = vec![
            Quad::new(iri("a"), iri("p"), iri("b"), GraphName::DefaultGraph),
            Quad::new(iri("a"), iri("p"), iri("b"), GraphName::DefaultGraph),
            Quad::new(
                BlankNode::new("x").unwrap(),
                iri("q"),
                Literal::from(1),
                graph,
            ),
        ];
        let (store, report) = load_quads(quads, None).unwrap();
        assert_eq!(report.statements, 3);
        // The duplicate is stored once; the named graph holds the other triple.
        assert_eq!(store.graph().triples(), 1);
        let name = store.iri_id("http://example.org/g").unwrap();
        assert_eq!(store.graph_names().collect::<Vec<_>>(), vec![name]);
        assert_eq!(store.named_graph(name).unwrap().triples(), 1);
        let one = store.term_id(Literal::from(1).as_ref().into()).unwrap();
        let q = store.predicate_id("http://example.org/q").unwrap();
        let blank = store.term_id(BlankNode::new("x").unwrap().as_ref().into());
        let found = store
            .named_graph(name)
            .unwrap()
            .get(blank.unwrap(), q, quiver_store::Direction::Out)
            .to_vec();
        assert_eq!(found, vec![one]);
    }

    #[test]
    fn a_load_reports_where_its_time_went() {
        let (_, report) =
            load_lubm(quiver_lubm::LubmConfig::standard(1), 2, None, &NoProgress).unwrap();
        let names: Vec<&str> = report.phases.iter().map(|p| p.name).collect();
        for phase in [
            "generate",
            "merge the dictionary",
            "statements to ids",
            "index: sort by subject",
            "index: out-records",
            "index: sort by object",
            "index: in-records",
            "classes and statistics",
        ] {
            assert!(names.contains(&phase), "{phase} missing from {names:?}");
        }
        // In the order they ran, each once, and within the load's time.
        assert!(
            names.iter().position(|&n| n == "generate")
                < names.iter().position(|&n| n == "index: in-records")
        );
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), names.len(), "{names:?}");
        let summed: f64 = report.phases.iter().map(|p| p.seconds).sum();
        assert!(
            summed > 0.0 && summed <= report.seconds,
            "{summed} of {}",
            report.seconds
        );

        // A file load parses instead; a load on top of a store merges with it.
        let dir = std::env::temp_dir().join(format!("quiver-phases-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("data.nt");
        std::fs::write(&file, "<http://e/a> <http://e/p> <http://e/b> .\n").unwrap();
        let options = LoadOptions {
            format: None,
            lenient: false,
            threads: 2,
        };
        let (store, report) =
            load_files(std::slice::from_ref(&file), &options, None, &NoProgress).unwrap();
        assert_eq!(report.phases.first().map(|p| p.name), Some("parse"));
        let (_, again) = load_files(&[file], &options, Some(&store), &NoProgress).unwrap();
        assert!(again
            .phases
            .iter()
            .any(|p| p.name == "merge the dictionary"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn load_quads_of_nothing_is_an_empty_store() {
        let (store, report) = load_quads(Vec::new(), None).unwrap();
        assert_eq!(report.statements, 0);
        assert_eq!(store.triples(), 0);
        assert_eq!(store.graph_names().count(), 0);
    }
}
