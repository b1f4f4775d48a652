//! What the executor needs of a device: memory, copies and kernel launches.
//!
//! Two backends implement it: CUDA (`cuda.rs`, behind the `cuda` feature) and the host
//! (`host.rs`), which runs the same kernel source compiled by the system C++ compiler, so
//! that everything above this trait is tested without a GPU. Device memory is addressed
//! by 64-bit pointers, as kernels see it.

use std::any::Any;

use crate::GpuError;

/// The kernels of `kernels.cu`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    ExpandLookup,
    ExpandEmit,
    Check,
    Compact,
    Gather,
    IntersectLookup,
    IntersectCandidates,
    CompactPairs,
    ScanChunks,
    ScanAdd,
    KvLookup,
}

impl Kernel {
    pub const ALL: [Kernel; 11] = [
        Kernel::ExpandLookup,
        Kernel::ExpandEmit,
        Kernel::Check,
        Kernel::Compact,
        Kernel::Gather,
        Kernel::IntersectLookup,
        Kernel::IntersectCandidates,
        Kernel::CompactPairs,
        Kernel::ScanChunks,
        Kernel::ScanAdd,
        Kernel::KvLookup,
    ];

    /// The kernel's symbol in `kernels.cu`.
    pub fn symbol(self) -> &'static str {
        match self {
            Kernel::ExpandLookup => "qv_expand_lookup",
            Kernel::ExpandEmit => "qv_expand_emit",
            Kernel::Check => "qv_check",
            Kernel::Compact => "qv_compact",
            Kernel::Gather => "qv_gather",
            Kernel::IntersectLookup => "qv_intersect_lookup",
            Kernel::IntersectCandidates => "qv_intersect_candidates",
            Kernel::CompactPairs => "qv_compact_pairs",
            Kernel::ScanChunks => "qv_scan_chunks",
            Kernel::ScanAdd => "qv_scan_add",
            Kernel::KvLookup => "qv_kv_lookup",
        }
    }
}

/// The kernel source.
pub const KERNELS: &str = include_str!("kernels.cu");

/// Slots of a kernel's parameter block (`QV_SLOTS` in `kernels.cu`).
pub const SLOTS: usize = 24;

/// A kernel's parameters: pointers and integers, one 64-bit slot each.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Params(pub [u64; SLOTS]);

impl Params {
    /// Parameters from the slots given, the rest zero.
    pub fn new(slots: &[u64]) -> Self {
        let mut params = [0u64; SLOTS];
        params[..slots.len()].copy_from_slice(slots);
        Params(params)
    }
}

/// A block of device memory, freed when dropped — after the work already queued, which
/// may still read it.
pub struct Buffer {
    ptr: u64,
    bytes: usize,
    /// The [`Backend::id`] of the backend that allocated it.
    backend: u64,
    /// Whatever owns the memory (frees it on drop).
    _owner: Box<dyn Any + Send + Sync>,
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({:#x}, {} bytes)", self.ptr, self.bytes)
    }
}

impl Buffer {
    pub(crate) fn new(
        ptr: u64,
        bytes: usize,
        backend: u64,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Self {
        Self {
            ptr,
            bytes,
            backend,
            _owner: owner,
        }
    }

    /// The device address of the first byte.
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    /// The device address of element `index` of a buffer of `T`.
    pub fn at<T>(&self, index: usize) -> u64 {
        self.ptr + (index * std::mem::size_of::<T>()) as u64
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A number no other backend of this process has, for [`Backend::id`].
pub(crate) fn new_backend_id() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// A device: memory, copies (synchronous) and kernel launches (in order on one stream).
///
/// Copies and launches take device addresses, which nothing here can check: they are
/// `unsafe`, with their contracts below. Safe code copies through [`BackendExt`], which
/// addresses a [`Buffer`] of the backend and checks the bounds.
pub trait Backend: Send + Sync {
    /// The device, in words.
    fn describe(&self) -> String;

    /// A number no other backend of this process has; the buffers it allocates carry it.
    fn id(&self) -> u64;

    /// Device memory free and in all, in bytes.
    fn memory(&self) -> Result<(usize, usize), GpuError>;

    /// `bytes` of uninitialised device memory.
    fn alloc(&self, bytes: usize) -> Result<Buffer, GpuError>;

    /// Copies `src` to the device at `dst`.
    ///
    /// # Safety
    /// `dst..dst + src.len()` lies inside one live [`Buffer`] allocated by this backend.
    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<(), GpuError>;

    /// Copies device memory at `src` into `dst`, once every launch before it has finished.
    ///
    /// # Safety
    /// `src..src + dst.len()` lies inside one live [`Buffer`] allocated by this backend.
    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<(), GpuError>;

    /// Runs `kernel` over `threads` indexes (its grid-stride loop covers them all).
    ///
    /// # Safety
    /// Every address in `params` is inside a live [`Buffer`] of this backend, and each
    /// buffer holds every element that `kernel` reads or writes for `threads` indexes and
    /// the counts in `params` (the contracts of `kernels.cu`); buffers the kernel writes
    /// are not read by the host until it has finished ([`Backend::synchronize`], or a
    /// download, which waits).
    unsafe fn launch(&self, kernel: Kernel, threads: u64, params: &Params) -> Result<(), GpuError>;

    /// Waits for every launch and copy.
    fn synchronize(&self) -> Result<(), GpuError>;
}

/// Bounds-checked, typed copies on top of a [`Backend`].
pub trait BackendExt: Backend {
    /// A new buffer holding `values`.
    fn upload_slice<T: bytemuck::Pod>(&self, values: &[T]) -> Result<Buffer, GpuError> {
        let buffer = self.alloc(std::mem::size_of_val(values))?;
        // SAFETY: the buffer was just allocated by this backend, `values`' size long.
        unsafe { self.upload(buffer.ptr(), bytemuck::cast_slice(values))? };
        Ok(buffer)
    }

    /// `count` values of `T` of `buffer`, from element `first` on; fails when they are
    /// not all inside it.
    fn download_vec<T: bytemuck::Pod + Default>(
        &self,
        buffer: &Buffer,
        first: usize,
        count: usize,
    ) -> Result<Vec<T>, GpuError> {
        let size = std::mem::size_of::<T>();
        if buffer.backend != self.id() {
            return Err(GpuError::Unavailable(
                "a buffer of another device was given".into(),
            ));
        }
        let end = first
            .checked_add(count)
            .and_then(|end| end.checked_mul(size))
            .filter(|&end| end <= buffer.bytes())
            .ok_or_else(|| {
                GpuError::Unavailable(format!(
                    "elements {first}..+{count} of {size} bytes are outside a buffer of {} bytes",
                    buffer.bytes()
                ))
            })?;
        let mut values = vec![T::default(); count];
        if count > 0 {
            // SAFETY: `buffer.at::<T>(first)..` plus the bytes of `values` ends at `end`,
            // inside the buffer, which this backend allocated (both checked above) and
            // which is alive (borrowed).
            unsafe { self.download(buffer.at::<T>(first), bytemuck::cast_slice_mut(&mut values))? };
        }
        debug_assert!(end >= size * count);
        Ok(values)
    }

    /// A buffer of `count` values of `T`.
    fn alloc_of<T>(&self, count: usize) -> Result<Buffer, GpuError> {
        self.alloc(count * std::mem::size_of::<T>())
    }
}

impl<B: Backend + ?Sized> BackendExt for B {}
