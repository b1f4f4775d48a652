//! Errors of preparing and executing queries.

/// Why a query could not be prepared or run.
#[derive(Debug, Clone, thiserror::Error)]
pub enum QueryError {
    /// Invalid SPARQL; the message carries the line and column.
    #[error("invalid query: {0}")]
    Syntax(String),
    /// A user-supplied plan that does not fit the query.
    #[error("invalid plan: {0}")]
    Plan(String),
    /// A feature this engine does not evaluate yet.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The query ran past its time limit.
    #[error("query timed out after {0:.1} s")]
    Timeout(f64),
    /// The query was cancelled.
    #[error("query cancelled")]
    Cancelled,
    /// The result would exceed the configured cap.
    #[error("result exceeds the limit of {0} rows")]
    TooManyResults(usize),
    /// The query's operators would hold more memory than its budget allows: the memory
    /// pool it shares with the queries beside it is full, or it holds more than its share.
    #[error("query exceeds the memory limit of {limit} bytes, shared by the queries in flight (raise it with --max-memory)")]
    MemoryLimit { limit: usize },
    /// An update needs a new term id and none is left.
    #[error(transparent)]
    IdsExhausted(#[from] quiver_model::IdsExhausted),
    /// An update operation that cannot be carried out: a graph that must exist and does
    /// not (`CLEAR`/`DROP` without `SILENT`), one that must not and does (`CREATE`), a
    /// `LOAD` that failed.
    #[error("update failed: {0}")]
    Update(String),
    /// The accelerator a query was sent to failed (out of device memory, a driver error).
    #[error("device error: {0}")]
    Device(String),
    /// A `SERVICE` the engine may not call: outgoing requests are off, or the endpoint's
    /// host is not allowed. The message names the setting that allows it.
    #[error("SERVICE refused: {0}")]
    ServiceRefused(String),
    /// A `SERVICE` call (without `SILENT`) failed: no connection, an error status, a body
    /// too large or not SPARQL results, no answer in time.
    #[error("SERVICE {endpoint} failed: {message}")]
    Service { endpoint: String, message: String },
    /// A text search that cannot run: the store has no text index, or the query text is
    /// not a text query.
    #[error("text search: {0}")]
    Text(String),
    /// The cluster the query runs on cannot answer: a process of it ended, its connection
    /// closed, or its owners did not answer a question. Not the query's fault: the same
    /// query succeeds once the cluster is restarted.
    #[error("the cluster cannot answer: {0}")]
    Cluster(String),
}

impl QueryError {
    /// The error of a text search on a store without a text index.
    pub fn no_text_index() -> Self {
        QueryError::Text(
            "the store has no text index: build one with `quiver text-index build --location DIR` \
             (or load with --text-index)"
                .into(),
        )
    }

    /// A syntax error of `text` as spargebra reports it (`error at L:C: expected …`), made
    /// into one line: spargebra lists everything its grammar expected at the furthest
    /// position it reached, and that list can span lines (character classes with line
    /// breaks of their own). An undeclared prefix only shows as one more entry of that list
    /// ("Prefix not found"), or not at all when the name is a predicate, so when the text
    /// uses a prefix it does not declare, the error names that instead.
    ///
    /// Otherwise the message is said in SPARQL's terms (`syntax_error.rs`): what was found
    /// where, what was expected, and the likely mistake.
    pub fn syntax(text: &str, error: &impl std::fmt::Display) -> Self {
        if let Some((line, column, prefix, declared)) = undeclared_prefix(text) {
            let declared = if declared.is_empty() {
                "the query declares none".to_owned()
            } else {
                format!("the query declares {}", declared.join(" "))
            };
            return QueryError::Syntax(format!(
                "error at {line}:{column}: undeclared prefix '{prefix}:' (declare it with PREFIX {prefix}: <…>; {declared})"
            ));
        }
        QueryError::Syntax(crate::syntax_error::explain(text, &error.to_string()))
    }
}

/// The first prefixed name of `text` whose prefix no `PREFIX` declares: its line, column
/// (1-based, in characters) and prefix, and the prefixes declared (`ub:` …). A rough
/// lexer, only for error messages: it skips comments, strings, IRIs, variables and
/// language tags, and reads the other words.
fn undeclared_prefix(text: &str) -> Option<(usize, usize, String, Vec<String>)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut line, mut column) = (1, 1);
    let mut declared: Vec<String> = Vec::new();
    let mut used: Vec<(usize, usize, String)> = Vec::new();
    let mut after_prefix_keyword = false;
    let mut i = 0;
    // Moves past chars[i], keeping the line and column.
    let advance = |i: &mut usize, line: &mut usize, column: &mut usize| {
        if chars[*i] == '\n' {
            *line += 1;
            *column = 1;
        } else {
            *column += 1;
        }
        *i += 1;
    };
    let is_name = |c: char| c.is_alphanumeric() || "_-.:%\\".contains(c);
    while i < chars.len() {
        let c = chars[i];
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                advance(&mut i, &mut line, &mut column);
            }
        } else if c == '"' || c == '\'' {
            let long = chars.get(i + 1) == Some(&c) && chars.get(i + 2) == Some(&c);
            let quote = if long { 3 } else { 1 };
            for _ in 0..quote {
                advance(&mut i, &mut line, &mut column);
            }
            while i < chars.len() {
                if chars[i] == '\\' {
                    advance(&mut i, &mut line, &mut column);
                } else if chars[i] == c && (0..quote).all(|k| chars.get(i + k) == Some(&c)) {
                    for _ in 0..quote {
                        advance(&mut i, &mut line, &mut column);
                    }
                    break;
                }
                if i < chars.len() {
                    advance(&mut i, &mut line, &mut column);
                }
            }
        } else if c == '<' {
            // An IRI has no spaces; otherwise this is the less-than operator.
            let end = chars[i + 1..]
                .iter()
                .position(|&d| d == '>' || d.is_whitespace() || "<\"{}|^`".contains(d));
            let skip = match end {
                Some(n) if chars[i + 1 + n] == '>' => n + 2,
                _ => 1,
            };
            for _ in 0..skip {
                advance(&mut i, &mut line, &mut column);
            }
        } else if c == '?' || c == '$' || c == '@' {
            advance(&mut i, &mut line, &mut column);
            while i < chars.len() && (chars[i].is_alphanumeric() || "_-".contains(chars[i])) {
                advance(&mut i, &mut line, &mut column);
            }
        } else if is_name(c) {
            let (start_line, start_column) = (line, column);
            let mut word = String::new();
            while i < chars.len() && is_name(chars[i]) {
                word.push(chars[i]);
                advance(&mut i, &mut line, &mut column);
            }
            if let Some((prefix, _)) = word.split_once(':') {
                if after_prefix_keyword {
                    declared.push(prefix.to_owned());
                } else if prefix != "_" && !prefix.starts_with(|c: char| c.is_ascii_digit()) {
                    used.push((start_line, start_column, prefix.to_owned()));
                }
            }
            after_prefix_keyword = word.eq_ignore_ascii_case("prefix");
        } else {
            advance(&mut i, &mut line, &mut column);
        }
    }
    let (line, column, prefix) = used
        .into_iter()
        .find(|(_, _, prefix)| !declared.contains(prefix))?;
    let declared = declared.iter().map(|p| format!("{p}:")).collect();
    Some((line, column, prefix, declared))
}
