//! `quiver gen lubm` and `quiver gen bsbm`: write benchmark data as N-Triples (optionally
//! gzip), in parallel, in the same order whatever the number of threads.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, Subcommand};
use flate2::write::GzEncoder;
use flate2::Compression;
use indicatif::{ProgressBar, ProgressStyle};
use quiver_bsbm::plan::MAX_PRODUCTS;
use quiver_bsbm::{BsbmConfig, Plan};
use quiver_lubm::ntriples::NTriplesBuffer;
use quiver_lubm::{generate_university, LubmConfig};
use quiver_ordered::for_each_ordered;

use crate::output::Output;

#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// Generate the LUBM benchmark data, identical to UBA 1.7, as N-Triples
    Lubm(LubmArgs),
    /// Generate the Berlin SPARQL Benchmark (BSBM V3.1) data as N-Triples
    Bsbm(BsbmArgs),
}

#[derive(Args, Debug)]
pub struct LubmArgs {
    /// Number of universities (LUBM-N)
    #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..))]
    pub universities: u32,
    /// Random seed, as UBA's -seed
    #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
    pub seed: i64,
    /// Index of the first university, as UBA's -index
    #[arg(long, default_value_t = 0)]
    pub start_index: u32,
    /// Output file (gzip-compressed when it ends in .gz); standard output by default
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Worker threads (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
}

#[derive(Args, Debug)]
pub struct BsbmArgs {
    /// Number of products (the scale: about 373 triples a product at 1,000)
    #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PRODUCTS)))]
    pub products: u32,
    /// Random seed (the same seed gives the same bytes on any number of threads)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Also type each product with every ancestor of its product type (bsbmtools' -fc)
    #[arg(long)]
    pub forward_chaining: bool,
    /// Output file (gzip-compressed when it ends in .gz); standard output by default
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Worker threads (default: all cores)
    #[arg(long, value_parser = crate::limits::parse_threads, allow_hyphen_values = true)]
    pub threads: Option<u32>,
}

pub fn run(command: GenCommand) -> Result<()> {
    match command {
        GenCommand::Lubm(args) => lubm(args),
        GenCommand::Bsbm(args) => bsbm(args),
    }
}

fn is_gzip(path: Option<&PathBuf>) -> bool {
    path.is_some_and(|path| path.extension().is_some_and(|ext| ext == "gz"))
}

/// A chunk of text as written: itself, or one gzip member of it (concatenated members are
/// a valid gzip stream, so compression runs in parallel too).
fn chunk(bytes: Vec<u8>, gzip: bool) -> Vec<u8> {
    if !gzip {
        return bytes;
    }
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder
        .write_all(&bytes)
        .and_then(|()| encoder.finish())
        .expect("compressing into memory cannot fail")
}

fn bsbm(args: BsbmArgs) -> Result<()> {
    let config = BsbmConfig {
        products: args.products,
        seed: args.seed,
        forward_chaining: args.forward_chaining,
    };
    let plan = Plan::new(config)?;
    let gzip = is_gzip(args.output.as_ref());
    let threads = crate::threads(args.threads);
    let mut written = Written::open(
        args.output.as_deref(),
        progress_bar_of(plan.units() as u64, "units"),
    )?;
    for_each_ordered(
        0..plan.units(),
        threads,
        |unit| {
            let mut buffer = quiver_bsbm::NTriplesBuffer::new();
            quiver_bsbm::generate_unit(&plan, plan.unit(unit), &mut buffer);
            (chunk(buffer.bytes, gzip), buffer.triples)
        },
        |_, (bytes, count)| written.add(&bytes, count),
    )?;
    written.finish(&format!("BSBM with {} products", config.products))
}

fn lubm(args: LubmArgs) -> Result<()> {
    let config = LubmConfig {
        universities: args.universities,
        start_index: args.start_index,
        seed: args.seed,
    };
    if u64::from(args.start_index) + u64::from(args.universities) > u64::from(u32::MAX) {
        anyhow::bail!(
            "--start-index plus --universities must stay below {}",
            u32::MAX
        );
    }
    let gzip = is_gzip(args.output.as_ref());
    let threads = crate::threads(args.threads);
    let mut written = Written::open(
        args.output.as_deref(),
        progress_bar(u64::from(config.universities)),
    )?;
    // Each university becomes one self-contained chunk of text; with gzip, one gzip member
    // (concatenated members are a valid gzip stream), so compression runs in parallel too.
    for_each_ordered(
        config.range(),
        threads,
        |university| {
            let mut buffer = NTriplesBuffer::new();
            generate_university(config.seed, university, &mut buffer);
            (chunk(buffer.bytes, gzip), buffer.triples)
        },
        |_, (bytes, count)| written.add(&bytes, count),
    )?;
    written.finish(&format!("LUBM-{}", config.universities))
}

/// Where the generated chunks go, in order: the output, the progress bar and the count of
/// triples, for the summary on a terminal at the end.
struct Written {
    output: Output,
    progress: ProgressBar,
    triples: u64,
    started: Instant,
}

impl Written {
    fn open(path: Option<&std::path::Path>, progress: ProgressBar) -> Result<Self> {
        Ok(Self {
            output: Output::open(path)?,
            progress,
            triples: 0,
            started: Instant::now(),
        })
    }

    /// Writes one chunk of `count` triples.
    fn add(&mut self, bytes: &[u8], count: u64) -> Result<()> {
        self.output.write_all(bytes)?;
        self.triples += count;
        self.progress.inc(1);
        self.progress
            .set_message(format!("{} triples", self.triples));
        Ok(())
    }

    /// Finishes the output and says on a terminal what was generated (`what`) and how fast.
    fn finish(self, what: &str) -> Result<()> {
        self.output.finish()?;
        self.progress.finish_and_clear();
        if std::io::stderr().is_terminal() {
            let seconds = self.started.elapsed().as_secs_f64();
            eprintln!(
                "generated {what} ({} triples) in {seconds:.2} s, {:.2} M triples/s",
                self.triples,
                self.triples as f64 / seconds / 1e6
            );
        }
        Ok(())
    }
}

/// A progress bar of universities on stderr when it is a terminal, hidden otherwise.
pub fn progress_bar(length: u64) -> ProgressBar {
    progress_bar_of(length, "universities")
}

/// A progress bar on stderr when it is a terminal, hidden otherwise; `what` names the
/// counted items.
pub fn progress_bar_of(length: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{spinner}} [{{elapsed_precise}}] {{bar:40}} {{pos}}/{{len}} {what}, {{msg}} (ETA {{eta}})"
        ))
        .expect("valid progress template"),
    );
    bar
}
