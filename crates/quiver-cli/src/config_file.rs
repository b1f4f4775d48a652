//! `quiver serve --config FILE` (and `quiver cluster --config FILE`): the flags of the
//! command in a TOML file.
//!
//! Every flag has a key: its long name without the dashes (`bind = "0.0.0.0:7878"`,
//! `max-memory = "4G"`, `writable = true`, `dataset = ["a=/data/a"]`). A flag given on the
//! command line overrides the file; the file overrides the defaults. The file is merged
//! before the command line is parsed, by turning each of its keys into the flag it names
//! (`--key=value`) ahead of the flags given, except those the command line gives itself,
//! so that one parser checks everything and `required`/`requires` rules see both. Each
//! value is first checked with its flag's own parser, so a bad one is reported with its
//! key and line; so is an unknown key. `[datasets.NAME]` tables are the datasets of a
//! multi-dataset server, read by `serve` ([`dataset_tables`]).
//!
//! Hand-written on `toml`'s spanned parse tree rather than a serde struct: a struct would
//! repeat every flag of `serve` and drift from it, and its errors would name no line.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::parser::ValueSource;
use clap::{ArgAction, Command};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The subcommands that take `--config`.
const CONFIGURABLE: &[&str] = &["serve", "cluster"];

/// The key of the datasets' tables.
pub const DATASETS_KEY: &str = "datasets";

/// The arguments of the command line with the config file's flags merged in (unchanged
/// without `--config`).
pub fn merge(args: Vec<OsString>, command: &Command) -> Result<Vec<OsString>> {
    let Some(subcommand) = args.get(1).and_then(|a| a.to_str()) else {
        return Ok(args);
    };
    if !CONFIGURABLE.contains(&subcommand) {
        return Ok(args);
    }
    let Some(path) = config_path(&args[2..]) else {
        return Ok(args);
    };
    let sub = command
        .find_subcommand(subcommand)
        .ok_or_else(|| anyhow!("no subcommand {subcommand}"))?
        .clone();
    // Which flags the command line gives: a lenient parse (nothing is required yet).
    let given: HashSet<String> = match command
        .clone()
        .ignore_errors(true)
        .try_get_matches_from(&args)
    {
        Ok(matches) => match matches.subcommand_matches(subcommand) {
            Some(matches) => sub
                .get_arguments()
                .map(|arg| arg.get_id().as_str())
                .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
                .map(str::to_owned)
                .collect(),
            None => HashSet::new(),
        },
        Err(_) => HashSet::new(),
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read the config file {}", path.display()))?;
    let flags = flags_from(&text, &path, &sub, &given)?;
    let mut merged = args[..2].to_vec();
    merged.extend(flags.into_iter().map(OsString::from));
    merged.extend(args[2..].iter().cloned());
    Ok(merged)
}

/// The value of `--config` among `args`.
fn config_path(args: &[OsString]) -> Option<PathBuf> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            return None;
        }
        if arg == "--config" {
            return args.next().map(PathBuf::from);
        }
        if let Some(value) = arg.to_str().and_then(|a| a.strip_prefix("--config=")) {
            return Some(PathBuf::from(value));
        }
    }
    None
}

/// The entries of `table` in the order the file has them (the parser's map is sorted by
/// key), so that the first error reported is the first in the file.
fn in_file_order<'t, 'i>(
    table: &'t DeTable<'i>,
) -> Vec<(
    &'t Spanned<toml::de::DeString<'i>>,
    &'t Spanned<DeValue<'i>>,
)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(key, _)| key.span().start);
    entries
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses `text` (the file at `path`) as TOML.
pub fn parse<'i>(text: &'i str, path: &Path) -> Result<Spanned<DeTable<'i>>> {
    DeTable::parse(text).map_err(|error| anyhow!("{}: {error}", path.display()))
}

/// The flags (`--key=value`, `--key`) that the file's keys stand for, leaving out those
/// in `given`.
fn flags_from(
    text: &str,
    path: &Path,
    command: &Command,
    given: &HashSet<String>,
) -> Result<Vec<String>> {
    let table = parse(text, path)?;
    let mut flags = Vec::new();
    for (key, value) in in_file_order(table.get_ref()) {
        let name = key.get_ref().as_ref();
        let line = line_of(text, key.span().start);
        let at = || format!("{} line {line}", path.display());
        if name == DATASETS_KEY && command.get_name() != "cluster" {
            if !matches!(value.get_ref(), DeValue::Table(_)) {
                bail!(
                    "{}: `{name}` is a table of datasets ([{name}.NAME] with a location)",
                    at()
                );
            }
            continue;
        }
        let arg = command
            .get_arguments()
            .find(|arg| arg.get_long() == Some(name) && !arg.is_hide_set() && name != "config")
            .ok_or_else(|| {
                let keys: Vec<_> = command
                    .get_arguments()
                    .filter(|arg| !arg.is_hide_set())
                    .filter_map(|arg| arg.get_long())
                    .filter(|&long| long != "config" && long != "help")
                    .collect();
                anyhow!(
                    "{}: unknown key `{name}` (the keys are the flags of `quiver {}`: {})",
                    at(),
                    command.get_name(),
                    keys.join(", ")
                )
            })?;
        let values: Vec<(String, usize)> = match value.get_ref() {
            DeValue::Array(items) => items
                .iter()
                .map(|item| Ok((scalar(item.get_ref(), name, &at)?, item.span().start)))
                .collect::<Result<_>>()?,
            other => vec![(scalar(other, name, &at)?, value.span().start)],
        };
        // Checked even where the command line overrides it: the file stays valid.
        let key_flags = match arg.get_action() {
            ArgAction::SetTrue => match value.get_ref() {
                DeValue::Boolean(true) => vec![format!("--{name}")],
                DeValue::Boolean(false) => Vec::new(),
                _ => bail!("{}: `{name}` takes true or false", at()),
            },
            ArgAction::Append => {
                let mut key_flags = Vec::new();
                for (value, offset) in values {
                    check(arg, name, &value, path, line_of(text, offset))?;
                    key_flags.push(format!("--{name}={value}"));
                }
                key_flags
            }
            _ => {
                if values.len() != 1 || matches!(value.get_ref(), DeValue::Array(_)) {
                    bail!("{}: `{name}` takes one value, not a list", at());
                }
                let (value, offset) = &values[0];
                check(arg, name, value, path, line_of(text, *offset))?;
                vec![format!("--{name}={value}")]
            }
        };
        // The command line's flag wins.
        if !given.contains(arg.get_id().as_str()) {
            flags.extend(key_flags);
        }
    }
    Ok(flags)
}

/// A TOML scalar as the text of a flag's value.
fn scalar(value: &DeValue<'_>, name: &str, at: &dyn Fn() -> String) -> Result<String> {
    Ok(match value {
        DeValue::String(text) => text.to_string(),
        DeValue::Integer(integer) => {
            let digits = integer.as_str().replace('_', "");
            if integer.radix() == 10 {
                digits
            } else {
                let digits = digits.get(2..).unwrap_or_default();
                u64::from_str_radix(digits, integer.radix())
                    .map_err(|e| anyhow!("{}: `{name}`: {e}", at()))?
                    .to_string()
            }
        }
        DeValue::Float(float) => float.as_str().replace('_', ""),
        DeValue::Boolean(value) => value.to_string(),
        DeValue::Datetime(_) | DeValue::Table(_) | DeValue::Array(_) => {
            bail!("{}: `{name}` takes a string, a number or a boolean", at())
        }
    })
}

/// Checks `value` with `arg`'s own parser (on a command of that flag alone, so that the
/// rules tying it to other flags wait for the whole command line).
fn check(arg: &clap::Arg, name: &str, value: &str, path: &Path, line: usize) -> Result<()> {
    let alone = Command::new("quiver")
        .no_binary_name(true)
        .disable_help_flag(true)
        .arg(
            clap::Arg::new("value")
                .long("value")
                .value_name("VALUE")
                .allow_hyphen_values(true)
                .value_parser(arg.get_value_parser().clone()),
        );
    if let Err(error) = alone.try_get_matches_from([format!("--value={value}")]) {
        // clap's own message, without its `error:` prefix and usage tips.
        let error = error.to_string();
        let message = error
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .replace("'--value <VALUE>'", &format!("`{name}`"));
        bail!(
            "{} line {line}: `{name}` = {value:?}: {message}",
            path.display()
        );
    }
    Ok(())
}

/// One `[datasets.NAME]` table of a config file.
#[derive(Debug, Clone, Default)]
pub struct DatasetTable {
    pub name: String,
    pub line: usize,
    /// Its keys and values as text, each with its line, in the file's order.
    pub values: Vec<(String, String, usize)>,
}

/// The `[datasets.NAME]` tables of the config file at `path`.
pub fn dataset_tables(path: &Path) -> Result<Vec<DatasetTable>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the config file {}", path.display()))?;
    let table = parse(&text, path)?;
    let Some(datasets) = table.get_ref().get(DATASETS_KEY) else {
        return Ok(Vec::new());
    };
    let DeValue::Table(datasets) = datasets.get_ref() else {
        bail!("{}: `{DATASETS_KEY}` is not a table", path.display());
    };
    let mut tables = Vec::new();
    for (name, value) in in_file_order(datasets) {
        let line = line_of(&text, name.span().start);
        let at = || format!("{} line {line}", path.display());
        let DeValue::Table(entries) = value.get_ref() else {
            bail!(
                "{}: `{DATASETS_KEY}.{}` is not a table ([{DATASETS_KEY}.NAME] with a location)",
                at(),
                name.get_ref()
            );
        };
        let mut dataset = DatasetTable {
            name: name.get_ref().to_string(),
            line,
            values: Vec::new(),
        };
        for (key, value) in in_file_order(entries) {
            let key_line = line_of(&text, key.span().start);
            let key_at = || format!("{} line {key_line}", path.display());
            let text = scalar(value.get_ref(), key.get_ref(), &key_at)?;
            dataset
                .values
                .push((key.get_ref().to_string(), text, key_line));
        }
        tables.push(dataset);
    }
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction};

    fn command() -> Command {
        Command::new("quiver").subcommand(
            Command::new("serve")
                .arg(Arg::new("config").long("config"))
                .arg(Arg::new("bind").long("bind"))
                .arg(
                    Arg::new("threads")
                        .long("threads")
                        .value_parser(clap::value_parser!(u32).range(1..=64)),
                )
                .arg(
                    Arg::new("writable")
                        .long("writable")
                        .action(ArgAction::SetTrue),
                )
                .arg(
                    Arg::new("dataset")
                        .long("dataset")
                        .action(ArgAction::Append),
                ),
        )
    }

    fn merged(file: &str, args: &[&str]) -> Result<Vec<String>> {
        // One file per call: the tests run on parallel threads of one process.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("quiver-config-{}-{n}.toml", std::process::id()));
        std::fs::write(&path, file).unwrap();
        let mut argv = vec!["quiver".to_owned(), "serve".to_owned()];
        argv.push(format!("--config={}", path.display()));
        argv.extend(args.iter().map(|a| a.to_string()));
        let merged = merge(argv.into_iter().map(OsString::from).collect(), &command());
        let _ = std::fs::remove_file(&path);
        Ok(merged?
            .into_iter()
            .skip(2)
            .map(|a| a.into_string().unwrap())
            .filter(|a| !a.starts_with("--config"))
            .collect())
    }

    #[test]
    fn keys_become_flags_and_the_command_line_wins() {
        let file =
            "bind = \"0.0.0.0:1\"\nthreads = 4\nwritable = true\ndataset = [\"a=/x\", \"b=/y\"]\n";
        assert_eq!(
            merged(file, &[]).unwrap(),
            [
                "--bind=0.0.0.0:1",
                "--threads=4",
                "--writable",
                "--dataset=a=/x",
                "--dataset=b=/y"
            ]
        );
        assert_eq!(
            merged(file, &["--threads", "2"]).unwrap(),
            [
                "--bind=0.0.0.0:1",
                "--writable",
                "--dataset=a=/x",
                "--dataset=b=/y",
                "--threads",
                "2"
            ]
        );
        assert_eq!(
            merged("writable = false\n", &[]).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn errors_name_the_key_and_line() {
        let error = |file: &str| merged(file, &[]).unwrap_err().to_string();
        let unknown = error("bind = \"x\"\n\nthreds = 4\n");
        assert!(
            unknown.contains("line 3: unknown key `threds`"),
            "{unknown}"
        );
        assert!(unknown.contains("bind, threads"), "{unknown}");
        let range = error("# comment\nthreads = 100\n");
        assert!(range.contains("line 2: `threads` = \"100\""), "{range}");
        assert!(range.contains("100"), "{range}");
        let flag = error("writable = \"yes\"\n");
        assert!(
            flag.contains("line 1: `writable` takes true or false"),
            "{flag}"
        );
        let list = error("bind = [\"a\", \"b\"]\n");
        assert!(list.contains("`bind` takes one value"), "{list}");
        let syntax = error("bind = \n");
        assert!(syntax.contains("line 1"), "{syntax}");
    }
}
