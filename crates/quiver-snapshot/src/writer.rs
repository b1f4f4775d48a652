//! Writing a new generation of a store, atomically.
//!
//! Sections are streamed into temporary files (`<file>-<gen>.qvs.tmp`) as they are
//! added, around the page cache where the filesystem allows it (the `data_file` module);
//! [`SnapshotWriter::files`] hands out several files at once, to be written on
//! threads of their own (buffered writes to one file wait on each other in the kernel,
//! writes to several files do not). [`SnapshotWriter::close_file`] finishes a file early
//! (its header written, its descriptor and buffer freed), so that a generation of many
//! files never holds more than a few open: the process's limit on open files (often 1,024)
//! does not bound how many a store may have. [`SnapshotWriter::commit`] then makes the
//! generation durable in an order that keeps the previous one valid until the very last
//! step:
//!
//! 1. write the header of each data file still open, fsync every file (at once, each on a
//!    thread of its own; a closed file is opened again for it), then rename each to
//!    `<file>-<gen>.qvs`;
//! 2. fsync the directory, so those names survive a crash;
//! 3. write `manifest.json.tmp`, fsync it, rename it over `manifest.json`, fsync the
//!    directory: this rename is the commit point;
//! 4. delete the files of older generations and stale temporary files (best effort).
//!
//! A crash or error before step 3 leaves the old manifest pointing at the old files,
//! which are never touched: the new generation number is larger than any found in
//! the directory, so no new name can collide with an existing file. A writer dropped
//! or failing before the commit point removes everything it created.
//!
//! Only one writer may work on a directory at a time.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::data_file::DataFileOut;
use crate::fault::LimitedFile;
use crate::format::{self, FileEntry, Header, Manifest, SectionEntry, HEADER_LEN};
use crate::reader::current_generation;
use crate::{SnapshotError, FORMAT_VERSION};
use rayon::prelude::*;

/// Writes one new generation of a store into a directory.
pub struct SnapshotWriter {
    dir: PathBuf,
    generation: u64,
    /// Data files in the order they were first used.
    files: Vec<PendingFile>,
    /// Files this writer created that must be removed if it does not reach the commit point.
    created: Vec<PathBuf>,
    /// Set once the new manifest is in place; from then on nothing is cleaned up.
    committed: bool,
}

/// A data file being written.
struct PendingFile {
    name: String,
    tmp_path: PathBuf,
    /// `None` once the file is closed: its header is written and nothing more may be.
    out: Option<DataFileOut>,
    /// Bytes written so far, header included.
    len: u64,
    sections: Vec<SectionEntry>,
    /// Set after a failed write to this file: the generation can no longer be committed.
    failed: bool,
}

/// The sections of one data file, written apart from the others' (on a thread of its own,
/// see [`SnapshotWriter::files`]).
pub struct FileSections<'a> {
    file: &'a mut PendingFile,
}

impl FileSections<'_> {
    /// Appends a section, as [`SnapshotWriter::section`] does.
    pub fn section(&mut self, section: &str, bytes: &[u8]) -> Result<(), SnapshotError> {
        self.file.add_section(section, std::iter::once(bytes))
    }

    /// Appends a section holding `values` as raw bytes (native endianness).
    pub fn column<T: bytemuck::Pod>(
        &mut self,
        section: &str,
        values: &[T],
    ) -> Result<(), SnapshotError> {
        self.section(section, bytemuck::cast_slice(values))
    }

    /// Appends a section holding the concatenation of `parts`, written one after the other
    /// without being gathered in memory first.
    pub fn section_of_parts<'p>(
        &mut self,
        section: &str,
        parts: impl Iterator<Item = &'p [u8]> + Clone,
    ) -> Result<(), SnapshotError> {
        self.file.add_section(section, parts)
    }
}

impl SnapshotWriter {
    /// Creates `dir` if missing and starts a new generation: one more than the
    /// current manifest's, and than any generation named by a file in `dir`.
    pub fn create(dir: &Path) -> Result<Self, SnapshotError> {
        fs::create_dir_all(dir).map_err(|e| SnapshotError::io(dir, e))?;
        let mut latest = current_generation(dir).unwrap_or(0);
        for entry in fs::read_dir(dir).map_err(|e| SnapshotError::io(dir, e))? {
            let entry = entry.map_err(|e| SnapshotError::io(dir, e))?;
            if let Some((generation, _)) =
                entry.file_name().to_str().and_then(format::parse_file_name)
            {
                latest = latest.max(generation);
            }
        }
        let generation = latest
            .checked_add(1)
            .ok_or_else(|| SnapshotError::usage(dir, "generation number overflow"))?;
        Ok(SnapshotWriter {
            dir: dir.to_path_buf(),
            generation,
            files: Vec::new(),
            created: Vec::new(),
            committed: false,
        })
    }

    /// The generation this writer is creating.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Appends a section named `section` to the logical file `file`, creating the file
    /// on first use. The section starts at a multiple of 8 bytes within the file.
    pub fn section(
        &mut self,
        file: &str,
        section: &str,
        bytes: &[u8],
    ) -> Result<(), SnapshotError> {
        let index = self.file_index(file)?;
        self.files[index].add_section(section, std::iter::once(bytes))
    }

    /// Finishes the file `file` now rather than at the commit: its header is written and its
    /// descriptor and buffer freed; no section may be added to it after. Its fsync still
    /// waits for the commit, with every other file's.
    pub fn close_file(&mut self, file: &str) -> Result<(), SnapshotError> {
        let generation = self.generation;
        let Some(pending) = self.files.iter_mut().find(|f| f.name == file) else {
            let reason = format!("file '{file}' has no section to close");
            return Err(SnapshotError::usage(&self.dir, reason));
        };
        let result = pending.close(generation);
        pending.failed |= result.is_err();
        result
    }

    /// The sections of several files at once, each to be written on a thread of its own:
    /// buffered writes to one file wait on each other in the kernel, writes to several do
    /// not. The files are created on first use, as by [`SnapshotWriter::section`]; none may
    /// be named twice.
    pub fn files<const N: usize>(
        &mut self,
        names: [&str; N],
    ) -> Result<[FileSections<'_>; N], SnapshotError> {
        // Checked before any file is created, so that a refused call leaves none behind.
        if (1..N).any(|i| names[..i].contains(&names[i])) {
            return Err(SnapshotError::usage(&self.dir, "a file named twice"));
        }
        for name in names {
            format::validate_file_name(name)
                .map_err(|reason| SnapshotError::usage(&self.dir, reason))?;
        }
        let mut indices = [0; N];
        for (index, name) in indices.iter_mut().zip(names) {
            *index = self.file_index(name)?;
        }
        let mut files: Vec<Option<&mut PendingFile>> = self.files.iter_mut().map(Some).collect();
        Ok(indices.map(|index| FileSections {
            file: files[index].take().expect("distinct files"),
        }))
    }

    /// The index of the logical file `file`, created on first use; fails once a write
    /// failed.
    fn file_index(&mut self, file: &str) -> Result<usize, SnapshotError> {
        if self.files.iter().any(|f| f.failed) {
            return Err(SnapshotError::usage(
                &self.dir,
                "an earlier write failed; this generation cannot be completed",
            ));
        }
        format::validate_file_name(file)
            .map_err(|reason| SnapshotError::usage(&self.dir, reason))?;
        match self.files.iter().position(|f| f.name == file) {
            Some(index) if self.files[index].out.is_none() => {
                let reason = format!("file '{file}' is closed: no section may be added to it");
                Err(SnapshotError::usage(&self.dir, reason))
            }
            Some(index) => Ok(index),
            None => {
                let pending = self.start_file(file)?;
                self.files.push(pending);
                Ok(self.files.len() - 1)
            }
        }
    }

    /// Appends a section holding `values` as raw bytes (native endianness).
    pub fn column<T: bytemuck::Pod>(
        &mut self,
        file: &str,
        section: &str,
        values: &[T],
    ) -> Result<(), SnapshotError> {
        self.section(file, section, bytemuck::cast_slice(values))
    }

    /// Makes the generation durable and current (see the module documentation), then
    /// deletes older generations. Returns the bytes on disk of the new generation,
    /// manifest included.
    pub fn commit(mut self, metadata: serde_json::Value) -> Result<u64, SnapshotError> {
        if self.files.iter().any(|f| f.failed) {
            return Err(SnapshotError::usage(
                &self.dir,
                "an earlier write failed; this generation cannot be committed",
            ));
        }
        let mut entries = Vec::with_capacity(self.files.len());
        let mut total = 0u64;
        // Each file is flushed and made durable on a thread of its own (the disk takes
        // several files' writes at once), then renamed in order.
        let generation = self.generation;
        let finished: Vec<(PathBuf, Result<FileEntry, SnapshotError>)> =
            std::mem::take(&mut self.files)
                .into_par_iter()
                .map(|pending| (pending.tmp_path.clone(), pending.finish(generation)))
                .collect();
        for (tmp_path, entry) in finished {
            let entry = entry?;
            let final_path = self
                .dir
                .join(format::data_file_name(&entry.name, generation));
            fs::rename(&tmp_path, &final_path).map_err(|e| SnapshotError::io(&final_path, e))?;
            self.created.push(final_path);
            total += entry.size;
            entries.push(entry);
        }
        format::sync_dir(&self.dir)?;

        let manifest = Manifest {
            magic: format::MANIFEST_MAGIC.into(),
            format_version: FORMAT_VERSION.into(),
            generation: self.generation,
            files: entries,
            metadata,
        };
        let bytes = format::encode_manifest(&manifest);
        let tmp_path = self.dir.join(format::MANIFEST_TMP);
        self.created.push(tmp_path.clone());
        write_synced(&tmp_path, &bytes)?;
        let manifest_path = self.dir.join(format::MANIFEST);
        fs::rename(&tmp_path, &manifest_path).map_err(|e| SnapshotError::io(&manifest_path, e))?;
        self.committed = true;
        format::sync_dir(&self.dir)?;
        self.remove_stale_files();
        Ok(total + bytes.len() as u64)
    }

    /// Opens the temporary file for the logical file `name`, with room for its header.
    fn start_file(&mut self, name: &str) -> Result<PendingFile, SnapshotError> {
        let tmp_path = self.dir.join(format::tmp_file_name(name, self.generation));
        let mut out =
            DataFileOut::create_new(&tmp_path).map_err(|e| SnapshotError::io(&tmp_path, e))?;
        self.created.push(tmp_path.clone());
        // Placeholder; the real header is written by `finish` once the length is known.
        out.write_all(&[0u8; HEADER_LEN])
            .map_err(|e| SnapshotError::io(&tmp_path, e))?;
        Ok(PendingFile {
            name: name.to_owned(),
            tmp_path,
            out: Some(out),
            len: HEADER_LEN as u64,
            sections: Vec::new(),
            failed: false,
        })
    }

    /// Removes every data file of another generation, and temporary files.
    fn remove_stale_files(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let stale = match format::parse_file_name(name) {
                Some((generation, tmp)) => tmp || generation != self.generation,
                None => name == format::MANIFEST_TMP,
            };
            if stale {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
}

impl Drop for SnapshotWriter {
    /// Without a commit, removes the files this writer created; the previous
    /// generation is left untouched.
    fn drop(&mut self) {
        if !self.committed {
            self.files.clear(); // close the temporary files first
            for path in &self.created {
                let _ = fs::remove_file(path);
            }
        }
    }
}

impl PendingFile {
    /// Appends the section `section`, the concatenation of `parts`, whose name must be new in
    /// this file; a failed write marks the file failed.
    fn add_section<'p>(
        &mut self,
        section: &str,
        parts: impl Iterator<Item = &'p [u8]> + Clone,
    ) -> Result<(), SnapshotError> {
        if self.failed {
            return Err(SnapshotError::usage(
                &self.tmp_path,
                "an earlier write failed; this generation cannot be completed",
            ));
        }
        if section.is_empty() || self.sections.iter().any(|s| s.name == section) {
            let reason = format!(
                "section name '{section}' is empty or already used in file '{}'",
                self.name
            );
            return Err(SnapshotError::usage(&self.tmp_path, reason));
        }
        let result = self.append(section, parts);
        self.failed = result.is_err();
        result
    }

    /// Writes zero padding up to the next multiple of 8, then the section's parts.
    fn append<'p>(
        &mut self,
        section: &str,
        parts: impl Iterator<Item = &'p [u8]> + Clone,
    ) -> Result<(), SnapshotError> {
        let overflow = || SnapshotError::usage(&self.tmp_path, "file too large");
        let closed = || {
            let reason = format!("file '{}' is closed", self.name);
            SnapshotError::usage(&self.tmp_path, reason)
        };
        let len = parts
            .clone()
            .try_fold(0u64, |len, part| len.checked_add(part.len() as u64))
            .ok_or_else(overflow)?;
        let offset = format::align_up(self.len).ok_or_else(overflow)?;
        let end = offset.checked_add(len).ok_or_else(overflow)?;
        let padding = [0u8; format::ALIGN as usize];
        let io = |e| SnapshotError::io(&self.tmp_path, e);
        let out = self.out.as_mut().ok_or_else(closed)?;
        out.write_all(&padding[..(offset - self.len) as usize])
            .map_err(io)?;
        let mut crc = crc32fast::Hasher::new();
        for part in parts {
            out.write_all(part).map_err(io)?;
            let part_crc = crate::checksum::crc32(part);
            crc.combine(&crc32fast::Hasher::new_with_initial_len(
                part_crc,
                part.len() as u64,
            ));
        }
        self.sections.push(SectionEntry {
            name: section.to_owned(),
            offset,
            len,
            crc32: crc.finalize(),
        });
        self.len = end;
        Ok(())
    }

    /// Writes the header, flushes the file and closes its descriptor; does nothing to a file
    /// already closed.
    fn close(&mut self, generation: u64) -> Result<(), SnapshotError> {
        match self.out.take() {
            Some(mut out) => self.write_header(&mut out, generation),
            None => Ok(()),
        }
    }

    /// Closes the file if still open, and fsyncs it.
    fn finish(mut self, generation: u64) -> Result<FileEntry, SnapshotError> {
        let io = |e| SnapshotError::io(&self.tmp_path, e);
        match self.out.take() {
            Some(mut out) => {
                self.write_header(&mut out, generation)?;
                out.sync_all().map_err(io)?;
            }
            // A closed file is opened again: fsync makes a file's data durable whichever
            // descriptor asks.
            None => File::open(&self.tmp_path)
                .and_then(|file| file.sync_all())
                .map_err(io)?,
        }
        Ok(FileEntry {
            name: self.name,
            size: self.len,
            sections: self.sections,
        })
    }

    /// Flushes `out`, the file's writer, and writes the header at its start, now that the
    /// sections are known.
    fn write_header(&self, out: &mut DataFileOut, generation: u64) -> Result<(), SnapshotError> {
        let header = Header {
            section_count: u32::try_from(self.sections.len())
                .map_err(|_| SnapshotError::usage(&self.tmp_path, "too many sections"))?,
            generation,
            file_len: self.len,
        };
        let io = |e| SnapshotError::io(&self.tmp_path, e);
        out.flush().map_err(io)?;
        out.rewrite_at(&header.encode(), 0).map_err(io)
    }
}

/// Writes `bytes` to a new file at `path` and fsyncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), SnapshotError> {
    let file = File::create(path).map_err(|e| SnapshotError::io(path, e))?;
    let mut file = LimitedFile::new(file);
    file.write_all(bytes)
        .and_then(|()| file.file().sync_all())
        .map_err(|e| SnapshotError::io(path, e))
}
