//! Where command output goes: standard output, or a file written atomically.
//!
//! A file is written under a temporary name beside its destination and renamed into place
//! only once everything was written and synced, so an interrupted or failed run never
//! leaves a partial file that looks complete.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// A byte sink for generated data.
pub enum Output {
    Stdout(io::Stdout),
    File(AtomicFile),
}

impl Output {
    /// Standard output when `path` is `None`, else a new atomic file at `path`.
    pub fn open(path: Option<&Path>) -> Result<Self> {
        Ok(match path {
            None => Output::Stdout(io::stdout()),
            Some(path) => Output::File(AtomicFile::create(path)?),
        })
    }

    /// A readable name for error messages.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout(_) => "standard output".to_owned(),
            Output::File(file) => file.destination.display().to_string(),
        }
    }

    /// Write all of `bytes`; errors name the destination (a broken pipe stays detectable).
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        let result = match self {
            Output::Stdout(stdout) => stdout.lock().write_all(bytes),
            Output::File(file) => file.file.write_all(bytes),
        };
        result.with_context(|| format!("writing to {}", self.describe()))
    }

    /// Flush, and for a file sync it and move it into place.
    pub fn finish(self) -> Result<()> {
        match self {
            Output::Stdout(stdout) => stdout.lock().flush().context("writing to standard output"),
            Output::File(file) => file.commit(),
        }
    }
}

impl Write for Output {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        match self {
            Output::Stdout(stdout) => stdout.write(bytes),
            Output::File(file) => file.file.write(bytes),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Output::Stdout(stdout) => stdout.write_all(bytes),
            Output::File(file) => file.file.write_all(bytes),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Stdout(stdout) => stdout.flush(),
            Output::File(file) => file.file.flush(),
        }
    }
}

/// A file written under a temporary name and renamed over its destination on commit.
/// Dropped without commit, the temporary file is removed.
pub struct AtomicFile {
    destination: PathBuf,
    temporary: PathBuf,
    file: File,
    committed: bool,
}

impl AtomicFile {
    pub fn create(destination: &Path) -> Result<Self> {
        let name = destination
            .file_name()
            .with_context(|| format!("{}: not a file path", destination.display()))?;
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".{}.tmp", std::process::id()));
        let temporary = destination.with_file_name(temporary_name);
        let file = File::create(&temporary)
            .with_context(|| format!("cannot create {}", destination.display()))?;
        Ok(Self {
            destination: destination.to_owned(),
            temporary,
            file,
            committed: false,
        })
    }

    pub fn commit(mut self) -> Result<()> {
        let context = || format!("writing to {}", self.destination.display());
        self.file.flush().with_context(context)?;
        self.file.sync_all().with_context(context)?;
        std::fs::rename(&self.temporary, &self.destination).with_context(context)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// Whether `error` (anywhere in its chain) is a closed pipe on the reading side.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Writes `text` to standard output; a closed pipe surfaces as an error (see [`is_broken_pipe`]).
pub fn print_stdout(text: &str) -> Result<()> {
    let mut stdout = io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("writing to standard output")
}
