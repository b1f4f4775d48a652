//! `quiver gen lubm`: write LUBM data as N-Triples (optionally gzip), in parallel.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::{Args, Subcommand};
use flate2::write::GzEncoder;
use flate2::Compression;
use indicatif::{ProgressBar, ProgressStyle};
use quiver_lubm::ntriples::NTriplesBuffer;
use quiver_lubm::parallel::for_each_university_ordered;
use quiver_lubm::{generate_university, LubmConfig};

use crate::output::Output;

#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// Generate the LUBM benchmark data, identical to UBA 1.7, as N-Triples
    Lubm(LubmArgs),
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

pub fn run(command: GenCommand) -> Result<()> {
    match command {
        GenCommand::Lubm(args) => lubm(args),
    }
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
    let gzip = args
        .output
        .as_ref()
        .is_some_and(|path| path.extension().is_some_and(|ext| ext == "gz"));
    let threads = crate::threads(args.threads);
    let mut output = Output::open(args.output.as_deref())?;
    let progress = progress_bar(u64::from(config.universities));
    let started = Instant::now();
    let mut triples = 0u64;

    // Each university becomes one self-contained chunk of text; with gzip, one gzip member
    // (concatenated members are a valid gzip stream), so compression runs in parallel too.
    for_each_university_ordered(
        config.range(),
        threads,
        |university| {
            let mut buffer = NTriplesBuffer::new();
            generate_university(config.seed, university, &mut buffer);
            let bytes = if gzip {
                let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
                encoder
                    .write_all(&buffer.bytes)
                    .and_then(|()| encoder.finish())
                    .expect("compressing into memory cannot fail")
            } else {
                buffer.bytes
            };
            (bytes, buffer.triples)
        },
        |_, (bytes, count)| {
            output.write_all(&bytes)?;
            triples += count;
            progress.inc(1);
            progress.set_message(format!("{triples} triples"));
            Ok::<_, anyhow::Error>(())
        },
    )?;
    output.finish()?;
    progress.finish_and_clear();
    if std::io::stderr().is_terminal() {
        let seconds = started.elapsed().as_secs_f64();
        eprintln!(
            "generated LUBM-{} ({} triples) in {:.2} s, {:.2} M triples/s",
            config.universities,
            triples,
            seconds,
            triples as f64 / seconds / 1e6
        );
    }
    Ok(())
}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
pub fn progress_bar(length: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} universities, {msg} (ETA {eta})",
        )
        .expect("valid progress template"),
    );
    bar
}
