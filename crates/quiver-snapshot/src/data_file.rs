//! How a data file's bytes reach the disk: around the page cache, where the filesystem
//! allows it.
//!
//! A data file is written once, fsynced, and not read back by the process that wrote it (a
//! load ends; a checkpoint keeps in memory the store it saved). Through the page cache
//! every byte is first copied into a page the kernel allocates for it, and on the virtual
//! machines the benchmarks run on that copy (the kernel allocating and first touching the
//! pages) ran at 160–180 MB/s per file: most of a bulk load's save. The cache then also
//! holds a second copy of the store, beside the store itself, until memory pressure
//! evicts it. Written with `O_DIRECT`, the disk takes the bytes from the writer's own
//! buffer: 2.9 GB/s on the same machine.
//!
//! A direct write must start at a multiple of the block size, from memory aligned alike,
//! and cover whole blocks. So the bytes are gathered in a buffer of whole 4 KiB pages
//! (aligned by their type: no `unsafe` code) and written out as it fills; the last,
//! partial block and anything written at an earlier offset (the header, once the sections
//! are known) go through a second, ordinary descriptor of the same file. Where `O_DIRECT`
//! is refused (at open, as on some filesystems, or with `EINVAL` at a write), every byte
//! goes through the ordinary descriptor, as through any buffered writer. Either way the
//! file's bytes are the same, and `sync_all` makes them durable.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

use bytemuck::{Pod, Zeroable};

use crate::fault::LimitedFile;

/// The block size direct writes are aligned to: the page size, a multiple of every
/// common disk's logical block.
const BLOCK: usize = 4096;

/// Pages in the buffer of a file being written (1 MiB: the disk's speed is reached by
/// then, and several files are written at once).
const BUFFER_PAGES: usize = 256;

/// One page of the buffer; its alignment is what a direct write needs of memory.
#[derive(Clone, Copy, Pod, Zeroable)]
#[repr(C, align(4096))]
struct Page([u8; BLOCK]);

/// A data file being written from its start, through a buffer of whole pages.
pub(crate) struct DataFileOut {
    /// The ordinary descriptor: the last partial block, rewrites at earlier offsets, and
    /// everything once direct writes are refused.
    buffered: LimitedFile,
    /// The descriptor opened with `O_DIRECT`, while direct writes are possible.
    direct: Option<LimitedFile>,
    pages: Vec<Page>,
    /// Bytes of `pages` filled.
    filled: usize,
    /// Bytes written to the file before `pages[0]`: the file offset of the buffer.
    written: u64,
    /// Bytes that went to the file by direct writes.
    pub(crate) direct_bytes: u64,
}

impl DataFileOut {
    /// Creates the file at `path`, which must not exist.
    pub(crate) fn create_new(path: &Path) -> io::Result<Self> {
        let buffered = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(DataFileOut {
            buffered: LimitedFile::new(buffered),
            direct: open_direct(path).map(LimitedFile::new),
            pages: vec![Page::zeroed(); BUFFER_PAGES],
            filled: 0,
            written: 0,
            direct_bytes: 0,
        })
    }

    /// Appends all of `data`.
    pub(crate) fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            if self.filled == BUFFER_PAGES * BLOCK {
                self.write_out()?;
            }
            let buffer = bytemuck::cast_slice_mut::<Page, u8>(&mut self.pages);
            let n = data.len().min(buffer.len() - self.filled);
            buffer[self.filled..self.filled + n].copy_from_slice(&data[..n]);
            self.filled += n;
            data = &data[n..];
        }
        Ok(())
    }

    /// Writes out everything appended so far (its last partial block through the ordinary
    /// descriptor). Later appends are written through the ordinary descriptor too when
    /// this left the file's length off a block boundary.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.write_out()
    }

    /// Writes `bytes` at `offset`, over bytes already flushed.
    pub(crate) fn rewrite_at(&mut self, bytes: &[u8], offset: u64) -> io::Result<()> {
        self.buffered.write_all_at(bytes, offset)
    }

    /// Makes the file's data and length durable (whichever descriptor wrote them).
    pub(crate) fn sync_all(&self) -> io::Result<()> {
        self.buffered.file().sync_all()
    }

    /// Writes the buffer's `filled` bytes at the file offset `written` and empties it:
    /// whole blocks directly while possible, the rest through the ordinary descriptor.
    fn write_out(&mut self) -> io::Result<()> {
        let bytes = &bytemuck::cast_slice::<Page, u8>(&self.pages)[..self.filled];
        let mut done = 0;
        while done < bytes.len() {
            let offset = self.written + done as u64;
            let rest = &bytes[done..];
            // Memory and file offset both on a block boundary, and a whole block to write.
            let whole = rest.len() / BLOCK * BLOCK;
            let aligned =
                done.is_multiple_of(BLOCK) && offset.is_multiple_of(BLOCK as u64) && whole > 0;
            let result = match &self.direct {
                Some(direct) if aligned => direct.write_at(&rest[..whole], offset),
                _ => self.buffered.write_at(rest, offset),
            };
            match result {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    if self.direct.is_some() && aligned {
                        self.direct_bytes += n as u64;
                    }
                    done += n;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                // The filesystem takes no direct write after all: the ordinary descriptor
                // writes this and everything after.
                Err(error) if aligned && self.direct.is_some() && refused(&error) => {
                    self.direct = None;
                }
                Err(error) => return Err(error),
            }
        }
        self.written += bytes.len() as u64;
        self.filled = 0;
        Ok(())
    }
}

/// Whether a direct write failed because the filesystem refuses its alignment or direct
/// writes at all (rather than for lack of room, or a failing disk).
fn refused(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::InvalidInput
}

/// The file at `path` opened again for direct writes, where the system and its filesystem
/// allow them.
#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> Option<File> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file under the workspace's `target` directory, on the same disk as the checkout
    /// (the system's temporary directory may be a memory filesystem).
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/data-file-tests");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&path);
        path
    }

    /// Bytes that differ at every position, so that a block written at the wrong offset shows.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    /// Writes `data` in pieces of the given lengths (cycled), flushes, and rewrites the
    /// first 64 bytes; gives the file's bytes and the bytes that went directly.
    fn write_in_pieces(name: &str, data: &[u8], pieces: &[usize]) -> (Vec<u8>, u64) {
        let path = scratch(name);
        let mut out = DataFileOut::create_new(&path).unwrap();
        let mut rest = data;
        for &piece in pieces.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = piece.min(rest.len());
            out.write_all(&rest[..n]).unwrap();
            rest = &rest[n..];
        }
        out.flush().unwrap();
        out.rewrite_at(&[0xAB; 64], 0).unwrap();
        out.sync_all().unwrap();
        let direct = out.direct_bytes;
        drop(out);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        (bytes, direct)
    }

    #[test]
    fn a_file_written_around_the_page_cache_holds_every_byte_in_place() {
        // Three buffers and a bit: pieces straddle buffer and block boundaries.
        let len = 3 * BUFFER_PAGES * BLOCK + 1234;
        let data = pattern(len);
        let (bytes, direct) = write_in_pieces("pieces", &data, &[1, 4095, 70_001, 3, 1 << 20]);
        assert_eq!(bytes.len(), len);
        assert_eq!(&bytes[..64], &[0xAB; 64][..]);
        assert!(bytes[64..] == data[64..], "a byte moved or changed");
        // The filesystem of the checkout (ext4, xfs, btrfs) takes direct writes: all
        // whole blocks went that way, only the last partial block did not.
        assert_eq!(direct, (len / BLOCK * BLOCK) as u64);
    }

    #[test]
    fn a_short_file_and_an_empty_one_are_written_whole() {
        for len in [0, 10, BLOCK, BLOCK + 1] {
            let data = pattern(len.max(64));
            let (bytes, _) = write_in_pieces(&format!("short-{len}"), &data, &[len.max(64)]);
            assert_eq!(bytes.len(), len.max(64));
            assert!(bytes[64..] == data[64..]);
        }
    }

    #[test]
    fn without_direct_writes_the_same_bytes_go_through_the_ordinary_descriptor() {
        let path = scratch("ordinary");
        let mut out = DataFileOut::create_new(&path).unwrap();
        out.direct = None;
        let data = pattern(BUFFER_PAGES * BLOCK + 99);
        out.write_all(&data).unwrap();
        out.flush().unwrap();
        out.sync_all().unwrap();
        assert_eq!(out.direct_bytes, 0);
        drop(out);
        assert!(std::fs::read(&path).unwrap() == data);
        std::fs::remove_file(&path).unwrap();
    }
}
