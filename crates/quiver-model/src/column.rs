//! Immutable arrays that live either on the heap or in a memory-mapped snapshot file.
//!
//! A freshly built store owns its arrays; a reopened one maps them from disk without
//! copying or parsing. Both look the same to readers: a `Column<T>` derefs to `&[T]`.

use std::ops::Deref;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::Mmap;

/// An immutable array of plain-old-data values, owned or memory-mapped.
pub enum Column<T: Pod> {
    Owned(Vec<T>),
    Mapped {
        map: Arc<Mmap>,
        /// Byte offset of the first element in `map`; a multiple of `align_of::<T>()`.
        offset: usize,
        len: usize,
    },
}

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
        Some(Column::Mapped { map, offset, len })
    }

    /// The values as raw bytes (for writing snapshots).
    pub fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(self)
    }

    /// Heap bytes owned by this column (0 when mapped).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Column::Owned(values) => values.capacity() * std::mem::size_of::<T>(),
            Column::Mapped { .. } => 0,
        }
    }

    /// Bytes of data, wherever they live.
    pub fn data_bytes(&self) -> usize {
        self.len() * std::mem::size_of::<T>()
    }
}

impl<T: Pod> Deref for Column<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match self {
            Column::Owned(values) => values,
            Column::Mapped { map, offset, len } => {
                let bytes = &map[*offset..*offset + *len * std::mem::size_of::<T>()];
                bytemuck::cast_slice(bytes)
            }
        }
    }
}

impl<T: Pod> From<Vec<T>> for Column<T> {
    fn from(values: Vec<T>) -> Self {
        Column::Owned(values)
    }
}

impl<T: Pod> Default for Column<T> {
    fn default() -> Self {
        Column::Owned(Vec::new())
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            Column::Owned(_) => "owned",
            Column::Mapped { .. } => "mapped",
        };
        write!(f, "Column<{kind}, {} values>", self.len())
    }
}
