//! The console's session state and its commands other than `sparql` and `update`:
//! `load`, `stats`, `config`, `help`, `quit`.
//!
//! The session holds the store's database (none until the first update, or a `load` into
//! a location with a log: a session that only reads opens the store read-only), the
//! version queries read (the database's snapshot, taken again after every update and
//! load) and the runtime settings every query uses. `load` adds
//! data the way `quiver load` does (the current version joins the merge), saves the new
//! store to the location and only then swaps it in, so a failed load or save leaves the
//! session's store as it was.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use quiver_db::{Database, SyncMode};
use quiver_loader::{load_files, Format, LoadOptions, NoProgress};
use quiver_sparql::ExecOptions;
use quiver_store::Store;

use crate::limits::{self, human_size, QueryLimits};
use crate::location::{has_log, has_store, open_database, open_snapshot, save_loaded};
use crate::memory::{mib, peak_rss};

/// Whether the session goes on after a command.
pub enum Flow {
    Continue,
    Quit,
}

/// Runtime settings (`config`).
#[derive(Debug, Clone)]
pub struct Settings {
    pub threads: usize,
    pub timeout: Option<Duration>,
    pub max_results: Option<usize>,
    pub max_memory: Option<usize>,
    /// Rows printed for a query typed directly.
    pub rows: usize,
    /// Where heavy exploration steps run, and from how many rows on the GPU.
    pub device: crate::device::DeviceKind,
    pub gpu_min_work: usize,
    pub gpu_memory: Option<usize>,
    /// Queries read the store's entailment (`config reasoning on`).
    pub reasoning: bool,
}

/// The setting names, for `config` and completion.
pub const SETTINGS: [&str; 7] = [
    "threads",
    "timeout",
    "max-results",
    "max-memory",
    "rows",
    "device",
    "reasoning",
];

/// The commands, for `help` and completion.
pub const COMMANDS: [&str; 8] = [
    "sparql", "update", "load", "stats", "config", "help", "quit", "exit",
];

pub struct Session {
    location: PathBuf,
    /// The store's database, once the location holds a store.
    pub(super) database: Option<Database>,
    /// The version queries read: the database's latest snapshot.
    pub(super) store: Option<Arc<Store>>,
    /// How the database's commits reach the disk (`--sync`).
    pub(super) sync: SyncMode,
    pub(super) settings: Settings,
    /// The worker pool of the last thread count that differed from rayon's global pool,
    /// kept so that repeated queries do not start threads each time.
    pool: Mutex<Option<Arc<rayon::ThreadPool>>>,
    /// Prepared queries of the current version, so a query typed again is not planned
    /// again (an update or load makes a new version, which empties it).
    pub(super) queries: quiver_sparql::QueryCache,
    /// The GPU holding the current store's graph (`config device gpu`), if any.
    gpu: Option<Arc<quiver_gpu::GpuDevice>>,
    /// The cluster of processes this session coordinates (`--processes`), whose partitions
    /// run the basic graph patterns; `store` is then its partition 0, read-only.
    pub(super) cluster: Option<crate::local_cluster::LocalCluster>,
    /// What SERVICE calls remote endpoints with.
    pub(super) service: Option<Arc<dyn quiver_sparql::ServiceClient>>,
}

const HELP: &str = "\
commands:
  sparql -f FILE [-n RUNS] [-N PLAN_RUNS] [-m THREADS] [-v ROWS] [-o OUT] [-p PLANFILE] [--explain]
      run the query in FILE RUNS times (average and median latency); PLAN_RUNS times the
      planner; -m threads for this query; -v prints the first ROWS rows; -o writes all results
      (format by extension: .tsv .csv .json .xml .nt .ttl .rdf; default TSV); -p a plan file
      (Wukong format); --explain prints the plan with rows and time per step
  sparql -b BATCHFILE
      run the query files listed in BATCHFILE (one per line, relative to it, each optionally
      followed by the options above)
  SELECT … / ASK … / CONSTRUCT … / DESCRIBE … / PREFIX … / BASE …
      a query typed directly; a blank line ends it (prints the first `rows` rows)
  INSERT … / DELETE … / WITH … / LOAD <IRI> … / CLEAR … / CREATE … / DROP … / ADD … / MOVE … / COPY …
      a SPARQL Update typed directly (after optional PREFIX/BASE lines); a blank line ends
      it; it runs as one transaction and queries see its result
  update -f FILE [--base IRI]
      run the SPARQL Update request in FILE as one transaction
  load [--lenient] [--format F] FILE...
      add RDF files or directories to the store and save it
  stats
      triples, terms, predicates, classes, memory
  config [KEY VALUE]
      show the settings, or set one: threads N, timeout SECONDS|off, max-results N|off,
      max-memory SIZE|off (512M, 4G, 1.5GiB, bytes), rows N, device cpu|gpu|auto,
      reasoning on|off (answer from the store's entailment; see `quiver load --reasoning`)
  help
      this text
  quit | exit | Ctrl-D
      leave the console
";

impl Session {
    /// Opens the store at `location`, or starts empty when nothing is there yet.
    pub fn open(
        location: &Path,
        threads: usize,
        limits: QueryLimits,
        sync: SyncMode,
        cluster: Option<crate::local_cluster::LocalCluster>,
    ) -> Result<Self> {
        // Read-only until the session writes: sessions that only query leave the
        // location's files alone, so several can share a store.
        let store = if let Some(cluster) = &cluster {
            Some(Arc::new(cluster.coordinator.clone()))
        } else if has_store(location) {
            Some(open_snapshot(location)?)
        } else {
            None
        };
        Ok(Self {
            location: location.to_owned(),
            database: None,
            store,
            sync,
            settings: Settings {
                threads: threads.max(1),
                timeout: limits.timeout,
                max_results: limits.max_results,
                max_memory: limits.max_memory,
                rows: 10,
                device: crate::device::DeviceKind::Cpu,
                gpu_min_work: quiver_gpu::device::DEFAULT_MIN_WORK,
                gpu_memory: None,
                reasoning: false,
            },
            pool: Mutex::new(None),
            queries: quiver_sparql::QueryCache::new(64),
            gpu: None,
            cluster,
            service: None,
        })
    }

    pub fn location(&self) -> &Path {
        &self.location
    }

    /// A short description of the store for the banner.
    pub fn describe(&self) -> String {
        match (&self.store, &self.cluster) {
            (_, Some(cluster)) => format!(
                "{} triples, {} terms on a cluster of {}; read-only",
                cluster.triples,
                cluster.coordinator.terms(),
                quiver_sparql::partitions::BgpPartitions::name(cluster.partitions.as_ref())
            ),
            (Some(store), None) => format!("{} triples, {} terms", store.triples(), store.terms()),
            (None, None) => "empty: `load FILE...` adds data".into(),
        }
    }

    /// The store, or an error when no data was loaded yet.
    pub(super) fn store(&self) -> Result<&Store> {
        self.store.as_deref().with_context(|| {
            format!(
                "no store at {} yet: `load FILE...` or an update creates one",
                self.location.display()
            )
        })
    }

    /// Execution options from the settings (and a per-query thread count).
    pub(super) fn exec_options(&self, threads: Option<usize>) -> ExecOptions {
        // Options the engine adds later keep their defaults.
        #[allow(clippy::needless_update)]
        let options = ExecOptions {
            threads: threads.unwrap_or(self.settings.threads),
            timeout: self.settings.timeout,
            max_results: self.settings.max_results,
            max_memory: self.settings.max_memory,
            cancel: None,
            device: crate::device::as_bgp_device(&self.gpu),
            partitions: self.cluster.as_ref().map(|cluster| {
                let partitions: Arc<dyn quiver_sparql::partitions::BgpPartitions> =
                    cluster.partitions.clone();
                partitions
            }),
            service: self.service.clone(),
            ..ExecOptions::default()
        };
        options
    }

    /// Sends heavy steps to `kind` from now on: opens the GPU and copies the current
    /// store's graph to it (a later version of the store runs on the CPU until the device
    /// is set again).
    pub(super) fn set_device(&mut self, kind: crate::device::DeviceKind) -> Result<()> {
        self.gpu = None;
        if kind != crate::device::DeviceKind::Cpu {
            let store = self.store()?.clone();
            self.gpu = crate::device::open(
                kind,
                &store,
                self.settings.gpu_min_work,
                self.settings.gpu_memory,
            )?;
        }
        self.settings.device = kind;
        Ok(())
    }

    /// Runs `work` where rayon has `threads` workers: on the global pool when it has that
    /// many, else on a pool started for this count and kept until another count is asked
    /// for (the engine would otherwise start one per parallel step).
    pub(super) fn with_threads<R: Send>(
        &self,
        threads: usize,
        work: impl FnOnce() -> R + Send,
    ) -> Result<R> {
        if rayon::current_num_threads() == threads {
            return Ok(work());
        }
        let pool = {
            let mut cached = self.pool.lock().unwrap_or_else(|e| e.into_inner());
            match cached.as_ref() {
                Some(pool) if pool.current_num_threads() == threads => pool.clone(),
                _ => {
                    let pool = Arc::new(
                        rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .with_context(|| format!("starting {threads} worker threads"))?,
                    );
                    *cached = Some(pool.clone());
                    pool
                }
            }
        };
        Ok(pool.install(work))
    }

    /// Runs one command line.
    pub fn execute(&mut self, line: &str) -> Result<Flow> {
        let words = split_words(line)?;
        let Some((command, args)) = words.split_first() else {
            return Ok(Flow::Continue);
        };
        let mut out = std::io::stdout().lock();
        match command.as_str() {
            "sparql" => self.sparql(args, &mut out)?,
            "update" => self.update_command(args, &mut out)?,
            "load" => self.load(args, &mut out)?,
            "stats" => self.stats(args, &mut out)?,
            "config" => self.config(args, &mut out)?,
            "help" | "?" => write!(out, "{HELP}").context("writing to standard output")?,
            "quit" | "exit" | "q" => return Ok(Flow::Quit),
            other => bail!("unknown command `{other}` (type `help` for the commands)"),
        }
        out.flush().context("writing to standard output")?;
        Ok(Flow::Continue)
    }

    fn load(&mut self, args: &[String], out: &mut dyn Write) -> Result<()> {
        let mut options = LoadOptions {
            format: None,
            lenient: false,
            threads: self.settings.threads,
        };
        let mut paths = Vec::new();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--lenient" => options.lenient = true,
                "--format" => {
                    let name = args.next().context("load: --format needs a value")?;
                    options.format = Some(Format::from_name(name).with_context(|| {
                        format!("load: unknown format `{name}` (nt, nq, ttl, trig, rdfxml)")
                    })?);
                }
                flag if flag.starts_with("--") => bail!("load: unknown option `{flag}`"),
                path => paths.push(PathBuf::from(path)),
            }
        }
        if paths.is_empty() {
            bail!("load: name files or directories to load");
        }
        let (store, report) = load_files(&paths, &options, self.store.as_deref(), &NoProgress)?;
        // A store with reasoning keeps it, computed again over the new data.
        let profile = self
            .store
            .as_deref()
            .and_then(Store::entailment)
            .map(quiver_store::Entailment::profile);
        let store = match profile {
            Some(profile) => store.reasoned(profile, &mut |_| {}).0,
            None => store,
        };
        if self.database.is_none() && has_log(&self.location) {
            // The new snapshot must restart the log, which the database does.
            self.database = Some(open_database(&self.location, self.sync, false)?);
        }
        let (store, bytes) = save_loaded(self.database.as_ref(), &self.location, store)?;
        writeln!(
            out,
            "loaded {} statements in {:.2} s{}; store: {} triples, {} terms, {} on disk",
            report.statements,
            report.seconds,
            if report.skipped > 0 {
                format!(" ({} malformed skipped)", report.skipped)
            } else {
                String::new()
            },
            store.triples(),
            store.terms(),
            mib(bytes)
        )?;
        // The saved store is the location's new snapshot (and the database's version,
        // when the session has one): queries read it.
        self.store = Some(store);
        Ok(())
    }

    fn stats(&self, args: &[String], out: &mut dyn Write) -> Result<()> {
        if let Some(extra) = args.first() {
            bail!("stats: unexpected argument `{extra}`");
        }
        let store = self.store()?;
        let bytes = store.data_bytes() as u64;
        writeln!(out, "store        {}", self.location.display())?;
        match &self.cluster {
            Some(cluster) => {
                writeln!(
                    out,
                    "cluster      {}",
                    quiver_sparql::partitions::BgpPartitions::name(cluster.partitions.as_ref())
                )?;
                writeln!(out, "triples      {}", cluster.triples)?;
                writeln!(
                    out,
                    "partition 0  {} triples (what the figures below describe)",
                    store.triples()
                )?;
            }
            None => writeln!(out, "triples      {}", store.triples())?,
        }
        writeln!(out, "terms        {}", store.terms())?;
        writeln!(out, "predicates   {}", store.predicate_count())?;
        writeln!(out, "classes      {}", store.class_count())?;
        writeln!(out, "named graphs {}", store.graph_names().count())?;
        writeln!(
            out,
            "memory       {} ({:.1} bytes/triple; dictionary {}, index {})",
            mib(bytes),
            bytes as f64 / store.triples().max(1) as f64,
            mib(store.dictionary().data_bytes() as u64),
            mib(store.graph().data_bytes() as u64)
        )?;
        writeln!(
            out,
            "peak RSS     {}",
            peak_rss().map_or_else(|| "unknown".into(), mib)
        )?;
        Ok(())
    }

    fn config(&mut self, args: &[String], out: &mut dyn Write) -> Result<()> {
        let (key, value) = match args {
            [] => return self.show_settings(out),
            [flag] if flag == "-v" => return self.show_settings(out),
            [pair] if pair.contains('=') => pair.split_once('=').unwrap_or_default(),
            [key, value] => (key.as_str(), value.as_str()),
            [key] => bail!("config: `{key}` needs a value (config {key} VALUE)"),
            _ => bail!("config: expected `config KEY VALUE`"),
        };
        let invalid = |error: String| anyhow::anyhow!("config: {key} {error}");
        match key {
            "threads" => {
                self.settings.threads = limits::parse_threads(value).map_err(invalid)? as usize
            }
            "rows" => {
                self.settings.rows = value.parse().with_context(|| {
                    format!("config: rows must be a whole number, not `{value}`")
                })?
            }
            "timeout" => {
                self.settings.timeout = limits::parse_timeout(value).map_err(invalid)?.into_option()
            }
            "max-results" | "max_results" => {
                self.settings.max_results =
                    limits::parse_rows(value).map_err(invalid)?.into_option()
            }
            "max-memory" | "max_memory" => {
                self.settings.max_memory =
                    limits::parse_memory(value).map_err(invalid)?.into_option()
            }
            "device" => {
                let kind = <crate::device::DeviceKind as clap::ValueEnum>::from_str(value, true)
                    .map_err(|_| {
                        anyhow::anyhow!("config: device is cpu, gpu or auto, not `{value}`")
                    })?;
                self.set_device(kind)?
            }
            "reasoning" => {
                let on = match value {
                    "on" | "true" => true,
                    "off" | "false" => false,
                    _ => bail!("config: reasoning is on or off, not `{value}`"),
                };
                if on {
                    crate::reason::view(self.store()?, true)?;
                }
                self.settings.reasoning = on;
            }
            other => bail!(
                "config: unknown setting `{other}` (settings: {})",
                SETTINGS.join(", ")
            ),
        }
        self.show_settings(out)
    }

    fn show_settings(&self, out: &mut dyn Write) -> Result<()> {
        let s = &self.settings;
        writeln!(out, "threads      {}", s.threads)?;
        match s.timeout {
            Some(t) => writeln!(out, "timeout      {} s", t.as_secs_f64())?,
            None => writeln!(out, "timeout      off")?,
        }
        match s.max_results {
            Some(n) => writeln!(out, "max-results  {n}")?,
            None => writeln!(out, "max-results  off")?,
        }
        match s.max_memory {
            Some(n) => writeln!(out, "max-memory   {}", human_size(n))?,
            None => writeln!(out, "max-memory   off")?,
        }
        writeln!(out, "rows         {}", s.rows)?;
        let device = match (&self.gpu, s.device) {
            (Some(gpu), _) => format!(
                "gpu ({}), steps of {} list entries or more",
                quiver_sparql::device::BgpDevice::name(gpu.as_ref()),
                s.gpu_min_work
            ),
            (None, crate::device::DeviceKind::Auto) => "auto (no GPU: cpu)".to_owned(),
            (None, _) => "cpu".to_owned(),
        };
        writeln!(out, "device       {device}")?;
        let reasoning = match self.store.as_deref().and_then(Store::entailment) {
            Some(layer) if s.reasoning => format!("on ({} entailment)", layer.profile()),
            Some(layer) => format!("off (the store holds its {} entailment)", layer.profile()),
            None => "off (the store holds no entailment)".to_owned(),
        };
        writeln!(out, "reasoning    {reasoning}")?;
        Ok(())
    }

    /// The version queries read: the entailed view when `config reasoning on`.
    pub(super) fn query_store(&self) -> Result<Store> {
        crate::reason::view(self.store()?, self.settings.reasoning)
    }
}

/// Splits a command line into words; single or double quotes keep spaces in a word.
pub fn split_words(line: &str) -> Result<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if let Some(q) = quote {
        bail!("unclosed {q} in the command");
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::split_words;

    #[test]
    fn words_split_on_spaces_and_keep_quoted_spaces() {
        assert_eq!(
            split_words("sparql  -f 'my query.rq' -n 3").unwrap(),
            ["sparql", "-f", "my query.rq", "-n", "3"]
        );
        assert_eq!(
            split_words("load \"a b\"c ''").unwrap(),
            ["load", "a bc", ""]
        );
        assert!(split_words("load 'x").is_err());
        assert!(split_words("   ").unwrap().is_empty());
    }
}
