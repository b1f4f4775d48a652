//! Finding the CUDA libraries at run time: the driver (`libcuda.so.1`, installed with the
//! NVIDIA driver) and NVRTC, the run-time compiler of the kernels, from `QUIVER_NVRTC`, a
//! CUDA toolkit (`CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`) or the
//! `nvidia-cuda-nvrtc-cu12` Python wheel (`pip install nvidia-cuda-nvrtc-cu12`, in the
//! active virtual environment or a site-packages directory of the system).
//!
//! cudarc loads libraries by name; a library found here is loaded first by its full path,
//! so that cudarc's load by name finds it already in the process (the dynamic loader
//! matches names against the sonames of loaded libraries).

use std::path::{Path, PathBuf};

/// Directories that may hold `libnvrtc.so.*`, most specific first.
fn nvrtc_directories() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"] {
        if let Some(root) = std::env::var_os(var) {
            let root = PathBuf::from(root);
            dirs.push(root.join("lib64"));
            dirs.push(root.join("lib"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    dirs.push("/usr/local/cuda/targets/x86_64-linux/lib".into());
    dirs.push("/usr/lib/x86_64-linux-gnu".into());
    let mut site_roots: Vec<PathBuf> = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        site_roots.push(PathBuf::from(venv).join("lib"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        site_roots.push(PathBuf::from(home).join(".local/lib"));
    }
    site_roots.push("/usr/local/lib".into());
    site_roots.push("/usr/lib".into());
    if let Ok(entries) = std::fs::read_dir("/opt") {
        for entry in entries.flatten() {
            site_roots.push(entry.path().join(".venv/lib"));
            site_roots.push(entry.path().join("lib"));
        }
    }
    for root in site_roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if !name.to_string_lossy().starts_with("python3") {
                continue;
            }
            for packages in ["site-packages", "dist-packages"] {
                let nvidia = entry.path().join(packages).join("nvidia");
                dirs.push(nvidia.join("cuda_nvrtc/lib"));
                dirs.push(nvidia.join("cu13/lib"));
                dirs.push(nvidia.join("cu12/lib"));
            }
        }
    }
    dirs
}

/// The NVRTC library in `dir`: `libnvrtc.so.N`, the highest N.
fn nvrtc_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let major = name.strip_prefix("libnvrtc.so.")?;
            major.parse::<u32>().ok().map(|m| (m, entry.path()))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, path)| path)
}

/// Where NVRTC is: `QUIVER_NVRTC` (the library or its directory), else the first place
/// listed in the module documentation that has it.
pub fn find_nvrtc() -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("QUIVER_NVRTC") {
        let given = PathBuf::from(given);
        return if given.is_dir() {
            nvrtc_in(&given)
        } else {
            Some(given)
        };
    }
    nvrtc_directories().iter().find_map(|dir| nvrtc_in(dir))
}

/// How a user makes NVRTC available, for error messages.
pub const NVRTC_HINT: &str = "install NVRTC (`pip install nvidia-cuda-nvrtc-cu12`, or a CUDA toolkit) or set QUIVER_NVRTC to the path of libnvrtc.so";

/// Loads the library at `path` into the process for good (see the module documentation).
#[cfg(feature = "cuda")]
pub fn preload(path: &Path) -> Result<(), String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: loading NVRTC runs its initialisers, which have no preconditions.
    let library = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    std::mem::forget(library);
    Ok(())
}
