//! Random graphs of people who know each other, for differentials of EXISTS and MINUS:
//! subjects `ex:s0…ex:s5` that know each other (`ex:knows`), with integer values (`ex:v`)
//! and countries (`ex:c`, IRIs `ex:c0…ex:c2`).

use std::fmt::Write as _;

use proptest::prelude::*;

/// The `knows` pairs, the values and the countries, by subject number.
pub type Graph = (
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
    Vec<(usize, usize)>,
);

pub fn graph_strategy() -> impl Strategy<Value = Graph> {
    (
        // At least one triple: the loader refuses an empty file.
        prop::collection::vec((0..6_usize, 0..6_usize), 1..14),
        prop::collection::vec((0..6_usize, 0..4_usize), 0..8),
        prop::collection::vec((0..6_usize, 0..3_usize), 0..6),
    )
}

/// The graph as N-Triples.
pub fn ntriples((knows, values, countries): &Graph) -> String {
    let mut text = String::new();
    for (s, o) in knows {
        let _ = writeln!(
            text,
            "<http://ex/s{s}> <http://ex/knows> <http://ex/s{o}> ."
        );
    }
    for (s, v) in values {
        let _ = writeln!(
            text,
            "<http://ex/s{s}> <http://ex/v> \"{v}\"^^<http://www.w3.org/2001/XMLSchema#integer> ."
        );
    }
    for (s, c) in countries {
        let _ = writeln!(text, "<http://ex/s{s}> <http://ex/c> <http://ex/c{c}> .");
    }
    text
}
