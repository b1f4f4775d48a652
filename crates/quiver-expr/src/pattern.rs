//! REGEX and REPLACE (§17.4.3.14, §17.4.3.15), on top of the `regex` crate.
//!
//! Patterns and flags are XPath's, compiled and cached per query by [`crate::regexes`]
//! (reached through the [`EvalContext`]); an invalid pattern or flag is an error. REPLACE's replacement string uses XPath's syntax (`$N` for a
//! group, `\$` and `\\` for literal characters), translated to the crate's.
//! Unlike XPath 3.1 (but like XPath 4 and common SPARQL engines), a pattern that matches the empty
//! string is accepted by REPLACE.

use crate::context::EvalContext;
use crate::string::{simple_literal, string_literal, with_language};
use crate::value;
use oxrdf::Term;
use std::fmt::Write;

/// The optional flags argument: a simple literal.
fn flags(flags: Option<&Term>) -> Option<&str> {
    flags.map_or(Some(""), simple_literal)
}

/// REGEX(text, pattern, flags?).
pub(crate) fn regex(
    context: &EvalContext,
    text: &Term,
    pattern: &Term,
    flags_arg: Option<&Term>,
) -> Option<Term> {
    let (text, _) = string_literal(text)?;
    let pattern = simple_literal(pattern)?;
    let flags = flags(flags_arg)?;
    context.with_regex(pattern, flags, |regex| {
        Some(value::boolean(regex.is_match(text)))
    })
}

/// REPLACE(arg, pattern, replacement, flags?): keeps the language tag of `arg`.
pub(crate) fn replace(
    context: &EvalContext,
    arg: &Term,
    pattern: &Term,
    replacement: &Term,
    flags_arg: Option<&Term>,
) -> Option<Term> {
    let (text, language) = string_literal(arg)?;
    let pattern = simple_literal(pattern)?;
    let replacement = simple_literal(replacement)?;
    let flags = flags(flags_arg)?;
    context.with_regex(pattern, flags, |regex| {
        let replacement = if flags.contains('q') {
            replacement.replace('$', "$$")
        } else {
            translate_replacement(replacement, regex.captures_len() - 1)?
        };
        Some(with_language(
            regex.replace_all(text, replacement.as_str()),
            language,
        ))
    })
}

/// Translates an XPath replacement string into the `regex` crate's syntax; `None` when invalid
/// (a `\` not followed by `\` or `$`, or a `$` not followed by a digit).
fn translate_replacement(replacement: &str, groups: usize) -> Option<String> {
    let mut result = String::with_capacity(replacement.len());
    let mut chars = replacement.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                '\\' => result.push('\\'),
                '$' => result.push_str("$$"),
                _ => return None,
            },
            '$' => {
                // The longest run of digits that still names an existing group (at least one).
                let mut group = usize::try_from(chars.next()?.to_digit(10)?).ok()?;
                while let Some(digit) = chars.peek().and_then(|c| c.to_digit(10)) {
                    let longer = group
                        .checked_mul(10)?
                        .checked_add(usize::try_from(digit).ok()?)?;
                    if longer > groups {
                        break;
                    }
                    group = longer;
                    chars.next();
                }
                write!(result, "${{{group}}}").ok()?;
            }
            c => result.push(c),
        }
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_translation() {
        assert_eq!(
            translate_replacement("$1-$2", 2).as_deref(),
            Some("${1}-${2}")
        );
        assert_eq!(translate_replacement("$12", 1).as_deref(), Some("${1}2"));
        assert_eq!(translate_replacement("$12", 12).as_deref(), Some("${12}"));
        assert_eq!(translate_replacement(r"\$\\x", 0).as_deref(), Some(r"$$\x"));
        assert_eq!(translate_replacement("$", 0), None);
        assert_eq!(translate_replacement("$x", 0), None);
        assert_eq!(translate_replacement(r"\n", 0), None);
    }
}
