//! The device against the CPU executor on random graphs: random basic graph patterns —
//! chains, stars and cycles (whose plans intersect), constants at either end, now and then
//! a predicate variable or an index start that stays on the CPU — run once on the CPU and
//! once with every step the device takes sent to it; the rows must be the same.
//!
//! `cargo test -p quiver-gpu` runs it on the host backend; `quiver bench gpu-check` on a
//! GPU.

use std::fmt::Write as _;
use std::sync::Arc;

use oxrdf::{GraphName, Literal, NamedNode, NamedOrBlankNode, Quad, Term};
use quiver_sparql::device::BgpDevice;
use quiver_sparql::{prepare, ExecOptions, PrepareOptions, QueryResults};
use quiver_store::Store;

/// What a check found.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    pub graphs: usize,
    pub queries: usize,
    /// Queries of which some step ran on the device.
    pub on_device: usize,
    /// Rows compared in all.
    pub rows: usize,
    /// Queries whose rows came in another order (same rows).
    pub reordered: usize,
    /// Queries whose rows differ, with the query and both counts.
    pub mismatches: Vec<String>,
}

/// A small deterministic generator (xorshift64*), so a failing seed can be rerun.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// A skewed pick in 0..n: small values far more often.
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        self.below(a + 1)
    }
}

const PREDICATES: usize = 5;
const CLASSES: usize = 3;

fn vertex(i: usize) -> NamedNode {
    NamedNode::new_unchecked(format!("http://example.org/v{i}"))
}

fn predicate(i: usize) -> NamedNode {
    NamedNode::new_unchecked(format!("http://example.org/p{i}"))
}

fn class(i: usize) -> NamedNode {
    NamedNode::new_unchecked(format!("http://example.org/C{i}"))
}

/// A random graph of `vertices` vertices: skewed edges over a few predicates, classes, a
/// few literals.
pub fn random_graph(seed: u64, vertices: usize) -> Vec<Quad> {
    let mut rng = Rng(seed | 1);
    let mut quads = Vec::new();
    let rdf_type = NamedNode::new_unchecked("http://www.w3.org/1999/02/22-rdf-syntax-ns#type");
    for v in 0..vertices {
        quads.push(Quad::new(
            vertex(v),
            rdf_type.clone(),
            class(rng.below(CLASSES)),
            GraphName::DefaultGraph,
        ));
        let degree = rng.below(6);
        for _ in 0..degree {
            let object: Term = if rng.below(20) == 0 {
                Literal::new_simple_literal(format!("l{}", rng.below(10))).into()
            } else {
                vertex(rng.skewed(vertices)).into()
            };
            quads.push(Quad::new(
                NamedOrBlankNode::from(vertex(v)),
                predicate(rng.skewed(PREDICATES)),
                object,
                GraphName::DefaultGraph,
            ));
        }
    }
    quads
}

/// A random basic graph pattern over the graph of [`random_graph`].
fn random_query(rng: &mut Rng, vertices: usize) -> String {
    let var = |i: usize| format!("?v{i}");
    let node = |rng: &mut Rng, i: usize| {
        if rng.below(8) == 0 {
            format!("<{}>", vertex(rng.skewed(vertices)).as_str())
        } else {
            var(i)
        }
    };
    let pred = |rng: &mut Rng| {
        if rng.below(12) == 0 {
            "?p".to_owned()
        } else {
            format!("<{}>", predicate(rng.skewed(PREDICATES)).as_str())
        }
    };
    let mut text = String::from("SELECT * WHERE {\n");
    let shape = rng.below(4);
    let patterns = 2 + rng.below(3);
    match shape {
        // A chain ?v0 → ?v1 → …, maybe from a class.
        0 => {
            if rng.below(2) == 0 {
                let _ = writeln!(text, "  ?v0 a <{}> .", class(rng.below(CLASSES)).as_str());
            }
            for i in 0..patterns {
                let _ = writeln!(text, "  {} {} {} .", var(i), pred(rng), node(rng, i + 1));
            }
        }
        // A star around ?v0.
        1 => {
            for i in 0..patterns {
                if rng.below(2) == 0 {
                    let _ = writeln!(text, "  ?v0 {} {} .", pred(rng), node(rng, i + 1));
                } else {
                    let _ = writeln!(text, "  {} {} ?v0 .", node(rng, i + 1), pred(rng));
                }
            }
        }
        // A triangle (the planner fuses its closing check into an intersection).
        2 => {
            let _ = writeln!(text, "  ?v0 {} ?v1 .", pred(rng));
            let _ = writeln!(text, "  ?v1 {} ?v2 .", pred(rng));
            let _ = writeln!(text, "  ?v0 {} ?v2 .", pred(rng));
            if rng.below(2) == 0 {
                let _ = writeln!(text, "  ?v2 a <{}> .", class(rng.below(CLASSES)).as_str());
            }
        }
        // A square with a tail.
        _ => {
            let _ = writeln!(text, "  ?v0 {} ?v1 .", pred(rng));
            let _ = writeln!(text, "  ?v1 {} ?v2 .", pred(rng));
            let _ = writeln!(text, "  ?v3 {} ?v2 .", pred(rng));
            let _ = writeln!(text, "  ?v0 {} ?v3 .", pred(rng));
            let _ = writeln!(text, "  ?v3 {} {} .", pred(rng), node(rng, 4));
        }
    }
    text.push('}');
    text
}

/// Rows of a SELECT as decoded terms (`UNDEF` where unbound), in order, and whether some
/// step ran on the device.
pub fn select_rows(
    store: &Store,
    text: &str,
    device: Option<Arc<dyn BgpDevice>>,
    threads: usize,
) -> Result<(Vec<Vec<String>>, bool), String> {
    let prepared = prepare(store, text, &PrepareOptions::default()).map_err(|e| e.to_string())?;
    let options = ExecOptions {
        threads,
        device,
        ..ExecOptions::default()
    };
    let (results, profile) = prepared
        .execute_profiled(store, &options)
        .map_err(|e| e.to_string())?;
    let on_device = profile
        .bgps
        .iter()
        .flat_map(|bgp| &bgp.steps)
        .any(|step| step.transfer.is_some());
    let QueryResults::Solutions(solutions) = results else {
        return Err("not a SELECT".into());
    };
    let mut out = Vec::new();
    for row in 0..solutions.len() {
        out.push(
            solutions
                .row(row)
                .into_iter()
                .map(|t| t.map_or_else(|| "UNDEF".to_owned(), |t| t.to_string()))
                .collect(),
        );
    }
    Ok((out, on_device))
}

/// Runs `queries` random queries on each of `graphs` random graphs, on the CPU and on
/// `device` (whose `min_work` decides which steps it takes), with `threads` threads.
pub fn check_random_bgps(
    device: &Arc<crate::GpuDevice>,
    seed: u64,
    graphs: usize,
    queries: usize,
    vertices: usize,
    threads: usize,
) -> Result<CheckReport, String> {
    let mut report = CheckReport::default();
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for g in 0..graphs {
        let quads = random_graph(seed.wrapping_add(g as u64), vertices);
        let (store, _) = quiver_loader::load_quads(quads, None).map_err(|e| e.to_string())?;
        let residency = device.load(&store).map_err(|e| e.to_string())?;
        if !residency.resident {
            return Err(format!(
                "the random graph did not go to the device: {:?}",
                residency.reason
            ));
        }
        report.graphs += 1;
        let dyn_device: Arc<dyn BgpDevice> = device.clone();
        for _ in 0..queries {
            let text = random_query(&mut rng, vertices);
            let (cpu, _) = select_rows(&store, &text, None, threads)?;
            let (gpu, on_device) = select_rows(&store, &text, Some(dyn_device.clone()), threads)
                .map_err(|e| format!("{e}\n{text}"))?;
            report.queries += 1;
            report.rows += cpu.len();
            report.on_device += usize::from(on_device);
            if cpu != gpu {
                let (mut a, mut b) = (cpu.clone(), gpu.clone());
                a.sort();
                b.sort();
                if a == b {
                    report.reordered += 1;
                } else {
                    report.mismatches.push(format!(
                        "graph {g} (seed {}): CPU {} rows, device {} rows\n{text}",
                        seed.wrapping_add(g as u64),
                        cpu.len(),
                        gpu.len()
                    ));
                }
            }
        }
    }
    Ok(report)
}
