//! Opening a store: map every file and verify all of it before handing out views.
//!
//! [`SnapshotReader::open`] checks the manifest (envelope, checksum, version), then for
//! each data file its exact size, its header (magic, version, checksum, generation,
//! length, section count), the table of contents (sections in bounds, 8-aligned, not
//! overlapping), that the padding between sections is zero and every section's crc32.
//! Every byte of every file is thus covered by some check, so a damaged store is
//! refused at open rather than producing wrong answers later; after that, views are
//! handed out without copying.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use quiver_model::Column;

use crate::format::{self, FileEntry, Header, HEADER_LEN};
use crate::SnapshotError;

/// An opened store directory: every file mapped, every checksum verified.
pub struct SnapshotReader {
    dir: PathBuf,
    generation: u64,
    metadata: serde_json::Value,
    files: HashMap<String, MappedFile>,
    bytes_on_disk: u64,
}

/// One verified, mapped data file.
struct MappedFile {
    path: PathBuf,
    map: Arc<Mmap>,
    /// Section name → (byte offset, byte length), both within `map`.
    sections: HashMap<String, (usize, usize)>,
}

impl SnapshotReader {
    /// Opens and fully verifies the current generation of the store in `dir`.
    ///
    /// If a writer commits a new generation while this runs, the files just listed may
    /// be deleted under us; the open is then retried on the new generation.
    pub fn open(dir: &Path) -> Result<Self, SnapshotError> {
        let mut attempts = 0;
        loop {
            let (manifest, result) = Self::open_once(dir)?;
            match result {
                Err(SnapshotError::MissingFile { .. })
                    if attempts < 10 && current_generation(dir) != Some(manifest) =>
                {
                    attempts += 1;
                }
                result => return result,
            }
        }
    }

    /// Reads the manifest, then opens the files it lists; returns the manifest's
    /// generation alongside the outcome of opening the files.
    fn open_once(dir: &Path) -> Result<(u64, Result<Self, SnapshotError>), SnapshotError> {
        let (manifest_path, bytes) = read_manifest(dir)?;
        let manifest = format::decode_manifest(&manifest_path, &bytes)?;
        let generation = manifest.generation;
        let mut files = HashMap::with_capacity(manifest.files.len());
        let mut bytes_on_disk = bytes.len() as u64;
        for entry in &manifest.files {
            format::validate_file_name(&entry.name)
                .map_err(|reason| SnapshotError::corrupt(&manifest_path, reason))?;
            if files.contains_key(&entry.name) {
                let reason = format!("file '{}' is listed twice", entry.name);
                return Err(SnapshotError::corrupt(&manifest_path, reason));
            }
            let path = dir.join(format::data_file_name(&entry.name, generation));
            match open_file(path, generation, entry) {
                Ok(mapped) => files.insert(entry.name.clone(), mapped),
                Err(e) => return Ok((generation, Err(e))),
            };
            bytes_on_disk += entry.size;
        }
        let reader = SnapshotReader {
            dir: dir.to_path_buf(),
            generation,
            metadata: manifest.metadata,
            files,
            bytes_on_disk,
        };
        Ok((generation, Ok(reader)))
    }

    /// True when `dir` holds a manifest (a store exists there).
    pub fn exists(dir: &Path) -> bool {
        dir.join(format::MANIFEST).is_file()
    }

    /// The metadata given to [`crate::SnapshotWriter::commit`].
    pub fn metadata(&self) -> &serde_json::Value {
        &self.metadata
    }

    /// The generation number of the opened files.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A zero-copy view of a section as values of type `T`. Fails when the section is
    /// absent, or its length or alignment does not fit `T`.
    pub fn column<T: bytemuck::Pod>(
        &self,
        file: &str,
        section: &str,
    ) -> Result<Column<T>, SnapshotError> {
        self.column_part(file, section, None)
    }

    /// A zero-copy view of the values `values` of a section, a column holding several
    /// arrays one after the other (`None`: all of them). Fails as [`SnapshotReader::column`]
    /// does, and when the range is not within the section.
    pub fn column_part<T: bytemuck::Pod>(
        &self,
        file: &str,
        section: &str,
        values: Option<std::ops::Range<usize>>,
    ) -> Result<Column<T>, SnapshotError> {
        let Some((mapped, offset, len)) = self.find(file, section) else {
            return Err(SnapshotError::MissingSection {
                path: self.path_of(file),
                file: file.to_owned(),
                section: section.to_owned(),
            });
        };
        let bad = |reason: String| SnapshotError::BadColumn {
            path: mapped.path.clone(),
            section: section.to_owned(),
            ty: std::any::type_name::<T>(),
            reason,
        };
        let size = std::mem::size_of::<T>();
        if size == 0 || len % size != 0 {
            return Err(bad(format!("its {len} bytes are not a multiple of {size}")));
        }
        let values = values.unwrap_or(0..len / size);
        if values.start > values.end || values.end > len / size {
            let count = len / size;
            return Err(bad(format!("values {values:?} are not within its {count}")));
        }
        let offset = offset + values.start * size;
        Column::mapped(Arc::clone(&mapped.map), offset, values.len()).ok_or_else(|| {
            let align = std::mem::align_of::<T>();
            bad(format!("offset {offset} is not aligned to {align} bytes"))
        })
    }

    /// True when the store has a section `section` in file `file`.
    pub fn has_section(&self, file: &str, section: &str) -> bool {
        self.find(file, section).is_some()
    }

    /// Every (file, section) pair, by file name, then by position in the file.
    pub fn section_names(&self) -> Vec<(String, String)> {
        let mut names: Vec<_> = self
            .files
            .iter()
            .flat_map(|(file, mapped)| {
                mapped
                    .sections
                    .iter()
                    .map(move |(name, &(offset, _))| (file.clone(), offset, name.clone()))
            })
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|(file, _, name)| (file, name))
            .collect()
    }

    /// Total bytes on disk of the generation's files, manifest included.
    pub fn bytes_on_disk(&self) -> u64 {
        self.bytes_on_disk
    }

    fn find(&self, file: &str, section: &str) -> Option<(&MappedFile, usize, usize)> {
        let mapped = self.files.get(file)?;
        let &(offset, len) = mapped.sections.get(section)?;
        Some((mapped, offset, len))
    }

    /// The path a data file named `file` has (or would have) in this generation.
    fn path_of(&self, file: &str) -> PathBuf {
        match self.files.get(file) {
            Some(mapped) => mapped.path.clone(),
            None => self.dir.join(format::data_file_name(file, self.generation)),
        }
    }
}

impl std::fmt::Debug for SnapshotReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotReader")
            .field("dir", &self.dir)
            .field("generation", &self.generation)
            .field("files", &self.files.len())
            .field("bytes_on_disk", &self.bytes_on_disk)
            .finish()
    }
}

/// Reads the manifest of the store in `dir`; returns its path and bytes.
fn read_manifest(dir: &Path) -> Result<(PathBuf, Vec<u8>), SnapshotError> {
    let path = dir.join(format::MANIFEST);
    match fs::read(&path) {
        Ok(bytes) => Ok((path, bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(SnapshotError::NoStore {
            dir: dir.to_path_buf(),
        }),
        Err(e) => Err(SnapshotError::io(&path, e)),
    }
}

/// A digest of the current manifest of the store in `dir`. The manifest names the
/// generation and every file's size and every section's length and CRC-32, so a store
/// whose content changed (or that was saved again) has another digest: what a file derived
/// from stores keeps to tell whether it still matches them (a cluster's kept replicas).
/// Computed with the standard library's hasher, the same for every process of one build; a
/// digest kept by another build may differ, which only makes the derived file be made
/// again.
pub fn manifest_digest(dir: &Path) -> Result<u64, SnapshotError> {
    use std::hash::{Hash, Hasher};
    let (_, bytes) = read_manifest(dir)?;
    let mut hasher = std::hash::DefaultHasher::new();
    bytes.hash(&mut hasher);
    Ok(hasher.finish())
}

/// The generation of the valid manifest in `dir`, if any.
pub(crate) fn current_generation(dir: &Path) -> Option<u64> {
    let (path, bytes) = read_manifest(dir).ok()?;
    format::decode_manifest(&path, &bytes)
        .ok()
        .map(|m| m.generation)
}

/// Maps the data file at `path` and verifies it against its manifest `entry`.
fn open_file(
    path: PathBuf,
    generation: u64,
    entry: &FileEntry,
) -> Result<MappedFile, SnapshotError> {
    let file = File::open(&path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => SnapshotError::MissingFile { path: path.clone() },
        _ => SnapshotError::io(&path, e),
    })?;
    let found = file
        .metadata()
        .map_err(|e| SnapshotError::io(&path, e))?
        .len();
    if found < entry.size {
        return Err(SnapshotError::Truncated {
            path,
            expected: entry.size,
            found,
        });
    }
    if found > entry.size {
        let reason = format!("expected {} bytes, found {found}", entry.size);
        return Err(SnapshotError::corrupt(&path, reason));
    }
    // SAFETY: the mapping is read-only and the file belongs to a committed generation,
    // which no Quiver process modifies (new generations go to new files). Changing or
    // truncating the file behind our back is outside what the store supports.
    let map = unsafe { Mmap::map(&file) }.map_err(|e| SnapshotError::io(&path, e))?;
    // Random lookups over hundreds of megabytes miss the TLB on 4 KiB pages; ask for huge
    // pages where the kernel can back file mappings with them. Only a hint.
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    if map.len() as u64 != entry.size {
        return Err(SnapshotError::corrupt(
            &path,
            "file changed while being opened",
        ));
    }
    let header = Header::decode(&path, &map)?;
    let mismatch = |what: &str, file: u64, manifest: u64| {
        let reason = format!("header says {what} {file}, manifest says {manifest}");
        Err(SnapshotError::corrupt(&path, reason))
    };
    if header.generation != generation {
        return mismatch("generation", header.generation, generation);
    }
    if header.file_len != entry.size {
        return mismatch("length", header.file_len, entry.size);
    }
    if u64::from(header.section_count) != entry.sections.len() as u64 {
        return mismatch(
            "section count",
            header.section_count.into(),
            entry.sections.len() as u64,
        );
    }
    let sections = verify_sections(&path, &map, entry)?;
    Ok(MappedFile {
        path,
        map: Arc::new(map),
        sections,
    })
}

/// Checks the table of contents against the mapped bytes: layout and zero padding, then
/// the crc32s, computed on every core (a store's open reads every byte once for them).
fn verify_sections(
    path: &Path,
    bytes: &[u8],
    entry: &FileEntry,
) -> Result<HashMap<String, (usize, usize)>, SnapshotError> {
    let mut toc: Vec<_> = entry.sections.iter().collect();
    toc.sort_by_key(|s| s.offset);
    let mut sections = HashMap::with_capacity(toc.len());
    let mut pos = HEADER_LEN;
    for section in toc {
        let name = &section.name;
        let range = usize::try_from(section.offset)
            .ok()
            .zip(usize::try_from(section.len).ok())
            .and_then(|(offset, len)| Some((offset, offset.checked_add(len)?)))
            .filter(|&(offset, end)| offset >= pos && end <= bytes.len())
            .filter(|_| section.offset % format::ALIGN == 0);
        let Some((offset, end)) = range else {
            let reason = format!("section '{name}' is misplaced or out of bounds");
            return Err(SnapshotError::corrupt(path, reason));
        };
        if bytes[pos..offset].iter().any(|&b| b != 0) {
            let reason = format!("non-zero padding before section '{name}'");
            return Err(SnapshotError::corrupt(path, reason));
        }
        if sections
            .insert(name.clone(), (offset, end - offset))
            .is_some()
        {
            let reason = format!("section '{name}' is listed twice");
            return Err(SnapshotError::corrupt(path, reason));
        }
        pos = end;
    }
    if pos != bytes.len() {
        let reason = format!("{} bytes after the last section", bytes.len() - pos);
        return Err(SnapshotError::corrupt(path, reason));
    }
    for section in &entry.sections {
        let (offset, len) = sections[&section.name];
        if crate::checksum::crc32(&bytes[offset..offset + len]) != section.crc32 {
            return Err(SnapshotError::Checksum {
                path: path.to_path_buf(),
                region: format!("section '{}'", section.name),
            });
        }
    }
    Ok(sections)
}
