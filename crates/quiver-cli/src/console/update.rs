//! The console's SPARQL Update: requests typed directly and `update -f FILE`.
//!
//! An update runs through the session's database as one transaction (created at the
//! location when it held no store); afterwards the session takes the database's new
//! snapshot, so the next query sees the update. Telling an update from a query or a
//! console command: after optional `PREFIX`/`BASE` declarations (and comments), an update
//! begins with one of [`UPDATE_KEYWORDS`]. `LOAD` is also the console's own command, so a
//! line is a SPARQL `LOAD` only when an IRI (`<…>`) or `SILENT` follows the keyword.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use super::commands::Session;
use crate::location::open_database;

/// The words an update operation begins with (SPARQL 1.1 Update).
pub const UPDATE_KEYWORDS: [&str; 10] = [
    "INSERT", "DELETE", "WITH", "LOAD", "CLEAR", "CREATE", "DROP", "ADD", "MOVE", "COPY",
];

/// `text` without `keyword` at its start (any case, and not followed by a word
/// character), if it starts with it.
pub(super) fn after_keyword<'a>(text: &'a str, keyword: &str) -> Option<&'a str> {
    let head = text.get(..keyword.len())?;
    let rest = &text[keyword.len()..];
    (head.eq_ignore_ascii_case(keyword)
        && !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-'))
    .then_some(rest)
}

/// Whether `line` begins an update typed directly (a line beginning with `PREFIX` or
/// `BASE` is decided once the whole text is read: see [`is_update`]).
pub fn starts_update(line: &str) -> bool {
    let line = line.trim_start();
    UPDATE_KEYWORDS.iter().any(|keyword| {
        after_keyword(line, keyword).is_some_and(|rest| {
            let rest = rest.trim_start();
            *keyword != "LOAD" || rest.starts_with('<') || after_keyword(rest, "SILENT").is_some()
        })
    })
}

/// Skips white space and `#` comments.
fn skip_blank(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        match text.strip_prefix('#') {
            Some(comment) => text = comment.split_once('\n').map_or("", |(_, rest)| rest),
            None => return text,
        }
    }
}

/// Whether the request `text` is an update (its first word after the prologue of `PREFIX`
/// and `BASE` declarations is an update keyword) rather than a query.
pub fn is_update(text: &str) -> bool {
    let mut rest = skip_blank(text);
    loop {
        let declaration = after_keyword(rest, "PREFIX").or_else(|| after_keyword(rest, "BASE"));
        match declaration {
            // The declaration ends with its IRI.
            Some(tail) => match tail.split_once('>') {
                Some((_, after)) => rest = skip_blank(after),
                None => return false,
            },
            None => break,
        }
    }
    UPDATE_KEYWORDS
        .iter()
        .any(|keyword| after_keyword(rest, keyword).is_some())
}

impl Session {
    /// `update -f FILE [--base IRI]`.
    pub(super) fn update_command(&mut self, args: &[String], out: &mut dyn Write) -> Result<()> {
        let mut file = None;
        let mut base = None;
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let mut value = || {
                args.next()
                    .cloned()
                    .with_context(|| format!("update: {flag} needs a value"))
            };
            match flag.as_str() {
                "-f" => file = Some(PathBuf::from(value()?)),
                "--base" => base = Some(value()?),
                other => bail!("update: unknown option `{other}` (update -f FILE [--base IRI])"),
            }
        }
        let Some(file) = file else {
            bail!("update: give -f FILE (or type the update itself, ended by a blank line)");
        };
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        self.run_update(&text, base.as_deref(), out)
    }

    /// An update typed directly.
    pub fn inline_update(&mut self, text: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        self.run_update(text, None, &mut out)?;
        out.flush().context("writing to standard output")
    }

    /// Runs `text` as one transaction and takes the database's new version.
    fn run_update(&mut self, text: &str, base: Option<&str>, out: &mut dyn Write) -> Result<()> {
        // A syntax error is reported before a store is created at an empty location.
        quiver_sparql::update::parse_update(text, base)?;
        if self.database.is_none() {
            let database = open_database(self.location(), self.sync, true)?;
            self.store = Some(database.snapshot());
            self.database = Some(database);
        }
        let database = self.database.as_ref().context("the session's database")?;
        let options = self.exec_options(None);
        let started = Instant::now();
        let report =
            self.with_threads(options.threads, || database.update(text, base, &options))??;
        let elapsed = started.elapsed();
        self.store = Some(database.snapshot());
        writeln!(
            out,
            "update: {} quads inserted, {} deleted; store: {} triples",
            report.inserted, report.deleted, report.triples
        )?;
        writeln!(out, "latency: {:.1} µs", elapsed.as_secs_f64() * 1e6)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_lines_are_told_from_console_commands() {
        for line in [
            "INSERT DATA { <a> <b> <c> }",
            "delete where { ?s ?p ?o }",
            "WITH <g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
            "LOAD <file:///data.ttl>",
            "load silent <file:///x>",
            "CLEAR ALL",
            "create graph <g>",
            "DROP SILENT GRAPH <g>",
            "ADD <a> TO <b>",
            "MOVE DEFAULT TO <b>",
            "COPY <a> TO DEFAULT",
            "INSERT{",
        ] {
            assert!(starts_update(line), "{line}");
        }
        for line in [
            "load data.ttl",
            "load --lenient a.nt",
            "load 'my file.ttl'",
            "update -f x.ru",
            "insertion",
            "stats",
            "SELECT * { ?s ?p ?o }",
            "PREFIX ex: <http://e/>",
            "copying",
        ] {
            assert!(!starts_update(line), "{line}");
        }
    }

    #[test]
    fn a_prologue_is_skipped_to_tell_updates_from_queries() {
        assert!(is_update(
            "PREFIX ex: <http://e/>\nBASE <http://b/>\n# a comment > here\nINSERT DATA { ex:a ex:b ex:c }"
        ));
        assert!(is_update("prefix : <http://e/> delete where { :a ?p ?o }"));
        assert!(!is_update("PREFIX ex: <http://e/>\nSELECT * { ?s ?p ?o }"));
        assert!(!is_update("BASE <http://b/> ASK { }"));
        assert!(!is_update("PREFIX ex: <http://e/"));
        assert!(!is_update(""));
    }
}
