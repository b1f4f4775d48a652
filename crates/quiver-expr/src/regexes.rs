//! XPath regular expressions (the patterns and flags of REGEX and REPLACE) compiled by the
//! `regex` crate, and one query's cache of them, so that a constant pattern is compiled
//! once per query whatever the rows.
//!
//! XPath's syntax is close to the crate's. The flags `i` (case-insensitive), `s` (dot
//! matches newlines), `m` (multi-line anchors), `x` (ignore whitespace in the pattern) and
//! `q` (the pattern is a literal string) are supported; any other flag makes the pattern
//! invalid.

use std::collections::HashMap;
use std::sync::Mutex;

use regex::{Regex, RegexBuilder};

/// Upper bound of the compiled size of a regular expression, against pathological patterns.
const REGEX_SIZE_LIMIT: usize = 1 << 22;

/// How many patterns are kept compiled before the cache is emptied.
const CAPACITY: usize = 256;

/// Compiles `pattern` with XPath `flags`; `None` if either is invalid.
pub(crate) fn compile(pattern: &str, flags: &str) -> Option<Regex> {
    let literal = flags.contains('q');
    let escaped;
    let pattern = if literal {
        escaped = regex::escape(pattern);
        &escaped
    } else {
        pattern
    };
    let mut builder = RegexBuilder::new(pattern);
    builder.size_limit(REGEX_SIZE_LIMIT);
    for flag in flags.chars() {
        match flag {
            'i' => builder.case_insensitive(true),
            's' => builder.dot_matches_new_line(true),
            'm' => builder.multi_line(true),
            'x' => builder.ignore_whitespace(!literal),
            'q' => &mut builder,
            _ => return None,
        };
    }
    builder.build().ok()
}

/// Compiled regular expressions by pattern, then flags (two levels so that a lookup needs
/// no allocation); `None` where the pattern or the flags are invalid. Shared by the
/// query's threads behind a lock.
#[derive(Debug, Default)]
pub(crate) struct Regexes(Mutex<HashMap<String, HashMap<String, Option<Regex>>>>);

impl Regexes {
    /// Runs `f` with the compiled form of `pattern` and `flags`, compiling it at most once
    /// (while the cache holds it); `None` where it is invalid.
    pub(crate) fn with<T>(
        &self,
        pattern: &str,
        flags: &str,
        f: impl FnOnce(&Regex) -> Option<T>,
    ) -> Option<T> {
        let regex = {
            let mut cache = self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Some(regex) = cache.get(pattern).and_then(|by_flags| by_flags.get(flags)) {
                regex.clone()
            } else {
                let regex = compile(pattern, flags);
                if cache.len() >= CAPACITY && !cache.contains_key(pattern) {
                    cache.clear();
                }
                cache
                    .entry(pattern.to_owned())
                    .or_default()
                    .insert(flags.to_owned(), regex.clone());
                regex
            }
        };
        // Matching happens outside of the lock (a Regex clone shares the compiled program).
        f(&regex?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags() {
        assert!(compile("a", "imsx").is_some());
        assert!(compile("a", "z").is_none());
        assert!(compile("(", "").is_none());
        assert!(compile("(", "q").is_some_and(|r| r.is_match("a(b")));
    }

    /// A pattern is compiled once, an invalid one remembered as invalid, and a full cache
    /// starts afresh rather than growing.
    #[test]
    fn the_cache_compiles_a_pattern_once_and_stays_bounded() {
        let regexes = Regexes::default();
        assert_eq!(
            regexes.with("a+", "", |r| Some(r.is_match("caab"))),
            Some(true)
        );
        assert_eq!(
            regexes.with("a+", "", |r| Some(r.is_match("xyz"))),
            Some(false)
        );
        assert_eq!(regexes.with("(", "", |_| Some(())), None);
        assert_eq!(regexes.0.lock().unwrap().len(), 2);
        for k in 0..CAPACITY + 10 {
            regexes.with(&format!("p{k}"), "i", |_| Some(()));
        }
        assert!(regexes.0.lock().unwrap().len() <= CAPACITY);
    }
}
