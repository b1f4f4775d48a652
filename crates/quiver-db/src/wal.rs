//! The write-ahead log: files, records, appends, reads with torn-tail detection.
//!
//! A store directory holds log files `wal-<generation>.log` beside the snapshot. A file
//! is a 32-byte header followed by records:
//!
//! ```text
//! header: magic "QVRWAL\0\x01", u32 format, u32 id width, u64 first sequence number,
//!         u32 crc32 of the 24 bytes before it, u32 zero
//! record: u32 payload length, u32 crc32 of (length, sequence, payload), u64 sequence,
//!         payload (the commit's change sets, see `record`)
//! ```
//!
//! One record is one commit. Sequence numbers are consecutive across records and files;
//! a file's first record carries the header's first sequence number. A file is only
//! appended to: a failed append is cut back at once, so the file is always a header plus
//! whole records, except after a crash, where the tail may be torn (short, or holding
//! bytes the disk never finished writing). [`read`] stops at the first record that is
//! short, fails its checksum, has an impossible length or breaks the sequence, and says
//! where; recovery cuts the file there.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use quiver_model::ID_BYTES;
use quiver_store::ChangeSet;

use crate::error::DbError;
use crate::fault;

const MAGIC: &[u8; 8] = b"QVRWAL\0\x01";
const FORMAT: u32 = 1;
pub const HEADER_BYTES: u64 = 32;
pub const RECORD_HEADER_BYTES: usize = 16;

/// The name of the log file of `generation`.
pub fn file_name(generation: u64) -> String {
    format!("wal-{generation:08}.log")
}

/// The generation of a log file name, if it is one.
pub fn parse_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("wal-")?.strip_suffix(".log")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The log files of `dir`, by generation.
pub fn list(dir: &Path) -> Result<Vec<(u64, PathBuf)>, DbError> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| DbError::io(dir, e))? {
        let entry = entry.map_err(|e| DbError::io(dir, e))?;
        if let Some(generation) = entry.file_name().to_str().and_then(parse_file_name) {
            files.push((generation, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

/// One commit as the bytes of its record; a commit too large for one record (4 GiB) is an
/// error.
pub fn encode_record(sequence: u64, sets: &[ChangeSet]) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0; RECORD_HEADER_BYTES];
    crate::record::encode(sets, &mut bytes)?;
    let length = u32::try_from(bytes.len() - RECORD_HEADER_BYTES).map_err(|_| {
        format!(
            "{} bytes of changes in one record (at most 4 GiB)",
            bytes.len()
        )
    })?;
    bytes[0..4].copy_from_slice(&length.to_le_bytes());
    bytes[8..16].copy_from_slice(&sequence.to_le_bytes());
    let crc = record_crc(&bytes[0..4], &bytes[8..]);
    bytes[4..8].copy_from_slice(&crc.to_le_bytes());
    Ok(bytes)
}

fn record_crc(length: &[u8], rest: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(length);
    hasher.update(rest);
    hasher.finalize()
}

fn header_bytes(first_sequence: u64) -> [u8; HEADER_BYTES as usize] {
    let mut header = [0u8; HEADER_BYTES as usize];
    header[0..8].copy_from_slice(MAGIC);
    header[8..12].copy_from_slice(&FORMAT.to_le_bytes());
    header[12..16].copy_from_slice(&(ID_BYTES as u32).to_le_bytes());
    header[16..24].copy_from_slice(&first_sequence.to_le_bytes());
    let crc = crc32fast::hash(&header[0..24]);
    header[24..28].copy_from_slice(&crc.to_le_bytes());
    header
}

/// Makes the directory entries of `dir` durable (file creations, renames, removals).
pub fn sync_dir(dir: &Path) -> Result<(), DbError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| DbError::io(dir, e))
}

/// A record read back.
#[derive(Debug)]
pub struct RawRecord {
    pub sequence: u64,
    /// Byte offset of the record in its file.
    pub offset: u64,
    pub payload: Vec<u8>,
}

/// What a log file holds.
#[derive(Debug)]
pub struct Contents {
    /// The header's first sequence number; `None` when the header is torn or damaged.
    pub first_sequence: Option<u64>,
    /// The whole records, in order, consecutive from `first_sequence`.
    pub records: Vec<RawRecord>,
    /// Where the whole records end.
    pub good_end: u64,
    pub file_len: u64,
    /// Why reading stopped before the end of the file.
    pub problem: Option<String>,
}

/// Reads a log file: its header and its records up to the first bad one. A file of
/// another format or id width is an error; damage is not (it is `problem`).
pub fn read(path: &Path) -> Result<Contents, DbError> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| DbError::io(path, e))?;
    let file_len = bytes.len() as u64;
    let mut contents = Contents {
        first_sequence: None,
        records: Vec::new(),
        good_end: 0,
        file_len,
        problem: None,
    };
    if bytes.len() < HEADER_BYTES as usize {
        contents.problem = Some(format!("torn header ({} bytes)", bytes.len()));
        return Ok(contents);
    }
    let header = &bytes[..HEADER_BYTES as usize];
    let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap());
    if crc32fast::hash(&header[0..24]) != word(24) {
        contents.problem = Some("damaged header (checksum mismatch)".into());
        return Ok(contents);
    }
    if &header[0..8] != MAGIC || word(8) != FORMAT {
        return Err(DbError::log(
            path,
            format!("not a log of format {FORMAT} (this build's)"),
        ));
    }
    if word(12) as usize != ID_BYTES {
        return Err(DbError::log(
            path,
            format!(
                "the log uses {}-byte ids, this build {ID_BYTES}-byte ids",
                word(12)
            ),
        ));
    }
    let first = u64::from_le_bytes(header[16..24].try_into().unwrap());
    contents.first_sequence = Some(first);
    let mut at = HEADER_BYTES as usize;
    let mut expected = first;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.len() < RECORD_HEADER_BYTES {
            contents.problem = Some(format!("torn record header at byte {at}"));
            break;
        }
        let length = u32::from_le_bytes(rest[0..4].try_into().unwrap()) as usize;
        let crc = u32::from_le_bytes(rest[4..8].try_into().unwrap());
        let sequence = u64::from_le_bytes(rest[8..16].try_into().unwrap());
        if length > rest.len() - RECORD_HEADER_BYTES {
            contents.problem = Some(format!(
                "record at byte {at}: length {length} runs past the end of the file"
            ));
            break;
        }
        let end = RECORD_HEADER_BYTES + length;
        if record_crc(&rest[0..4], &rest[8..end]) != crc {
            contents.problem = Some(format!("record at byte {at}: checksum mismatch"));
            break;
        }
        if sequence != expected {
            contents.problem = Some(format!(
                "record at byte {at}: sequence number {sequence} where {expected} was due"
            ));
            break;
        }
        contents.records.push(RawRecord {
            sequence,
            offset: at as u64,
            payload: rest[RECORD_HEADER_BYTES..end].to_vec(),
        });
        expected += 1;
        at += end;
    }
    contents.good_end = if contents.problem.is_some() && contents.records.is_empty() {
        HEADER_BYTES
    } else {
        at as u64
    };
    if let Some(last) = contents.records.last() {
        let last_end = last.offset + (RECORD_HEADER_BYTES + last.payload.len()) as u64;
        contents.good_end = last_end;
    }
    Ok(contents)
}

/// Cuts `path` to `length` bytes and makes it durable.
pub fn truncate(path: &Path, length: u64) -> Result<(), DbError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| DbError::io(path, e))?;
    file.set_len(length)
        .and_then(|()| file.sync_all())
        .map_err(|e| DbError::io(path, e))
}

/// The log file being appended to.
#[derive(Debug)]
pub struct LogFile {
    file: File,
    path: PathBuf,
    pub generation: u64,
    /// End of the last whole record.
    end: u64,
    /// Set when a failed append could not be cut back: the file's tail is unknown.
    poisoned: Option<String>,
}

impl LogFile {
    /// Creates the log file of `generation`, whose first record will be `first_sequence`;
    /// header and directory entry are durable when it returns.
    pub fn create(dir: &Path, generation: u64, first_sequence: u64) -> Result<Self, DbError> {
        let path = dir.join(file_name(generation));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| DbError::io(&path, e))?;
        let written = fault::write_all(&mut file, &header_bytes(first_sequence))
            .and_then(|()| file.sync_all());
        if let Err(e) = written {
            drop(file);
            let _ = fs::remove_file(&path);
            return Err(DbError::io(&path, e));
        }
        sync_dir(dir)?;
        Ok(Self {
            file,
            path,
            generation,
            end: HEADER_BYTES,
            poisoned: None,
        })
    }

    /// Opens an existing log file to append after its first `end` bytes (whole records,
    /// as [`read`] found them).
    pub fn open_append(path: &Path, generation: u64, end: u64) -> Result<Self, DbError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| DbError::io(path, e))?;
        Ok(Self {
            file,
            path: path.to_owned(),
            generation,
            end,
            poisoned: None,
        })
    }

    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes of header and whole records.
    pub fn len(&self) -> u64 {
        self.end
    }

    /// Appends whole records. On failure the file is cut back to where it was, so no part
    /// of them remains; if even that fails, the file refuses every later append.
    pub fn append(&mut self, records: &[u8]) -> Result<(), DbError> {
        if let Some(reason) = &self.poisoned {
            return Err(DbError::ReadOnly(reason.clone()));
        }
        let written = self
            .file
            .seek(SeekFrom::Start(self.end))
            .and_then(|_| fault::write_all(&mut self.file, records));
        match written {
            Ok(()) => {
                self.end += records.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.cut_back();
                Err(DbError::io(&self.path, e))
            }
        }
    }

    /// Makes the appended records durable. A failed `fsync` leaves the records' fate
    /// unknown, so they are cut off the file, as after a failed write.
    pub fn sync(&mut self, appended_from: Option<u64>) -> Result<(), DbError> {
        if let Some(reason) = &self.poisoned {
            return Err(DbError::ReadOnly(reason.clone()));
        }
        match self.file.sync_data() {
            Ok(()) => Ok(()),
            Err(e) => {
                if let Some(start) = appended_from {
                    self.end = start;
                    self.cut_back();
                }
                Err(DbError::io(&self.path, e))
            }
        }
    }

    fn cut_back(&mut self) {
        let cut = self
            .file
            .set_len(self.end)
            .and_then(|()| self.file.sync_data());
        if let Err(e) = cut {
            self.poisoned = Some(format!(
                "{}: a failed append could not be undone ({e}); the database takes no more writes until it is reopened",
                self.path.display()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(parse_file_name(&file_name(12)), Some(12));
        assert_eq!(parse_file_name("wal-.log"), None);
        assert_eq!(parse_file_name("wal-1x.log"), None);
        assert_eq!(parse_file_name("graph-1.qvs"), None);
    }

    #[test]
    fn records_read_back_and_damage_is_found() {
        let dir = std::env::temp_dir().join(format!("quiver-wal-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let mut log = LogFile::create(&dir, 3, 10).unwrap();
        let mut set = ChangeSet::default();
        set.base_terms = 5;
        log.append(&encode_record(10, std::slice::from_ref(&set)).unwrap())
            .unwrap();
        log.append(&encode_record(11, &[]).unwrap()).unwrap();
        let contents = read(log.path()).unwrap();
        assert_eq!(contents.problem, None);
        assert_eq!(contents.first_sequence, Some(10));
        let sequences: Vec<u64> = contents.records.iter().map(|r| r.sequence).collect();
        assert_eq!(sequences, [10, 11]);
        assert_eq!(contents.good_end, log.len());
        assert_eq!(contents.good_end, contents.file_len);
        // A record out of sequence is where reading stops.
        log.append(&encode_record(13, &[]).unwrap()).unwrap();
        let contents = read(log.path()).unwrap();
        assert_eq!(contents.records.len(), 2);
        assert!(contents.problem.unwrap().contains("sequence number 13"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
