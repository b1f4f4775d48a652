//! The datasets of `quiver serve`: the store of `--location` at the root, each
//! `--dataset NAME=DIR`, and each `[datasets.NAME]` table of the config file, with the
//! settings it has of its own.
//!
//! A dataset inherits the server's flags; a table may set `location` (required),
//! `writable`, `update-token`, `allow-load`, `create`, `sync`, `timeout` and `max-results`.
//! A writable dataset without a token of its own takes the server's (`--update-token` or
//! `QUIVER_UPDATE_TOKEN`). Relative directories are read from the working directory, as
//! the flags' are.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use quiver_db::{Database, DbOptions};
use quiver_server::Config;

use crate::config_file::{dataset_tables, DatasetTable};
use crate::limits;
use crate::serve_args::ServeArgs;

/// A dataset to open.
pub struct DatasetSpec {
    /// `None`: the root's.
    pub name: Option<String>,
    pub location: PathBuf,
    pub config: Config,
    pub options: DbOptions,
}

/// The keys a `[datasets.NAME]` table may hold.
const TABLE_KEYS: &[&str] = &[
    "location",
    "writable",
    "update-token",
    "allow-load",
    "create",
    "sync",
    "timeout",
    "max-results",
];

/// The datasets `args` name, each with its settings (`server`'s unless its table says
/// otherwise).
pub fn specs(args: &ServeArgs, server: &Config) -> Result<Vec<DatasetSpec>> {
    let options = DbOptions {
        sync: args.sync,
        read_only: !args.writable,
        create: args.create,
        ..DbOptions::default()
    };
    let inherit = |name: Option<String>, location: PathBuf| DatasetSpec {
        name,
        location,
        config: server.clone(),
        options: options.clone(),
    };
    let mut specs = Vec::new();
    if let Some(location) = &args.location {
        specs.push(inherit(None, location.clone()));
    }
    for (name, location) in &args.dataset {
        specs.push(inherit(Some(name.clone()), location.clone()));
    }
    if let (Some(path), None) = (&args.config, &args.cluster) {
        for table in dataset_tables(path)? {
            let mut spec = inherit(Some(table.name.clone()), PathBuf::new());
            apply(&mut spec, &table, args, path)?;
            specs.push(spec);
        }
    }
    if specs.is_empty() {
        bail!(
            "no store to serve: give --location DIR, --dataset NAME=DIR, or a config file \
             with either"
        );
    }
    Ok(specs)
}

/// Sets what `table` says of its dataset.
fn apply(
    spec: &mut DatasetSpec,
    table: &DatasetTable,
    args: &ServeArgs,
    path: &std::path::Path,
) -> Result<()> {
    quiver_server::state::check_dataset_name(&table.name)
        .map_err(|e| anyhow::anyhow!("{} line {}: {e}", path.display(), table.line))?;
    let mut location = None;
    let mut token = None;
    for (key, value, line) in &table.values {
        let at = || {
            format!(
                "{} line {line}: datasets.{}.{key}",
                path.display(),
                table.name
            )
        };
        let flag = |value: &str| match value {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => bail!("{}: takes true or false", at()),
        };
        let bad = |e: String| anyhow::anyhow!("{}: {e}", at());
        match key.as_str() {
            "location" => location = Some(PathBuf::from(value)),
            "writable" => {
                spec.config.writable = flag(value)?;
                spec.options.read_only = !spec.config.writable;
            }
            "update-token" if value.is_empty() => bail!("{}: an empty token", at()),
            "update-token" => token = Some(value.clone()),
            "allow-load" => spec.config.allow_load = flag(value)?,
            "create" => spec.options.create = flag(value)?,
            "sync" => spec.options.sync = crate::location::parse_sync(value).map_err(bad)?,
            "timeout" => {
                spec.config.timeout = limits::parse_timeout(value).map_err(bad)?.into_option()
            }
            "max-results" => {
                spec.config.max_results = limits::parse_rows(value).map_err(bad)?.into_option()
            }
            _ => bail!(
                "{} line {line}: unknown key `{key}` in [datasets.{}] (the keys are: {})",
                path.display(),
                table.name,
                TABLE_KEYS.join(", ")
            ),
        }
    }
    spec.location = location.with_context(|| {
        format!(
            "{} line {}: [datasets.{}] has no location",
            path.display(),
            table.line,
            table.name
        )
    })?;
    spec.config.update_token = match (spec.config.writable, token) {
        (false, _) => None,
        (true, Some(token)) => Some(token),
        (true, None) => args
            .update_token
            .clone()
            .or_else(|| std::env::var("QUIVER_UPDATE_TOKEN").ok())
            .filter(|token| !token.is_empty()),
    };
    spec.config.allow_load &= spec.config.writable;
    Ok(())
}

impl DatasetSpec {
    /// Opens the dataset's store.
    pub fn open(self, args: &ServeArgs) -> Result<quiver_server::Dataset> {
        let db = Database::open(&self.location, self.options)
            .with_context(|| format!("cannot open the store at {}", self.location.display()))?;
        let store = db.snapshot();
        let name = self
            .name
            .as_deref()
            .map_or_else(String::new, |name| format!("dataset {name}, "));
        args.log.say(&format!(
            "{name}store {}: {} triples, {} terms{}",
            self.location.display(),
            store.triples(),
            store.terms(),
            if self.config.writable {
                match self.config.update_token {
                    Some(_) => "; writable, writes need the update token",
                    None => "; writable",
                }
            } else {
                "; read-only"
            }
        ));
        drop(store);
        Ok(quiver_server::Dataset {
            name: self.name,
            db: Arc::new(db),
            config: self.config,
        })
    }
}
