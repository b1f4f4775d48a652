//! `quiver.Store`: a store in memory or in a directory, loading RDF, running SPARQL and
//! SPARQL Update.
//!
//! The store is a `quiver_db::Database`: every query reads the version current when it
//! starts (a snapshot, never blocked by writers), and every update (`update`, `add`,
//! `remove`) is one transaction that makes the next version; on a directory it is logged
//! there (synced before the call returns), so the CLI sees it too. A load builds a new
//! version in bulk (merging the old content), saves it as the directory's snapshot and
//! swaps it in. Writes (loads and updates) run one at a time.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::MutexGuard;
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use oxrdfio::RdfParser;
use pyo3::exceptions::{PySyntaxError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use quiver_db::{Database, DbOptions};
use quiver_loader::{load_files, load_lubm, load_quads, Format, LoadOptions, NoProgress};
use quiver_lubm::LubmConfig;
use quiver_sparql::{
    CachedQuery, ExecOptions, PrepareOptions, QueryCache, QueryError, QueryResults,
};

use quiver_model::IdsExhausted;
use quiver_store::{ChangeSet, Quad as EncodedQuad};

use crate::errors::{db_error, io_error, load_error, query_error, store_error};
use crate::results::{OwnedSolutions, QuerySolutions, QueryTriples};
use crate::run::{abandonable, interruptible};
use crate::terms::{term_from_python, BlankNode, NamedNode, Triple};

/// An RDF store: `Store()` in memory, `Store(path)` in a directory (opened if it holds a
/// store, else created).
#[pyclass(module = "quiver", frozen)]
pub struct Store {
    /// The database: its snapshot for queries, its transactions for writes.
    database: Arc<Database>,
    path: Option<PathBuf>,
    /// Writes (loads, updates) one at a time: each builds on the version the previous one
    /// left.
    writing: Mutex<()>,
    /// Queries prepared on the latest version, by text: a repeated light query is neither
    /// parsed nor planned again.
    queries: Arc<QueryCache>,
}

/// Prepared queries kept per store.
const CACHED_QUERIES: usize = 256;

/// A cached query whose last run took at most this long (µs) runs on the calling thread,
/// without the hand-off that lets Ctrl-C interrupt it.
const INLINE_MICROS: u64 = 1_000;

enum Answer {
    Solutions(OwnedSolutions),
    Boolean(bool),
    Graph(Vec<oxrdf::Triple>),
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn empty_store() -> PyResult<quiver_store::Store> {
    load_quads(std::iter::empty(), None)
        .map(|(store, _)| store)
        .map_err(load_error)
}

/// The loader's format for a `format` argument: a name or media type (`"nt"`,
/// `"text/turtle"`), or an object with a `media_type` (pyoxigraph's `RdfFormat`).
fn parse_format(format: &Bound<'_, PyAny>) -> PyResult<Format> {
    let name: String = if let Ok(text) = format.downcast::<PyString>() {
        text.to_str()?.to_owned()
    } else if let Ok(media_type) = format.getattr("media_type") {
        media_type.extract()?
    } else {
        return Err(PyTypeError::new_err(
            "format is a name or media type such as 'nt' or 'text/turtle'",
        ));
    };
    let base = name.split(';').next().unwrap_or_default().trim();
    Format::from_name(base).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown RDF format '{name}' (nt, nq, ttl, trig, rdfxml, jsonld or their media types)"
        ))
    })
}

/// Parses `bytes` into quads, every error with its line and column.
fn parse_quads(
    bytes: &[u8],
    format: Format,
    base_iri: Option<&str>,
    to_graph: Option<oxrdf::GraphName>,
    rename_blank_nodes: bool,
    source: &str,
) -> PyResult<Vec<oxrdf::Quad>> {
    let mut parser = RdfParser::from_format(format.rdf_format());
    if let Some(base) = base_iri {
        parser = parser
            .with_base_iri(base)
            .map_err(|e| PyValueError::new_err(format!("invalid base IRI: {e}")))?;
    }
    if let Some(graph) = to_graph {
        parser = parser.with_default_graph(graph);
    }
    if rename_blank_nodes {
        parser = parser.rename_blank_nodes();
    }
    let mut quads = Vec::new();
    for quad in parser.for_slice(bytes) {
        match quad {
            Ok(quad) => quads.push(quad),
            Err(error) => {
                let message = match error.location() {
                    Some(location) => format!(
                        "{source}:{}:{}: {error}",
                        location.start.line + 1,
                        location.start.column + 1
                    ),
                    None => format!("{source}: {error}"),
                };
                return Err(PySyntaxError::new_err(message));
            }
        }
    }
    Ok(quads)
}

impl Store {
    fn database(&self) -> Arc<Database> {
        Arc::clone(&self.database)
    }

    fn snapshot(&self) -> Arc<quiver_store::Store> {
        self.database().snapshot()
    }

    /// The write lock, waited for without the GIL (which the writer holding it may need
    /// to finish).
    fn lock_writes(&self, py: Python<'_>) -> MutexGuard<'_, ()> {
        loop {
            match self.writing.try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(poisoned)) => return poisoned.into_inner(),
                Err(TryLockError::WouldBlock) => {
                    py.allow_threads(|| std::thread::sleep(Duration::from_millis(1)))
                }
            }
        }
    }

    /// Builds a new store on top of the current one with `build` (Ctrl-C abandons it,
    /// leaving the store as it was), saves it when the store has a directory, and makes it
    /// current. A store with reasoning keeps it: the entailment is computed again over
    /// what `build` made.
    fn replace(
        &self,
        py: Python<'_>,
        build: impl FnOnce(&quiver_store::Store) -> PyResult<quiver_store::Store> + Send + 'static,
    ) -> PyResult<()> {
        self.replace_with(py, move |existing| {
            let profile = existing.entailment().map(quiver_store::Entailment::profile);
            let store = build(existing)?;
            Ok(match profile {
                Some(profile) => store.reasoned(profile, &mut |_| {}).0,
                None => store,
            })
        })
    }

    /// [`Store::replace`] with the store `build` makes as it is.
    fn replace_with(
        &self,
        py: Python<'_>,
        build: impl FnOnce(&quiver_store::Store) -> PyResult<quiver_store::Store> + Send + 'static,
    ) -> PyResult<()> {
        let _writing = self.lock_writes(py);
        let existing = self.snapshot();
        let store = abandonable(py, move || build(&existing))??;
        let database = self.database();
        py.allow_threads(|| database.replace(|_| Ok(store)))
            .map_err(db_error)?;
        Ok(())
    }

    /// Commits the change set `build` makes from the latest version, as one transaction
    /// (the GIL released).
    fn commit(
        &self,
        py: Python<'_>,
        build: impl FnOnce(&quiver_store::Store) -> Result<ChangeSet, IdsExhausted> + Send,
    ) -> PyResult<()> {
        let _writing = self.lock_writes(py);
        let database = self.database();
        py.allow_threads(|| {
            database.commit_changes(|store| {
                let changes = build(store).map_err(QueryError::from)?;
                Ok(if changes.is_empty() {
                    Vec::new()
                } else {
                    vec![changes]
                })
            })
        })
        .map_err(db_error)?;
        Ok(())
    }
}

/// A quad given to `add` or `remove`: a `Triple`, or a tuple of subject, predicate, object
/// and optionally a graph name (a `NamedNode`, a `BlankNode`, or `None` for the default
/// graph).
fn quad_from_python(quad: &Bound<'_, PyAny>) -> PyResult<oxrdf::Quad> {
    if let Ok(triple) = quad.downcast::<Triple>() {
        return Ok(triple
            .get()
            .inner
            .clone()
            .in_graph(oxrdf::GraphName::DefaultGraph));
    }
    let items: Vec<Bound<'_, PyAny>> = match quad.try_iter() {
        Ok(items) if !quad.is_instance_of::<PyString>() => items.collect::<PyResult<_>>()?,
        _ => {
            return Err(PyTypeError::new_err(
                "a quad is a Triple or a tuple (subject, predicate, object[, graph])",
            ))
        }
    };
    if !(3..=4).contains(&items.len()) {
        return Err(PyValueError::new_err(format!(
            "a quad has 3 or 4 terms (subject, predicate, object[, graph]), not {}",
            items.len()
        )));
    }
    let subject = match term_from_python(&items[0])? {
        oxrdf::Term::NamedNode(node) => oxrdf::NamedOrBlankNode::NamedNode(node),
        oxrdf::Term::BlankNode(node) => oxrdf::NamedOrBlankNode::BlankNode(node),
        _ => {
            return Err(PyTypeError::new_err(
                "a subject is a NamedNode or BlankNode",
            ))
        }
    };
    let oxrdf::Term::NamedNode(predicate) = term_from_python(&items[1])? else {
        return Err(PyTypeError::new_err("a predicate is a NamedNode"));
    };
    let object = term_from_python(&items[2])?;
    let graph = match items.get(3) {
        None => oxrdf::GraphName::DefaultGraph,
        Some(graph) => graph_from_python(graph)?.unwrap_or(oxrdf::GraphName::DefaultGraph),
    };
    Ok(oxrdf::Quad::new(subject, predicate, object, graph))
}

/// A graph name: `NamedNode`, `BlankNode`, or `None`/pyoxigraph's `DefaultGraph` (`None`).
fn graph_from_python(graph: &Bound<'_, PyAny>) -> PyResult<Option<oxrdf::GraphName>> {
    if graph.is_none() {
        Ok(None)
    } else if let Ok(node) = graph.downcast::<NamedNode>() {
        Ok(Some(node.get().inner.clone().into()))
    } else if let Ok(node) = graph.downcast::<BlankNode>() {
        Ok(Some(node.get().inner.clone().into()))
    } else if graph.get_type().name()? == "DefaultGraph" {
        Ok(Some(oxrdf::GraphName::DefaultGraph))
    } else {
        Err(PyTypeError::new_err(
            "a graph name is a NamedNode, a BlankNode or None",
        ))
    }
}

/// The term of a graph name (`None` for the default graph).
fn graph_term(graph: &oxrdf::GraphName) -> Option<oxrdf::TermRef<'_>> {
    match graph {
        oxrdf::GraphName::NamedNode(node) => Some(node.into()),
        oxrdf::GraphName::BlankNode(node) => Some(node.into()),
        oxrdf::GraphName::DefaultGraph => None,
    }
}

#[pymethods]
impl Store {
    #[new]
    #[pyo3(signature = (path = None))]
    fn new(py: Python<'_>, path: Option<PathBuf>) -> PyResult<Self> {
        let database = match &path {
            None => Database::in_memory(empty_store()?),
            Some(path) => py.allow_threads(|| open_or_create(path))?,
        };
        Ok(Self {
            database: Arc::new(database),
            path,
            writing: Mutex::new(()),
            queries: Arc::new(QueryCache::new(CACHED_QUERIES)),
        })
    }

    /// Loads RDF: from `input` (bytes, str, or a binary/text file object) in `format`, or
    /// from the file at `path` (format from its extension unless given; `.gz` read as
    /// gzip). `base_iri` resolves relative IRIs; `to_graph` (a NamedNode or BlankNode) puts
    /// the triples into that named graph instead of the default graph. The same signature
    /// as pyoxigraph's `Store.load`. Malformed input raises `SyntaxError` with
    /// `line:column`, a missing file `FileNotFoundError`; the store is unchanged then, and
    /// after Ctrl-C too.
    #[pyo3(signature = (input = None, format = None, *, path = None, base_iri = None, to_graph = None))]
    fn load(
        &self,
        py: Python<'_>,
        input: Option<&Bound<'_, PyAny>>,
        format: Option<&Bound<'_, PyAny>>,
        path: Option<PathBuf>,
        base_iri: Option<String>,
        to_graph: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let format = format.map(parse_format).transpose()?;
        let to_graph: Option<oxrdf::GraphName> = match to_graph {
            None => None,
            Some(graph) => graph_from_python(graph).map_err(|_| {
                PyTypeError::new_err("to_graph is a NamedNode, a BlankNode or None")
            })?,
        };
        let threads = default_threads();
        let (bytes, source) = match (input, &path) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err("give either input or path, not both"))
            }
            (None, None) => return Err(PyValueError::new_err("give input or path to load")),
            (None, Some(path)) if base_iri.is_none() && to_graph.is_none() => {
                let paths = vec![path.clone()];
                let options = LoadOptions {
                    format,
                    lenient: false,
                    threads,
                };
                return self.replace(py, move |existing| {
                    load_files(&paths, &options, Some(existing), &NoProgress)
                        .map(|(store, _)| store)
                        .map_err(load_error)
                });
            }
            (None, Some(path)) => (read_file(py, path)?, path.display().to_string()),
            (Some(input), None) => (input_bytes(input)?, "input".to_owned()),
        };
        let format = match (format, &path) {
            (Some(format), _) => format,
            (None, Some(path)) => format_of_path(path)?,
            (None, None) => {
                return Err(PyValueError::new_err(
                    "give the format of the input (e.g. format='text/turtle')",
                ))
            }
        };
        self.replace(py, move |existing| {
            let quads = parse_quads(
                &bytes,
                format,
                base_iri.as_deref(),
                to_graph,
                existing.triples() > 0,
                &source,
            )?;
            load_quads(quads, Some(existing))
                .map(|(store, _)| store)
                .map_err(load_error)
        })
    }

    /// Computes the entailment of the default graph under `profile` ("rdfs" or
    /// "owl-rl"; the ontology is read from the store's own triples), or drops it with
    /// `None`. Queries read it with `reasoning=True`; later loads and updates keep it
    /// current.
    #[pyo3(signature = (profile = Some("owl-rl".to_owned())))]
    fn reason(&self, py: Python<'_>, profile: Option<String>) -> PyResult<()> {
        let profile = profile
            .map(|name| name.parse::<quiver_store::Profile>())
            .transpose()
            .map_err(PyValueError::new_err)?;
        self.replace_with(py, move |existing| {
            Ok(match profile {
                Some(profile) => existing.reasoned(profile, &mut |_| {}).0,
                None => existing.without_entailment(),
            })
        })
    }

    /// Builds the full-text index of the store's string literals, searched with
    /// `?literal quiver:matches "words"` (and `quiver:score`); later loads and updates keep
    /// it current. A store in a directory keeps it there.
    fn build_text_index(&self, py: Python<'_>) -> PyResult<()> {
        let _writing = self.lock_writes(py);
        let database = self.database();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        py.allow_threads(|| database.build_text_index(threads))
            .map_err(db_error)?;
        Ok(())
    }

    /// The reasoning profile of the store's entailment ("rdfs", "owl-rl"), or `None`.
    #[getter]
    fn reasoning(&self) -> Option<&'static str> {
        self.snapshot()
            .entailment()
            .map(|layer| layer.profile().name())
    }

    /// Adds LUBM-`universities`, generated in process (UBA 1.7, seed 0).
    fn load_lubm(&self, py: Python<'_>, universities: u32) -> PyResult<()> {
        if universities == 0 {
            return Err(PyValueError::new_err("universities must be at least 1"));
        }
        let threads = default_threads();
        self.replace(py, move |existing| {
            let existing = (existing.triples() > 0).then_some(existing);
            load_lubm(
                LubmConfig::standard(universities),
                threads,
                existing,
                &NoProgress,
            )
            .map(|(store, _)| store)
            .map_err(load_error)
        })
    }

    /// Runs a SPARQL query: SELECT gives `QuerySolutions`, ASK a bool, CONSTRUCT and
    /// DESCRIBE `QueryTriples`. The GIL is released while it runs; Ctrl-C cancels it.
    /// `timeout` (seconds) raises `QueryTimeout` when passed, `max_results` raises
    /// `QueryError` for a larger result, `max_memory` (bytes its operators may hold)
    /// `QueryError` for a query that needs more; `threads` is the number of worker threads
    /// (default all cores).
    #[pyo3(signature = (query, *, base_iri = None, timeout = None, max_results = None, threads = None, max_memory = None, reasoning = false))]
    #[allow(clippy::too_many_arguments)]
    fn query(
        &self,
        py: Python<'_>,
        query: &str,
        base_iri: Option<String>,
        timeout: Option<f64>,
        max_results: Option<usize>,
        threads: Option<usize>,
        max_memory: Option<usize>,
        reasoning: bool,
    ) -> PyResult<PyObject> {
        let timeout = match timeout {
            Some(t) if !(t > 0.0 && t.is_finite()) => {
                return Err(PyValueError::new_err(
                    "timeout must be a positive number of seconds",
                ))
            }
            other => other.map(Duration::from_secs_f64),
        };
        if threads == Some(0) {
            return Err(PyValueError::new_err("threads must be at least 1"));
        }
        let store = self.snapshot();
        let store = if reasoning {
            Arc::new(store.entailed().ok_or_else(|| {
                PyValueError::new_err(
                    "reasoning=True: the store holds no entailment; call store.reason('owl-rl') or store.reason('rdfs') first",
                )
            })?)
        } else {
            store
        };
        let cancel = Arc::new(AtomicBool::new(false));
        let options = ExecOptions {
            threads: threads.unwrap_or_else(default_threads),
            timeout,
            max_results,
            max_memory,
            cancel: Some(Arc::clone(&cancel)),
            service: Some(service_client()),
            ..ExecOptions::default()
        };
        let prepare_options = PrepareOptions {
            base_iri,
            ..PrepareOptions::default()
        };
        let cache = Arc::clone(&self.queries);
        let cached = cache.get(&store, query, &prepare_options);
        let text = query.to_owned();
        // Owns what it reads: it may run on the worker thread of `interruptible`.
        let run = move |cached: Option<Arc<CachedQuery>>| -> Result<Answer, QueryError> {
            let cached = match cached {
                Some(cached) => cached,
                None => cache.prepare(&store, &text, &prepare_options)?.0,
            };
            let started = Instant::now();
            let results = cached.query.execute(&store, &options)?;
            cached.record_cost(started.elapsed().as_secs_f64() * 1e6, 0);
            Ok(match results {
                QueryResults::Solutions(solutions) => {
                    Answer::Solutions(OwnedSolutions::new(solutions.with_shared_store(&store)?))
                }
                QueryResults::Boolean(value) => Answer::Boolean(value),
                QueryResults::Graph(triples) => Answer::Graph(triples),
            })
        };
        let answer = if cached
            .as_ref()
            .is_some_and(|c| c.was_cheaper_than(INLINE_MICROS, u64::MAX))
        {
            py.allow_threads(move || run(cached))
        } else {
            interruptible(py, &cancel, move || run(cached))?
        }
        .map_err(query_error)?;
        Ok(match answer {
            Answer::Solutions(owned) => QuerySolutions::new(owned)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            Answer::Boolean(value) => value.into_pyobject(py)?.to_owned().into_any().unbind(),
            Answer::Graph(triples) => QueryTriples::new(triples)
                .into_pyobject(py)?
                .into_any()
                .unbind(),
        })
    }

    /// Runs a SPARQL Update request as one transaction: every operation, each seeing the
    /// ones before it, or none (on any error the store is unchanged). The GIL is released
    /// while it runs; Ctrl-C cancels it. Invalid SPARQL raises `SyntaxError` with
    /// `line:column`; a failed operation (a graph that exists for `CREATE`, a `LOAD` that
    /// cannot be read) raises `quiver.QueryError`, a time limit `quiver.QueryTimeout`.
    /// `LOAD` reads local files (`file:` IRIs or paths). On a directory, the update is
    /// logged there before the call returns. `max_memory` bounds what its operators hold,
    /// as for `query`.
    #[pyo3(signature = (update, *, base_iri = None, timeout = None, max_memory = None))]
    fn update(
        &self,
        py: Python<'_>,
        update: &str,
        base_iri: Option<String>,
        timeout: Option<f64>,
        max_memory: Option<usize>,
    ) -> PyResult<()> {
        let timeout = match timeout {
            Some(t) if !(t > 0.0 && t.is_finite()) => {
                return Err(PyValueError::new_err(
                    "timeout must be a positive number of seconds",
                ))
            }
            other => other.map(Duration::from_secs_f64),
        };
        // Syntax first, with the GIL: nothing to wait for. An INSERT DATA that the fast
        // reader takes is read by it again when it runs, never by the SPARQL parser.
        if quiver_db::parse_insert_data(update).is_none() {
            quiver_sparql::update::parse_update(update, base_iri.as_deref())
                .map_err(query_error)?;
        }
        let _writing = self.lock_writes(py);
        let database = self.database();
        let cancel = Arc::new(AtomicBool::new(false));
        let options = ExecOptions {
            threads: default_threads(),
            timeout,
            max_memory,
            cancel: Some(Arc::clone(&cancel)),
            service: Some(service_client()),
            ..ExecOptions::default()
        };
        let update = update.to_owned();
        interruptible(py, &cancel, move || {
            database.update(&update, base_iri.as_deref(), &options)
        })?
        .map_err(db_error)?;
        Ok(())
    }

    /// Adds a quad: a `Triple`, or a tuple `(subject, predicate, object[, graph])` (graph
    /// a `NamedNode`, a `BlankNode` or `None` for the default graph). One transaction;
    /// adding a quad the store has changes nothing.
    fn add(&self, py: Python<'_>, quad: &Bound<'_, PyAny>) -> PyResult<()> {
        let quad = quad_from_python(quad)?;
        self.commit(py, move |store| {
            let mut changes = ChangeSet::new(store);
            let subject = changes.intern(store, quad.subject.as_ref().into())?;
            let predicate = changes.intern(store, quad.predicate.as_ref().into())?;
            let object = changes.intern(store, quad.object.as_ref())?;
            let graph = match graph_term(&quad.graph_name) {
                Some(g) => Some(changes.intern(store, g)?),
                None => None,
            };
            changes.inserts.push(EncodedQuad {
                subject,
                predicate,
                object,
                graph,
            });
            Ok(changes)
        })
    }

    /// Removes a quad (as `add` takes it), if the store has it. One transaction.
    fn remove(&self, py: Python<'_>, quad: &Bound<'_, PyAny>) -> PyResult<()> {
        let quad = quad_from_python(quad)?;
        self.commit(py, move |store| {
            let mut changes = ChangeSet::new(store);
            let id = |term: oxrdf::TermRef<'_>| store.term_id(term);
            let graph = match graph_term(&quad.graph_name) {
                None => Some(None),
                Some(graph) => id(graph).map(Some),
            };
            if let (Some(subject), Some(predicate), Some(object), Some(graph)) = (
                id(quad.subject.as_ref().into()),
                id(quad.predicate.as_ref().into()),
                id(quad.object.as_ref()),
                graph,
            ) {
                changes.deletes.push(EncodedQuad {
                    subject,
                    predicate,
                    object,
                    graph,
                });
            }
            Ok(changes)
        })
    }

    /// The number of triples (default graph and named graphs).
    fn __len__(&self) -> usize {
        self.snapshot().triples() as usize
    }

    /// The directory of the store, or None in memory.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    fn __repr__(&self) -> String {
        match &self.path {
            Some(path) => format!("<Store path={} triples={}>", path.display(), self.__len__()),
            None => format!("<Store in memory triples={}>", self.__len__()),
        }
    }
}

/// The database of the store directory `path`, created empty when it holds no store.
fn open_or_create(path: &Path) -> PyResult<Database> {
    if !path.join("manifest.json").exists() {
        std::fs::create_dir_all(path)
            .map_err(|e| io_error(path, &e, format!("cannot create {}: {e}", path.display())))?;
        let store = empty_store()?;
        store.save(path).map_err(store_error)?;
    }
    open_database(path)
}

/// Opens the database of the store directory `path` (its snapshot and log).
fn open_database(path: &Path) -> PyResult<Database> {
    Database::open(path, DbOptions::default()).map_err(db_error)
}

fn read_file(py: Python<'_>, path: &Path) -> PyResult<Vec<u8>> {
    let bytes = py
        .allow_threads(|| std::fs::read(path))
        .map_err(|e| io_error(path, &e, format!("{}: {e}", path.display())))?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(&mut flate2_decoder(&bytes), &mut decoded)
            .map_err(|e| io_error(path, &e, format!("{}: {e}", path.display())))?;
        return Ok(decoded);
    }
    Ok(bytes)
}

fn flate2_decoder(bytes: &[u8]) -> impl std::io::Read + '_ {
    flate2::read::MultiGzDecoder::new(bytes)
}

fn format_of_path(path: &Path) -> PyResult<Format> {
    let name = path.to_string_lossy();
    let name = name.strip_suffix(".gz").unwrap_or(&name);
    Path::new(name)
        .extension()
        .and_then(|e| Format::from_extension(&e.to_string_lossy()))
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "cannot tell the format of {} from its extension: give format",
                path.display()
            ))
        })
}

/// The bytes of a load's `input`: bytes, str, or a file object's `read()`.
fn input_bytes(input: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = input.downcast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(text) = input.downcast::<PyString>() {
        return Ok(text.to_str()?.as_bytes().to_vec());
    }
    if input.hasattr("read")? {
        let content = input.call_method0("read")?;
        return input_bytes(&content);
    }
    if let Ok(bytes) = input.extract::<Vec<u8>>() {
        return Ok(bytes);
    }
    Err(PyTypeError::new_err(
        "input is bytes, str or a file object (give a file name as path=)",
    ))
}

/// SERVICE calls any endpoint from the package, as from the `quiver query` command (30 s
/// per call, 64 MiB per answer).
fn service_client() -> Arc<dyn quiver_sparql::ServiceClient> {
    Arc::new(quiver_federation::HttpServiceClient::new(
        quiver_federation::FederationConfig::default(),
    ))
}
