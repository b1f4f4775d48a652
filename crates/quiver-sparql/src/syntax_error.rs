//! Syntax errors in words: what spargebra's parser reports, said in SPARQL's terms.
//!
//! spargebra is a PEG parser: at the furthest position it reached it lists every token
//! its grammar would have taken there, rule names and character classes (`[_]`) included,
//! and a semantic check that failed shows as one more entry of that list ("The SELECT
//! contains a variable that is unbound"). This module turns that into one line that says
//! where (line and column), what was found there (a word, a character, the end of the
//! query), and what was expected, and points at the usual mistakes: a misspelled keyword
//! or function (the nearest SPARQL word by edit distance), an undeclared prefix (with the
//! prefixes the query declares), a query that holds nothing but comments, a SELECT
//! expression or BIND reusing a bound variable, a variable neither grouped nor
//! aggregated.

/// The words of SPARQL 1.1: keywords and built-in functions, for "did you mean".
const WORDS: &[&str] = &[
    "BASE",
    "PREFIX",
    "SELECT",
    "DISTINCT",
    "REDUCED",
    "AS",
    "CONSTRUCT",
    "WHERE",
    "DESCRIBE",
    "ASK",
    "FROM",
    "NAMED",
    "GROUP",
    "BY",
    "HAVING",
    "ORDER",
    "ASC",
    "DESC",
    "LIMIT",
    "OFFSET",
    "VALUES",
    "LOAD",
    "SILENT",
    "INTO",
    "CLEAR",
    "DROP",
    "CREATE",
    "ADD",
    "MOVE",
    "COPY",
    "TO",
    "INSERT",
    "DELETE",
    "DATA",
    "WITH",
    "USING",
    "DEFAULT",
    "GRAPH",
    "ALL",
    "OPTIONAL",
    "SERVICE",
    "BIND",
    "UNDEF",
    "MINUS",
    "UNION",
    "FILTER",
    "EXISTS",
    "NOT",
    "IN",
    "STR",
    "LANG",
    "LANGMATCHES",
    "DATATYPE",
    "BOUND",
    "IRI",
    "URI",
    "BNODE",
    "RAND",
    "ABS",
    "CEIL",
    "FLOOR",
    "ROUND",
    "CONCAT",
    "STRLEN",
    "UCASE",
    "LCASE",
    "ENCODE_FOR_URI",
    "CONTAINS",
    "STRSTARTS",
    "STRENDS",
    "STRBEFORE",
    "STRAFTER",
    "YEAR",
    "MONTH",
    "DAY",
    "HOURS",
    "MINUTES",
    "SECONDS",
    "TIMEZONE",
    "TZ",
    "NOW",
    "UUID",
    "STRUUID",
    "MD5",
    "SHA1",
    "SHA256",
    "SHA384",
    "SHA512",
    "COALESCE",
    "IF",
    "STRLANG",
    "STRDT",
    "SAMETERM",
    "ISIRI",
    "ISURI",
    "ISBLANK",
    "ISLITERAL",
    "ISNUMERIC",
    "REGEX",
    "SUBSTR",
    "REPLACE",
    "COUNT",
    "SUM",
    "MIN",
    "MAX",
    "AVG",
    "SAMPLE",
    "GROUP_CONCAT",
    "SEPARATOR",
    "TRUE",
    "FALSE",
];

/// Tokens the grammar lists that a SPARQL 1.1 user cannot mean (RDF 1.2 syntax, the
/// LATERAL extension), left out of "expected".
const NOT_SPARQL_11: &[&str] = &[
    "\"{|\"", "\"|}\"", "\"~\"", "\"<<\"", "\">>\"", "\"<<(\"", "\")>>\"", "LATERAL",
];

/// Beyond this many keywords expected at once, the parser is at the start of an
/// expression and lists every function: "an expression" says it.
const MAX_KEYWORDS: usize = 6;

/// `message` (spargebra's `error at L:C: expected …`) for the query `text`, in words.
pub(crate) fn explain(text: &str, message: &str) -> String {
    let message = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some((line, column, expected)) = parse(&message) else {
        return message;
    };
    let at = format!("error at {line}:{column}");
    if is_empty(text) {
        return format!(
            "{at}: the query is empty (only comments or PREFIX and BASE declarations): \
             expected SELECT, CONSTRUCT, ASK or DESCRIBE"
        );
    }
    if let Some(sentence) = expected.iter().find(|e| is_sentence(e)) {
        return format!("{at}: {}", reword(sentence));
    }
    // The parser stops where the misspelling makes the query impossible, which may be
    // after it (`ENCODEFORURI(?o)` reads as a function call up to its argument).
    if let Some((line, column, word, near)) = misspelled(text, line, column) {
        return format!("error at {line}:{column}: unknown word '{word}': did you mean {near}?");
    }
    let found = token_at(text, line, column);
    // A check that fails inside a complete query (BIND over a bound variable) leaves the
    // parser at the end of the text with nothing but whitespace expected.
    let only_space = expected.iter().all(|e| e == "[_]");
    if only_space && matches!(found, Token::End) && balanced(text) {
        return format!(
            "{at}: the query reads to its end but is not valid SPARQL: check that no BIND or \
             SELECT expression (… AS ?v) names a variable bound before it, and that no blank \
             node label appears in two groups"
        );
    }
    if let Some((line, column)) = open_string(text) {
        return format!("{at}: the string opened at {line}:{column} is never closed");
    }
    let keywords = expected
        .iter()
        .filter(|e| e.chars().all(|c| c.is_ascii_alphabetic() || c == '_'))
        .count();
    let mut wanted: Vec<String> = Vec::new();
    // Where the letters that start a prefixed name are expected, a whole term is: its
    // first characters (`?`, `<`, quotes, digits, `_:`, `true`…) are said as one.
    let term_start = expected.iter().any(|e| e.starts_with("['A'"));
    for entry in &expected {
        if entry == "[_]" || NOT_SPARQL_11.contains(&entry.as_str()) {
            continue;
        }
        if term_start && starts_a_term(entry) {
            continue;
        }
        let word = entry.chars().all(|c| c.is_ascii_alphabetic() || c == '_');
        if word && keywords > MAX_KEYWORDS {
            // The start of an expression: dozens of function names.
            continue;
        }
        wanted.push(
            match entry.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
                Some(token) => format!("'{token}'"),
                None if entry.starts_with("['0'") => "a number".to_owned(),
                // The first letter of a prefixed name, a keyword or `true`/`false`.
                None if entry.starts_with("['A'") => "a variable, an IRI or a literal".to_owned(),
                None => entry.clone(),
            },
        );
    }
    if keywords > MAX_KEYWORDS {
        wanted.push("an expression".to_owned());
    } else if expected.iter().any(|e| e == "[_]") {
        wanted.push("a variable, an IRI or a literal".to_owned());
    }
    wanted.dedup();
    // A query cut short: say so, besides what the parser wanted next.
    let open = if matches!(found, Token::End) && !balanced(text) {
        ": a '{' or '(' is never closed"
    } else {
        ""
    };
    let found = match found {
        Token::End => "the end of the query".to_owned(),
        Token::Word(word) => format!("'{word}'"),
        Token::Char(c) => format!("'{c}'"),
    };
    match wanted.len() {
        0 => format!("{at}: unexpected {found}{open}"),
        1 => format!("{at}: found {found}, expected {}{open}", wanted[0]),
        n => format!(
            "{at}: found {found}, expected {} or {}{open}",
            wanted[..n - 1].join(", "),
            wanted[n - 1]
        ),
    }
}

/// Whether an expected entry is the first character (or word) of an RDF term: a token of
/// punctuation, `true`, `false`, or a class of digits.
fn starts_a_term(entry: &str) -> bool {
    if entry.starts_with("['0'") {
        return true;
    }
    match entry.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
        Some("true" | "false") => true,
        Some(token) => !token.chars().any(|c| c.is_ascii_alphanumeric()),
        // What is left of a token holding quotes (`\"\"\"`) once the list was cut.
        None => !entry.starts_with('[') && !entry.chars().any(|c| c.is_ascii_alphanumeric()),
    }
}

/// The line, column and expected entries of `error at L:C: expected …`.
fn parse(message: &str) -> Option<(usize, usize, Vec<String>)> {
    let rest = message.strip_prefix("error at ")?;
    // Where only a character class was expected, the parser omits the word `expected`.
    let (position, expected) = rest.split_once(": expected ").or_else(|| {
        rest.split_once(": ")
            .filter(|(_, class)| class.starts_with("['"))
    })?;
    let (line, column) = position.split_once(':')?;
    let expected = expected.strip_prefix("one of ").unwrap_or(expected);
    Some((line.parse().ok()?, column.parse().ok()?, entries(expected)))
}

/// The entries of an expected list: `"x"` tokens (which may hold commas), rule names,
/// character classes and sentences, separated by `, `.
fn entries(list: &str) -> Vec<String> {
    let mut entries = Vec::new();
    let mut rest = list;
    while !rest.is_empty() {
        let end = if rest.starts_with('"') && rest.len() > 1 {
            rest[1..].find('"').map_or(rest.len(), |i| i + 2)
        } else {
            rest.find(", ").unwrap_or(rest.len())
        };
        entries.push(rest[..end].to_owned());
        rest = rest[end..]
            .trim_start_matches(", ")
            .trim_start_matches(',')
            .trim_start();
    }
    entries
}

/// Whether an entry is a sentence of a semantic check rather than a token.
fn is_sentence(entry: &str) -> bool {
    !entry.starts_with('"') && !entry.starts_with('[') && entry.contains(' ')
}

/// spargebra's semantic checks, said with what to do about them.
fn reword(sentence: &str) -> String {
    match sentence {
        "The SELECT overrides an existing variable using an expression" => {
            "a SELECT expression (… AS ?v) names a variable the WHERE clause already binds: \
             choose a new name"
                .to_owned()
        }
        "The SELECT contains a variable that is unbound" => {
            "a SELECT with aggregates names a variable that is neither grouped nor aggregated: \
             add it to GROUP BY or wrap it in an aggregate such as SAMPLE(?v)"
                .to_owned()
        }
        "BIND is overriding an existing variable" => {
            "BIND (… AS ?v) names a variable the group already binds before it: choose a new \
             name"
                .to_owned()
        }
        "SELECT * is not authorized with GROUP BY" => {
            "SELECT * cannot be used with GROUP BY: list the grouped variables and aggregates"
                .to_owned()
        }
        other => other.to_owned(),
    }
}

/// Whether `text` holds nothing but comments, whitespace and PREFIX/BASE declarations.
fn is_empty(text: &str) -> bool {
    let mut words = text
        .lines()
        .map(strip_comment)
        .flat_map(str::split_whitespace);
    while let Some(word) = words.next() {
        if word.eq_ignore_ascii_case("PREFIX") {
            words.next();
            words.next();
        } else if word.eq_ignore_ascii_case("BASE") {
            words.next();
        } else {
            return false;
        }
    }
    true
}

/// A line without its `#` comment (a `#` inside an IRI or a string is not one).
fn strip_comment(line: &str) -> &str {
    let (mut in_iri, mut quote) = (false, None);
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) if !in_iri => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('<', None) => in_iri = true,
            ('>', None) => in_iri = false,
            (' ', None) => in_iri = false,
            ('#', None) if !in_iri => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The line and column of a quote that opens a string never closed, if any.
fn open_string(text: &str) -> Option<(usize, usize)> {
    let mut open = None;
    for (l, line) in text.lines().enumerate() {
        let chars: Vec<char> = strip_comment(line).chars().collect();
        let mut in_iri = false;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match (c, open) {
                ('\\', Some(_)) => i += 1,
                ('"' | '\'', None) if !in_iri => {
                    let long = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
                    if long {
                        i += 2;
                    }
                    open = Some((l + 1, i + 1, c, long));
                }
                (q, Some((_, _, quote, long))) if q == quote => {
                    let closes =
                        !long || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q));
                    if closes {
                        i += if long { 2 } else { 0 };
                        open = None;
                    }
                }
                ('<', None) => in_iri = !chars.get(i + 1).is_some_and(|d| d.is_whitespace()),
                ('>' | ' ', None) => in_iri = false,
                _ => {}
            }
            i += 1;
        }
        // A short string ends with its line.
        if matches!(open, Some((_, _, _, false))) {
            return open.map(|(line, column, _, _)| (line, column));
        }
    }
    open.map(|(line, column, _, _)| (line, column))
}

/// Whether the braces and parentheses of `text` (outside strings, IRIs and comments)
/// close what they open.
fn balanced(text: &str) -> bool {
    let mut depth = 0i64;
    for line in text.lines() {
        let (mut in_iri, mut quote) = (false, None);
        for c in strip_comment(line).chars() {
            match (c, quote) {
                ('"' | '\'', None) if !in_iri => quote = Some(c),
                (q, Some(open)) if q == open => quote = None,
                ('<', None) => in_iri = true,
                ('>' | ' ', None) => in_iri = false,
                ('{' | '(', None) if !in_iri => depth += 1,
                ('}' | ')', None) if !in_iri => depth -= 1,
                _ => {}
            }
        }
    }
    depth == 0
}

enum Token {
    End,
    Word(String),
    Char(char),
}

/// What the query holds at `line`:`column` (1-based, in characters).
fn token_at(text: &str, line: usize, column: usize) -> Token {
    let Some(line_text) = text.lines().nth(line.saturating_sub(1)) else {
        return Token::End;
    };
    let rest: String = line_text.chars().skip(column.saturating_sub(1)).collect();
    let rest = rest.trim_start();
    let mut chars = rest.chars();
    match chars.next() {
        None => {
            // Nothing left on this line: the end, unless a later line holds more.
            let later = text
                .lines()
                .skip(line)
                .any(|l| !strip_comment(l).trim().is_empty());
            if later {
                Token::Char('\n')
            } else {
                Token::End
            }
        }
        Some(c) if c.is_alphanumeric() || c == '_' => Token::Word(
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || "_:-".contains(*c))
                .collect(),
        ),
        Some(c) => Token::Char(c),
    }
}

/// The last bare word at or before `line`:`column` that is no SPARQL word but near one:
/// its line, column, text and the word it is near. Bare words are those outside IRIs,
/// strings and comments that are not variables, prefixed names or language tags.
fn misspelled(
    text: &str,
    line: usize,
    column: usize,
) -> Option<(usize, usize, String, &'static str)> {
    let mut found = None;
    for (l, line_text) in text.lines().enumerate().take(line) {
        let chars: Vec<char> = strip_comment(line_text).chars().collect();
        let mut i = 0;
        let (mut in_iri, mut quote) = (false, None);
        while i < chars.len() {
            let c = chars[i];
            if l + 1 == line && i + 1 > column {
                break;
            }
            match (c, quote) {
                ('"' | '\'', None) if !in_iri => quote = Some(c),
                (q, Some(open)) if q == open => quote = None,
                ('<', None) => in_iri = !chars.get(i + 1).is_some_and(|d| d.is_whitespace()),
                ('>', None) => in_iri = false,
                (c, None) if !in_iri && (c.is_alphabetic() || c == '_') => {
                    let start = i;
                    while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                        i += 1;
                    }
                    let before = start.checked_sub(1).map(|b| chars[b]);
                    let after = chars.get(i).copied();
                    let bare = !matches!(before, Some('?' | '$' | '@' | ':' | '_'))
                        && !matches!(after, Some(':'));
                    let word: String = chars[start..i].iter().collect();
                    let upper = word.to_ascii_uppercase();
                    if bare && word.len() > 1 && !WORDS.contains(&upper.as_str()) {
                        if let Some(near) = nearest(&upper) {
                            found = Some((l + 1, start + 1, word, near));
                        }
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    found
}

/// The SPARQL word nearest to `word` (upper case), if it is near enough to be a typo.
fn nearest(word: &str) -> Option<&'static str> {
    let squeezed = |w: &str| w.replace('_', "");
    WORDS
        .iter()
        .map(|candidate| (distance(&squeezed(word), &squeezed(candidate)), *candidate))
        .filter(|(d, candidate)| *d <= (candidate.len() / 4).clamp(1, 2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance between two ASCII words.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, x) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, y) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(x != y);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}
