//! `quiver console`: an interactive shell on one store, after Wukong's console.
//!
//! Commands (`sparql`, `update`, `load`, `stats`, `config`, `help`, `quit`) live in
//! [`commands`], [`sparql`] and [`update`]; a query typed directly (a line starting with
//! PREFIX, SELECT, ASK, …) or an update (INSERT, DELETE, WITH, LOAD <…>, CLEAR, …; after
//! PREFIX and BASE lines) runs once a blank line ends it. On a terminal the line editor
//! (rustyline) gives history (saved in `~/.quiver_history`, else in the store directory),
//! line editing and tab completion ([`complete`]); otherwise commands are read line by
//! line from standard input, so a session can be scripted:
//! `quiver console --location D < script.txt`. An error in a command is printed as
//! `error: …` and the session goes on; a scripted session exits with status 1 when any
//! command failed.

mod commands;
mod complete;
mod sparql;
mod update;

use std::io::{BufRead, IsTerminal as _};
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use rustyline::error::ReadlineError;

use self::commands::{Flow, Session};

#[derive(Args, Debug)]
pub struct ConsoleArgs {
    /// Directory of the store (`load` creates it when missing)
    #[arg(long)]
    pub location: PathBuf,
    /// Worker threads for heavy queries and loads (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
    #[command(flatten)]
    pub limits: crate::limits::LimitArgs,
    #[command(flatten)]
    pub service: crate::service::ServiceArgs,
    /// Answer queries from the store's entailment (`config reasoning on|off` changes it)
    #[arg(long)]
    pub reasoning: bool,
    #[command(flatten)]
    pub sync: crate::location::SyncArgs,
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
    /// Coordinate a cluster of this many processes on this machine over the partitioned
    /// store at --location (`quiver partition`): each basic graph pattern runs where its
    /// vertices live; the session is read-only
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub processes: Option<u32>,
    /// Worker threads per cluster process, one partition each (the store must be cut into
    /// processes × workers partitions)
    #[arg(long, default_value_t = 1, requires = "processes",
          value_parser = clap::value_parser!(u32).range(1..=64))]
    pub workers: u32,
}

const PROMPT: &str = "quiver> ";
const CONTINUATION: &str = "   ...> ";

/// A source of input lines: the line editor or plain standard input.
enum Input {
    Editor(Box<rustyline::Editor<complete::Helper, rustyline::history::DefaultHistory>>),
    Plain(std::io::StdinLock<'static>),
}

/// What reading a line gave.
enum Line {
    Text(String),
    /// Ctrl-C: drop what was being typed.
    Interrupted,
    End,
}

impl Input {
    fn read(&mut self, prompt: &str) -> Result<Line> {
        match self {
            Input::Editor(editor) => match editor.readline(prompt) {
                Ok(line) => {
                    if !line.trim().is_empty() {
                        let _ = editor.add_history_entry(line.as_str());
                    }
                    Ok(Line::Text(line))
                }
                Err(ReadlineError::Interrupted) => Ok(Line::Interrupted),
                Err(ReadlineError::Eof) => Ok(Line::End),
                Err(error) => Err(error.into()),
            },
            Input::Plain(stdin) => {
                // Bytes, not `read_line`: a line that is not UTF-8 becomes a (failing)
                // command instead of ending the session.
                let mut line = Vec::new();
                if stdin.read_until(b'\n', &mut line)? == 0 {
                    return Ok(Line::End);
                }
                let line = String::from_utf8_lossy(&line);
                Ok(Line::Text(line.trim_end_matches(['\n', '\r']).to_owned()))
            }
        }
    }
}

/// Whether `line` begins a SPARQL query typed directly (or, with PREFIX or BASE, an
/// update: decided once the whole text is read).
fn starts_query(line: &str) -> bool {
    let line = line.trim_start();
    ["PREFIX", "BASE", "SELECT", "ASK", "CONSTRUCT", "DESCRIBE"]
        .iter()
        .any(|keyword| update::after_keyword(line, keyword).is_some())
}

fn history_file(session: &Session) -> PathBuf {
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join(".quiver_history"),
        None => session.location().join(".quiver_history"),
    }
}

pub fn run(args: ConsoleArgs) -> Result<()> {
    let cluster = args
        .processes
        .map(|processes| {
            crate::local_cluster::LocalCluster::start(
                &args.location,
                processes as usize,
                args.workers as usize,
            )
        })
        .transpose()?;
    let mut session = Session::open(
        &args.location,
        crate::threads(args.threads),
        args.limits.resolve(crate::limits::QueryLimits::default()),
        args.sync.sync,
        cluster,
    )?;
    session.service = Some(args.service.client(false));
    if args.reasoning {
        crate::reason::view(session.store()?, true)?;
        session.settings.reasoning = true;
    }
    session.settings.gpu_min_work = args.device.gpu_min_work;
    session.settings.gpu_memory = args.device.gpu_memory;
    if args.device.device != crate::device::DeviceKind::Cpu {
        session.set_device(args.device.device)?;
    }
    let interactive = std::io::stdin().is_terminal();
    let history = history_file(&session);
    let mut input = if interactive {
        let config = rustyline::Config::builder()
            .auto_add_history(false)
            .completion_type(rustyline::CompletionType::List)
            .max_history_size(10_000)?
            .build();
        let mut editor = rustyline::Editor::with_config(config)?;
        editor.set_helper(Some(complete::Helper::new()));
        let _ = editor.load_history(&history);
        println!(
            "Quiver console on {} ({}). Type `help` for commands, `quit` or Ctrl-D to leave.",
            session.location().display(),
            session.describe()
        );
        Input::Editor(Box::new(editor))
    } else {
        Input::Plain(std::io::stdin().lock())
    };

    let mut failures = 0usize;
    let result = loop {
        let line = match input.read(PROMPT) {
            Ok(Line::Text(line)) => line,
            Ok(Line::Interrupted) => continue,
            Ok(Line::End) => break Ok(()),
            Err(error) => break Err(error),
        };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let outcome = if starts_query(trimmed) || update::starts_update(trimmed) {
            // A query or update typed directly: gather lines until a blank one (or the end).
            let mut text = line.clone();
            let mut interrupted = false;
            let mut read_error = None;
            loop {
                match input.read(CONTINUATION) {
                    Ok(Line::Text(more)) if more.trim().is_empty() => break,
                    Ok(Line::Text(more)) => {
                        text.push('\n');
                        text.push_str(&more);
                    }
                    Ok(Line::Interrupted) => {
                        interrupted = true;
                        break;
                    }
                    Ok(Line::End) => break,
                    Err(error) => {
                        read_error = Some(error);
                        break;
                    }
                }
            }
            if let Some(error) = read_error {
                break Err(error);
            }
            if interrupted {
                continue;
            }
            if update::is_update(&text) {
                session.inline_update(&text).map(|()| Flow::Continue)
            } else {
                session.inline_query(&text).map(|()| Flow::Continue)
            }
        } else {
            session.execute(trimmed)
        };
        match outcome {
            Ok(Flow::Continue) => {}
            Ok(Flow::Quit) => break Ok(()),
            Err(error) if crate::output::is_broken_pipe(&error) => break Err(error),
            Err(error) => {
                failures += 1;
                eprintln!("error: {error:#}");
            }
        }
    };
    if let Input::Editor(editor) = &mut input {
        let _ = editor.save_history(&history);
    }
    result?;
    if !interactive && failures > 0 {
        anyhow::bail!("{failures} command(s) failed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::starts_query;

    #[test]
    fn query_keywords_start_inline_queries() {
        for line in [
            "SELECT * { ?s ?p ?o }",
            "select ?x",
            "PREFIX ub: <x>",
            "ASK { }",
            "construct {",
            "BASE <http://x/>",
            "SELECT*{?s ?p ?o}",
        ] {
            assert!(starts_query(line), "{line}");
        }
        for line in [
            "sparql -f q.rq",
            "stats",
            "selections",
            "load select.nt",
            "ask-me",
        ] {
            assert!(!starts_query(line), "{line}");
        }
    }
}
