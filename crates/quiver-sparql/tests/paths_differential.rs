//! Property paths against Oxigraph: random graphs over five IRIs and three predicates (with
//! cycles, self-loops and a literal), random paths built from `^`, `/`, `|`, `*`, `+`, `?`
//! and negated sets, between variables, constants (vertices of the graph) and the
//! same variable twice, alone and in joins that seed the walks. Results are compared as
//! bags, or as sets where Oxigraph departs from SPARQL's bag semantics (see the test).
//! `PATH_CASES` sets the number of graphs.

use std::fmt::Write as _;

use oxrdf::{Literal, NamedNode, Term, Triple};
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

use crate::support;

const EX: &str = "http://example.org/";
const NODES: [&str; 5] = ["a", "b", "c", "d", "e"];
const PREDICATES: [&str; 3] = ["p", "q", "r"];

/// xorshift64*: deterministic, so a failure reproduces from its case number.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

fn node(local: &str) -> NamedNode {
    NamedNode::new_unchecked(format!("{EX}{local}"))
}

fn random_graph(rng: &mut Rng) -> Vec<Triple> {
    let mut triples: Vec<Triple> = (0..1 + rng.below(14))
        .map(|_| {
            let subject = node(NODES[rng.below(5)]);
            let predicate = node(PREDICATES[rng.below(3)]);
            let object: Term = if rng.below(10) == 0 {
                Literal::new_simple_literal("v").into()
            } else {
                node(NODES[rng.below(5)]).into()
            };
            Triple::new(subject, predicate, object)
        })
        .collect();
    triples.sort_by_key(|t| t.to_string());
    triples.dedup();
    triples
}

fn random_path(rng: &mut Rng, depth: usize) -> String {
    let atom = |rng: &mut Rng| match rng.below(6) {
        0..=2 => format!(":{}", PREDICATES[rng.below(3)]),
        3 => format!("^:{}", PREDICATES[rng.below(3)]),
        4 => format!("!:{}", PREDICATES[rng.below(3)]),
        _ => format!(
            "!(:{}|^:{})",
            PREDICATES[rng.below(3)],
            PREDICATES[rng.below(3)]
        ),
    };
    if depth == 0 {
        return atom(rng);
    }
    match rng.below(8) {
        0 => atom(rng),
        1 => format!(
            "({}/{})",
            random_path(rng, depth - 1),
            random_path(rng, depth - 1)
        ),
        2 => format!(
            "({}|{})",
            random_path(rng, depth - 1),
            random_path(rng, depth - 1)
        ),
        3 => format!("({})*", random_path(rng, depth - 1)),
        4 => format!("({})+", random_path(rng, depth - 1)),
        5 => format!("({})?", random_path(rng, depth - 1)),
        6 => format!("^({})", random_path(rng, depth - 1)),
        _ => format!("({})+", atom(rng)),
    }
}

/// A query; its constants are vertices of the graph, `vertices` (Oxigraph 0.5 matches
/// nothing at a constant the store lacks, where SPARQL has zero-length paths match it:
/// `paths.rs` checks those cases).
fn random_query(rng: &mut Rng, vertices: &[String]) -> String {
    let path = random_path(rng, 2);
    let end = |rng: &mut Rng, var: &str| {
        if rng.below(3) == 0 && !vertices.is_empty() {
            vertices[rng.below(vertices.len())].clone()
        } else {
            var.to_owned()
        }
    };
    match rng.below(5) {
        0 => format!("SELECT * {{ ?x {path} ?x }}"),
        1 => format!("SELECT * {{ ?x {path} ?y . ?y :q ?z }}"),
        2 => format!("SELECT * {{ ?z :p ?x . ?x {path} ?y }}"),
        _ => {
            let (s, o) = (end(rng, "?x"), end(rng, "?y"));
            if s.starts_with('?') || o.starts_with('?') {
                format!("SELECT * {{ {s} {path} {o} }}")
            } else {
                format!("SELECT * {{ {s} {path} {o} . BIND(1 AS ?one) }}")
            }
        }
    }
}

fn load(triples: &[Triple]) -> Store {
    let mut text = String::new();
    for t in triples {
        let _ = writeln!(text, "{t} .");
    }
    support::load(&text)
}

fn render(row: Vec<Option<Term>>) -> String {
    row.iter()
        .map(|t| t.as_ref().map_or("-".to_owned(), Term::to_string))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quiver_rows(store: &Store, text: &str) -> (Vec<String>, Vec<String>) {
    let prepared =
        prepare(store, text, &PrepareOptions::default()).unwrap_or_else(|e| panic!("{text}: {e}"));
    let QueryResults::Solutions(solutions) = prepared
        .execute(store, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{text}: {e}"))
    else {
        panic!("not solutions")
    };
    let vars = solutions
        .variables
        .iter()
        .map(|v| v.as_str().to_owned())
        .collect();
    let mut rows: Vec<String> = (0..solutions.len())
        .map(|r| render(solutions.row(r)))
        .collect();
    rows.sort();
    (vars, rows)
}

fn oxigraph_rows(store: &oxigraph::store::Store, text: &str, vars: &[String]) -> Vec<String> {
    let results = oxigraph::sparql::SparqlEvaluator::new()
        .parse_query(text)
        .unwrap_or_else(|e| panic!("{text}: {e}"))
        .on_store(store)
        .execute()
        .unwrap_or_else(|e| panic!("{text}: {e}"));
    let oxigraph::sparql::QueryResults::Solutions(solutions) = results else {
        panic!("not solutions")
    };
    let mut rows: Vec<String> = solutions
        .map(|s| {
            let s = s.unwrap();
            render(vars.iter().map(|v| s.get(v.as_str()).cloned()).collect())
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn random_paths_agree_with_oxigraph() {
    let cases: usize = std::env::var("PATH_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let (mut compared, mut non_empty) = (0, 0);
    for case in 0..cases {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (case as u64 + 1).wrapping_mul(0x1234_5678_9ABC));
        let triples = random_graph(&mut rng);
        let store = load(&triples);
        let oxigraph = oxigraph::store::Store::new().unwrap();
        for t in &triples {
            oxigraph
                .insert(t.as_ref().in_graph(oxrdf::GraphNameRef::DefaultGraph))
                .unwrap();
        }
        let mut vertices: Vec<String> = triples
            .iter()
            .flat_map(|t| [t.subject.to_string(), t.object.to_string()])
            .collect();
        vertices.sort();
        vertices.dedup();
        for _ in 0..20 {
            let query = format!("PREFIX : <{EX}> {}", random_query(&mut rng, &vertices));
            let (vars, mut ours) = quiver_rows(&store, &query);
            let mut theirs = oxigraph_rows(&oxigraph, &query, &vars);
            // Oxigraph evaluates every path as a set; SPARQL gives `/` and `|` (also the
            // union a negated set with inverse members stands for) bag semantics, which
            // `paths.rs` checks. With those operators, only the distinct rows compare.
            if query.contains('/') || query.contains('|') {
                ours.dedup();
                theirs.dedup();
            }
            let data: String = triples.iter().map(|t| format!("{t} .\n")).collect();
            assert_eq!(
                ours, theirs,
                "case {case}\n{data}\n{query}\nquiver (left) and Oxigraph (right) differ"
            );
            compared += 1;
            non_empty += usize::from(!ours.is_empty());
        }
    }
    // The comparison is only meaningful if many queries have rows.
    assert!(
        non_empty * 3 >= compared,
        "{non_empty} of {compared} non-empty"
    );
}
