//! The CUDA backend, on cudarc with libraries loaded at run time (no CUDA toolkit at build
//! time). The kernels are compiled by NVRTC for the device's architecture when the backend
//! starts; launches and copies go in order on one stream of the device's primary context.

use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{
    result, CudaContext, CudaFunction, CudaStream, DeviceRepr, LaunchConfig, PinnedHostSlice,
    PushKernelArg,
};
use cudarc::nvrtc::CompileOptions;
use rayon::prelude::*;

use crate::backend::{Backend, Buffer, Kernel, Params};
use crate::locate;
use crate::GpuError;

// SAFETY: `Params` is `repr(C)` plain data, passed by value as the kernels' one parameter.
unsafe impl DeviceRepr for Params {}

/// A GPU seen by the driver.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub memory_bytes: usize,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
}

/// Checks that the driver and NVRTC can be loaded (once per process): cudarc panics on a
/// missing library, so nothing reaches it before this says yes.
pub fn libraries() -> Result<(), GpuError> {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    CHECKED
        .get_or_init(|| {
            // SAFETY: probing for a library only loads it.
            if !unsafe { cudarc::driver::sys::is_culib_present() } {
                return Err(
                    "no CUDA driver found (libcuda.so.1): this machine has no NVIDIA GPU driver"
                        .into(),
                );
            }
            match locate::find_nvrtc() {
                Some(path) => locate::preload(&path)?,
                None => {
                    // SAFETY: as above.
                    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                        return Err(format!("NVRTC not found: {}", locate::NVRTC_HINT));
                    }
                }
            }
            Ok(())
        })
        .clone()
        .map_err(GpuError::Unavailable)
}

/// Where NVRTC is loaded from, in words.
pub fn nvrtc_source() -> String {
    match locate::find_nvrtc() {
        Some(path) => format!("NVRTC: {}", path.display()),
        // SAFETY: probing for a library only loads it.
        None if unsafe { cudarc::nvrtc::sys::is_culib_present() } => {
            "NVRTC: found on the library path".into()
        }
        None => format!("NVRTC: not found ({})", locate::NVRTC_HINT),
    }
}

/// The GPUs the driver sees.
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    // SAFETY: as in `libraries`.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GpuError::Unavailable(
            "no CUDA driver found (libcuda.so.1): this machine has no NVIDIA GPU driver".into(),
        ));
    }
    let count = CudaContext::device_count().map_err(driver)?;
    (0..count as usize)
        .map(|ordinal| {
            let ctx = CudaContext::new(ordinal).map_err(driver)?;
            Ok(DeviceInfo {
                ordinal,
                name: ctx.name().map_err(driver)?,
                memory_bytes: ctx.total_mem().map_err(driver)?,
                compute_capability: ctx.compute_capability().map_err(driver)?,
                multiprocessors: ctx
                    .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                    .map_err(driver)?,
            })
        })
        .collect()
}

fn driver(error: cudarc::driver::DriverError) -> GpuError {
    GpuError::Device(error.to_string())
}

/// The CUDA backend.
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: Vec<(Kernel, CudaFunction)>,
    info: DeviceInfo,
    max_blocks: u32,
    /// Whether allocations come from the device's stream-ordered pool.
    pooled: bool,
    /// The pinned buffer large downloads go through; also held by every launch and copy,
    /// so that those of several threads do not interleave on the stream.
    staging: Mutex<PinnedHostSlice<u8>>,
    /// [`Backend::id`].
    id: u64,
}

/// Bytes of each half of the pinned staging buffer: a download larger than one half goes
/// through the halves in turn, the device filling one while the host copies the other out
/// (a copy into pageable memory runs at a fraction of the bus's speed).
const STAGING_HALF: usize = 8 << 20;

impl std::fmt::Debug for CudaBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaBackend({})", self.info.name)
    }
}

/// Frees device memory when its [`Buffer`] is dropped: back to the stream-ordered pool
/// (behind the work queued on the stream), or synchronously where the device has none.
struct DeviceMemory {
    ctx: Arc<CudaContext>,
    stream: Option<Arc<CudaStream>>,
    ptr: u64,
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the pointer came from `malloc_async` on this stream (or
            // `malloc_sync` without one) and is freed once; the free is ordered after
            // every use queued on the stream, and other streams' users synchronise
            // before their buffers drop.
            let _ = unsafe {
                match &self.stream {
                    Some(stream) => result::free_async(self.ptr, stream.cu_stream()),
                    None => result::free_sync(self.ptr),
                }
            };
        }
    }
}

impl CudaBackend {
    /// Starts the backend on GPU `ordinal`: loads the libraries, compiles the kernels.
    pub fn new(ordinal: usize) -> Result<Self, GpuError> {
        libraries()?;
        let ctx = CudaContext::new(ordinal).map_err(driver)?;
        let (major, minor) = ctx.compute_capability().map_err(driver)?;
        let info = DeviceInfo {
            ordinal,
            name: ctx.name().map_err(driver)?,
            memory_bytes: ctx.total_mem().map_err(driver)?,
            compute_capability: (major, minor),
            multiprocessors: ctx
                .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_err(driver)?,
        };
        let ptx = compile_ptx(major, minor)?;
        let module = ctx.load_module(ptx).map_err(driver)?;
        let functions = Kernel::ALL
            .iter()
            .map(|&kernel| {
                Ok((
                    kernel,
                    module.load_function(kernel.symbol()).map_err(driver)?,
                ))
            })
            .collect::<Result<Vec<_>, GpuError>>()?;
        // Ordering is by the one stream and explicit synchronisation.
        // SAFETY: no cudarc-managed slice crosses streams in this crate.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.new_stream().map_err(driver)?;
        let max_blocks = (info.multiprocessors.max(1) as u32) * 32;
        let pooled = ctx.has_async_alloc() && keep_pool_memory(&ctx).is_ok();
        // SAFETY: pinned memory the host reads (so not write-combined), written by the
        // device before each read.
        let staging =
            unsafe { ctx.alloc_pinned_with_flags::<u8>(2 * STAGING_HALF, 0) }.map_err(driver)?;
        Ok(Self {
            ctx,
            stream,
            functions,
            info,
            max_blocks,
            pooled,
            staging: Mutex::new(staging),
            id: crate::backend::new_backend_id(),
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub(crate) fn function(&self, kernel: Kernel) -> &CudaFunction {
        &self
            .functions
            .iter()
            .find(|(k, _)| *k == kernel)
            .expect("every kernel is loaded")
            .1
    }

    /// The launch shape for `threads` indexes: 256 threads a block, at most 32 blocks per
    /// multiprocessor (the grid-stride loops cover the rest).
    pub(crate) fn config(&self, threads: u64) -> LaunchConfig {
        let blocks = threads.div_ceil(256).clamp(1, self.max_blocks as u64) as u32;
        LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    /// Launches `kernel` on `stream`.
    ///
    /// # Safety
    /// As [`Backend::launch`]: the addresses in `params` are inside live buffers of this
    /// backend, large enough for the kernel.
    pub(crate) unsafe fn launch_on(
        &self,
        stream: &CudaStream,
        kernel: Kernel,
        threads: u64,
        params: &Params,
    ) -> Result<(), GpuError> {
        if threads == 0 {
            return Ok(());
        }
        let function = self.function(kernel);
        let mut launch = stream.launch_builder(function);
        launch.arg(params);
        // SAFETY: the kernel takes one `Params`, whose pointers address live buffers of
        // this context sized as the kernel's comment in `kernels.cu` requires.
        unsafe { launch.launch(self.config(threads)) }
            .map(|_| ())
            .map_err(driver)
    }
}

/// Keeps memory freed to the device's default pool in the pool (the default gives it back
/// to the driver at every synchronisation, and a query's steps allocate and free a lot).
fn keep_pool_memory(ctx: &CudaContext) -> Result<(), cudarc::driver::DriverError> {
    let mut threshold = u64::MAX;
    // SAFETY: the device is the context's; the attribute takes a u64.
    unsafe {
        let pool = result::device::get_default_mem_pool(ctx.cu_device())?;
        result::mem_pool::set_attribute(
            pool,
            cudarc::driver::sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            &mut threshold as *mut u64 as *mut std::ffi::c_void,
        )
    }
}

/// The kernels as PTX for compute capability `major.minor`.
fn compile_ptx(major: i32, minor: i32) -> Result<cudarc::nvrtc::Ptx, GpuError> {
    let bits = quiver_model::ID_BYTES * 8;
    let options = CompileOptions {
        options: vec![
            format!("--gpu-architecture=compute_{major}{minor}"),
            format!("-DQV_ID_BITS={bits}"),
            "-default-device".into(),
        ],
        name: Some("kernels.cu".into()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(crate::backend::KERNELS, options)
        .map_err(|e| GpuError::Compile(e.to_string()))
}

/// Compiles the kernels with NVRTC for compute capability `major.minor` without a GPU
/// (tests: the source compiles for the architectures Quiver targets).
pub fn compile_only(major: i32, minor: i32) -> Result<usize, GpuError> {
    libraries_nvrtc_only()?;
    compile_ptx(major, minor).map(|ptx| ptx.to_src().len())
}

/// Loads NVRTC alone (no driver needed).
fn libraries_nvrtc_only() -> Result<(), GpuError> {
    match locate::find_nvrtc() {
        Some(path) => locate::preload(&path).map_err(GpuError::Unavailable),
        // SAFETY: probing for a library only loads it.
        None if unsafe { cudarc::nvrtc::sys::is_culib_present() } => Ok(()),
        None => Err(GpuError::Unavailable(format!(
            "NVRTC not found: {}",
            locate::NVRTC_HINT
        ))),
    }
}

impl Backend for CudaBackend {
    fn id(&self) -> u64 {
        self.id
    }

    fn describe(&self) -> String {
        let (major, minor) = self.info.compute_capability;
        format!(
            "{} (GPU {}, compute capability {major}.{minor}, {} multiprocessors, {:.1} GiB)",
            self.info.name,
            self.info.ordinal,
            self.info.multiprocessors,
            self.info.memory_bytes as f64 / (1u64 << 30) as f64
        )
    }

    fn memory(&self) -> Result<(usize, usize), GpuError> {
        self.ctx.mem_get_info().map_err(driver)
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, GpuError> {
        self.ctx.bind_to_thread().map_err(driver)?;
        let _guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: plain allocations, freed by `DeviceMemory` the same way.
        let allocated = unsafe {
            if self.pooled {
                result::malloc_async(self.stream.cu_stream(), bytes.max(8))
            } else {
                result::malloc_sync(bytes.max(8))
            }
        };
        let ptr = allocated
            .map_err(|e| GpuError::OutOfMemory(format!("{bytes} bytes of GPU memory: {e}")))?;
        Ok(Buffer::new(
            ptr,
            bytes,
            self.id,
            Box::new(DeviceMemory {
                ctx: self.ctx.clone(),
                stream: self.pooled.then(|| self.stream.clone()),
                ptr,
            }),
        ))
    }

    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<(), GpuError> {
        if src.is_empty() {
            return Ok(());
        }
        let _guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        self.ctx.bind_to_thread().map_err(driver)?;
        // SAFETY: `dst` addresses a live buffer at least `src.len()` long; the copy from
        // pageable memory is staged before the call returns.
        unsafe { result::memcpy_htod_async(dst, src, self.stream.cu_stream()) }.map_err(driver)
    }

    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<(), GpuError> {
        if dst.is_empty() {
            return Ok(());
        }
        let mut staging = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        self.ctx.bind_to_thread().map_err(driver)?;
        let stream = self.stream.cu_stream();
        if dst.len() <= STAGING_HALF {
            // SAFETY: `src` addresses a live buffer at least `dst.len()` long; the stream
            // is synchronised before `dst` is read.
            unsafe { result::memcpy_dtoh_async(dst, src, stream) }.map_err(driver)?;
            return self.stream.synchronize().map_err(driver);
        }
        let base = staging.as_mut_ptr().map_err(driver)?;
        let half = |i: usize| {
            // SAFETY: the two halves of the staging buffer, never handed out together
            // with the same index.
            unsafe {
                std::slice::from_raw_parts_mut(base.add((i % 2) * STAGING_HALF), STAGING_HALF)
            }
        };
        let chunks: Vec<&mut [u8]> = dst.chunks_mut(STAGING_HALF).collect();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.len()).collect();
        let issue = |i: usize| -> Result<(), GpuError> {
            let offset = (i * STAGING_HALF) as u64;
            // SAFETY: the chunk lies inside the source buffer; its half is not being read
            // (the host finished with it before this chunk is issued).
            unsafe { result::memcpy_dtoh_async(&mut half(i)[..sizes[i]], src + offset, stream) }
                .map_err(driver)
        };
        issue(0)?;
        for (i, chunk) in chunks.into_iter().enumerate() {
            self.stream.synchronize().map_err(driver)?;
            if i + 1 < sizes.len() {
                issue(i + 1)?;
            }
            // On several cores: writing fresh pages of `dst` faults them in, which one core
            // does at a fraction of the bus's speed.
            let from = &half(i)[..chunk.len()];
            chunk
                .par_chunks_mut(1 << 20)
                .zip(from.par_chunks(1 << 20))
                .for_each(|(to, from)| to.copy_from_slice(from));
        }
        self.stream.synchronize().map_err(driver)
    }

    unsafe fn launch(&self, kernel: Kernel, threads: u64, params: &Params) -> Result<(), GpuError> {
        let _guard = self.staging.lock().unwrap_or_else(|e| e.into_inner());
        self.ctx.bind_to_thread().map_err(driver)?;
        // SAFETY: the caller's contract is `launch_on`'s.
        unsafe { self.launch_on(&self.stream, kernel, threads, params) }
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().map_err(driver)
    }
}
