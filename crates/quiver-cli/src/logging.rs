//! Logs of `serve` and `cluster`: `tracing` events on stderr, as text or as JSON lines.
//!
//! `--log-level` takes a level (`error`, `warn`, `info`, `debug`, `trace`) or
//! `tracing-subscriber`'s filter directives (`info,quiver::access=warn`); without it the
//! `RUST_LOG` environment variable is read, and without that the level is `info`. With
//! `--log-format json` every line is one JSON object: `timestamp`, `level`, `target`,
//! `message` (where there is one) and the event's fields at the top level. The server's
//! own lines (the store it opened, its limits, `listening on http://…`) are events too
//! in that format, so that every line parses.
//!
//! What is logged where (targets): `quiver::access` one line per request (INFO);
//! `quiver::slow` the slow-query log (WARN, `--slow-query MS`), with the query's text;
//! `quiver::query` every query's text (DEBUG). No token is ever logged.
//!
//! Events are gathered into few writes ([`crate::log_lines`]), each line within 50 ms.

use anyhow::{anyhow, Result};
use clap::{Args, ValueEnum};
use tracing_subscriber::EnvFilter;

use crate::log_lines::{LogGuard, LogLines};

/// The log's format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// One line of text per event
    #[default]
    Text,
    /// One JSON object per line
    Json,
}

#[derive(Args, Debug, Clone, Default)]
pub struct LogArgs {
    /// The events logged: a level (error, warn, info, debug, trace) or filter directives
    /// (`info,quiver::access=warn`) [default: RUST_LOG, else info]
    #[arg(long, value_name = "LEVEL", value_parser = parse_filter)]
    pub log_level: Option<String>,
    /// Log lines as text or as JSON objects
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

fn parse_filter(text: &str) -> Result<String, String> {
    EnvFilter::builder()
        .parse(text)
        .map(|_| text.to_owned())
        .map_err(|e| format!("not a level or filter: {e}"))
}

impl LogArgs {
    /// Installs the subscriber (once per process; later calls change nothing). Keep the
    /// guard while the process logs: dropped, it writes out the last lines.
    pub fn init(&self) -> Result<LogGuard> {
        let filter = match &self.log_level {
            Some(level) => EnvFilter::builder().parse(level)?,
            None => match std::env::var("RUST_LOG") {
                Ok(directives) if !directives.trim().is_empty() => EnvFilter::builder()
                    .parse(&directives)
                    .map_err(|e| anyhow!("RUST_LOG={directives}: {e}"))?,
                _ => EnvFilter::new("info"),
            },
        };
        let (lines, guard) = LogLines::to_stderr();
        let builder = tracing_subscriber::fmt()
            .with_writer(lines)
            .with_env_filter(filter);
        match self.log_format {
            LogFormat::Text => builder.try_init().ok(),
            LogFormat::Json => builder
                .json()
                .flatten_event(true)
                .with_current_span(false)
                .with_span_list(false)
                .try_init()
                .ok(),
        };
        Ok(guard)
    }

    /// The flags that give another process these settings.
    pub fn as_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(level) = &self.log_level {
            flags.push(format!("--log-level={level}"));
        }
        if self.log_format == LogFormat::Json {
            flags.push("--log-format=json".to_owned());
        }
        flags
    }

    /// Says `message` to the operator: a line on stderr as text, an INFO event as JSON.
    pub fn say(&self, message: &str) {
        match self.log_format {
            LogFormat::Text => whole_line_to_stderr(message),
            LogFormat::Json => tracing::info!(target: "quiver", "{message}"),
        }
    }

    /// Warns the operator: a line on stderr as text, a WARN event as JSON.
    pub fn warn(&self, message: &str) {
        match self.log_format {
            LogFormat::Text => whole_line_to_stderr(&format!("warning: {message}")),
            LogFormat::Json => tracing::warn!(target: "quiver", "{message}"),
        }
    }
}

/// Writes `text` and its newline to stderr in one write, so that the processes of a
/// cluster sharing one terminal (or one pipe) never cut into each other's lines:
/// `eprintln!` writes the text and the newline apart, and another process's line can
/// land between them. A write to a pipe of at most `PIPE_BUF` (4 KiB) bytes is atomic.
fn whole_line_to_stderr(text: &str) {
    use std::io::Write;
    let mut line = String::with_capacity(text.len() + 1);
    line.push_str(text);
    line.push('\n');
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
