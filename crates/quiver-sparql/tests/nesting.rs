//! Deeply nested queries: at the nesting limit every shape (groups, expressions, blank node
//! property lists, paths, OPTIONALs, subqueries) is parsed, compiled and executed on a
//! thread with a 2 MiB stack, the size of the server's blocking threads, and answers what
//! the hand-made chain graph says; one level more is refused with a syntax error naming
//! the place, before the parser runs.

use crate::support;

use quiver_sparql::nesting::MAX_DEPTH;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryError, QueryResults};
use quiver_store::Store;

/// The stack of tokio's blocking threads (and Rust's default for spawned threads).
const STACK: usize = 2 << 20;

/// Edges of the chain `:a0 :p :a1 :p … :a{CHAIN}`.
const CHAIN: usize = 130;

fn chain() -> Store {
    let text: String = (0..CHAIN)
        .map(|i| format!("<http://e/a{i}> <http://e/p> <http://e/a{}> .\n", i + 1))
        .collect();
    support::load(&text)
}

/// A query whose brackets nest `depth` levels deep, and the rows it must give on the chain.
type Shape = fn(usize) -> (String, usize);

/// `{{{ ?s :p ?o }}}`: every edge.
fn groups(depth: usize) -> (String, usize) {
    let query = format!(
        "SELECT * WHERE {} ?s <http://e/p> ?o {}",
        "{".repeat(depth),
        "}".repeat(depth)
    );
    (query, CHAIN)
}

/// `FILTER((((?o = :a5))))`: one edge.
fn expressions(depth: usize) -> (String, usize) {
    let parens = depth - 1; // the group's brace is one level
    let query = format!(
        "SELECT * WHERE {{ ?s <http://e/p> ?o FILTER{}?o = <http://e/a5>{} }}",
        "(".repeat(parens),
        ")".repeat(parens)
    );
    (query, 1)
}

/// `?s :p [ :p [ … :p ?end ] ]`: a walk of `depth` edges starts at the first
/// `CHAIN - depth + 1` vertices.
fn blank_nodes(depth: usize) -> (String, usize) {
    let brackets = depth - 1;
    let query = format!(
        "SELECT ?s WHERE {{ ?s <http://e/p> {}<http://e/p> ?end{} }}",
        "[ <http://e/p> ".repeat(brackets - 1) + "[ ",
        " ]".repeat(brackets)
    );
    (query, CHAIN - (brackets + 1) + 1)
}

/// `?s ((((:p)))) ?o`: every edge.
fn paths(depth: usize) -> (String, usize) {
    let parens = depth - 1;
    let query = format!(
        "SELECT * WHERE {{ ?s {}<http://e/p>{} ?o }}",
        "(".repeat(parens),
        ")".repeat(parens)
    );
    (query, CHAIN)
}

/// `?s :p ?o OPTIONAL { ?o :p ?x OPTIONAL { … } }`: each vertex with an out-edge, once.
fn optionals(depth: usize) -> (String, usize) {
    let levels = depth - 1;
    let query = format!(
        "SELECT ?s WHERE {{ ?s <http://e/p> ?v0 {} }}",
        (0..levels)
            .map(|i| format!("OPTIONAL {{ ?v{i} <http://e/p> ?v{} ", i + 1))
            .collect::<String>()
            + &"}".repeat(levels)
    );
    (query, CHAIN)
}

/// `SELECT * { SELECT * { … { ?s :p ?o } } }`: nested subqueries, a brace a level.
fn subqueries(depth: usize) -> (String, usize) {
    let query = format!(
        "SELECT *{} {{ ?s <http://e/p> ?o {}",
        " { SELECT *".repeat(depth - 1),
        "}".repeat(depth)
    );
    (query, CHAIN)
}

const SHAPES: [(&str, Shape); 6] = [
    ("groups", groups),
    ("expressions", expressions),
    ("blank nodes", blank_nodes),
    ("paths", paths),
    ("optionals", optionals),
    ("subqueries", subqueries),
];

fn rows(store: &Store, query: &str) -> Result<usize, QueryError> {
    let prepared = prepare(store, query, &PrepareOptions::default())?;
    match prepared.execute(store, &ExecOptions::default())? {
        QueryResults::Solutions(solutions) => Ok(solutions.len()),
        _ => panic!("a SELECT gives solutions"),
    }
}

#[test]
fn every_shape_at_the_limit_runs_on_a_two_megabyte_stack() {
    let store = chain();
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, || {
                for (name, shape) in SHAPES {
                    let (query, expected) = shape(MAX_DEPTH);
                    let depth = max_depth(&query);
                    assert_eq!(depth, MAX_DEPTH, "{name}");
                    let answered = rows(&store, &query).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(answered, expected, "{name}");
                }
            })
            .expect("a thread starts")
            .join()
            .expect("no shape overflows the stack");
    });
}

#[test]
fn one_level_over_the_limit_is_a_syntax_error_at_its_place() {
    let store = chain();
    for (name, shape) in SHAPES {
        let (query, _) = shape(MAX_DEPTH + 2);
        let crossed = crossing(&query);
        match rows(&store, &query) {
            Err(QueryError::Syntax(message)) => {
                assert!(
                    message.starts_with(&format!("error at 1:{crossed}: nesting deeper than")),
                    "{name}: {message}"
                );
            }
            other => panic!("{name}: expected a syntax error, got {other:?}"),
        }
    }
    // Updates are guarded too.
    let update = format!("INSERT DATA {}", "{".repeat(MAX_DEPTH + 1));
    assert!(matches!(
        quiver_sparql::parse_update(&update, None),
        Err(QueryError::Syntax(message)) if message.contains("nesting deeper than")
    ));
}

/// The deepest bracket nesting of a query without strings or IRIs containing brackets.
fn max_depth(query: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for c in query.chars() {
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    max
}

/// The column (1-based) of the bracket that first goes past the limit.
fn crossing(query: &str) -> usize {
    let mut depth = 0;
    for (column, c) in query.chars().enumerate() {
        match c {
            '(' | '{' | '[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return column + 1;
                }
            }
            ')' | '}' | ']' => depth -= 1,
            _ => {}
        }
    }
    panic!("the query does not go past the limit");
}
