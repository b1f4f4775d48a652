//! `quiver completions SHELL`, `quiver man DIR` and `quiver man --markdown FILE`: generated
//! by `clap_complete`, `clap_mangen` and [`crate::reference`] from the command line's own
//! definition, so they never drift from it.
//!
//! Install, for example: `quiver completions bash > /etc/bash_completion.d/quiver`,
//! `quiver completions zsh > "${fpath[1]}/_quiver"`, `quiver completions fish >
//! ~/.config/fish/completions/quiver.fish`; `quiver man /usr/local/share/man/man1`.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Command};
use clap_complete::Shell;

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Directory to write `quiver.1` and `quiver-SUBCOMMAND.1` into (created if needed)
    #[arg(required_unless_present = "markdown")]
    pub directory: Option<PathBuf>,
    /// Write one Markdown page of every subcommand and argument to FILE instead (the book's
    /// command-line reference)
    #[arg(long, value_name = "FILE", conflicts_with = "directory")]
    pub markdown: Option<PathBuf>,
}

/// Writes the completion script for `args.shell` on standard output.
pub fn completions(args: CompletionsArgs, mut command: Command) -> Result<()> {
    let mut out = std::io::stdout().lock();
    clap_complete::generate(args.shell, &mut command, "quiver", &mut out);
    std::io::Write::flush(&mut out)?;
    Ok(())
}

/// Writes the manual pages into `args.directory` and lists them on stderr.
pub fn man(args: ManArgs, command: Command) -> Result<()> {
    if let Some(file) = &args.markdown {
        let page = crate::reference::markdown(command);
        let mut output = crate::output::Output::open(Some(file))?;
        output.write_all(page.as_bytes())?;
        output.finish()?;
        eprintln!("the command-line reference in {}", file.display());
        return Ok(());
    }
    let directory = args
        .directory
        .expect("clap requires a directory without --markdown");
    std::fs::create_dir_all(&directory)
        .with_context(|| format!("cannot create {}", directory.display()))?;
    clap_mangen::generate_to(command, &directory)
        .with_context(|| format!("cannot write the pages into {}", directory.display()))?;
    let mut pages: Vec<_> = std::fs::read_dir(&directory)?
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".1"))
        .collect();
    pages.sort();
    eprintln!(
        "{} manual pages in {}: {}",
        pages.len(),
        directory.display(),
        pages.join(" ")
    );
    Ok(())
}
