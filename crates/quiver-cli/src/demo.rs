//! `quiver demo`: the main job on an embedded default, runnable anywhere with no input.
//!
//! Generates LUBM-1 in memory and prints a summary of what it contains.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Result;
use quiver_lubm::{generate_university, Object, Property, Triple, TripleSink};

#[derive(Default)]
struct Summary {
    triples: u64,
    per_class: BTreeMap<&'static str, u64>,
    per_property: BTreeMap<&'static str, u64>,
}

impl TripleSink for Summary {
    fn triple(&mut self, triple: Triple) {
        self.triples += 1;
        *self
            .per_property
            .entry(triple.predicate.local_name())
            .or_default() += 1;
        if let (Property::Type, Object::Class(class)) = (triple.predicate, triple.object) {
            *self.per_class.entry(class.name()).or_default() += 1;
        }
    }
}

pub fn run() -> Result<()> {
    let started = Instant::now();
    let mut summary = Summary::default();
    generate_university(0, 0, &mut summary);
    let elapsed = started.elapsed();
    println!(
        "LUBM-1 (UBA 1.7, seed 0): {} triples generated in {:.1} ms",
        summary.triples,
        elapsed.as_secs_f64() * 1e3
    );
    println!("\n{:<24} {:>10}", "class", "instances");
    for (class, count) in &summary.per_class {
        println!("{class:<24} {count:>10}");
    }
    println!("\n{:<24} {:>10}", "property", "triples");
    for (property, count) in &summary.per_property {
        println!("{property:<24} {count:>10}");
    }
    Ok(())
}
