//! The host backend: the kernels of `kernels.cu` compiled by the system C++ compiler and
//! run as plain loops over host memory.
//!
//! It exists so that the whole device path — uploads, step orchestration, prefix sums,
//! compaction, downloads — is tested against the CPU executor on machines without a GPU
//! (CI). The kernels are written so that both builds compute the same thing (see the
//! header of `kernels.cu`). Compiled once per process, into a temporary shared library.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, OnceLock};

use crate::backend::{Backend, Buffer, Kernel, Params};
use crate::GpuError;

type KernelFn = unsafe extern "C" fn(Params);

/// The host backend.
pub(crate) struct HostBackend {
    library: Arc<libloading::Library>,
    id: u64,
}

impl std::fmt::Debug for HostBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HostBackend")
    }
}

fn compile() -> Result<Arc<libloading::Library>, GpuError> {
    static LIBRARY: OnceLock<Result<Arc<libloading::Library>, String>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            let dir = std::env::temp_dir();
            let stem = format!("quiver-gpu-host-{}", std::process::id());
            let source: PathBuf = dir.join(format!("{stem}.cu"));
            let library: PathBuf = dir.join(format!("{stem}.so"));
            std::fs::write(&source, crate::backend::KERNELS)
                .map_err(|e| format!("cannot write {}: {e}", source.display()))?;
            let compiler = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
            let bits = quiver_model::ID_BYTES * 8;
            let output = Command::new(&compiler)
                .args(["-O2", "-shared", "-fPIC", "-x", "c++"])
                .arg(format!("-DQV_ID_BITS={bits}"))
                .arg("-DQV_HOST")
                .arg(&source)
                .arg("-o")
                .arg(&library)
                .output()
                .map_err(|e| format!("cannot run the C++ compiler '{compiler}': {e}"));
            let _ = std::fs::remove_file(&source);
            let output = output?;
            if !output.status.success() {
                return Err(format!(
                    "the C++ compiler failed on the kernels: {}",
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            // SAFETY: the library is the kernel source just compiled; it runs no
            // initialisers beyond the C++ runtime's.
            let loaded = unsafe { libloading::Library::new(&library) }
                .map_err(|e| format!("cannot load {}: {e}", library.display()));
            let _ = std::fs::remove_file(&library);
            loaded.map(Arc::new)
        })
        .clone()
        .map_err(GpuError::Unavailable)
}

impl HostBackend {
    /// Compiles the kernels (once per process) and loads them.
    pub(crate) fn new() -> Result<Self, GpuError> {
        Ok(Self {
            library: compile()?,
            id: crate::backend::new_backend_id(),
        })
    }
}

impl Backend for HostBackend {
    fn describe(&self) -> String {
        "host (the kernels compiled for the CPU)".into()
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn memory(&self) -> Result<(usize, usize), GpuError> {
        Ok((usize::MAX / 2, usize::MAX / 2))
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, GpuError> {
        let words = bytes.div_ceil(8).max(1);
        let memory: Box<[u64]> = vec![0u64; words].into_boxed_slice();
        let ptr = memory.as_ptr() as u64;
        Ok(Buffer::new(ptr, bytes, self.id, Box::new(memory)))
    }

    unsafe fn upload(&self, dst: u64, src: &[u8]) -> Result<(), GpuError> {
        // SAFETY: `dst..dst + src.len()` is inside a live buffer of this backend, host
        // memory (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst as *mut u8, src.len()) };
        Ok(())
    }

    unsafe fn download(&self, src: u64, dst: &mut [u8]) -> Result<(), GpuError> {
        // SAFETY: as for `upload`.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    unsafe fn launch(&self, kernel: Kernel, threads: u64, params: &Params) -> Result<(), GpuError> {
        if threads == 0 {
            return Ok(());
        }
        // SAFETY: every kernel of the library has this signature (`QV_KERNEL name(Params)`).
        let function: libloading::Symbol<'_, KernelFn> =
            unsafe { self.library.get(kernel.symbol().as_bytes()) }
                .map_err(|e| GpuError::Unavailable(format!("{}: {e}", kernel.symbol())))?;
        // SAFETY: the parameters address live buffers of this backend large enough for
        // the kernel (the caller's contract).
        unsafe { function(*params) };
        Ok(())
    }

    fn synchronize(&self) -> Result<(), GpuError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendExt;

    #[test]
    fn downloads_stay_inside_a_buffer_of_their_own_backend() {
        let backend = HostBackend::new().unwrap();
        let buffer = backend.upload_slice(&[1u64, 2, 3]).unwrap();
        assert_eq!(
            backend.download_vec::<u64>(&buffer, 1, 2).unwrap(),
            vec![2, 3]
        );
        assert!(backend.download_vec::<u64>(&buffer, 2, 2).is_err());
        assert!(backend.download_vec::<u64>(&buffer, usize::MAX, 2).is_err());
        assert!(backend.download_vec::<u32>(&buffer, 0, 7).is_err());
        assert_eq!(backend.download_vec::<u32>(&buffer, 0, 6).unwrap().len(), 6);
        let other = HostBackend::new().unwrap();
        assert!(other.download_vec::<u64>(&buffer, 0, 1).is_err());
    }
}
