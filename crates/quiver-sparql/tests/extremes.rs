//! MIN and MAX of one pattern's variable with no GROUP BY keys, read from the ends of its
//! order in the predicate index (`exec/group_extremes.rs`), against Oxigraph where the two
//! engines order alike (IRIs, simple literals, numbers apart) and against the engine's own
//! general path (the same aggregate grouped by a constant) over every kind of term, before
//! and after updates add terms whose ids come after the sorted ones.

use crate::support;

use quiver_sparql::ExecOptions;
use quiver_store::Store;
use support::pair::Pair;

/// The `i`-th object of `kind`, with repeats.
fn object(kind: &str, i: usize) -> String {
    match kind {
        "str" => format!("\"v{}\"", i * 13 % 97),
        "iri" => format!("<http://t/o{}>", i * 7 % 113),
        "num" => format!(
            "\"{}\"^^<http://www.w3.org/2001/XMLSchema#integer>",
            i * 37 % 101
        ),
        // Strings and IRIs.
        "mix" if i.is_multiple_of(2) => format!("<http://t/m{}>", i % 41),
        "mix" => format!("\"m{}\"", i % 43),
        // Every kind: blank nodes, language-tagged and typed literals too.
        _ => match i % 5 {
            0 => format!("_:b{}", i % 17),
            1 => format!("\"l{}\"@en", i % 19),
            2 => format!("\"{}\"^^<http://www.w3.org/2001/XMLSchema#decimal>", i % 23),
            3 => format!("<http://t/a{}>", i % 29),
            _ => format!("\"a{}\"", i % 31),
        },
    }
}

const KINDS: [&str; 5] = ["str", "iri", "num", "mix", "all"];

fn text() -> String {
    let mut text = String::new();
    for i in 0..500 {
        let kind = KINDS[i % KINDS.len()];
        let subject = match i % 7 {
            6 => format!("_:s{i}"),
            _ => format!("<http://t/s{}>", i * 31 % 500),
        };
        text.push_str(&format!(
            "{subject} <http://t/{kind}> {} .\n",
            object(kind, i)
        ));
    }
    text
}

/// The aggregates asked, over `body`.
fn queries(body: &str) -> Vec<String> {
    [
        "(MIN(?o) AS ?a)",
        "(MAX(?o) AS ?a)",
        "(MIN(?o) AS ?a) (MAX(DISTINCT ?o) AS ?b) (MIN(?o) AS ?c)",
        "(MIN(?s) AS ?a) (MAX(?s) AS ?b)",
    ]
    .iter()
    .map(|aggregates| format!("SELECT {aggregates} {{ {body} }}"))
    .collect()
}

fn rows(store: &Store, query: &str) -> (Vec<String>, Vec<support::Row>, bool) {
    let (vars, rows, notes) = support::select_explained(store, query, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    let read = notes.iter().any(|note| note.starts_with("MIN/MAX of"));
    (vars, rows, read)
}

/// Every query's rows against Oxigraph's (kinds both order alike) and the general path's;
/// returns how many were read from the ends of the order.
fn check(pair: &Pair) -> usize {
    let mut read_from_ends = 0;
    let mut bodies: Vec<String> = KINDS
        .iter()
        .map(|kind| format!("?s <http://t/{kind}> ?o"))
        .collect();
    bodies.push("?s ?p ?o".into());
    bodies.push("?s <http://t/absent> ?o".into());
    for body in &bodies {
        for query in queries(body) {
            let (vars, ours, read) = rows(&pair.quiver, &query);
            read_from_ends += usize::from(read);
            // The general path: the same aggregates grouped by a constant key.
            let general = query.replace(
                &format!("{{ {body} }}"),
                &format!("{{ {body} BIND (1 AS ?one) }} GROUP BY ?one"),
            );
            let (_, expected, general_read) = rows(&pair.quiver, &general);
            assert!(!general_read, "{general}");
            // One row either way (an empty pattern's group has no key with GROUP BY).
            match expected.as_slice() {
                [] => assert_eq!(ours, vec![vec![None; vars.len()]], "{query}"),
                _ => assert_eq!(ours, expected, "{query}"),
            }
            let agreed = ["str", "iri", "mix", "num", "absent"]
                .iter()
                .any(|kind| body.contains(&format!("/{kind}>")));
            if agreed {
                let theirs = support::oxigraph_rows(&pair.oxigraph, &query, &vars);
                assert_eq!(unlabelled(ours), unlabelled(theirs), "{query} (Oxigraph)");
            }
        }
    }
    read_from_ends
}

/// Rows with blank nodes' labels dropped (each engine labels them its own way).
fn unlabelled(rows: Vec<support::Row>) -> Vec<support::Row> {
    rows.into_iter()
        .map(|row| {
            row.into_iter()
                .map(|term| term.map(|t| if t.starts_with("_:") { "_:".into() } else { t }))
                .collect()
        })
        .collect()
}

#[test]
fn min_and_max_of_one_pattern_equal_the_general_path_and_oxigraph() {
    let mut pair = Pair::new(&text());
    // Of each body's four queries: ascending reads for every kind but numbers (whose ids
    // do not sort), descending where no typed or tagged literal sorts last.
    let before = check(&pair);
    assert!(before >= 12, "only {before} queries read from the ends");
    pair.update(
        "INSERT DATA { <http://t/a> <http://t/str> \"a-first\" . \
         <http://t/zz> <http://t/str> \"zz-last\" . <http://t/0> <http://t/iri> <http://t/0> . \
         _:new <http://t/mix> <http://t/zzz> . <http://t/s1> <http://t/all> \"\" }",
    );
    let after = check(&pair);
    assert!(after >= 12, "only {after} queries read from the ends");
    pair.update("DELETE WHERE { ?s <http://t/str> ?o }");
    check(&pair);
}
