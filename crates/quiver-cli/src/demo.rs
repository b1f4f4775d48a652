//! `quiver demo`: the main job on an embedded default, runnable anywhere with no input.
//!
//! Generates LUBM-1 in memory, prints a summary of what it contains, loads it into a store
//! straight from the generator, shows the store's size, then runs the standard LUBM queries
//! and prints their table.

use std::collections::BTreeMap;
use std::time::Instant;

use anyhow::Result;
use quiver_loader::{load_lubm, NoProgress};
use quiver_lubm::{generate_university, LubmConfig, Object, Property, Triple, TripleSink};
use quiver_store::Direction;

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

    let started = Instant::now();
    let (store, _) = load_lubm(
        LubmConfig::standard(1),
        crate::threads(None),
        None,
        &NoProgress,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "\nstore: {} triples, {} terms, {} predicates, {} classes, {:.1} bytes/triple, loaded in {:.1} ms",
        store.triples(),
        store.terms(),
        store.predicate_count(),
        store.class_count(),
        store.data_bytes() as f64 / store.triples() as f64,
        seconds * 1e3
    );
    let department = "http://www.Department0.University0.edu";
    if let (Some(vertex), Some(works_for)) = (
        store.iri_id(department),
        store.predicate_id(&Property::WorksFor.iri()),
    ) {
        let faculty = store.graph().get(vertex, works_for, Direction::In);
        println!(
            "<{department}> has {} faculty (ub:worksFor, IN)",
            faculty.len()
        );
    }
    let threads = crate::threads(None);
    let queries = crate::bench_lubm::default_queries();
    let measured = crate::bench_lubm::measure_queries(&store, &queries, 3, threads, None)?;
    println!(
        "\nLUBM queries (median of 3 warm runs, {threads} thread(s), every row decoded):\n\n{}",
        crate::bench_lubm::render_table(&measured)
    );
    Ok(())
}
