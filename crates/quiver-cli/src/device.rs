//! `--device cpu|gpu|auto`: opening the GPU for a store, shared by `query`, `serve`,
//! `console`, `bench lubm` and `bench scale`.

use std::sync::Arc;

use anyhow::{bail, Result};
use quiver_gpu::{DeviceOptions, GpuDevice};
use quiver_sparql::device::BgpDevice;
use quiver_store::Store;

/// Where heavy exploration steps run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceKind {
    /// The CPU's threads
    #[default]
    Cpu,
    /// The first GPU (an error when there is none)
    Gpu,
    /// The GPU when there is one, else the CPU (and say so)
    Auto,
}

/// The flags every query command takes.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DeviceArgs {
    /// Where heavy exploration steps run: cpu, gpu (needs a build with `--features cuda`
    /// and an NVIDIA GPU) or auto
    #[arg(long, value_enum, default_value_t = DeviceKind::Cpu)]
    pub device: DeviceKind,
    /// The estimated work of a step (the list entries it reads) from which it and the
    /// query's next steps go to the GPU
    #[arg(long, value_name = "ENTRIES", default_value_t = quiver_gpu::device::DEFAULT_MIN_WORK)]
    pub gpu_min_work: usize,
    /// The most GPU memory the graph index may take (512M, 4G, …; default: 90% of the
    /// free memory); a larger index goes to the GPU one predicate at a time, as queries
    /// need it
    #[arg(long, value_name = "SIZE", value_parser = crate::limits::parse_size)]
    pub gpu_memory: Option<usize>,
}

impl DeviceArgs {
    /// The device for `store`, with its default graph copied to it; `None`: the CPU.
    pub fn open(&self, store: &Store) -> Result<Option<Arc<GpuDevice>>> {
        open(self.device, store, self.gpu_min_work, self.gpu_memory)
    }
}

/// Opens the GPU for `kind` and copies the default graph of `store` to it.
pub fn open(
    kind: DeviceKind,
    store: &Store,
    min_work: usize,
    max_index_bytes: Option<usize>,
) -> Result<Option<Arc<GpuDevice>>> {
    if kind == DeviceKind::Cpu {
        return Ok(None);
    }
    let options = DeviceOptions {
        min_work,
        max_index_bytes,
    };
    // QUIVER_DEVICE_BACKEND=host runs the device path with the kernels compiled for the CPU:
    // how the tests drive these commands on machines without a GPU.
    let opened = match std::env::var("QUIVER_DEVICE_BACKEND").as_deref() {
        Ok("host") => GpuDevice::host(options),
        _ => GpuDevice::cuda(options),
    };
    let device = match opened {
        Ok(device) => device,
        Err(error) if kind == DeviceKind::Auto => {
            eprintln!("--device auto: {error}; running on the CPU");
            return Ok(None);
        }
        Err(error) => bail!("--device gpu: {error}"),
    };
    let residency = device.load(store)?;
    if !residency.resident {
        let reason = residency.describe();
        if kind == DeviceKind::Auto {
            eprintln!("--device auto: {reason}; running on the CPU");
            return Ok(None);
        }
        bail!("--device gpu: {reason}");
    }
    eprintln!(
        "GPU: {}; {}; steps of {} list entries or more run on it",
        device.name(),
        residency.describe(),
        min_work
    );
    Ok(Some(Arc::new(device)))
}

/// The device as the query engine takes it.
pub fn as_bgp_device(device: &Option<Arc<GpuDevice>>) -> Option<Arc<dyn BgpDevice>> {
    device.clone().map(|d| d as Arc<dyn BgpDevice>)
}

/// `quiver info --devices`: the GPUs this build sees, one line each.
pub fn describe_devices() -> Vec<String> {
    #[cfg(feature = "cuda")]
    {
        let mut lines = match quiver_gpu::cuda::devices() {
            Ok(devices) if devices.is_empty() => vec!["no GPU found by the CUDA driver".into()],
            Ok(devices) => devices
                .iter()
                .map(|d| {
                    format!(
                        "GPU {}: {}, compute capability {}.{}, {} multiprocessors, {:.1} GiB",
                        d.ordinal,
                        d.name,
                        d.compute_capability.0,
                        d.compute_capability.1,
                        d.multiprocessors,
                        d.memory_bytes as f64 / (1u64 << 30) as f64
                    )
                })
                .collect(),
            Err(error) => vec![error.to_string()],
        };
        lines.push(quiver_gpu::cuda::nvrtc_source());
        lines
    }
    #[cfg(not(feature = "cuda"))]
    {
        vec!["this build of Quiver has no GPU support (build it with `--features cuda`)".into()]
    }
}
