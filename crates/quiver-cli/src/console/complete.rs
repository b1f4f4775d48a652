//! Tab completion for the console's line editor: command names and SPARQL Update keywords
//! first, setting names after `config`, `sparql` and `update` options after a `-`, file
//! names everywhere else.

use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::Context;

use super::commands::{COMMANDS, SETTINGS};
use super::update::UPDATE_KEYWORDS;

const SPARQL_OPTIONS: [&str; 9] = ["-f", "-b", "-n", "-N", "-m", "-v", "-o", "-p", "--explain"];

const UPDATE_OPTIONS: [&str; 2] = ["-f", "--base"];

/// Candidates for the first word: console commands, then the keywords that begin a SPARQL
/// update (typed in capitals, as they are matched whatever their case).
fn first_words(prefix: &str) -> Vec<Pair> {
    let mut pairs = matching(&COMMANDS, prefix);
    let upper = prefix.to_ascii_uppercase();
    let keywords: Vec<Pair> = UPDATE_KEYWORDS
        .iter()
        .filter(|keyword| keyword.starts_with(&upper))
        // `load` is a console command too: offered once.
        .filter(|keyword| {
            !pairs
                .iter()
                .any(|p| p.display.eq_ignore_ascii_case(keyword))
        })
        .map(|keyword| Pair {
            display: (*keyword).to_owned(),
            replacement: format!("{keyword} "),
        })
        .collect();
    pairs.extend(keywords);
    pairs
}

pub struct Helper {
    files: FilenameCompleter,
}

impl Helper {
    pub fn new() -> Self {
        Self {
            files: FilenameCompleter::new(),
        }
    }
}

/// Candidates among `words` that extend `prefix`, each followed by a space.
fn matching(words: &[&str], prefix: &str) -> Vec<Pair> {
    words
        .iter()
        .filter(|w| w.starts_with(prefix))
        .map(|w| Pair {
            display: (*w).to_owned(),
            replacement: format!("{w} "),
        })
        .collect()
}

/// What to complete at the end of `before` (the line up to the cursor): the start of the
/// word under the cursor and the candidates, or `None` for file names.
fn complete_words(before: &str) -> Option<(usize, Vec<Pair>)> {
    let start = before.rfind(char::is_whitespace).map_or(0, |i| {
        i + before[i..].chars().next().map_or(1, char::len_utf8)
    });
    let word = &before[start..];
    let command = before.split_whitespace().next().unwrap_or("");
    if start == 0 || before[..start].trim().is_empty() {
        return Some((start, first_words(word)));
    }
    let position = before[..start].split_whitespace().count();
    match command {
        "config" if position == 1 => Some((start, matching(&SETTINGS, word))),
        "sparql" if word.starts_with('-') => Some((start, matching(&SPARQL_OPTIONS, word))),
        "update" if word.starts_with('-') => Some((start, matching(&UPDATE_OPTIONS, word))),
        "help" | "stats" | "quit" | "exit" | "config" => Some((start, Vec::new())),
        _ => None,
    }
}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        match line.get(..pos).and_then(complete_words) {
            Some(found) => Ok(found),
            None => self.files.complete(line, pos, ctx),
        }
    }
}

impl Hinter for Helper {
    type Hint = String;
}

impl Highlighter for Helper {}

impl Validator for Helper {}

impl rustyline::Helper for Helper {}

#[cfg(test)]
mod tests {
    use super::complete_words;

    fn names(before: &str) -> Option<Vec<String>> {
        complete_words(before).map(|(_, pairs)| pairs.into_iter().map(|p| p.display).collect())
    }

    #[test]
    fn completes_commands_settings_and_options() {
        assert_eq!(names("sp"), Some(vec!["sparql".to_owned()]));
        assert_eq!(names("u"), Some(vec!["update".to_owned()]));
        assert_eq!(names("IN"), Some(vec!["INSERT".to_owned()]));
        assert_eq!(
            names("c"),
            Some(vec![
                "config".to_owned(),
                "CLEAR".to_owned(),
                "CREATE".to_owned(),
                "COPY".to_owned()
            ])
        );
        assert_eq!(
            names("update -"),
            Some(vec!["-f".to_owned(), "--base".to_owned()])
        );
        assert_eq!(names("  st"), Some(vec!["stats".to_owned()]));
        assert_eq!(names("e"), Some(vec!["exit".to_owned()]));
        assert_eq!(names("config ti"), Some(vec!["timeout".to_owned()]));
        assert_eq!(
            names("sparql -f q.rq --ex"),
            Some(vec!["--explain".to_owned()])
        );
        assert_eq!(complete_words("config ti").map(|c| c.0), Some(7));
        // File names after `load` and after `sparql -f`.
        assert_eq!(names("load da"), None);
        assert_eq!(names("sparql -f qu"), None);
    }
}
