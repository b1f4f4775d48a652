//! Nanoseconds per lookup of a term in a dictionary of LUBM-100's size (3.3 M IRIs shaped
//! as UBA names them), at random, as a light query's constants are looked up: the search
//! through the fences, the bucket heads and one bucket. A micro-benchmark of the search
//! alone, whose share of the emulator's profile moves too much from run to run to show a
//! change of a few percent.
//!
//! `cargo run --release -p quiver-model --example dictionary_lookups`

use std::time::Instant;

use quiver_model::Dictionary;

fn main() {
    let mut terms = Vec::new();
    for university in 0..100 {
        for department in 0..15 {
            for kind in [
                "GraduateStudent",
                "UndergraduateStudent",
                "Course",
                "Publication",
            ] {
                for i in 0..550 {
                    let iri = format!(
                        "http://www.Department{department}.University{university}.edu/{kind}{i}"
                    );
                    terms.push(iri.into_bytes());
                }
            }
        }
    }
    terms.sort();
    let dictionary = Dictionary::from_sorted(&terms);
    // A fixed sequence of random terms (a linear congruential generator).
    let mut state: u64 = 12345;
    let probes: Vec<usize> = (0..2_000_000)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as usize % terms.len()
        })
        .collect();
    let mut rounds = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let found = probes
            .iter()
            .filter(|&&p| dictionary.lookup(&terms[p]) == Some(p as quiver_model::Id))
            .count();
        assert_eq!(found, probes.len(), "every term is found at its rank");
        rounds.push(started.elapsed().as_nanos() as f64 / probes.len() as f64);
    }
    rounds.sort_by(f64::total_cmp);
    println!(
        "{} terms, {} lookups a round: median {:.1} ns/lookup (rounds {:?})",
        terms.len(),
        probes.len(),
        rounds[rounds.len() / 2],
        rounds.iter().map(|r| r.round()).collect::<Vec<_>>()
    );
}
