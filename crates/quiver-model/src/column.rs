//! Immutable arrays that live on the heap, in huge-page memory, or in a memory-mapped
//! snapshot file.
//!
//! A freshly built store owns its arrays; a reopened one maps them from disk without
//! copying or parsing. All look the same to readers: a `Column<T>` derefs to `&[T]`.
//!
//! The slice is resolved once, when the column is made, and kept as a raw pointer and a
//! length beside the storage that owns it: a deref is two loads and no branch, which
//! matters on the index's lookup path, where every key derefs two or three columns.
//!
//! [`Column::with_huge_pages`] moves a large array into anonymous memory advised for
//! transparent huge pages: random lookups over an index of hundreds of megabytes then
//! miss the TLB once per 2 MiB instead of once per 4 KiB, which on random point lookups is
//! worth as much as a cache miss (the page walk itself misses the cache).

use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::{Mmap, MmapMut};

/// Arrays smaller than this stay on the heap: a huge page is 2 MiB.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// An immutable array of plain-old-data values, owned or memory-mapped.
pub struct Column<T: Pod> {
    /// The first value, inside `storage`.
    start: NonNull<T>,
    len: usize,
    storage: Storage<T>,
}

/// What owns a column's values. Moving a `Vec` or a mapping does not move its data, so the
/// pointer resolved from it stays valid as long as the storage lives.
///
/// Each kind is shared behind an `Arc`, so cloning a column (a new store version sharing
/// its unchanged arrays with the old one) copies no values.
enum Storage<T> {
    Owned(Arc<Vec<T>>),
    /// Anonymous memory of its own, advised for huge pages where they fault in faster
    /// (`fresh_pages.rs`), holding `len` values from its start.
    HugePages(Arc<MmapMut>),
    /// A snapshot file's mapping, held only to keep it alive.
    Mapped {
        _map: Arc<Mmap>,
    },
}

// SAFETY: a column owns its storage and hands out only shared slices of `T`; it is as
// thread-safe as `Vec<T>` / `Arc<[T]>` are.
unsafe impl<T: Pod + Send + Sync> Send for Column<T> {}
// SAFETY: as above; nothing mutates the values after construction.
unsafe impl<T: Pod + Send + Sync> Sync for Column<T> {}

impl<T: Pod> Column<T> {
    /// A view of `len` values at byte `offset` of a mapping. Fails (returns `None`) when the
    /// range is out of bounds or misaligned, so a corrupt file cannot cause undefined reads.
    pub fn mapped(map: Arc<Mmap>, offset: usize, len: usize) -> Option<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(bytes)?;
        if end > map.len()
            || !(map.as_ptr() as usize + offset).is_multiple_of(std::mem::align_of::<T>())
        {
            return None;
        }
        let values: &[T] = bytemuck::cast_slice(&map[offset..end]);
        let start = NonNull::from(values).cast();
        Some(Column {
            start,
            len,
            storage: Storage::Mapped { _map: map },
        })
    }

    /// `values`, moved into anonymous memory of their own when they fill at least one huge
    /// page, advised for transparent huge pages where those fault in faster than ordinary
    /// pages (else, or where the system refuses, kept on the heap as they are).
    pub fn with_huge_pages(values: Vec<T>) -> Self {
        let bytes = std::mem::size_of_val(values.as_slice());
        if bytes < HUGE_PAGE_BYTES || !cfg!(target_os = "linux") {
            return values.into();
        }
        let Ok(mut map) = MmapMut::map_anon(bytes) else {
            return values.into();
        };
        // Advised before the first touch, so that the copy faults in huge pages where they
        // are the faster to fault in (`fresh_pages.rs`). A kernel without transparent huge
        // pages ignores it: the memory is then ordinary pages.
        crate::fresh_pages::advise_fresh(&map);
        map.copy_from_slice(bytemuck::cast_slice(&values));
        let len = values.len();
        drop(values);
        Column {
            start: NonNull::new(map.as_mut_ptr().cast()).expect("a mapping is never null"),
            len,
            storage: Storage::HugePages(Arc::new(map)),
        }
    }

    /// Whether the values are mapped from a file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.storage, Storage::Mapped { .. })
    }

    /// Drops the resident pages of a column mapped from a file; reading it again maps the
    /// same bytes anew from the file (the page cache, else the disk). For a pass that reads
    /// a saved store once and must not keep it resident beside what it builds (a load on
    /// top of it). Does nothing to values in memory.
    pub fn release_mapped_pages(&self) {
        self.release_mapped_range(0..self.len);
    }

    /// [`Column::release_mapped_pages`] for the whole pages that hold only values of
    /// `range` (out of bounds: clamped), so that a pass over a column gives back what it
    /// has read as it goes.
    pub fn release_mapped_range(&self, range: std::ops::Range<usize>) {
        if let Storage::Mapped { .. } = self.storage {
            let end = range.end.min(self.len);
            let values = self.get(range.start.min(end)..end).unwrap_or(&[]);
            crate::memory::release_file_pages(bytemuck::cast_slice(values));
        }
    }

    /// Whether the values live in anonymous memory of their own, advised for huge pages
    /// where they fault in faster.
    pub fn is_huge_pages(&self) -> bool {
        matches!(self.storage, Storage::HugePages(_))
    }

    /// The values as raw bytes (for writing snapshots).
    pub fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }

    /// Memory owned by this column (0 when mapped from a file).
    pub fn heap_bytes(&self) -> usize {
        match &self.storage {
            Storage::Owned(values) => values.capacity() * std::mem::size_of::<T>(),
            Storage::HugePages(map) => map.len(),
            Storage::Mapped { .. } => 0,
        }
    }

    /// Bytes of data, wherever they live.
    pub fn data_bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }
}

/// A column being written: a fixed number of values, zero at first, written in place and
/// then frozen into a [`Column`] without a copy. Large ones live in anonymous memory of their
/// own from the start, so an index laid out into it never exists twice (building into a
/// `Vec` and moving it there held both copies at once: a load's peak), advised for the kind
/// of pages that fault in faster on this machine (`fresh_pages.rs`).
pub struct ColumnBuffer<T: Pod> {
    storage: BufferStorage<T>,
    len: usize,
}

enum BufferStorage<T> {
    Heap(Vec<T>),
    HugePages(MmapMut),
}

impl<T: Pod> ColumnBuffer<T> {
    /// `len` zero values.
    pub fn zeroed(len: usize) -> Self {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        if bytes >= HUGE_PAGE_BYTES && cfg!(target_os = "linux") {
            // An anonymous mapping is zero-filled and page-aligned, so it holds `len`
            // valid values of any `Pod` type.
            if let Ok(map) = MmapMut::map_anon(bytes) {
                crate::fresh_pages::advise_fresh(&map);
                return ColumnBuffer {
                    storage: BufferStorage::HugePages(map),
                    len,
                };
            }
        }
        ColumnBuffer {
            storage: BufferStorage::Heap(vec![T::zeroed(); len]),
            len,
        }
    }

    /// The values, to write.
    pub fn values_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            BufferStorage::Heap(values) => values,
            BufferStorage::HugePages(map) => bytemuck::cast_slice_mut(&mut map[..]),
        }
    }

    /// The values, frozen.
    pub fn finish(self) -> Column<T> {
        match self.storage {
            BufferStorage::Heap(values) => values.into(),
            BufferStorage::HugePages(mut map) => Column {
                start: NonNull::new(map.as_mut_ptr().cast()).expect("a mapping is never null"),
                len: self.len,
                storage: Storage::HugePages(Arc::new(map)),
            },
        }
    }
}

impl<T: Pod> Deref for Column<T> {
    type Target = [T];

    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` points at `len` initialised values owned by `storage`, which
        // lives as long as `self` and is never mutated (see `Storage`).
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T: Pod> From<Vec<T>> for Column<T> {
    fn from(values: Vec<T>) -> Self {
        let start = NonNull::new(values.as_ptr().cast_mut()).expect("a Vec is never null");
        Column {
            start,
            len: values.len(),
            storage: Storage::Owned(Arc::new(values)),
        }
    }
}

impl<T: Pod> Clone for Column<T> {
    fn clone(&self) -> Self {
        Column {
            start: self.start,
            len: self.len,
            storage: match &self.storage {
                Storage::Owned(values) => Storage::Owned(Arc::clone(values)),
                Storage::HugePages(map) => Storage::HugePages(Arc::clone(map)),
                Storage::Mapped { _map } => Storage::Mapped {
                    _map: Arc::clone(_map),
                },
            },
        }
    }
}

impl<T: Pod> Default for Column<T> {
    fn default() -> Self {
        Vec::new().into()
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.storage {
            Storage::Owned(_) => "owned",
            Storage::HugePages(_) => "huge pages",
            Storage::Mapped { .. } => "mapped",
        };
        write!(f, "Column<{kind}, {} values>", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_storage_reads_back_its_values() {
        let small: Vec<u64> = (0..1000).collect();
        let large: Vec<u64> = (0..(HUGE_PAGE_BYTES as u64 / 8) * 3 + 5).collect();
        let owned = Column::from(small.clone());
        assert_eq!(&*owned, small.as_slice());
        let kept = Column::with_huge_pages(small.clone());
        assert!(!kept.is_huge_pages(), "a small array stays on the heap");
        assert_eq!(&*kept, small.as_slice());
        let moved = Column::with_huge_pages(large.clone());
        assert_eq!(&*moved, large.as_slice());
        assert_eq!(moved.data_bytes(), large.len() * 8);
        let mut buffer = ColumnBuffer::<u64>::zeroed(large.len());
        buffer.values_mut().copy_from_slice(&large);
        let built = buffer.finish();
        assert!(built.is_huge_pages() || !cfg!(target_os = "linux"));
        assert_eq!(&*built, large.as_slice());
        let mut buffer = ColumnBuffer::<u32>::zeroed(3);
        buffer.values_mut()[1] = 9;
        let built = buffer.finish();
        assert!(!built.is_huge_pages(), "a small buffer stays on the heap");
        assert_eq!(&*built, &[0, 9, 0]);
        let empty = Column::<u32>::default();
        assert!(empty.is_empty());
        // Moving a column (here onto the heap) moves neither kind of storage.
        let holder = Box::new([moved, owned]);
        assert_eq!(holder[0][12345], 12345);
        assert_eq!(holder[1][999], 999);
    }

    #[test]
    fn a_mapped_column_reads_the_same_after_its_pages_are_released() {
        let values: Vec<u64> = (0..100_000).map(|i| i * 7 + 1).collect();
        let path = std::env::temp_dir().join(format!("quiver-column-{}", std::process::id()));
        std::fs::write(&path, bytemuck::cast_slice(&values)).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        // SAFETY: the file is this test's own and nothing writes it while mapped.
        let map = Arc::new(unsafe { Mmap::map(&file) }.unwrap());
        let column = Column::<u64>::mapped(map, 8, values.len() - 1).unwrap();
        assert_eq!(&*column, &values[1..]);
        column.release_mapped_pages();
        assert_eq!(&*column, &values[1..]);
        // A column in memory is left as it is.
        let owned = Column::from(values.clone());
        owned.release_mapped_pages();
        assert_eq!(&*owned, values.as_slice());
        drop(column);
        std::fs::remove_file(&path).unwrap();
    }
}
